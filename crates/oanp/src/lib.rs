//! OANP, Valyzen's arbitrated negotiation protocol, as pure functions and
//! types over bytes: no IO, no HTTP, no clock. A buyer agent and a merchant
//! agent negotiate before an arbiter that scores every round and signs the
//! agreement; the receipt it leaves behind is verified here exactly as its
//! publisher's verifier (`valyzen.receipt.verify_receipt`) verifies it.
//!
//! | module | what it owns |
//! |---|---|
//! | [`canonical`] | the one call site of the workspace's JCS, with the publisher's edge rules |
//! | [`counter`] | counter terms a person writes, checked field by field before anyone signs them |
//! | [`money`] | integer minor units read exactly; fractions as decimal strings |
//! | [`receipt`] | the receipt, every member typed, unknown members kept |
//! | [`envelope`] | envelopes and the ten message types, with their senders |
//! | [`chain`] | the session hash chain: whole-log check and one-at-a-time following |
//! | [`keys`] | the pinned arbiter keys (the three published, and a person's) |
//! | [`verify`] | the seven checks, the status and the verdict |
//! | [`view`] | what a console shows, signed evidence apart from the arbiter's report |
//! | [`report`] | the `countersign-verify` text and JSON reports and exit codes |
//! | [`equality`] | JSON equality as the publisher's Python compares values |

#![warn(missing_docs)]

pub mod canonical;
pub mod chain;
pub mod counter;
pub mod direction;
pub mod envelope;
pub mod equality;
pub mod keys;
pub mod money;
pub mod receipt;
pub mod report;
mod text;
pub mod verify;
pub mod view;

pub use envelope::{Envelope, MessageType, Role};
pub use keys::{Mode, PinnedKey, PinnedKeys};
pub use receipt::{Member, Receipt};
pub use verify::{verify, Check, CheckId, Signer, Status, Trust, Verification};
pub use view::ReceiptView;
