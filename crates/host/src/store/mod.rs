//! The host's storage interface: one set of repositories per surface, each
//! implemented by both stores, SQLite (embedded, one file) and PostgreSQL
//! (several host processes on one database). Nothing above this module
//! writes SQL.
//!
//! Every promise that concerns more than one request is kept by the store,
//! not by memory: a session's state changes only through [`Commit`], which
//! applies atomically and only if the session row still has the version it
//! was read at (compare-and-swap), so concurrent appends from any number of
//! processes never fork or skip a seq; a nonce is spent by one insert under
//! a primary key; an enrollment code by one conditional update.
//!
//! Each surface has its own repository trait here, with its tables in both
//! stores' migrations, and one accessor on [`Storage`] (the gate's is
//! [`GateRepo`]; A2A's comes the same way); the suite in `tests/all` runs
//! over both stores, which keeps them in step.

mod anex;
mod anex_types;
mod authority;
mod copies;
mod gate;
mod gate_types;
mod migrations;
mod negotiation;
pub mod postgres;
mod principals;
mod sql;
pub mod sqlite;
mod types;

use std::sync::Arc;

use async_trait::async_trait;

use crate::config::Durability;
use crate::error::HostError;

pub use anex_types::*;
pub use gate_types::*;
pub use sql::TrafficCount;
pub use types::*;

/// A store shared by every request (both implementations are cheap to share).
pub type Store = Arc<dyn Storage>;

/// What the host needs from a database, one repository per concern.
pub trait Storage: Send + Sync {
    /// Sessions, events, pending decisions, approvals and decisions (ANP).
    fn negotiations(&self) -> &dyn NegotiationRepo;
    /// Agents, approvers, enrollment codes and nonces.
    fn principals(&self) -> &dyn PrincipalRepo;
    /// Orgs, policies, and the host's own metadata.
    fn admin(&self) -> &dyn AdminRepo;
    /// The gate: the org's own agents, their mirrored sessions, requests,
    /// receipts and decisions.
    fn gate(&self) -> &dyn GateRepo;
    /// ANEX over A2A: counterparties, each org's ANEX policy and data set,
    /// conversations and the decisions on them.
    fn anex(&self) -> &dyn AnexRepo;
    /// The policy of authority: every version each org loaded.
    fn authority(&self) -> &dyn AuthorityRepo;
    /// Rate-limit counters shared by every process, when the store has them
    /// (PostgreSQL); `None` means limits are counted in memory per process.
    fn shared_limits(&self) -> Option<&dyn LimitRepo>;
    /// `sqlite FILE` or `postgresql HOST:PORT/DB`, for messages.
    fn describe(&self) -> String;
    /// The statements and round trips sent to a database server so far
    /// (PostgreSQL); `None` for a store in the host's own process (SQLite).
    /// What the load generator prints per append.
    fn traffic(&self) -> Option<TrafficCount> {
        None
    }
    /// How this process hears of writes made by the other processes on the
    /// same database, when there can be others (PostgreSQL's LISTEN/NOTIFY);
    /// `None` for SQLite, one process's store.
    fn change_feed(&self) -> Option<&dyn ChangeFeed> {
        None
    }
}

/// Host processes on one database telling each other that something
/// changed, so a console waiting on one process hears of an offer appended
/// through another ([`crate::changes`]).
#[async_trait]
pub trait ChangeFeed: Send + Sync {
    /// Tells every listening process that a write succeeded; `origin` names
    /// this process, so it can skip its own announcement.
    async fn publish(&self, origin: &str) -> Result<(), StoreError>;
    /// A dedicated connection that hears every process's announcements
    /// until it drops.
    async fn listen(&self) -> Result<ChangeListener, StoreError>;
}

/// What [`ChangeFeed::listen`] answers: the origins of announcements, in
/// the order they were committed.
pub struct ChangeListener(sql::Listening);

impl ChangeListener {
    /// The next announcement's origin; `None` once the connection dropped
    /// (announcements may have been missed since: listen again).
    pub async fn next(&mut self) -> Option<String> {
        self.0.next().await
    }
}

/// Where the host's data lives: a SQLite file or a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One SQLite file (created on first use).
    Sqlite(std::path::PathBuf),
    /// `postgres://USER@HOST:PORT/DB` (or `postgresql://`).
    Postgres(String),
}

impl Target {
    /// Reads `--db`: a `postgres://` or `postgresql://` URL selects
    /// PostgreSQL, anything else is a SQLite file path.
    pub fn parse(text: &str) -> Target {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Target::Postgres(text.to_owned())
        } else {
            Target::Sqlite(text.into())
        }
    }
}

impl From<std::path::PathBuf> for Target {
    fn from(path: std::path::PathBuf) -> Target {
        Target::Sqlite(path)
    }
}

impl From<&std::path::PathBuf> for Target {
    fn from(path: &std::path::PathBuf) -> Target {
        Target::Sqlite(path.clone())
    }
}

impl From<&std::path::Path> for Target {
    fn from(path: &std::path::Path) -> Target {
        Target::Sqlite(path.to_owned())
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Sqlite(path) => write!(f, "{}", path.display()),
            Target::Postgres(url) => write!(f, "{}", postgres::redact(url)),
        }
    }
}

/// Opens (creating and migrating) the store. A database written by a newer
/// countersign-host is refused, naming both schema versions.
pub async fn open(target: &Target, durability: Durability) -> Result<Store, HostError> {
    open_with(target, durability, postgres::DEFAULT_CONNECTIONS).await
}

/// [`open`], keeping at most `pg_connections` connections on PostgreSQL
/// (SQLite ignores it): what `serve --db-connections` sets.
pub async fn open_with(
    target: &Target,
    durability: Durability,
    pg_connections: usize,
) -> Result<Store, HostError> {
    match target {
        Target::Sqlite(path) => {
            let path = path.clone();
            let store =
                tokio::task::spawn_blocking(move || sqlite::SqliteStore::open(&path, durability))
                    .await
                    .map_err(|e| HostError::Store(StoreError::Task(e.to_string())))??;
            Ok(Arc::new(store))
        }
        Target::Postgres(url) => Ok(Arc::new(
            postgres::PgStore::open(url, pg_connections).await?,
        )),
    }
}

/// Sessions and everything negotiated in them.
#[async_trait]
pub trait NegotiationRepo: Send + Sync {
    /// An org by handle.
    async fn org(&self, handle: &str) -> Result<Option<Org>, StoreError>;
    /// A session by id.
    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError>;
    /// A session with its org and its standing offer event (JSON text), read
    /// together: what every vendor event and decision is checked against.
    async fn session_state(&self, id: &str) -> Result<Option<SessionRow>, StoreError>;
    /// As [`NegotiationRepo::session_state`], and when the session exists
    /// and `owner` owns it, one request counted in the shared window
    /// `counting` (shared rate limits: PostgreSQL), in the same statement;
    /// answers the count with the row (`None` when not counted).
    async fn session_state_counting(
        &self,
        id: &str,
        owner: &str,
        counting: &SharedWindow,
    ) -> Result<Option<(SessionRow, Option<u64>)>, StoreError>;
    /// One event by hash (the stored JSON text).
    async fn event_by_hash(
        &self,
        session_id: &str,
        event_hash: &str,
    ) -> Result<Option<String>, StoreError>;
    /// Open pending decisions of a session (only `reference`, when given),
    /// newest offer first.
    async fn pending(
        &self,
        session_id: &str,
        only: Option<&str>,
    ) -> Result<Vec<PendingRow>, StoreError>;
    /// Approvals recorded for one pending decision by approvers not revoked,
    /// in the order they were given.
    async fn approvals(
        &self,
        session_id: &str,
        reference: &str,
    ) -> Result<Vec<ApprovalRow>, StoreError>;
    /// Every approval recorded in a session, whoever gave it (revoked or
    /// not), with the route of the request it counted towards, in the order
    /// they were given: the host's record of who approved as what.
    async fn session_approvals(
        &self,
        session_id: &str,
    ) -> Result<Vec<RecordedApproval>, StoreError>;
    /// A decision already received under this id.
    async fn decision(&self, decision_id: &str) -> Result<Option<DecisionRow>, StoreError>;
    /// Applies one change to one session atomically, or nothing:
    /// [`CommitError::Conflict`] when the session moved on since it was read
    /// (or a decision or event with the same key was stored meanwhile).
    async fn commit(&self, commit: &Commit) -> Result<(), CommitError>;
    /// As [`NegotiationRepo::commit`], then the session's log after `after`
    /// as the commit left it (or later): what an append answers. PostgreSQL
    /// does both in one statement; SQLite reads the log after its commit.
    async fn commit_and_log(&self, commit: &Commit, after: u64)
        -> Result<LogSnapshot, CommitError>;
    /// The session, its vendor's key and its events after `after`, read in
    /// one snapshot (so the session block matches the events).
    async fn log(&self, session_id: &str, after: u64) -> Result<Option<LogSnapshot>, StoreError>;
    /// Every session of an org with its vendor, open pending decisions and
    /// their approvals, in one snapshot.
    async fn summary(&self, org_handle: &str) -> Result<Vec<SummaryRow>, StoreError>;
}

/// Who may call the host, and the single-use nonces of their requests.
#[async_trait]
pub trait PrincipalRepo: Send + Sync {
    /// An agent by id.
    async fn agent(&self, id: &str) -> Result<Option<AgentRow>, StoreError>;
    /// Stores a new agent unless its key is registered already; answers the
    /// agent that holds the key (the new one, or the earlier one). Every
    /// registration whose names differ from the last one recorded is added
    /// to the key's history; while no admin has verified the agent's names
    /// they become its names, once verified they stay until verified again.
    async fn register_agent(&self, agent: &AgentRow) -> Result<AgentRow, StoreError>;
    /// An agent's registrations, oldest first.
    async fn agent_registrations(&self, id: &str) -> Result<Vec<RegistrationRow>, StoreError>;
    /// An approver that is neither revoked nor retired, of an org that is
    /// not disabled.
    async fn active_approver(&self, id: &str) -> Result<Option<ApproverRow>, StoreError>;
    /// A revoked approver's key and when it was revoked (what the host
    /// tells the key's holder, and no one else).
    async fn revoked_approver(&self, id: &str) -> Result<Option<(String, String)>, StoreError>;
    /// The emails of an org's approvers enrolled and not revoked: who holds
    /// a role of its policy of authority now.
    async fn enrolled_emails(&self, org_handle: &str) -> Result<Vec<String>, StoreError>;
    /// An enrollment code by its hash.
    async fn enrollment_code(&self, code_hash: &str) -> Result<Option<CodeRow>, StoreError>;
    /// Spends the code (only if unused and unexpired at `now_unix`) and
    /// stores the approver, atomically; false when the code was spent or
    /// expired meanwhile.
    async fn enroll(
        &self,
        code_hash: &str,
        approver: &ApproverRow,
        now_unix: i64,
    ) -> Result<bool, StoreError>;
    /// Spends a nonce: fresh the first time, not ever after (until purged,
    /// once `expires_at` has passed). Does not wait for appends. With
    /// `counting` (shared rate limits), a fresh nonce's request is also
    /// counted in that window, in the same statement, and the count
    /// answered; a reused nonce's is not counted.
    async fn spend_nonce(
        &self,
        principal: &str,
        nonce: &str,
        expires_at: i64,
        counting: Option<&SharedWindow>,
    ) -> Result<NonceSpent, StoreError>;
    /// An agent as an earlier request of this process read it, when the
    /// store keeps such copies (PostgreSQL, where reading the row is a
    /// round trip of its own); `None` means read it ([`PrincipalRepo::agent`]).
    fn remembered_agent(&self, id: &str) -> Option<AgentRow>;
    /// Keeps `agent`, just read, for [`PrincipalRepo::remembered_agent`]
    /// (a store that keeps no copies ignores it).
    fn remember_agent(&self, agent: &AgentRow);
    /// Spends a nonce of `agent`, a remembered copy, as
    /// [`PrincipalRepo::spend_nonce`] does, and in the same statement reads
    /// the agent's row again: answers it as it is now, or `None` (and
    /// nothing spent or counted) when it is gone, revoked or holds another
    /// key. The copy is replaced or forgotten accordingly.
    async fn spend_agent_nonce(
        &self,
        agent: &AgentRow,
        nonce: &str,
        expires_at: i64,
        counting: Option<&SharedWindow>,
    ) -> Result<(NonceSpent, Option<AgentRow>), StoreError>;
    /// For an append by `agent`, a remembered copy: spends its nonce as
    /// [`PrincipalRepo::spend_agent_nonce`] does and, in the same
    /// statement, reads the state of `session_id` as
    /// [`NegotiationRepo::session_state_counting`] does, counting the
    /// session's window only when the nonce was fresh, the agent's count
    /// within `agent_limit` and the session the agent's. `None` when the
    /// store keeps no copies (SQLite): spend, then read.
    #[allow(clippy::too_many_arguments)]
    async fn spend_and_read_session(
        &self,
        agent: &AgentRow,
        nonce: &str,
        expires_at: i64,
        counting: &SharedWindow,
        agent_limit: u64,
        session_id: &str,
        session_counting: &SharedWindow,
    ) -> Result<Option<AppendStart>, StoreError>;
    /// Forgets nonces that expired before `now_unix`; answers how many.
    async fn purge_nonces(&self, now_unix: i64) -> Result<u64, StoreError>;
    /// Every approver key ever enrolled, for discovery, oldest first.
    async fn approver_keys(&self) -> Result<Vec<ApproverRow>, StoreError>;
    /// An approver that may ask to move to a new key: as
    /// [`PrincipalRepo::active_approver`], or retired by a rotation (so the
    /// same rotation asked again is answered the same), never revoked.
    async fn rotatable_approver(&self, id: &str) -> Result<Option<ApproverRow>, StoreError>;
    /// Retires `rotation.old_id` at `rotation.rotated_at` and stores `new`
    /// (its id `rotation.new_id`), atomically, unless it was retired
    /// already (then answers its successor) or revoked.
    async fn rotate_approver(
        &self,
        new: &ApproverRow,
        rotation: &RotationRow,
    ) -> Result<Rotated, StoreError>;
}

/// The admin's operations and the host's own metadata.
#[async_trait]
pub trait AdminRepo: Send + Sync {
    /// Stores a new org.
    async fn insert_org(&self, org: &Org, created_at: &str) -> Result<(), StoreError>;
    /// Every org: the sandbox first, then oldest first.
    async fn orgs(&self) -> Result<Vec<OrgListing>, StoreError>;
    /// Disables an org; false when there is no such org.
    async fn disable_org(&self, handle: &str) -> Result<bool, StoreError>;
    /// Replaces an org's policy; false when there is no such org.
    async fn set_policy(&self, handle: &str, policy_json: &str) -> Result<bool, StoreError>;
    /// Every agent, oldest first.
    async fn agents(&self) -> Result<Vec<AgentRow>, StoreError>;
    /// Sets an agent's status; false when there is no such agent.
    async fn set_agent_status(&self, id: &str, status: &str) -> Result<bool, StoreError>;
    /// Stores an enrollment code (only its hash).
    async fn insert_code(&self, code_hash: &str, code: &CodeRow) -> Result<(), StoreError>;
    /// Every approver, oldest first.
    async fn approvers(&self) -> Result<Vec<ApproverRow>, StoreError>;
    /// Revokes an approver (keeping the first revocation time); false when
    /// there is no such approver.
    async fn revoke_approver(&self, id: &str, at: &str) -> Result<bool, StoreError>;
    /// Stores `value` under `key` unless a value is there; answers the value
    /// that is there now.
    async fn meta_init(&self, key: &str, value: &str) -> Result<String, StoreError>;
    /// The value under `key`.
    async fn meta(&self, key: &str) -> Result<Option<String>, StoreError>;
}

/// The policy of authority's versions (docs/authority.md).
#[async_trait]
pub trait AuthorityRepo: Send + Sync {
    /// Stores `text` as the org's next version; `None` when there is no
    /// such org. Versions count from 1 and are never replaced.
    async fn load_authority(
        &self,
        org_handle: &str,
        text: &str,
        loaded_by: &str,
        loaded_at: &str,
    ) -> Result<Option<u64>, StoreError>;
    /// The org's version `version`, or its latest when `None`.
    async fn authority(
        &self,
        org_handle: &str,
        version: Option<u64>,
    ) -> Result<Option<AuthorityRow>, StoreError>;
    /// Stores a delegation; when its id is taken answers the one stored
    /// under it instead (`Err(row)`), storing nothing.
    async fn insert_delegation(
        &self,
        row: &DelegationRow,
    ) -> Result<Result<(), DelegationRow>, StoreError>;
    /// The org's delegations given by or to `email`, newest first.
    async fn delegations_of(
        &self,
        org_handle: &str,
        email: &str,
    ) -> Result<Vec<DelegationRow>, StoreError>;
    /// The org's delegations not revoked and in force at `now` (unix
    /// seconds).
    async fn delegations_in_force(
        &self,
        org_handle: &str,
        now: i64,
    ) -> Result<Vec<DelegationRow>, StoreError>;
    /// Revokes the delegation `id` of the org given by or to `by` (keeping
    /// the first revocation); answers it as it is after, or `None` when
    /// there is no such delegation of theirs.
    async fn revoke_delegation(
        &self,
        org_handle: &str,
        id: &str,
        by: &str,
        at: &str,
    ) -> Result<Option<DelegationRow>, StoreError>;
}

/// The gate's agents, sessions, requests, receipts and decisions.
#[async_trait]
pub trait GateRepo: Send + Sync {
    /// Stores a gate enrollment code (only its hash).
    async fn insert_gate_code(&self, code_hash: &str, code: &GateCodeRow)
        -> Result<(), StoreError>;
    /// A gate enrollment code by its hash.
    async fn gate_code(&self, code_hash: &str) -> Result<Option<GateCodeRow>, StoreError>;
    /// Spends the code (only if unused and unexpired at `now_unix`) and
    /// stores the agent, atomically; false when the code was spent or
    /// expired meanwhile.
    async fn enroll_gate_agent(
        &self,
        code_hash: &str,
        agent: &GateAgentRow,
        now_unix: i64,
    ) -> Result<bool, StoreError>;
    /// A gate agent that is not revoked, of an org that is not disabled.
    async fn active_gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError>;
    /// A gate agent by id, revoked or not.
    async fn gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError>;
    /// Every gate agent, oldest first.
    async fn gate_agents(&self) -> Result<Vec<GateAgentRow>, StoreError>;
    /// Revokes a gate agent (keeping the first revocation time); false when
    /// there is no such agent.
    async fn revoke_gate_agent(&self, id: &str, at: &str) -> Result<bool, StoreError>;
    /// The session of a request id among one agent's sessions of one
    /// protocol (plain terms: an agent names its requests, not their
    /// threads).
    async fn gate_request_session(
        &self,
        agent_id: &str,
        protocol: &str,
        request_id: &str,
    ) -> Result<Option<String>, StoreError>;
    /// Stores an MCP token of a gate agent (only its hash).
    async fn insert_mcp_token(&self, row: &McpTokenRow) -> Result<(), StoreError>;
    /// The active gate agent holding this MCP token hash: neither the token
    /// nor the agent revoked, its org not disabled.
    async fn mcp_agent(&self, token_hash: &str) -> Result<Option<GateAgentRow>, StoreError>;
    /// Every MCP token (never the token itself), oldest first.
    async fn mcp_tokens(&self) -> Result<Vec<McpTokenRow>, StoreError>;
    /// Revokes an MCP token (keeping the first revocation time); false when
    /// there is no such token.
    async fn revoke_mcp_token(&self, id: &str, at: &str) -> Result<bool, StoreError>;
    /// A session with its messages, requests and receipts, in one snapshot.
    async fn gate_state(&self, key: &GateKey) -> Result<Option<GateState>, StoreError>;
    /// A decision already received under this id.
    async fn gate_decision(&self, decision_id: &str)
        -> Result<Option<GateDecisionRow>, StoreError>;
    /// Applies one change to one session atomically, or nothing:
    /// [`CommitError::Conflict`] when the session moved on since it was
    /// read, a request it changes is no longer pending, or a row with the
    /// same key was stored meanwhile.
    async fn gate_commit(&self, commit: &GateCommit) -> Result<(), CommitError>;
    /// Every gate session of an org, with its agent's name, its pending
    /// requests and their receipts, in one snapshot.
    async fn gate_summary(&self, org_handle: &str) -> Result<Vec<GateSummaryRow>, StoreError>;
    /// Marks every pending request whose time is up at `now_unix` expired
    /// (each by one conditional update, so one process of a deployment
    /// marks each), and answers those it marked.
    async fn expire_gate_requests(
        &self,
        now_unix: i64,
        now_text: &str,
    ) -> Result<Vec<ExpiredRequest>, StoreError>;
}

/// ANEX over A2A's counterparties, policies, data sets and conversations.
#[async_trait]
pub trait AnexRepo: Send + Sync {
    /// Stores a new counterparty (its token's hash unique).
    async fn insert_anex_counterparty(&self, row: &AnexCounterpartyRow) -> Result<(), StoreError>;
    /// The counterparty holding this token hash, revoked or not.
    async fn anex_counterparty_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<AnexCounterpartyRow>, StoreError>;
    /// Every counterparty, oldest first.
    async fn anex_counterparties(&self) -> Result<Vec<AnexCounterpartyRow>, StoreError>;
    /// Revokes a counterparty's token (keeping the first time); false when
    /// there is no such counterparty.
    async fn revoke_anex_counterparty(&self, id: &str, at: &str) -> Result<bool, StoreError>;
    /// Replaces an org's ANEX policy (`Some`) or data set; false when there
    /// is no such org.
    async fn set_anex_file(
        &self,
        org_handle: &str,
        kind: AnexFile,
        json: &str,
    ) -> Result<bool, StoreError>;
    /// An org's ANEX policy and data set, as loaded (either may be absent).
    async fn anex_files(
        &self,
        org_handle: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError>;
    /// A conversation by its A2A context id.
    async fn anex_conversation(
        &self,
        context_id: &str,
    ) -> Result<Option<AnexConversationRow>, StoreError>;
    /// Whether this counterparty already used `conversation_id` with this org.
    async fn anex_conversation_used(
        &self,
        org_handle: &str,
        counterparty_id: &str,
        conversation_id: &str,
    ) -> Result<bool, StoreError>;
    /// Every conversation of an org, oldest first.
    async fn anex_conversations(
        &self,
        org_handle: &str,
    ) -> Result<Vec<AnexConversationRow>, StoreError>;
    /// Every conversation, of every org, that may hold an ask awaiting the
    /// owner (a superset: the caller reads each one's pending ask).
    async fn anex_conversations_awaiting(&self) -> Result<Vec<AnexConversationRow>, StoreError>;
    /// A decision already received under this id.
    async fn anex_decision(&self, decision_id: &str)
        -> Result<Option<AnexDecisionRow>, StoreError>;
    /// Applies one change atomically: [`CommitError::Conflict`] when the
    /// conversation moved on since it was read, or a key is taken.
    async fn anex_commit(&self, commit: &AnexCommit) -> Result<(), CommitError>;
}

/// Which of an org's two ANEX files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnexFile {
    /// The owner's policy (`anex::Policy`).
    Policy,
    /// The data set (`anex::exchange::DataSet`).
    Data,
}

/// One fixed window of the shared counters (`rate_windows`), as a store
/// counts a request in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedWindow {
    /// The scope's name (`Scope::name` in `ratelimit`).
    pub scope: &'static str,
    /// The key counted (after `ratelimit::bucket`).
    pub key: String,
    /// The window's start, unix seconds, aligned to its length.
    pub start: i64,
    /// Its length in seconds.
    pub secs: i64,
}

/// A nonce spent, and the request counted with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonceSpent {
    /// The first use of the nonce.
    pub fresh: bool,
    /// The request's count in the window it was counted in, when it was.
    pub counted: Option<u64>,
}

/// What [`PrincipalRepo::spend_and_read_session`] spent and read.
#[derive(Debug, Clone)]
pub struct AppendStart {
    /// The nonce, and the agent's count made with it.
    pub spent: NonceSpent,
    /// The agent as it is now; `None` (nothing spent or counted) when it
    /// is gone, revoked or holds another key.
    pub agent: Option<AgentRow>,
    /// The session's state, with the session's count when it was made.
    pub session: Option<(SessionRow, Option<u64>)>,
}

/// Fixed-window counters shared by every host process on one database.
#[async_trait]
pub trait LimitRepo: Send + Sync {
    /// Counts `by` requests (one request, or a lease of several a process
    /// admits later without asking again) for `key` in the window starting
    /// at `window_start` (unix seconds); answers the count including them.
    async fn count(
        &self,
        scope: &str,
        key: &str,
        window_start: i64,
        by: u64,
    ) -> Result<u64, StoreError>;
}
