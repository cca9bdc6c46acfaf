//! ANP/0.1, the Agent Negotiation Protocol, as pure functions and types over
//! bytes: no IO, no clock, no async. The host, the clients and the console all
//! call this crate, so every protocol rule lives in exactly one place.
//!
//! | module | what it owns |
//! |---|---|
//! | [`api`] | ANP's wire shapes (agent API, discovery, errors); signing and checking requests |
//! | [`canonical`] | canonical JSON and the SHA-256 hashes over it |
//! | [`keys`] | Ed25519 keys, base64url, fingerprints, key files |
//! | [`signed`] | every signed or hashed string of the protocol |
//! | [`event`] | the event record, chain heads, the log document |
//! | [`chain`] | whole-log and incremental (pinned) verification |
//! | [`document`] | whole-document verification from bytes, on every core (what `anp verify` runs) |
//! | [`payload`] | strict, typed payloads for every event kind |
//! | [`money`] | exact decimal amounts and offer totals |
//! | [`diff`] | the structured diff of two offers |
//! | [`approval`] | RFC-002 human approval attestations: sign and verify |

#![warn(missing_docs)]

pub mod api;
pub mod approval;
pub mod canonical;
pub mod chain;
pub mod diff;
pub mod document;
pub mod event;
pub mod keys;
pub mod money;
pub mod payload;
pub mod signed;

pub use chain::{
    verify_document, verify_extension, verify_log, verify_log_from_pin, Check, KeyRing,
    VerifyReport,
};
pub use document::{
    verify_document_bytes, verify_document_bytes_with, DocumentError, DocumentVerdict,
    VerifyOptions,
};
pub use event::{Actor, ChainHead, Event, EventDraft, EventKind, LogDocument};
pub use signed::PROTOCOL;
