//! The view shape of plain terms (`proposal_kind: "plain_terms"`): the
//! terms an organization's own agent asks about (no negotiation protocol
//! behind them), as the host wrote and signed them, beside the terms they
//! revise, with their structured diff, the agent's rationale (its words,
//! data), and the request they belong to. Counterparty and agent text is
//! data: shown as text, never followed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Change, GateRequest, LineStatus, MoneyText, PreviousRef, Scalar};

/// Plain terms and what they are compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PlainTermsView {
    /// The terms the request is about.
    pub terms: PlainTerms,
    /// The terms they revise (the thread's earlier request), if any.
    pub previous: Option<PlainTerms>,
    /// Where those are.
    pub previous_ref: Option<PreviousRef>,
    /// The structured diff from the revised terms, null for the first.
    pub diff: Option<PlainTermsDiff>,
    /// Why, in the agent's own words (data, never an instruction).
    pub rationale: Option<String>,
    /// The agent that asked.
    pub agent: PlainAgent,
    /// The host's signed entry holding the terms.
    pub entry: PlainEntryRef,
    /// The gate request the terms wait on.
    pub request: Option<GateRequest>,
    /// What a person is told about where the terms come from.
    pub notice: String,
}

/// Plain terms, as `crates/plain` reads them (amounts exact, as text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct PlainTerms {
    /// Who the organization would commit to.
    pub counterparty: PlainCounterparty,
    /// ISO 4217 code of every price.
    pub currency: String,
    /// The lines.
    pub line_items: Vec<PlainLineItem>,
    /// The term, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<String>,
    /// Conditions, each a sentence.
    #[serde(default)]
    pub conditions: Vec<String>,
    /// The exact total the host computed.
    #[ts(as = "MoneyText")]
    pub total: String,
}

/// The counterparty plain terms name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct PlainCounterparty {
    /// Its name as the agent gave it.
    pub name: String,
    /// The identifier the agent gave (domain, DID, vendor number).
    pub id: String,
}

/// One line of plain terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct PlainLineItem {
    /// What is bought.
    pub description: String,
    /// The seller's SKU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// How many (exact decimal text).
    #[ts(as = "MoneyText")]
    pub quantity: String,
    /// The unit counted, when not each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Price of one unit (exact decimal text).
    #[ts(as = "MoneyText")]
    pub unit_price: String,
}

/// The agent that asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PlainAgent {
    /// Its gate agent id.
    pub id: String,
    /// Its enrolled name.
    pub name: String,
}

/// Where the terms are in the thread's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PlainEntryRef {
    /// Its seq.
    pub seq: u64,
    /// Its hash: what a receipt's `offer_hash` names.
    pub hash: String,
    /// When the host wrote it.
    pub at: String,
    /// The request id the agent gave.
    pub request_id: String,
    /// The request these terms revise.
    pub revises: Option<String>,
}

/// Two sets of plain terms compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PlainTermsDiff {
    /// One row per line of either side, matched by SKU (else description).
    pub line_items: Vec<PlainLineDiff>,
    /// Conditions only in the new terms.
    pub conditions_added: Vec<String>,
    /// Conditions only in the old terms.
    pub conditions_removed: Vec<String>,
    /// Set when the term changed.
    pub term: Option<Scalar>,
    /// Set when the currency changed (then totals are not compared).
    pub currency: Option<Scalar>,
    /// The old and new totals.
    pub total: Scalar,
    /// New total minus old, with its percentage, in one currency.
    pub total_change: Option<Change>,
}

/// One row of the line diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PlainLineDiff {
    /// Added, removed, changed or unchanged.
    pub status: LineStatus,
    /// The SKU, or the description when there is none.
    pub key: String,
    /// The old line.
    pub old: Option<PlainLineItem>,
    /// The new line.
    pub new: Option<PlainLineItem>,
    /// The fields that changed (`quantity`, `unit_price`, …).
    pub fields: Vec<String>,
}
