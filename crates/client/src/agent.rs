//! The vendor agent role (SPEC §6, §8): registration, sessions, signed events,
//! and verification of the chain after every append against a pinned head.

use std::collections::HashMap;
use std::sync::Mutex;

use anp::api::{
    self, LogAnswer, OpenSessionRequest, OpenSessionResponse, RegisterRequest, RegisterResponse,
    SessionStatus, SubmitEventRequest, Target,
};
use anp::canonical::canonical_hash;
use anp::keys::{self, SigningKey};
use anp::payload::{parse_payload, Envelope};
use anp::{signed, ChainHead, EventKind, LogDocument, VerifyReport};
use serde_json::{json, Value};
use std::sync::Arc;
use time::OffsetDateTime;
use tokio::sync::RwLock;

use crate::error::ClientError;
use crate::http::{path_segment, ClientConfig, Http, Idempotent, Identity, Request, Wire};
use crate::trust::{verify_against_pin, KeySource, TrustedKeys};
use crate::{approver, Result};

/// A registered vendor agent talking to one host. Cheap to share behind an
/// `Arc`; every method takes `&self`.
pub struct AgentClient {
    http: Http,
    identity: Identity,
    trusted: RwLock<Option<Arc<TrustedKeys>>>,
    pins: Mutex<HashMap<String, ChainHead>>,
    /// The buyer org of each session (its handle, `sandbox` for the
    /// sandbox): whose approver keys verify its accepts.
    orgs: Mutex<HashMap<String, String>>,
}

impl AgentClient {
    /// Registers `key` with the host at `base_url` (SPEC §6.1), proving
    /// possession. Registering the same key again returns the same identity,
    /// so this call is retried on transport errors.
    pub async fn register(
        base_url: &str,
        key: &SigningKey,
        agent_name: &str,
        vendor_name: &str,
        contact_email: &str,
    ) -> Result<RegisterResponse> {
        let http = Http::new(base_url, ClientConfig::default())?;
        let public_key = keys::public_key_b64(&key.verifying_key());
        let proof = keys::sign_b64(
            key,
            signed::registration_proof_string(&public_key).as_bytes(),
        );
        let body = to_body(&RegisterRequest {
            agent_name: agent_name.to_owned(),
            vendor_name: vendor_name.to_owned(),
            contact_email: contact_email.to_owned(),
            public_key,
            proof,
        })?;
        let path = format!("{}/register", api::AGENT_API_BASE);
        http.call(Request::post(path, &body), None, Idempotent::Yes)
            .await
    }

    /// A client for an agent already registered as `agent_id`.
    pub fn new(base_url: &str, key: SigningKey, agent_id: &str) -> Result<AgentClient> {
        AgentClient::with_config(base_url, key, agent_id, ClientConfig::default())
    }

    /// As [`AgentClient::new`], with explicit timeouts and retries.
    pub fn with_config(
        base_url: &str,
        key: SigningKey,
        agent_id: &str,
        config: ClientConfig,
    ) -> Result<AgentClient> {
        path_segment("agent id", agent_id)?;
        Ok(AgentClient {
            http: Http::new(base_url, config)?,
            identity: Identity {
                id: agent_id.to_owned(),
                key,
                wire: Wire::Anp,
            },
            trusted: RwLock::new(None),
            pins: Mutex::new(HashMap::new()),
            orgs: Mutex::new(HashMap::new()),
        })
    }

    /// The registration id this client signs as.
    pub fn agent_id(&self) -> &str {
        &self.identity.id
    }

    /// The fingerprint of this agent's key.
    pub fn fingerprint(&self) -> String {
        keys::fingerprint(&self.identity.key.verifying_key())
    }

    /// The host's base URL.
    pub fn base_url(&self) -> &str {
        self.http.base()
    }

    /// The head this client has verified up to for a session, if any.
    pub fn pin(&self, session_id: &str) -> Option<ChainHead> {
        self.pins_guard().get(session_id).cloned()
    }

    /// Restores a head verified earlier (for example by a previous run of a
    /// command-line tool): later logs must extend it.
    pub fn set_pin(&self, session_id: &str, head: ChainHead) {
        self.pins_guard().insert(session_id.to_owned(), head);
    }

    /// The keys this client verifies with: the host's published platform keys
    /// (fetched from `/.well-known/anp.json` on first use) and its own. When
    /// the host serves no discovery document, the buyer key the first log
    /// names, and [`TrustedKeys::check`] says what that leaves unchecked.
    pub async fn trusted_keys(&self) -> Result<Arc<TrustedKeys>> {
        if let Some(trusted) = self.trusted.read().await.as_ref() {
            return Ok(trusted.clone());
        }
        self.refresh_trusted_keys(None).await
    }

    /// The buyer org a session was opened with (its handle, `sandbox` for
    /// the sandbox), whose approver keys the host publishes for it.
    pub fn session_org(&self, session_id: &str) -> Option<String> {
        self.orgs_guard().get(session_id).cloned()
    }

    /// Restores the buyer org of a session opened earlier (for example by a
    /// previous run of a command-line tool): its accepts are verified
    /// against that org's approver keys.
    pub fn set_session_org(&self, session_id: &str, org_handle: &str) {
        self.orgs_guard()
            .insert(session_id.to_owned(), org_handle.to_owned());
    }

    fn orgs_guard(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.orgs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fetches the discovery document again, with the approver keys of
    /// `org` when it is known (an approver enrolled after our copy was taken
    /// has a key we have not seen; the host publishes approver keys per
    /// organization only). A 404 means plain ANP/0.1: the client goes on
    /// with the log's own buyer key.
    async fn refresh_trusted_keys(&self, org: Option<&str>) -> Result<Arc<TrustedKeys>> {
        let own = self.identity.key.verifying_key();
        let keys = match approver::fetch_well_known(&self.http, org).await {
            Ok(doc) => TrustedKeys::from_well_known(&doc)?,
            Err(ClientError::NoDiscovery { .. }) => {
                // Keep a buyer key already adopted from an earlier log.
                match self.trusted.read().await.as_ref() {
                    Some(known) if known.source() == KeySource::Log => (**known).clone(),
                    _ => TrustedKeys::without_discovery(),
                }
            }
            Err(e) => return Err(e),
        };
        let trusted = Arc::new(keys.with_own_key(&own));
        *self.trusted.write().await = Some(trusted.clone());
        Ok(trusted)
    }

    /// Opens a session (SPEC §6.2) and pins its first two events after
    /// verifying them. Not retried: a repeat would open a second session.
    pub async fn open_session(
        &self,
        target: Target,
        envelope: Value,
    ) -> Result<OpenSessionResponse> {
        check_envelope(&envelope)?;
        let org = match &target {
            Target::Org { org_handle } => org_handle.clone(),
            Target::Sandbox { .. } => "sandbox".to_owned(),
        };
        let body = to_body(&OpenSessionRequest { target, envelope })?;
        let path = format!("{}/sessions", api::AGENT_API_BASE);
        let response: OpenSessionResponse = self
            .http
            .call(
                Request::post(path, &body),
                Some(&self.identity),
                Idempotent::No,
            )
            .await?;
        path_segment("session id from the host", &response.session_id)?;
        self.set_session_org(&response.session_id, &org);
        if response.log.session.id != response.session_id {
            return Err(ClientError::Decode {
                what: "the new session".to_owned(),
                detail: format!(
                    "session_id is {} but the log is of session {}",
                    response.session_id, response.log.session.id
                ),
            });
        }
        self.verify_and_pin(&response.session_id, &response.log)
            .await?;
        Ok(response)
    }

    /// Signs and submits one event (SPEC §6.3), then verifies the returned log
    /// against the pinned head and checks that it holds exactly the event we
    /// signed. The payload is checked before anything is sent. Not retried: a
    /// repeat could append twice.
    pub async fn submit(
        &self,
        session_id: &str,
        kind: EventKind,
        payload: Value,
    ) -> Result<LogDocument> {
        path_segment("session id", session_id)?;
        check_payload(kind, &payload)?;
        let payload_hash = canonical_hash(&payload);
        let signature = keys::sign_b64(
            &self.identity.key,
            signed::authorship_string(kind.as_str(), &payload_hash).as_bytes(),
        );
        let body = to_body(&SubmitEventRequest {
            kind,
            payload,
            signature: signature.clone(),
        })?;
        let before = self.pin(session_id).unwrap_or_else(ChainHead::genesis);
        let path = format!("{}/sessions/{session_id}/events", api::AGENT_API_BASE);
        // `{log, protocol}` (the reference host, ours) or the bare log.
        let answer: LogAnswer = self
            .http
            .call(
                Request::post(path, &body),
                Some(&self.identity),
                Idempotent::No,
            )
            .await?;
        let doc = answer.into_document().map_err(|e| ClientError::Decode {
            what: format!("the {kind} submitted"),
            detail: e.to_string(),
        })?;
        let doc = self.verify_and_pin(session_id, &doc).await?;
        let fingerprint = self.fingerprint();
        let ours = doc.events.iter().any(|e| {
            e.seq > before.seq
                && e.actor == anp::Actor::VendorAgent
                && e.kind == kind
                && e.payload_hash == payload_hash
                && e.signature.as_deref() == Some(signature.as_str())
                && e.signer.as_deref() == Some(fingerprint.as_str())
        });
        if !ours {
            return Err(ClientError::NotAppended {
                kind: kind.to_string(),
                payload_hash,
            });
        }
        Ok(doc)
    }

    /// The session's status (SPEC §6.4), for cheap polling. A status that
    /// contradicts the pinned head (fewer events, or another hash at the
    /// pinned seq) is reported as a broken chain.
    pub async fn status(&self, session_id: &str) -> Result<SessionStatus> {
        path_segment("session id", session_id)?;
        let path = format!("{}/sessions/{session_id}", api::AGENT_API_BASE);
        let status: SessionStatus = self
            .http
            .call(Request::get(path), Some(&self.identity), Idempotent::Yes)
            .await?;
        if let Some(pin) = self.pin(session_id) {
            let info = &status.session;
            let contradicts = info.event_count < pin.seq
                || (info.event_count == pin.seq && info.chain_head != pin.event_hash);
            if contradicts {
                return Err(ClientError::ChainBroken(Box::new(VerifyReport::rewritten(
                    &pin,
                    Some(info.chain_head.clone()),
                    format!(
                        "the host reports {} events with head {}, which does not extend the pinned head",
                        info.event_count, info.chain_head
                    ),
                ))));
            }
        }
        Ok(status)
    }

    /// The session log (SPEC §6.4), verified against the pinned head, holding
    /// the events after `after` (all of them for `None`). Only events after
    /// the pin are fetched and checked, so polling costs O(new events).
    pub async fn log(&self, session_id: &str, after: Option<u64>) -> Result<LogDocument> {
        path_segment("session id", session_id)?;
        let pin = self.pin(session_id).unwrap_or_else(ChainHead::genesis);
        let fetch_after = after.unwrap_or(0).min(pin.seq);
        let mut doc = self.fetch_log(session_id, fetch_after).await?;
        doc = self.verify_and_pin(session_id, &doc).await?;
        if let Some(after) = after {
            doc.events.retain(|e| e.seq > after);
        }
        Ok(doc)
    }

    async fn fetch_log(&self, session_id: &str, after: u64) -> Result<LogDocument> {
        let path = format!("{}/sessions/{session_id}/log", api::AGENT_API_BASE);
        let mut request = Request::get(path);
        if after > 0 {
            request.query = Some(("after", after.to_string()));
        }
        self.http
            .call(request, Some(&self.identity), Idempotent::Yes)
            .await
    }

    /// Verifies a log against the pin with trusted keys; on success advances
    /// the pin and returns the document to use (which may be a refetch when
    /// the host answered with a tail that skips events after the pin).
    async fn verify_and_pin(&self, session_id: &str, doc: &LogDocument) -> Result<LogDocument> {
        let mut trusted = self.trusted_keys().await?;
        let pin = self.pin(session_id).unwrap_or_else(ChainHead::genesis);
        let skips_events = doc.events.first().is_some_and(|e| e.seq > pin.seq + 1);
        let doc = if skips_events {
            self.fetch_log(session_id, pin.seq).await?
        } else {
            doc.clone()
        };
        if !doc.is_anp_0_1() {
            return Err(ClientError::Decode {
                what: "the session log".to_owned(),
                detail: format!("protocol is {:?}, not {:?}", doc.protocol, anp::PROTOCOL),
            });
        }
        if doc.session.id != session_id {
            return Err(ClientError::Decode {
                what: "the session log".to_owned(),
                detail: format!("asked for session {session_id}, got {}", doc.session.id),
            });
        }
        if let Some(adopted) = trusted.adopt_log_buyer_key(&doc)? {
            let adopted = Arc::new(adopted);
            *self.trusted.write().await = Some(adopted.clone());
            trusted = adopted;
        }
        trusted.check_log_keys(&doc)?;
        let report = verify_against_pin(session_id, &pin, &doc.events, trusted.ring());
        if !report.ok {
            return Err(ClientError::ChainBroken(Box::new(report)));
        }
        let new_events: Vec<anp::Event> = doc
            .events
            .iter()
            .filter(|e| e.seq > pin.seq)
            .cloned()
            .collect();
        trusted.check_key_windows(&new_events)?;
        if !trusted.check_approvals(&new_events)? {
            let org = self.session_org(session_id);
            trusted = self.refresh_trusted_keys(org.as_deref()).await?;
            if !trusted.check_approvals(&new_events)? {
                return Err(ClientError::UntrustedKey(
                    "a buyer accept carries an approval that no approval key the host publishes verifies".to_owned(),
                ));
            }
        }
        if report.head.seq == doc.session.event_count
            && report.head.event_hash != doc.session.chain_head
        {
            return Err(ClientError::ChainBroken(Box::new(VerifyReport::rewritten(
                &report.head,
                Some(doc.session.chain_head.clone()),
                format!(
                    "the events end at {} but the session block claims head {}",
                    report.head, doc.session.chain_head
                ),
            ))));
        }
        self.advance_pin(session_id, report.head);
        Ok(doc)
    }

    fn advance_pin(&self, session_id: &str, head: ChainHead) {
        let mut pins = self.pins_guard();
        let current = pins.get(session_id).map_or(0, |p| p.seq);
        if head.seq >= current {
            pins.insert(session_id.to_owned(), head);
        }
    }

    fn pins_guard(&self) -> std::sync::MutexGuard<'_, HashMap<String, ChainHead>> {
        // A poisoned lock only means another task panicked mid-insert of a
        // whole value; the map itself is still consistent.
        self.pins.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A reasonable vendor mandate envelope for trying a host out (the sandbox):
/// declares an AI agent that may propose but needs a human to bind.
pub fn default_envelope(vendor_name: &str, agent_name: &str, human_contact: &str) -> Value {
    json!({
        "party": vendor_name,
        "agent": { "name": agent_name, "declared_ai": true },
        "may_discuss": ["pricing", "term length", "volume"],
        "may_disclose": ["list prices"],
        "will_not_disclose": ["internal cost floors"],
        "offer_authority": "bind_with_human_approval",
        "human_contact": human_contact,
    })
}

/// SPEC §8: a vendor agent validates what it sends, with the protocol
/// crate's strict parser; and it sends no offer that has already expired.
pub(crate) fn check_payload(kind: EventKind, payload: &Value) -> Result<()> {
    if kind == EventKind::SessionOpen {
        return Err(ClientError::InvalidPayload {
            kind: kind.to_string(),
            detail: "session_open is assembled by the host when a session opens".to_owned(),
            violations: Vec::new(),
        });
    }
    let parsed = parse_payload(kind, payload).map_err(|e| ClientError::InvalidPayload {
        kind: kind.to_string(),
        detail: e.to_string(),
        violations: e.violations,
    })?;
    if let Some(expires) = parsed.as_offer().and_then(|o| o.expires_at_utc()) {
        if expires <= OffsetDateTime::now_utc() {
            return Err(ClientError::InvalidPayload {
                kind: kind.to_string(),
                detail: format!(
                    "expires_at {} has already passed",
                    api::format_timestamp(expires)
                ),
                violations: Vec::new(),
            });
        }
    }
    Ok(())
}

/// Checks a vendor envelope before a session is opened with it.
fn check_envelope(envelope: &Value) -> Result<()> {
    Envelope::parse(envelope)
        .map(|_| ())
        .map_err(|e| ClientError::InvalidPayload {
            kind: "envelope".to_owned(),
            detail: e.to_string(),
            violations: e.violations,
        })
}

pub(crate) fn to_body<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| ClientError::InvalidInput {
        what: "request body",
        detail: e.to_string(),
    })
}
