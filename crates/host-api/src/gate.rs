//! The gate v1 (`/api/gate/v1`): the organization's own agents, which
//! negotiate elsewhere (Concordia, OANP), mirror their transcripts here and
//! ask for a person before they commit the organization. Every request but
//! `enroll` is signed like an ANP request (ANP SPEC §3).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// Base path of the gate.
pub const GATE_API_BASE: &str = "/api/gate/v1";

/// The `protocol` of a callback hint, and the first line of what it signs.
pub const CALLBACK_PROTOCOL: &str = "countersign-gate/v1";

/// The header carrying the platform key's signature of a callback hint.
pub const CALLBACK_SIGNATURE_HEADER: &str = "x-countersign-signature";

/// The error body's `protocol` when no session names one yet.
pub const GATE_PROTOCOL: &str = "gate";

/// Most messages one create or append request may carry.
pub const MAX_MESSAGES_PER_REQUEST: usize = 1000;

/// What a callback hint's signature covers:
/// `countersign-gate/v1\ndecision\n<session_id>\n<request_id>\n<status>\n<at>`.
pub fn callback_string(session_id: &str, request_id: &str, status: &str, at: &str) -> String {
    format!("{CALLBACK_PROTOCOL}\ndecision\n{session_id}\n{request_id}\n{status}\n{at}")
}

/// `POST /api/gate/v1/enroll` body (unsigned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateEnrollRequest {
    /// The one-time code the admin issued (`agent enroll`).
    pub code: String,
    /// The agent's name.
    pub name: String,
    /// Raw Ed25519 public key, unpadded base64url.
    pub public_key: String,
    /// Proof of possession: with `proof_version` 2, the key's signature of
    /// [`crate::signing::enroll_proof_string_v2`] (role `gate-agent`, the
    /// host's `authority`, this code); without it (version 1, accepted
    /// during the transition), of `ANP/0.1\nregister\n<public_key>`.
    pub proof: String,
    /// `2` for a version 2 proof; absent for version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_version: Option<u32>,
    /// The authority (`host:port`) the version 2 proof was made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authority: Option<String>,
    /// Where the host posts decision hints, if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
}

/// `POST /api/gate/v1/enroll` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateEnrollResponse {
    /// The agent's id, sent as `x-anp-agent`.
    pub agent_id: String,
    /// The org it acts for.
    pub org: String,
    /// The protocol it was enrolled for.
    pub protocol: String,
    /// The host's platform key (signs callbacks), base64url.
    pub platform_key: String,
    /// Its fingerprint.
    pub platform_fingerprint: String,
}

/// The other side of a mirrored session, as the org's agent names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateCounterparty {
    /// Its party id in the transcript (a key of `keys`).
    pub id: String,
    /// Its display name (data, shown to the person as text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The organization it speaks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
}

/// `POST /api/gate/v1/sessions` body: the transcript from its first message.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// `concordia` (the protocol the agent was enrolled for).
    pub protocol: String,
    /// The session id every message carries.
    pub session_id: String,
    /// Party id → raw Ed25519 key, base64url (padded or not).
    pub keys: BTreeMap<String, String>,
    /// The organization's own party id.
    #[serde(rename = "self")]
    pub self_party: String,
    /// The other side.
    pub counterparty: GateCounterparty,
    /// The messages, in the protocol's own form.
    pub messages: Vec<Box<RawValue>>,
}

/// A transcript's head: how many messages, and the hash of the last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Head {
    /// Messages so far.
    pub count: u64,
    /// The last message's hash (`sha256:…`).
    pub hash: String,
}

/// The answer to creating or extending a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHead {
    /// The session id.
    pub session_id: String,
    /// Its protocol.
    pub protocol: String,
    /// The head the host now holds.
    pub head: Head,
}

/// `POST /api/gate/v1/sessions/:id/messages` body.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppendMessages {
    /// The head this batch extends (what the host holds).
    pub after: Head,
    /// The new messages.
    pub messages: Vec<Box<RawValue>>,
}

/// `GET /api/gate/v1/sessions/:id` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    /// The session id.
    pub session_id: String,
    /// Its protocol.
    pub protocol: String,
    /// The stored head.
    pub head: Head,
    /// The state the protocol crate reads from the transcript.
    pub state: String,
}

/// What an agent asks a person to allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateAction {
    /// Accept the counterparty's standing offer.
    Accept,
}

/// `POST /api/gate/v1/sessions/:id/requests` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestDecision {
    /// Chosen by the agent; repeating the same request changes nothing.
    pub request_id: String,
    /// The hash of the mirrored message awaiting the decision.
    pub message_hash: String,
    /// What the agent wants to do.
    pub action: GateAction,
    /// The amount as the agent reads it (`"150000.00 USD"`), checked
    /// against the offer's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// When the agent stops waiting.
    pub expires_at: String,
}

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestState {
    /// No decision yet, or not all the approvals the policy needs.
    Pending,
    /// Approved by every approver the policy needs: the agent may accept.
    Approved,
    /// Declined.
    Denied,
    /// Declined with terms to offer instead.
    Countered,
    /// Nobody decided in time.
    Expired,
    /// A later message answered the offer before anyone decided.
    Superseded,
}

impl RequestState {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestState::Pending => "pending",
            RequestState::Approved => "approved",
            RequestState::Denied => "denied",
            RequestState::Countered => "countered",
            RequestState::Expired => "expired",
            RequestState::Superseded => "superseded",
        }
    }

    /// The state a wire word names.
    pub fn parse(text: &str) -> Option<RequestState> {
        [
            RequestState::Pending,
            RequestState::Approved,
            RequestState::Denied,
            RequestState::Countered,
            RequestState::Expired,
            RequestState::Superseded,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// True once nothing more can happen to the request.
    pub fn is_final(self) -> bool {
        self != RequestState::Pending
    }
}

/// `POST /api/gate/v1/sessions/:id/requests` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestAccepted {
    /// As sent.
    pub request_id: String,
    /// Where it stands (`pending` when new).
    pub status: RequestState,
    /// When it expires: the earlier of the agent's time and the offer's own.
    pub expires_at: String,
    /// Distinct approvers the org's policy needs.
    pub approvals_required: u32,
    /// The amount at stake, as read from the offer.
    pub amount: String,
    /// The policy threshold receipts name as `threshold_crossed`.
    pub threshold: String,
}

/// One person's decision on a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecidedBy {
    /// The approver's name.
    pub name: String,
    /// The approver's enrolled email.
    pub email: String,
    /// The `did:key` that signed the receipt.
    pub identity: String,
    /// `approve` or `deny`.
    pub decision: String,
    /// When the host recorded it.
    pub at: String,
}

/// A request as it stands: `GET …/requests/:request_id`, and each request
/// in the approver's view of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRequestStatus {
    /// As sent.
    pub request_id: String,
    /// Where it stands.
    pub status: RequestState,
    /// The awaited message's hash.
    pub message_hash: String,
    /// What the agent asked to do.
    pub action: GateAction,
    /// The amount at stake (`"150000.00 USD"`).
    pub amount: String,
    /// The policy threshold receipts name as `threshold_crossed`.
    pub threshold: String,
    /// When it expires (or expired).
    pub expires_at: String,
    /// When the agent asked.
    pub created_at: String,
    /// Distinct approvals given so far (by approvers not revoked).
    pub approvals_given: u32,
    /// Distinct approvals the policy needs.
    pub approvals_required: u32,
    /// The receipt that decided it: the last approval, or the deny.
    pub receipt: Option<Value>,
    /// Every receipt recorded for it, in order.
    pub receipts: Vec<Value>,
    /// Who decided, in the same order.
    pub decided_by: Vec<DecidedBy>,
    /// Why it was declined (denied, countered).
    pub reason: Option<String>,
    /// The terms to offer instead (countered), validated and screened.
    pub counter_terms: Option<Value>,
    /// Approvers only: why screening holds a counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_reason: Option<String>,
    /// Each time an approver extended its deadline, oldest first (the
    /// deadline is the organization's own; `expires_at` is the latest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<DeadlineExtension>,
    /// Approvers only: the host's record of each approval of it (who, step,
    /// role, for whom, rule, policy version), whichever console gave it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<crate::approver::ApprovalRecord>,
}

/// An approver's extension of a gate request's deadline, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineExtension {
    /// Who extended it (the approver's email).
    pub by: String,
    /// The deadline before.
    pub from: String,
    /// The deadline after.
    pub to: String,
    /// Why, in the approver's words (the organization's own record).
    pub reason: String,
    /// When.
    pub at: String,
}

/// `POST /api/console/v1/sessions/<protocol>:<id>/requests/<request_id>/deadline`:
/// a later deadline for a pending gate request, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtendDeadlineRequest {
    /// The new deadline (RFC 3339): later than the current one, no later
    /// than the offer's own validity and 30 days from now.
    pub expires_at: String,
    /// Why (one line, 1 to 500 characters), kept with the request.
    pub reason: String,
}

/// The body of a callback hint: not the decision, only that there is one
/// to fetch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackHint {
    /// [`CALLBACK_PROTOCOL`].
    pub protocol: String,
    /// The session id.
    pub session_id: String,
    /// The request decided or expired.
    pub request_id: String,
    /// Its new status.
    pub status: String,
    /// When the host sent the hint.
    pub at: String,
}

/// The gate's error body: `{"error": {"code", "message", …}, "protocol"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateErrorBody {
    /// The error.
    pub error: GateErrorDetail,
    /// The session's protocol, or `gate` where none is known yet.
    pub protocol: String,
}

/// Code, sentence, and for a refused transcript the message and the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateErrorDetail {
    /// Machine-readable code (see [`codes`]).
    pub code: String,
    /// A sentence naming what was wrong.
    pub message: String,
    /// `transcript_invalid`: the failing message's 0-based position in the
    /// whole transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// `transcript_invalid`: its `id`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// `transcript_invalid`: the check it failed (`signature`, `link`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// `head_mismatch`, `session_exists`: the head the host holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<Head>,
}

/// The gate's error codes beyond ANP's (`anp::api::codes`).
pub mod codes {
    /// A protocol the host does not speak, or not the agent's.
    pub const UNKNOWN_PROTOCOL: &str = "unknown_protocol";
    /// A message fails verification.
    pub const TRANSCRIPT_INVALID: &str = "transcript_invalid";
    /// The stated amount differs from the offer's.
    pub const AMOUNT_MISMATCH: &str = "amount_mismatch";
    /// An unknown request id in a session of this agent.
    pub const NOT_FOUND: &str = "not_found";
    /// The session exists already.
    pub const SESSION_EXISTS: &str = "session_exists";
    /// A batch does not extend the stored head.
    pub const HEAD_MISMATCH: &str = "head_mismatch";
    /// A request id reused with another body, or a second open request for one message.
    pub const REQUEST_CONFLICT: &str = "request_conflict";
}

/// Reads a JSON message list as values (each raw text parsed once).
pub fn parse_messages(messages: &[Box<RawValue>]) -> Result<Vec<Value>, serde_json::Error> {
    messages
        .iter()
        .map(|m| serde_json::from_str(m.get()))
        .collect()
}

/// `POST /api/gate/v1/plain`: an agent that speaks no negotiation protocol
/// asks a person about the terms it would commit to (docs/gate-api.md,
/// "Plain terms"). The terms are read strictly by `crates/plain`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlainRequest {
    /// Chosen by the agent, unique among its plain-terms requests;
    /// repeating the same request changes nothing.
    pub request_id: String,
    /// An earlier request of the agent's that these terms revise (the
    /// thread's latest): the earlier one is superseded if still pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revises: Option<String>,
    /// The terms: counterparty, currency, line items, term, conditions.
    pub terms: serde_json::Value,
    /// The agent's reasons, shown to the person as its words (data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<serde_json::Value>,
    /// When the agent stops waiting (RFC 3339).
    pub expires_at: String,
}

/// `POST /api/gate/v1/plain/:request_id/outcome`: what the agent then did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlainOutcomeReport {
    /// `executed` or `abandoned`.
    pub outcome: String,
    /// The terms executed, exactly (required for `executed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<serde_json::Value>,
}

/// The answer to a plain-terms request or report: the request as it
/// stands, the thread it is in and the hash of its terms entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlainAnswer {
    /// The thread (a gate session of protocol `plain`): its first request's id.
    pub session_id: String,
    /// The request, as the gate answers any.
    #[serde(flatten)]
    pub request: GateRequestStatus,
    /// The host's signed entry of the request's terms: what a receipt's
    /// `offer_hash` names (for the reference SDK's own check).
    pub entry: Value,
    /// Set when the agent's report breaks the decision: executing after a
    /// refusal or an expiry, or on other terms than the approved ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breach: Option<String>,
}
