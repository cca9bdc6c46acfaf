//! The view shape of an ANP offer (`proposal_kind: "anp_offer"`): the offer
//! payload byte for byte as the log carries it, the one it answers, their
//! structured diff as `anp::diff` computes it, and both mandate envelopes.
//!
//! The diff types mirror `anp::diff`'s serialization member for member
//! (`deny_unknown_fields`: a member added there and not here fails the
//! conversion, and the engine's tests, instead of vanishing silently).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{MoneyText, PreviousRef, Scalar};

/// An ANP offer and what it is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AnpOfferView {
    /// The offer payload, byte for byte as the log carries it.
    #[ts(as = "AnpOffer")]
    pub offer: Value,
    /// The offer it answers, if any.
    #[ts(as = "Option<AnpOffer>")]
    pub previous: Option<Value>,
    /// Where that previous offer is.
    pub previous_ref: Option<PreviousRef>,
    /// The structured diff, null when there is nothing to compare with.
    pub diff: Option<AnpOfferDiff>,
    /// The vendor's mandate envelope (from `session_open`; counterparty text).
    #[ts(type = "Record<string, unknown>")]
    pub vendor_envelope: Value,
    /// The buyer's mandate envelope (event 2).
    #[ts(type = "Record<string, unknown>")]
    pub buyer_envelope: Value,
}

/// An ANP offer payload (SPEC §5.2), as the UI reads and edits it. Numbers
/// stay the JSON numbers the log carries (or the text a person typed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpOffer {
    /// ISO 4217 code.
    pub currency: String,
    /// Contract term in months.
    #[ts(type = "number")]
    pub term_months: Value,
    /// RFC 3339 expiry.
    pub expires_at: String,
    /// The lines.
    pub line_items: Vec<AnpLineItem>,
    /// The total as stated, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number | string")]
    pub total_annual: Option<Value>,
    /// Conditions (counterparty text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<String>>,
    /// Notes (counterparty text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// One line of an ANP offer; every text member is counterparty text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpLineItem {
    /// The vendor's product code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// What is sold.
    pub description: String,
    /// How many.
    #[ts(type = "number | string")]
    pub quantity: Value,
    /// The unit (`seat/year`).
    pub unit: String,
    /// Price per unit.
    #[ts(type = "number | string")]
    pub unit_price: Value,
    /// ISO 4217 code.
    pub currency: String,
    /// A line-specific term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number")]
    pub term_months: Option<Value>,
}

/// The structured diff of two ANP offers (`anp::diff::OfferDiff`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpOfferDiff {
    /// Set when the currency changed.
    pub currency: Option<Scalar>,
    /// Set when the term changed.
    pub term_months: Option<Scalar>,
    /// Set when the expiry moved.
    pub expires_at: Option<Scalar>,
    /// Set when the notes changed.
    pub notes: Option<Scalar>,
    /// Conditions added, removed, kept.
    pub conditions: AnpConditionsDiff,
    /// One row per line of either offer.
    pub line_items: Vec<AnpLineItemDiff>,
    /// The change of the total.
    pub total: AnpTotalChange,
}

/// Conditions compared as multisets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpConditionsDiff {
    /// In the new offer only.
    pub added: Vec<String>,
    /// In the old offer only.
    pub removed: Vec<String>,
    /// In both.
    pub unchanged: Vec<String>,
}

/// What became of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LineStatus {
    /// Only in the new offer.
    Added,
    /// Only in the old offer.
    Removed,
    /// In both, changed.
    Changed,
    /// In both, identical.
    Unchanged,
}

/// One row of the line-item diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpLineItemDiff {
    /// Added, removed, changed or unchanged.
    pub status: LineStatus,
    /// True when the line changed place.
    pub moved: bool,
    /// The SKU, or the description when SKU is absent.
    pub key: String,
    /// Position in the old offer.
    pub old_index: Option<u32>,
    /// Position in the new offer.
    pub new_index: Option<u32>,
    /// The old line.
    pub old: Option<AnpLineItem>,
    /// The new line.
    pub new: Option<AnpLineItem>,
    /// The changed fields; empty unless `status` is `changed`.
    pub fields: Vec<AnpFieldChange>,
}

/// One changed field of a matched line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpFieldChange {
    /// `sku`, `description`, `quantity`, `unit`, `unit_price`, `currency` or
    /// `term_months` (a line's total is derived, never a changed field).
    pub field: String,
    /// Before, as text.
    pub old: Option<String>,
    /// After, as text.
    pub new: Option<String>,
    /// `new − old` for numeric fields.
    #[ts(as = "Option<MoneyText>")]
    pub absolute: Option<String>,
    /// Percent change for numeric fields.
    pub percent: Option<String>,
    /// Better or worse for the buyer (`anp::diff::price_effect`: the unit
    /// price); null for fields with no direction.
    pub effect: Option<super::Effect>,
}

/// The change of an offer's total.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpTotalChange {
    /// The old total.
    pub old: AnpTotal,
    /// The new total.
    pub new: AnpTotal,
    /// `new.amount − old.amount`.
    #[ts(as = "MoneyText")]
    pub absolute: String,
    /// Percent change; null from zero or across currencies.
    pub percent: Option<String>,
    /// True when the currencies differ.
    pub currency_changed: bool,
    /// Better or worse for the buyer; null when it did not move or the
    /// currency changed.
    pub effect: Option<super::Effect>,
}

/// An offer's total: the amount that counts, computed and stated, and
/// whether they disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct AnpTotal {
    /// The stated total when present, else the computed sum.
    #[ts(as = "MoneyText")]
    pub amount: String,
    /// Σ quantity × unit_price.
    #[ts(as = "MoneyText")]
    pub computed: String,
    /// As the offer states it.
    #[ts(as = "Option<MoneyText>")]
    pub stated: Option<String>,
    /// True when a stated total disagrees with the lines.
    pub mismatch: bool,
}
