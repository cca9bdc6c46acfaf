//! The JSON shapes of `docs/console-contract.md`, exactly: the Tauri shell
//! returns these unchanged and the UI reads them. Money is always a decimal
//! string so nothing downstream does float arithmetic on prices.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An exact decimal amount as a string (`"570000"`, `"1140.50"`).
pub type Money = String;

/// How far the console trusts a session's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// Every event verified against the pinned keys and chain.
    Verified,
    /// The chain holds, but some event's authorship is not proven by a signature.
    Unproven,
    /// The log failed verification or no longer extends the pinned head.
    Disputed,
}

impl Verification {
    /// The wire name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Verification::Verified => "verified",
            Verification::Unproven => "unproven",
            Verification::Disputed => "disputed",
        }
    }

    /// Reads a stored name; anything unknown is treated as disputed (fail closed).
    pub fn parse(text: &str) -> Verification {
        match text {
            "verified" => Verification::Verified,
            "unproven" => Verification::Unproven,
            _ => Verification::Disputed,
        }
    }
}

/// Everything the first screen needs in one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppState {
    /// True when the only host is the embedded sandbox.
    pub sandbox: bool,
    /// Pending decisions not yet opened.
    pub unread: u32,
    /// Every connected host.
    pub hosts: Vec<HostInfo>,
    /// Where all state lives (shown so a person can find exports).
    pub data_dir: String,
    /// The configured name and email, offered as defaults when connecting
    /// to a host (the host enrolls only the email its code was issued for).
    pub approver: crate::config::ApproverProfile,
    /// The machine's locale as a BCP 47 tag (`en-GB`): the interface writes
    /// numbers and dates with it, as notifications do.
    pub locale: String,
    /// The machine's time zone (`Europe/Berlin`), when it has a name.
    pub time_zone: Option<String>,
}

/// A connected buyer host and how the poller last found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Local id of the host (UUID).
    pub host_id: String,
    /// Base URL, e.g. `http://127.0.0.1:4100`.
    pub url: String,
    /// A short name for people.
    pub label: String,
    /// True for the embedded sandbox host.
    pub sandbox: bool,
    /// False after a failed poll, until one succeeds.
    pub reachable: bool,
    /// The last poll error, in words.
    pub last_error: Option<String>,
    /// RFC 3339 time of the last successful poll.
    pub last_poll_at: Option<String>,
    /// Fingerprint of the platform key pinned at enrollment.
    pub platform_fingerprint: String,
    /// The email this console approves as on that host.
    pub approver_email: String,
    /// False for a sandbox host this process no longer runs (a real host
    /// was connected since): its history stays readable, nothing is polled,
    /// and `reachable` is only how it was last found.
    pub polled: bool,
}

/// The counterparty, as the host vouches for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vendor {
    /// The vendor agent's registration id.
    pub agent_id: String,
    /// The agent's declared name (counterparty text).
    pub agent_name: String,
    /// The vendor's declared name (counterparty text).
    pub vendor_name: String,
    /// Fingerprint of the agent's key: the identity people compare.
    pub fingerprint: String,
    /// `sandbox`, `verified` or `revoked`.
    pub status: String,
}

/// One pending decision, as listed in the inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxItem {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The offer event's seq.
    pub seq: u64,
    /// The offer event's hash: what a decision answers.
    pub event_hash: String,
    /// `offer` or `counter_offer`.
    pub kind: String,
    /// `vendor_agent` or `buyer`.
    pub actor: String,
    /// True for a buyer-agent draft waiting to be sent.
    pub is_draft: bool,
    /// Who is on the other side.
    pub vendor: Vendor,
    /// The offer's currency.
    pub currency: String,
    /// The offer's exact total.
    pub total: Money,
    /// The total of the offer it answers, if any.
    pub previous_total: Option<Money>,
    /// From `previous_total` to `total`.
    pub change: Option<Change>,
    /// When the offer expires (RFC 3339).
    pub expires_at: String,
    /// The session's verification state.
    pub verification: Verification,
    /// Approvals already given.
    pub approvals_given: u32,
    /// Approvals the host's policy needs.
    pub approvals_required: u32,
    /// True until the person opened it.
    pub unread: bool,
    /// Why the host holds it (screening), if it does.
    pub held_reason: Option<String>,
}

/// Which part of the inbox to build. The UI shows a page at a time, so the
/// engine builds (and the webview holds) only the rows a person can see, not
/// every pending decision on every host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxQuery {
    /// The first `limit` pending decisions, soonest expiry first (all when absent).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Extends the page down to this offer when it lies further, so a
    /// selection made elsewhere (a notification) stays in the list.
    #[serde(default)]
    pub through: Option<OfferRef>,
}

/// The first rows of the inbox and the counts of all of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxPage {
    /// The rows asked for, soonest expiry first.
    pub items: Vec<InboxItem>,
    /// Pending decisions in the whole inbox.
    pub total: u32,
    /// Of those, the ones the person has not opened yet.
    pub unread: u32,
}

/// A change between two totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// New minus old.
    pub absolute: Money,
    /// Two-place percentage, or null when the old value is zero.
    pub percent: Option<String>,
}

/// The offer it answers, by position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousRef {
    /// Seq of the previous offer.
    pub seq: u64,
    /// Its actor.
    pub actor: String,
}

/// A session's verification state with the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerificationView {
    /// The state.
    pub state: Verification,
    /// What went wrong, in words, when disputed; or which events are unproven.
    pub detail: Option<String>,
    /// The exact seq that failed, when disputed.
    pub failing_seq: Option<u64>,
    /// The checks that failed (`seq`, `payload_hash`, `prev_hash`,
    /// `event_hash`, `signature`, `pin`).
    pub checks: Vec<String>,
}

/// An approval already given, for multi-approver policies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalGiven {
    /// The approver's email.
    pub approved_by: String,
    /// When.
    pub at: String,
}

/// Everything needed to decide one offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferView {
    /// The inbox row.
    pub item: InboxItem,
    /// The offer payload, byte-for-byte as the log carries it.
    pub offer: Value,
    /// The offer it answers, if any.
    pub previous: Option<Value>,
    /// Where that previous offer is.
    pub previous_ref: Option<PreviousRef>,
    /// The structured diff (`anp::diff`), null when nothing to compare.
    pub diff: Option<Value>,
    /// The vendor's mandate envelope (from `session_open`).
    pub vendor_envelope: Value,
    /// The buyer's mandate envelope (event 2).
    pub buyer_envelope: Value,
    /// The session's verification state.
    pub verification: VerificationView,
    /// Approvals given so far.
    pub approvals: Vec<ApprovalGiven>,
    /// True when `expires_at` has passed.
    pub expired: bool,
    /// True while the proposal waits for a decision (it is in the pending
    /// set); false once it was decided, here or elsewhere, or withdrawn.
    pub pending: bool,
    /// What was decided, when something was: by this console (also while
    /// it waits for more approvals), or as the log shows it.
    pub decision: Option<ProposalDecision>,
}

/// What became of a proposal: a decision this console made, or the answer
/// the log shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalDecision {
    /// `approve`, `decline` or `counter`; null when the proposal left the
    /// pending set without an answer on the log.
    pub action: Option<String>,
    /// `pending` (kept, the host has not confirmed it yet), `appended`,
    /// `awaiting_approvals`, `held`, `refused` (by the host: nothing was
    /// sent), `answered` (the log shows an answer this console did not
    /// send), or `withdrawn` (no longer pending, no answer on the log).
    pub outcome: String,
    /// Who decided: the email this console approves as, or the approvers an
    /// `accept` on the log names.
    pub decided_by: Option<String>,
    /// When (RFC 3339).
    pub at: Option<String>,
    /// This console's decision id, when it decided.
    pub decision_id: Option<String>,
    /// The event the decision appended to the log.
    pub appended: Option<AppendedEvent>,
    /// The host's words, or what the log shows.
    pub detail: String,
}

/// An event a decision appended to the session's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppendedEvent {
    /// Its seq.
    pub seq: u64,
    /// `accept`, `decline` or `counter_offer`.
    pub kind: String,
    /// Its hash.
    pub event_hash: String,
    /// True once this console has verified it and stored it; false while it
    /// is only the host's word.
    pub verified: bool,
}

/// What a person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecideAction {
    /// Accept the offer (signed approval).
    Approve,
    /// Decline with a reason.
    Decline,
    /// Answer with an edited offer.
    Counter,
}

/// A decision, as the UI sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecideRequest {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The offer's `event_hash`.
    pub in_response_to: String,
    /// What to do.
    pub action: DecideAction,
    /// Required for decline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Required for counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<Value>,
}

/// What the host did with a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionResult {
    /// The idempotency key; the same one on every retry.
    pub decision_id: String,
    /// `appended`, `awaiting_approvals` or `held`.
    pub outcome: String,
    /// The host's words.
    pub detail: String,
    /// The event the decision appended, when it appended one.
    pub appended: Option<AppendedEvent>,
}

/// One problem with an edited counter-offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// JSON path, e.g. `line_items[0].quantity`.
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
}

/// The verdict on an edited counter-offer before it is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterCheck {
    /// True when it would pass the protocol's rules.
    pub ok: bool,
    /// Every problem found.
    pub errors: Vec<FieldError>,
    /// Diff against the offer it answers, when it parses.
    pub diff: Option<Value>,
}

/// Session states the history can filter on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateFilter {
    /// Still negotiating.
    Open,
    /// Ended without acceptance.
    Closed,
    /// Ended with an accept.
    Accepted,
    /// Log failed verification.
    Disputed,
    /// Has a pending decision.
    Pending,
}

/// Search and filter of the history list; every member optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryFilter {
    /// Matches vendor, agent name or session id (case-insensitive).
    #[serde(default)]
    pub text: Option<String>,
    /// Matches vendor name or fingerprint (case-insensitive).
    #[serde(default)]
    pub vendor: Option<String>,
    /// Session state.
    #[serde(default)]
    pub state: Option<StateFilter>,
    /// Last total at least this (exact decimal).
    #[serde(default)]
    pub min_total: Option<Money>,
    /// Last total at most this (exact decimal).
    #[serde(default)]
    pub max_total: Option<Money>,
}

/// One session in the history list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The counterparty.
    pub vendor: Vendor,
    /// The host's status (`open`, `closed`, `accepted`).
    pub status: String,
    /// True for sandbox sessions.
    pub sandbox: bool,
    /// Verification state.
    pub verification: Verification,
    /// Events stored locally.
    pub event_count: u64,
    /// Total of the latest offer, if any.
    pub last_total: Option<Money>,
    /// Its currency.
    pub currency: Option<String>,
    /// Pending decisions.
    pub pending: u32,
    /// Time of the latest event (RFC 3339).
    pub updated_at: String,
}

/// One event in a session timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEvent {
    /// Position.
    pub seq: u64,
    /// `vendor_agent` or `buyer`.
    pub actor: String,
    /// Event kind.
    pub kind: String,
    /// Append time.
    pub at: String,
    /// Plain text, numbers as people write them: "Offer: 570,000 USD, 36 months".
    pub summary: String,
    /// The payload, as the log carries it.
    pub payload: Value,
    /// Signer fingerprint.
    pub signer: Option<String>,
    /// `verified`, `unproven` or `failed`.
    pub signature: String,
}

/// One point of a per-side offer series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// 1-based round of that side.
    pub round: u32,
    /// Event seq.
    pub seq: u64,
    /// Exact total.
    pub total: Money,
}

/// Offer totals by round, per side, for a chart.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Series {
    /// The vendor's offers.
    pub vendor_agent: Vec<SeriesPoint>,
    /// The buyer's offers.
    pub buyer: Vec<SeriesPoint>,
}

/// A decision this console made, as listed in the session detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRow {
    /// Idempotency key.
    pub decision_id: String,
    /// `approve`, `decline`, `counter`.
    pub action: String,
    /// The offer answered.
    pub in_response_to: String,
    /// `pending` (not yet confirmed), `appended`, `awaiting_approvals`,
    /// `held`, or `refused`.
    pub outcome: String,
    /// When it was made.
    pub at: String,
}

/// A session in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionDetail {
    /// The list row.
    pub row: SessionRow,
    /// Every stored event.
    pub timeline: Vec<TimelineEvent>,
    /// Totals by round, per side.
    pub series: Series,
    /// Decisions made from this console.
    pub decisions: Vec<DecisionRow>,
    /// Verification state with evidence.
    pub verification: VerificationView,
    /// When disputed: where, what, the evidence kept and the person's note.
    pub dispute: Option<DisputeView>,
}

/// A disputed session at a glance, and what a person can do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisputeView {
    /// Which host (local id).
    pub host_id: String,
    /// Its name for people.
    pub host_label: String,
    /// Its URL.
    pub host_url: String,
    /// Which session.
    pub session_id: String,
    /// Who is on the other side (counterparty text).
    pub counterparty: String,
    /// When this console found it (RFC 3339); null for a dispute found
    /// before this was recorded.
    pub detected_at: Option<String>,
    /// The exact seq that failed.
    pub failing_seq: u64,
    /// The failed checks.
    pub checks: Vec<String>,
    /// In words.
    pub detail: String,
    /// The request the host answered with the conflicting log.
    pub request: Option<String>,
    /// True when the host's conflicting answer was kept byte for byte (the
    /// evidence export holds it beside the stored copy).
    pub host_answer_kept: bool,
    /// The person's acknowledgement, once given.
    pub acknowledged: Option<AcknowledgementView>,
}

/// A person's acknowledgement of a dispute: noted, and still disputed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcknowledgementView {
    /// The note (the person's words).
    pub note: String,
    /// When (RFC 3339).
    pub at: String,
    /// Who (the email this console approves as on that host).
    pub by: String,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// The verifiable log document plus the signed decisions.
    Json,
    /// One row per offer.
    Csv,
}

/// Where an export was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportResult {
    /// The file path.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What changed, so the UI reloads only that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeScope {
    /// Pending decisions changed.
    Inbox,
    /// Session data changed.
    Sessions,
    /// A host's state changed.
    Hosts,
}

/// The payload of `engine://changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineEvent {
    /// What changed.
    pub what: ChangeScope,
    /// On which host, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// In which session, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// The payload of `engine://open-offer`: which offer a clicked notification names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferRef {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// Which offer.
    pub event_hash: String,
}
