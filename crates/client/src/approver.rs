//! The approver role (docs/approver-api.md): enrollment with a one-time
//! code, the one-request summary, records from a position onward, and
//! idempotent, signed decisions: RFC-002 approvals on ANP sessions,
//! ApprovalReceipts on gate sessions. Record verification and pinning are
//! the console engine's: this client returns what the host sent, unverified.

use std::time::Duration;

use anp::api::{self, WellKnown};
use anp::approval::sign_approval;
use anp::keys::{self, SigningKey};
use anp::LogDocument;
use approval_receipt::receipt::{build_receipt, sign_receipt, Decision, ReceiptDraft};
use countersign_host_api::approver::{
    DecisionAction, DecisionRequest, DecisionResponse, DelegateRequest, Delegation, DelegationList,
    EnrollRequest, EnrollResponse, GateDecisionRequest, GateDecisionResponse, GateLog,
    PendingDecision, RotateKeyRequest, RotateKeyResponse, SessionApprovals, Summary,
    CONSOLE_API_BASE,
};
use countersign_host_api::signing::{self, EnrollRole};
use serde_json::Value;
use time::OffsetDateTime;

use crate::agent::to_body;
use crate::error::ClientError;
use crate::http::{
    authority_of, gate_segment, path_segment, ClientConfig, Conditional, Http, Idempotent,
    Identity, Request, Wire,
};
use crate::Result;

/// What [`ApproverClient::summary_since`] found.
#[derive(Debug, Clone)]
pub enum SummaryFetch {
    /// The host's summary has not changed since the tagged one.
    Unchanged,
    /// Unchanged, and the host ended the wait early to make room for other
    /// connections: ask again no sooner than this (its `Retry-After`).
    AskLater(Duration),
    /// A new summary, and the tag to send next time (none if the host gives none).
    Changed {
        /// The summary.
        summary: Summary,
        /// Its `ETag`.
        etag: Option<String>,
    },
}

/// A session log as [`ApproverClient::log_raw`] read it.
#[derive(Debug, Clone)]
pub struct RawLog {
    /// The document the bytes parse to (unverified).
    pub document: LogDocument,
    /// The answer's body, byte for byte.
    pub bytes: Vec<u8>,
    /// The request that was answered, e.g. `GET /api/console/v1/sessions/S/log?after=3`.
    pub request: String,
}

/// Reads a host's discovery document (RFC-003) at the origin of `base_url`:
/// its platform keys (no approver's). A host that serves none (404) is
/// [`ClientError::NoDiscovery`].
pub async fn well_known(base_url: &str) -> Result<WellKnown> {
    fetch_well_known(&Http::new(base_url, ClientConfig::default())?, None).await
}

/// Reads a host's discovery document with the approver keys of one
/// organization (`?org=<handle>`, `sandbox` for the sandbox), as
/// countersign-host publishes them: RFC-003's members, no approver named.
pub async fn well_known_of(base_url: &str, org_handle: &str) -> Result<WellKnown> {
    fetch_well_known(
        &Http::new(base_url, ClientConfig::default())?,
        Some(org_handle),
    )
    .await
}

/// Fetches and sanity-checks `/.well-known/anp.json` (unsigned, retried),
/// with `?org=<handle>` when an organization's approver keys are wanted (a
/// host that does not know the parameter ignores it). The document is read
/// as RFC-003 publishes it: unknown members ignored, our additions optional.
pub(crate) async fn fetch_well_known(http: &Http, org: Option<&str>) -> Result<WellKnown> {
    let origin = http.at_origin()?;
    let mut request = Request::get(api::WELL_KNOWN_PATH.to_owned());
    if let Some(org) = org {
        path_segment("org handle", org)?;
        request.query = Some(("org", org.to_owned()));
    }
    let doc: WellKnown = origin
        .call(request, None, Idempotent::Yes)
        .await
        .map_err(|e| match e.status() {
            Some(404) => ClientError::NoDiscovery {
                url: origin.base().to_owned(),
            },
            _ => e,
        })?;
    if !doc.protocol_versions.iter().any(|v| v == anp::PROTOCOL) {
        return Err(ClientError::Decode {
            what: "the discovery document".to_owned(),
            detail: format!(
                "the host speaks {:?}, not {}",
                doc.protocol_versions,
                anp::PROTOCOL
            ),
        });
    }
    Ok(doc)
}

/// An enrolled approver talking to one host. Cheap to share behind an `Arc`.
pub struct ApproverClient {
    pub(crate) http: Http,
    pub(crate) identity: Identity,
}

impl ApproverClient {
    /// Enrolls `key` with a one-time code from the host's admin, proving
    /// possession with a version 2 proof bound to this role, this host and
    /// this code. Not retried: a code works once.
    pub async fn enroll(
        base_url: &str,
        code: &str,
        name: &str,
        email: &str,
        key: &SigningKey,
    ) -> Result<EnrollResponse> {
        let http = Http::new(base_url, ClientConfig::default())?;
        let public_key = keys::public_key_b64(&key.verifying_key());
        let authority = authority_of(http.base())?;
        let proof = signing::sign_enroll_proof_v2(key, EnrollRole::Approver, &authority, code);
        let body = to_body(&EnrollRequest {
            code: code.to_owned(),
            name: name.to_owned(),
            email: email.to_owned(),
            public_key,
            proof,
            proof_version: Some(signing::PROOF_VERSION_2),
            authority: Some(authority),
        })?;
        let path = format!("{}/enroll", CONSOLE_API_BASE);
        http.call(Request::post(path, &body), None, Idempotent::No)
            .await
    }

    /// A client for an approver already enrolled as `approver_id`.
    pub fn new(base_url: &str, key: SigningKey, approver_id: &str) -> Result<ApproverClient> {
        ApproverClient::with_config(base_url, key, approver_id, ClientConfig::default())
    }

    /// As [`ApproverClient::new`], with explicit timeouts and retries.
    pub fn with_config(
        base_url: &str,
        key: SigningKey,
        approver_id: &str,
        config: ClientConfig,
    ) -> Result<ApproverClient> {
        path_segment("approver id", approver_id)?;
        Ok(ApproverClient {
            http: Http::new(base_url, config)?,
            identity: Identity {
                id: approver_id.to_owned(),
                key,
                wire: Wire::Countersign,
            },
        })
    }

    /// The approver id this client signs as.
    pub fn approver_id(&self) -> &str {
        &self.identity.id
    }

    /// The host's base URL.
    pub fn base_url(&self) -> &str {
        self.http.base()
    }

    /// The host's public discovery document: its platform keys.
    pub async fn well_known(&self) -> Result<WellKnown> {
        fetch_well_known(&self.http, None).await
    }

    /// The approver's own organization's keys (`GET /keys`, signed): the
    /// discovery document with every approver key of the org named by its
    /// `approved_by`, which the public document leaves out. What a console
    /// checks each approval against.
    pub async fn keys(&self) -> Result<WellKnown> {
        self.http
            .call(
                Request::get(format!("{CONSOLE_API_BASE}/keys")),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Moves this approver to `new_key` (`POST /keys/rotate`): this client's
    /// key consents and `new_key` proves possession, over one statement
    /// naming this host, this approver and both keys, made `at`. The host
    /// retires this client's key and answers the approver id to sign as
    /// with `new_key` from now on. Asked again (an answer lost on the way),
    /// it answers the same; so it is retried like a read.
    pub async fn rotate_key(
        &self,
        new_key: &SigningKey,
        at: OffsetDateTime,
    ) -> Result<RotateKeyResponse> {
        let authority = authority_of(self.http.base())?;
        let new_public_key = keys::public_key_b64(&new_key.verifying_key());
        let at = api::format_timestamp(at);
        let statement = signing::rotate_statement(
            &authority,
            &self.identity.id,
            &keys::public_key_b64(&self.identity.key.verifying_key()),
            &new_public_key,
            &at,
        );
        let body = to_body(&RotateKeyRequest {
            new_public_key,
            at,
            consent: keys::sign_b64(&self.identity.key, statement.as_bytes()),
            proof: keys::sign_b64(new_key, statement.as_bytes()),
        })?;
        self.http
            .call(
                Request::post(format!("{CONSOLE_API_BASE}/keys/rotate"), &body),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Lets the approver at `to` act for this approver in `roles` from
    /// `from_date` to `to_date` inclusive (days `YYYY-MM-DD` in `zone`, an
    /// IANA name), signing the delegation statement with this client's key,
    /// made `at`. `delegation_id` is the client's own, so the same request
    /// sent again (an answer lost) is answered the same; retried like a read.
    #[allow(clippy::too_many_arguments)]
    pub async fn delegate(
        &self,
        delegation_id: &str,
        to: &str,
        roles: &[String],
        from_date: &str,
        to_date: &str,
        zone: &str,
        at: OffsetDateTime,
    ) -> Result<Delegation> {
        let authority = authority_of(self.http.base())?;
        let at = api::format_timestamp(at);
        let to = to.trim().to_ascii_lowercase();
        let statement = signing::delegation_statement(
            &authority,
            delegation_id,
            &self.identity.id,
            &to,
            roles,
            from_date,
            to_date,
            zone,
            &at,
        );
        let body = to_body(&DelegateRequest {
            delegation_id: delegation_id.to_owned(),
            to,
            roles: roles.to_vec(),
            from_date: from_date.to_owned(),
            to_date: to_date.to_owned(),
            zone: zone.to_owned(),
            at,
            signature: keys::sign_b64(&self.identity.key, statement.as_bytes()),
        })?;
        self.http
            .call(
                Request::post(format!("{CONSOLE_API_BASE}/delegations"), &body),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// The host's record of every approval in an ANP session: who, as which
    /// role at which step, for whom, under which rule and policy version.
    pub async fn session_approvals(&self, session_id: &str) -> Result<SessionApprovals> {
        path_segment("session id", session_id)?;
        self.http
            .call(
                Request::get(format!(
                    "{CONSOLE_API_BASE}/sessions/{session_id}/approvals"
                )),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// The delegations this approver gave and received, the roles it holds
    /// and the colleagues who may stand in.
    pub async fn delegations(&self) -> Result<DelegationList> {
        self.http
            .call(
                Request::get(format!("{CONSOLE_API_BASE}/delegations")),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Ends a delegation given by or to this approver now; asked again, it
    /// answers the same.
    pub async fn revoke_delegation(&self, delegation_id: &str) -> Result<Delegation> {
        path_segment("delegation id", delegation_id)?;
        let path = format!("{CONSOLE_API_BASE}/delegations/{delegation_id}/revoke");
        self.http
            .call(
                Request::post(path, b"{}"),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// Every session the approver's org sees, with counts, heads and pending
    /// decisions: one request per poll cycle.
    pub async fn summary(&self) -> Result<Summary> {
        let path = format!("{}/summary", CONSOLE_API_BASE);
        self.http
            .call(Request::get(path), Some(&self.identity), Idempotent::Yes)
            .await
    }

    /// The summary unless it is the one tagged `known` (from an earlier
    /// [`SummaryFetch::Changed`]): a poller of an unchanged host then reads
    /// and parses no body. A host that ignores the tag just answers in full.
    pub async fn summary_since(&self, known: Option<&str>) -> Result<SummaryFetch> {
        let path = format!("{}/summary", CONSOLE_API_BASE);
        let mut request = Request::get(path);
        request.if_none_match = known;
        self.fetch_summary(request).await
    }

    /// As [`ApproverClient::summary_since`], but a host with nothing new
    /// holds the answer for up to `wait` seconds (1 to 90) and answers the
    /// moment the summary changes (docs/approver-api.md, "Waiting for a
    /// change"): one request a wait instead of one a poll. A host that
    /// predates waiting answers at once, as `summary_since` would.
    pub async fn summary_waiting(&self, known: &str, wait: u64) -> Result<SummaryFetch> {
        let path = format!("{}/summary", CONSOLE_API_BASE);
        let mut request = Request::get(path);
        request.if_none_match = Some(known);
        request.query = Some(("wait", wait.to_string()));
        // The host may hold it for the whole wait; give the answer time to come.
        request.timeout = Some(Duration::from_secs(wait) + self.http.timeout());
        self.fetch_summary(request).await
    }

    /// Sends a conditional summary request and reads its answer.
    async fn fetch_summary(&self, request: Request<'_>) -> Result<SummaryFetch> {
        let answer = self
            .http
            .call_conditional(request, Some(&self.identity), Idempotent::Yes)
            .await?;
        Ok(match answer {
            Conditional::Fresh { value, etag } => SummaryFetch::Changed {
                summary: value,
                etag,
            },
            Conditional::NotModified {
                retry_after: Some(after),
            } => SummaryFetch::AskLater(after),
            Conditional::NotModified { retry_after: None } => SummaryFetch::Unchanged,
        })
    }

    /// The session's log holding the events after `after` (all for `None`),
    /// exactly as the host sent it: the caller verifies it against its pin.
    pub async fn log(&self, session_id: &str, after: Option<u64>) -> Result<LogDocument> {
        path_segment("session id", session_id)?;
        let path = format!("{}/sessions/{session_id}/log", CONSOLE_API_BASE);
        let mut request = Request::get(path);
        if let Some(after) = after {
            request.query = Some(("after", after.to_string()));
        }
        self.http
            .call(request, Some(&self.identity), Idempotent::Yes)
            .await
    }

    /// As [`ApproverClient::log`], with the answer's bytes exactly as the host
    /// sent them beside the document they parse to: what a console keeps as
    /// evidence when the log contradicts the copy it verified earlier.
    pub async fn log_raw(&self, session_id: &str, after: Option<u64>) -> Result<RawLog> {
        path_segment("session id", session_id)?;
        let path = format!("{}/sessions/{session_id}/log", CONSOLE_API_BASE);
        let mut request = Request::get(path.clone());
        let mut asked = path;
        if let Some(after) = after {
            request.query = Some(("after", after.to_string()));
            asked = format!("{asked}?after={after}");
        }
        let bytes = self
            .http
            .call_bytes(request, Some(&self.identity), Idempotent::Yes)
            .await?;
        let document = serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode {
            what: format!("GET {asked}"),
            detail: e.to_string(),
        })?;
        Ok(RawLog {
            document,
            bytes,
            request: format!("GET {asked}"),
        })
    }

    /// Submits a decision. Retried on transport errors, 429 and 5xx: the host
    /// answers a repeated `decision_id` with the first outcome.
    pub async fn decide(
        &self,
        session_id: &str,
        request: &DecisionRequest,
    ) -> Result<DecisionResponse> {
        path_segment("session id", session_id)?;
        path_segment("decision id", &request.decision_id)?;
        let body = to_body(request)?;
        let path = format!("{}/sessions/{session_id}/decisions", CONSOLE_API_BASE);
        self.http
            .call(
                Request::post(path, &body),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// An approve decision for the offer `in_response_to`, carrying the
    /// RFC-002 approval signed now by this approver's key as `approved_by`.
    pub fn approve_request(&self, in_response_to: &str, approved_by: &str) -> DecisionRequest {
        let at = api::format_timestamp(OffsetDateTime::now_utc());
        DecisionRequest {
            decision_id: new_decision_id(),
            action: DecisionAction::Approve,
            in_response_to: in_response_to.to_owned(),
            reason: None,
            offer: None,
            approval: Some(sign_approval(
                &self.identity.key,
                in_response_to,
                approved_by,
                &at,
            )),
        }
    }

    /// Sends a buyer-agent draft (`draft:<uuid>`) as it stands: an approve
    /// with no attestation, since nothing is accepted.
    pub fn send_draft_request(draft_ref: &str) -> DecisionRequest {
        DecisionRequest {
            decision_id: new_decision_id(),
            action: DecisionAction::Approve,
            in_response_to: draft_ref.to_owned(),
            reason: None,
            offer: None,
            approval: None,
        }
    }

    /// A decline decision with its reason.
    pub fn decline_request(in_response_to: &str, reason: &str) -> DecisionRequest {
        DecisionRequest {
            decision_id: new_decision_id(),
            action: DecisionAction::Decline,
            in_response_to: in_response_to.to_owned(),
            reason: Some(reason.to_owned()),
            offer: None,
            approval: None,
        }
    }

    /// A counter decision: the buyer will send `offer`.
    pub fn counter_request(in_response_to: &str, offer: Value) -> DecisionRequest {
        DecisionRequest {
            decision_id: new_decision_id(),
            action: DecisionAction::Counter,
            in_response_to: in_response_to.to_owned(),
            reason: None,
            offer: Some(offer),
            approval: None,
        }
    }
}

/// A gate request as the person decides it: what the summary's pending
/// decision says, the awaited message from the log, and the session.
pub struct GateDecisionInput<'a> {
    /// The gate session's id in its protocol (without `<protocol>:`).
    pub session_id: &'a str,
    /// The pending decision from the summary (its `request_id`, `amount`,
    /// `threshold`, `expires_at`).
    pub pending: &'a PendingDecision,
    /// The awaited message, as the log handed it (its hash must be
    /// `pending.event_hash`).
    pub offer_message: &'a Value,
}

impl ApproverClient {
    /// A gate session's transcript after position `after`, in its own form
    /// with the keys and every request (`id` is the summary's
    /// `<protocol>:<session_id>`), exactly as the host sent it.
    pub async fn gate_log(&self, id: &str, after: Option<u64>) -> Result<GateLog> {
        gate_segment("session id", id)?;
        let mut request = Request::get(format!("{CONSOLE_API_BASE}/sessions/{id}/log"));
        if let Some(after) = after {
            request.query = Some(("after", after.to_string()));
        }
        self.http
            .call(request, Some(&self.identity), Idempotent::Yes)
            .await
    }

    /// Moves a pending gate request's deadline later, with a reason kept
    /// beside it (`POST …/requests/<request_id>/deadline`); answers the
    /// request as it then stands. Only an approver who may decide the
    /// request now may, never past the offer's own validity.
    pub async fn extend_gate_deadline(
        &self,
        id: &str,
        request_id: &str,
        request: &countersign_host_api::gate::ExtendDeadlineRequest,
    ) -> Result<countersign_host_api::gate::GateRequestStatus> {
        gate_segment("session id", id)?;
        path_segment("request id", request_id)?;
        let body = to_body(request)?;
        self.http
            .call(
                Request::post(
                    format!("{CONSOLE_API_BASE}/sessions/{id}/requests/{request_id}/deadline"),
                    &body,
                ),
                Some(&self.identity),
                Idempotent::No,
            )
            .await
    }

    /// Submits a decision on a gate request (`id` is `<protocol>:<session_id>`).
    /// Retried like every decision: the host answers a repeated
    /// `decision_id` with the first outcome.
    pub async fn decide_gate(
        &self,
        id: &str,
        request: &GateDecisionRequest,
    ) -> Result<GateDecisionResponse> {
        gate_segment("session id", id)?;
        path_segment("decision id", &request.decision_id)?;
        let body = to_body(request)?;
        self.http
            .call(
                Request::post(format!("{CONSOLE_API_BASE}/sessions/{id}/decisions"), &body),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// An ApprovalReceipt for a gate request, signed now by this approver's
    /// key: `approve` or `deny`, `offer_hash` the awaited message's hash,
    /// the request's amount and threshold, expiring with the request.
    pub fn gate_receipt(&self, decision: Decision, input: &GateDecisionInput<'_>) -> Result<Value> {
        let bad = |detail: String| ClientError::Receipt(detail);
        let p = input.pending;
        let field = |name: &str, value: &Option<String>| {
            value.clone().ok_or_else(|| {
                bad(format!(
                    "the pending decision has no {name}: is it a gate request?"
                ))
            })
        };
        let amount = field("amount", &p.amount)?
            .parse()
            .map_err(|e| bad(format!("amount: {e}")))?;
        let threshold = field("threshold", &p.threshold)?
            .parse()
            .map_err(|e| bad(format!("threshold: {e}")))?;
        let expires_at = api::parse_timestamp(&p.expires_at)
            .ok_or_else(|| bad(format!("expires_at {:?} is not a time", p.expires_at)))?;
        let draft = ReceiptDraft {
            receipt_uuid: uuid::Uuid::new_v4(),
            issued_at: OffsetDateTime::now_utc(),
            expires_at,
            decision,
            offer_message: input.offer_message.clone(),
            amount,
            threshold_crossed: threshold,
            session_id: input.session_id.to_owned(),
            // Where the org's policy of authority routed the request, the
            // receipt names the role the host says this approver decides as.
            role: p
                .route
                .as_ref()
                .filter(|r| r.policy_version.is_some())
                .and_then(|r| r.your_role.clone()),
            // A stand-in names whom it decides for, as the host says.
            on_behalf_of: p
                .route
                .as_ref()
                .and_then(|r| r.your_stand_in.as_ref())
                .map(|s| approval_receipt::receipt::OnBehalfOf {
                    person: s.person.clone(),
                    delegation: s.delegation.clone(),
                }),
        };
        let key = &self.identity.key;
        let receipt =
            build_receipt(&draft, &key.verifying_key()).map_err(|e| bad(e.to_string()))?;
        sign_receipt(receipt, key).map_err(|e| bad(e.to_string()))
    }

    fn gate_request(
        &self,
        action: DecisionAction,
        decision: Decision,
        input: &GateDecisionInput<'_>,
    ) -> Result<GateDecisionRequest> {
        let request_id = input.pending.request_id.clone().ok_or_else(|| {
            ClientError::Receipt(
                "the pending decision has no request_id: is it a gate request?".into(),
            )
        })?;
        Ok(GateDecisionRequest {
            decision_id: new_decision_id(),
            action,
            in_response_to: request_id,
            receipt: self.gate_receipt(decision, input)?,
            reason: None,
            counter_terms: None,
        })
    }

    /// Approves a gate request: an `approve` receipt signed now.
    pub fn approve_gate_request(
        &self,
        input: &GateDecisionInput<'_>,
    ) -> Result<GateDecisionRequest> {
        self.gate_request(DecisionAction::Approve, Decision::Approve, input)
    }

    /// Declines a gate request: a `deny` receipt and the reason.
    pub fn decline_gate_request(
        &self,
        input: &GateDecisionInput<'_>,
        reason: &str,
    ) -> Result<GateDecisionRequest> {
        let mut request = self.gate_request(DecisionAction::Decline, Decision::Deny, input)?;
        request.reason = Some(reason.to_owned());
        Ok(request)
    }

    /// Counters a gate request: a `deny` receipt, the reason, and the terms
    /// the agent should offer instead (Concordia: an offer body's `terms`).
    pub fn counter_gate_request(
        &self,
        input: &GateDecisionInput<'_>,
        reason: &str,
        counter_terms: Value,
    ) -> Result<GateDecisionRequest> {
        let mut request = self.gate_request(DecisionAction::Counter, Decision::Deny, input)?;
        request.reason = Some(reason.to_owned());
        request.counter_terms = Some(counter_terms);
        Ok(request)
    }
}

/// A fresh decision id (UUID v4): repeating a request with it is safe.
pub fn new_decision_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
