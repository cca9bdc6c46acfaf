//! Concordia offers as the console reads them from the stored transcript:
//! the offer a gate request awaits and the one it answers, their amounts and
//! the change between them, the structured diff, the contract's view shape,
//! counter terms checked, and what the transcript shows became of an offer.
//! The offer rules are `crates/concordia`'s (`offer`, `diff`).

use std::collections::BTreeMap;

use concordia::diff::{
    diff_offers, diff_terms, AmountChange as CAmountChange, BundleChange as CBundleChange,
    ConditionChange, Effect as CEffect, TermChange as CTermChange, TermDiff,
};
use concordia::message::{Message, MessageType};
use concordia::offer::{Bundle as CBundle, Condition, Money, Offer, OfferKind, TermValue, Terms};
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::protocol::{
    compared_entries, gap_to, Amount, CounterAt, Located, LogAnswer, PendingProposal, Proposal,
    StoredRef,
};
use crate::store::StoredEvent;
use crate::views::{
    AmountChange, Attribute, Bundle, BundleChange, Change, ChangeStatus, Clause, ClauseChange,
    ConcordiaOffer, ConcordiaOfferDiff, CounterCheck, FieldError, OfferShape, PreviousRef,
    ProposalDiff, Scalar, Term, TermChange,
};

/// A stored message, read.
pub(crate) fn message(e: &StoredEvent) -> Option<(Value, Message)> {
    let value: Value = serde_json::from_str(&e.body).ok()?;
    let typed = Message::from_value(&value).ok()?;
    Some((value, typed))
}

fn is_offer(kind: &str) -> bool {
    kind == MessageType::Offer.as_str() || kind == MessageType::Counter.as_str()
}

fn amount_of(money: &Money) -> Amount {
    Amount {
        value: money.value.to_string(),
        currency: money.currency.clone(),
    }
}

/// `"150000.00 USD"` as an amount.
pub(crate) fn parse_amount(text: &str) -> Option<Amount> {
    let (value, currency) = text.trim().split_once(' ')?;
    value.parse::<Decimal>().ok()?;
    (currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())).then(|| Amount {
        value: value.to_owned(),
        currency: currency.to_owned(),
    })
}

/// The amount an offer is for: its `price` term when that is money (how the
/// host reads it, docs/gate-api.md); `None` for a conditional or bundle
/// offer, which has no single amount.
pub(crate) fn price(offer: &Offer) -> Option<Amount> {
    match &offer.kind {
        OfferKind::Basic { terms } | OfferKind::Partial { terms, .. } => terms
            .get("price")
            .and_then(|t| t.money.as_ref())
            .map(amount_of),
        _ => None,
    }
}

/// The amount of the offer a message carries, if it carries one.
pub(crate) fn offer_amount(message: &Value) -> Option<Amount> {
    let typed = Message::from_value(message).ok()?;
    price(typed.offer()?)
}

/// The change from one amount to another, by `concordia::diff`'s rule
/// (exact; percent half-even to two places; none across currencies).
fn change(old: &Amount, new: &Amount) -> Option<Change> {
    let term = |a: &Amount| {
        let mut t = Terms::new();
        t.insert(
            "amount".to_owned(),
            TermValue::parse(&serde_json::json!({"value": a.value, "currency": a.currency})),
        );
        t
    };
    let diff = diff_terms(&term(old), &term(new));
    let (moved, direction) = match &diff.first()?.change {
        CTermChange::Changed { amount, effect, .. } => (amount.as_deref()?.clone(), *effect),
        _ => return None,
    };
    Some(Change {
        absolute: moved.delta?.normalize().to_string(),
        percent: moved.percent.map(|p| format!("{p:.2}")),
        effect: direction.map(contract_effect),
    })
}

/// `concordia::diff::Effect` in the contract's words.
fn contract_effect(e: CEffect) -> crate::views::Effect {
    match e {
        CEffect::Better => crate::views::Effect::Better,
        CEffect::Worse => crate::views::Effect::Worse,
    }
}

/// An offer read off the record, with the event that carries it.
type Entry = (StoredEvent, Offer);

fn read_entry(pick: &StoredEvent) -> Option<Entry> {
    let (_, typed) = message(pick)?;
    Some((pick.clone(), typed.offer()?.clone()))
}

/// What the counterparty's offer at `seq` by `actor` (the one the org's
/// agent asks about) is compared with: their own previous offer, else the
/// one it answers; and our agent's latest offer beside it.
fn compared(events: &[StoredEvent], seq: u64, actor: &str) -> (Option<Entry>, Option<Entry>) {
    let (previous, ours) = compared_entries(events, seq, actor, is_offer).for_counterparty();
    (previous.and_then(read_entry), ours.and_then(read_entry))
}

fn proposal_of(e: StoredEvent, amount: Option<Amount>) -> Proposal {
    let value = serde_json::from_str(&e.body).unwrap_or(Value::Null);
    Proposal {
        seq: e.seq,
        actor: e.actor,
        value,
        amount,
    }
}

/// The awaited offer (a stored message) and the one it answers.
pub(crate) fn locate(events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
    let stored = events.iter().find(|e| e.event_hash == pending.event_hash)?;
    let (value, typed) = message(stored)?;
    let offer = typed.offer()?;
    let amount = pending
        .amount
        .as_deref()
        .and_then(parse_amount)
        .or_else(|| price(offer));
    let (previous, ours) = compared(events, stored.seq, &stored.actor);
    let previous_amount = previous.as_ref().and_then(|(_, o)| price(o));
    let change = match (&previous_amount, &amount) {
        (Some(old), Some(new)) => change(old, new),
        _ => None,
    };
    let gap = ours.and_then(|(e, o)| {
        let ours = proposal_of(e, price(&o));
        gap_to(&ours, amount.as_ref(), self::change)
    });
    Some(Located {
        proposal: Proposal {
            seq: stored.seq,
            actor: stored.actor.clone(),
            value,
            amount,
        },
        previous: previous.map(|(e, _)| proposal_of(e, previous_amount)),
        change,
        gap,
    })
}

/// An offer that left the pending set, as its pending record.
pub(crate) fn former(events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    let (_, typed) = message(stored)?;
    let offer = typed.offer()?;
    Some(PendingProposal {
        seq: stored.seq,
        event_hash: stored.event_hash.clone(),
        kind: stored.kind.clone(),
        actor: stored.actor.clone(),
        expires_at: offer
            .valid_until
            .clone()
            .unwrap_or_else(|| stored.at.clone()),
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

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => jcs::to_string(other),
    }
}

fn term(id: &str, t: &TermValue) -> Term {
    Term {
        id: id.to_owned(),
        value: match &t.money {
            Some(m) => m.value.to_string(),
            None => text(&t.value),
        },
        amount: t.money.as_ref().map(amount_of),
        attributes: t
            .extra
            .iter()
            .filter(|(name, _)| !(t.money.is_some() && name.as_str() == "currency"))
            .map(|(name, value)| Attribute {
                name: name.clone(),
                value: text(value),
            })
            .collect(),
    }
}

fn terms(map: &Terms) -> Vec<Term> {
    map.iter().map(|(id, t)| term(id, t)).collect()
}

fn clause(c: &Condition) -> Clause {
    Clause {
        when: c
            .when
            .iter()
            .map(|(name, value)| Attribute {
                name: name.clone(),
                value: text(value.get("value").unwrap_or(value)),
            })
            .collect(),
        then: terms(&c.then),
    }
}

fn bundle(b: &CBundle) -> Bundle {
    Bundle {
        bundle_id: b.bundle_id.clone(),
        label: b.label.clone(),
        terms: terms(&b.terms),
    }
}

/// An offer with nothing in it.
pub(crate) fn empty_view() -> ConcordiaOffer {
    ConcordiaOffer {
        shape: OfferShape::Basic,
        offer_id: None,
        valid_until: None,
        complete: None,
        terms: Vec::new(),
        open_terms: Vec::new(),
        conditions: Vec::new(),
        bundles: Vec::new(),
        select: None,
    }
}

/// An offer laid out plainly (the contract's `ConcordiaOffer`).
pub(crate) fn offer_view(offer: &Offer) -> ConcordiaOffer {
    let mut view = ConcordiaOffer {
        shape: OfferShape::Basic,
        offer_id: offer.offer_id.clone(),
        valid_until: offer.valid_until.clone(),
        complete: offer.complete,
        terms: Vec::new(),
        open_terms: Vec::new(),
        conditions: Vec::new(),
        bundles: Vec::new(),
        select: None,
    };
    match &offer.kind {
        OfferKind::Basic { terms: t } => view.terms = terms(t),
        OfferKind::Partial {
            terms: t,
            open_terms,
        } => {
            view.shape = OfferShape::Partial;
            view.terms = terms(t);
            view.open_terms = open_terms.clone();
        }
        OfferKind::Conditional { conditions } => {
            view.shape = OfferShape::Conditional;
            view.conditions = conditions.iter().map(clause).collect();
        }
        OfferKind::Bundle { bundles, select } => {
            view.shape = OfferShape::Bundle;
            view.bundles = bundles.iter().map(bundle).collect();
            view.select = select.clone();
        }
    }
    view
}

fn amount_change(a: &CAmountChange) -> AmountChange {
    AmountChange {
        old: amount_of(&a.old),
        new: amount_of(&a.new),
        absolute: a.delta.map(|d| d.normalize().to_string()),
        percent: a.percent.map(|p| format!("{p:.2}")),
    }
}

fn term_change(d: &TermDiff) -> TermChange {
    match &d.change {
        CTermChange::Added(n) => TermChange {
            term: d.term.clone(),
            status: ChangeStatus::Added,
            old: None,
            new: Some(term(&d.term, n)),
            amount: None,
            effect: None,
        },
        CTermChange::Removed(o) => TermChange {
            term: d.term.clone(),
            status: ChangeStatus::Removed,
            old: Some(term(&d.term, o)),
            new: None,
            amount: None,
            effect: None,
        },
        CTermChange::Changed {
            old,
            new,
            amount,
            effect,
        } => TermChange {
            term: d.term.clone(),
            status: ChangeStatus::Changed,
            old: Some(term(&d.term, old)),
            new: Some(term(&d.term, new)),
            amount: amount.as_deref().map(amount_change),
            effect: effect.map(contract_effect),
        },
    }
}

fn scalar(pair: &(Option<String>, Option<String>)) -> Scalar {
    Scalar {
        old: pair.0.clone(),
        new: pair.1.clone(),
    }
}

/// The structured diff in the contract's shape.
pub(crate) fn diff_view(old: &Offer, new: &Offer) -> ConcordiaOfferDiff {
    let d = diff_offers(old, new);
    ConcordiaOfferDiff {
        shape: d.kind.map(|(o, n)| Scalar {
            old: Some(o.to_owned()),
            new: Some(n.to_owned()),
        }),
        terms: d.terms.iter().map(term_change).collect(),
        newly_open: d.open_terms.0.clone(),
        settled: d.open_terms.1.clone(),
        conditions: d
            .conditions
            .iter()
            .map(|c| match c {
                ConditionChange::Added(i, n) => ClauseChange {
                    index: *i as u32,
                    status: ChangeStatus::Added,
                    when_changed: false,
                    then: Vec::new(),
                    old: None,
                    new: Some(clause(n)),
                },
                ConditionChange::Removed(i, o) => ClauseChange {
                    index: *i as u32,
                    status: ChangeStatus::Removed,
                    when_changed: false,
                    then: Vec::new(),
                    old: Some(clause(o)),
                    new: None,
                },
                ConditionChange::Changed {
                    index,
                    when_changed,
                    then,
                } => {
                    let at = |o: &Offer| match &o.kind {
                        OfferKind::Conditional { conditions } => conditions.get(*index).map(clause),
                        _ => None,
                    };
                    ClauseChange {
                        index: *index as u32,
                        status: ChangeStatus::Changed,
                        when_changed: *when_changed,
                        then: then.iter().map(term_change).collect(),
                        old: at(old),
                        new: at(new),
                    }
                }
            })
            .collect(),
        bundles: d
            .bundles
            .iter()
            .map(|b| match b {
                CBundleChange::Added(n) => BundleChange {
                    bundle_id: n.bundle_id.clone(),
                    status: ChangeStatus::Added,
                    label: None,
                    terms: Vec::new(),
                    old: None,
                    new: Some(bundle(n)),
                },
                CBundleChange::Removed(o) => BundleChange {
                    bundle_id: o.bundle_id.clone(),
                    status: ChangeStatus::Removed,
                    label: None,
                    terms: Vec::new(),
                    old: Some(bundle(o)),
                    new: None,
                },
                CBundleChange::Changed {
                    bundle_id,
                    label,
                    terms,
                } => {
                    let find = |o: &Offer| match &o.kind {
                        OfferKind::Bundle { bundles, .. } => bundles
                            .iter()
                            .find(|b| &b.bundle_id == bundle_id)
                            .map(bundle),
                        _ => None,
                    };
                    BundleChange {
                        bundle_id: bundle_id.clone(),
                        status: ChangeStatus::Changed,
                        label: label.as_ref().map(scalar),
                        terms: terms.iter().map(term_change).collect(),
                        old: find(old),
                        new: find(new),
                    }
                }
            })
            .collect(),
        valid_until: d.valid_until.as_ref().map(scalar),
    }
}

/// Where the previous offer is.
pub(crate) fn previous_ref(located: &Located) -> Option<PreviousRef> {
    located.previous.as_ref().map(|p| PreviousRef {
        seq: p.seq,
        actor: p.actor.clone(),
    })
}

/// The offer of a located proposal's value (a whole message).
pub(crate) fn offer_in(value: &Value) -> Option<Offer> {
    Message::from_value(value).ok()?.offer().cloned()
}

// ---- counters ----

/// `crates/concordia`'s verdict on counter terms, each problem at the path of
/// its term (`terms/price/value`, `terms/price/currency`, or `terms` for the
/// object as a whole).
fn field_errors(errors: concordia::counter::CounterErrors) -> Vec<FieldError> {
    use concordia::counter::{CounterProblem, TermProblem};
    errors
        .0
        .into_iter()
        .map(|e| FieldError {
            path: match &e.problem {
                CounterProblem::Term(TermProblem::BadCurrency) => {
                    format!("terms/{}/currency", e.term)
                }
                CounterProblem::Term(_) => format!("terms/{}/value", e.term),
                _ => "terms".to_owned(),
            },
            message: e.problem.to_string(),
        })
        .collect()
}

/// Checks counter terms (the `terms` object of an offer body) against the
/// offer they answer, by `crates/concordia`'s counter rules with `now`'s
/// date as the day deadlines must be after.
pub(crate) fn check_terms(
    counter: &Value,
    answered: Option<&Offer>,
    now: time::OffsetDateTime,
) -> Result<Offer, Vec<FieldError>> {
    concordia::counter::check_counter_terms(
        counter,
        answered,
        now.to_offset(time::UtcOffset::UTC).date(),
    )
    .map_err(field_errors)
}

/// The counter read as an offer for its diff, whatever its values (a
/// counter sent earlier is still shown once its dates have passed).
fn counter_offer(counter: &Value) -> Option<Offer> {
    let mut body = Map::new();
    body.insert("terms".to_owned(), counter.clone());
    body.insert("complete".to_owned(), Value::Bool(true));
    counter.as_object().filter(|m| !m.is_empty())?;
    Offer::parse(&body).ok()
}

/// Until when a counter stands: the org's agent sends it standing no
/// longer than the receipt that authorizes it (docs/gate-api.md), which
/// expires at the answered offer's `valid_until` or the request's expiry,
/// whichever is earlier (`receipt_expiry`); `None` when the request's
/// expiry is not known.
pub(crate) fn counter_valid_until(
    answered: &Offer,
    request_expires_at: Option<&str>,
) -> Option<String> {
    use approval_receipt::datetime;
    let request = datetime::parse(request_expires_at?).ok()?;
    let offer = answered
        .valid_until
        .as_deref()
        .and_then(|t| datetime::parse(t).ok());
    Some(datetime::format_utc(
        approval_receipt::receipt::receipt_expiry(offer, request),
    ))
}

/// Checks a counter and diffs it against the offer it answers (the diff
/// whenever the counter reads as an offer, with the expiry it will carry);
/// `None` when `event_hash` is no stored offer.
pub(crate) fn check_counter(
    events: &[StoredEvent],
    event_hash: &str,
    counter: &Value,
    at: &CounterAt<'_>,
) -> Option<CounterCheck> {
    let answered = events
        .iter()
        .find(|e| e.event_hash == event_hash)
        .and_then(message)
        .and_then(|(_, m)| m.offer().cloned())?;
    let diff = counter_offer(counter).map(|mut parsed| {
        parsed.valid_until = counter_valid_until(&answered, at.request_expires_at);
        let mut view = diff_view(&answered, &parsed);
        view.valid_until = match &parsed.valid_until {
            // Shown even when unchanged: the person sees until when the counter stands.
            Some(until) => Some(Scalar {
                old: answered.valid_until.clone(),
                new: Some(until.clone()),
            }),
            // Not known here: no row rather than a made-up "—".
            None => None,
        };
        ProposalDiff::ConcordiaOffer(Box::new(view))
    });
    Some(match check_terms(counter, Some(&answered), at.now) {
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

// ---- what became of an offer ----

/// The first answer after the offer at `seq` by `actor`: an accept by the
/// other side, a reject, a counter (or new offer) from the other side, or a
/// newer offer of the same side that replaced it.
pub(crate) fn answer_on_log(events: &[StoredEvent], seq: u64, actor: &str) -> Option<LogAnswer> {
    for e in events.iter().filter(|e| e.seq > seq) {
        let other = e.actor != actor;
        let kind = MessageType::parse(&e.kind);
        match kind {
            Some(MessageType::Accept) if other => {
                return Some(LogAnswer::Accepted {
                    event: StoredRef::of(e),
                    approved_by: Vec::new(),
                })
            }
            Some(MessageType::Reject) if other => {
                return Some(LogAnswer::Answered {
                    event: StoredRef::of(e),
                    action: "decline",
                })
            }
            Some(MessageType::Offer | MessageType::Counter) if other => {
                return Some(LogAnswer::Answered {
                    event: StoredRef::of(e),
                    action: "counter",
                })
            }
            Some(MessageType::Offer | MessageType::Counter) => {
                return Some(LogAnswer::Replaced {
                    event: StoredRef::of(e),
                })
            }
            _ => {}
        }
    }
    None
}

/// The parties' pinned keys (party → base64url key).
pub(crate) fn pinned(keys: &str) -> BTreeMap<String, String> {
    serde_json::from_str(keys).unwrap_or_default()
}
