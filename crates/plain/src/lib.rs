//! Plain terms (docs/gate-api.md, "Plain terms"): the request kind for an
//! organization's agents that speak no negotiation protocol. An agent states
//! the terms it would commit to (a counterparty, line items, a currency, a
//! term, conditions) with its rationale; the host reads them strictly
//! ([`terms`]), writes them into a thread's log that it signs and chains
//! ([`entry`]), and a person decides with a Concordia ApprovalReceipt over
//! the entry's hash. The host and the console read the same rules here.

pub mod entry;
pub mod terms;

pub use entry::{hash, verify, EntryError, Outcome, State, Thread, GENESIS_HASH, OUTCOME, TERMS};
pub use terms::{problems, read_rationale, read_terms, Terms, TermsError};

/// The protocol name a gate session of plain terms carries.
pub const PROTOCOL: &str = "plain";
