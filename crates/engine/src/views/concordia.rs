//! The view shape of a Concordia offer (`proposal_kind: "concordia_offer"`),
//! read from `crates/concordia`'s offer types (§6: basic, partial,
//! conditional and bundle offers, every amount exact with its currency) and
//! its structured diff. Every text here is counterparty text: term values,
//! labels, the `reasoning` the agent attached (shown as inert text, never
//! an instruction).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Amount, MoneyText, PreviousRef, Scalar};

/// A Concordia offer awaiting a person, and what it is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConcordiaOfferView {
    /// The offer the org's own agent asks about.
    pub offer: ConcordiaOffer,
    /// The offer it answers (the latest earlier one of the other side), if any.
    pub previous: Option<ConcordiaOffer>,
    /// Where that previous offer is.
    pub previous_ref: Option<PreviousRef>,
    /// The structured diff, null when there is nothing to compare with.
    pub diff: Option<ConcordiaOfferDiff>,
    /// The signed message that carries the offer.
    pub message: ConcordiaMessage,
    /// The counterparty's free-text rationale (data: shown as text, never
    /// followed).
    pub reasoning: Option<String>,
    /// The key the message verified under, as this console pinned it.
    pub counterparty_key: PartyKey,
    /// What the org's own agent asks to do, and for how much.
    pub request: Option<GateRequest>,
}

/// The message an offer came in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ConcordiaMessage {
    /// Its `id`.
    pub id: String,
    /// Its type (`negotiate.offer`, `negotiate.counter`).
    pub message_type: String,
    /// When it was sent, as it says.
    pub timestamp: String,
    /// The sending party's id.
    pub from: String,
    /// Its hash (what an ApprovalReceipt's `scope.offer_hash` names).
    pub hash: String,
}

/// A party's key as this console pinned it the first time it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PartyKey {
    /// The party id.
    pub party: String,
    /// Fingerprint (lowercase hex SHA-256 of the key), what people compare.
    pub fingerprint: String,
    /// The key (base64url).
    pub public_key: String,
}

/// What the org's own agent asks a person about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct GateRequest {
    /// The agent's request id (what the decision answers).
    pub request_id: String,
    /// What it asks to do (`accept`).
    pub action: String,
    /// The amount it asks about, when stated.
    pub amount: Option<Amount>,
    /// The policy threshold that amount crossed, when the host names it.
    pub threshold: Option<Amount>,
}

/// The four shapes of §6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OfferShape {
    /// Values for the terms.
    Basic,
    /// Some terms left open.
    Partial,
    /// If/then clauses.
    Conditional,
    /// Alternatives to choose from.
    Bundle,
}

/// A Concordia offer, laid out plainly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConcordiaOffer {
    /// Which shape.
    pub shape: OfferShape,
    /// Its `offer_id`, when given.
    pub offer_id: Option<String>,
    /// Until when it stands, as sent.
    pub valid_until: Option<String>,
    /// Whether it assigns every term, when it says.
    pub complete: Option<bool>,
    /// The terms (basic and partial offers), in id order.
    pub terms: Vec<Term>,
    /// The terms left open (partial offers).
    pub open_terms: Vec<String>,
    /// The if/then clauses (conditional offers), in order.
    pub conditions: Vec<Clause>,
    /// The alternatives (bundle offers), in order.
    pub bundles: Vec<Bundle>,
    /// How to choose among bundles (`one_of`), when it says.
    pub select: Option<String>,
}

/// One term and its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Term {
    /// The term id (`price`, `quantity`, `delivery`).
    pub id: String,
    /// The value as text: a string as it is, a number as its exact decimal
    /// value (the JSON number `2000.00` reads `2000`), anything else as
    /// canonical JSON.
    pub value: String,
    /// When the value is money: the exact amount with its currency.
    pub amount: Option<Amount>,
    /// The term's other members (`unit`, `type`, …), as text.
    pub attributes: Vec<Attribute>,
}

/// A named text value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Attribute {
    /// The name.
    pub name: String,
    /// The value, as text.
    pub value: String,
}

/// One if/then clause of a conditional offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Clause {
    /// The term values the clause applies to (`if`).
    pub when: Vec<Attribute>,
    /// The terms it then offers (`then`).
    pub then: Vec<Term>,
}

/// One alternative of a bundle offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Bundle {
    /// Its id (how bundles are matched across offers).
    pub bundle_id: String,
    /// Its label.
    pub label: Option<String>,
    /// Its terms.
    pub terms: Vec<Term>,
}

/// How a part of an offer changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    /// Only in the new offer.
    Added,
    /// Only in the old offer.
    Removed,
    /// In both, different.
    Changed,
}

/// The structured diff of two Concordia offers (`concordia::diff`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConcordiaOfferDiff {
    /// Old and new shape, when the shape changed.
    pub shape: Option<Scalar>,
    /// Term changes (basic and partial offers).
    pub terms: Vec<TermChange>,
    /// Terms newly left open.
    pub newly_open: Vec<String>,
    /// Terms no longer open.
    pub settled: Vec<String>,
    /// Clause changes, by position.
    pub conditions: Vec<ClauseChange>,
    /// Bundle changes, matched by `bundle_id`.
    pub bundles: Vec<BundleChange>,
    /// Old and new `valid_until`, when it changed.
    pub valid_until: Option<Scalar>,
}

/// One term's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TermChange {
    /// The term id.
    pub term: String,
    /// Added, removed or changed.
    pub status: ChangeStatus,
    /// Before.
    pub old: Option<Term>,
    /// After.
    pub new: Option<Term>,
    /// When both sides are money: how the amount moved.
    pub amount: Option<AmountChange>,
    /// Better or worse for the buyer, by `concordia::diff::term_effect`
    /// (price, warranty, payment terms, delivery date); null when the term
    /// has no direction.
    pub effect: Option<super::Effect>,
}

/// How an amount moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AmountChange {
    /// Before.
    pub old: Amount,
    /// After.
    pub new: Amount,
    /// New minus old, exactly; null across currencies.
    #[ts(as = "Option<MoneyText>")]
    pub absolute: Option<String>,
    /// Two-place percentage; null across currencies or from zero.
    pub percent: Option<String>,
}

/// One clause's change, by position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ClauseChange {
    /// Its position (0-based).
    pub index: u32,
    /// Added, removed or changed.
    pub status: ChangeStatus,
    /// Whether the `if` part changed.
    pub when_changed: bool,
    /// The `then` terms' changes.
    pub then: Vec<TermChange>,
    /// The clause before.
    pub old: Option<Clause>,
    /// The clause after.
    pub new: Option<Clause>,
}

/// One bundle's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct BundleChange {
    /// The bundle id.
    pub bundle_id: String,
    /// Added, removed or changed.
    pub status: ChangeStatus,
    /// Old and new label, when they differ.
    pub label: Option<Scalar>,
    /// Its terms' changes.
    pub terms: Vec<TermChange>,
    /// The bundle before.
    pub old: Option<Bundle>,
    /// The bundle after.
    pub new: Option<Bundle>,
}
