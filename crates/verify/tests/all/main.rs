//! Integration tests of countersign-verify, run as the real binary.

mod anp_logs;
mod cli;
mod concordia_files;
mod oanp_receipts;
mod packs;
mod plain_receipts;
