//! All of this crate's integration tests, linked into one test binary: each
//! file under tests/ used to be its own ~50 MB executable, which cost CI
//! link time and disk. Each module keeps its own tests and helpers.

mod approver;
mod common;
mod deployment;
mod discovery;
mod transport;
mod vendor;
