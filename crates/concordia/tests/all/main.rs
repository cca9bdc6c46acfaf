//! Integration tests of the concordia crate, one module per topic.

mod document;
mod fixtures;
mod interop;
mod no_panic;
mod offers;
mod own_vectors;
mod previous_envelope;
mod session;
mod suite;
mod transcript;
