//! Typed async clients for every role at a negotiation host:
//!
//! - [`AgentClient`]: an ANP/0.1 vendor agent. It signs every request and
//!   event, checks offers before sending them, and re-verifies the session
//!   chain after every append against a head it pinned before (SPEC §8,
//!   vendor conformance).
//! - [`GateClient`]: one of the organization's own agents at the host's gate
//!   (docs/gate-api.md). It mirrors a transcript, asks for a decision and
//!   reads it back; [`check_decision`] verifies the receipts itself.
//! - [`ApproverClient`]: a person's console. It enrolls with a one-time code,
//!   polls the summary, fetches records and submits signed decisions (RFC-002
//!   approvals for ANP, ApprovalReceipts for gate requests and, over the
//!   terms record, for ANEX asks).
//!
//! Every protocol rule (signed strings, hashes, verification, receipts)
//! comes from the protocol crates; this crate only adds IO: HTTP, timeouts,
//! bounded retries with jittered backoff on idempotent calls, and errors a
//! person can read.

#![warn(missing_docs)]

mod agent;
mod approver;
mod approver_anex;
mod error;
mod gate;
mod http;
pub mod network;
mod trust;

pub use agent::{default_envelope, AgentClient};
pub use approver::{
    new_decision_id, well_known, well_known_of, ApproverClient, GateDecisionInput, RawLog,
    SummaryFetch,
};
pub use approver_anex::{anex_record, as_asked, sign_anex_receipt};
pub use error::ClientError;
pub use gate::{check_decision, raw_messages, GateClient};
pub use http::{authority_and_target, ClientConfig, RetryPolicy};
pub use trust::{KeyCheck, KeySource, TrustedKeys};

/// Every fallible call of this crate answers with this.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;
