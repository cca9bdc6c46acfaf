//! ANP's own wire: the four ANP/0.1 endpoints (SPEC §6), discovery
//! (RFC-003), the error shape, and the request signing of SPEC §3 (the
//! host's own APIs sign a string of their own with the same headers,
//! `countersign_host_api::signing`).
//! Their shapes live in `countersign-host-api`. Signing and checking a
//! request are pure functions here; IO is elsewhere.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::event::{ChainClaim, Event, EventKind, LogDocument, LogKeys, SessionInfo};
use crate::keys::{self, SigningKey, VerifyingKey};
use crate::signed;

/// Base path of the vendor agent API.
pub const AGENT_API_BASE: &str = "/api/agent/v1";
/// Discovery document path (RFC-003).
pub const WELL_KNOWN_PATH: &str = "/.well-known/anp.json";
/// The drafts this implementation speaks, as advertised in discovery.
pub const IMPLEMENTED_DRAFTS: [&str; 3] = ["RFC-001", "RFC-002", "RFC-003"];

/// Header: the agent (or approver) registration id.
pub const HEADER_AGENT: &str = "x-anp-agent";
/// Header: ISO 8601 request time.
pub const HEADER_TIMESTAMP: &str = "x-anp-timestamp";
/// Header: single-use nonce.
pub const HEADER_NONCE: &str = "x-anp-nonce";
/// Header: signature over the canonical request string.
pub const HEADER_SIGNATURE: &str = "x-anp-signature";
/// SPEC §3: how far a request's timestamp may be from the server's clock.
pub const TIMESTAMP_WINDOW_SECS: i64 = 300;
/// SPEC §3: longest nonce.
pub const MAX_NONCE_LEN: usize = 120;

/// The exclusive bound of the window as [`check_signed_request`] applies it:
/// the skew is counted in whole seconds, so a timestamp up to 300.999 s away
/// (past or future) is accepted, and one 301 s away is not.
pub fn window_bound() -> time::Duration {
    time::Duration::seconds(TIMESTAMP_WINDOW_SECS + 1)
}

/// The first instant at which a request stamped `at` is refused as too old:
/// what anything that must outlive every acceptance of that request (a
/// spent nonce) is kept until. Future skew needs no more: a request stamped
/// in the future is refused from the same instant on.
pub fn refused_from(at: OffsetDateTime) -> OffsetDateTime {
    at + window_bound()
}

/// The four signed-request headers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedHeaders {
    /// `x-anp-agent`.
    pub agent: String,
    /// `x-anp-timestamp`.
    pub timestamp: String,
    /// `x-anp-nonce`.
    pub nonce: String,
    /// `x-anp-signature`.
    pub signature: String,
}

impl SignedHeaders {
    /// The headers as (name, value) pairs, ready to send.
    pub fn pairs(&self) -> [(&'static str, &str); 4] {
        [
            (HEADER_AGENT, &self.agent),
            (HEADER_TIMESTAMP, &self.timestamp),
            (HEADER_NONCE, &self.nonce),
            (HEADER_SIGNATURE, &self.signature),
        ]
    }
}

/// Formats a time as the protocol writes it: RFC 3339 UTC with milliseconds.
pub fn format_timestamp(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

/// Reads an ISO 8601 / RFC 3339 timestamp.
pub fn parse_timestamp(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// Signs a request (SPEC §3). The caller supplies the clock and the nonce.
pub fn sign_request(
    key: &SigningKey,
    agent_id: &str,
    method: &str,
    path: &str,
    body: &[u8],
    timestamp: &str,
    nonce: &str,
) -> SignedHeaders {
    let string = signed::canonical_request_string(method, path, timestamp, nonce, body);
    SignedHeaders {
        agent: agent_id.to_owned(),
        timestamp: timestamp.to_owned(),
        nonce: nonce.to_owned(),
        signature: keys::sign_b64(key, string.as_bytes()),
    }
}

/// Why a signed request is refused. The host answers all of them with one
/// uniform refusal; the variants exist for its logs and for tests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestAuthError {
    /// A header is absent or empty.
    #[error("missing header {0}")]
    MissingHeader(&'static str),
    /// The nonce is longer than SPEC §3 allows.
    #[error("nonce longer than {MAX_NONCE_LEN} characters")]
    NonceTooLong,
    /// The timestamp does not parse.
    #[error("timestamp is not ISO 8601")]
    BadTimestamp,
    /// The timestamp is outside the window.
    #[error("timestamp is {0} seconds from server time, more than {TIMESTAMP_WINDOW_SECS}")]
    OutsideWindow(i64),
    /// The signature does not verify.
    #[error("signature does not verify")]
    BadSignature,
}

/// Checks the parts of a signed request that need no storage: header shape,
/// the timestamp window against `now`, and the signature against `key`.
/// Nonce reuse and agent status are the host's, which has the storage.
pub fn check_signed_request(
    headers: &SignedHeaders,
    key: &VerifyingKey,
    method: &str,
    path: &str,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<(), RequestAuthError> {
    check_headers_and_window(headers, now)?;
    let string =
        signed::canonical_request_string(method, path, &headers.timestamp, &headers.nonce, body);
    if keys::verify_b64(key, string.as_bytes(), &headers.signature) {
        Ok(())
    } else {
        Err(RequestAuthError::BadSignature)
    }
}

/// The checks of SPEC §3 that do not depend on what was signed: every
/// header present, the nonce short enough, the timestamp inside the window
/// ([`window_bound`]) around `now`. Shared by every request string signed
/// with these headers (the host's own APIs sign another string).
pub fn check_headers_and_window(
    headers: &SignedHeaders,
    now: OffsetDateTime,
) -> Result<(), RequestAuthError> {
    for (name, value) in headers.pairs() {
        if value.is_empty() {
            return Err(RequestAuthError::MissingHeader(name));
        }
    }
    if headers.nonce.chars().count() > MAX_NONCE_LEN {
        return Err(RequestAuthError::NonceTooLong);
    }
    let at = parse_timestamp(&headers.timestamp).ok_or(RequestAuthError::BadTimestamp)?;
    if (now - at).abs() >= window_bound() {
        return Err(RequestAuthError::OutsideWindow((now - at).whole_seconds()));
    }
    Ok(())
}

/// The uniform error body: `{ "error": { "code", "message" }, "protocol" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error itself.
    pub error: ErrorDetail,
    /// Always `ANP/0.1`.
    pub protocol: String,
}

/// Code and sentence of an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Machine-readable code (see [`codes`]).
    pub code: String,
    /// A sentence for people, naming what was wrong.
    pub message: String,
}

impl ErrorBody {
    /// An error body in the protocol's shape.
    pub fn new(code: &str, message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: code.to_owned(),
                message: message.into(),
            },
            protocol: signed::PROTOCOL.to_owned(),
        }
    }
}

/// The error codes hosts answer with.
pub mod codes {
    /// The uniform refusal: authentication failure, unknown agent, session or handle.
    pub const UNAUTHORIZED: &str = "unauthorized";
    /// The body is not valid JSON or violates a schema rule.
    pub const INVALID_REQUEST: &str = "invalid_request";
    /// The body is larger than the host accepts.
    pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
    /// A rate limit was hit (or the limiter is unavailable: it fails closed).
    pub const RATE_LIMITED: &str = "rate_limited";
    /// The session is closed or accepted; nothing more may be appended.
    pub const SESSION_CLOSED: &str = "session_closed";
    /// A counter-offer, decline or accept with no standing offer to answer.
    pub const NO_STANDING_OFFER: &str = "no_standing_offer";
    /// The referenced offer is not the standing one any more.
    pub const NOT_STANDING: &str = "not_standing";
    /// The offer's `expires_at` has passed.
    pub const OFFER_EXPIRED: &str = "offer_expired";
    /// An authorship signature does not verify.
    pub const BAD_SIGNATURE: &str = "bad_signature";
    /// The proof of possession does not verify.
    pub const BAD_PROOF: &str = "bad_proof";
    /// A live target needs a human-verified agent.
    pub const NOT_VERIFIED: &str = "not_verified";
    /// An enrollment code is unknown, used or expired.
    pub const BAD_ENROLLMENT_CODE: &str = "bad_enrollment_code";
    /// The approval policy refuses the decision (for example the same approver twice).
    pub const POLICY: &str = "policy";
    /// A decision id was reused with a different body.
    pub const DECISION_CONFLICT: &str = "decision_conflict";
    /// Something failed inside the host.
    pub const INTERNAL: &str = "internal";
}

/// An agent's standing with a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Registered, not yet verified by a person: sandbox only.
    Sandbox,
    /// Verified by a person: may open live sessions.
    Verified,
    /// Refused everywhere.
    Revoked,
}

/// `POST /api/agent/v1/register` body (SPEC §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// The agent's display name.
    pub agent_name: String,
    /// The vendor it speaks for.
    pub vendor_name: String,
    /// A human contact.
    pub contact_email: String,
    /// Raw Ed25519 public key, base64url.
    pub public_key: String,
    /// Signature over [`signed::registration_proof_string`].
    pub proof: String,
}

/// `POST /api/agent/v1/register` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterResponse {
    /// The registration id, sent as `x-anp-agent`.
    pub agent_id: String,
    /// Fingerprint of the registered key.
    pub fingerprint: String,
    /// `sandbox` until a person verifies it.
    pub status: AgentStatus,
    /// Always `ANP/0.1`.
    pub protocol: String,
}

/// Where a session is opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// A buyer organization, by the handle it issued.
    Org {
        /// `anp_org_...`.
        org_handle: String,
    },
    /// The sandbox buyer.
    Sandbox {
        /// Always true.
        sandbox: bool,
    },
}

/// `POST /api/agent/v1/sessions` body (SPEC §6.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenSessionRequest {
    /// Where to open it.
    pub target: Target,
    /// The vendor's mandate envelope (validated by the host as `envelope`).
    pub envelope: Value,
}

/// `POST /api/agent/v1/sessions` answer, as the reference host sends it:
/// `{session_id, buyer_envelope, log, protocol}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenSessionResponse {
    /// The new session's id.
    pub session_id: String,
    /// The buyer's mandate envelope.
    pub buyer_envelope: Value,
    /// The log so far (events 1 and 2).
    pub log: LogDocument,
    /// `ANP/0.1`. SPEC §6.2 does not list it, so an answer without it is
    /// read as 0.1; the log inside carries its own `protocol`, which clients
    /// check.
    #[serde(default = "protocol_0_1")]
    pub protocol: String,
}

fn protocol_0_1() -> String {
    signed::PROTOCOL.to_owned()
}

/// `POST /api/agent/v1/sessions/:id/events` answer, as the reference host
/// sends it: `{log, protocol}`. What the host writes; clients read
/// [`LogAnswer`], which also takes the bare log document older hosts send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppendResponse {
    /// The updated log (it may already hold the buyer's answer).
    pub log: LogDocument,
    /// `ANP/0.1`.
    pub protocol: String,
}

/// An answer that carries a session log in either shape ANP/0.1 hosts use:
/// wrapped, `{log, protocol}` (the reference host's append answer), or the
/// bare log document (`GET …/log`, and the append answer of hosts written
/// from SPEC §6.3's "returns the updated log"). One pass, no buffering;
/// members of neither shape are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LogAnswer {
    log: Option<LogDocument>,
    protocol: Option<String>,
    session: Option<SessionInfo>,
    chain: Option<ChainClaim>,
    keys: Option<LogKeys>,
    events: Option<Vec<Event>>,
}

/// Why a [`LogAnswer`] holds no log document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the answer is neither {{log, protocol}} nor a log document: it has no {0}")]
pub struct NotALog(&'static str);

impl LogAnswer {
    /// The log document, from whichever shape the host sent.
    pub fn into_document(self) -> Result<LogDocument, NotALog> {
        if let Some(log) = self.log {
            return Ok(log);
        }
        Ok(LogDocument {
            protocol: self.protocol.ok_or(NotALog("`protocol`"))?,
            session: self.session.ok_or(NotALog("`log` and no `session`"))?,
            chain: self.chain.ok_or(NotALog("`chain`"))?,
            keys: self.keys.unwrap_or_default(),
            events: self.events.ok_or(NotALog("`events`"))?,
        })
    }
}

/// `POST /api/agent/v1/sessions/:id/events` body (SPEC §6.3). The answer is
/// an [`AppendResponse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitEventRequest {
    /// The event kind.
    pub kind: EventKind,
    /// Its payload.
    pub payload: Value,
    /// Authorship signature over `ANP/0.1\n<kind>\n<payload_hash>`.
    pub signature: String,
}

/// `GET /api/agent/v1/sessions/:id` answer: cheap polling,
/// `{session: {id, event_count, chain_head}, protocol}` as the reference
/// host sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// Always `ANP/0.1`.
    pub protocol: String,
    /// The session's head, and what else the host says about it.
    pub session: StatusInfo,
}

/// The `session` block of a status answer. The reference host sends only
/// `id`, `event_count` and `chain_head`; ours adds the session's state,
/// which a client must not need (it is in every log document too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusInfo {
    /// Session id.
    pub id: String,
    /// Number of events in the log.
    pub event_count: u64,
    /// `event_hash` of the last event.
    pub chain_head: String,
    /// `open`, `closed`, `accepted` (our addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// True for sandbox sessions (our addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// When the session opened (our addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<String>,
    /// When it closed, if it has (our addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
}

impl From<SessionInfo> for StatusInfo {
    fn from(info: SessionInfo) -> StatusInfo {
        StatusInfo {
            id: info.id,
            event_count: info.event_count,
            chain_head: info.chain_head,
            status: Some(info.status),
            sandbox: Some(info.sandbox),
            opened_at: Some(info.opened_at),
            closed_at: info.closed_at,
        }
    }
}

/// One published key in the discovery document (RFC-003). Members beyond
/// RFC-003's are ignored when read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoveredKey {
    /// Raw Ed25519 public key, base64url.
    pub public_key: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// `events` (the platform key) and/or `approval` (an approver's key).
    pub roles: Vec<String>,
    /// Start of validity.
    pub valid_from: String,
    /// End of validity (revocation), or null.
    #[serde(default)]
    pub valid_to: Option<String>,
    /// For approval keys: the `approved_by` the approver signs as (email).
    /// Our addition to RFC-003: absent from other hosts' documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
}

/// `GET /.well-known/anp.json` (RFC-003). Read exactly as the RFC publishes
/// it: unknown members are ignored, and our one addition (`drafts`) is
/// optional and left out when empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WellKnown {
    /// `["ANP/0.1"]`.
    pub protocol_versions: Vec<String>,
    /// `/api/agent/v1`.
    pub api_base: String,
    /// The draft RFCs this host implements (our addition; empty when the
    /// host does not say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drafts: Vec<String>,
    /// Platform and approver keys.
    pub platform_keys: Vec<DiscoveredKey>,
}
