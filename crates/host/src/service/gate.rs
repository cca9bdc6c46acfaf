//! The gate agents' operations (docs/gate-api.md): read the session, let
//! the domain verify and plan, commit with a compare-and-swap on the
//! session's version, and plan again when another request changed it
//! meanwhile. Nothing that fails verification reaches the store.

use countersign_host_api::gate::{
    parse_messages, AppendMessages, CreateSession, GateEnrollRequest, GateEnrollResponse,
    GateRequestStatus, RequestAccepted, RequestDecision, SessionHead, SessionView,
};
use serde_json::Value;
use time::OffsetDateTime;

use super::{busy, ATTEMPTS};
use crate::auth::GateAgent;
use crate::domain::gate::{self, views, Appended, Requested};
use crate::domain::{enrollment, DomainError, Head};
use crate::ratelimit::Scope;
use crate::store::{CommitError, GateCommit, GateKey, GateState, RequestChange};
use crate::Host;

/// Applies `commit`; `Ok(false)` when it conflicted and must be planned again.
pub(crate) async fn try_commit(host: &Host, commit: &GateCommit) -> Result<bool, DomainError> {
    match host.store().gate().gate_commit(commit).await {
        Ok(()) => Ok(true),
        Err(CommitError::Conflict) => {
            tokio::task::yield_now().await;
            Ok(false)
        }
        Err(CommitError::Store(e)) => Err(e.into()),
    }
}

/// `POST /enroll`: a one-time code makes a gate agent of its org and protocol.
pub async fn enroll(
    host: &Host,
    req: &GateEnrollRequest,
    own_authorities: &[String],
    now: OffsetDateTime,
) -> Result<GateEnrollResponse, DomainError> {
    let accept_v1 = host.config().accept_v1_signatures;
    enrollment::check_proof(
        &enrollment::Claim::gate_agent(req),
        own_authorities,
        accept_v1,
    )?;
    let code_hash = crate::ids::code_hash(&req.code);
    let repo = host.store().gate();
    let code = repo.gate_code(&code_hash).await?;
    let agent = enrollment::gate_agent(req, code, now)?;
    if let Some(url) = &agent.callback_url {
        crate::callback::check(url, &host.config().callback_networks)
            .map_err(|e| DomainError::Invalid(format!("{e}.")))?;
    }
    if !repo
        .enroll_gate_agent(&code_hash, &agent, now.unix_timestamp())
        .await?
    {
        return Err(enrollment::bad_code());
    }
    Ok(GateEnrollResponse {
        agent_id: agent.id,
        org: agent.org_handle,
        protocol: agent.protocol,
        platform_key: host.platform_public_key().to_owned(),
        platform_fingerprint: host.platform_fingerprint().to_owned(),
    })
}

/// Plain terms are never mirrored: the host writes their log itself.
fn mirrored(protocol: gate::GateProtocol) -> Result<(), DomainError> {
    if protocol == gate::GateProtocol::Plain {
        return Err(DomainError::UnknownProtocol(
            "Plain terms are not mirrored: ask with POST /api/gate/v1/plain (docs/gate-api.md, \"Plain terms\").".into(),
        ));
    }
    Ok(())
}

fn key_of(agent: &GateAgent, session_id: &str) -> GateKey {
    GateKey {
        org_handle: agent.org_handle.clone(),
        protocol: agent.protocol.clone(),
        session_id: session_id.to_owned(),
    }
}

/// The agent's own session; anything else is the uniform refusal.
pub(crate) async fn owned(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
) -> Result<GateState, DomainError> {
    match host
        .store()
        .gate()
        .gate_state(&key_of(agent, session_id))
        .await?
    {
        Some(state) if state.session.agent_id == agent.id => Ok(state),
        _ => Err(DomainError::Unauthorized),
    }
}

fn messages_of(raw: &[Box<serde_json::value::RawValue>]) -> Result<Vec<Value>, DomainError> {
    parse_messages(raw).map_err(|e| DomainError::Invalid(format!("messages: {e}.")))
}

/// `POST /sessions`: verifies the whole transcript, then stores it.
pub async fn create_session(
    host: &Host,
    agent: &GateAgent,
    req: &CreateSession,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<SessionHead, DomainError> {
    let protocol = gate::protocol_for(agent, &req.protocol)?;
    mirrored(protocol)?;
    gate::check_id("session_id", &req.session_id)?;
    let messages = messages_of(&req.messages)?;
    let body_sha256 = anp::canonical::sha256_hex(body);
    let key = key_of(agent, &req.session_id);
    for _ in 0..ATTEMPTS {
        if let Some(state) = host.store().gate().gate_state(&key).await? {
            return gate::existing(&state, agent, &body_sha256);
        }
        let (commit, head) = gate::plan_create(protocol, agent, req, &messages, &body_sha256, now)?;
        if try_commit(host, &commit).await? {
            return Ok(head);
        }
    }
    Err(busy())
}

/// `POST /sessions/:id/messages`: a batch that extends the stored head.
pub async fn append(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    req: &AppendMessages,
    now: OffsetDateTime,
) -> Result<SessionHead, DomainError> {
    let protocol = gate::agent_protocol(agent)?;
    mirrored(protocol)?;
    let mut state = owned(host, agent, session_id).await?;
    host.limiter()
        .check(
            Scope::Session,
            &format!("gate:{}:{}:{session_id}", agent.org_handle, agent.protocol),
        )
        .await?;
    let messages = messages_of(&req.messages)?;
    for _ in 0..ATTEMPTS {
        match gate::plan_append(protocol, &state, req, &messages, now)? {
            Appended::Repeat(head) => return Ok(head),
            Appended::Commit(commit, head) => {
                if try_commit(host, &commit).await? {
                    for change in &commit.request_changes {
                        if let RequestChange::Settle {
                            request_id, status, ..
                        } = change
                        {
                            hint(host, agent, session_id, request_id, status);
                        }
                    }
                    return Ok(head);
                }
            }
        }
        state = owned(host, agent, session_id).await?;
    }
    Err(busy())
}

/// `GET /sessions/:id`.
pub async fn session(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
) -> Result<SessionView, DomainError> {
    let state = owned(host, agent, session_id).await?;
    let s = state.session;
    Ok(SessionView {
        session_id: s.key.session_id,
        protocol: s.key.protocol,
        head: Head {
            count: s.head_count,
            hash: s.head_hash,
        },
        state: s.state,
    })
}

/// `POST /sessions/:id/requests` as an agent sends it: a request about a
/// mirrored message (plain terms are asked about at `/plain`, whose
/// requests the host makes itself).
pub async fn ask(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    req: &RequestDecision,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<(RequestAccepted, bool), DomainError> {
    mirrored(gate::agent_protocol(agent)?)?;
    request_decision(host, agent, session_id, req, body, now).await
}

/// Makes a request about a stored message: answers it and whether it is new.
pub async fn request_decision(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    req: &RequestDecision,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<(RequestAccepted, bool), DomainError> {
    let protocol = gate::agent_protocol(agent)?;
    let body_sha256 = anp::canonical::sha256_hex(body);
    let org = super::org_of(host, &agent.org_handle).await?;
    for _ in 0..ATTEMPTS {
        let state = owned(host, agent, session_id).await?;
        match gate::plan_request(protocol, &state, &org, req, &body_sha256, now)? {
            Requested::Repeat(answer) => return Ok((answer, false)),
            Requested::Commit(commit, answer) => {
                if try_commit(host, &commit).await? {
                    return Ok((answer, true));
                }
            }
        }
    }
    Err(busy())
}

/// `GET /sessions/:id/requests/:request_id`.
pub async fn request(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    request_id: &str,
    now: OffsetDateTime,
) -> Result<GateRequestStatus, DomainError> {
    let state = owned(host, agent, session_id).await?;
    let row = state
        .requests
        .iter()
        .find(|r| r.request_id == request_id)
        .ok_or_else(|| {
            DomainError::NotFound(format!("There is no request {request_id} in this session."))
        })?;
    views::request_status(row, &state.receipts, now, false)
}

/// Sends the agent a hint that a request was settled, when it asked for hints.
pub(crate) fn hint(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    request_id: &str,
    status: &str,
) {
    if let Some(url) = &agent.callback_url {
        crate::callback::send(host, url, session_id, request_id, status);
    }
}

/// Marks every request whose time is up expired, and hints each agent that
/// asked for hints. Answers how many were marked.
pub async fn expire_requests(host: &Host) -> Result<usize, DomainError> {
    let now = host.clock().now();
    let expired = host
        .store()
        .gate()
        .expire_gate_requests(now.unix_timestamp(), &anp::api::format_timestamp(now))
        .await?;
    for e in &expired {
        if let Some(agent) = host.store().gate().gate_agent(&e.agent_id).await? {
            hint(host, &agent, &e.key.session_id, &e.request_id, "expired");
        }
    }
    Ok(expired.len())
}
