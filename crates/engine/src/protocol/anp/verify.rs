//! Verifying a fetched ANP log against the pin and the pinned keys: new
//! events from the pinned head (`anp::verify_extension`), a whole log
//! compared event by event with the stored copy, approval attestations
//! against the keys the host publishes. All rules are the `anp` crate's.

use anp::api::DiscoveredKey;
use anp::chain::{verify_extension, verify_log, KeyRing, VerifyReport};
use anp::payload::AcceptPayload;
use anp::{ChainHead, Event, EventKind, LogDocument};

use crate::error::EngineError;
use crate::protocol::{Checked, Dispute, Head, Trust};
use crate::store::StoredEvent;

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

/// The vendor's key to pin (`{"vendor_agent": {public_key, fingerprint}}`)
/// when the log carried the one the summary vouches for and it is not
/// pinned yet: an export of the session then carries it, so the export
/// verifies on its own (`record::document`).
fn vendor_key_to_pin(doc: &LogDocument, trust: &Trust<'_>) -> Option<String> {
    let vendor = doc.keys.vendor_agent.as_ref()?;
    let key = anp::keys::parse_public_key(&vendor.public_key).ok()?;
    let fingerprint = anp::keys::fingerprint(&key);
    if fingerprint != trust.counterparty_fingerprint {
        return None;
    }
    let pinned: serde_json::Value = serde_json::from_str(trust.pinned_keys).unwrap_or_default();
    if pinned["vendor_agent"]["fingerprint"].as_str() == Some(fingerprint.as_str()) {
        return None;
    }
    let mut keys = match pinned {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    keys.insert(
        "vendor_agent".into(),
        serde_json::json!({"public_key": vendor.public_key, "fingerprint": fingerprint}),
    );
    Some(serde_json::Value::Object(keys).to_string())
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

fn chain_head(pin: &Head) -> ChainHead {
    ChainHead {
        seq: pin.seq,
        event_hash: pin.hash.clone(),
    }
}

/// Reads a fetched log document, refusing another protocol's or another
/// session's before anything in it is looked at.
pub(crate) fn read_log(bytes: &[u8], session_id: &str) -> Result<LogDocument, EngineError> {
    let doc: LogDocument = serde_json::from_slice(bytes).map_err(|e| {
        EngineError::Protocol(format!(
            "the log of session {session_id} is not an ANP log: {e}"
        ))
    })?;
    if !doc.is_anp_0_1() {
        return Err(EngineError::Protocol(format!(
            "the log of session {session_id} speaks {:?}, not {}",
            doc.protocol,
            anp::PROTOCOL
        )));
    }
    if doc.session.id != session_id {
        return Err(EngineError::Protocol(format!(
            "asked for the log of session {session_id}, got session {:?}",
            doc.session.id
        )));
    }
    Ok(doc)
}

fn published_keys(trust: &Trust<'_>) -> Vec<DiscoveredKey> {
    serde_json::from_str(trust.approver_keys).unwrap_or_default()
}

/// Verifies the events of a log fetched with `?after=pin.seq` against the pin.
pub(crate) fn since(
    session_id: &str,
    pin: &Head,
    trust: &Trust<'_>,
    bytes: &[u8],
) -> Result<Checked, EngineError> {
    let doc = read_log(bytes, session_id)?;
    let ring = key_ring(trust.platform_key, &doc, trust.counterparty_fingerprint);
    let report = verify_extension(session_id, &chain_head(pin), &doc.events, &ring);
    let dispute = dispute_from_report(&report)
        .or_else(|| check_approvals(&doc.events, &published_keys(trust)));
    let unlinked = dispute.as_ref().is_some_and(|d| d.checks == ["pin"]);
    let mut checked = finish(report, &doc.events, dispute, pin);
    checked.unlinked = unlinked;
    if checked.dispute.is_none() {
        checked.pinned_keys = vendor_key_to_pin(&doc, trust);
    }
    Ok(checked)
}

/// Verifies a whole log from seq 1 and compares it with the stored copy, so a
/// rewrite that recomputed every hash is still caught at its first seq.
pub(crate) fn whole(
    session_id: &str,
    pin: &Head,
    trust: &Trust<'_>,
    bytes: &[u8],
    stored_copy: &[StoredEvent],
) -> Result<Checked, EngineError> {
    let doc = read_log(bytes, session_id)?;
    let events = &doc.events;
    let ring = key_ring(trust.platform_key, &doc, trust.counterparty_fingerprint);
    let report = verify_log(session_id, events, &ring);
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
        dispute = check_approvals(events, &published_keys(trust));
    }
    // Only the events after the pin are new; the stored prefix is kept as is.
    let new: Vec<Event> = events.iter().filter(|e| e.seq > pin.seq).cloned().collect();
    let mut checked = finish(report, &new, dispute, pin);
    if checked.dispute.is_none() {
        checked.pinned_keys = vendor_key_to_pin(&doc, trust);
    }
    Ok(checked)
}

fn finish(report: VerifyReport, events: &[Event], dispute: Option<Dispute>, pin: &Head) -> Checked {
    if let Some(dispute) = dispute {
        let mut checked = Checked::disputed(pin, dispute);
        checked.unproven = report.unproven;
        return checked;
    }
    let head = events
        .last()
        .map(|e| Head {
            seq: e.seq,
            hash: e.event_hash.clone(),
        })
        .unwrap_or_else(|| pin.clone());
    let last_amount = events
        .iter()
        .rev()
        .filter(|e| e.kind.is_offer())
        .find_map(|e| super::offer::read_offer(&e.payload))
        .map(|o| o.amount());
    Checked {
        events: events.iter().map(|e| stored(e, &report)).collect(),
        head,
        unproven: report.unproven,
        dispute: None,
        unlinked: false,
        pinned_keys: None,
        last_amount,
    }
}
