//! The host's operations, between the surfaces and the store: read what a
//! rule needs, let the domain plan, commit, and plan again when another
//! request (in this process or another) changed the session meanwhile.
//! Only the commit holds a write transaction; reads, signature checks,
//! sealing and the answer's log document happen outside it.
//!
//! This module holds the ANP sessions' operations (agent API and approver
//! API); [`gate`] the gate agents', [`approver_gate`] the approvers' on
//! gate sessions.

pub mod anex;
pub mod approver_anex;
pub mod approver_gate;
pub mod delegations;
pub mod gate;
pub mod mcp;
pub mod plain;

use anp::api::{OpenSessionRequest, RegisterRequest, RegisterResponse, SubmitEventRequest};
use anp::event::{ChainClaim, LogDocument, LogKeys, PublishedKey, SessionInfo};
use countersign_host_api::approver::{
    EnrollRequest, EnrollResponse, RotateKeyRequest, RotateKeyResponse, Summary,
};
use time::OffsetDateTime;

use crate::auth::{Agent, Approver, Checked};
use crate::domain::decisions::{self, Decided, DecisionState, Received};
use crate::domain::negotiation::{self, SessionState};
use crate::domain::{enrollment, parse_event, rotation, DomainError};
use crate::ratelimit::Scope;
use crate::store::{ApproverRow, Commit, CommitError, LogSnapshot, Rotated, Session};
use crate::Host;

/// How often a plan is redone after conflicting commits before giving up.
/// Each conflict means another commit to the same session succeeded, so
/// this bounds waiting, not progress.
pub(crate) const ATTEMPTS: usize = 200;

/// The org a caller acts for; one that no longer exists is unauthorized.
pub(crate) async fn org_of(host: &Host, handle: &str) -> Result<crate::store::Org, DomainError> {
    host.store()
        .negotiations()
        .org(handle)
        .await?
        .ok_or(DomainError::Unauthorized)
}

/// How the approver API names a session: an ANP session id, or
/// `<protocol>:<session_id>` for a gate session (ANP ids never hold a
/// colon; an unknown prefix is looked up as an ANP id and is not found).
pub enum SessionRef<'a> {
    /// An ANP session.
    Anp(&'a str),
    /// A gate session of this protocol.
    Gate(crate::domain::gate::GateProtocol, &'a str),
    /// An ANEX conversation (`anex:<context_id>`).
    Anex(&'a str),
}

impl<'a> SessionRef<'a> {
    /// Reads a session id from the approver API's path.
    pub fn parse(id: &'a str) -> SessionRef<'a> {
        match id.split_once(':') {
            Some((countersign_host_api::protocol::ANEX, sid)) => SessionRef::Anex(sid),
            Some((prefix, sid)) => match crate::domain::gate::GateProtocol::parse(prefix) {
                Some(protocol) => SessionRef::Gate(protocol, sid),
                None => SessionRef::Anp(id),
            },
            None => SessionRef::Anp(id),
        }
    }
}

pub(crate) fn busy() -> DomainError {
    DomainError::Internal("the session kept changing; gave up after many attempts".into())
}

/// Applies `commit`; `Ok(false)` when it conflicted and must be planned again.
async fn try_commit(host: &Host, commit: &Commit) -> Result<bool, DomainError> {
    crate::changes::touch(&commit.session.org_handle);
    let outcome = host.store().negotiations().commit(commit).await;
    Ok(settled(outcome).await?.is_some())
}

/// Applies `commit` and reads the session's log after `after` as it left
/// it (one statement on PostgreSQL); `Ok(None)` when it conflicted and
/// must be planned again.
async fn try_commit_logged(
    host: &Host,
    commit: &Commit,
    after: u64,
) -> Result<Option<LogSnapshot>, DomainError> {
    crate::changes::touch(&commit.session.org_handle);
    let outcome = host
        .store()
        .negotiations()
        .commit_and_log(commit, after)
        .await;
    settled(outcome).await
}

/// A commit's outcome: `None` when it conflicted (after letting the commit
/// that won go on), a store failure as the domain's error.
async fn settled<T>(outcome: Result<T, CommitError>) -> Result<Option<T>, DomainError> {
    match outcome {
        Ok(v) => Ok(Some(v)),
        Err(CommitError::Conflict) => {
            tokio::task::yield_now().await;
            Ok(None)
        }
        Err(CommitError::Store(e)) => Err(e.into()),
    }
}

/// SPEC §6.1: registers a key; the same key again answers the same agent.
pub async fn register(
    host: &Host,
    req: &RegisterRequest,
    now: OffsetDateTime,
) -> Result<(RegisterResponse, bool), DomainError> {
    let fresh = negotiation::registration(req, now)?;
    let stored = host.store().principals().register_agent(&fresh).await?;
    if stored.status == anp::api::AgentStatus::Revoked {
        return Err(DomainError::Unauthorized);
    }
    let created = stored.id == fresh.id;
    Ok((
        RegisterResponse {
            agent_id: stored.id,
            fingerprint: stored.fingerprint,
            status: stored.status,
            protocol: anp::PROTOCOL.to_owned(),
        },
        created,
    ))
}

/// SPEC §6.2: opens a session; answers its id.
pub async fn open_session(
    host: &Host,
    agent: &Agent,
    req: &OpenSessionRequest,
    now: OffsetDateTime,
) -> Result<String, DomainError> {
    let org = match negotiation::target_handle(&req.target)? {
        Some(handle) => host.store().negotiations().org(handle).await?,
        None => None,
    };
    let commit = negotiation::open_session(host.platform_key(), agent, org, req, now)?;
    if !try_commit(host, &commit).await? {
        return Err(DomainError::Internal("a fresh session id was taken".into()));
    }
    Ok(commit.session.id)
}

/// A session the agent owns; anything else is the uniform refusal.
pub async fn owned_session(
    host: &Host,
    agent: &Agent,
    session_id: &str,
) -> Result<Session, DomainError> {
    match host.store().negotiations().session(session_id).await? {
        Some(s) if s.agent_id == agent.id => Ok(s),
        _ => Err(DomainError::Unauthorized),
    }
}

/// SPEC §6.3: appends a vendor event to a session the agent owns, and runs
/// the buyer side; answers the session's whole log as the append left it
/// (what the append's answer carries). Spends the request's nonce first.
pub async fn submit_event(
    host: &Host,
    signed: Checked<Agent>,
    session_id: &str,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<LogSnapshot, DomainError> {
    let (agent, mut row) = spend_and_read_session(host, signed, session_id).await?;
    let agent = &agent;
    let req: SubmitEventRequest = crate::body::parse_json(body, "event")?;
    for _ in 0..ATTEMPTS {
        let state = SessionState {
            standing: row.standing.as_deref().map(parse_event).transpose()?,
            session: row.session,
            org: row.org,
        };
        let commit = negotiation::submit_event(agent, state, &req, now)?;
        if let Some(log) = try_commit_logged(host, &commit, 0).await? {
            return Ok(log);
        }
        row = owned_state(host, agent, session_id).await?;
    }
    Err(busy())
}

/// An append's first step: spends the nonce, applies the agent's limit,
/// then reads the session the agent owns and applies its limit; refusals
/// in that order. With a remembered agent on a store that keeps copies
/// (PostgreSQL), all of it is one statement
/// ([`crate::store::PrincipalRepo::spend_and_read_session`]); otherwise
/// one for the nonce and one for the session.
async fn spend_and_read_session(
    host: &Host,
    signed: Checked<Agent>,
    session_id: &str,
) -> Result<(Agent, crate::store::SessionRow), DomainError> {
    let limiter = host.limiter();
    let windows = (
        limiter.shared_window(Scope::Agent, &signed.principal().id),
        limiter.shared_window(Scope::Session, session_id),
    );
    if let (true, Some(agent_window), Some(session_window)) =
        (signed.remembered(), windows.0, windows.1)
    {
        let (nonce, expires_at) = signed.nonce();
        let start = host
            .store()
            .principals()
            .spend_and_read_session(
                signed.principal(),
                nonce,
                expires_at,
                &agent_window,
                limiter.max(Scope::Agent),
                session_id,
                &session_window,
            )
            .await?;
        if let Some(start) = start {
            let Some(agent) = start.agent else {
                return Err(signed.gone(host).await);
            };
            Checked::judge(host, &agent, start.spent).await?;
            return match start.session {
                Some((row, counted)) if row.session.agent_id == agent.id => {
                    limiter
                        .check_counted(Scope::Session, &row.session.id, counted)
                        .await?;
                    Ok((agent, row))
                }
                _ => Err(DomainError::Unauthorized),
            };
        }
    }
    let (agent, _) = signed.spend(host).await?;
    let row = owned_state_counted(host, &agent, session_id).await?;
    Ok((agent, row))
}

/// A session the agent owns, with its org and standing offer, with the
/// per-session limit applied (with shared limits, counted by the same
/// statement that reads the session, only when the agent owns it).
async fn owned_state_counted(
    host: &Host,
    agent: &Agent,
    session_id: &str,
) -> Result<crate::store::SessionRow, DomainError> {
    let Some(window) = host.limiter().shared_window(Scope::Session, session_id) else {
        let row = owned_state(host, agent, session_id).await?;
        host.limiter()
            .check(Scope::Session, &row.session.id)
            .await?;
        return Ok(row);
    };
    match host
        .store()
        .negotiations()
        .session_state_counting(session_id, &agent.id, &window)
        .await?
    {
        Some((row, counted)) if row.session.agent_id == agent.id => {
            host.limiter()
                .check_counted(Scope::Session, &row.session.id, counted)
                .await?;
            Ok(row)
        }
        _ => Err(DomainError::Unauthorized),
    }
}

/// A session the agent owns, with its org and standing offer.
async fn owned_state(
    host: &Host,
    agent: &Agent,
    session_id: &str,
) -> Result<crate::store::SessionRow, DomainError> {
    match host
        .store()
        .negotiations()
        .session_state(session_id)
        .await?
    {
        Some(row) if row.session.agent_id == agent.id => Ok(row),
        _ => Err(DomainError::Unauthorized),
    }
}

/// The session an approver may see.
pub async fn visible_session(
    host: &Host,
    approver: &Approver,
    session_id: &str,
) -> Result<Session, DomainError> {
    decisions::visible(
        host.store().negotiations().session(session_id).await?,
        approver,
    )
}

/// `GET /sessions/:id/approvals`: the host's record of every approval in
/// an ANP session of the approver's org.
pub async fn session_approvals(
    host: &Host,
    approver: &Approver,
    session_id: &str,
) -> Result<countersign_host_api::approver::SessionApprovals, DomainError> {
    visible_session(host, approver, session_id).await?;
    let rows = host
        .store()
        .negotiations()
        .session_approvals(session_id)
        .await?;
    decisions::session_approvals(&rows)
}

/// `POST /sessions/:id/decisions`: applies (or replays) one decision.
pub async fn decide(
    host: &Host,
    approver: &Approver,
    session_id: &str,
    received: Received<'_>,
    now: OffsetDateTime,
) -> Result<(String, Decided), DomainError> {
    let req = decisions::parse_request(received.body)?;
    if host
        .store()
        .gate()
        .gate_decision(&req.decision_id)
        .await?
        .is_some()
    {
        return Err(DomainError::DecisionConflict(format!(
            "decision_id {} was already used for a decision on a gate session.",
            req.decision_id
        )));
    }
    if host
        .store()
        .anex()
        .anex_decision(&req.decision_id)
        .await?
        .is_some()
    {
        return Err(DomainError::DecisionConflict(format!(
            "decision_id {} was already used for a decision on an ANEX conversation.",
            req.decision_id
        )));
    }
    let repo = host.store().negotiations();
    for _ in 0..ATTEMPTS {
        let row = match repo.session_state(session_id).await? {
            Some(row) if row.session.org_handle == approver.org_handle => row,
            _ => return Err(DomainError::Unauthorized),
        };
        let session = row.session;
        let reference = req.in_response_to.as_str();
        let pending = if session.status == "open" {
            repo.pending(&session.id, Some(reference)).await?.pop()
        } else {
            None
        };
        let answered_hash = decisions::answered_offer(reference, pending.as_ref()).to_owned();
        let answered = if answered_hash.starts_with("draft:") || answered_hash.is_empty() {
            None
        } else {
            repo.event_by_hash(&session.id, &answered_hash)
                .await?
                .map(|text| parse_event(&text))
                .transpose()?
        };
        let approvals = if pending.is_some() {
            repo.approvals(&session.id, reference).await?
        } else {
            Vec::new()
        };
        let enrolled = host
            .store()
            .principals()
            .enrolled_emails(&approver.org_handle)
            .await?;
        let stand_ins = stand_ins(host, &approver.org_handle, now).await?;
        let state = DecisionState {
            enrolled,
            stand_ins,
            org: row.org,
            standing: row.standing.as_deref().map(parse_event).transpose()?,
            earlier: repo.decision(&req.decision_id).await?,
            session,
            pending,
            approvals,
            answered,
        };
        let received = Received {
            body: received.body,
            headers: received.headers,
        };
        let decided = decisions::decide(host.platform_key(), approver, state, &req, received, now)?;
        match &decided.commit {
            None => return Ok((req.decision_id.clone(), decided)),
            Some(commit) => {
                if try_commit(host, commit).await? {
                    return Ok((req.decision_id.clone(), decided));
                }
            }
        }
    }
    Err(busy())
}

/// `GET /summary` for an approver's org; `enrolled` are the emails of its
/// approvers enrolled and not revoked ([`enrolled`]), `stand_ins` its
/// delegations in force at `now` ([`stand_ins`]), each read once for the
/// whole summary.
pub async fn summary(
    host: &Host,
    approver: &Approver,
    enrolled: &[String],
    stand_ins: &[::authority::StandIn],
    now: OffsetDateTime,
) -> Result<Summary, DomainError> {
    let rows = host
        .store()
        .negotiations()
        .summary(&approver.org_handle)
        .await?;
    decisions::summary(rows, &approver.email, enrolled, stand_ins, now)
}

/// The org's delegations in force at `now`: who may stand in for whom.
pub async fn stand_ins(
    host: &Host,
    org_handle: &str,
    now: OffsetDateTime,
) -> Result<Vec<::authority::StandIn>, DomainError> {
    let rows = host
        .store()
        .authority()
        .delegations_in_force(org_handle, now.unix_timestamp())
        .await?;
    Ok(crate::domain::delegation::stand_ins(&rows))
}

/// The emails of the approver's org's approvers enrolled and not revoked:
/// who holds the roles of its policy of authority now.
pub async fn enrolled(host: &Host, approver: &Approver) -> Result<Vec<String>, DomainError> {
    Ok(host
        .store()
        .principals()
        .enrolled_emails(&approver.org_handle)
        .await?)
}

/// `POST /keys/rotate`: the approver `old` (authenticated with its current
/// key, for the host `authority`) moves to a new key; asked again after it
/// moved, answers the same.
pub async fn rotate_key(
    host: &Host,
    old: &ApproverRow,
    req: &RotateKeyRequest,
    authority: &str,
    now: OffsetDateTime,
) -> Result<RotateKeyResponse, DomainError> {
    let answer = |new: &ApproverRow, at: &str| RotateKeyResponse {
        approver_id: new.id.clone(),
        fingerprint: new.fingerprint.clone(),
        previous_approver_id: old.id.clone(),
        previous_fingerprint: old.fingerprint.clone(),
        retired_at: at.to_owned(),
    };
    // Checked whether or not it moved already: a rotation asked again
    // must still be made by both keys, now.
    let (new, record) = rotation::rotation(old, req, authority, now)?;
    match host
        .store()
        .principals()
        .rotate_approver(&new, &record)
        .await?
    {
        Rotated::Now(new) => {
            // Whose key signs for the org changed: its consoles look again.
            crate::changes::touch(&old.org_handle);
            Ok(answer(&new, &record.rotated_at))
        }
        Rotated::Before(successor) => {
            rotation::already(&successor, req)?;
            Ok(answer(&successor, &successor.enrolled_at))
        }
        Rotated::Refused => Err(DomainError::Unauthorized),
    }
}

/// `POST /enroll`: a one-time code makes an approver.
pub async fn enroll(
    host: &Host,
    req: &EnrollRequest,
    own_authorities: &[String],
    now: OffsetDateTime,
) -> Result<EnrollResponse, DomainError> {
    let accept_v1 = host.config().accept_v1_signatures;
    enrollment::check_proof(
        &enrollment::Claim::approver(req),
        own_authorities,
        accept_v1,
    )?;
    let code_hash = crate::ids::code_hash(&req.code);
    let code = host
        .store()
        .principals()
        .enrollment_code(&code_hash)
        .await?;
    let approver = enrollment::approver(req, code, now)?;
    if !host
        .store()
        .principals()
        .enroll(&code_hash, &approver, now.unix_timestamp())
        .await?
    {
        return Err(enrollment::bad_code());
    }
    // Who holds its roles changed: its colleagues' consoles look again.
    crate::changes::touch(&approver.org_handle);
    Ok(EnrollResponse {
        approver_id: approver.id,
        fingerprint: approver.fingerprint,
        platform_key: host.platform_public_key().to_owned(),
        platform_fingerprint: host.platform_fingerprint().to_owned(),
        protocol: anp::PROTOCOL.to_owned(),
    })
}

fn log_keys(host: &Host, snapshot: &LogSnapshot) -> LogKeys {
    LogKeys {
        note: Some("vendor_agent: the registered agent key; buyer: this host's platform key, also published at /.well-known/anp.json".into()),
        vendor_agent: Some(PublishedKey {
            public_key: snapshot.vendor_key.clone(),
            fingerprint: snapshot.vendor_fingerprint.clone(),
        }),
        buyer: Some(PublishedKey {
            public_key: host.platform_public_key().to_owned(),
            fingerprint: host.platform_fingerprint().to_owned(),
        }),
    }
}

fn chain_claim(session: &Session) -> ChainClaim {
    ChainClaim {
        // Every stored event was sealed by EventDraft at append time, and
        // every vendor signature checked then.
        verified: true,
        head: session.chain_head.clone(),
    }
}

/// The `session` block.
pub fn info(session: &Session) -> SessionInfo {
    SessionInfo {
        id: session.id.clone(),
        sandbox: session.sandbox,
        status: session.status.clone(),
        opened_at: session.opened_at.clone(),
        closed_at: session.closed_at.clone(),
        event_count: session.event_count,
        chain_head: session.chain_head.clone(),
    }
}

async fn snapshot(host: &Host, session_id: &str, after: u64) -> Result<LogSnapshot, DomainError> {
    host.store()
        .negotiations()
        .log(session_id, after)
        .await?
        .ok_or(DomainError::Unauthorized)
}

/// The verifiable log document (SPEC §6.4), with the events after `after`.
pub async fn log_document(
    host: &Host,
    session_id: &str,
    after: u64,
) -> Result<LogDocument, DomainError> {
    let snap = snapshot(host, session_id, after).await?;
    Ok(LogDocument {
        protocol: anp::PROTOCOL.to_owned(),
        session: info(&snap.session),
        chain: chain_claim(&snap.session),
        keys: log_keys(host, &snap),
        events: snap
            .events
            .iter()
            .map(|text| parse_event(text))
            .collect::<Result<_, _>>()?,
    })
}

/// The log document as JSON text, built from the stored event text without
/// parsing it again: the hot path of every append and poll, whose cost
/// would otherwise grow with the session's length.
pub async fn log_json(host: &Host, session_id: &str, after: u64) -> Result<String, DomainError> {
    log_json_of(host, snapshot(host, session_id, after).await?)
}

/// [`log_json`] of a snapshot already read.
pub fn log_json_of(host: &Host, snap: LogSnapshot) -> Result<String, DomainError> {
    #[derive(serde::Serialize)]
    struct RawLog<'a> {
        protocol: &'a str,
        session: SessionInfo,
        chain: ChainClaim,
        keys: LogKeys,
        events: Vec<Box<serde_json::value::RawValue>>,
    }
    let keys = log_keys(host, &snap);
    let events = snap
        .events
        .into_iter()
        .map(|text| {
            serde_json::value::RawValue::from_string(text)
                .map_err(|e| DomainError::Internal(format!("stored event unreadable: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let raw = RawLog {
        protocol: anp::PROTOCOL,
        session: info(&snap.session),
        chain: chain_claim(&snap.session),
        keys,
        events,
    };
    serde_json::to_string(&raw).map_err(|e| DomainError::Internal(e.to_string()))
}
