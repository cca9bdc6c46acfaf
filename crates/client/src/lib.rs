//! A typed async client for ANP/0.1 hosts, for both roles a host serves:
//!
//! - [`AgentClient`]: a vendor agent. It signs every request and event, checks
//!   offers before sending them, and re-verifies the session chain after every
//!   append against a head it pinned before (SPEC §8, vendor conformance).
//! - [`ApproverClient`]: a person's console. It enrolls with a one-time code,
//!   polls the summary, fetches logs and submits signed decisions.
//!
//! Every protocol rule (signed strings, hashes, verification) comes from the
//! `anp` crate; this crate only adds IO: HTTP, timeouts, bounded retries with
//! jittered backoff on idempotent calls, and errors a person can read.

#![warn(missing_docs)]

mod agent;
mod approver;
mod error;
mod http;
mod trust;

pub use agent::{default_envelope, AgentClient};
pub use approver::{new_decision_id, well_known, ApproverClient, RawLog, SummaryFetch};
pub use error::ClientError;
pub use http::{ClientConfig, RetryPolicy};
pub use trust::{KeyCheck, KeySource, TrustedKeys};

/// Every fallible call of this crate answers with this.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;
