//! The console engine against a real `countersign-host` on loopback: one
//! test binary, one module per topic.

mod common;
mod core;
