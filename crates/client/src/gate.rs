//! The gate agent role (docs/gate-api.md): one of the organization's own
//! agents, negotiating elsewhere (Concordia), mirrors its transcript to the
//! host's gate and asks for a person before it commits the organization.
//! Every request is signed (version 2, `countersign_host_api::signing`). The decision the host answers is
//! the host's word until the receipts verify: [`check_decision`] verifies
//! them itself, with `crates/approval-receipt`, from the approvers'
//! `did:key`s.

use std::time::Duration;

use anp::keys::{self, SigningKey};
use approval_receipt::receipt::verify_receipt;
use countersign_host_api::gate::{
    AppendMessages, CreateSession, GateEnrollRequest, GateEnrollResponse, GateRequestStatus, Head,
    RequestAccepted, RequestDecision, RequestState, SessionHead, SessionView, GATE_API_BASE,
};
use countersign_host_api::signing::{self, EnrollRole};
use serde_json::value::RawValue;
use serde_json::Value;
use time::OffsetDateTime;

use crate::agent::to_body;
use crate::error::ClientError;
use crate::http::{
    authority_of, gate_segment, path_segment, ClientConfig, Http, Idempotent, Identity, Request,
    Wire,
};
use crate::Result;

/// One of the org's own agents at one host's gate. Cheap to share behind an
/// `Arc`; every method takes `&self`.
pub struct GateClient {
    http: Http,
    identity: Identity,
}

/// The messages of a transcript as the gate takes them: each value's JSON
/// text (what the host stores byte for byte).
pub fn raw_messages(messages: &[Value]) -> Result<Vec<Box<RawValue>>> {
    messages
        .iter()
        .map(|m| {
            serde_json::value::to_raw_value(m).map_err(|e| ClientError::InvalidInput {
                what: "transcript message",
                detail: e.to_string(),
            })
        })
        .collect()
}

impl GateClient {
    /// Enrolls `key` with a one-time code from the host's admin (`agent
    /// enroll --protocol …`), proving possession with a version 2 proof
    /// bound to this role, this host and this code. Not retried: a code
    /// works once.
    pub async fn enroll(
        base_url: &str,
        code: &str,
        name: &str,
        key: &SigningKey,
        callback_url: Option<&str>,
    ) -> Result<GateEnrollResponse> {
        let http = Http::new(base_url, ClientConfig::default())?;
        let public_key = keys::public_key_b64(&key.verifying_key());
        let authority = authority_of(http.base())?;
        let proof = signing::sign_enroll_proof_v2(key, EnrollRole::GateAgent, &authority, code);
        let body = to_body(&GateEnrollRequest {
            code: code.to_owned(),
            name: name.to_owned(),
            public_key,
            proof,
            proof_version: Some(signing::PROOF_VERSION_2),
            authority: Some(authority),
            callback_url: callback_url.map(str::to_owned),
        })?;
        http.call(
            Request::post(format!("{GATE_API_BASE}/enroll"), &body),
            None,
            Idempotent::No,
        )
        .await
    }

    /// A client for an agent already enrolled as `agent_id`.
    pub fn new(base_url: &str, key: SigningKey, agent_id: &str) -> Result<GateClient> {
        GateClient::with_config(base_url, key, agent_id, ClientConfig::default())
    }

    /// As [`GateClient::new`], with explicit timeouts and retries.
    pub fn with_config(
        base_url: &str,
        key: SigningKey,
        agent_id: &str,
        config: ClientConfig,
    ) -> Result<GateClient> {
        path_segment("agent id", agent_id)?;
        Ok(GateClient {
            http: Http::new(base_url, config)?,
            identity: Identity {
                id: agent_id.to_owned(),
                key,
                wire: Wire::Countersign,
            },
        })
    }

    /// The id this client signs as.
    pub fn agent_id(&self) -> &str {
        &self.identity.id
    }

    /// Mirrors a transcript from its first message. Retried on transport
    /// errors: the host answers the same body with the same head.
    pub async fn create_session(&self, session: &CreateSession) -> Result<SessionHead> {
        gate_segment("session id", &session.session_id)?;
        let body = to_body(session)?;
        self.http
            .call(
                Request::post(format!("{GATE_API_BASE}/sessions"), &body),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Mirrors the messages after `after` (the head the host holds).
    /// Retried: a batch the host already stored is answered with its head.
    pub async fn append(
        &self,
        session_id: &str,
        after: &Head,
        messages: &[Value],
    ) -> Result<SessionHead> {
        gate_segment("session id", session_id)?;
        let body = to_body(&AppendMessages {
            after: after.clone(),
            messages: raw_messages(messages)?,
        })?;
        self.http
            .call(
                Request::post(
                    format!("{GATE_API_BASE}/sessions/{session_id}/messages"),
                    &body,
                ),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// The stored head and the transcript's state.
    pub async fn session(&self, session_id: &str) -> Result<SessionView> {
        gate_segment("session id", session_id)?;
        self.http
            .call(
                Request::get(format!("{GATE_API_BASE}/sessions/{session_id}")),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Asks for a decision on a mirrored message (idempotent on
    /// `request_id`, so retried).
    pub async fn request_decision(
        &self,
        session_id: &str,
        request: &RequestDecision,
    ) -> Result<RequestAccepted> {
        gate_segment("session id", session_id)?;
        gate_segment("request id", &request.request_id)?;
        let body = to_body(request)?;
        self.http
            .call(
                Request::post(
                    format!("{GATE_API_BASE}/sessions/{session_id}/requests"),
                    &body,
                ),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// The request as it stands (the host's word: check the receipts with
    /// [`check_decision`] before acting on it).
    pub async fn request(&self, session_id: &str, request_id: &str) -> Result<GateRequestStatus> {
        gate_segment("session id", session_id)?;
        gate_segment("request id", request_id)?;
        self.http
            .call(
                Request::get(format!(
                    "{GATE_API_BASE}/sessions/{session_id}/requests/{request_id}"
                )),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Polls the request every `every` until it is no longer pending, or
    /// `within` has passed (then the last pending status is answered).
    pub async fn wait_for_decision(
        &self,
        session_id: &str,
        request_id: &str,
        every: Duration,
        within: Duration,
    ) -> Result<GateRequestStatus> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let status = self.request(session_id, request_id).await?;
            if status.status.is_final() || tokio::time::Instant::now() >= deadline {
                return Ok(status);
            }
            tokio::time::sleep(every).await;
        }
    }
}

/// Verifies a decided request's receipts against the message it awaited,
/// at `now`, without asking the host: each receipt's signature by its
/// approver's `did:key`, its `offer_hash` (= the message's hash), its
/// expiry; an approval needs `approvals_required` approve receipts by
/// distinct keys, a denial or counter one deny receipt. A pending, expired
/// or superseded request has nothing to verify and is refused.
pub fn check_decision(
    status: &GateRequestStatus,
    offer_message: &Value,
    now: OffsetDateTime,
) -> Result<()> {
    let refuse = |detail: String| Err(ClientError::ReceiptInvalid(detail));
    let wanted = match status.status {
        RequestState::Approved => "approve",
        RequestState::Denied | RequestState::Countered => "deny",
        other => {
            return refuse(format!(
                "request {} is {}: there is no decision to act on",
                status.request_id,
                other.as_str()
            ))
        }
    };
    let mut signers = Vec::new();
    for receipt in &status.receipts {
        let report = verify_receipt(receipt, offer_message, None, now, &[]);
        if let Some(f) = report.failures().next() {
            return refuse(format!(
                "a receipt of request {} fails its {} check: {}",
                status.request_id,
                f.check.name(),
                f.detail
            ));
        }
        let decision = receipt.pointer("/scope/decision").and_then(Value::as_str);
        let identity = receipt
            .pointer("/approver/identity")
            .and_then(Value::as_str);
        if decision == Some(wanted) {
            if let Some(id) = identity {
                if !signers.contains(&id) {
                    signers.push(id);
                }
            }
        }
    }
    let needed = if wanted == "approve" {
        status.approvals_required.max(1) as usize
    } else {
        1
    };
    if signers.len() < needed {
        return refuse(format!(
            "request {} is {} but carries {} verifying {wanted} receipt(s) by distinct keys, not {needed}",
            status.request_id,
            status.status.as_str(),
            signers.len()
        ));
    }
    Ok(())
}
