//! Plain terms at the gate: every rule is `crates/plain`'s (the strict
//! reading of the terms, the thread's entries, their chain and the host's
//! signature). Unlike the mirrored protocols, the host writes these entries
//! itself, from what the agent asked (`service::plain`); this module says
//! what a request awaits and which counter a person may write, and checks
//! any batch as the console will.

use std::collections::BTreeMap;

use approval_receipt::receipt::Amount;
use serde_json::Value;

use super::protocol::{Awaited, Extension, Transcript};
use crate::domain::{DomainError, Head, TranscriptRefusal};

/// The one party a plain-terms session names: the host, whose platform
/// key signs every entry.
pub const HOST_PARTY: &str = "host";

/// Count 0, the zero hash.
pub fn genesis() -> Head {
    Head {
        count: 0,
        hash: plain::GENESIS_HASH.to_owned(),
    }
}

/// The entry's hash.
pub fn hash(entry: &Value) -> Option<String> {
    entry.is_object().then(|| plain::hash(entry))
}

/// `keys` is exactly `{"host": <platform key>}`.
pub fn check_keys(keys: &BTreeMap<String, String>) -> Result<(), DomainError> {
    if keys.len() != 1 || !keys.contains_key(HOST_PARTY) {
        return Err(DomainError::Invalid(
            "keys: a plain-terms thread names only the host's platform key.".into(),
        ));
    }
    Ok(())
}

fn host_key(keys: &BTreeMap<String, String>) -> Result<ed25519_dalek::VerifyingKey, DomainError> {
    keys.get(HOST_PARTY)
        .and_then(|k| approval_receipt::keys::parse_public_key(k).ok())
        .ok_or_else(|| DomainError::Internal("a plain-terms thread without the host's key".into()))
}

/// The thread as stored (verified when it was written): its head, state
/// and requests, without checking each signature again.
fn thread_of(t: &Transcript<'_>) -> plain::Thread {
    let mut thread = plain::Thread::empty();
    thread.count = t.head.count;
    thread.head = t.head.hash.clone();
    for entry in t.stored {
        match entry.get("type").and_then(Value::as_str) {
            Some(plain::TERMS) => {
                if let Some(r) = entry.get("request_id").and_then(Value::as_str) {
                    thread.requests.push(r.to_owned());
                }
            }
            Some(plain::OUTCOME) => {
                thread.state = match entry.get("outcome").and_then(Value::as_str) {
                    Some("executed") => plain::State::Executed,
                    _ => plain::State::Abandoned,
                }
            }
            _ => {}
        }
    }
    thread
}

/// Verifies `new` after the stored entries, as the console will.
pub fn extend(t: &Transcript<'_>, new: &[Value]) -> Result<Extension, DomainError> {
    let key = host_key(t.keys)?;
    let thread = plain::verify(&thread_of(t), t.session_id, new, &key).map_err(|e| {
        DomainError::TranscriptInvalid(TranscriptRefusal::new(e.index, None, e.check, &e.detail))
    })?;
    let hashes = new.iter().map(plain::hash).collect();
    Ok(Extension {
        head: Head {
            count: thread.count,
            hash: thread.head,
        },
        state: thread.state.name().to_owned(),
        hashes,
    })
}

/// The terms at `index`, when they are the thread's standing terms.
pub fn awaited(
    messages: &[Value],
    index: usize,
    _counterparty: &str,
) -> Result<Awaited, DomainError> {
    if plain::entry::standing(messages) != Some(index) {
        return Err(DomainError::NotStanding(format!(
            "The entry at position {} is not the thread's standing terms: later terms or the agent's report follow it.",
            index + 1
        )));
    }
    let terms = plain::read_terms(messages[index].get("terms").unwrap_or(&Value::Null))
        .map_err(|e| DomainError::Internal(format!("stored terms do not read: {e}")))?;
    Ok(Awaited {
        kind: plain::TERMS.to_owned(),
        amount: terms.amount_text().parse::<Amount>().ok(),
        expires: None,
        skus: terms.skus,
        categories: Vec::new(),
    })
}

/// A person's counter is terms in the same form, read as strictly.
pub fn check_counter_terms(terms: &Value) -> Result<(), DomainError> {
    plain::read_terms(terms)
        .map(|_| ())
        .map_err(|e| DomainError::Invalid(format!("counter_terms.{e}")))
}
