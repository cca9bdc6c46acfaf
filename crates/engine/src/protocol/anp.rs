//! ANP/0.1 specifics: verifying fetched logs against pins and pinned keys,
//! reading offers, exact totals, diffs. All rules come from the `anp` crate;
//! nothing here re-derives a hash or a signed string.

use anp::api::DiscoveredKey;
use anp::chain::{verify_extension, verify_log, KeyRing, VerifyReport};
use anp::diff::diff_offers;
use anp::money::{change, offer_total, Money};
use anp::payload::{AcceptPayload, Offer};
use anp::{ChainHead, Event, EventKind, LogDocument};
use serde_json::Value;

use crate::store::StoredEvent;
use crate::views::{Change, FieldError};

/// The keys a session's events may be signed with: the platform key pinned at
/// enrollment (never the log's own claim) and the vendor's key, accepted from
/// the log only when its fingerprint is the one the summary vouches for.
pub(crate) fn key_ring(platform_key: &str, doc: &LogDocument, vendor_fingerprint: &str) -> KeyRing {
    let mut ring = KeyRing::new();
    let _ = ring.add_b64(platform_key);
    if let Some(vendor) = &doc.keys.vendor_agent {
        if let Ok(key) = anp::keys::parse_public_key(&vendor.public_key) {
            if anp::keys::fingerprint(&key) == vendor_fingerprint {
                ring.add(key);
            }
        }
    }
    ring
}

/// Why a session is disputed: the exact seq, the check, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dispute {
    pub seq: u64,
    pub checks: Vec<String>,
    pub detail: String,
}

/// The outcome of checking fetched events.
pub(crate) struct Checked {
    /// Events that verified, ready to store (empty when disputed).
    pub events: Vec<StoredEvent>,
    /// The new pin.
    pub head: ChainHead,
    /// Seqs with unproven attribution.
    pub unproven: Vec<u64>,
    /// Set when the log fails.
    pub dispute: Option<Dispute>,
}

fn dispute_from_report(report: &VerifyReport) -> Option<Dispute> {
    if report.ok {
        return None;
    }
    if let Some(failure) = report.failing.first() {
        return Some(Dispute {
            seq: failure.seq,
            checks: failure
                .checks
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect(),
            detail: format!("event {}: {}", failure.seq, failure.details.join("; ")),
        });
    }
    if let Some(rewrite) = &report.rewrite {
        return Some(Dispute {
            seq: rewrite.pinned.seq,
            checks: vec!["pin".to_owned()],
            detail: format!(
                "the log no longer extends the pinned head: {}",
                rewrite.detail
            ),
        });
    }
    Some(Dispute {
        seq: report.head.seq,
        checks: vec!["unknown".to_owned()],
        detail: "the verifier refused the log".to_owned(),
    })
}

fn stored(event: &Event, report: &VerifyReport) -> StoredEvent {
    let signature_state = if report.failing.iter().any(|f| f.seq == event.seq) {
        "failed"
    } else if report.unproven.contains(&event.seq) {
        "unproven"
    } else {
        "verified"
    };
    StoredEvent {
        seq: event.seq,
        event_hash: event.event_hash.clone(),
        actor: event.actor.as_str().to_owned(),
        kind: event.kind.as_str().to_owned(),
        at: event.at.clone(),
        body: serde_json::to_string(event).unwrap_or_default(),
        signature_state: signature_state.to_owned(),
    }
}

/// True when the key's validity window (RFC-003) covers `at`; an unreadable
/// time never counts as covered.
fn valid_at(key: &DiscoveredKey, at: &str) -> bool {
    let Some(at) = anp::api::parse_timestamp(at) else {
        return false;
    };
    let from = anp::api::parse_timestamp(&key.valid_from);
    let to = key.valid_to.as_deref().map(anp::api::parse_timestamp);
    let after_start = from.is_some_and(|from| from <= at);
    let before_end = match to {
        None => true,
        Some(Some(to)) => at < to,
        Some(None) => false,
    };
    after_start && before_end
}

/// Checks approval attestations inside `accept` events against the approver
/// keys the host publishes (RFC-002/003).
fn check_approvals(events: &[Event], approver_keys: &[DiscoveredKey]) -> Option<Dispute> {
    for event in events.iter().filter(|e| e.kind == EventKind::Accept) {
        let Ok(accept) = AcceptPayload::parse(&event.payload) else {
            return Some(Dispute {
                seq: event.seq,
                checks: vec!["payload".to_owned()],
                detail: format!("event {}: the accept payload is not valid", event.seq),
            });
        };
        let in_response_to = accept.in_response_to.clone();
        for approval in accept.all_approvals() {
            let key = approver_keys
                .iter()
                .filter(|k| k.approved_by.as_deref() == Some(approval.approved_by.as_str()))
                .filter(|k| valid_at(k, &approval.at))
                .filter_map(|k| anp::keys::parse_public_key(&k.public_key).ok())
                .find(|k| anp::approval::verify_approval(approval, &in_response_to, k).is_ok());
            if key.is_none() {
                return Some(Dispute {
                    seq: event.seq,
                    checks: vec!["approval".to_owned()],
                    detail: format!(
                        "event {}: the approval by {} does not verify against any key the host publishes for that approver",
                        event.seq, approval.approved_by
                    ),
                });
            }
        }
    }
    None
}

/// Verifies events fetched with `?after=pin.seq` against the pin.
pub(crate) fn check_extension(
    session_id: &str,
    pin: &ChainHead,
    events: &[Event],
    ring: &KeyRing,
    approver_keys: &[DiscoveredKey],
) -> Checked {
    let report = verify_extension(session_id, pin, events, ring);
    let dispute = dispute_from_report(&report).or_else(|| check_approvals(events, approver_keys));
    finish(report, events, dispute, pin)
}

/// Verifies a whole log from seq 1 and compares it with the stored copy, so a
/// rewrite that recomputed every hash is still caught at its first seq.
pub(crate) fn check_whole(
    session_id: &str,
    pin: &ChainHead,
    events: &[Event],
    stored_copy: &[StoredEvent],
    ring: &KeyRing,
    approver_keys: &[DiscoveredKey],
) -> Checked {
    let report = verify_log(session_id, events, ring);
    let mut dispute = dispute_from_report(&report);
    for old in stored_copy {
        let now = events.iter().find(|e| e.seq == old.seq);
        let same = match (now, serde_json::from_str::<Event>(&old.body)) {
            (Some(now), Ok(before)) => *now == before,
            _ => false,
        };
        if !same {
            let candidate = Dispute {
                seq: old.seq,
                checks: vec!["pin".to_owned()],
                detail: match now {
                    Some(_) => format!(
                        "event {} differs from the copy this console verified and stored earlier: the host rewrote history",
                        old.seq
                    ),
                    None => format!(
                        "event {} is missing from the host's log, but this console verified and stored it earlier",
                        old.seq
                    ),
                },
            };
            if dispute.as_ref().is_none_or(|d| candidate.seq < d.seq) {
                dispute = Some(candidate);
            }
            break;
        }
    }
    if dispute.is_none() {
        dispute = check_approvals(events, approver_keys);
    }
    // Only the events after the pin are new; the stored prefix is kept as is.
    let new: Vec<Event> = events.iter().filter(|e| e.seq > pin.seq).cloned().collect();
    finish(report, &new, dispute, pin)
}

fn finish(
    report: VerifyReport,
    events: &[Event],
    dispute: Option<Dispute>,
    pin: &ChainHead,
) -> Checked {
    if dispute.is_some() {
        return Checked {
            events: Vec::new(),
            head: pin.clone(),
            unproven: report.unproven.clone(),
            dispute,
        };
    }
    let head = events
        .last()
        .map(|e| ChainHead {
            seq: e.seq,
            event_hash: e.event_hash.clone(),
        })
        .unwrap_or_else(|| pin.clone());
    Checked {
        events: events.iter().map(|e| stored(e, &report)).collect(),
        head,
        unproven: report.unproven,
        dispute: None,
    }
}

/// An offer read from a stored payload.
pub(crate) struct ReadOffer {
    pub offer: Offer,
    pub total: Money,
}

/// Reads an offer payload; `None` when it is not a valid offer.
pub(crate) fn read_offer(payload: &Value) -> Option<ReadOffer> {
    let offer = Offer::parse(payload).ok()?;
    let total = offer_total(&offer).amount;
    Some(ReadOffer { offer, total })
}

/// The contract's `Change` from one total to another.
pub(crate) fn total_change(old: Money, new: Money) -> Change {
    let c = change(old, new);
    Change {
        absolute: c.absolute.to_string(),
        percent: c.percent,
    }
}

/// The structured diff as JSON (the contract's `OfferDiff`).
pub(crate) fn diff_json(old: &Offer, new: &Offer) -> Option<Value> {
    serde_json::to_value(diff_offers(old, new)).ok()
}

/// Validates an edited counter-offer by the protocol's own rules.
pub(crate) fn validate_offer(value: &Value) -> Result<Offer, Vec<FieldError>> {
    Offer::parse(value).map_err(|e| {
        e.violations
            .into_iter()
            .map(|v| FieldError {
                path: v.path,
                message: v.rule,
            })
            .collect()
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

/// What the log says became of a proposal: the first answer to it after
/// `seq`, or a newer proposal of the same side that replaced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogAnswer {
    /// An `accept` naming it, with the approvers its approvals name.
    Accepted {
        event: StoredRef,
        approved_by: Vec<String>,
    },
    /// The other side declined or countered it.
    Answered {
        event: StoredRef,
        action: &'static str,
    },
    /// The same side made a newer proposal.
    Replaced { event: StoredRef },
}

/// An event of the stored copy, by position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredRef {
    pub seq: u64,
    pub kind: String,
    pub event_hash: String,
    pub at: String,
}

fn stored_ref(e: &StoredEvent) -> StoredRef {
    StoredRef {
        seq: e.seq,
        kind: e.kind.clone(),
        event_hash: e.event_hash.clone(),
        at: e.at.clone(),
    }
}

/// Reads the stored copy after the proposal at `seq` (hash `hash`, by
/// `actor`) for what answered it.
pub(crate) fn answer_on_log(
    events: &[StoredEvent],
    seq: u64,
    hash: &str,
    actor: &str,
) -> Option<LogAnswer> {
    for e in events.iter().filter(|e| e.seq > seq) {
        match e.kind.as_str() {
            "accept" => {
                let Ok(event) = serde_json::from_str::<Event>(&e.body) else {
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
                        event: stored_ref(e),
                        approved_by,
                    });
                }
            }
            "decline" if e.actor != actor => {
                return Some(LogAnswer::Answered {
                    event: stored_ref(e),
                    action: "decline",
                })
            }
            "offer" | "counter_offer" if e.actor != actor => {
                return Some(LogAnswer::Answered {
                    event: stored_ref(e),
                    action: "counter",
                })
            }
            "offer" | "counter_offer" => {
                return Some(LogAnswer::Replaced {
                    event: stored_ref(e),
                })
            }
            _ => {}
        }
    }
    None
}

/// The event a decision appended, in the log the host answered it with:
/// the last buyer event of the decision's kind after the proposal's seq.
pub(crate) fn appended_by(doc: &LogDocument, action: &str, after: u64) -> Option<StoredRef> {
    let kind = match action {
        "approve" => EventKind::Accept,
        "decline" => EventKind::Decline,
        "counter" => EventKind::CounterOffer,
        _ => return None,
    };
    doc.events
        .iter()
        .rev()
        .find(|e| e.seq > after && e.kind == kind && e.actor == anp::Actor::Buyer)
        .map(|e| StoredRef {
            seq: e.seq,
            kind: e.kind.as_str().to_owned(),
            event_hash: e.event_hash.clone(),
            at: e.at.clone(),
        })
}
