//! ANP offers as the console reads them from the stored log: the pending
//! offer (or a buyer-agent draft) and the one it answers, exact totals and
//! their change, the structured diff, both mandate envelopes, counter-offer
//! checks, what the log shows became of an offer. All rules are the `anp`
//! crate's (`anp::payload`, `anp::money`, `anp::diff`).

use anp::diff::{diff_offers, price_effect, Effect};
use anp::money::{change, offer_total, Money};
use anp::payload::{AcceptPayload, Offer};
use anp::Event;
use serde_json::Value;
use time::OffsetDateTime;

use crate::protocol::{
    answered_entry, compared_entries, gap_to, Amount, CounterAt, Located, LogAnswer,
    PendingProposal, Proposal, StoredRef,
};
use crate::store::StoredEvent;
use crate::views::{
    AnpOfferDiff, AnpOfferView, Change, CounterCheck, FieldError, PreviousRef, ProposalDetail,
    ProposalDiff,
};

/// An offer read from a stored payload.
pub(crate) struct ReadOffer {
    pub offer: Offer,
    pub total: Money,
}

impl ReadOffer {
    /// Its total, with its currency.
    pub(crate) fn amount(&self) -> Amount {
        Amount {
            value: self.total.to_string(),
            currency: self.offer.currency.clone(),
        }
    }
}

/// Reads an offer payload; `None` when it is not a valid offer.
pub(crate) fn read_offer(payload: &Value) -> Option<ReadOffer> {
    let offer = Offer::parse(payload).ok()?;
    let total = offer_total(&offer).amount;
    Some(ReadOffer { offer, total })
}

pub(crate) fn parse_event(e: &StoredEvent) -> Option<Event> {
    serde_json::from_str(&e.body).ok()
}

fn is_offer_kind(kind: &str) -> bool {
    kind == "offer" || kind == "counter_offer"
}

/// The offer an offer at `seq` by `actor` answers: the latest earlier offer
/// of the other side, or else the same side's previous offer.
fn previous_offer(events: &[StoredEvent], seq: u64, actor: &str) -> Option<(Proposal, ReadOffer)> {
    read_entry(answered_entry(events, seq, actor, is_offer_kind)?)
}

/// The buyer's side in an ANP log: the organization's host and its agent.
const BUYER: &str = "buyer";

/// What an offer at `seq` by `actor` is compared with, and our last
/// counter beside it. A vendor's offer is compared with the vendor's own
/// previous offer (what it moved since), and separately with the buyer's
/// latest counter; the buyer agent's draft with the vendor offer it answers.
fn compared(
    events: &[StoredEvent],
    seq: u64,
    actor: &str,
) -> (Option<(Proposal, ReadOffer)>, Option<Proposal>) {
    if actor == BUYER {
        return (previous_offer(events, seq, actor), None);
    }
    let (previous, ours) = compared_entries(events, seq, actor, is_offer_kind).for_counterparty();
    (
        previous.and_then(read_entry),
        ours.and_then(read_entry).map(|(p, _)| p),
    )
}

fn read_entry(pick: &StoredEvent) -> Option<(Proposal, ReadOffer)> {
    let event = parse_event(pick)?;
    let read = read_offer(&event.payload)?;
    let proposal = Proposal {
        seq: pick.seq,
        actor: pick.actor.clone(),
        amount: Some(read.amount()),
        value: event.payload,
    };
    Some((proposal, read))
}

/// The pending offer (a stored event, or a draft carrying its payload) and
/// the one it answers.
pub(crate) fn locate(events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
    let (value, seq, actor) = match &pending.draft {
        // A draft has no seq yet (the host says 0): it would take the next
        // one, and it answers the latest offer before it.
        Some(draft) => (
            draft.clone(),
            events.last().map_or(0, |e| e.seq + 1),
            pending.actor.clone(),
        ),
        None => {
            let stored = events.iter().find(|e| e.event_hash == pending.event_hash)?;
            let event = parse_event(stored)?;
            (event.payload, stored.seq, stored.actor.clone())
        }
    };
    let read = read_offer(&value)?;
    let (previous, ours) = compared(events, seq, &actor);
    let change = previous
        .as_ref()
        .filter(|(_, old)| old.offer.currency == read.offer.currency)
        .map(|(_, old)| contract_change(old.total, read.total));
    let amount = read.amount();
    let gap = ours.as_ref().and_then(|ours| {
        gap_to(ours, Some(&amount), |a, b| {
            if a.currency != b.currency {
                return None;
            }
            Some(contract_change(
                a.value.parse().ok()?,
                b.value.parse().ok()?,
            ))
        })
    });
    Some(Located {
        proposal: Proposal {
            seq,
            actor,
            amount: Some(amount),
            value,
        },
        previous: previous.map(|(p, _)| p),
        change,
        gap,
    })
}

/// An offer that left the pending set, as its pending record, read from
/// the stored log.
pub(crate) fn former(events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    let event = parse_event(stored)?;
    if !event.kind.is_offer() {
        return None;
    }
    let offer = read_offer(&event.payload)?;
    Some(PendingProposal {
        seq: event.seq,
        event_hash: event.event_hash.clone(),
        kind: event.kind.as_str().to_owned(),
        actor: event.actor.as_str().to_owned(),
        expires_at: offer.offer.expires_at.clone(),
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

/// The contract's `Change` from one total to another, with what it means
/// for the buyer by `anp::diff::price_effect`.
fn contract_change(old: Money, new: Money) -> Change {
    let c = change(old, new);
    Change {
        absolute: c.absolute.to_string(),
        percent: c.percent,
        effect: price_effect(&c.absolute).map(effect),
    }
}

/// `anp::diff::Effect` in the contract's words.
fn effect(e: Effect) -> crate::views::Effect {
    match e {
        Effect::Better => crate::views::Effect::Better,
        Effect::Worse => crate::views::Effect::Worse,
    }
}

/// The structured diff in the contract's shape. `AnpOfferDiff` mirrors
/// `anp::diff` member for member and refuses unknown ones, so a diff that no
/// longer converts is a bug to see, not a member to lose (tested below).
pub(crate) fn diff(old: &Offer, new: &Offer) -> Option<AnpOfferDiff> {
    let value = serde_json::to_value(diff_offers(old, new)).ok()?;
    match serde_json::from_value(value) {
        Ok(diff) => Some(diff),
        Err(e) => {
            tracing::error!("anp::diff no longer matches the contract's AnpOfferDiff: {e}");
            None
        }
    }
}

/// The offer view: both offers, their diff, both envelopes.
pub(crate) fn detail(events: &[StoredEvent], located: &Located) -> ProposalDetail {
    let envelope = |kind: &str| -> Value {
        events
            .iter()
            .find(|e| e.kind == kind)
            .and_then(parse_event)
            .map(|e| match kind {
                "session_open" => e.payload.get("envelope").cloned().unwrap_or(Value::Null),
                _ => e.payload,
            })
            .unwrap_or(Value::Null)
    };
    let diff = located.previous.as_ref().and_then(|p| {
        let old = read_offer(&p.value)?;
        let new = read_offer(&located.proposal.value)?;
        diff(&old.offer, &new.offer)
    });
    ProposalDetail::AnpOffer(Box::new(AnpOfferView {
        offer: located.proposal.value.clone(),
        previous: located.previous.as_ref().map(|p| p.value.clone()),
        previous_ref: located.previous.as_ref().map(|p| PreviousRef {
            seq: p.seq,
            actor: p.actor.clone(),
        }),
        diff,
        vendor_envelope: envelope("session_open"),
        buyer_envelope: envelope("envelope"),
    }))
}

/// Validates an edited counter-offer by the protocol's own counter rules
/// (`anp::payload::Offer::parse_counter`: every payload rule, and an expiry
/// later than `now`), every violation at its path.
pub(crate) fn validate_offer(value: &Value, now: OffsetDateTime) -> Result<Offer, Vec<FieldError>> {
    Offer::parse_counter(value, now).map_err(|e| {
        e.violations
            .into_iter()
            .map(|v| FieldError {
                path: v.path,
                message: v.rule,
            })
            .collect()
    })
}

/// Checks a counter-offer as of `at` and diffs it against the offer it
/// answers (whenever it reads as an offer); `None` when `event_hash` is no
/// stored offer.
pub(crate) fn check_counter(
    events: &[StoredEvent],
    event_hash: &str,
    counter: &Value,
    at: &CounterAt<'_>,
) -> Option<CounterCheck> {
    let answered = events
        .iter()
        .find(|e| e.event_hash == event_hash)
        .and_then(parse_event)
        .and_then(|e| read_offer(&e.payload))?;
    let diff = Offer::parse(counter)
        .ok()
        .and_then(|parsed| diff(&answered.offer, &parsed))
        .map(|d| ProposalDiff::AnpOffer(Box::new(d)));
    Some(match validate_offer(counter, at.now) {
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

/// A plain-text one-line summary of an event for the timeline, numbers as
/// a person writes them ("Offer: 570,000 USD, 36 months").
pub(crate) fn summarize(kind: &str, payload: &Value, human: &humanize::Humanizer) -> String {
    match kind {
        "offer" | "counter_offer" => match read_offer(payload) {
            Some(o) => format!(
                "{}: {}, {} months",
                if kind == "offer" {
                    "Offer"
                } else {
                    "Counter-offer"
                },
                human.money(&o.total.to_string(), &o.offer.currency),
                human.count(u64::from(o.offer.term_months))
            ),
            None => "Offer (unreadable)".to_owned(),
        },
        "session_open" => "Session opened".to_owned(),
        "envelope" => "Mandate envelope".to_owned(),
        "message" => {
            let body = payload.get("body").and_then(Value::as_str).unwrap_or("");
            let short: String = body.chars().take(120).collect();
            format!("Message: {short}")
        }
        "decline" => match payload.get("reason").and_then(Value::as_str) {
            Some(r) => format!("Declined: {}", r.chars().take(120).collect::<String>()),
            None => "Declined".to_owned(),
        },
        "accept" => "Accepted".to_owned(),
        "session_close" => "Session closed".to_owned(),
        other => other.to_owned(),
    }
}

/// Reads the stored copy after the proposal at `seq` (hash `hash`, by
/// `actor`) for what answered it: the first answer to it, or a newer
/// proposal of the same side that replaced it.
pub(crate) fn answer_on_log(
    events: &[StoredEvent],
    seq: u64,
    hash: &str,
    actor: &str,
) -> Option<LogAnswer> {
    for e in events.iter().filter(|e| e.seq > seq) {
        match e.kind.as_str() {
            "accept" => {
                let Some(event) = parse_event(e) else {
                    continue;
                };
                let Ok(accept) = AcceptPayload::parse(&event.payload) else {
                    continue;
                };
                if accept.in_response_to == hash {
                    let approved_by = accept
                        .all_approvals()
                        .map(|a| a.approved_by.clone())
                        .collect();
                    return Some(LogAnswer::Accepted {
                        event: StoredRef::of(e),
                        approved_by,
                    });
                }
            }
            "decline" if e.actor != actor => {
                return Some(LogAnswer::Answered {
                    event: StoredRef::of(e),
                    action: "decline",
                })
            }
            "offer" | "counter_offer" if e.actor != actor => {
                return Some(LogAnswer::Answered {
                    event: StoredRef::of(e),
                    action: "counter",
                })
            }
            "offer" | "counter_offer" => {
                return Some(LogAnswer::Replaced {
                    event: StoredRef::of(e),
                })
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offer(lines: Value, notes: &str, conditions: Value, total: Option<u64>) -> Offer {
        let mut payload = json!({
            "currency": "USD", "term_months": 12, "expires_at": "2026-12-04T06:53:00Z",
            "line_items": lines, "conditions": conditions, "notes": notes,
        });
        if let Some(total) = total {
            payload["total_annual"] = json!(total);
        }
        Offer::parse(&payload).unwrap()
    }

    #[test]
    fn every_member_of_an_anp_diff_reaches_the_contract_shape() {
        let line = |sku: &str, price: u64| {
            json!({"sku": sku, "description": "Seats", "quantity": 10, "unit": "seat/year",
                   "unit_price": price, "currency": "USD", "term_months": 12})
        };
        let old = offer(
            json!([line("A", 100), line("B", 5)]),
            "old",
            json!(["Net 30", "Kept"]),
            None,
        );
        let new = offer(
            json!([line("C", 7), line("A", 90)]),
            "new",
            json!(["Net 60", "Kept"]),
            Some(999),
        );
        let converted = diff(&old, &new).expect("the anp diff converts");
        let raw = serde_json::to_value(diff_offers(&old, &new)).unwrap();
        // Nothing lost on the way: the contract shape serializes to exactly
        // what anp::diff serialized.
        assert_eq!(serde_json::to_value(&converted).unwrap(), raw);
        assert!(converted.notes.is_some());
        assert!(converted.total.new.mismatch);
        let statuses: Vec<_> = converted.line_items.iter().map(|l| l.status).collect();
        assert!(statuses.contains(&crate::views::LineStatus::Added));
        assert!(statuses.contains(&crate::views::LineStatus::Removed));
        assert!(statuses.contains(&crate::views::LineStatus::Changed));
    }
}
