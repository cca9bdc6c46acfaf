//! Verifying a mirrored Concordia transcript against the pin: every
//! message's link and signature (`concordia::verify_since`, O(new
//! messages)), each party's key pinned the first time it is seen and held to
//! it after, and, for a whole transcript, every message compared with the
//! copy this console stored, so a splice that re-signed the rest is caught
//! at its first message. The rules are `crates/concordia`'s.

use std::collections::BTreeMap;

use concordia::transcript::{Check, Failure, TranscriptReport};
use concordia::{message_hash, verify_since as concordia_since, verify_transcript, Head, Keys};
use serde_json::value::RawValue;
use serde_json::Value;

use super::log::{read, ConcordiaLog};
use crate::error::EngineError;
use crate::protocol::{Checked, Dispute, Head as Pin, Trust};
use crate::store::StoredEvent;

/// The parties' keys once this log's are pinned: the pinned ones kept, new
/// ones added; a party whose key differs from its pin disputes the session.
fn pin_keys(pinned: &str, log: &ConcordiaLog) -> Result<(BTreeMap<String, String>, bool), Dispute> {
    let mut keys: BTreeMap<String, String> = serde_json::from_str(pinned).unwrap_or_default();
    let mut added = false;
    for (party, key) in &log.keys {
        match keys.get(party) {
            Some(pin) if pin.trim_end_matches('=') != key.trim_end_matches('=') => {
                return Err(Dispute {
                    seq: log.after + 1,
                    checks: vec!["key".to_owned()],
                    detail: format!(
                        "the key the host gives for {party:?} is not the one this console pinned when it first saw that party"
                    ),
                });
            }
            Some(_) => {}
            None => {
                keys.insert(party.clone(), key.clone());
                added = true;
            }
        }
    }
    Ok((keys, added))
}

fn ring(keys: &BTreeMap<String, String>) -> Result<Keys, Dispute> {
    let value = serde_json::to_value(keys).unwrap_or(Value::Null);
    Keys::from_json(&value).map_err(|e| Dispute {
        seq: 0,
        checks: vec!["key".to_owned()],
        detail: format!("the transcript's keys cannot be used: {e}"),
    })
}

/// The pinned keys (with this log's new parties pinned), whether any is
/// new, and the ring to verify with; a dispute when a key changed.
type Keyring = (BTreeMap<String, String>, bool, Keys);

fn keyring(trust: &Trust<'_>, log: &ConcordiaLog) -> Result<Keyring, Dispute> {
    let (keys, added) = pin_keys(trust.pinned_keys, log)?;
    check_fingerprint(trust, log, &keys)?;
    let ring = ring(&keys)?;
    Ok((keys, added, ring))
}

/// The host's summary names the counterparty's key by its fingerprint (the
/// SHA-256, hex, of the raw key, docs/approver-api.md); it must be the key
/// this console pinned for that party. A host whose summary and record
/// disagree about who the counterparty is disputes the session.
fn check_fingerprint(
    trust: &Trust<'_>,
    log: &ConcordiaLog,
    keys: &BTreeMap<String, String>,
) -> Result<(), Dispute> {
    let named = trust.counterparty_fingerprint.trim();
    if named.is_empty() {
        return Ok(()); // a summary that names none leaves this console's pin to decide
    }
    let party = &log.counterparty.id;
    let pinned = keys
        .get(party)
        .and_then(|k| approval_receipt::keys::parse_public_key(k).ok())
        .map(|k| jcs::sha256_hex(k.as_bytes()));
    match pinned {
        Some(fingerprint) if fingerprint.eq_ignore_ascii_case(named) => Ok(()),
        found => Err(Dispute {
            seq: log.after + 1,
            checks: vec!["key".to_owned()],
            detail: format!(
                "the host's summary names the key of the counterparty {party:?} by the fingerprint {named}, but the key pinned for it {}",
                match found {
                    Some(f) => format!("has the fingerprint {f}"),
                    None => "cannot be read".to_owned(),
                }
            ),
        }),
    }
}

fn dispute_of(failures: &[Failure]) -> Option<Dispute> {
    let first = failures.first()?;
    let checks: Vec<String> = failures
        .iter()
        .filter(|f| f.index == first.index)
        .map(|f| f.check.name().to_owned())
        .collect();
    let details: Vec<&str> = failures
        .iter()
        .filter(|f| f.index == first.index)
        .map(|f| f.detail.as_str())
        .collect();
    let id = first
        .message_id
        .as_deref()
        .map(|id| format!(" ({id})"))
        .unwrap_or_default();
    Some(Dispute {
        seq: first.index + 1,
        checks,
        detail: format!("message {}{id}: {}", first.index + 1, details.join("; ")),
    })
}

/// One verified message as stored: seq is its 1-based position, the body
/// its JSON text as the host sent it.
fn stored(index: u64, message: &Value, as_sent: &str) -> StoredEvent {
    let text = |pointer: &str| {
        message
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    StoredEvent {
        seq: index + 1,
        event_hash: message_hash(message).unwrap_or_default(),
        actor: text("/from/agent_id"),
        kind: text("/type"),
        at: text("/timestamp"),
        body: as_sent.to_owned(),
        signature_state: "verified".to_owned(),
    }
}

/// The host's claimed head must be where the messages it sent end.
fn check_claim(log: &ConcordiaLog, report: &TranscriptReport) -> Result<(), EngineError> {
    if report.is_valid()
        && (log.head.count, log.head.hash.as_str())
            != (report.head.count, report.head.hash.as_str())
    {
        return Err(EngineError::Protocol(format!(
            "the host says its head is message {} ({}), but the messages it sent end at message {} ({})",
            log.head.count, log.head.hash, report.head.count, report.head.hash
        )));
    }
    Ok(())
}

fn finish(
    report: TranscriptReport,
    pin: &Pin,
    from: u64,
    messages: &[Value],
    texts: &[Box<RawValue>],
    keys: &BTreeMap<String, String>,
    added: bool,
) -> Checked {
    if let Some(dispute) = dispute_of(&report.failures) {
        let mut checked = Checked::disputed(pin, dispute);
        checked.unlinked = report
            .failures
            .iter()
            .any(|f| f.check == Check::Pin && f.index == pin.seq);
        return checked;
    }
    let events: Vec<StoredEvent> = messages
        .iter()
        .zip(texts)
        .enumerate()
        .map(|(i, (m, text))| stored(from + i as u64, m, text.get()))
        .collect();
    let last_amount = events
        .iter()
        .rev()
        .filter_map(|e| serde_json::from_str::<Value>(&e.body).ok())
        .find_map(|m| super::offer::offer_amount(&m));
    Checked {
        head: Pin {
            seq: report.head.count,
            hash: report.head.hash,
        },
        events,
        unproven: Vec::new(),
        dispute: None,
        unlinked: false,
        pinned_keys: added.then(|| serde_json::to_string(keys).unwrap_or_default()),
        last_amount,
    }
}

/// Verifies the messages fetched after `pin` (the host's `after` must be it).
pub(crate) fn since(
    session_id: &str,
    pin: &Pin,
    trust: &Trust<'_>,
    bytes: &[u8],
) -> Result<Checked, EngineError> {
    let log = read(bytes, session_id)?;
    if log.after != pin.seq {
        return Err(EngineError::Protocol(format!(
            "asked for the messages after {}, the host sent those after {}",
            pin.seq, log.after
        )));
    }
    let (keys, added, ring) = match keyring(trust, &log) {
        Ok(keys) => keys,
        Err(dispute) => return Ok(Checked::disputed(pin, dispute)),
    };
    let head = Head {
        count: pin.seq,
        hash: pin.hash.clone(),
    };
    let report = concordia_since(&head, &log.messages, &ring);
    check_claim(&log, &report)?;
    Ok(finish(
        report,
        pin,
        pin.seq,
        &log.messages,
        &log.raw,
        &keys,
        added,
    ))
}

/// Verifies a whole transcript from genesis and compares it, message by
/// message, with the copy this console stored.
pub(crate) fn whole(
    session_id: &str,
    pin: &Pin,
    trust: &Trust<'_>,
    bytes: &[u8],
    stored_copy: &[StoredEvent],
) -> Result<Checked, EngineError> {
    let log = read(bytes, session_id)?;
    if log.after != 0 {
        return Err(EngineError::Protocol(format!(
            "asked for the whole record of session {session_id}, the host sent the messages after {}",
            log.after
        )));
    }
    let (keys, added, ring) = match keyring(trust, &log) {
        Ok(keys) => keys,
        Err(dispute) => return Ok(Checked::disputed(pin, dispute)),
    };
    let report = verify_transcript(&log.messages, &ring);
    check_claim(&log, &report)?;
    for old in stored_copy {
        let now = log.messages.get((old.seq as usize).saturating_sub(1));
        let hash = now.and_then(|m| message_hash(m).ok());
        if hash.as_deref() != Some(old.event_hash.as_str()) {
            let detail = match now {
                Some(_) => format!(
                    "message {} differs from the copy this console verified and stored earlier: the host's record was rewritten",
                    old.seq
                ),
                None => format!(
                    "message {} is missing from the host's record, but this console verified and stored it earlier",
                    old.seq
                ),
            };
            // A message that fails its own checks at or before this one is
            // named with those checks; at this one, it also differs from
            // the stored copy (`pin`).
            let dispute = match dispute_of(&report.failures).filter(|d| d.seq <= old.seq) {
                Some(mut d) if d.seq == old.seq => {
                    d.checks.push("pin".to_owned());
                    d.detail = format!("{}; {detail}", d.detail);
                    d
                }
                Some(d) => d,
                None => Dispute {
                    seq: old.seq,
                    checks: vec!["pin".to_owned()],
                    detail,
                },
            };
            return Ok(Checked::disputed(pin, dispute));
        }
    }
    let from = pin.seq as usize;
    let new = log.messages.get(from..).unwrap_or(&[]);
    let texts = log.raw.get(from..).unwrap_or(&[]);
    Ok(finish(report, pin, pin.seq, new, texts, &keys, added))
}
