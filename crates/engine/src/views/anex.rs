//! The view shape of an ANEX ask (`proposal_kind: "anex_ask"`): who asks
//! for which data about the owner, each access item with its required mark
//! and what the owner's policy says of it, the promises offered beside the
//! promises the policy requires, and the diff from the previous proposal
//! (`crates/anex`'s). Every text here is counterparty text (the owner it
//! names, its purpose, item names, promises): shown as text, never followed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::PreviousRef;

/// An ANEX ask awaiting the owner, and what it is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AnexAskView {
    /// The ANEX conversation.
    pub conversation_id: String,
    /// The message decided on (the requester's CFP or PROPOSE).
    pub message_id: String,
    /// Its performative (`CFP`, `PROPOSE`).
    pub performative: String,
    /// Its hash (`sha256:` of its canonical JSON), what a decision answers.
    pub message_hash: String,
    /// Who asks.
    pub requester: AnexRequester,
    /// The organization's agent that answers (the record's `responder`):
    /// whom a receipt over the terms binds the person to.
    pub responder: String,
    /// The host this console enrolled with (its URL), shown beside the
    /// responder: the console signs only for that host's own agents.
    pub host: String,
    /// Why the console refuses to sign for this responder (it is not the
    /// enrolled host's own agent), or null when it is that host's.
    pub responder_refused: Option<String>,
    /// The purpose the requester declared (its own words).
    pub purpose: String,
    /// Each asked item, in the order asked.
    pub items: Vec<AnexItemView>,
    /// The promises the requester offers.
    pub promises_offered: Vec<String>,
    /// The promises the policy's rules require for the items they cover.
    pub policy_promises: Vec<String>,
    /// Of those, the ones the requester did not offer.
    pub promises_missing: Vec<String>,
    /// The previous standing proposal, when this ask answers one.
    pub previous: Option<AnexTerms>,
    /// Where that previous proposal is in the conversation.
    pub previous_ref: Option<PreviousRef>,
    /// From the previous proposal to this ask, null when there is none.
    pub diff: Option<AnexTermsDiff>,
    /// How long accepted terms stay in force, in days, when the host said.
    pub terms_valid_days: Option<u32>,
    /// True when the host's policy verdicts were available (the ask is
    /// pending); false for an ask read back from the record alone.
    pub policy_known: bool,
}

/// The requester as its CFP declared itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AnexRequester {
    /// Its agent identity (the one the host authenticated).
    pub identity: String,
    /// The owner it says it speaks for.
    pub owner: String,
    /// The relation it declares (its own claim: it never widens the policy).
    pub relation: Option<String>,
}

/// One asked access item and the policy's word on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AnexItemView {
    /// The item's name, without a mark.
    pub item: String,
    /// True when the requester marked it `(m)`.
    pub required: bool,
    /// Whether a counter may drop it (`anex::rules::counter_may_drop`: not
    /// when the requester marked it required, ANEX §4.4); the counter
    /// editor offers to untick only these.
    pub removable: bool,
    /// Whether the owner's policy covers it for this counterparty (null
    /// when not known).
    pub within_policy: Option<bool>,
    /// The policy rule (1-based) that covers it.
    pub rule: Option<u32>,
    /// Promises that rule needs beyond those offered.
    pub adds: Vec<String>,
    /// The policy's reason, in words.
    pub reason: Option<String>,
}

/// Terms as lists of names and promises (what a counter is written as:
/// `{access, promise}`, no marks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AnexTerms {
    /// Access items.
    pub access: Vec<String>,
    /// Promises.
    pub promise: Vec<String>,
}

/// An access item with its mark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AnexAccessItem {
    /// Its name.
    pub item: String,
    /// Marked `(m)`.
    pub required: bool,
}

/// An item in both whose `(m)` mark changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AnexMarkChange {
    /// The item.
    pub item: String,
    /// Whether it was required before.
    pub was_required: bool,
}

/// What changed from one set of terms to the next (`crates/anex`'s diff).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AnexTermsDiff {
    /// Items in the new terms only.
    pub access_added: Vec<AnexAccessItem>,
    /// Items in the old terms only.
    pub access_removed: Vec<AnexAccessItem>,
    /// Items in both whose mark changed.
    pub required_changed: Vec<AnexMarkChange>,
    /// Promises in the new terms only.
    pub promises_added: Vec<String>,
    /// Promises in the old terms only.
    pub promises_removed: Vec<String>,
}
