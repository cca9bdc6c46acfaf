//! What the MCP tools do (docs/mcp.md), over the gate's own operations: an
//! agent asks about the counterparty's standing offer in a session it
//! mirrors, waits for the decision (bounded), reads it, and checks a
//! receipt. Nothing here approves anything: a decision comes only from a
//! person's console through the approver API.

use std::time::Duration;

use approval_receipt::receipt::{verify_receipt, ReceiptReport};
use countersign_host_api::gate::{GateAction, GateRequestStatus, RequestDecision, RequestState};
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;

use super::gate as gate_service;
use crate::auth::GateAgent;
use crate::domain::authority::StoredRoute;
use crate::domain::gate::{self, views};
use crate::domain::DomainError;
use crate::store::{GateRequestRow, GateState};
use crate::Host;

/// The longest one `wait_for_decision` call holds: under the 60-second
/// tool-call limit of common MCP clients.
pub const MAX_WAIT_SECONDS: u64 = 50;

/// The chain of approvals a request needs, as an agent may see it: the
/// rule's sentence and the steps (roles and how many of each), never who
/// holds them.
#[derive(Debug, Clone, Serialize)]
pub struct ChainView {
    /// Why this chain ("Hardware above 50,000 USD: rule 3").
    pub reason: String,
    /// The steps in order, each a set of roles decided in parallel.
    pub steps: Value,
    /// The policy version it was routed under, if the org has a policy.
    pub policy_version: Option<u64>,
}

/// A request as an MCP tool answers it: where it stands, with the chain.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionView {
    /// The session it is in.
    pub session_id: String,
    /// The request as the gate answers it (status, receipts, who decided).
    #[serde(flatten)]
    pub status: GateRequestStatus,
    /// The chain of approvals it needs.
    pub chain: ChainView,
    /// The message the request is about, exactly as the session holds it:
    /// what a receipt's `offer_hash` names (for plain terms, the host's
    /// signed entry of the terms).
    pub offer: Value,
    /// For a model: what to do now.
    pub next: String,
}

/// What an agent asks `request_decision`.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The gate session it mirrors.
    pub session_id: &'a str,
    /// Its id for the request.
    pub request_id: &'a str,
    /// The message to ask about; `None`: the counterparty's standing offer.
    pub message_hash: Option<&'a str>,
    /// The amount it read, checked against the offer.
    pub amount: Option<&'a str>,
    /// When it stops waiting.
    pub expires_at: &'a str,
}

/// `request_decision`: ask a person about the counterparty's standing offer
/// (or the message named) in a session the agent mirrors. Answers the
/// request and whether it is new.
pub async fn ask(
    host: &Host,
    agent: &GateAgent,
    ask: Ask<'_>,
    now: OffsetDateTime,
) -> Result<(DecisionView, bool), DomainError> {
    let Ask {
        session_id,
        request_id,
        message_hash,
        amount,
        expires_at,
    } = ask;
    gate::check_id("session_id", session_id)?;
    gate::check_id("request_id", request_id)?;
    let protocol = gate::agent_protocol(agent)?;
    if protocol == gate::GateProtocol::Plain {
        return Err(DomainError::UnknownProtocol(
            "This agent asks about plain terms: use ask_about_terms (request_decision asks about a message of a session you mirror).".into(),
        ));
    }
    let state = gate_service::owned(host, agent, session_id).await?;
    let message_hash = match message_hash {
        Some(hash) => hash.to_owned(),
        None => match state.requests.iter().find(|r| r.request_id == request_id) {
            // A retry asks about what the first call asked about.
            Some(earlier) => earlier.message_hash.clone(),
            None => gate::standing_offer(protocol, &state)?,
        },
    };
    let req = RequestDecision {
        request_id: request_id.to_owned(),
        message_hash,
        action: GateAction::Accept,
        amount: amount.map(str::to_owned),
        expires_at: expires_at.to_owned(),
    };
    // The request's identity for repeats: its canonical JSON, as if sent
    // over the gate's HTTP API.
    let body = serde_json::to_vec(&req).map_err(|e| DomainError::Internal(e.to_string()))?;
    let (_, created) = gate_service::ask(host, agent, session_id, &req, &body, now).await?;
    if created {
        crate::changes::announce_write(
            host,
            &crate::changes::Scope::Orgs(vec![agent.org_handle.clone()]),
        )
        .await;
    }
    Ok((
        read(host, agent, session_id, request_id, now).await?,
        created,
    ))
}

/// `get_decision`: the request as it stands now.
pub async fn read(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    request_id: &str,
    now: OffsetDateTime,
) -> Result<DecisionView, DomainError> {
    let state = gate_service::owned(host, agent, session_id).await?;
    let row = request_row(&state, request_id)?;
    let status = views::request_status(row, &state.receipts, now, false)?;
    let stored = StoredRoute::read(row.route.as_deref(), row.approvals_required)?;
    let offer = state
        .messages
        .iter()
        .find(|m| m.hash == row.message_hash)
        .map(gate::parse_stored)
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(DecisionView {
        session_id: session_id.to_owned(),
        next: next_step(
            &status,
            state.session.key.protocol == countersign_host_api::protocol::PLAIN,
        ),
        offer,
        chain: ChainView {
            reason: stored.route.reason.clone(),
            steps: serde_json::to_value(&stored.route.chain.steps)
                .map_err(|e| DomainError::Internal(e.to_string()))?,
            policy_version: stored.policy_version,
        },
        status,
    })
}

/// `wait_for_decision`: the request once it is no longer pending, or as it
/// stands after `wait` (at most [`MAX_WAIT_SECONDS`]). Woken by the same
/// announcement that wakes the consoles, in this process or (PostgreSQL)
/// another; never polls the store on a timer.
pub async fn wait(
    host: &Host,
    agent: &GateAgent,
    session_id: &str,
    request_id: &str,
    wait: Duration,
) -> Result<DecisionView, DomainError> {
    let deadline = tokio::time::Instant::now() + wait.min(Duration::from_secs(MAX_WAIT_SECONDS));
    let mut changes = host.changes().subscribe(&agent.org_handle);
    loop {
        changes.borrow_and_update();
        let view = read(host, agent, session_id, request_id, host.clock().now()).await?;
        if view.status.status != RequestState::Pending {
            return Ok(view);
        }
        // A pending request also ends by expiring, which no write
        // announces: wake at its expiry too.
        let expiry = views_expiry(&view.status)
            .map(|at| {
                let left = (at - host.clock().now()).max(time::Duration::ZERO);
                tokio::time::Instant::now()
                    + Duration::from_millis(u64::try_from(left.whole_milliseconds()).unwrap_or(0))
                    + Duration::from_millis(20)
            })
            .unwrap_or(deadline)
            .min(deadline);
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return read(host, agent, session_id, request_id, host.clock().now()).await;
                }
            }
            () = tokio::time::sleep_until(expiry) => {
                if expiry >= deadline {
                    return read(host, agent, session_id, request_id, host.clock().now()).await;
                }
            }
        }
    }
}

fn views_expiry(status: &GateRequestStatus) -> Option<OffsetDateTime> {
    anp::api::parse_timestamp(&status.expires_at)
}

fn request_row<'a>(
    state: &'a GateState,
    request_id: &str,
) -> Result<&'a GateRequestRow, DomainError> {
    state
        .requests
        .iter()
        .find(|r| r.request_id == request_id)
        .ok_or_else(|| {
            DomainError::NotFound(format!(
                "request_id: there is no request {request_id:?} in this session; ask with request_decision first."
            ))
        })
}

fn next_step(status: &GateRequestStatus, plain: bool) -> String {
    if plain {
        return match status.status {
            RequestState::Pending => format!(
                "Still pending ({} of {} approvals). Do not commit yet: call wait_for_decision again.",
                status.approvals_given, status.approvals_required
            ),
            RequestState::Approved => "Approved: verify the receipts (check_receipt), commit exactly the terms approved, then report_outcome executed with those terms.".into(),
            RequestState::Denied => "Declined: do not commit. report_outcome abandoned, or ask again with revised terms (revises).".into(),
            RequestState::Countered => "Declined with counter terms (counter_terms): do not commit these terms. Put the counter terms to the counterparty and ask again with what it accepts (revises).".into(),
            RequestState::Expired => "Expired: nobody decided in time. Do not commit; ask again if the terms still stand.".into(),
            RequestState::Superseded => "Superseded by your later request: do not commit these terms.".into(),
        };
    }
    match status.status {
        RequestState::Pending => format!(
            "Still pending ({} of {} approvals). Do not accept yet: call wait_for_decision again.",
            status.approvals_given, status.approvals_required
        ),
        RequestState::Approved => "Approved: verify the receipts (check_receipt), then you may accept exactly the offer they name, before the receipts' expires_at.".into(),
        RequestState::Denied => "Declined: do not accept. Tell the counterparty no, or ask again about a new offer.".into(),
        RequestState::Countered => "Declined with counter terms: do not accept; send the counter terms (counter_terms) to the counterparty instead, before the receipt's expires_at.".into(),
        RequestState::Expired => "Expired: nobody decided in time. Do not accept; ask again if the offer still stands.".into(),
        RequestState::Superseded => "Superseded: a later message answered the offer before anyone decided. Do not accept it.".into(),
    }
}

/// What `check_receipt` found.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiptCheckView {
    /// True when every check passed.
    pub valid: bool,
    /// `approve` or `deny`, when readable.
    pub decision: Option<String>,
    /// The signer's `did:key`.
    pub approver: Option<String>,
    /// The role it was signed in, if it names one.
    pub role: Option<String>,
    /// Whether the host recorded this very receipt for the request (when a
    /// request was named).
    pub recorded_by_host: Option<bool>,
    /// Each check and what it found.
    pub checks: Vec<CheckView>,
}

/// One check of a receipt.
#[derive(Debug, Clone, Serialize)]
pub struct CheckView {
    /// Its name (`signature`, `offer_hash`, …).
    pub check: String,
    /// Passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

/// `check_receipt`: verifies a receipt against the offer it answers: the
/// `offer` given, or the message a request of the agent's awaited.
pub async fn check_receipt(
    host: &Host,
    agent: &GateAgent,
    receipt: &Value,
    offer: Option<&Value>,
    request: Option<(&str, &str)>,
    now: OffsetDateTime,
) -> Result<ReceiptCheckView, DomainError> {
    if !receipt.is_object() {
        return Err(DomainError::Invalid(
            "receipt: must be the ApprovalReceipt object itself, as get_decision answered it."
                .into(),
        ));
    }
    let (offer, recorded) = match (offer, request) {
        (Some(offer), None) => (offer.clone(), None),
        (None, Some((session_id, request_id))) => {
            let state = gate_service::owned(host, agent, session_id).await?;
            let row = request_row(&state, request_id)?;
            let message = state
                .messages
                .iter()
                .find(|m| m.hash == row.message_hash)
                .ok_or_else(|| DomainError::Internal("an awaited message is missing".into()))?;
            let recorded = state.receipts.iter().any(|r| {
                r.request_id == request_id
                    && serde_json::from_str::<Value>(&r.receipt).ok().as_ref() == Some(receipt)
            });
            (gate::parse_stored(message)?, Some(recorded))
        }
        _ => {
            return Err(DomainError::Invalid(
                "Name exactly one of: offer (the message the receipt answers), or session_id and request_id (a request of yours).".into(),
            ))
        }
    };
    let report: ReceiptReport = verify_receipt(receipt, &offer, None, now, &[]);
    Ok(ReceiptCheckView {
        valid: report.is_valid(),
        decision: receipt
            .pointer("/scope/decision")
            .and_then(Value::as_str)
            .map(str::to_owned),
        approver: receipt
            .pointer("/approver/identity")
            .and_then(Value::as_str)
            .map(str::to_owned),
        role: receipt
            .pointer("/approver/role")
            .and_then(Value::as_str)
            .map(str::to_owned),
        recorded_by_host: recorded,
        checks: report
            .checks
            .iter()
            .map(|c| CheckView {
                check: c.check.name().to_owned(),
                ok: c.ok,
                detail: c.detail.clone(),
            })
            .collect(),
    })
}
