//! OANP offers as the console reads them from the stored log: the offer a
//! gate request awaits and the one it answers, their exact amounts (integer
//! minor units) and the change between them, inclusions added and removed,
//! the arbiter's latest verdict and the rounds left, counter terms checked,
//! and what the log shows became of an offer. The envelope rules are
//! `crates/oanp`'s.

use oanp::direction::{price_effect, Effect};
use oanp::money::major_units;
use oanp::receipt::{Inclusion, Terms};
use oanp::{Envelope, MessageType};
use rust_decimal::Decimal;
use serde_json::Value;

use crate::protocol::{
    compared_entries, gap_to, Amount, CounterAt, Located, LogAnswer, PendingProposal, Proposal,
    StoredRef,
};
use crate::store::StoredEvent;
use crate::views::{
    Change, CounterCheck, FieldError, OanpEnvelopeRef, OanpInclusion, OanpMoney, OanpOffer,
    OanpTerms, OanpTermsDiff, OanpVerdict, PreviousRef, ProposalDiff,
};

/// A stored envelope, read.
pub(crate) fn envelope(e: &StoredEvent) -> Option<(Value, Envelope)> {
    let value: Value = serde_json::from_str(&e.body).ok()?;
    let typed = Envelope::read(&value).ok()?;
    Some((value, typed))
}

/// `offer.propose` or `offer.counter`.
pub(crate) fn is_offer(kind: &str) -> bool {
    kind == MessageType::OfferPropose.as_str() || kind == MessageType::OfferCounter.as_str()
}

/// The exact amount of terms, in major units; `None` for a currency whose
/// exponent is unknown.
pub(crate) fn amount_of(terms: &Terms) -> Option<Amount> {
    let value = major_units(terms.price.amount_minor, &terms.price.currency)?;
    Some(Amount {
        value: value.to_string(),
        currency: terms.price.currency.clone(),
    })
}

/// The offer a stored envelope carries, when it carries one.
pub(crate) fn offer_of(e: &StoredEvent) -> Option<(Envelope, Option<u32>, Terms)> {
    if !is_offer(&e.kind) {
        return None;
    }
    let (_, typed) = envelope(e)?;
    let offer = typed.offer().ok()?;
    Some((typed, offer.round, offer.terms))
}

/// The amount of the offer a stored envelope carries.
pub(crate) fn amount_in(e: &StoredEvent) -> Option<Amount> {
    offer_of(e).and_then(|(_, _, terms)| amount_of(&terms))
}

/// `"419.00 USD"` as an amount.
pub(crate) fn parse_amount(text: &str) -> Option<Amount> {
    let (value, currency) = text.trim().split_once(' ')?;
    value.parse::<Decimal>().ok()?;
    (currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())).then(|| Amount {
        value: value.to_owned(),
        currency: currency.to_owned(),
    })
}

/// New minus old, exact, better or worse by `crates/oanp`'s direction rule.
pub(crate) fn change(old: &Amount, new: &Amount) -> Option<Change> {
    crate::protocol::amount_change(old, new, |delta| {
        price_effect(delta).map(|e| match e {
            Effect::Better => crate::views::Effect::Better,
            Effect::Worse => crate::views::Effect::Worse,
        })
    })
}

/// The awaited offer (a stored envelope) and the one it answers.
pub(crate) fn locate(events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
    let stored = events.iter().find(|e| e.event_hash == pending.event_hash)?;
    let (_, _, terms) = offer_of(stored)?;
    let value = serde_json::from_str(&stored.body).ok()?;
    let amount = pending
        .amount
        .as_deref()
        .and_then(parse_amount)
        .or_else(|| amount_of(&terms));
    // The counterparty's offer the org's agent asks about: compared with
    // their own previous offer, and our agent's latest one beside it.
    let (previous, ours) =
        compared_entries(events, stored.seq, &stored.actor, is_offer).for_counterparty();
    let previous_amount = previous.and_then(amount_in);
    let change = match (&previous_amount, &amount) {
        (Some(old), Some(new)) => change(old, new),
        _ => None,
    };
    let gap = ours.and_then(|e| {
        let ours = Proposal {
            seq: e.seq,
            actor: e.actor.clone(),
            value: Value::Null,
            amount: amount_in(e),
        };
        gap_to(&ours, amount.as_ref(), self::change)
    });
    Some(Located {
        proposal: Proposal {
            seq: stored.seq,
            actor: stored.actor.clone(),
            value,
            amount,
        },
        previous: previous.map(|e| Proposal {
            seq: e.seq,
            actor: e.actor.clone(),
            value: serde_json::from_str(&e.body).unwrap_or(Value::Null),
            amount: previous_amount,
        }),
        change,
        gap,
    })
}

/// An offer that left the pending set, as its pending record.
pub(crate) fn former(events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    offer_of(stored)?;
    Some(PendingProposal {
        seq: stored.seq,
        event_hash: stored.event_hash.clone(),
        kind: stored.kind.clone(),
        actor: stored.actor.clone(),
        expires_at: stored.at.clone(),
        approvals: Vec::new(),
        approvals_required: 1,
        draft: None,
        held_reason: None,
        request_id: None,
        action: None,
        amount: None,
        threshold: None,
        anex: None,
        chain: None,
    })
}

// ---- the contract's view shape ----

fn money(amount_minor: oanp::money::MinorUnits, currency: &str) -> OanpMoney {
    OanpMoney {
        amount_minor: amount_minor.get().to_string(),
        currency: currency.to_owned(),
        amount: major_units(amount_minor, currency).map(|value| Amount {
            value: value.to_string(),
            currency: currency.to_owned(),
        }),
    }
}

fn inclusion(i: &Inclusion) -> OanpInclusion {
    OanpInclusion {
        kind: i.kind.clone(),
        value: i.value.clone(),
    }
}

/// Terms in the contract's shape.
pub(crate) fn terms_view(t: &Terms) -> OanpTerms {
    OanpTerms {
        price: money(t.price.amount_minor, &t.price.currency),
        inclusions: t.inclusions.iter().map(inclusion).collect(),
    }
}

/// The offer a stored envelope carries, in the contract's shape.
pub(crate) fn offer_view(e: &StoredEvent) -> Option<OanpOffer> {
    let (typed, round, terms) = offer_of(e)?;
    Some(OanpOffer {
        message_type: typed.kind.as_str().to_owned(),
        sender: typed.sender.role.as_str().to_owned(),
        round,
        terms: terms_view(&terms),
    })
}

/// Inclusions in `new` that are not in `old` (by kind and value).
pub(crate) fn added(old: &OanpTerms, new: &OanpTerms) -> Vec<OanpInclusion> {
    new.inclusions
        .iter()
        .filter(|i| !old.inclusions.contains(i))
        .cloned()
        .collect()
}

/// Counter terms beside the terms they answer: the price change and the
/// inclusions added and dropped.
pub(crate) fn terms_diff(answered: &Terms, counter: &Terms) -> OanpTermsDiff {
    let (old, new) = (terms_view(answered), terms_view(counter));
    let price_change = match (amount_of(answered), amount_of(counter)) {
        (Some(o), Some(n)) => change(&o, &n),
        _ => None,
    };
    OanpTermsDiff {
        price_change,
        inclusions_added: added(&old, &new),
        inclusions_removed: added(&new, &old),
        old,
        new,
    }
}

/// The envelope reference of a stored event.
pub(crate) fn envelope_ref(e: &StoredEvent) -> OanpEnvelopeRef {
    let message_id = envelope(e)
        .map(|(_, typed)| typed.message_id)
        .unwrap_or_default();
    OanpEnvelopeRef {
        message_id,
        hash: e.event_hash.clone(),
        seq: e.seq,
    }
}

/// The arbiter's latest evaluation (or refusal) in the log.
pub(crate) fn latest_verdict(events: &[StoredEvent]) -> Option<OanpVerdict> {
    events.iter().rev().find_map(|e| {
        let (_, typed) = envelope(e)?;
        if !matches!(
            typed.kind,
            MessageType::ArbitrationEvaluate | MessageType::ArbitrationReject
        ) {
            return None;
        }
        let p = typed.evaluation().ok()?;
        Some(OanpVerdict {
            message_type: typed.kind.as_str().to_owned(),
            verdict: p.verdict,
            fairness_score: p.fairness_score.map(|f| f.as_str().to_owned()),
            suggested_price: p
                .suggested_adjustment
                .map(|m| money(m.amount_minor, &m.currency)),
            reason: p.reason,
            seq: e.seq,
        })
    })
}

/// The session's round limit, from the arbiter's `session.accept`.
pub(crate) fn max_rounds(events: &[StoredEvent]) -> Option<u32> {
    events.iter().find_map(|e| {
        let (_, typed) = envelope(e)?;
        if typed.kind != MessageType::SessionAccept {
            return None;
        }
        typed.session_rules().ok()?.session_rules?.max_rounds
    })
}

/// Where the previous offer is.
pub(crate) fn previous_ref(located: &Located) -> Option<PreviousRef> {
    located.previous.as_ref().map(|p| PreviousRef {
        seq: p.seq,
        actor: p.actor.clone(),
    })
}

/// Checks counter terms by `crates/oanp`'s counter rules, every problem at
/// the path of its field.
pub(crate) fn check_terms(terms: &Value) -> Result<Terms, Vec<FieldError>> {
    oanp::counter::check_counter_terms(terms).map_err(|e| {
        e.0.into_iter()
            .map(|p| FieldError {
                message: p.problem.to_string(),
                path: p.path,
            })
            .collect()
    })
}

/// A counter checked against the offer `event_hash` (the diff whenever it
/// reads as terms); `None` when that is not a stored offer.
pub(crate) fn check_counter(
    events: &[StoredEvent],
    event_hash: &str,
    counter: &Value,
    _at: &CounterAt<'_>,
) -> Option<CounterCheck> {
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    let (_, _, answered) = offer_of(stored)?;
    let diff = serde_json::from_value::<Terms>(counter.clone())
        .ok()
        .map(|terms| ProposalDiff::OanpOffer(Box::new(terms_diff(&answered, &terms))));
    Some(match check_terms(counter) {
        Ok(_) => CounterCheck {
            ok: true,
            errors: Vec::new(),
            diff,
        },
        Err(errors) => CounterCheck {
            ok: false,
            errors,
            diff,
        },
    })
}

/// What the log shows became of the offer at `seq` by `actor`: the other
/// side's `offer.accept` (accepted), its own offer (answered with a counter),
/// or a newer offer by the same side (replaced).
pub(crate) fn answer_on_log(events: &[StoredEvent], seq: u64, actor: &str) -> Option<LogAnswer> {
    events.iter().filter(|e| e.seq > seq).find_map(|e| {
        let event = StoredRef::of(e);
        if e.kind == MessageType::OfferAccept.as_str() && e.actor != actor {
            Some(LogAnswer::Accepted {
                event,
                approved_by: Vec::new(),
            })
        } else if is_offer(&e.kind) && e.actor != actor {
            Some(LogAnswer::Answered {
                event,
                action: "counter",
            })
        } else if is_offer(&e.kind) {
            Some(LogAnswer::Replaced { event })
        } else {
            None
        }
    })
}
