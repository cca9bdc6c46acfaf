//! Plain terms (docs/gate-api.md, "Plain terms"): an agent of the org's
//! that speaks no negotiation protocol states the terms it would commit to;
//! the host reads them strictly (`crates/plain`), writes them as the next
//! entry of the thread's log, signed with its platform key, and asks the
//! org's people exactly as the gate asks about any offer (the same
//! request, route, deadline and receipts). The agent then reports what it
//! did, which the host writes into the log too, and answers with the
//! breach when the report breaks the decision.
//!
//! A thread is a gate session of protocol `plain`, named by its first
//! request's id; an agent names requests, never threads.

use countersign_host_api::gate::{
    AppendMessages, CreateSession, GateAction, GateCounterparty, PlainAnswer, PlainOutcomeReport,
    PlainRequest, RequestDecision, RequestState,
};
use serde_json::value::RawValue;
use serde_json::Value;
use time::OffsetDateTime;

use super::gate as gate_service;
use super::{busy, ATTEMPTS};
use crate::auth::GateAgent;
use crate::domain::gate::{self, plain as plain_gate, views, Appended, GateProtocol};
use crate::domain::DomainError;
use crate::store::{GateKey, GateState};
use crate::Host;

fn plain_agent(agent: &GateAgent) -> Result<(), DomainError> {
    match gate::agent_protocol(agent)? {
        GateProtocol::Plain => Ok(()),
        other => Err(DomainError::UnknownProtocol(format!(
            "This agent was enrolled for {}; plain terms are asked by an agent enrolled for plain (an admin's `agent enroll --protocol plain` or `agent mcp-agent`).",
            other.name()
        ))),
    }
}

fn key(agent: &GateAgent, session_id: &str) -> GateKey {
    GateKey {
        org_handle: agent.org_handle.clone(),
        protocol: GateProtocol::Plain.name().to_owned(),
        session_id: session_id.to_owned(),
    }
}

/// The thread holding `request_id` of this agent's, if any.
async fn thread_of(
    host: &Host,
    agent: &GateAgent,
    request_id: &str,
) -> Result<Option<GateState>, DomainError> {
    let Some(session_id) = host
        .store()
        .gate()
        .gate_request_session(&agent.id, GateProtocol::Plain.name(), request_id)
        .await?
    else {
        return Ok(None);
    };
    match host
        .store()
        .gate()
        .gate_state(&key(agent, &session_id))
        .await?
    {
        Some(state) if state.session.agent_id == agent.id => Ok(Some(state)),
        // Another agent's request reads as none.
        _ => Ok(None),
    }
}

/// A field of the terms that does not read, named from the request's root.
fn terms_error(e: plain::TermsError) -> DomainError {
    if e.field == "terms" {
        DomainError::Invalid(format!("terms: {}.", e.problem))
    } else {
        DomainError::Invalid(format!("terms.{e}."))
    }
}

fn not_found(request_id: &str) -> DomainError {
    DomainError::NotFound(format!(
        "request_id: you have no plain-terms request {request_id:?}."
    ))
}

fn raw(entry: &Value) -> Result<Box<RawValue>, DomainError> {
    RawValue::from_string(entry.to_string()).map_err(|e| DomainError::Internal(e.to_string()))
}

fn messages(state: &GateState) -> Result<Vec<Value>, DomainError> {
    state.messages.iter().map(gate::parse_stored).collect()
}

fn answer(
    state: &GateState,
    request_id: &str,
    breach: Option<String>,
    now: OffsetDateTime,
) -> Result<PlainAnswer, DomainError> {
    let row = state
        .requests
        .iter()
        .find(|r| r.request_id == request_id)
        .ok_or_else(|| not_found(request_id))?;
    let entry = state
        .messages
        .iter()
        .find(|m| m.hash == row.message_hash)
        .map(gate::parse_stored)
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(PlainAnswer {
        session_id: state.session.key.session_id.clone(),
        request: views::request_status(row, &state.receipts, now, false)?,
        entry,
        breach,
    })
}

/// `POST /plain`: reads the terms, writes them into the thread's log and
/// asks the org's people. Answers the request and whether it is new.
/// `body` is the request's identity for repeats.
pub async fn ask(
    host: &Host,
    agent: &GateAgent,
    req: &PlainRequest,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<(PlainAnswer, bool), DomainError> {
    plain_agent(agent)?;
    gate::check_id("request_id", &req.request_id)?;
    if let Some(r) = &req.revises {
        gate::check_id("revises", r)?;
    }
    let terms = plain::read_terms(&req.terms).map_err(terms_error)?;
    let rationale = plain::read_rationale(req.rationale.as_ref())
        .map_err(|e| DomainError::Invalid(format!("{e}.")))?;
    match anp::api::parse_timestamp(&req.expires_at) {
        None => {
            return Err(DomainError::Invalid(
                "expires_at must be an RFC 3339 time with an offset (2026-12-02T09:00:00Z).".into(),
            ))
        }
        Some(at) if at <= now => {
            return Err(DomainError::OfferExpired(format!(
                "expires_at {} has passed; ask with a deadline still ahead.",
                req.expires_at
            )))
        }
        Some(_) => {}
    }
    let body_sha256 = anp::canonical::sha256_hex(body);
    for _ in 0..ATTEMPTS {
        // A repeat: the same request id of this agent's again.
        if let Some(state) = thread_of(host, agent, &req.request_id).await? {
            let row = state
                .requests
                .iter()
                .find(|r| r.request_id == req.request_id)
                .ok_or_else(|| not_found(&req.request_id))?;
            if row.body_sha256 != body_sha256 {
                return Err(DomainError::RequestConflict(format!(
                    "request_id {} was already used for other terms.",
                    req.request_id
                )));
            }
            return Ok((answer(&state, &req.request_id, None, now)?, false));
        }
        let thread = match &req.revises {
            None => None,
            Some(earlier) => Some(thread_of(host, agent, earlier).await?.ok_or_else(|| {
                DomainError::Invalid(format!(
                    "revises: you have no plain-terms request {earlier:?} to revise."
                ))
            })?),
        };
        let session_id = thread
            .as_ref()
            .map_or(req.request_id.clone(), |t| t.session.key.session_id.clone());
        if thread.is_none()
            && host
                .store()
                .gate()
                .gate_state(&key(agent, &session_id))
                .await?
                .is_some()
        {
            // A thread is named by its first request's id, within the org.
            return Err(DomainError::RequestConflict(format!(
                "request_id {session_id} already names a thread of your organization's; choose another id."
            )));
        }
        let (seq, prev_hash) = thread
            .as_ref()
            .map_or((1, plain::GENESIS_HASH.to_owned()), |t| {
                (t.session.head_count + 1, t.session.head_hash.clone())
            });
        if let Some(t) = &thread {
            if t.session.counterparty_id != terms.value["counterparty"]["id"] {
                return Err(DomainError::Invalid(format!(
                    "terms.counterparty.id: a revision is for the same counterparty as the request it revises ({:?}).",
                    t.session.counterparty_id
                )));
            }
        }
        let at = anp::api::format_timestamp(now);
        let mut entry = plain::entry::terms_entry(
            plain::entry::Place {
                session_id: &session_id,
                seq,
                prev_hash: &prev_hash,
                at: &at,
            },
            plain::entry::AgentRef {
                id: &agent.id,
                name: &agent.name,
            },
            &req.request_id,
            req.revises.as_deref(),
            &terms.value,
            rationale.as_deref(),
        );
        plain::entry::sign(&mut entry, host.platform_key());
        let entry_hash = plain::hash(&entry);
        // The entry and the request about it are one commit: nothing can
        // leave terms on the log that nobody was asked about.
        let (mut commit, after) = match &thread {
            None => {
                let create = CreateSession {
                    protocol: GateProtocol::Plain.name().to_owned(),
                    session_id: session_id.clone(),
                    keys: [(
                        plain_gate::HOST_PARTY.to_owned(),
                        host.platform_public_key().to_owned(),
                    )]
                    .into_iter()
                    .collect(),
                    self_party: agent.id.clone(),
                    counterparty: GateCounterparty {
                        id: terms.value["counterparty"]["id"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        name: terms.value["counterparty"]["name"]
                            .as_str()
                            .map(str::to_owned),
                        organization: None,
                    },
                    messages: vec![raw(&entry)?],
                };
                let (commit, _) = gate::plan_create(
                    GateProtocol::Plain,
                    agent,
                    &create,
                    std::slice::from_ref(&entry),
                    &body_sha256,
                    now,
                )?;
                let after = GateState {
                    session: commit.session.clone(),
                    messages: commit.messages.clone(),
                    requests: Vec::new(),
                    receipts: Vec::new(),
                };
                (commit, after)
            }
            Some(state) => {
                let append = AppendMessages {
                    after: crate::domain::Head {
                        count: state.session.head_count,
                        hash: state.session.head_hash.clone(),
                    },
                    messages: vec![raw(&entry)?],
                };
                let Appended::Commit(commit, _) = gate::plan_append(
                    GateProtocol::Plain,
                    state,
                    &append,
                    std::slice::from_ref(&entry),
                    now,
                )?
                else {
                    continue;
                };
                (*commit.clone(), after_append(state, &commit))
            }
        };
        let decision = RequestDecision {
            request_id: req.request_id.clone(),
            message_hash: entry_hash,
            action: GateAction::Accept,
            amount: None,
            expires_at: req.expires_at.clone(),
        };
        let org = super::org_of(host, &agent.org_handle).await?;
        match gate::plan_request(
            GateProtocol::Plain,
            &after,
            &org,
            &decision,
            &body_sha256,
            now,
        )? {
            gate::Requested::Commit(asked, _) => commit.new_request = asked.new_request,
            gate::Requested::Repeat(_) => continue,
        }
        if !gate_service::try_commit(host, &commit).await? {
            continue;
        }
        settle_hints(host, agent, &session_id, &commit);
        let state = gate_service::owned(host, agent, &session_id).await?;
        return Ok((answer(&state, &req.request_id, None, now)?, true));
    }
    Err(busy())
}

/// The thread as it will be once `commit` (an append) lands: its new
/// head and entries, and the requests it settles.
fn after_append(state: &GateState, commit: &crate::store::GateCommit) -> GateState {
    let mut after = state.clone();
    after.session = commit.session.clone();
    after.messages.extend(commit.messages.iter().cloned());
    for change in &commit.request_changes {
        if let crate::store::RequestChange::Settle {
            request_id, status, ..
        } = change
        {
            if let Some(row) = after
                .requests
                .iter_mut()
                .find(|r| &r.request_id == request_id)
            {
                row.status = status.clone();
            }
        }
    }
    after
}

fn settle_hints(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    commit: &crate::store::GateCommit,
) {
    for change in &commit.request_changes {
        if let crate::store::RequestChange::Settle {
            request_id, status, ..
        } = change
        {
            gate_service::hint(host, agent, session_id, request_id, status);
        }
    }
}

/// `GET /plain/:request_id`: the request as it stands.
pub async fn read(
    host: &Host,
    agent: &GateAgent,
    request_id: &str,
    now: OffsetDateTime,
) -> Result<PlainAnswer, DomainError> {
    plain_agent(agent)?;
    let state = thread_of(host, agent, request_id)
        .await?
        .ok_or_else(|| not_found(request_id))?;
    answer(&state, request_id, None, now)
}

/// The session a plain-terms request of this agent's is in (MCP's tools
/// take a request id alone for plain terms).
pub async fn session_of(
    host: &Host,
    agent: &GateAgent,
    request_id: &str,
) -> Result<String, DomainError> {
    plain_agent(agent)?;
    thread_of(host, agent, request_id)
        .await?
        .map(|s| s.session.key.session_id)
        .ok_or_else(|| not_found(request_id))
}

/// Why an outcome breaks the request's decision, if it does.
fn breach_of(
    status: RequestState,
    outcome: plain::Outcome,
    executed: Option<&Value>,
    approved: &Value,
) -> Option<String> {
    if outcome != plain::Outcome::Executed {
        return None;
    }
    match status {
        RequestState::Approved if executed == Some(approved) => None,
        RequestState::Approved => {
            Some("The agent executed terms other than the ones a person approved.".into())
        }
        RequestState::Pending | RequestState::Superseded => {
            Some("The agent executed before anyone decided.".into())
        }
        RequestState::Denied | RequestState::Countered => {
            Some("The agent executed after a person declined.".into())
        }
        RequestState::Expired => {
            Some("The agent executed after the request expired undecided.".into())
        }
    }
}

/// `POST /plain/:request_id/outcome`: the agent's report, written into the
/// log (so the console sees it), answered with the breach if it is one.
pub async fn report(
    host: &Host,
    agent: &GateAgent,
    request_id: &str,
    req: &PlainOutcomeReport,
    now: OffsetDateTime,
) -> Result<PlainAnswer, DomainError> {
    plain_agent(agent)?;
    let outcome = plain::Outcome::parse(&req.outcome).ok_or_else(|| {
        DomainError::Invalid(format!(
            "outcome: {:?} is not executed or abandoned.",
            req.outcome
        ))
    })?;
    let executed = match (outcome, &req.terms) {
        (plain::Outcome::Executed, Some(t)) => {
            Some(plain::read_terms(t).map_err(terms_error)?.value)
        }
        (plain::Outcome::Executed, None) => {
            return Err(DomainError::Invalid(
                "terms: an execution names the terms executed, exactly.".into(),
            ))
        }
        (plain::Outcome::Abandoned, Some(_)) => {
            return Err(DomainError::Invalid(
                "terms: an abandonment names no terms.".into(),
            ))
        }
        (plain::Outcome::Abandoned, None) => None,
    };
    for _ in 0..ATTEMPTS {
        let state = thread_of(host, agent, request_id)
            .await?
            .ok_or_else(|| not_found(request_id))?;
        let all = messages(&state)?;
        let row = state
            .requests
            .iter()
            .find(|r| r.request_id == request_id)
            .ok_or_else(|| not_found(request_id))?;
        let asked = all
            .iter()
            .find(|m| m.get("request_id").and_then(Value::as_str) == Some(request_id))
            .and_then(|m| m.get("terms"))
            .cloned()
            .unwrap_or(Value::Null);
        let status = views::status_at(row, now);
        // The same report again (its answer was lost): answered again.
        if let Some(last) = all.last().filter(|m| {
            m.get("type").and_then(Value::as_str) == Some(plain::OUTCOME)
                && m.get("request_id").and_then(Value::as_str) == Some(request_id)
        }) {
            let same = last.get("outcome").and_then(Value::as_str) == Some(outcome.name())
                && last.get("terms").filter(|t| !t.is_null()) == executed.as_ref();
            if same {
                let breach = breach_of(status, outcome, executed.as_ref(), &asked);
                return answer(&state, request_id, breach, now);
            }
        }
        let latest = plain::entry::standing(&all)
            .and_then(|i| all[i].get("request_id"))
            .and_then(Value::as_str);
        if latest != Some(request_id) {
            return Err(DomainError::NotStanding(format!(
                "request_id: {request_id} is not the thread's latest request (a revision followed it, or its outcome was reported)."
            )));
        }
        let breach = breach_of(status, outcome, executed.as_ref(), &asked);
        let session_id = state.session.key.session_id.clone();
        let at = anp::api::format_timestamp(now);
        let mut entry = plain::entry::outcome_entry(
            plain::entry::Place {
                session_id: &session_id,
                seq: state.session.head_count + 1,
                prev_hash: &state.session.head_hash,
                at: &at,
            },
            plain::entry::AgentRef {
                id: &agent.id,
                name: &agent.name,
            },
            request_id,
            outcome,
            executed.as_ref(),
        );
        plain::entry::sign(&mut entry, host.platform_key());
        let append = AppendMessages {
            after: crate::domain::Head {
                count: state.session.head_count,
                hash: state.session.head_hash.clone(),
            },
            messages: vec![raw(&entry)?],
        };
        if let Appended::Commit(commit, _) = gate::plan_append(
            GateProtocol::Plain,
            &state,
            &append,
            std::slice::from_ref(&entry),
            now,
        )? {
            if gate_service::try_commit(host, &commit).await? {
                settle_hints(host, agent, &session_id, &commit);
                let state = gate_service::owned(host, agent, &session_id).await?;
                return answer(&state, request_id, breach, now);
            }
        }
    }
    Err(busy())
}
