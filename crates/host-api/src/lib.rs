//! The wire of `countersign-host`'s own APIs, as types the host, the clients
//! and the console share, so the wire cannot drift:
//!
//! | module | what it owns |
//! |---|---|
//! | [`approver`] | the approver API v1 (`/api/console/v1`) for every protocol: enrollment, the summary, records in each protocol's own form, decisions (`docs/approver-api.md` in the repository) |
//! | [`anex`] | the approver API's ANEX shapes: a pending ANEX ask, the decision over its terms record, the conversation's log |
//! | [`gate`] | the gate v1 (`/api/gate/v1`) where the organization's own agents mirror their transcripts and ask for a person (`docs/gate-api.md`) |
//! | [`signing`] | how requests to both APIs are signed (version 2: method, host, path with query, caller, timestamp, nonce, body) and what an enrollment proves (version 2: role, host, code, key) |
//!
//! ANP's own wire (the agent API, discovery, RFC-002 approvals, and the
//! request string of ANP/0.1 that vendor agents sign) stays in `anp::api`.

#![warn(missing_docs)]

pub mod anex;
pub mod approver;
pub mod gate;
pub mod signing;

/// The `protocol` value of every session, as the summary and the gate name it.
pub mod protocol {
    /// ANP/0.1 sessions (vendor agents at the host's ANP endpoints).
    pub const ANP: &str = "ANP/0.1";
    /// Concordia transcripts mirrored through the gate.
    pub const CONCORDIA: &str = "concordia";
    /// OANP session logs mirrored through the gate.
    pub const OANP: &str = "oanp";
    /// Plain terms an org's agent asks about at the gate or over MCP.
    pub const PLAIN: &str = "plain";
    /// ANEX conversations with counterparty agents over A2A.
    pub const ANEX: &str = "anex";
}
