//! The typed members of a receipt, as RECEIPTS.md and the developer page
//! describe them. Every struct keeps the fields it does not know in `extra`:
//! kept for display and export, never trusted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::money::{Fraction, MinorUnits, Money};

/// Fields a struct does not know, kept as written.
pub type Extra = BTreeMap<String, Value>;

/// How the session ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum SessionState {
    /// The parties agreed; the arbiter signed the final terms.
    Agreed,
    /// The session closed without an agreement.
    Closed,
    /// A state this crate does not know, as written.
    Other(String),
}

impl From<String> for SessionState {
    fn from(text: String) -> Self {
        match text.as_str() {
            "agreed" => SessionState::Agreed,
            "closed" => SessionState::Closed,
            _ => SessionState::Other(text),
        }
    }
}

impl From<SessionState> for String {
    fn from(state: SessionState) -> Self {
        match state {
            SessionState::Agreed => "agreed".to_owned(),
            SessionState::Closed => "closed".to_owned(),
            SessionState::Other(text) => text,
        }
    }
}

/// One inclusion in terms or constraints: `{kind, value}` (`warranty`, `included`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inclusion {
    /// What is included (`meal`, `warranty`).
    pub kind: String,
    /// Its state (`included`, `wanted`).
    #[serde(default)]
    pub value: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Terms: a price and its inclusions (`final_terms`, an offer's `terms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Terms {
    /// The price.
    pub price: Money,
    /// What the price includes.
    #[serde(default)]
    pub inclusions: Vec<Inclusion>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The session rules the arbiter fixed (`rules`, `session.accept`'s `session_rules`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rules {
    /// The most rounds the session may take.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// How long a party has to move, in seconds.
    #[serde(default)]
    pub round_timeout_seconds: Option<u64>,
    /// The fairness profile scoring the offers (`default/v0.1`).
    #[serde(default)]
    pub fairness_profile: Option<String>,
    /// How long the arbiter keeps the session log.
    #[serde(default)]
    pub audit_retention_days: Option<u32>,
    /// The band around a fair score within which an offer is fair (`0.05`).
    #[serde(default)]
    pub fair_band: Option<Fraction>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The reference inputs the arbiter fixed before the first offer (`attested`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attested {
    /// The list price.
    #[serde(default)]
    pub list_price: Option<Money>,
    /// The value of each inclusion, by kind.
    #[serde(default)]
    pub inclusion_values: BTreeMap<String, Money>,
    /// The target cost the fairness score measures against.
    #[serde(default)]
    pub t_target: Option<Money>,
    /// Where the inputs come from, as the arbiter says.
    #[serde(default)]
    pub source: Option<String>,
    /// When they were captured.
    #[serde(default)]
    pub captured_at: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a party declared openly when it joined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Declared {
    /// The most rounds it will take.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// Its currency.
    #[serde(default)]
    pub currency: Option<String>,
    /// The inclusions it wants (buyer) or puts on the table (merchant).
    #[serde(default)]
    pub inclusions: Vec<Inclusion>,
    /// How much it values each inclusion, as fractions.
    #[serde(default)]
    pub utilities: BTreeMap<String, Fraction>,
    /// Its other preferences, as written.
    #[serde(default)]
    pub non_price_preferences: Vec<Value>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One side of the session (`parties.buyer`, `parties.merchant`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Party {
    /// Its agent id.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The hash commitment to its private limit (`sha256:…`).
    #[serde(default)]
    pub commitment: Option<String>,
    /// Its declared constraints, in the clear.
    #[serde(default)]
    pub declared: Option<Declared>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Who arbitrated (`arbiter`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arbiter {
    /// Its agent id.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// `independent`, or `affiliated` when the arbiter stood on a party's side.
    #[serde(default)]
    pub relationship: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One scored offer (`verdicts[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The round.
    #[serde(default)]
    pub round: Option<u32>,
    /// `fair`, `unfair_to_buyer` or `unfair_to_merchant`.
    #[serde(default)]
    pub verdict: Option<String>,
    /// The fairness score (`1.0000` is exactly fair).
    #[serde(default)]
    pub fairness_score: Option<Fraction>,
    /// The perceived value of the offer's inclusions.
    #[serde(default)]
    pub w_minor: Option<MinorUnits>,
    /// The scored cost: the price less the inclusions' value.
    #[serde(default)]
    pub t_minor: Option<MinorUnits>,
    /// The target cost.
    #[serde(default)]
    pub t_target_minor: Option<MinorUnits>,
    /// The currency of the amounts.
    #[serde(default)]
    pub currency: Option<String>,
    /// The offer's price.
    #[serde(default)]
    pub price_minor: Option<MinorUnits>,
    /// Inclusions the arbiter had no attested value for.
    #[serde(default)]
    pub unattested_inclusions: Vec<Value>,
    /// `rejected`, `pending` or `accepted`.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Why a session closed without agreement (`close`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Close {
    /// Why there was no deal (the rounds ran out, say).
    #[serde(default)]
    pub reason: Option<String>,
    /// More detail.
    #[serde(default)]
    pub detail: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The arbiter's account of what no deal would have cost (`no_deal_welfare`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoDealWelfare {
    /// The currency of the amounts.
    #[serde(default)]
    pub currency: Option<String>,
    /// The agreed price.
    #[serde(default)]
    pub agreed_price_minor: Option<MinorUnits>,
    /// A reference price both sides would have had.
    #[serde(default)]
    pub bilateral_reference_price_minor: Option<MinorUnits>,
    /// Whether the buyer would have bought nothing.
    #[serde(default)]
    pub buyer_no_purchase: Option<bool>,
    /// What the merchant would have lost.
    #[serde(default)]
    pub merchant_revenue_foregone_minor: Option<MinorUnits>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The arbiter's report on one invariant (`invariants.I1` … `I7`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invariant {
    /// Its name (`Bounded rounds`).
    #[serde(default)]
    pub name: Option<String>,
    /// Its state as the arbiter reports it (`enforced`, `held`, `signed`).
    #[serde(default)]
    pub status: Option<String>,
    /// A sentence.
    #[serde(default)]
    pub detail: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Whether each party's revealed private limit matched its commitment (`reveals`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reveals {
    /// The buyer's.
    #[serde(default)]
    pub buyer: Option<bool>,
    /// The merchant's.
    #[serde(default)]
    pub merchant: Option<bool>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The head and length of the session log the receipt names (`chain`, unsigned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainClaim {
    /// The last envelope's hash.
    #[serde(default)]
    pub head: Option<String>,
    /// How many envelopes the log holds.
    #[serde(default)]
    pub length: Option<u64>,
    /// How long the arbiter keeps it.
    #[serde(default)]
    pub retention_days: Option<u32>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The detached JWS (`artifact`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// The protected header, base64url.
    #[serde(default)]
    pub protected: Option<String>,
    /// The Ed25519 signature, base64url.
    #[serde(default)]
    pub signature: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The session metadata the arbiter signed (`signed_payload.session`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedSession {
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The protocol version.
    #[serde(default)]
    pub oanp_version: Option<String>,
    /// The arbiter's agent id.
    #[serde(default)]
    pub arbiter_agent_id: Option<String>,
    /// The fairness profile.
    #[serde(default)]
    pub fairness_profile: Option<String>,
    /// Rounds used.
    #[serde(default)]
    pub rounds_completed: Option<u32>,
    /// The hash of the envelope before `session.agree`.
    #[serde(default)]
    pub chain_head: Option<String>,
    /// The buyer's commitment.
    #[serde(default)]
    pub buyer_commitment: Option<String>,
    /// The merchant's commitment.
    #[serde(default)]
    pub merchant_commitment: Option<String>,
    /// Where the reference inputs come from.
    #[serde(default)]
    pub attested_source: Option<String>,
    /// Fields not known here (signed, but not named by the publisher).
    #[serde(flatten)]
    pub extra: Extra,
}

/// One embedded public key (`jwks.keys[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Jwk {
    /// `OKP` for Ed25519.
    #[serde(default)]
    pub kty: Option<String>,
    /// `Ed25519`.
    #[serde(default)]
    pub crv: Option<String>,
    /// The key id.
    #[serde(default)]
    pub kid: Option<String>,
    /// The public point, base64url.
    #[serde(default)]
    pub x: Option<String>,
    /// `EdDSA`.
    #[serde(default)]
    pub alg: Option<String>,
    /// `sig`.
    #[serde(default, rename = "use")]
    pub use_: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The arbiter's own verification result (`signature`): never evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignatureReport {
    /// What the arbiter says (`valid`).
    #[serde(default)]
    pub status: Option<String>,
    /// Its sentence.
    #[serde(default)]
    pub reason: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The hosted gateway's disclosure (`hosted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hosted {
    /// Who ran the merchant side.
    #[serde(default)]
    pub merchant_runtime: Option<String>,
    /// Who made the buyer's commitment.
    #[serde(default)]
    pub buyer_commitment_by: Option<String>,
    /// The tenant.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// Settlement details, as written.
    #[serde(default)]
    pub settlement: Option<Value>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}
