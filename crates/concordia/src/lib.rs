//! Concordia, the negotiation protocol of peer agents, as pure functions and
//! types over JSON values: no IO, no clock (time is passed in), no async.
//!
//! | module | what it owns |
//! |---|---|
//! | [`message`] | the envelope (§4.1) and the fourteen message types (§4.2), typed |
//! | [`session`] | the state machine (§5): states, transition rules, timing |
//! | [`offer`] | offers (§6): basic, partial, conditional, bundle; exact money |
//! | [`diff`] | the structured diff of two offers |
//! | [`counter`] | counter terms a person writes, checked term by term by type before anyone signs them |
//! | [`transcript`] | genesis, links and signatures, whole or from a pinned head |
//! | [`document`] | a transcript document `{"messages", "keys"}` verified from its bytes, in place, on every core |
//! | [`artifacts`] | attestations (with their transcript) and mandates, verified whole |
//! | [`testing`] | synthetic signed transcripts for benchmarks and tests |
//! | [`conformance`] | the public conformance suite's profiles and runner (RUNNER_CONTRACT v1-draft) |
//!
//! The ApprovalReceipt and `did:key` live in `countersign-approval-receipt`
//! (below every protocol crate: OANP and ANEX decisions are receipts too) and
//! are re-exported here as [`approval_receipt`].

#![warn(missing_docs)]

pub use approval_receipt;

pub mod artifacts;
pub mod conformance;
pub mod counter;
pub mod diff;
pub mod document;
mod json;
pub mod message;
pub mod offer;
pub mod session;
pub mod testing;
pub mod transcript;

pub use diff::{diff_offers, OfferDiff};
pub use message::{Body, Message, MessageType, Party, Timing, GENESIS_HASH};
pub use offer::{Money, Offer, OfferKind};
pub use session::{Session, State, TransitionError};
pub use transcript::{
    message_hash, verify_and_replay, verify_since, verify_transcript, Head, Keys, TranscriptReport,
};
