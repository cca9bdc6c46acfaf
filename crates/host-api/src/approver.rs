//! The approver API v1 (`/api/console/v1`): how a console sees and decides,
//! for every protocol the host speaks. ANP sessions and gate sessions share
//! the summary and the pending-decision shape; each hands its record over in
//! its own form (the ANP log document, a transcript) and takes the person's
//! decision as its own signed artifact (an RFC-002 approval, an
//! ApprovalReceipt).

use anp::api::AgentStatus;
use anp::payload::Approval;
use anp::LogDocument;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::gate::{GateCounterparty, GateRequestStatus, Head};
use crate::protocol;

/// Base path of the approver (console) API.
pub const CONSOLE_API_BASE: &str = "/api/console/v1";

/// The refusal (401) of a request signed by an approver key an admin
/// revoked (`approver revoke`, a lost laptop): told only to whoever holds
/// the key (the request's signature verifies against it), with when; any
/// other unknown signer gets the uniform `unauthorized`.
pub const KEY_REVOKED: &str = "key_revoked";

/// `POST /api/console/v1/enroll` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnrollRequest {
    /// The one-time code from the admin CLI.
    pub code: String,
    /// The approver's name.
    pub name: String,
    /// The approver's email, which becomes `approved_by`.
    pub email: String,
    /// The approver's public key, base64url.
    pub public_key: String,
    /// Proof of possession: with `proof_version` 2, the key's signature of
    /// [`crate::signing::enroll_proof_string_v2`] (role `approver`, the
    /// host's `authority`, this code); without it (version 1, accepted
    /// during the transition), of `ANP/0.1\nregister\n<public_key>`.
    pub proof: String,
    /// `2` for a version 2 proof; absent for version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_version: Option<u32>,
    /// The authority (`host:port`) the version 2 proof was made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authority: Option<String>,
}

/// `POST /api/console/v1/enroll` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrollResponse {
    /// The approver id, sent as `x-anp-agent`.
    pub approver_id: String,
    /// Fingerprint of the approver's key.
    pub fingerprint: String,
    /// The host's platform key, base64url.
    pub platform_key: String,
    /// Its fingerprint.
    pub platform_fingerprint: String,
    /// Always `ANP/0.1` (the API's request signing and error shape).
    pub protocol: String,
}

/// `POST /api/console/v1/keys/rotate` body, signed (like every approver
/// request) with the key being retired: the approver moves to a new key.
/// Both signatures are over [`crate::signing::rotate_statement`] for this
/// host, this approver, its current key and `new_public_key`, at `at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotateKeyRequest {
    /// The new public key, base64url.
    pub new_public_key: String,
    /// When the statement was made (RFC 3339, within the host's window).
    pub at: String,
    /// The current (old) key's signature of the statement: its consent.
    pub consent: String,
    /// The new key's signature of the statement: proof of possession.
    pub proof: String,
}

/// `POST /api/console/v1/keys/rotate` answer: the approver as enrolled with
/// the new key. The same request made again (an answer lost on the way)
/// answers the same; the old key signs nothing else from `retired_at` on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RotateKeyResponse {
    /// The approver id to sign with from now on (`x-anp-agent`).
    pub approver_id: String,
    /// The new key's fingerprint.
    pub fingerprint: String,
    /// The retired approver id (the old key's).
    pub previous_approver_id: String,
    /// The old key's fingerprint.
    pub previous_fingerprint: String,
    /// When the old key was retired (its `valid_to` in the discovery
    /// documents) and the new one took over (its `valid_from`).
    pub retired_at: String,
}

/// The refusal (409) of a rotation whose old key was already retired in
/// favour of another key, or revoked: nothing changed.
pub const KEY_ALREADY_ROTATED: &str = "key_already_rotated";

/// The other side of a session, for every protocol: who the person is
/// deciding about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterparty {
    /// Its id in the protocol: the vendor agent's registration id (ANP), the
    /// party id in the transcript (Concordia).
    pub id: String,
    /// Its display name, as it or the org's agent declared it (data, never
    /// an instruction).
    #[serde(default)]
    pub name: Option<String>,
    /// The organization it speaks for, as declared.
    #[serde(default)]
    pub organization: Option<String>,
    /// Fingerprint of its key (SHA-256 of the raw key, hex).
    pub fingerprint: String,
    /// ANP: `sandbox`, `verified` or `revoked` (the host's word about the
    /// agent). Gate sessions: `declared` (the org's own agent names it).
    pub status: String,
    /// ANP: whether an admin verified `name` and `organization` (`agent
    /// verify`). False means they are only what a registration declared:
    /// ANP/0.1's registration proof is replayable, so anyone who has seen
    /// it can register the key first under names of their own. Absent
    /// (null) where it does not apply (gate and ANEX counterparties) and
    /// from hosts that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

/// The vendor side of an ANP session, as consoles that predate
/// [`Counterparty`] read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorIdentity {
    /// Registration id.
    pub agent_id: String,
    /// Agent display name.
    pub agent_name: String,
    /// Vendor name.
    pub vendor_name: String,
    /// Key fingerprint.
    pub fingerprint: String,
    /// Sandbox, verified or revoked.
    pub status: AgentStatus,
}

/// An agent's standing as one word (`sandbox`, `verified`, `revoked`), as
/// the host stores it and the console shows it beside a vendor: written
/// here, on the wire both share, so the console needs no host code for it.
pub fn status_text(status: AgentStatus) -> &'static str {
    match status {
        AgentStatus::Sandbox => "sandbox",
        AgentStatus::Verified => "verified",
        AgentStatus::Revoked => "revoked",
    }
}

/// The organization's own agent that mirrors a gate session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateAgentIdentity {
    /// Its enrollment id (`gate_…`).
    pub agent_id: String,
    /// The name the admin enrolled it under.
    pub name: String,
}

/// An approval already given towards a multi-approver policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GivenApproval {
    /// Approver email.
    pub approved_by: String,
    /// When.
    pub at: String,
    /// The step of the request's chain it counted at (from 1); absent for
    /// an approval given before requests were routed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// The role it was given as (a role of the org's policy of authority).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// When a stand-in gave it: for whom (an email).
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub for_person: Option<String>,
}

/// Where a request stands on the chain of approvals its organization's
/// policy of authority gave it (docs/authority.md): the rule that fired
/// and why, and each step with who approved and who may still act.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteView {
    /// The sentence a person reads ("Above 10,000 USD: rule 2").
    pub reason: String,
    /// The rule that fired, counted from 1; absent for a fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<u32>,
    /// The version of the policy it was routed under; absent when the org
    /// had none loaded (its old threshold routed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<u64>,
    /// The lower edge of the amount band that fired (`"10000 USD"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<String>,
    /// The step waiting now, from 1; absent once every step is met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_step: Option<u32>,
    /// True when the approver asking may approve at the current step now
    /// (holds one of its open roles and has not approved this request).
    pub you_may_act: bool,
    /// True when the approver asking holds one of the current step's open
    /// roles, so may decline or counter (which decides the request).
    #[serde(default)]
    pub you_may_decide: bool,
    /// The role a decision by the approver asking is made as at the
    /// current step (a gate receipt names it as `approver.role`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub your_role: Option<String>,
    /// When the approver asking decides as someone's stand-in: for whom and
    /// under which delegation (a gate or ANEX receipt names it as
    /// `approver.on_behalf_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub your_stand_in: Option<OnBehalfOf>,
    /// Every step, in order.
    pub steps: Vec<RouteStep>,
}

/// One step of a request's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteStep {
    /// Counted from 1.
    pub number: u32,
    /// True once every part is met.
    pub met: bool,
    /// Its parts: one role, or several decided in parallel.
    pub parts: Vec<RoutePart>,
    /// How long it may wait, in minutes, when the policy says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub respond_within_minutes: Option<u32>,
    /// The role it is offered to once that time has passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_to: Option<String>,
    /// For the current step with a response time: when it is due (RFC
    /// 3339), from the moment it opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
    /// True once the current step is past its time and offered to its
    /// escalation role too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub escalated: bool,
}

/// One role's share of a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutePart {
    /// The role.
    pub role: String,
    /// How many of its holders must approve.
    pub required: u32,
    /// Who has approved as this role at this step (emails), in order.
    pub approved_by: Vec<String>,
    /// Who may still approve it now (emails; empty unless the step is the
    /// current one), stand-ins in force among them.
    pub may_act: Vec<String>,
    /// Those of `approved_by` who approved as someone's stand-in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stood_in: Vec<StoodIn>,
}

/// `GET /api/console/v1/sessions/<id>/approvals` (ANP sessions): the host's
/// record of every approval given in the session, whoever gave it and at
/// whichever console, with the step and role it counted as, whom it was
/// made for, and the rule and policy version the request was routed under:
/// what an ANP approval (RFC-002) cannot say itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionApprovals {
    /// In the order they were given.
    pub approvals: Vec<ApprovalRecord>,
}

/// One approval as the host recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The offer it approved (its event hash).
    pub event_hash: String,
    /// Who, as the signed approval names them.
    pub approved_by: String,
    /// When, as the signed approval says.
    pub at: String,
    /// The step it counted at, from 1; absent from before routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// The role it counted as; absent from before routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Whom it was made for, when a stand-in made it (an email).
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub for_person: Option<String>,
    /// Why the request was routed as it was ("Above 10,000 USD: rule 2").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The rule that fired, from 1; absent for a fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<u32>,
    /// The policy version it was routed under; absent under the old threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<u64>,
}

/// An approval made by a stand-in: "grace@…, for ann@…".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoodIn {
    /// Who approved (an email).
    pub by: String,
    /// For whom (an email).
    #[serde(rename = "for")]
    pub for_person: String,
}

/// What a receipt signed by a stand-in names as `approver.on_behalf_of`,
/// and what the route view tells a stand-in to sign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnBehalfOf {
    /// The holder the decision is made for (their email).
    pub person: String,
    /// The delegation it is made under (`urn:countersign:delegation:<id>`).
    pub delegation: String,
}

/// The URN a receipt names a delegation by.
pub fn delegation_urn(delegation_id: &str) -> String {
    format!("urn:countersign:delegation:{delegation_id}")
}

/// `POST /api/console/v1/delegations`: the approver asking (the delegator)
/// lets `to` act for them in `roles` from `from_date` to `to_date`
/// inclusive, days in `zone`. `signature` is the delegator's key's
/// signature of [`crate::signing::delegation_statement`] over exactly these
/// values and this host's authority, so the record proves who gave what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegateRequest {
    /// Chosen by the console (1 to 64 of `A-Za-z0-9-`), so a request sent
    /// again is recognised.
    pub delegation_id: String,
    /// The stand-in: an approver of the same organization (their email).
    pub to: String,
    /// The roles handed over: each one the delegator holds in the
    /// organization's policy now.
    pub roles: Vec<String>,
    /// The first day (`YYYY-MM-DD`), in `zone`.
    pub from_date: String,
    /// The last day, inclusive (`YYYY-MM-DD`), in `zone`.
    pub to_date: String,
    /// The delegator's time zone (an IANA name such as `Europe/Berlin`).
    pub zone: String,
    /// When the statement was made (RFC 3339, within the host's window).
    pub at: String,
    /// The delegator's signature of the statement (base64url).
    pub signature: String,
}

/// Where a delegation stands at the host's now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelegationState {
    /// Its first day has not begun.
    Scheduled,
    /// Its stand-in may act now.
    InForce,
    /// Its last day is over.
    Ended,
    /// Revoked by either side.
    Revoked,
}

/// One delegation as the host keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delegation {
    /// Its id.
    pub delegation_id: String,
    /// The delegator's email and name.
    pub from: String,
    /// The delegator's name.
    pub from_name: String,
    /// The stand-in's email.
    pub to: String,
    /// The stand-in's name.
    pub to_name: String,
    /// The roles handed over.
    pub roles: Vec<String>,
    /// First day, in `zone`.
    pub from_date: String,
    /// Last day, inclusive, in `zone`.
    pub to_date: String,
    /// The delegator's zone.
    pub zone: String,
    /// The first moment it is in force (RFC 3339, UTC).
    pub starts_at: String,
    /// The first moment it is no longer in force (RFC 3339, UTC): the end
    /// of the last day in `zone`.
    pub ends_at: String,
    /// Where it stands now.
    pub state: DelegationState,
    /// When the host recorded it.
    pub created_at: String,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// Who revoked it (an email), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_by: Option<String>,
    /// The statement the delegator signed, as signed.
    pub statement: String,
    /// The delegator's signature of it (base64url).
    pub signature: String,
}

/// `GET /api/console/v1/delegations`: what the approver asking gave and
/// received, newest first, and what a new delegation may name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelegationList {
    /// Given by the approver asking.
    pub given: Vec<Delegation>,
    /// Given to the approver asking.
    pub received: Vec<Delegation>,
    /// The roles the approver asking holds in the policy now (what they
    /// may hand over); empty when the organization has no policy loaded.
    pub my_roles: Vec<String>,
    /// The organization's other approvers (who may stand in).
    pub colleagues: Vec<Colleague>,
}

/// An approver of the same organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Colleague {
    /// Their email.
    pub email: String,
    /// Their name.
    pub name: String,
}

/// One decision waiting for a person, for every protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingDecision {
    /// ANP: the offer's seq (0 for a buyer-agent draft). Gate: the 1-based
    /// position of the awaited message in the transcript.
    pub seq: u64,
    /// ANP: the offer event's hash, or `draft:<uuid>`. Gate: the awaited
    /// message's hash (`sha256:…`).
    pub event_hash: String,
    /// ANP: `offer` or `counter_offer`. Gate: the message type
    /// (`negotiate.offer`, `negotiate.counter`).
    pub kind: String,
    /// ANP: `vendor_agent`, or `buyer` for a draft. Gate: `counterparty`.
    pub actor: String,
    /// When the decision stops being possible.
    pub expires_at: String,
    /// Approvals already given.
    pub approvals: Vec<GivenApproval>,
    /// Approvals the org's policy needs.
    pub approvals_required: u32,
    /// ANP drafts: the offer payload the buyer agent proposes to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<Value>,
    /// Why screening holds it, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_reason: Option<String>,
    /// Gate: the agent's request id (what a decision's `in_response_to` names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Gate: what the agent asks to do (`accept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Gate: the amount at stake (`"150000.00 USD"`), read from the offer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// Gate: the policy threshold a receipt names as `threshold_crossed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<String>,
    /// ANEX: who asks for which data under which promises, item by item
    /// with the policy's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anex: Option<crate::anex::AnexPending>,
    /// The chain of approvals it was routed to, and where it stands;
    /// absent from hosts that do not route (and for a buyer-agent draft).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteView>,
}

fn anp_protocol() -> String {
    protocol::ANP.to_owned()
}

/// One session in the approver summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// How the other routes name it: the ANP session id, or
    /// `<protocol>:<session_id>` for a gate session.
    pub id: String,
    /// The protocol its record speaks (`ANP/0.1`, `concordia`); a summary
    /// without it is from a host that spoke only ANP/0.1.
    #[serde(default = "anp_protocol")]
    pub protocol: String,
    /// ANP: `open`, `closed`, `accepted`. Gate: the transcript's state
    /// (`proposed`, `active`, `agreed`, `rejected`, `expired`, `dormant`).
    pub status: String,
    /// True for the sandbox.
    pub sandbox: bool,
    /// Who the other side is.
    #[serde(default)]
    pub counterparty: Counterparty,
    /// ANP sessions: the vendor, as older consoles read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<VendorIdentity>,
    /// Gate sessions: the org's own agent that mirrors it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<GateAgentIdentity>,
    /// Length of the record: events (ANP) or messages (gate).
    pub event_count: u64,
    /// Its head: the last event's hash, or the last message's `sha256:` hash.
    pub chain_head: String,
    /// Decisions waiting.
    pub pending: Vec<PendingDecision>,
}

/// `GET /api/console/v1/summary`: everything a poll cycle needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Always `ANP/0.1` (the API's signing and error shape); each session
    /// names its own protocol.
    pub protocol: String,
    /// Every session the approver's org can see.
    pub sessions: Vec<SessionSummary>,
}

/// What an approver decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionAction {
    /// ANP: accept the offer, or send a draft. Gate: let the agent accept.
    Approve,
    /// Decline it, with a reason.
    Decline,
    /// ANP: answer with a buyer counter-offer. Gate: decline, with the
    /// terms the agent should offer instead.
    Counter,
}

/// `POST /api/console/v1/sessions/:id/decisions` body for an ANP session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    /// A UUID chosen by the console; repeating it changes nothing.
    pub decision_id: String,
    /// What was decided.
    pub action: DecisionAction,
    /// The decided offer's `event_hash` (or `draft:<uuid>`).
    pub in_response_to: String,
    /// Required for decline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Required for counter: the offer the buyer will send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<Value>,
    /// Required for approve: the RFC-002 approval, signed by the approver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

/// `POST /api/console/v1/sessions/:id/decisions` body for a gate session:
/// the person's decision as an ApprovalReceipt signed with the approver's
/// enrolled key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateDecisionRequest {
    /// A UUID chosen by the console; repeating it changes nothing.
    pub decision_id: String,
    /// What was decided.
    pub action: DecisionAction,
    /// The agent's `request_id`.
    pub in_response_to: String,
    /// The ApprovalReceipt (`approve` for approve, `deny` otherwise).
    pub receipt: Value,
    /// Required for decline and counter; sent to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Required for counter: the terms the agent should offer instead, in
    /// the protocol's own form (Concordia: an offer body's `terms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_terms: Option<Value>,
}

/// What became of a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionOutcome {
    /// Final: appended to the ANP log, or the gate request is decided.
    Appended,
    /// Recorded; more approvers are needed.
    AwaitingApprovals,
    /// Held by outbound screening (or because the screen could not run).
    Held,
}

/// The answer to an ANP session's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionResponse {
    /// The decision's id, as sent.
    pub decision_id: String,
    /// What happened.
    pub outcome: DecisionOutcome,
    /// A sentence for people (why held, how many approvals still needed).
    pub detail: String,
    /// The session log after the decision.
    pub log: LogDocument,
}

/// The answer to a gate session's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateDecisionResponse {
    /// The decision's id, as sent.
    pub decision_id: String,
    /// What happened.
    pub outcome: DecisionOutcome,
    /// A sentence for people.
    pub detail: String,
    /// The request as it now stands (what the agent reads).
    pub request: GateRequestStatus,
}

/// `GET /api/console/v1/sessions/:id/log?after=N` for a gate session: the
/// transcript after position `N` in its protocol's own form, with the keys
/// it is verified with and every request the agent made in it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateLog {
    /// `concordia` (or `oanp`).
    pub protocol: String,
    /// The session id in its protocol (without the `<protocol>:` prefix).
    pub session_id: String,
    /// How many messages precede `messages`.
    pub after: u64,
    /// The organization's own party id.
    #[serde(rename = "self")]
    pub self_party: String,
    /// The other side, as the agent declared it.
    pub counterparty: GateCounterparty,
    /// Party id → base64url Ed25519 key, as given when the session was created.
    pub keys: std::collections::BTreeMap<String, String>,
    /// The messages after `after`, each byte for byte as mirrored.
    pub messages: Vec<Box<RawValue>>,
    /// The stored head (count and hash of the last message).
    pub head: Head,
    /// Every request the agent made in the session, oldest first.
    pub requests: Vec<GateRequestStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_status_word_is_the_word_the_wire_carries() {
        for (status, word) in [
            (AgentStatus::Sandbox, "sandbox"),
            (AgentStatus::Verified, "verified"),
            (AgentStatus::Revoked, "revoked"),
        ] {
            assert_eq!(status_text(status), word);
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::Value::String(word.to_owned())
            );
        }
    }
}
