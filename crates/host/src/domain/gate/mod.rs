//! The gate's rules (docs/gate-api.md), pure of HTTP and of storage: a
//! transcript is stored only after its protocol's crate verifies it, a
//! later batch must extend the stored head exactly, and a request for a
//! decision names the counterparty's standing offer, with its amount read
//! from the offer and its expiry bounded by the offer's. Each function
//! takes what was read and plans one [`GateCommit`], or refuses with a
//! [`DomainError`] naming what was wrong.

mod concordia;
pub mod deadline;
pub mod decisions;
mod oanp;
pub mod plain;
pub mod protocol;
pub mod views;

use std::collections::BTreeMap;

use approval_receipt::receipt::Amount;
use countersign_host_api::gate::{
    AppendMessages, CreateSession, GateAction, RequestAccepted, RequestDecision, RequestState,
    SessionHead, MAX_MESSAGES_PER_REQUEST,
};
use rust_decimal::Decimal;
use serde_json::Value;
use time::OffsetDateTime;

pub use protocol::GateProtocol;

use super::{DomainError, Head};
use crate::store::{
    GateAgentRow, GateCommit, GateKey, GateMessage, GateRequestRow, GateSession, GateState, Org,
    RequestChange,
};

/// Longest counterparty name or organization.
const MAX_NAME_CHARS: usize = 160;
/// Most parties a transcript's `keys` may name.
const MAX_KEYS: usize = 32;

/// The protocol a request names, if it is one the gate speaks and the one
/// the agent was enrolled for.
pub fn protocol_for(agent: &GateAgentRow, named: &str) -> Result<GateProtocol, DomainError> {
    let Some(protocol) = GateProtocol::parse(named) else {
        let known: Vec<&str> = GateProtocol::ALL.iter().map(|p| p.name()).collect();
        return Err(DomainError::UnknownProtocol(format!(
            "This host's gate does not speak {named:?}; it speaks {}.",
            known.join(", ")
        )));
    };
    if protocol.name() != agent.protocol {
        return Err(DomainError::UnknownProtocol(format!(
            "This agent was enrolled for {:?}, not {named:?}.",
            agent.protocol
        )));
    }
    Ok(protocol)
}

/// The protocol an agent was enrolled for (always one the gate speaks).
pub fn agent_protocol(agent: &GateAgentRow) -> Result<GateProtocol, DomainError> {
    protocol_for(agent, &agent.protocol)
}

/// An id chosen by an agent (a session or request id): 1 to 128 of
/// `[A-Za-z0-9._:-]`, starting with a letter or digit (a path segment of
/// dots is rewritten by URL parsers).
pub fn check_id(what: &str, id: &str) -> Result<(), DomainError> {
    let mut bytes = id.bytes();
    let ok = id.len() <= 128
        && bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(DomainError::Invalid(format!(
            "{what} must be 1 to 128 of [A-Za-z0-9._:-], starting with a letter or digit."
        )))
    }
}

fn check_text(what: &str, text: Option<&str>) -> Result<(), DomainError> {
    let Some(text) = text else { return Ok(()) };
    if text.trim().is_empty()
        || text.chars().count() > MAX_NAME_CHARS
        || text.chars().any(char::is_control)
    {
        return Err(DomainError::Invalid(format!(
            "{what} must be 1 to {MAX_NAME_CHARS} characters without control characters."
        )));
    }
    Ok(())
}

fn check_batch(count: usize) -> Result<(), DomainError> {
    if count == 0 || count > MAX_MESSAGES_PER_REQUEST {
        return Err(DomainError::Invalid(format!(
            "messages must hold 1 to {MAX_MESSAGES_PER_REQUEST} messages."
        )));
    }
    Ok(())
}

/// Reads a stored message's text.
pub fn parse_stored(message: &GateMessage) -> Result<Value, DomainError> {
    serde_json::from_str(&message.body)
        .map_err(|e| DomainError::Internal(format!("stored message unreadable: {e}")))
}

/// The hash of the counterparty's standing offer in a session: the one
/// message a request may await now (MCP's `request_decision` asks about it
/// when the agent names none).
pub fn standing_offer(protocol: GateProtocol, state: &GateState) -> Result<String, DomainError> {
    let messages: Vec<Value> = state
        .messages
        .iter()
        .map(parse_stored)
        .collect::<Result<_, _>>()?;
    let counterparty = &state.session.counterparty_id;
    (0..messages.len())
        .rev()
        .find(|&i| protocol.awaited(&messages, i, counterparty).is_ok())
        .map(|i| state.messages[i].hash.clone())
        .ok_or_else(|| {
            DomainError::NotStanding(format!(
                "No offer from {counterparty} is standing in session {}: mirror the counterparty's latest offer first (nothing after it may answer it).",
                state.session.key.session_id
            ))
        })
}

/// Reads a session's pinned keys.
pub fn keys_of(session: &GateSession) -> Result<BTreeMap<String, String>, DomainError> {
    serde_json::from_str(&session.keys)
        .map_err(|e| DomainError::Internal(format!("stored keys unreadable: {e}")))
}

fn head_of(session: &GateSession) -> Head {
    Head {
        count: session.head_count,
        hash: session.head_hash.clone(),
    }
}

/// `POST /sessions` for a session that exists: the same body again gets
/// the same answer, anything else is `session_exists` with the stored head.
pub fn existing(
    state: &GateState,
    agent: &GateAgentRow,
    body_sha256: &str,
) -> Result<SessionHead, DomainError> {
    let s = &state.session;
    let (created_sha256, created_count) = s.created_body();
    if s.agent_id == agent.id && created_sha256 == body_sha256 {
        // The answer it got then: the head of exactly that body.
        if let Some(first) = state.messages.iter().find(|m| m.seq == created_count) {
            return Ok(SessionHead {
                session_id: s.key.session_id.clone(),
                protocol: s.key.protocol.clone(),
                head: Head {
                    count: first.seq,
                    hash: first.hash.clone(),
                },
            });
        }
    }
    Err(DomainError::SessionExists {
        message: format!(
            "Session {} exists already; extend it with POST …/sessions/{}/messages after the head it holds.",
            s.key.session_id, s.key.session_id
        ),
        head: head_of(s),
    })
}

impl GateSession {
    /// The SHA-256 (hex) of the body that created the session, and how many
    /// messages it carried (stored as `<hex>:<count>`).
    pub fn created_body(&self) -> (&str, u64) {
        match self.created_sha256.split_once(':') {
            Some((hash, n)) => (hash, n.parse().unwrap_or(0)),
            None => (self.created_sha256.as_str(), 0),
        }
    }
}

/// Plans a new session from the body that creates it, after verifying
/// every message from genesis.
pub fn plan_create(
    protocol: GateProtocol,
    agent: &GateAgentRow,
    req: &CreateSession,
    messages: &[Value],
    body_sha256: &str,
    now: OffsetDateTime,
) -> Result<(GateCommit, SessionHead), DomainError> {
    check_id("session_id", &req.session_id)?;
    check_batch(messages.len())?;
    if req.keys.is_empty() || req.keys.len() > MAX_KEYS {
        return Err(DomainError::Invalid(format!(
            "keys must name 1 to {MAX_KEYS} parties."
        )));
    }
    protocol.check_keys(&req.keys)?;
    for (what, party) in [
        ("self", &req.self_party),
        ("counterparty.id", &req.counterparty.id),
    ] {
        if protocol.parties_have_keys() && !req.keys.contains_key(party) {
            return Err(DomainError::Invalid(format!(
                "{what} ({party:?}) must be a party of keys."
            )));
        }
    }
    if req.self_party == req.counterparty.id {
        return Err(DomainError::Invalid(
            "self and counterparty.id must be different parties.".into(),
        ));
    }
    check_text("counterparty.name", req.counterparty.name.as_deref())?;
    check_text(
        "counterparty.organization",
        req.counterparty.organization.as_deref(),
    )?;
    let genesis = protocol.genesis();
    let transcript = protocol::Transcript {
        session_id: &req.session_id,
        keys: &req.keys,
        stored: &[],
        head: &genesis,
    };
    let ext = protocol.extend(&transcript, messages)?;
    let at = anp::api::format_timestamp(now);
    let keys =
        serde_json::to_string(&req.keys).map_err(|e| DomainError::Internal(e.to_string()))?;
    let session = GateSession {
        key: GateKey {
            org_handle: agent.org_handle.clone(),
            protocol: protocol.name().to_owned(),
            session_id: req.session_id.clone(),
        },
        agent_id: agent.id.clone(),
        self_party: req.self_party.clone(),
        counterparty_id: req.counterparty.id.clone(),
        counterparty_name: req.counterparty.name.clone(),
        counterparty_org: req.counterparty.organization.clone(),
        keys,
        head_count: ext.head.count,
        head_hash: ext.head.hash.clone(),
        state: ext.state.clone(),
        created_sha256: format!("{body_sha256}:{}", messages.len()),
        created_at: at.clone(),
        updated_at: at,
        version: 0,
    };
    let mut commit = GateCommit::on(session);
    commit.new_session = true;
    commit.messages = stored_messages(&req.messages, &ext, 0);
    Ok((
        commit,
        SessionHead {
            session_id: req.session_id.clone(),
            protocol: protocol.name().to_owned(),
            head: ext.head,
        },
    ))
}

fn stored_messages(
    raw: &[Box<serde_json::value::RawValue>],
    ext: &protocol::Extension,
    before: u64,
) -> Vec<GateMessage> {
    raw.iter()
        .zip(&ext.hashes)
        .enumerate()
        .map(|(i, (text, hash))| GateMessage {
            seq: before + i as u64 + 1,
            hash: hash.clone(),
            body: text.get().to_owned(),
        })
        .collect()
}

/// What an append does: nothing (a repeat of a batch already stored) or a
/// commit.
pub enum Appended {
    /// The batch is exactly the messages stored after `after`: the answer
    /// is the head the host holds, nothing changes.
    Repeat(SessionHead),
    /// The commit to apply, and the answer once applied.
    Commit(Box<GateCommit>, SessionHead),
}

/// Plans an append: `after` must be the stored head and the batch must
/// verify from it.
pub fn plan_append(
    protocol: GateProtocol,
    state: &GateState,
    req: &AppendMessages,
    messages: &[Value],
    now: OffsetDateTime,
) -> Result<Appended, DomainError> {
    check_batch(messages.len())?;
    let s = &state.session;
    let held = head_of(s);
    let answer = |head: Head| SessionHead {
        session_id: s.key.session_id.clone(),
        protocol: s.key.protocol.clone(),
        head,
    };
    if req.after != held {
        if is_repeat(protocol, state, req, messages) {
            return Ok(Appended::Repeat(answer(held)));
        }
        return Err(DomainError::HeadMismatch {
            message: format!(
                "The batch must extend the head this host holds ({} messages, {}); nothing was stored.",
                held.count, held.hash
            ),
            head: held,
        });
    }
    let stored: Vec<Value> = state
        .messages
        .iter()
        .map(parse_stored)
        .collect::<Result<_, _>>()?;
    let keys = keys_of(s)?;
    let transcript = protocol::Transcript {
        session_id: &s.key.session_id,
        keys: &keys,
        stored: &stored,
        head: &held,
    };
    let ext = protocol.extend(&transcript, messages)?;
    let mut next = s.clone();
    next.head_count = ext.head.count;
    next.head_hash = ext.head.hash.clone();
    next.state = ext.state.clone();
    next.updated_at = anp::api::format_timestamp(now);
    let mut commit = GateCommit::on(next);
    commit.messages = stored_messages(&req.messages, &ext, s.head_count);
    let all: Vec<Value> = stored.into_iter().chain(messages.iter().cloned()).collect();
    let at = anp::api::format_timestamp(now);
    for r in state.requests.iter().filter(|r| r.status == "pending") {
        let index = (r.seq as usize).saturating_sub(1);
        if protocol.awaited(&all, index, &s.counterparty_id).is_err() {
            commit.request_changes.push(RequestChange::Settle {
                request_id: r.request_id.clone(),
                status: RequestState::Superseded.as_str().to_owned(),
                at: at.clone(),
                reason: None,
                counter_terms: None,
            });
        }
    }
    Ok(Appended::Commit(Box::new(commit), answer(ext.head)))
}

/// True when the batch is exactly what is stored after `after` (a retry
/// whose answer was lost).
fn is_repeat(
    protocol: GateProtocol,
    state: &GateState,
    req: &AppendMessages,
    messages: &[Value],
) -> bool {
    let start = req.after.count as usize;
    let hash_at = |seq: u64| {
        state
            .messages
            .iter()
            .find(|m| m.seq == seq)
            .map(|m| m.hash.as_str())
    };
    let linked = if start == 0 {
        false
    } else {
        hash_at(req.after.count) == Some(req.after.hash.as_str())
    };
    linked
        && start + messages.len() == state.messages.len()
        && messages
            .iter()
            .enumerate()
            .all(|(i, m)| protocol.message_hash(m).as_deref() == hash_at((start + i + 1) as u64))
}

/// What a request does: nothing (the same request again) or a commit.
pub enum Requested {
    /// The same request id and body again: the request as it stands.
    Repeat(RequestAccepted),
    /// The commit to apply, and the answer once applied.
    Commit(Box<GateCommit>, RequestAccepted),
}

fn accepted(row: &GateRequestRow, now: OffsetDateTime) -> RequestAccepted {
    RequestAccepted {
        request_id: row.request_id.clone(),
        status: views::status_at(row, now),
        expires_at: row.expires_at.clone(),
        approvals_required: row.approvals_required,
        amount: row.amount.clone(),
        threshold: row.threshold.clone(),
    }
}

fn parse_amount(what: &str, text: &str) -> Result<Amount, DomainError> {
    text.parse::<Amount>()
        .map_err(|e| DomainError::Invalid(format!("{what}: {e}.")))
}

/// The threshold and the approvals a request for `amount` needs under the
/// org's policy. `strict`: the host could not read the amount from the
/// offer, so the policy's strictest rule applies.
fn policy_for(org: &Org, amount: &Amount, strict: bool) -> (String, u32) {
    match org.policy() {
        Ok(p) => {
            let threshold = p.approval.above_total;
            let required = if strict || amount.value > threshold {
                p.approval.approvers_required
            } else {
                1
            };
            (format!("{} {}", threshold, amount.currency), required)
        }
        // Unreadable policy: demand the most any policy may ask.
        Err(_) => (format!("{} {}", Decimal::ZERO, amount.currency), 20),
    }
}

/// Plans a request for a decision on the counterparty's standing offer.
pub fn plan_request(
    protocol: GateProtocol,
    state: &GateState,
    org: &Org,
    req: &RequestDecision,
    body_sha256: &str,
    now: OffsetDateTime,
) -> Result<Requested, DomainError> {
    check_id("request_id", &req.request_id)?;
    if let Some(earlier) = state
        .requests
        .iter()
        .find(|r| r.request_id == req.request_id)
    {
        if earlier.body_sha256 == body_sha256 {
            return Ok(Requested::Repeat(accepted(earlier, now)));
        }
        return Err(DomainError::RequestConflict(format!(
            "request_id {} was already used for a different request in this session.",
            req.request_id
        )));
    }
    let s = &state.session;
    let Some(position) = state
        .messages
        .iter()
        .position(|m| m.hash == req.message_hash)
    else {
        return Err(DomainError::Invalid(format!(
            "message_hash {} names no message mirrored in this session.",
            req.message_hash
        )));
    };
    if let Some(open) = state.requests.iter().find(|r| {
        r.message_hash == req.message_hash && views::status_at(r, now) == RequestState::Pending
    }) {
        return Err(DomainError::RequestConflict(format!(
            "request {} already asks about this message and is pending.",
            open.request_id
        )));
    }
    let GateAction::Accept = req.action;
    let messages: Vec<Value> = state
        .messages
        .iter()
        .map(parse_stored)
        .collect::<Result<_, _>>()?;
    let awaited = protocol.awaited(&messages, position, &s.counterparty_id)?;
    let stated = req
        .amount
        .as_deref()
        .map(|t| parse_amount("amount", t))
        .transpose()?;
    let (amount_text, amount, strict) = match (&awaited.amount, &stated) {
        (Some(offered), Some(said)) => {
            if offered.value != said.value || offered.currency != said.currency {
                return Err(DomainError::AmountMismatch(format!(
                    "The request states {said} but the offer's price is {offered}."
                )));
            }
            (req.amount.clone().unwrap_or_default(), said.clone(), false)
        }
        (Some(offered), None) => (offered.to_string(), offered.clone(), false),
        (None, Some(said)) => (req.amount.clone().unwrap_or_default(), said.clone(), true),
        (None, None) => {
            return Err(DomainError::Invalid(
                "The offer names no price this host can read exactly; state the amount (\"<decimal> <ISO 4217 code>\").".into(),
            ))
        }
    };
    let Some(asked) = anp::api::parse_timestamp(&req.expires_at) else {
        return Err(DomainError::Invalid(
            "expires_at must be an RFC 3339 time with an offset (2026-12-02T09:00:00Z).".into(),
        ));
    };
    let expires = match awaited.expires {
        Some(own) if own < asked => own,
        _ => asked,
    };
    if expires <= now {
        return Err(DomainError::OfferExpired(format!(
            "The request would expire at {} (the earlier of expires_at and the offer's own validity), which has passed.",
            anp::api::format_timestamp(expires)
        )));
    }
    // The org's policy of authority routes it; an org without one keeps
    // its old threshold, which is also what its receipts name.
    let mut facts = ::authority::Facts::new(
        protocol.authority_protocol(),
        (!strict).then(|| ::authority::Money {
            value: amount.value,
            currency: amount.currency.clone(),
        }),
    );
    facts.counterparty = s
        .counterparty_org
        .clone()
        .or_else(|| s.counterparty_name.clone());
    facts.skus = awaited.skus.clone();
    facts.categories = awaited.categories.clone();
    let route = crate::domain::authority::route(org, &facts)?;
    let (threshold, approvals_required) = match route.policy_version {
        None => policy_for(org, &amount, strict),
        Some(_) => (
            route
                .route
                .threshold
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_else(|| format!("0 {}", amount.currency)),
            route.approvals_required(),
        ),
    };
    let row = GateRequestRow {
        request_id: req.request_id.clone(),
        message_hash: req.message_hash.clone(),
        seq: position as u64 + 1,
        kind: awaited.kind,
        action: "accept".into(),
        amount: amount_text,
        threshold,
        expires_at: anp::api::format_timestamp(expires),
        expires_unix: expires.unix_timestamp(),
        status: RequestState::Pending.as_str().to_owned(),
        approvals_required,
        body_sha256: body_sha256.to_owned(),
        created_at: anp::api::format_timestamp(now),
        decided_at: None,
        reason: None,
        counter_terms: None,
        held_reason: None,
        route: Some(route.to_text()?),
        extensions: None,
    };
    let answer = accepted(&row, now);
    let mut next = s.clone();
    next.updated_at = anp::api::format_timestamp(now);
    let mut commit = GateCommit::on(next);
    commit.new_request = Some(row);
    Ok(Requested::Commit(Box::new(commit), answer))
}
