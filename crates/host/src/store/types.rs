//! The rows the repositories read and write, shared by both stores.

use anp::api::AgentStatus;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error("postgresql: {}", postgres_reason(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had from the pool.
    #[error("postgresql pool: {0}")]
    Pool(String),
    /// A stored value does not read back (a bug or a hand-edited database).
    #[error("stored data unreadable: {0}")]
    Corrupt(String),
    /// The database was written by a newer countersign-host.
    #[error("the database is at schema version {found}, newer than this countersign-host understands ({supported}); upgrade countersign-host")]
    NewerSchema {
        /// Version in the database.
        found: i64,
        /// Latest version this build knows.
        supported: i64,
    },
    /// A blocking task failed to run.
    #[error("storage task: {0}")]
    Task(String),
}

/// The server's own words when it answered an error (the driver's
/// `Display` says only "db error"), else the driver's message and cause.
fn postgres_reason(e: &tokio_postgres::Error) -> String {
    match (e.as_db_error(), std::error::Error::source(e)) {
        (Some(db), _) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        (None, Some(cause)) => format!("{e}: {cause}"),
        (None, None) => e.to_string(),
    }
}

/// Why a [`Commit`] was not applied.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The session changed since it was read, or a row with the same key
    /// was stored meanwhile: read again and decide again.
    #[error("the session changed meanwhile")]
    Conflict,
    /// The store failed; nothing was applied.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An org.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org {
    /// Handle (`anp_org_...` or `sandbox`).
    pub handle: String,
    /// Name (the envelope's party).
    pub name: String,
    /// True for the built-in sandbox.
    pub sandbox: bool,
    /// Disabled orgs are refused.
    pub disabled: bool,
    /// Stored policy JSON; `None` for the sandbox's built-in policy.
    pub policy: Option<String>,
    /// The org's policy of authority in force (its latest version), read
    /// with the org so a request is routed without another round trip;
    /// `None` until an admin loads one (the old threshold then routes).
    pub authority: Option<OrgAuthority>,
}

/// The version of an org's policy of authority in force, as read with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgAuthority {
    /// Its version.
    pub version: u64,
    /// Its text, as loaded.
    pub text: String,
}

/// An org as the admin lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgListing {
    /// The org.
    pub org: Org,
    /// Creation time.
    pub created_at: String,
}

/// A session row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// The vendor agent that opened it.
    pub agent_id: String,
    /// The buyer org.
    pub org_handle: String,
    /// True for the sandbox.
    pub sandbox: bool,
    /// `open`, `closed`, `accepted`.
    pub status: String,
    /// Open time.
    pub opened_at: String,
    /// Close time.
    pub closed_at: Option<String>,
    /// Events so far.
    pub event_count: u64,
    /// Last event hash.
    pub chain_head: String,
    /// Seq of the standing offer, if any.
    pub standing_seq: Option<u64>,
    /// Counter-offers the buyer has sent.
    pub buyer_rounds: u32,
    /// Bumped by every commit: what a commit compares before it applies.
    pub version: u64,
}

/// A session, its org and its standing offer (JSON text), read together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// The session.
    pub session: Session,
    /// Its org.
    pub org: Org,
    /// The standing offer event, if any.
    pub standing: Option<String>,
}

/// One version of an org's policy of authority, as loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorityRow {
    /// The org.
    pub org_handle: String,
    /// 1 for the first load, then in order.
    pub version: u64,
    /// The file's text, exactly as loaded (what `authority show` prints).
    pub text: String,
    /// Who loaded it (the admin's `--by`, else the operating-system user).
    pub loaded_by: String,
    /// When.
    pub loaded_at: String,
}

/// A delegation of roles from one approver to another (a stand-in), as
/// the delegator signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegationRow {
    /// Chosen by the delegator's console.
    pub id: String,
    /// The org.
    pub org_handle: String,
    /// The delegator's approver id when they signed.
    pub from_id: String,
    /// The delegator's email (lower-cased).
    pub from_email: String,
    /// The stand-in's email (lower-cased).
    pub to_email: String,
    /// The request as the delegator sent it (JSON): roles, days, zone, at,
    /// signature.
    pub request: String,
    /// The statement the signature is over.
    pub statement: String,
    /// First moment in force (unix seconds).
    pub starts_at: i64,
    /// First moment no longer in force (unix seconds).
    pub ends_at: i64,
    /// When the host recorded it.
    pub created_at: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
    /// Who revoked it (an email).
    pub revoked_by: Option<String>,
}

/// A registered vendor agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    /// Registration id.
    pub id: String,
    /// Public key, base64url.
    pub public_key: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Display name.
    pub agent_name: String,
    /// Vendor.
    pub vendor_name: String,
    /// Contact.
    pub contact_email: String,
    /// Sandbox, verified or revoked.
    pub status: AgentStatus,
    /// Registration time.
    pub registered_at: String,
    /// True once an admin verified these names (`agent verify`): until
    /// then they are only what a registration declared, and the proof a
    /// registration carries is fixed by ANP/0.1, so anyone holding it can
    /// replay it with names of their own.
    pub names_verified: bool,
}

/// One registration of an agent's key as it arrived, with the names it
/// declared: the history an admin reads before verifying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationRow {
    /// 1 for the first registration, then in order.
    pub ordinal: u32,
    /// Display name declared.
    pub agent_name: String,
    /// Vendor declared.
    pub vendor_name: String,
    /// Contact declared.
    pub contact_email: String,
    /// When it arrived.
    pub registered_at: String,
}

/// An enrolled approver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApproverRow {
    /// Approver id.
    pub id: String,
    /// The org it decides for.
    pub org_handle: String,
    /// Name.
    pub name: String,
    /// Email (the approval's `approved_by`).
    pub email: String,
    /// Public key, base64url.
    pub public_key: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Enrollment time.
    pub enrolled_at: String,
    /// Revocation time.
    pub revoked_at: Option<String>,
    /// When the approver moved to a new key and this one was retired (its
    /// approvals stand; it signs nothing from then on).
    pub retired_at: Option<String>,
}

/// A key rotation as the host keeps it: the statement both keys signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotationRow {
    /// The retired approver id.
    pub old_id: String,
    /// The approver id of the new key.
    pub new_id: String,
    /// `countersign_host_api::signing::rotate_statement`'s text.
    pub statement: String,
    /// The old key's signature of it.
    pub consent: String,
    /// The new key's signature of it.
    pub proof: String,
    /// When it took effect.
    pub rotated_at: String,
}

/// What a rotation request came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotated {
    /// The old key is retired from now on; the new approver is stored.
    Now(ApproverRow),
    /// It had been retired before in favour of this approver (the same
    /// request again, or another one).
    Before(ApproverRow),
    /// The old approver is revoked, or gone: nothing changed.
    Refused,
}

/// An enrollment code (stored only as its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRow {
    /// The org it enrolls into.
    pub org_handle: String,
    /// The approver's name as the admin gave it.
    pub name: String,
    /// The only email it enrolls.
    pub email: String,
    /// Unix seconds after which it no longer works.
    pub expires_at: i64,
    /// True once spent.
    pub used: bool,
}

/// An open pending decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRow {
    /// The offer's event hash, or `draft:<uuid>`.
    pub reference: String,
    /// The offer's seq (0 for a draft).
    pub seq: u64,
    /// For a draft: the event hash of the offer it answers.
    pub answers: Option<String>,
    /// `offer` or `counter_offer`.
    pub kind: String,
    /// `vendor_agent` or `buyer`.
    pub actor: String,
    /// The offer's `expires_at`.
    pub expires_at: String,
    /// The offer payload, JSON text.
    pub payload: String,
    /// Distinct approvals needed.
    pub approvals_required: u32,
    /// Why screening holds it, if it does.
    pub held_reason: Option<String>,
    /// When it was opened.
    pub created_at: String,
    /// The route it was given under the org's policy of authority
    /// (`domain::authority::StoredRoute`, JSON text); `None` for a request
    /// from before routing, decided by `approvals_required` alone.
    pub route: Option<String>,
}

/// An approval given towards a pending decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    /// Which pending decision.
    pub reference: String,
    /// Who gave it.
    pub approver_id: String,
    /// The RFC-002 approval object, JSON text.
    pub approval: String,
    /// The step of the request's chain it counted at (from 1); `None` for
    /// an approval from before routing.
    pub step: Option<u32>,
    /// The role it was given as; `None` for an approval from before routing.
    pub role: Option<String>,
    /// Whom it was made for, when a stand-in made it (an email).
    pub for_email: Option<String>,
}

/// An approval as the host recorded it, with the request it counted
/// towards (`NegotiationRepo::session_approvals`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedApproval {
    /// The approval.
    pub row: ApprovalRow,
    /// When it was recorded.
    pub recorded_at: String,
    /// The request's stored route (JSON), if it was routed.
    pub route: Option<String>,
    /// The request's approvals required (its count before routing).
    pub approvals_required: u32,
}

/// A decision as first received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRow {
    /// Who sent it.
    pub approver_id: String,
    /// For which session.
    pub session_id: String,
    /// SHA-256 of the body bytes, hex.
    pub body_sha256: String,
    /// `appended`, `awaiting_approvals` or `held`.
    pub outcome: String,
    /// The sentence answered.
    pub detail: String,
}

/// An event to store: its seq, hash and canonical JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its seq.
    pub seq: u64,
    /// Its hash.
    pub event_hash: String,
    /// The event as JSON text, exactly as it is answered.
    pub body: String,
}

/// A pending decision to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPending {
    /// The row.
    pub row: PendingRow,
}

/// A change to an existing pending decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingChange {
    /// Screening holds it, with the reason.
    Held {
        /// Which one.
        reference: String,
        /// Why.
        reason: String,
    },
    /// It is closed without an event (`discarded`).
    Resolved {
        /// Which one.
        reference: String,
        /// The final state.
        state: String,
    },
}

/// An approval to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApproval {
    /// Which pending decision.
    pub reference: String,
    /// Who.
    pub approver_id: String,
    /// The approval, JSON text.
    pub approval: String,
    /// When.
    pub recorded_at: String,
    /// 1 for the first approval of this decision, 2 for the next...
    pub ordinal: u32,
    /// The step of the chain it counts at, from 1.
    pub step: u32,
    /// The role it is given as.
    pub role: String,
    /// Whom it is made for, when a stand-in makes it (an email).
    pub for_email: Option<String>,
}

/// A decision to record as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDecision {
    /// Its id (unique across the host).
    pub decision_id: String,
    /// Who sent it.
    pub approver_id: String,
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

/// One atomic change to one session, planned by the domain outside any
/// transaction and applied by the store only if the session is still at
/// the version it was read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The session as it will be after the commit; `version` is the
    /// version it was read at (the store writes `version + 1`).
    pub session: Session,
    /// True when the session is new (inserted, not compared).
    pub new_session: bool,
    /// Events to append, in seq order, right after the head it was read at.
    pub events: Vec<StoredEvent>,
    /// Close every open pending decision of the session first.
    pub supersede_pending: bool,
    /// Changes to pending decisions.
    pub pending_changes: Vec<PendingChange>,
    /// Pending decisions to open.
    pub new_pending: Vec<NewPending>,
    /// Approvals to record.
    pub approvals: Vec<NewApproval>,
    /// The decision to record.
    pub decision: Option<NewDecision>,
}

impl Commit {
    /// A commit that changes nothing yet, for `session`.
    pub fn on(session: Session) -> Commit {
        Commit {
            session,
            new_session: false,
            events: Vec::new(),
            supersede_pending: false,
            pending_changes: Vec::new(),
            new_pending: Vec::new(),
            approvals: Vec::new(),
            decision: None,
        }
    }
}

/// A session's log, read in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSnapshot {
    /// The session.
    pub session: Session,
    /// The vendor agent's public key.
    pub vendor_key: String,
    /// Its fingerprint.
    pub vendor_fingerprint: String,
    /// The events after the requested seq, JSON text, in order.
    pub events: Vec<String>,
}

/// One session of an org's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRow {
    /// The session.
    pub session: Session,
    /// Its vendor agent.
    pub vendor: AgentRow,
    /// Its open pending decisions (none unless the session is open).
    pub pending: Vec<PendingRow>,
    /// Their approvals by approvers not revoked, in order.
    pub approvals: Vec<ApprovalRow>,
}

/// Reads an agent status as stored.
pub fn parse_status(text: &str) -> AgentStatus {
    match text {
        "verified" => AgentStatus::Verified,
        "sandbox" => AgentStatus::Sandbox,
        _ => AgentStatus::Revoked,
    }
}

/// The stored form of an agent status: the word the wire carries.
pub use countersign_host_api::approver::status_text;
