//! All of this crate's integration tests, linked into one test binary
//! (the workspace's pattern: one executable per crate). Each module keeps its
//! own tests; `support` and `variants` are shared.

mod checks;
mod envelopes;
mod no_panic;
mod publisher;
mod reports;
mod support;
mod variants;
mod views;
