//! The sandbox beside a real engine, started as the shell starts them: the
//! embedded host, its scripted counterparties, and what a new user sees in
//! the console. One test binary, one module per topic.

// The engine suite's real parts (a host on loopback, vendor agents, a
// recording notifier), shared rather than written twice.
#[path = "../../../engine/tests/all/common.rs"]
mod common;

mod anex;
mod anp;
mod concordia;
mod files;
mod launch;
mod oanp;
mod plain;
mod receipts;
