//! The receipt an OANP session leaves behind, typed member by member.
//!
//! [`Receipt::read`] reads every member RECEIPTS.md lists (and those the
//! developer page shows: versions, `attested`, `rounds_completed`,
//! `no_deal_welfare`, `mode`, `hosted`), each into a [`Member`] so one
//! malformed member never hides the others. Members it does not know are kept
//! in [`Receipt::unknown`], never trusted.
//!
//! Reading is not verifying: [`crate::verify`] works on the receipt's JSON
//! exactly as received, and only `signed_payload` is evidence.

pub mod form;
mod member;
pub mod types;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

pub use form::{recognize, Form, NotAnOanpReceipt};
pub use member::Member;
use member::{each, member_of, object, rest};
pub use types::*;

/// Both parties (`parties`), each read on its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parties {
    /// The buyer.
    pub buyer: Member<Party>,
    /// The merchant.
    pub merchant: Member<Party>,
    /// Fields not known here.
    pub extra: Extra,
}

/// What the arbiter signed (`signed_payload`), each part read on its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignedPayload {
    /// The agreed terms: the only terms to act on.
    pub final_terms: Member<Terms>,
    /// The session metadata, with the chain head at signing.
    pub session: Member<SignedSession>,
    /// Fields not known here (signed, but not named by the publisher).
    pub extra: Extra,
}

/// The embedded public keys (`jwks`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Jwks {
    /// The keys, each read on its own.
    pub keys: Member<Vec<Member<Jwk>>>,
    /// Fields not known here.
    pub extra: Extra,
}

/// A receipt, member by member.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Receipt {
    /// The protocol version (`0.1`).
    pub oanp_version: Member<String>,
    /// The arbiter library's version.
    pub library_version: Member<String>,
    /// Which session.
    pub session_id: Member<String>,
    /// How it ended.
    pub state: Member<SessionState>,
    /// Whether the arbiter enforced its verdicts or only recorded them.
    pub enforcement: Member<String>,
    /// The fairness profile.
    pub fairness_profile: Member<String>,
    /// The session rules.
    pub rules: Member<Rules>,
    /// The reference inputs fixed before the first offer.
    pub attested: Member<Attested>,
    /// Each side: agent id, declared constraints, commitment.
    pub parties: Member<Parties>,
    /// Who arbitrated, and how related to the parties.
    pub arbiter: Member<Arbiter>,
    /// Rounds used.
    pub rounds_completed: Member<u32>,
    /// Every scored offer.
    pub verdicts: Member<Vec<Member<Verdict>>>,
    /// Why the session closed, when it did without agreement.
    pub close: Member<Close>,
    /// The agreed terms as the receipt states them (unsigned: compare with
    /// [`SignedPayload::final_terms`]).
    pub final_terms: Member<Terms>,
    /// What no deal would have cost.
    pub no_deal_welfare: Member<NoDealWelfare>,
    /// The invariants I1–I7, by id.
    pub invariants: Member<BTreeMap<String, Member<Invariant>>>,
    /// Whether revealed limits matched their commitments.
    pub reveals: Member<Reveals>,
    /// The log's head and length (unsigned).
    pub chain: Member<ChainClaim>,
    /// The detached JWS.
    pub artifact: Member<Artifact>,
    /// What the arbiter signed.
    pub signed_payload: Member<SignedPayload>,
    /// The embedded keys.
    pub jwks: Member<Jwks>,
    /// The arbiter's own verification result (never evidence).
    pub signature: Member<SignatureReport>,
    /// The mode the receipt claims (`test`, `live`); the signer's pinned mode decides.
    pub mode: Member<String>,
    /// The hosted gateway's disclosure.
    pub hosted: Member<Hosted>,
    /// Members this crate does not know: kept, never trusted.
    pub unknown: BTreeMap<String, Value>,
}

/// The members [`Receipt`] reads.
pub const KNOWN_MEMBERS: [&str; 24] = [
    "oanp_version",
    "library_version",
    "session_id",
    "state",
    "enforcement",
    "fairness_profile",
    "rules",
    "attested",
    "parties",
    "arbiter",
    "rounds_completed",
    "verdicts",
    "close",
    "final_terms",
    "no_deal_welfare",
    "invariants",
    "reveals",
    "chain",
    "artifact",
    "signed_payload",
    "jwks",
    "signature",
    "mode",
    "hosted",
];

/// The receipt is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a receipt is a JSON object")]
pub struct NotAReceipt;

impl Receipt {
    /// Reads every member of a receipt object.
    pub fn read(receipt: &Value) -> Result<Self, NotAReceipt> {
        let r = receipt.as_object().ok_or(NotAReceipt)?;
        Ok(Self {
            oanp_version: Member::read(r, "oanp_version"),
            library_version: Member::read(r, "library_version"),
            session_id: Member::read(r, "session_id"),
            state: Member::read(r, "state"),
            enforcement: Member::read(r, "enforcement"),
            fairness_profile: Member::read(r, "fairness_profile"),
            rules: Member::read(r, "rules"),
            attested: Member::read(r, "attested"),
            parties: Member::read_with(r, "parties", read_parties),
            arbiter: Member::read(r, "arbiter"),
            rounds_completed: Member::read(r, "rounds_completed"),
            verdicts: Member::read_with(r, "verdicts", each),
            close: Member::read(r, "close"),
            final_terms: Member::read(r, "final_terms"),
            no_deal_welfare: Member::read(r, "no_deal_welfare"),
            invariants: Member::read_with(r, "invariants", read_invariants),
            reveals: Member::read(r, "reveals"),
            chain: Member::read(r, "chain"),
            artifact: Member::read(r, "artifact"),
            signed_payload: Member::read_with(r, "signed_payload", read_signed_payload),
            jwks: Member::read_with(r, "jwks", read_jwks),
            signature: Member::read(r, "signature"),
            mode: Member::read(r, "mode"),
            hosted: Member::read(r, "hosted"),
            unknown: rest(r, &KNOWN_MEMBERS),
        })
    }
}

fn read_parties(raw: &Value) -> Result<Parties, String> {
    let p = object(raw)?;
    Ok(Parties {
        buyer: Member::read(p, "buyer"),
        merchant: Member::read(p, "merchant"),
        extra: rest(p, &["buyer", "merchant"]),
    })
}

fn read_signed_payload(raw: &Value) -> Result<SignedPayload, String> {
    let p = object(raw)?;
    Ok(SignedPayload {
        final_terms: Member::read(p, "final_terms"),
        session: Member::read(p, "session"),
        extra: rest(p, &["final_terms", "session"]),
    })
}

fn read_jwks(raw: &Value) -> Result<Jwks, String> {
    let j = object(raw)?;
    Ok(Jwks {
        keys: Member::read_with(j, "keys", each),
        extra: rest(j, &["keys"]),
    })
}

fn read_invariants(raw: &Value) -> Result<BTreeMap<String, Member<Invariant>>, String> {
    let map: &Map<String, Value> = object(raw)?;
    Ok(map
        .iter()
        .map(|(id, item)| (id.clone(), member_of(item)))
        .collect())
}
