//! The inbox: each pending decision beside the offer it answers, with the
//! diff, exact totals, the vendor, both envelopes, the session's verification
//! state and the approvals already given; and the same view of a proposal
//! once it was decided. Built from the store only, so it works offline and
//! costs no request.

use std::collections::HashSet;

use anp::Event;
use countersign_host_api::approver::PendingDecision;
use serde_json::Value;
use time::OffsetDateTime;

use crate::error::EngineError;
use crate::protocol::anp as proto;
use crate::store::{
    DecisionRecord, PendingOverview, PendingRecord, SessionRecord, Store, StoredEvent,
};
use crate::views::*;

/// An offer event (or a draft) and what it answers.
pub(crate) struct Located {
    pub offer_value: Value,
    pub offer: proto::ReadOffer,
    pub seq: u64,
    pub actor: String,
    pub previous: Option<(u64, String, Value, proto::ReadOffer)>,
}

fn parse_event(e: &StoredEvent) -> Option<Event> {
    serde_json::from_str(&e.body).ok()
}

/// The offer it answers: the latest earlier offer of the other side, or else
/// the same side's previous offer.
fn previous_offer(
    events: &[StoredEvent],
    seq: u64,
    actor: &str,
) -> Option<(u64, String, Value, proto::ReadOffer)> {
    let earlier = || {
        events
            .iter()
            .rev()
            .filter(move |e| e.seq < seq && (e.kind == "offer" || e.kind == "counter_offer"))
    };
    let pick = earlier()
        .find(|e| e.actor != actor)
        .or_else(|| earlier().find(|e| e.actor == actor))?;
    let event = parse_event(pick)?;
    let read = proto::read_offer(&event.payload)?;
    Some((pick.seq, pick.actor.clone(), event.payload, read))
}

pub(crate) fn locate(events: &[StoredEvent], pending: &PendingDecision) -> Option<Located> {
    let (value, seq, actor) = match &pending.draft {
        // A draft has no seq yet (the host says 0): it would take the next
        // one, and it answers the latest offer before it.
        Some(draft) => (
            draft.clone(),
            events.last().map_or(0, |e| e.seq + 1),
            pending.actor.as_str().to_owned(),
        ),
        None => {
            let stored = events.iter().find(|e| e.event_hash == pending.event_hash)?;
            let event = parse_event(stored)?;
            (event.payload, stored.seq, stored.actor.clone())
        }
    };
    let offer = proto::read_offer(&value)?;
    let previous = previous_offer(events, seq, &actor);
    Some(Located {
        offer_value: value,
        offer,
        seq,
        actor,
        previous,
    })
}

/// The total and currency of a pending offer, for notifications.
pub(crate) fn pending_offer_total(
    store: &Store,
    host_id: &str,
    session_id: &str,
    pending: &PendingDecision,
) -> Option<(String, String)> {
    let events = store.events(host_id, session_id).ok()?;
    let located = locate(&events, pending)?;
    Some((
        located.offer.total.to_string(),
        located.offer.offer.currency.clone(),
    ))
}

fn item(
    record: &PendingRecord,
    pending: &PendingDecision,
    session: &SessionRecord,
    located: &Located,
    unread: bool,
) -> InboxItem {
    let previous_total = located.previous.as_ref().map(|p| p.3.total);
    InboxItem {
        host_id: record.host_id.clone(),
        session_id: record.session_id.clone(),
        seq: located.seq,
        event_hash: pending.event_hash.clone(),
        kind: pending.kind.as_str().to_owned(),
        actor: located.actor.clone(),
        is_draft: pending.draft.is_some(),
        vendor: session.vendor.clone(),
        currency: located.offer.offer.currency.clone(),
        total: located.offer.total.to_string(),
        previous_total: previous_total.map(|t| t.to_string()),
        change: previous_total.map(|old| proto::total_change(old, located.offer.total)),
        expires_at: pending.expires_at.clone(),
        verification: session.verification,
        approvals_given: pending.approvals.len() as u32,
        approvals_required: pending.approvals_required,
        unread,
        held_reason: pending.held_reason.clone(),
    }
}

/// A pending decision the inbox can list: its offer is stored (or it is a
/// draft, which carries its offer) and its session is known.
struct Listed {
    overview: PendingOverview,
    pending: PendingDecision,
}

/// The pending decisions of every host but `left_out`, soonest expiry first,
/// read without touching a single event.
fn listed(store: &Store, left_out: &HashSet<String>) -> Result<Vec<Listed>, EngineError> {
    let mut listed: Vec<Listed> = store
        .pending_overview()?
        .into_iter()
        .filter(|o| o.session_known && !left_out.contains(&o.record.host_id))
        .filter_map(|overview| {
            let pending = serde_json::from_str::<PendingDecision>(&overview.record.body).ok()?;
            (pending.draft.is_some() || overview.offer_stored)
                .then_some(Listed { overview, pending })
        })
        .collect();
    listed.sort_by_cached_key(|l| expiry_key(&l.pending.expires_at));
    Ok(listed)
}

/// The inbox as `query` asks for it: full rows for the page, counts for all.
/// Only the page's offers are read and diffed, so a thousand pending
/// decisions cost a page of work, not a thousand. A pending offer whose
/// stored event cannot be read as an offer is left out of the page and of
/// the counts; one further down is counted (it is checked when it is shown).
pub(crate) fn inbox_page(
    store: &Store,
    query: &InboxQuery,
    left_out: &HashSet<String>,
) -> Result<InboxPage, EngineError> {
    let listed = listed(store, left_out)?;
    let limit = query.limit.map_or(usize::MAX, |l| l as usize);
    let through = query.through.as_ref().and_then(|target| {
        listed.iter().position(|l| {
            let r = &l.overview.record;
            r.host_id == target.host_id
                && r.session_id == target.session_id
                && r.event_hash == target.event_hash
        })
    });
    let mut page = InboxPage {
        items: Vec::new(),
        total: 0,
        unread: 0,
    };
    for (index, l) in listed.iter().enumerate() {
        let unread = !l.overview.seen;
        let wanted = page.items.len() < limit || through.is_some_and(|t| index <= t);
        if wanted {
            let record = &l.overview.record;
            let Some(session) = store.session(&record.host_id, &record.session_id)? else {
                continue;
            };
            let events = store.events(&record.host_id, &record.session_id)?;
            let Some(located) = locate(&events, &l.pending) else {
                continue;
            };
            page.items
                .push(item(record, &l.pending, &session, &located, unread));
        }
        page.total += 1;
        page.unread += u32::from(unread);
    }
    Ok(page)
}

fn expiry_key(text: &str) -> (i128, String) {
    let at = anp::api::parse_timestamp(text)
        .map(|t| t.unix_timestamp_nanos())
        .unwrap_or(i128::MAX);
    (at, text.to_owned())
}

/// True when `expires_at` has passed (an unreadable time counts as expired).
pub(crate) fn is_expired(expires_at: &str) -> bool {
    anp::api::parse_timestamp(expires_at).is_none_or(|t| t <= OffsetDateTime::now_utc())
}

pub(crate) fn verification_view(session: &SessionRecord) -> VerificationView {
    VerificationView {
        state: session.verification,
        detail: session.dispute_detail.clone(),
        failing_seq: session.failing_seq,
        checks: session.failing_checks.clone(),
    }
}

/// The pending record of one offer, with its session.
pub(crate) fn find_pending(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
) -> Result<Option<(PendingRecord, PendingDecision, SessionRecord)>, EngineError> {
    let record = store
        .pending()?
        .into_iter()
        .find(|p| p.host_id == host_id && p.session_id == session_id && p.event_hash == event_hash);
    let Some(record) = record else {
        return Ok(None);
    };
    let pending: PendingDecision = serde_json::from_str(&record.body)
        .map_err(|e| EngineError::Protocol(format!("stored pending decision: {e}")))?;
    let session = store
        .session(host_id, session_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })?;
    Ok(Some((record, pending, session)))
}

/// The proposal `event_hash` as a pending record, once it has left the
/// pending set: from what a decision kept of it, else from the stored log.
fn former_proposal(
    events: &[StoredEvent],
    decision: Option<&DecisionRecord>,
    event_hash: &str,
) -> Option<PendingDecision> {
    if let Some(kept) = decision
        .and_then(|d| d.proposal.as_deref())
        .and_then(|text| serde_json::from_str::<PendingDecision>(text).ok())
    {
        return Some(kept);
    }
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    let event = parse_event(stored)?;
    if !event.kind.is_offer() {
        return None;
    }
    let offer = proto::read_offer(&event.payload)?;
    Some(PendingDecision {
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
    })
}

/// One proposal in full: while it waits for a decision, and after (what
/// was decided, by whom, when, and the event it appended).
pub(crate) fn offer_view(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
) -> Result<OfferView, EngineError> {
    let not_found = || EngineError::NotFound {
        what: "offer",
        id: event_hash.to_owned(),
    };
    let events = store.events(host_id, session_id)?;
    let latest = store.latest_decision(host_id, session_id, event_hash)?;
    let (record, pending, session, is_pending) =
        match find_pending(store, host_id, session_id, event_hash)? {
            Some((record, pending, session)) => (record, pending, session, true),
            None => {
                let session = store.session(host_id, session_id)?.ok_or_else(not_found)?;
                let pending =
                    former_proposal(&events, latest.as_ref(), event_hash).ok_or_else(not_found)?;
                let record = PendingRecord {
                    host_id: host_id.to_owned(),
                    session_id: session_id.to_owned(),
                    event_hash: event_hash.to_owned(),
                    body: String::new(),
                    expires_at: pending.expires_at.clone(),
                };
                (record, pending, session, false)
            }
        };
    let located = locate(&events, &pending).ok_or_else(not_found)?;
    let unread = is_pending && !store.is_seen(host_id, session_id, event_hash)?;
    let item = item(&record, &pending, &session, &located, unread);
    let decided_by = store
        .host(host_id)?
        .map(|h| h.approver_email)
        .unwrap_or_default();
    // A refusal sent nothing: while the proposal waits it is undecided.
    let decision = match latest.filter(|d| d.outcome != "refused") {
        Some(record) => Some(crate::decided::from_decision(&record, &decided_by, &events)),
        None if !is_pending => Some(crate::decided::from_log(proto::answer_on_log(
            &events,
            located.seq,
            event_hash,
            &located.actor,
        ))),
        None => None,
    };
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
    let diff = located
        .previous
        .as_ref()
        .and_then(|p| proto::diff_json(&p.3.offer, &located.offer.offer));
    Ok(OfferView {
        expired: is_expired(&item.expires_at),
        item,
        offer: located.offer_value.clone(),
        previous: located.previous.as_ref().map(|p| p.2.clone()),
        previous_ref: located.previous.as_ref().map(|p| PreviousRef {
            seq: p.0,
            actor: p.1.clone(),
        }),
        diff,
        vendor_envelope: envelope("session_open"),
        buyer_envelope: envelope("envelope"),
        verification: verification_view(&session),
        approvals: pending
            .approvals
            .iter()
            .map(|a| ApprovalGiven {
                approved_by: a.approved_by.clone(),
                at: a.at.clone(),
            })
            .collect(),
        pending: is_pending,
        decision,
    })
}

/// Checks an edited counter-offer and diffs it against the offer it answers.
pub(crate) fn validate_counter(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
    offer: &Value,
) -> Result<CounterCheck, EngineError> {
    let answered = store
        .events(host_id, session_id)?
        .into_iter()
        .find(|e| e.event_hash == event_hash)
        .and_then(|e| parse_event(&e))
        .and_then(|e| proto::read_offer(&e.payload))
        .ok_or_else(|| EngineError::NotFound {
            what: "offer",
            id: event_hash.to_owned(),
        })?;
    Ok(match proto::validate_offer(offer) {
        Ok(parsed) => CounterCheck {
            ok: true,
            errors: Vec::new(),
            diff: proto::diff_json(&answered.offer, &parsed),
        },
        Err(errors) => CounterCheck {
            ok: false,
            errors,
            diff: None,
        },
    })
}
