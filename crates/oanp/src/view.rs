//! What a console shows of a receipt, with every part labelled by what
//! vouches for it.
//!
//! Only `signed_payload` is evidence, and only when its signature verifies
//! under a pinned key ([`SignedView::genuine`]). Everything else (the
//! parties, each round's verdict and score, the invariants I1–I7, the
//! receipt's own copy of the final terms, the arbiter's own signature report,
//! the mode the receipt claims) is the arbiter's report, carried in
//! [`ArbiterReport`] under a notice that says so.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::envelope::Role;
use crate::money::{MinorUnits, Money};
use crate::receipt::{
    Arbiter, Attested, ChainClaim, Close, Extra, Hosted, Invariant, Member, NoDealWelfare,
    NotAReceipt, Party, Receipt, Reveals, Rules, SessionState, SignatureReport, SignedSession,
    Terms, Verdict,
};
use crate::verify::{Check, Signer, Status, Verification};

/// The notice every part of [`ArbiterReport`] is shown under.
pub const REPORT_NOTICE: &str =
    "The arbiter's own report: not covered by its signature, so not evidence of anything.";

/// A receipt as a console shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReceiptView {
    /// True only when the receipt is proof.
    pub proof: bool,
    /// What the signature says.
    pub status: Status,
    /// One sentence: proof or not, and why.
    pub headline: String,
    /// Who signed, by the pinned keys, with the key's mode.
    pub signer: Signer,
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// What the arbiter signed: the only evidence.
    pub signed: SignedView,
    /// Everything else: the arbiter's unverified report.
    pub arbiter_report: ArbiterReport,
    /// Receipt members this crate does not know: kept, never trusted.
    pub unknown_members: BTreeMap<String, Value>,
}

/// `signed_payload`: the signed final terms and session metadata.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignedView {
    /// True when the signature verifies under a pinned arbiter key: these
    /// are the arbiter's bytes. (Proof needs more: see [`ReceiptView::proof`].)
    pub genuine: bool,
    /// The signed final terms: the only terms to act on.
    pub final_terms: Member<Terms>,
    /// The signed session metadata, with the chain head at signing.
    pub session: Member<SignedSession>,
    /// Signed fields the publisher does not name.
    pub extra: Extra,
}

/// Everything in a receipt but `signed_payload`: what the arbiter reports,
/// which its signature does not cover.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArbiterReport {
    /// [`REPORT_NOTICE`].
    pub notice: &'static str,
    /// The session id the receipt states.
    pub session_id: Member<String>,
    /// How the session ended, as stated.
    pub state: Member<SessionState>,
    /// Enforced or only recorded.
    pub enforcement: Member<String>,
    /// The mode the receipt claims (the signer's pinned mode is what counts).
    pub claimed_mode: Member<String>,
    /// The protocol version.
    pub oanp_version: Member<String>,
    /// The session rules.
    pub rules: Member<Rules>,
    /// The reference inputs.
    pub attested: Member<Attested>,
    /// Who arbitrated, and how related to the parties.
    pub arbiter: Member<Arbiter>,
    /// Buyer and merchant, with their declared constraints.
    pub parties: Vec<PartyView>,
    /// Rounds used, as stated.
    pub rounds_completed: Member<u32>,
    /// Every scored offer, in order.
    pub rounds: Vec<RoundView>,
    /// Why the session closed, when it did without agreement.
    pub close: Member<Close>,
    /// The receipt's own copy of the final terms (unsigned).
    pub stated_final_terms: Member<Terms>,
    /// What no deal would have cost.
    pub no_deal_welfare: Member<NoDealWelfare>,
    /// I1 to I7, in order (absent ones marked so), then any others.
    pub invariants: Vec<InvariantView>,
    /// Whether revealed limits matched their commitments.
    pub reveals: Member<Reveals>,
    /// The log's head and length, as stated.
    pub chain: Member<ChainClaim>,
    /// The arbiter's own verification result.
    pub signature_report: Member<SignatureReport>,
    /// The hosted gateway's disclosure.
    pub hosted: Member<Hosted>,
}

/// One party, by role.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartyView {
    /// Buyer or merchant.
    pub role: Role,
    /// Agent id, commitment and declared constraints.
    pub party: Member<Party>,
}

/// One scored offer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundView {
    /// The verdict as reported.
    pub verdict: Member<Verdict>,
    /// The price that would have made the offer fair.
    pub suggested_price: Option<SuggestedPrice>,
}

/// A price the arbiter suggests, and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuggestedPrice {
    /// The amount, in the verdict's currency.
    pub amount_minor: MinorUnits,
    /// The currency, when the verdict names one.
    pub currency: Option<String>,
    /// `stated` (the verdict's `suggested_adjustment`) or `derived`
    /// (`t_target_minor + w_minor`: the price at which the scored cost,
    /// price less the inclusions' value, meets the target).
    pub basis: SuggestedBasis,
}

/// Where a [`SuggestedPrice`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SuggestedBasis {
    /// The verdict states it.
    Stated,
    /// Computed here from the verdict's target cost and inclusion value.
    Derived,
}

/// One invariant, by id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvariantView {
    /// `I1` … `I7` (or another id the receipt uses).
    pub id: String,
    /// The arbiter's report on it.
    pub invariant: Member<Invariant>,
}

/// The invariants every receipt reports on.
pub const INVARIANT_IDS: [&str; 7] = ["I1", "I2", "I3", "I4", "I5", "I6", "I7"];

impl ReceiptView {
    /// The view of `receipt` given its verification.
    pub fn build(receipt: &Value, verification: &Verification) -> Result<Self, NotAReceipt> {
        let r = Receipt::read(receipt)?;
        let (final_terms, session, extra) = match r.signed_payload {
            Member::Read(p) => (p.final_terms, p.session, p.extra),
            Member::Absent => (Member::Absent, Member::Absent, Extra::new()),
            Member::Null => (Member::Null, Member::Null, Extra::new()),
            Member::Unreadable { raw, reason } => (
                Member::Unreadable {
                    raw: raw.clone(),
                    reason: reason.clone(),
                },
                Member::Unreadable { raw, reason },
                Extra::new(),
            ),
        };
        let genuine = verification.status == Status::Valid
            && matches!(verification.signer, Signer::Pinned { .. });
        let parties = match r.parties {
            Member::Read(p) => vec![
                PartyView {
                    role: Role::Buyer,
                    party: p.buyer,
                },
                PartyView {
                    role: Role::Merchant,
                    party: p.merchant,
                },
            ],
            other => {
                let both = |role| PartyView {
                    role,
                    party: other_party(&other),
                };
                vec![both(Role::Buyer), both(Role::Merchant)]
            }
        };
        let rounds = match r.verdicts {
            Member::Read(verdicts) => verdicts
                .into_iter()
                .map(|verdict| RoundView {
                    suggested_price: verdict.get().and_then(suggested),
                    verdict,
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok(Self {
            proof: verification.proof,
            status: verification.status,
            headline: verification.headline(),
            signer: verification.signer.clone(),
            checks: verification.checks.clone(),
            signed: SignedView {
                genuine,
                final_terms,
                session,
                extra,
            },
            arbiter_report: ArbiterReport {
                notice: REPORT_NOTICE,
                session_id: r.session_id,
                state: r.state,
                enforcement: r.enforcement,
                claimed_mode: r.mode,
                oanp_version: r.oanp_version,
                rules: r.rules,
                attested: r.attested,
                arbiter: r.arbiter,
                parties,
                rounds_completed: r.rounds_completed,
                rounds,
                close: r.close,
                stated_final_terms: r.final_terms,
                no_deal_welfare: r.no_deal_welfare,
                invariants: invariants(r.invariants),
                reveals: r.reveals,
                chain: r.chain,
                signature_report: r.signature,
                hosted: r.hosted,
            },
            unknown_members: r.unknown,
        })
    }

    /// The signed final terms, only when the receipt is proof.
    pub fn terms_to_act_on(&self) -> Option<&Terms> {
        self.proof.then(|| self.signed.final_terms.get()).flatten()
    }
}

/// The parties member was not an object: each party shows why.
fn other_party(parties: &Member<crate::receipt::Parties>) -> Member<Party> {
    match parties {
        Member::Absent => Member::Absent,
        Member::Null => Member::Null,
        Member::Unreadable { raw, reason } => Member::Unreadable {
            raw: raw.clone(),
            reason: reason.clone(),
        },
        Member::Read(_) => Member::Absent,
    }
}

fn suggested(verdict: &Verdict) -> Option<SuggestedPrice> {
    if let Some(stated) = verdict.extra.get("suggested_adjustment") {
        let money: Money = serde_json::from_value(stated.clone()).ok()?;
        return Some(SuggestedPrice {
            amount_minor: money.amount_minor,
            currency: Some(money.currency),
            basis: SuggestedBasis::Stated,
        });
    }
    let amount = verdict.t_target_minor?.checked_add(verdict.w_minor?)?;
    Some(SuggestedPrice {
        amount_minor: amount,
        currency: verdict.currency.clone(),
        basis: SuggestedBasis::Derived,
    })
}

fn invariants(member: Member<BTreeMap<String, Member<Invariant>>>) -> Vec<InvariantView> {
    // When the member itself is not an object, each invariant shows why.
    let missing = match &member {
        Member::Read(_) | Member::Absent => Member::Absent,
        Member::Null => Member::Null,
        Member::Unreadable { raw, reason } => Member::Unreadable {
            raw: raw.clone(),
            reason: reason.clone(),
        },
    };
    let mut by_id = match member {
        Member::Read(map) => map,
        _ => BTreeMap::new(),
    };
    let mut out: Vec<InvariantView> = INVARIANT_IDS
        .iter()
        .map(|id| InvariantView {
            id: (*id).to_owned(),
            invariant: by_id.remove(*id).unwrap_or_else(|| missing.clone()),
        })
        .collect();
    out.extend(
        by_id
            .into_iter()
            .map(|(id, invariant)| InvariantView { id, invariant }),
    );
    out
}
