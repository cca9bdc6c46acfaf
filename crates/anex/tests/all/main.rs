//! All of this crate's integration tests, linked into one test binary (one
//! module per topic), as every crate of the workspace does.

mod conversation;
mod exchange;
mod messages;
mod negotiation;
mod no_panic;
mod policy;
mod record;
mod support;
mod v02;
