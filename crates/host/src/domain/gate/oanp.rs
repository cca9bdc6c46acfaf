//! OANP at the gate: every rule is `crates/oanp`'s (the envelope frame, a
//! known type sent by a role allowed to send it; the session chain, every
//! `prev_hash` the `sha256:` hash of the canonical envelope before it,
//! followed from the stored head; offer terms in exact minor units). This
//! module only says which of them a mirrored batch, a request and a
//! counter must pass, and names the failure the agent reads.
//!
//! OANP envelopes carry no signatures: the arbiter signs only the final
//! receipt, whose signed `chain_head` later ties the log to it. So `keys`
//! here names the session's roles (`buyer`, `merchant`, optionally
//! `arbiter`), each with that party's agent id; what the person sees before
//! the receipt exists is the org's own agent's mirror, chained but attested
//! by nothing else (docs/gate-api.md says so).

use std::collections::BTreeMap;

use approval_receipt::receipt::Amount;
use oanp::chain::{LinkError, SessionChain};
use oanp::money::major_units;
use oanp::receipt::Terms;
use oanp::{Envelope, MessageType, Role};
use serde_json::Value;

use super::protocol::{Awaited, Extension, Transcript};
use crate::domain::{DomainError, Head, TranscriptRefusal};

/// Most inclusions a counter may carry.
const MAX_COUNTER_INCLUSIONS: usize = 50;
/// Longest agent id a role may name.
const MAX_AGENT_ID: usize = 160;

/// Count 0 and no hash yet: the first envelope's `prev_hash` is not
/// checked (as the publisher's verifier does not).
pub fn genesis() -> Head {
    Head {
        count: 0,
        hash: format!("sha256:{}", "0".repeat(64)),
    }
}

/// `sha256:` + hex SHA-256 of the canonical bytes of the whole envelope.
pub fn hash(envelope: &Value) -> Option<String> {
    oanp::canonical::commit(envelope).ok()
}

/// `keys` names the session's roles, each with its party's agent id.
pub fn check_keys(keys: &BTreeMap<String, String>) -> Result<(), DomainError> {
    for (role, agent) in keys {
        if !matches!(role.as_str(), "buyer" | "merchant" | "arbiter") {
            return Err(DomainError::Invalid(format!(
                "keys: an OANP session names its roles (buyer, merchant, arbiter), not {role:?}."
            )));
        }
        if agent.is_empty()
            || agent.chars().count() > MAX_AGENT_ID
            || agent.chars().any(char::is_control)
        {
            return Err(DomainError::Invalid(format!(
                "keys.{role}: the party's agent id, 1 to {MAX_AGENT_ID} characters without control characters."
            )));
        }
    }
    Ok(())
}

fn id_of(envelope: &Value) -> Option<String> {
    envelope
        .get("message_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn refusal(index: u64, envelope: &Value, check: &str, detail: &str) -> DomainError {
    DomainError::TranscriptInvalid(TranscriptRefusal::new(
        index,
        id_of(envelope),
        check,
        detail,
    ))
}

/// Where a session is, from its envelopes' types.
fn state_after(kinds: impl Iterator<Item = MessageType>) -> &'static str {
    let mut state = "active";
    for kind in kinds {
        match kind {
            MessageType::SessionAgree => state = "agreed",
            MessageType::SessionClose if state != "agreed" => state = "closed",
            _ => {}
        }
    }
    state
}

fn kind_of(stored: &Value) -> Result<MessageType, DomainError> {
    Envelope::read(stored)
        .map(|e| e.kind)
        .map_err(|e| DomainError::Internal(format!("stored envelope unreadable: {e}")))
}

/// Verifies `new` after the stored envelopes: each is an OANP envelope
/// (`envelope`), the first of a session is `session.open`, each links to
/// the one before (`pin` for the first of a later batch, `link` for the
/// others), and nothing follows `session.agree` or `session.close` (`state`).
pub fn extend(t: &Transcript<'_>, new: &[Value]) -> Result<Extension, DomainError> {
    let mut chain = if t.head.count == 0 {
        SessionChain::new()
    } else {
        SessionChain::from_pin(t.head.hash.clone(), t.head.count)
    };
    let mut kinds = t
        .stored
        .iter()
        .map(kind_of)
        .collect::<Result<Vec<_>, _>>()?;
    let mut hashes = Vec::with_capacity(new.len());
    for (i, raw) in new.iter().enumerate() {
        let index = t.head.count + i as u64;
        let envelope =
            Envelope::read(raw).map_err(|e| refusal(index, raw, "envelope", &e.to_string()))?;
        if index == 0 && envelope.kind != MessageType::SessionOpen {
            return Err(refusal(
                index,
                raw,
                "state",
                &format!(
                    "a session begins with session.open, not {}",
                    envelope.kind.as_str()
                ),
            ));
        }
        let done = state_after(kinds.iter().copied());
        if done != "active" {
            return Err(refusal(
                index,
                raw,
                "state",
                &format!("nothing follows the session once it is {done}"),
            ));
        }
        let check = if i == 0 && t.head.count > 0 {
            "pin"
        } else {
            "link"
        };
        let hash = chain.push(raw).map_err(|e| match e {
            LinkError::NotCanonical(c) => refusal(index, raw, "canonical", &c.to_string()),
            other => refusal(index, raw, check, &other.to_string()),
        })?;
        hashes.push(hash.to_owned());
        kinds.push(envelope.kind);
    }
    let head = Head {
        count: chain.len(),
        hash: chain
            .head()
            .map(str::to_owned)
            .unwrap_or_else(|| t.head.hash.clone()),
    };
    Ok(Extension {
        head,
        state: state_after(kinds.into_iter()).to_owned(),
        hashes,
    })
}

fn not_standing(index: usize, why: &str) -> DomainError {
    DomainError::NotStanding(format!(
        "The envelope at position {} is not the counterparty's standing offer: {why}.",
        index + 1
    ))
}

/// The exact amount of OANP terms (`41900` USD minor units is `419.00 USD`).
pub fn amount_of(terms: &Terms) -> Option<Amount> {
    let major = major_units(terms.price.amount_minor, &terms.price.currency)?;
    format!("{major} {}", terms.price.currency).parse().ok()
}

/// The counterparty's standing offer at `index`: an `offer.propose` or
/// `offer.counter` sent by the counterparty's role, with no later offer,
/// acceptance, agreement or close. What the org's agent asks about is its
/// own `offer.accept` of it.
pub fn awaited(
    messages: &[Value],
    index: usize,
    counterparty: &str,
) -> Result<Awaited, DomainError> {
    let raw = messages
        .get(index)
        .ok_or_else(|| DomainError::Internal("the awaited envelope vanished".into()))?;
    let envelope = Envelope::read(raw)
        .map_err(|e| DomainError::Internal(format!("stored envelope unreadable: {e}")))?;
    if !matches!(
        envelope.kind,
        MessageType::OfferPropose | MessageType::OfferCounter
    ) {
        return Err(not_standing(
            index,
            &format!(
                "it is a {}, not an offer or counter",
                envelope.kind.as_str()
            ),
        ));
    }
    let role = envelope.sender.role;
    if role.as_str() != counterparty {
        return Err(not_standing(
            index,
            &format!(
                "it was sent by the {}, not by the counterparty ({counterparty})",
                role.as_str()
            ),
        ));
    }
    for (later, v) in messages.iter().enumerate().skip(index + 1) {
        let Ok(e) = Envelope::read(v) else { continue };
        let answers = matches!(
            e.kind,
            MessageType::OfferPropose
                | MessageType::OfferCounter
                | MessageType::OfferAccept
                | MessageType::SessionAgree
                | MessageType::SessionClose
        ) || (e.kind == MessageType::ArbitrationReject
            && e.sender.role == Role::Arbiter);
        if answers {
            return Err(not_standing(
                index,
                &format!(
                    "a later {} (position {}) answered it",
                    e.kind.as_str(),
                    later + 1
                ),
            ));
        }
    }
    let offer = envelope
        .offer()
        .map_err(|e| not_standing(index, &format!("its terms cannot be read ({e})")))?;
    // A `category` or `sku` member of the terms (a text, or a list).
    let member = |name: &str| super::protocol::named(offer.terms.extra.get(name));
    Ok(Awaited {
        kind: envelope.kind.as_str().to_owned(),
        amount: amount_of(&offer.terms),
        expires: None,
        skus: member("sku"),
        categories: member("category"),
    })
}

/// Counter terms are OANP terms: `{price: {amount_minor, currency},
/// inclusions: [{kind, value}]}`, the price in exact integer minor units.
pub fn check_counter_terms(terms: &Value) -> Result<(), DomainError> {
    let read: Terms = serde_json::from_value(terms.clone()).map_err(|e| {
        DomainError::Invalid(format!(
            "counter_terms must be OANP terms ({{\"price\": {{\"amount_minor\", \"currency\"}}, \"inclusions\": […]}}): {e}."
        ))
    })?;
    if read.price.amount_minor.get() <= 0 {
        return Err(DomainError::Invalid(
            "counter_terms.price.amount_minor must be a positive whole number of minor units."
                .into(),
        ));
    }
    if read.inclusions.len() > MAX_COUNTER_INCLUSIONS {
        return Err(DomainError::Invalid(format!(
            "counter_terms may carry at most {MAX_COUNTER_INCLUSIONS} inclusions."
        )));
    }
    if major_units(read.price.amount_minor, &read.price.currency).is_none() {
        return Err(DomainError::Invalid(format!(
            "counter_terms.price.currency {:?} is not a currency this host knows the minor units of.",
            read.price.currency
        )));
    }
    Ok(())
}
