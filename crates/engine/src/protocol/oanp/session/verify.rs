//! Verifying a mirrored OANP session log against the pin: every envelope's
//! frame (`oanp::Envelope::read`: a known type sent by a role allowed to
//! send it) and link (`oanp::chain::SessionChain`, followed from the pinned
//! head), each role's agent id pinned the first time it is seen, and, for a
//! whole log, every envelope compared with the copy this console stored.
//! The rules are `crates/oanp`'s. OANP envelopes are unsigned, so each is
//! stored as `unsigned`: chained, not attributed.

use std::collections::BTreeMap;

use oanp::chain::{LinkError, SessionChain};
use oanp::Envelope;
use serde_json::Value;

use super::log::{read, OanpLog};
use super::offer::amount_in;
use crate::error::EngineError;
use crate::protocol::{Checked, Dispute, Head as Pin, Trust};
use crate::store::StoredEvent;

fn pin_roles(pinned: &str, log: &OanpLog) -> Result<(BTreeMap<String, String>, bool), Dispute> {
    let mut roles: BTreeMap<String, String> = serde_json::from_str(pinned).unwrap_or_default();
    let mut added = false;
    for (role, agent) in &log.keys {
        match roles.get(role) {
            Some(pin) if pin != agent => {
                return Err(Dispute {
                    seq: log.after + 1,
                    checks: vec!["key".to_owned()],
                    detail: format!(
                        "the host names another agent for the {role} ({agent:?}) than the one this console pinned when it first saw the session ({pin:?})"
                    ),
                })
            }
            Some(_) => {}
            None => {
                roles.insert(role.clone(), agent.clone());
                added = true;
            }
        }
    }
    Ok((roles, added))
}

/// One verified envelope as stored: seq is its 1-based position.
fn stored(seq: u64, hash: String, envelope: &Envelope, raw: &Value) -> StoredEvent {
    StoredEvent {
        seq,
        event_hash: hash,
        actor: envelope.sender.role.as_str().to_owned(),
        kind: envelope.kind.as_str().to_owned(),
        // OANP envelopes carry no time.
        at: String::new(),
        body: serde_json::to_string(raw).unwrap_or_default(),
        signature_state: "unsigned".to_owned(),
    }
}

/// Follows `envelopes` from `pin`; the stored events, or the dispute at the
/// first that fails (and whether it failed to link to the pin itself).
fn follow(pin: &Pin, envelopes: &[Value]) -> Result<Vec<StoredEvent>, (Dispute, bool)> {
    let mut chain = if pin.seq == 0 {
        SessionChain::new()
    } else {
        SessionChain::from_pin(pin.hash.clone(), pin.seq)
    };
    let mut out = Vec::with_capacity(envelopes.len());
    for (i, raw) in envelopes.iter().enumerate() {
        let seq = pin.seq + i as u64 + 1;
        let dispute = |check: &str, detail: String| Dispute {
            seq,
            checks: vec![check.to_owned()],
            detail: format!("envelope {seq}: {detail}"),
        };
        let envelope =
            Envelope::read(raw).map_err(|e| (dispute("envelope", e.to_string()), false))?;
        let hash = match chain.push(raw) {
            Ok(hash) => hash.to_owned(),
            Err(LinkError::NotCanonical(e)) => {
                return Err((dispute("canonical", e.to_string()), false))
            }
            Err(e) => {
                let at_pin = i == 0 && pin.seq > 0;
                let check = if at_pin { "pin" } else { "link" };
                return Err((dispute(check, e.to_string()), at_pin));
            }
        };
        out.push(stored(seq, hash, &envelope, raw));
    }
    Ok(out)
}

fn check_claim(log: &OanpLog, head: &Pin) -> Result<(), EngineError> {
    if (log.head.count, log.head.hash.as_str()) != (head.seq, head.hash.as_str()) {
        return Err(EngineError::Protocol(format!(
            "the host says its head is envelope {} ({}), but the envelopes it sent end at envelope {} ({})",
            log.head.count, log.head.hash, head.seq, head.hash
        )));
    }
    Ok(())
}

fn finish(
    pin: &Pin,
    events: Vec<StoredEvent>,
    roles: &BTreeMap<String, String>,
    added: bool,
) -> Checked {
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
        unproven: events.iter().map(|e| e.seq).collect(),
        events,
        dispute: None,
        unlinked: false,
        pinned_keys: added.then(|| serde_json::to_string(roles).unwrap_or_default()),
        last_amount,
    }
}

/// Verifies the envelopes fetched after `pin` (the host's `after` must be it).
pub(crate) fn since(
    session_id: &str,
    pin: &Pin,
    trust: &Trust<'_>,
    bytes: &[u8],
) -> Result<Checked, EngineError> {
    let log = read(bytes, session_id)?;
    if log.after != pin.seq {
        return Err(EngineError::Protocol(format!(
            "asked for the envelopes after {}, the host sent those after {}",
            pin.seq, log.after
        )));
    }
    let (roles, added) = match pin_roles(trust.pinned_keys, &log) {
        Ok(r) => r,
        Err(dispute) => return Ok(Checked::disputed(pin, dispute)),
    };
    match follow(pin, &log.messages) {
        Ok(events) => {
            let checked = finish(pin, events, &roles, added);
            check_claim(&log, &checked.head)?;
            Ok(checked)
        }
        Err((dispute, unlinked)) => {
            let mut checked = Checked::disputed(pin, dispute);
            checked.unlinked = unlinked;
            Ok(checked)
        }
    }
}

/// Verifies a whole log from its first envelope and compares it, envelope
/// by envelope, with the copy this console stored.
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
            "asked for the whole record of session {session_id}, the host sent the envelopes after {}",
            log.after
        )));
    }
    let (roles, added) = match pin_roles(trust.pinned_keys, &log) {
        Ok(r) => r,
        Err(dispute) => return Ok(Checked::disputed(pin, dispute)),
    };
    let genesis = Pin {
        seq: 0,
        hash: pin.hash.clone(),
    };
    let all = match follow(&genesis, &log.messages) {
        Ok(all) => all,
        Err((dispute, _)) => return Ok(Checked::disputed(pin, dispute)),
    };
    if let Some(dispute) = crate::protocol::rewritten_at(stored_copy, "envelope", |i| {
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
        .unwrap_or_else(|| genesis.clone());
    check_claim(&log, &whole_head)?;
    let new = all.into_iter().filter(|e| e.seq > pin.seq).collect();
    Ok(finish(pin, new, &roles, added))
}
