//! The approver API on gate sessions (docs/approver-api.md): their place in
//! the summary, their transcript in its own form, and decisions carried by
//! ApprovalReceipts. An approver sees the gate sessions of its own org;
//! anything else is the uniform refusal.

use countersign_host_api::approver::{GateDecisionResponse, GateLog, SessionSummary};
use time::OffsetDateTime;

use super::gate::{hint, try_commit};
use super::{busy, ATTEMPTS};
use crate::auth::Approver;
use crate::domain::decisions::Received;
use crate::domain::gate::decisions::{self, GateDecisionState};
use crate::domain::gate::{views, GateProtocol};
use crate::domain::DomainError;
use crate::store::{GateKey, GateState};
use crate::Host;

fn key_of(approver: &Approver, protocol: GateProtocol, session_id: &str) -> GateKey {
    GateKey {
        org_handle: approver.org_handle.clone(),
        protocol: protocol.name().to_owned(),
        session_id: session_id.to_owned(),
    }
}

async fn visible(host: &Host, key: &GateKey) -> Result<GateState, DomainError> {
    host.store()
        .gate()
        .gate_state(key)
        .await?
        .ok_or(DomainError::Unauthorized)
}

/// The approver's org's gate sessions, as the summary lists them.
pub async fn summary(
    host: &Host,
    approver: &Approver,
    enrolled: &[String],
    stand_ins: &[::authority::StandIn],
    now: OffsetDateTime,
) -> Result<Vec<SessionSummary>, DomainError> {
    let sandbox = approver.org_handle == crate::admin::SANDBOX_HANDLE;
    let asking = views::Asking {
        email: &approver.email,
        enrolled: &crate::domain::authority::people(enrolled),
        stand_ins,
    };
    host.store()
        .gate()
        .gate_summary(&approver.org_handle)
        .await?
        .iter()
        .map(|row| views::summary_session(row, now, sandbox, &asking))
        .collect()
}

/// `GET /sessions/<protocol>:<id>/log?after=N`.
pub async fn log(
    host: &Host,
    approver: &Approver,
    protocol: GateProtocol,
    session_id: &str,
    after: u64,
    now: OffsetDateTime,
) -> Result<GateLog, DomainError> {
    let state = visible(host, &key_of(approver, protocol, session_id)).await?;
    views::gate_log(&state, after, now)
}

/// `POST /sessions/<protocol>:<id>/requests/<request_id>/deadline`: an
/// approver who may decide the request moves its deadline later, with a
/// reason kept beside it; answers the request as it then stands.
pub async fn extend_deadline(
    host: &Host,
    approver: &Approver,
    protocol: GateProtocol,
    session_id: &str,
    request_id: &str,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<countersign_host_api::gate::GateRequestStatus, DomainError> {
    let req: countersign_host_api::gate::ExtendDeadlineRequest =
        crate::body::parse_json(body, "deadline")?;
    let key = key_of(approver, protocol, session_id);
    let org = super::org_of(host, &approver.org_handle).await?;
    for _ in 0..ATTEMPTS {
        let state = visible(host, &key).await?;
        let owner = host
            .store()
            .gate()
            .gate_agent(&state.session.agent_id)
            .await?
            .and_then(|a| a.owner_email);
        let enrolled = super::enrolled(host, approver).await?;
        let st = GateDecisionState {
            state,
            org: org.clone(),
            earlier: None,
            used_for_anp: false,
            enrolled,
            owner,
            stand_ins: super::stand_ins(host, &approver.org_handle, now).await?,
        };
        let commit =
            crate::domain::gate::deadline::extend(protocol, approver, &st, request_id, &req, now)?;
        if !try_commit(host, &commit).await? {
            continue;
        }
        let after = visible(host, &key).await?;
        let request = after
            .requests
            .iter()
            .find(|r| r.request_id == request_id)
            .ok_or_else(|| DomainError::Internal("an extended request vanished".into()))?;
        return views::request_status(request, &after.receipts, now, true);
    }
    Err(busy())
}

/// `POST /sessions/<protocol>:<id>/decisions`: applies (or replays) one
/// decision and answers the request as it then stands.
pub async fn decide(
    host: &Host,
    approver: &Approver,
    protocol: GateProtocol,
    session_id: &str,
    received: Received<'_>,
    now: OffsetDateTime,
) -> Result<GateDecisionResponse, DomainError> {
    let req = decisions::parse_request(received.body)?;
    let key = key_of(approver, protocol, session_id);
    let org = super::org_of(host, &approver.org_handle).await?;
    for _ in 0..ATTEMPTS {
        let state = visible(host, &key).await?;
        let earlier = host.store().gate().gate_decision(&req.decision_id).await?;
        let used_for_anp = host
            .store()
            .negotiations()
            .decision(&req.decision_id)
            .await?
            .is_some();
        let agent_id = state.session.agent_id.clone();
        let owner = host
            .store()
            .gate()
            .gate_agent(&agent_id)
            .await?
            .and_then(|a| a.owner_email);
        let enrolled = host
            .store()
            .principals()
            .enrolled_emails(&approver.org_handle)
            .await?;
        let st = GateDecisionState {
            state,
            org: org.clone(),
            earlier,
            used_for_anp,
            enrolled,
            owner,
            stand_ins: super::stand_ins(host, &approver.org_handle, now).await?,
        };
        let received = Received {
            body: received.body,
            headers: received.headers,
        };
        let decided = decisions::decide(protocol, approver, st, &req, received, now)?;
        let applied = match &decided.commit {
            None => true,
            Some(commit) => try_commit(host, commit).await?,
        };
        if !applied {
            continue;
        }
        if let Some(status) = decided.settled {
            if let Some(agent) = host.store().gate().gate_agent(&agent_id).await? {
                hint(
                    host,
                    &agent,
                    session_id,
                    &decided.request_id,
                    status.as_str(),
                );
            }
        }
        let after = visible(host, &key).await?;
        let request = after
            .requests
            .iter()
            .find(|r| r.request_id == decided.request_id)
            .ok_or_else(|| DomainError::Internal("a decided request vanished".into()))?;
        return Ok(GateDecisionResponse {
            decision_id: req.decision_id.clone(),
            outcome: decided.outcome,
            detail: decided.detail,
            request: views::request_status(request, &after.receipts, now, true)?,
        });
    }
    Err(busy())
}
