//! Concordia at the gate: every rule is `crates/concordia`'s (transcript
//! verification from a pinned head, the §5 state machine, §6 offers with
//! exact money); this module only says which of them a mirrored batch, a
//! request and a counter must pass, and names the failure the agent reads.

use std::collections::BTreeMap;

use approval_receipt::datetime;
use approval_receipt::receipt::Amount;
use concordia::offer::{Offer, OfferKind};
use concordia::transcript::{message_hash, verify_since, Keys};
use concordia::{Message, MessageType, Session, State};
use serde_json::{json, Value};
use time::{Duration, OffsetDateTime};

use super::protocol::{Awaited, Extension, Transcript};
use crate::domain::{DomainError, Head, TranscriptRefusal};

/// Most terms a counter may carry.
const MAX_COUNTER_TERMS: usize = 100;

fn keys_of(keys: &BTreeMap<String, String>) -> Result<Keys, DomainError> {
    Keys::from_json(&json!(keys)).map_err(|e| DomainError::Invalid(format!("keys: {e}.")))
}

/// Count 0 and the genesis hash (`sha256:` and 64 zeros).
pub fn genesis() -> Head {
    Head {
        count: 0,
        hash: concordia::GENESIS_HASH.to_owned(),
    }
}

/// `sha256:` + hex SHA-256 of JCS of the whole message.
pub fn hash(message: &Value) -> Option<String> {
    message_hash(message).ok()
}

/// Every key must be a base64url Ed25519 public key.
pub fn check_keys(keys: &BTreeMap<String, String>) -> Result<(), DomainError> {
    keys_of(keys).map(|_| ())
}

fn id_of(message: &Value) -> Option<String> {
    message.get("id").and_then(Value::as_str).map(str::to_owned)
}

fn refusal(index: u64, message: &Value, check: &str, detail: &str) -> DomainError {
    DomainError::TranscriptInvalid(TranscriptRefusal::new(index, id_of(message), check, detail))
}

/// Replays every message through the §5 state machine.
fn replay(messages: &[&Value], first_new: usize) -> Result<Session, DomainError> {
    let mut session = Session::new();
    for (i, value) in messages.iter().enumerate() {
        let message = Message::from_value(value).map_err(|e| {
            if i < first_new {
                DomainError::Internal(format!("stored message {i} unreadable: {e}"))
            } else {
                refusal(i as u64, value, "envelope", &e.to_string())
            }
        })?;
        session
            .apply(&message)
            .map_err(|e| refusal(e.index, value, "state", &e.rule.to_string()))?;
    }
    Ok(session)
}

/// Verifies `new` after the stored messages: from the stored head (links
/// and signatures of the new messages only, O(new)), each carries the
/// session id, and the whole transcript replays through the state machine.
pub fn extend(t: &Transcript<'_>, new: &[Value]) -> Result<Extension, DomainError> {
    let keys = keys_of(t.keys)?;
    let pin = concordia::Head {
        count: t.head.count,
        hash: t.head.hash.clone(),
    };
    let report = verify_since(&pin, new, &keys);
    if let Some(f) = report.failures.first() {
        let offset = (f.index - t.head.count) as usize;
        let message = new.get(offset).unwrap_or(&Value::Null);
        return Err(refusal(f.index, message, f.check.name(), &f.detail));
    }
    for (i, m) in new.iter().enumerate() {
        if m.get("session_id").and_then(Value::as_str) != Some(t.session_id) {
            return Err(refusal(
                t.head.count + i as u64,
                m,
                "session",
                &format!("session_id is not the session's ({})", t.session_id),
            ));
        }
    }
    let all: Vec<&Value> = t.stored.iter().chain(new).collect();
    let session = replay(&all, t.stored.len())?;
    let hashes = new
        .iter()
        .map(|m| message_hash(m).map_err(|e| DomainError::Internal(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Extension {
        head: Head {
            count: report.head.count,
            hash: report.head.hash,
        },
        state: session.state().as_str().to_owned(),
        hashes,
    })
}

fn not_standing(index: usize, why: &str) -> DomainError {
    DomainError::NotStanding(format!(
        "The message at position {} is not the counterparty's standing offer: {why}.",
        index + 1
    ))
}

/// The amount an offer names exactly: its `price` term's value and currency.
fn amount_of(offer: &Offer) -> Option<Amount> {
    let terms = match &offer.kind {
        OfferKind::Basic { terms } | OfferKind::Partial { terms, .. } => terms,
        _ => return None,
    };
    let money = terms.get("price")?.money.as_ref()?;
    format!("{} {}", money.value, money.currency).parse().ok()
}

/// The counterparty's standing offer at `index`: a `negotiate.offer` or
/// `negotiate.counter` it sent, with no later offer, counter, accept,
/// reject or withdrawal, in a session still active.
pub fn awaited(
    messages: &[Value],
    index: usize,
    counterparty: &str,
) -> Result<Awaited, DomainError> {
    let value = messages
        .get(index)
        .ok_or_else(|| DomainError::Internal("the awaited message vanished".into()))?;
    let message = Message::from_value(value)
        .map_err(|e| DomainError::Internal(format!("stored message unreadable: {e}")))?;
    if !matches!(message.kind, MessageType::Offer | MessageType::Counter) {
        return Err(not_standing(
            index,
            &format!("it is a {}, not an offer or counter", message.kind.as_str()),
        ));
    }
    if message.from.agent_id != counterparty {
        return Err(not_standing(
            index,
            &format!(
                "it was sent by {:?}, not by the counterparty {counterparty:?}",
                message.from.agent_id
            ),
        ));
    }
    for (later, v) in messages.iter().enumerate().skip(index + 1) {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        let answers = matches!(
            MessageType::parse(kind),
            Some(
                MessageType::Offer
                    | MessageType::Counter
                    | MessageType::Accept
                    | MessageType::Reject
                    | MessageType::Withdraw
                    | MessageType::Commit
            )
        );
        if answers {
            return Err(not_standing(
                index,
                &format!("a later {kind} (position {}) answered it", later + 1),
            ));
        }
    }
    let all: Vec<&Value> = messages.iter().collect();
    let session = replay(&all, messages.len())?;
    if session.state() != State::Active {
        return Err(not_standing(
            index,
            &format!("the session is {}", session.state().as_str()),
        ));
    }
    let offer = message
        .offer()
        .ok_or_else(|| DomainError::Internal("an offer message without an offer".into()))?;
    let mut expires =
        Some(message.timestamp + Duration::seconds(session.timing().offer_ttl as i64));
    let mut earliest = |t: OffsetDateTime| {
        expires = Some(match expires {
            Some(e) if e < t => e,
            _ => t,
        })
    };
    if let Some(until) = offer.valid_until.as_deref() {
        let until = datetime::parse(until)
            .map_err(|e| not_standing(index, &format!("its valid_until is unreadable ({e})")))?;
        earliest(until);
    }
    if let Some(ttl) = message.ttl {
        earliest(message.timestamp + Duration::seconds(i64::try_from(ttl).unwrap_or(i64::MAX / 4)));
    }
    // A `category` or `sku` term (`{"value": "hardware"}`, or a list).
    let term = |name: &str| match &offer.kind {
        OfferKind::Basic { terms } | OfferKind::Partial { terms, .. } => {
            super::protocol::named(terms.get(name).map(|t| &t.value))
        }
        _ => Vec::new(),
    };
    Ok(Awaited {
        kind: message.kind.as_str().to_owned(),
        amount: amount_of(offer),
        expires,
        skus: term("sku"),
        categories: term("category"),
    })
}

/// Counter terms are the `terms` object of a Concordia offer body: 1 to
/// 100 terms that `crates/concordia` reads as a basic offer.
pub fn check_counter_terms(terms: &Value) -> Result<(), DomainError> {
    let Some(map) = terms.as_object() else {
        return Err(DomainError::Invalid(
            "counter_terms must be an object of Concordia terms (term id → {\"value\": …}).".into(),
        ));
    };
    if map.is_empty() || map.len() > MAX_COUNTER_TERMS {
        return Err(DomainError::Invalid(format!(
            "counter_terms must hold 1 to {MAX_COUNTER_TERMS} terms."
        )));
    }
    let body = json!({ "terms": terms });
    let offer = body
        .as_object()
        .map(Offer::parse)
        .transpose()
        .map_err(|e| {
            DomainError::Invalid(format!("counter_terms are not a Concordia offer: {e}."))
        })?;
    match offer.map(|o| o.kind) {
        Some(OfferKind::Basic { .. }) => Ok(()),
        _ => Err(DomainError::Invalid(
            "counter_terms must read as a basic Concordia offer.".into(),
        )),
    }
}
