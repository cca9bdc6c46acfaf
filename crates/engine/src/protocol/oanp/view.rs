//! `crates/oanp`'s receipt view, in the contract's shape: the signed part
//! apart from the arbiter's report, every member that cannot be read named
//! with why, money exact (minor units, and major units when the currency's
//! exponent is known).

use oanp::money::{major_units, MinorUnits, Money};
use oanp::receipt::{Inclusion, Member, Terms};
use oanp::view::{PartyView, RoundView, SuggestedBasis};
use oanp::{ReceiptView, Signer, Verification};

use crate::views::{
    Amount, OanpCheck, OanpInclusion, OanpInvariant, OanpMoney, OanpParty, OanpProblem,
    OanpReceiptView, OanpReport, OanpRound, OanpSigned, OanpSigner, OanpTerms, OanpUtility,
};

/// The contract's view of a verified receipt.
pub(super) fn view(shown: &ReceiptView, verification: &Verification) -> OanpReceiptView {
    let report = &shown.arbiter_report;
    let mut problems = Vec::new();
    let mut note = |member: &str, reason: Option<String>| {
        if let Some(reason) = reason {
            problems.push(OanpProblem {
                member: member.to_owned(),
                reason,
            });
        }
    };
    note("session_id", unreadable(&report.session_id));
    note("state", unreadable(&report.state));
    note("enforcement", unreadable(&report.enforcement));
    note("mode", unreadable(&report.claimed_mode));
    note("rules", unreadable(&report.rules));
    note("arbiter", unreadable(&report.arbiter));
    note("rounds_completed", unreadable(&report.rounds_completed));
    note("close", unreadable(&report.close));
    note("final_terms", unreadable(&report.stated_final_terms));
    note("chain", unreadable(&report.chain));
    note("signature", unreadable(&report.signature_report));

    let signed_session = shown.signed.session.get();
    let arbiter = report.arbiter.get();
    let chain = report.chain.get();
    OanpReceiptView {
        proof: shown.proof,
        status: shown.status.as_str().to_owned(),
        headline: shown.headline.clone(),
        signer: match &shown.signer {
            Signer::Pinned { kid, label, mode } => OanpSigner {
                pinned: true,
                kid: Some(kid.clone()),
                label: Some(label.clone()),
                mode: Some(mode.as_str().to_owned()),
            },
            Signer::Unknown => OanpSigner {
                pinned: false,
                kid: verification.kid.clone(),
                label: None,
                mode: None,
            },
        },
        checks: shown
            .checks
            .iter()
            .map(|c| OanpCheck {
                id: c.id.as_str().to_owned(),
                ok: c.ok,
                skipped: c.skipped,
                detail: c.detail.clone(),
            })
            .collect(),
        allow_test: verification.allow_test,
        signed: OanpSigned {
            genuine: shown.signed.genuine,
            final_terms: shown.signed.final_terms.get().map(terms),
            final_terms_problem: missing(
                &shown.signed.final_terms,
                "The receipt signs no final terms.",
            ),
            session_id: signed_session.and_then(|s| s.session_id.clone()),
            arbiter_agent_id: signed_session.and_then(|s| s.arbiter_agent_id.clone()),
            fairness_profile: signed_session.and_then(|s| s.fairness_profile.clone()),
            rounds_completed: signed_session.and_then(|s| s.rounds_completed),
            chain_head: signed_session.and_then(|s| s.chain_head.clone()),
        },
        report: OanpReport {
            notice: report.notice.to_owned(),
            session_id: report.session_id.get().cloned(),
            state: report.state.get().map(|s| String::from(s.clone())),
            enforcement: report.enforcement.get().cloned(),
            claimed_mode: report.claimed_mode.get().cloned(),
            arbiter_agent_id: arbiter.and_then(|a| a.agent_id.clone()),
            arbiter_relationship: arbiter.and_then(|a| a.relationship.clone()),
            max_rounds: report.rules.get().and_then(|r| r.max_rounds),
            rounds_completed: report.rounds_completed.get().copied(),
            parties: report.parties.iter().map(party).collect(),
            rounds: report.rounds.iter().map(round).collect(),
            invariants: report
                .invariants
                .iter()
                .map(|i| {
                    let read = i.invariant.get();
                    OanpInvariant {
                        id: i.id.clone(),
                        name: read.and_then(|v| v.name.clone()),
                        status: read.and_then(|v| v.status.clone()),
                        detail: read.and_then(|v| v.detail.clone()),
                        problem: missing(&i.invariant, "The receipt does not report it."),
                    }
                })
                .collect(),
            stated_final_terms: report.stated_final_terms.get().map(terms),
            close: report.close.get().map(|c| {
                [c.reason.as_deref(), c.detail.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(": ")
            }),
            arbiter_signature_report: report.signature_report.get().map(|s| {
                [s.status.as_deref(), s.reason.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(": ")
            }),
            chain_head: chain.and_then(|c| c.head.clone()),
            chain_length: chain
                .and_then(|c| c.length)
                .and_then(|n| u32::try_from(n).ok()),
            problems,
        },
        unknown_members: shown.unknown_members.keys().cloned().collect(),
    }
}

/// Why a member that is there cannot be read.
fn unreadable<T>(member: &Member<T>) -> Option<String> {
    match member {
        Member::Unreadable { reason, .. } => Some(format!("cannot be read: {reason}")),
        _ => None,
    }
}

/// Why a member cannot be shown: not there (`absent`), null, or unreadable.
fn missing<T>(member: &Member<T>, absent: &str) -> Option<String> {
    match member {
        Member::Read(_) => None,
        Member::Absent => Some(absent.to_owned()),
        Member::Null => Some(format!("{} (It is null.)", absent.trim_end_matches('.'))),
        Member::Unreadable { reason, .. } => Some(format!("It cannot be read: {reason}.")),
    }
}

fn money(amount: MinorUnits, currency: &str) -> OanpMoney {
    OanpMoney {
        amount_minor: amount.get().to_string(),
        currency: currency.to_owned(),
        amount: major_units(amount, currency).map(|value| Amount {
            value: value.to_string(),
            currency: currency.to_owned(),
        }),
    }
}

fn of(m: &Money) -> OanpMoney {
    money(m.amount_minor, &m.currency)
}

fn inclusion(i: &Inclusion) -> OanpInclusion {
    OanpInclusion {
        kind: i.kind.clone(),
        value: i.value.clone(),
    }
}

fn terms(t: &Terms) -> OanpTerms {
    OanpTerms {
        price: of(&t.price),
        inclusions: t.inclusions.iter().map(inclusion).collect(),
    }
}

fn party(p: &PartyView) -> OanpParty {
    let role = p.role.as_str().to_owned();
    let read = p.party.get();
    let declared = read.and_then(|r| r.declared.as_ref());
    OanpParty {
        role,
        agent_id: read.and_then(|r| r.agent_id.clone()),
        commitment: read.and_then(|r| r.commitment.clone()),
        max_rounds: declared.and_then(|d| d.max_rounds),
        currency: declared.and_then(|d| d.currency.clone()),
        inclusions: declared
            .map(|d| d.inclusions.iter().map(inclusion).collect())
            .unwrap_or_default(),
        utilities: declared
            .map(|d| {
                d.utilities
                    .iter()
                    .map(|(kind, value)| OanpUtility {
                        kind: kind.clone(),
                        value: value.as_str().to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        other_preferences: declared
            .map(|d| {
                d.non_price_preferences
                    .iter()
                    .map(|v| v.to_string())
                    .collect()
            })
            .unwrap_or_default(),
        problem: missing(&p.party, "The receipt does not describe this party."),
    }
}

fn round(r: &RoundView) -> OanpRound {
    let v = r.verdict.get();
    let currency = v.and_then(|v| v.currency.clone());
    OanpRound {
        round: v.and_then(|v| v.round),
        verdict: v.and_then(|v| v.verdict.clone()),
        fairness_score: v.and_then(|v| v.fairness_score.as_ref().map(|f| f.as_str().to_owned())),
        price: v
            .and_then(|v| v.price_minor)
            .zip(currency.as_deref())
            .map(|(amount, currency)| money(amount, currency)),
        suggested_price: r.suggested_price.as_ref().and_then(|s| {
            s.currency
                .as_deref()
                .or(currency.as_deref())
                .map(|c| money(s.amount_minor, c))
        }),
        suggested_basis: r.suggested_price.as_ref().map(|s| {
            match s.basis {
                SuggestedBasis::Stated => "stated",
                SuggestedBasis::Derived => "derived",
            }
            .to_owned()
        }),
        outcome: v.and_then(|v| v.outcome.clone()),
        problem: missing(&r.verdict, "The round is not described."),
    }
}
