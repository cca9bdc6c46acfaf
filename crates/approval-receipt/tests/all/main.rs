//! Integration tests of the approval-receipt crate.

mod receipts;
