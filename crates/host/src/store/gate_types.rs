//! The rows of the gate's repository ([`super::GateRepo`]), shared by both
//! stores: the org's own agents, their enrollment codes, the mirrored
//! sessions (keyed by org, protocol and session id), their messages, the
//! agents' requests for a decision, the receipts people signed, and the
//! approvers' decisions as received.

/// Where a gate session lives: its org, its protocol and its session id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GateKey {
    /// The org's handle.
    pub org_handle: String,
    /// `concordia`, `oanp`.
    pub protocol: String,
    /// The session id in its protocol.
    pub session_id: String,
}

/// An enrolled gate agent (the org's own agent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateAgentRow {
    /// `gate_<32 hex>`.
    pub id: String,
    /// The org it acts for.
    pub org_handle: String,
    /// The one protocol it mirrors.
    pub protocol: String,
    /// The name it enrolled with.
    pub name: String,
    /// Its public key, unpadded base64url.
    pub public_key: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Where decision hints go, if anywhere (already checked).
    pub callback_url: Option<String>,
    /// Enrollment time.
    pub enrolled_at: String,
    /// Revocation time.
    pub revoked_at: Option<String>,
    /// The email of the approver the admin named as its owner, lower-cased.
    pub owner_email: Option<String>,
}

/// An MCP bearer token of a gate agent (stored only as its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpTokenRow {
    /// `mcptok_<32 hex>`: what an admin revokes.
    pub id: String,
    /// The gate agent every call with it is attributed to.
    pub agent_id: String,
    /// The token's SHA-256, lowercase hex.
    pub token_hash: String,
    /// When it was issued.
    pub created_at: String,
    /// When it was revoked.
    pub revoked_at: Option<String>,
}

/// A gate enrollment code (stored only as its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCodeRow {
    /// The org it enrolls into.
    pub org_handle: String,
    /// The agent's name as the admin gave it.
    pub name: String,
    /// The protocol the agent will mirror.
    pub protocol: String,
    /// Unix seconds after which it no longer works.
    pub expires_at: i64,
    /// True once spent.
    pub used: bool,
    /// The owner the agent it enrolls will have.
    pub owner_email: Option<String>,
}

/// A mirrored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateSession {
    /// Its key.
    pub key: GateKey,
    /// The gate agent that created it (the only one that may extend it).
    pub agent_id: String,
    /// The org's own party id.
    pub self_party: String,
    /// The other side's party id.
    pub counterparty_id: String,
    /// The other side's name, as declared.
    pub counterparty_name: Option<String>,
    /// The other side's organization, as declared.
    pub counterparty_org: Option<String>,
    /// `{party id: base64url key}` as JSON text, pinned at creation.
    pub keys: String,
    /// Messages stored.
    pub head_count: u64,
    /// The last message's hash.
    pub head_hash: String,
    /// The state the protocol crate read from the transcript.
    pub state: String,
    /// SHA-256 (hex) of the body that created it and how many messages it
    /// carried, as `<hex>:<count>` (what a repeated create is answered from).
    pub created_sha256: String,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// Bumped by every commit: what a commit compares before it applies.
    pub version: u64,
}

/// One mirrored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateMessage {
    /// 1-based position in the transcript.
    pub seq: u64,
    /// Its hash (`sha256:…`).
    pub hash: String,
    /// The message as mirrored, byte for byte.
    pub body: String,
}

/// An agent's request for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRequestRow {
    /// Chosen by the agent.
    pub request_id: String,
    /// The awaited message's hash.
    pub message_hash: String,
    /// Its 1-based position.
    pub seq: u64,
    /// Its message type (`negotiate.counter`).
    pub kind: String,
    /// `accept`.
    pub action: String,
    /// `"150000.00 USD"`.
    pub amount: String,
    /// The policy threshold receipts name (`"250000 USD"`).
    pub threshold: String,
    /// When it expires, RFC 3339.
    pub expires_at: String,
    /// The same, unix seconds (what the sweeper compares).
    pub expires_unix: i64,
    /// `pending`, `approved`, `denied`, `countered`, `expired`, `superseded`.
    pub status: String,
    /// Distinct approvals needed.
    pub approvals_required: u32,
    /// SHA-256 (hex) of the body that created it.
    pub body_sha256: String,
    /// When the agent asked.
    pub created_at: String,
    /// When it was decided (or expired).
    pub decided_at: Option<String>,
    /// The decline's reason.
    pub reason: Option<String>,
    /// The counter terms, JSON text.
    pub counter_terms: Option<String>,
    /// Why screening holds a counter.
    pub held_reason: Option<String>,
    /// The route the org's policy of authority gave it
    /// (`domain::authority::StoredRoute`, JSON text); `None` for a request
    /// from before routing, decided by `approvals_required` alone.
    pub route: Option<String>,
    /// Each extension of its deadline (`DeadlineExtension`s, JSON text).
    pub extensions: Option<String>,
}

/// A receipt recorded towards a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateReceiptRow {
    /// Which request.
    pub request_id: String,
    /// Who signed it.
    pub approver_id: String,
    /// Their name.
    pub approver_name: String,
    /// Their email.
    pub approver_email: String,
    /// True when the approver was revoked since (it no longer counts).
    pub approver_revoked: bool,
    /// `approve` or `deny`.
    pub decision: String,
    /// The receipt, JSON text.
    pub receipt: String,
    /// When it was recorded.
    pub recorded_at: String,
    /// The step of the request's chain it counted at (from 1); `None` for
    /// a receipt from before routing, or a deny.
    pub step: Option<u32>,
    /// The role it was signed as; `None` as for `step`.
    pub role: Option<String>,
}

/// A session with everything mirrored and asked in it, read in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateState {
    /// The session.
    pub session: GateSession,
    /// Every message, in order.
    pub messages: Vec<GateMessage>,
    /// Every request, oldest first.
    pub requests: Vec<GateRequestRow>,
    /// Every receipt, in the order recorded.
    pub receipts: Vec<GateReceiptRow>,
}

/// One gate session of an org's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateSummaryRow {
    /// The session.
    pub session: GateSession,
    /// The name of the agent mirroring it.
    pub agent_name: String,
    /// The approver named as that agent's owner, if any.
    pub owner_email: Option<String>,
    /// Its pending requests.
    pub pending: Vec<GateRequestRow>,
    /// Their receipts.
    pub receipts: Vec<GateReceiptRow>,
}

/// A decision on a gate request, as first received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateDecisionRow {
    /// Who sent it.
    pub approver_id: String,
    /// For which session.
    pub key: GateKey,
    /// For which request.
    pub request_id: String,
    /// SHA-256 of the body bytes, hex.
    pub body_sha256: String,
    /// `appended`, `awaiting_approvals` or `held`.
    pub outcome: String,
    /// The sentence answered.
    pub detail: String,
}

/// A change to a request; each applies only while the request is pending
/// (otherwise the commit conflicts and is planned again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestChange {
    /// It is decided, expired or superseded.
    Settle {
        /// Which request.
        request_id: String,
        /// Its final status.
        status: String,
        /// When.
        at: String,
        /// The decline's reason.
        reason: Option<String>,
        /// The counter terms, JSON text.
        counter_terms: Option<String>,
    },
    /// Screening holds a counter; the request stays pending.
    Held {
        /// Which request.
        request_id: String,
        /// Why.
        reason: String,
    },
    /// Nothing changes, but the request must still be pending (an approval
    /// that is not yet the last).
    StillPending {
        /// Which request.
        request_id: String,
    },
    /// An approver extended its deadline: only while it is pending and its
    /// deadline is still the one the extension started from.
    Extend {
        /// Which request.
        request_id: String,
        /// The deadline it started from (unix seconds).
        from_unix: i64,
        /// The new deadline, RFC 3339.
        expires_at: String,
        /// The new deadline, unix seconds.
        expires_unix: i64,
        /// Every extension so far, this one included (JSON text).
        extensions: String,
    },
}

/// A receipt to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGateReceipt {
    /// Which request.
    pub request_id: String,
    /// Who.
    pub approver_id: String,
    /// `approve` or `deny`.
    pub decision: String,
    /// The receipt, JSON text.
    pub receipt: String,
    /// When.
    pub recorded_at: String,
    /// 1 for the first receipt of the request, 2 for the next…
    pub ordinal: u32,
    /// The step of the chain it counts at (from 1), for an approval.
    pub step: Option<u32>,
    /// The role it was signed as.
    pub role: Option<String>,
}

/// A decision on a gate request to record as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGateDecision {
    /// Its id (unique across the host).
    pub decision_id: String,
    /// Who sent it.
    pub approver_id: String,
    /// For which request.
    pub request_id: String,
    /// The body bytes as sent.
    pub body: Vec<u8>,
    /// Their SHA-256, hex.
    pub body_sha256: String,
    /// The four signed headers, JSON text.
    pub signed_headers: String,
    /// Its outcome.
    pub outcome: String,
    /// The sentence answered.
    pub detail: String,
    /// When.
    pub received_at: String,
}

/// One atomic change to one gate session, planned outside any transaction
/// and applied only if the session is still at the version it was read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCommit {
    /// The session as it will be; `version` is the version it was read at.
    pub session: GateSession,
    /// True when the session is new (inserted, not compared).
    pub new_session: bool,
    /// Messages to append, right after the head it was read at.
    pub messages: Vec<GateMessage>,
    /// A request to open.
    pub new_request: Option<GateRequestRow>,
    /// Changes to pending requests.
    pub request_changes: Vec<RequestChange>,
    /// Receipts to record.
    pub receipts: Vec<NewGateReceipt>,
    /// The decision to record.
    pub decision: Option<NewGateDecision>,
}

impl GateCommit {
    /// A commit that changes nothing yet, for `session`.
    pub fn on(session: GateSession) -> GateCommit {
        GateCommit {
            session,
            new_session: false,
            messages: Vec::new(),
            new_request: None,
            request_changes: Vec::new(),
            receipts: Vec::new(),
            decision: None,
        }
    }
}

/// A request the sweeper found past its time and marked expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredRequest {
    /// Its session.
    pub key: GateKey,
    /// The request.
    pub request_id: String,
    /// The agent that asked.
    pub agent_id: String,
}
