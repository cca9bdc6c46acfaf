//! The signed form of a person's decision, below every protocol crate.
//!
//! Concordia's ApprovalReceipt (schema v0.5, SPEC §9.6.4b) is how a person's
//! `approve` or `deny` reaches a negotiation; OANP and ANEX decisions use the
//! same artifact, so it lives here, under the protocol crates, and each of
//! them re-exports it. Pure: no IO, no clock (time is passed in).
//!
//! | module | what it owns |
//! |---|---|
//! | [`did_key`] | `did:key` identities for Ed25519 keys (multicodec `0xed01`, base58btc) |
//! | [`datetime`] | ISO 8601 instants the way the reference SDK reads them, offset required |
//! | [`schema`] | JSON Schema 2020-12 validators that assert `date-time` that way |
//! | [`keys`] | Ed25519 keys and signatures in base64url, padded or not |
//! | [`receipt`] | build, sign and verify an ApprovalReceipt |
//! | [`revocation`] | RevocationRecords (v0.7): verify one, and find the one that revokes a receipt |
//! | [`edges`] | the canonical-JSON edge rules Concordia's artifacts are hashed and signed under |

#![warn(missing_docs)]

pub mod datetime;
pub mod did_key;
pub mod edges;
pub mod keys;
pub mod receipt;
pub mod revocation;
pub mod schema;

pub use receipt::{
    build_receipt, build_receipt_referencing, sign_receipt, verify_receipt, Decision, ReceiptCheck,
    ReceiptDraft, ReceiptReport,
};
pub use revocation::{verify_revocation_record, RevocationReport};
