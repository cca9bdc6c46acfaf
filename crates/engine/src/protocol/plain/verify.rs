//! Verifying a plain-terms thread against the pin: every entry signed by
//! the host's platform key as this console pinned it at enrollment (not
//! the key the log document names), chained from the pin, its terms read
//! as strictly as the host read them; for a whole record, every entry
//! compared with the copy this console stored. The rules are
//! `crates/plain`'s.

use serde_json::Value;

use super::log::{read, PlainLog};
use super::terms::amount_in;
use crate::error::EngineError;
use crate::protocol::{Checked, Dispute, Head as Pin, Trust};
use crate::store::StoredEvent;

fn host_key(trust: &Trust<'_>) -> Result<ed25519_dalek::VerifyingKey, EngineError> {
    approval_receipt::keys::parse_public_key(trust.platform_key).map_err(|e| {
        EngineError::Protocol(format!(
            "the host's platform key this console pinned does not read: {e}"
        ))
    })
}

/// One verified entry as stored: the terms by the counterparty they name
/// (what the agent relays), the report by the org's agent.
fn stored(seq: u64, raw: &Value, counterparty: &str) -> StoredEvent {
    let kind = raw.get("type").and_then(Value::as_str).unwrap_or("");
    let actor = if kind == plain::TERMS {
        raw.pointer("/terms/counterparty/id")
            .and_then(Value::as_str)
            .unwrap_or(counterparty)
            .to_owned()
    } else {
        raw.pointer("/agent/id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    StoredEvent {
        seq,
        event_hash: plain::hash(raw),
        actor,
        kind: kind.to_owned(),
        at: raw
            .get("at")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        body: serde_json::to_string(raw).unwrap_or_default(),
        // Verified against the host's platform key: the host vouches for
        // what the agent said (the agent itself signed nothing).
        signature_state: "verified".to_owned(),
    }
}

fn follow(
    session_id: &str,
    thread: &plain::Thread,
    log: &PlainLog,
    trust: &Trust<'_>,
    counterparty: &str,
) -> Result<Result<Vec<StoredEvent>, Dispute>, EngineError> {
    if log.keys.get("host").map(String::as_str) != Some(trust.platform_key) {
        return Ok(Err(Dispute {
            seq: log.after + 1,
            checks: vec!["key".to_owned()],
            detail: "the thread names another signing key than the host's platform key this console pinned when it enrolled".to_owned(),
        }));
    }
    let key = host_key(trust)?;
    match plain::verify(thread, session_id, &log.messages, &key) {
        Ok(_) => Ok(Ok(log
            .messages
            .iter()
            .enumerate()
            .map(|(i, raw)| stored(thread.count + i as u64 + 1, raw, counterparty))
            .collect())),
        Err(e) => {
            let check = match (e.check, e.index == thread.count && thread.count > 0) {
                ("link", true) => "pin",
                (c, _) => c,
            };
            Ok(Err(Dispute {
                seq: e.index + 1,
                checks: vec![check.to_owned()],
                detail: format!("entry {}: {}", e.index + 1, e.detail),
            }))
        }
    }
}

fn check_claim(log: &PlainLog, head: &Pin) -> Result<(), EngineError> {
    if (log.head.count, log.head.hash.as_str()) != (head.seq, head.hash.as_str()) {
        return Err(EngineError::Protocol(format!(
            "the host says its head is entry {} ({}), but the entries it sent end at entry {} ({})",
            log.head.count, log.head.hash, head.seq, head.hash
        )));
    }
    Ok(())
}

fn finish(pin: &Pin, events: Vec<StoredEvent>) -> Checked {
    let head = events
        .last()
        .map(|e| Pin {
            seq: e.seq,
            hash: e.event_hash.clone(),
        })
        .unwrap_or_else(|| pin.clone());
    let last_amount = events.iter().rev().find_map(amount_in);
    Checked {
        head,
        unproven: Vec::new(),
        events,
        dispute: None,
        unlinked: false,
        pinned_keys: None,
        last_amount,
    }
}

/// Verifies the entries fetched after `pin` (the host's `after` must be it).
pub(crate) fn since(
    session_id: &str,
    pin: &Pin,
    trust: &Trust<'_>,
    bytes: &[u8],
) -> Result<Checked, EngineError> {
    let log = read(bytes, session_id)?;
    if log.after != pin.seq {
        return Err(EngineError::Protocol(format!(
            "asked for the entries after {}, the host sent those after {}",
            pin.seq, log.after
        )));
    }
    let thread = plain::Thread::after_pin(pin.seq, &pin.hash);
    let own = super::log::session_id(session_id);
    match follow(own, &thread, &log, trust, "")? {
        Ok(events) => {
            let checked = finish(pin, events);
            check_claim(&log, &checked.head)?;
            Ok(checked)
        }
        Err(dispute) => {
            let unlinked = dispute.checks.iter().any(|c| c == "pin");
            let mut checked = Checked::disputed(pin, dispute);
            checked.unlinked = unlinked;
            Ok(checked)
        }
    }
}

/// Verifies a whole thread from its first entry and compares it, entry by
/// entry, with the copy this console stored.
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
            "asked for the whole record of session {session_id}, the host sent the entries after {}",
            log.after
        )));
    }
    let own = super::log::session_id(session_id);
    let all = match follow(own, &plain::Thread::empty(), &log, trust, "")? {
        Ok(all) => all,
        Err(dispute) => return Ok(Checked::disputed(pin, dispute)),
    };
    if let Some(dispute) = crate::protocol::rewritten_at(stored_copy, "entry", |i| {
        all.get(i).map(|e| e.event_hash.clone())
    }) {
        return Ok(Checked::disputed(pin, dispute));
    }
    let whole_head = all
        .last()
        .map(|e| Pin {
            seq: e.seq,
            hash: e.event_hash.clone(),
        })
        .unwrap_or_else(|| Pin {
            seq: 0,
            hash: plain::GENESIS_HASH.to_owned(),
        });
    check_claim(&log, &whole_head)?;
    let new = all.into_iter().filter(|e| e.seq > pin.seq).collect();
    Ok(finish(pin, new))
}
