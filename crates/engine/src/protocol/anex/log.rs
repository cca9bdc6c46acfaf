//! The approver API's ANEX log (docs/approver-api.md, "ANEX"): the
//! conversation's messages after a pin, read and checked. ANEX messages
//! carry no signatures (the host authenticates the requester by its A2A
//! bearer token), so what this console can hold the host to is that every
//! message reads as ANEX (`anex::parse_value`), belongs to this
//! conversation, has an id used once, and that the copy stored here is
//! never rewritten: an audit compares every stored message by its
//! canonical hash and disputes the first that changed.

use std::collections::BTreeSet;

use countersign_host_api::anex::AnexLog;
use serde_json::Value;

use crate::error::EngineError;
use crate::protocol::{Checked, Dispute, Head};
use crate::store::StoredEvent;

/// The protocol's name in the summary and stored rows.
pub(crate) const PROTOCOL: &str = "anex";

/// A message's hash: `sha256:` and the hex SHA-256 of its canonical JSON
/// (what the summary's `chain_head` and a pending `event_hash` name).
pub(crate) fn message_hash(message: &Value) -> String {
    jcs::value_hash_prefixed(message)
}

/// Reads the log document of `session_id`.
pub(crate) fn read(bytes: &[u8], session_id: &str) -> Result<AnexLog, EngineError> {
    let log: AnexLog = serde_json::from_slice(bytes).map_err(|e| {
        EngineError::Protocol(format!("the ANEX log of {session_id} cannot be read: {e}"))
    })?;
    if log.protocol != PROTOCOL || log.session_id != session_id {
        return Err(EngineError::Protocol(format!(
            "asked for the ANEX log of {session_id}, the host sent {:?} of {:?}",
            log.protocol, log.session_id
        )));
    }
    Ok(log)
}

fn text(message: &Value, member: &str) -> String {
    message
        .get(member)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// One message as stored: seq is its 1-based position; unsigned.
fn stored(seq: u64, message: &Value) -> StoredEvent {
    StoredEvent {
        seq,
        event_hash: message_hash(message),
        actor: text(message, "sender"),
        kind: text(message, "performative"),
        at: String::new(),
        body: serde_json::to_string(message).unwrap_or_default(),
        signature_state: "unproven".to_owned(),
    }
}

/// The first message (at 1-based `first`) that is not an ANEX message of
/// this conversation with a fresh id, as a dispute.
fn check_messages(
    conversation_id: &str,
    first: u64,
    messages: &[Value],
    mut ids: BTreeSet<String>,
) -> Option<Dispute> {
    for (i, m) in messages.iter().enumerate() {
        let seq = first + i as u64;
        let problem = match anex::parse_value(m) {
            Err(e) => Some(format!("it is not an ANEX message: {}", e.reason)),
            Ok(msg) if msg.conversation_id().as_str() != conversation_id => Some(format!(
                "it belongs to conversation {:?}, not {conversation_id:?}",
                msg.conversation_id().as_str()
            )),
            Ok(msg) if !ids.insert(msg.message_id().as_str().to_owned()) => Some(format!(
                "its message_id {:?} was used earlier in the conversation",
                msg.message_id().as_str()
            )),
            Ok(_) => None,
        };
        if let Some(problem) = problem {
            return Some(Dispute {
                seq,
                checks: vec!["message".to_owned()],
                detail: format!("message {seq}: {problem}"),
            });
        }
    }
    None
}

fn ids_of(events: &[StoredEvent]) -> BTreeSet<String> {
    events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.body).ok())
        .map(|m| text(&m, "message_id"))
        .collect()
}

fn finish(pin: &Head, from: u64, messages: &[Value]) -> Checked {
    let events: Vec<StoredEvent> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| stored(from + 1 + i as u64, m))
        .collect();
    let head = match events.last() {
        Some(last) => Head {
            seq: last.seq,
            hash: last.event_hash.clone(),
        },
        None => pin.clone(),
    };
    Checked {
        events,
        head,
        unproven: Vec::new(),
        dispute: None,
        unlinked: false,
        pinned_keys: None,
        last_amount: None,
    }
}

/// Checks the messages fetched after `pin` (the host's `after` must be it).
/// Ids are checked within what was fetched; an audit checks them all.
pub(crate) fn since(session_id: &str, pin: &Head, bytes: &[u8]) -> Result<Checked, EngineError> {
    let log = read(bytes, session_id)?;
    if log.after != pin.seq {
        return Err(EngineError::Protocol(format!(
            "asked for the messages after {}, the host sent those after {}",
            pin.seq, log.after
        )));
    }
    if let Some(d) = check_messages(
        &log.conversation_id,
        pin.seq + 1,
        &log.messages,
        BTreeSet::new(),
    ) {
        return Ok(Checked::disputed(pin, d));
    }
    Ok(finish(pin, pin.seq, &log.messages))
}

/// Checks a whole conversation and compares it, message by message, with
/// the copy this console stored.
pub(crate) fn whole(
    session_id: &str,
    pin: &Head,
    bytes: &[u8],
    stored_copy: &[StoredEvent],
) -> Result<Checked, EngineError> {
    let log = read(bytes, session_id)?;
    if log.after != 0 {
        return Err(EngineError::Protocol(format!(
            "asked for the whole conversation {session_id}, the host sent the messages after {}",
            log.after
        )));
    }
    if let Some(dispute) = crate::protocol::rewritten_at(stored_copy, "message", |i| {
        log.messages.get(i).map(message_hash)
    }) {
        return Ok(Checked::disputed(pin, dispute));
    }
    let new = log.messages.get(pin.seq as usize..).unwrap_or(&[]);
    if let Some(d) = check_messages(&log.conversation_id, pin.seq + 1, new, ids_of(stored_copy)) {
        return Ok(Checked::disputed(pin, d));
    }
    Ok(finish(pin, pin.seq, new))
}
