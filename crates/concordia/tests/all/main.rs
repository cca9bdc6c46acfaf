//! Integration tests of the concordia crate, one module per topic.

mod interop;
mod own_vectors;
mod suite;
