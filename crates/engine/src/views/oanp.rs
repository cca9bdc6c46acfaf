//! The view shape of an OANP receipt (`kind: "oanp_receipt"`), read from
//! `crates/oanp`'s verification and `ReceiptView`. Two parts, never mixed:
//! [`OanpSigned`], what the arbiter signed (the only evidence, and only when
//! `genuine`), and [`OanpReport`], everything else the receipt says (parties,
//! each round's verdict, score and suggested price, the invariants I1–I7),
//! which its signature does not cover and which is shown under `notice`.
//! Every text here is counterparty text: shown as text, never followed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Amount, MoneyText};

/// An OANP receipt as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpReceiptView {
    /// True only when the receipt is proof under this console's settings.
    pub proof: bool,
    /// What the signature says: `valid`, `invalid`, `unverifiable`, `unsigned`.
    pub status: String,
    /// One sentence: proof or not, and why.
    pub headline: String,
    /// Who signed, by the pinned arbiter keys (never by what the receipt claims).
    pub signer: OanpSigner,
    /// The seven checks, in order: header, key, signature, signer, mode, terms, chain.
    pub checks: Vec<OanpCheck>,
    /// Whether test-mode receipts count as proof (the setting `oanp.allow_test_receipts`).
    pub allow_test: bool,
    /// What the arbiter signed.
    pub signed: OanpSigned,
    /// What the arbiter reports without signing it.
    pub report: OanpReport,
    /// Names of receipt members this console does not know (kept, never trusted).
    pub unknown_members: Vec<String>,
}

/// The signer, by the pinned keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpSigner {
    /// True when the kid and key are a pinned arbiter key.
    pub pinned: bool,
    /// The protected header's kid, when it has one (counterparty text).
    pub kid: Option<String>,
    /// Whose key it is, when pinned (`the Valyzen arbiter`).
    pub label: Option<String>,
    /// `live` or `test`, when pinned.
    pub mode: Option<String>,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpCheck {
    /// `header`, `key`, `signature`, `signer`, `mode`, `terms` or `chain`.
    pub id: String,
    /// Ran and holds.
    pub ok: bool,
    /// Could not run (then `ok` says nothing).
    pub skipped: bool,
    /// A sentence saying what was found.
    pub detail: String,
}

/// An amount in minor units, and in major units when the currency's
/// exponent is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpMoney {
    /// Integer minor units, as decimal text.
    #[ts(as = "MoneyText")]
    pub amount_minor: String,
    /// The currency code as written.
    pub currency: String,
    /// The exact amount in major units (`419.00 USD`); null for a currency
    /// whose exponent this console does not know.
    pub amount: Option<Amount>,
}

/// One inclusion (`warranty`: `included`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpInclusion {
    /// What is included.
    pub kind: String,
    /// Its state, when given.
    pub value: Option<String>,
}

/// Terms: a price and its inclusions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpTerms {
    /// The price.
    pub price: OanpMoney,
    /// What it includes.
    pub inclusions: Vec<OanpInclusion>,
}

/// Counter terms beside the OANP offer they answer: what a counter editor
/// shows before it is sent, and the decided view after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpTermsDiff {
    /// The terms answered.
    pub old: OanpTerms,
    /// The terms offered instead.
    pub new: OanpTerms,
    /// From the old price to the new (same currency only).
    pub price_change: Option<super::Change>,
    /// Inclusions the new terms add.
    pub inclusions_added: Vec<OanpInclusion>,
    /// Inclusions the new terms drop.
    pub inclusions_removed: Vec<OanpInclusion>,
}

/// `signed_payload`: the signed final terms and session metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpSigned {
    /// The signature verifies under a pinned arbiter key: these are the
    /// arbiter's bytes (proof needs the other checks too).
    pub genuine: bool,
    /// The signed final terms: the only terms to act on, when proof.
    pub final_terms: Option<OanpTerms>,
    /// Why the signed terms cannot be shown, when they cannot.
    pub final_terms_problem: Option<String>,
    /// The signed session id.
    pub session_id: Option<String>,
    /// The signed arbiter id.
    pub arbiter_agent_id: Option<String>,
    /// The signed fairness profile.
    pub fairness_profile: Option<String>,
    /// The signed round count.
    pub rounds_completed: Option<u32>,
    /// The signed chain head (the envelope before `session.agree`).
    pub chain_head: Option<String>,
}

/// Everything but `signed_payload`: the arbiter's unverified report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpReport {
    /// The sentence every part of the report is shown under.
    pub notice: String,
    /// The session id the receipt states.
    pub session_id: Option<String>,
    /// `agreed` or `closed`, as stated.
    pub state: Option<String>,
    /// Enforced or only recorded, as stated.
    pub enforcement: Option<String>,
    /// The mode the receipt claims (the signer's pinned mode is what counts).
    pub claimed_mode: Option<String>,
    /// The arbiter's id, as stated.
    pub arbiter_agent_id: Option<String>,
    /// `independent` or `affiliated`, as stated.
    pub arbiter_relationship: Option<String>,
    /// The session's round limit, as stated.
    pub max_rounds: Option<u32>,
    /// Rounds used, as stated.
    pub rounds_completed: Option<u32>,
    /// Buyer and merchant with their declared constraints.
    pub parties: Vec<OanpParty>,
    /// Every scored offer, in order.
    pub rounds: Vec<OanpRound>,
    /// I1 to I7, in order, then any others.
    pub invariants: Vec<OanpInvariant>,
    /// The receipt's own (unsigned) copy of the final terms.
    pub stated_final_terms: Option<OanpTerms>,
    /// Why the session closed without agreement, when it did.
    pub close: Option<String>,
    /// The arbiter's own verification result (never evidence).
    pub arbiter_signature_report: Option<String>,
    /// The chain head and length the receipt names.
    pub chain_head: Option<String>,
    /// How many envelopes it says the log holds.
    pub chain_length: Option<u32>,
    /// Members that are there but cannot be read, with why.
    pub problems: Vec<OanpProblem>,
}

/// One party.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpParty {
    /// `buyer` or `merchant`.
    pub role: String,
    /// Its agent id.
    pub agent_id: Option<String>,
    /// The hash commitment to its private limit.
    pub commitment: Option<String>,
    /// The most rounds it declared it will take.
    pub max_rounds: Option<u32>,
    /// Its declared currency.
    pub currency: Option<String>,
    /// The inclusions it wants or puts on the table.
    pub inclusions: Vec<OanpInclusion>,
    /// How much it values each inclusion (fractions as written).
    pub utilities: Vec<OanpUtility>,
    /// Its other declared preferences, each as JSON text.
    pub other_preferences: Vec<String>,
    /// Why it cannot be shown, when it cannot.
    pub problem: Option<String>,
}

/// How much a party values one inclusion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpUtility {
    /// The inclusion.
    pub kind: String,
    /// The fraction, as written (`0.3`).
    pub value: String,
}

/// One scored offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpRound {
    /// The round, as stated.
    pub round: Option<u32>,
    /// `fair`, `unfair_to_buyer`, `unfair_to_merchant`.
    pub verdict: Option<String>,
    /// The fairness score as written (`1.0000` is exactly fair).
    pub fairness_score: Option<String>,
    /// The offer's price.
    pub price: Option<OanpMoney>,
    /// The price that would have made it fair.
    pub suggested_price: Option<OanpMoney>,
    /// `stated` (the verdict says it) or `derived` (target cost plus the
    /// inclusions' value, computed by this console).
    pub suggested_basis: Option<String>,
    /// `rejected`, `pending` or `accepted`.
    pub outcome: Option<String>,
    /// Why the round cannot be shown, when it cannot.
    pub problem: Option<String>,
}

/// The arbiter's report on one invariant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpInvariant {
    /// `I1` … `I7`.
    pub id: String,
    /// Its name.
    pub name: Option<String>,
    /// Its state as reported (`enforced`, `held`, `signed`).
    pub status: Option<String>,
    /// The arbiter's sentence.
    pub detail: Option<String>,
    /// Not reported, or unreadable, and why.
    pub problem: Option<String>,
}

/// A member that is there but cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpProblem {
    /// The member (`verdicts`, `parties`).
    pub member: String,
    /// Why.
    pub reason: String,
}

/// An OANP offer the org's own agent asks about before its `offer.accept`
/// (`proposal_kind: "oanp_offer"`), beside the one it answers, with the
/// arbiter's latest verdict and the rounds left. OANP envelopes carry no
/// signatures: until the arbiter's receipt verifies against the log, what
/// is shown is the org's own agent's mirror, chained and nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpOfferView {
    /// The counterparty's standing offer.
    pub offer: OanpOffer,
    /// The offer it answers (the latest earlier one of the other side), if any.
    pub previous: Option<OanpOffer>,
    /// Where that previous offer is.
    pub previous_ref: Option<super::PreviousRef>,
    /// From the previous price to this one (same currency only).
    pub price_change: Option<super::Change>,
    /// Inclusions this offer has that the previous one did not.
    pub inclusions_added: Vec<OanpInclusion>,
    /// Inclusions the previous offer had that this one drops.
    pub inclusions_removed: Vec<OanpInclusion>,
    /// The envelope that carries it.
    pub envelope: OanpEnvelopeRef,
    /// The arbiter's latest evaluation in the log, when there is one.
    pub verdict: Option<OanpVerdict>,
    /// The session's round limit, from the arbiter's `session.accept`.
    pub max_rounds: Option<u32>,
    /// Rounds left after this offer's round, when both are known.
    pub rounds_left: Option<u32>,
    /// What the org's own agent asks to do, and for how much.
    pub request: Option<super::GateRequest>,
    /// Why the envelopes are not evidence on their own.
    pub notice: String,
}

/// One OANP offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpOffer {
    /// `offer.propose` or `offer.counter`.
    pub message_type: String,
    /// Who sent it (`buyer`, `merchant`).
    pub sender: String,
    /// Its round, when stated.
    pub round: Option<u32>,
    /// Its price and inclusions.
    pub terms: OanpTerms,
}

/// The envelope an offer came in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpEnvelopeRef {
    /// Its `message_id`.
    pub message_id: String,
    /// Its hash (what an ApprovalReceipt's `scope.offer_hash` names).
    pub hash: String,
    /// Its position in the log (1-based).
    pub seq: u64,
}

/// The arbiter's evaluation of an offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OanpVerdict {
    /// `arbitration.evaluate` or `arbitration.reject`.
    pub message_type: String,
    /// `fair`, `unfair_to_buyer`, `unfair_to_merchant`, when stated.
    pub verdict: Option<String>,
    /// The fairness score as written.
    pub fairness_score: Option<String>,
    /// The price the arbiter suggests, when it states one.
    pub suggested_price: Option<OanpMoney>,
    /// Why it refused an offer (`arbitration.reject`).
    pub reason: Option<String>,
    /// Its position in the log (1-based).
    pub seq: u64,
}
