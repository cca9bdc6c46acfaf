//! The PostgreSQL store: several host processes on one database. Every
//! promise is kept by the database, never by a process's memory: a commit
//! compares the session row's version under its row lock (so appends from
//! different processes serialize per session, not globally), nonces and
//! decision ids are primary keys, an enrollment code is spent by one
//! conditional update, and rate-limit windows are counted in an unlogged
//! table every process shares. Durability is the server's
//! `synchronous_commit` (on by default: a commit is on disk before the
//! request is acknowledged).

mod migrations;

use std::str::FromStr as _;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{NoTls, Row};

use super::*;
use crate::config::Durability;

pub use migrations::LATEST_VERSION;

/// Runs `body`, an operation written once for both stores (see
/// [`super::sql`]), with `db` a [`super::sql::Pg`] on PostgreSQL: `read`
/// and `write` on a pooled connection (each statement its own
/// transaction), `snapshot` in one read-only REPEATABLE READ transaction,
/// `tx` and `commit` in one transaction, committed when `body` answers
/// `Ok` (for `commit`, a key taken at commit is a conflict), else rolled
/// back (dropped).
macro_rules! pg_run {
    ($store:expr, read, |$db:ident| $body:expr) => {{
        let client = $store.client().await?;
        let $db = &$crate::store::sql::Pg(&client);
        async { $body }.await
    }};
    ($store:expr, write, |$db:ident| $body:expr) => {
        $crate::store::postgres::pg_run!($store, read, |$db| $body)
    };
    ($store:expr, snapshot, |$db:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let $db = &$crate::store::sql::Pg(&tx);
        let out: Result<_, StoreError> = async { $body }.await;
        let out = out?;
        tx.commit().await?;
        Ok(out)
    }};
    ($store:expr, tx, |$db:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        let tx = client.transaction().await?;
        let $db = &$crate::store::sql::Pg(&tx);
        let out: Result<_, StoreError> = async { $body }.await;
        let out = out?;
        tx.commit().await?;
        Ok(out)
    }};
    ($store:expr, commit, |$db:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err($crate::store::postgres::store)?;
        let $db = &$crate::store::sql::Pg(&tx);
        let out: Result<_, CommitError> = async { $body }.await;
        match out {
            Ok(v) => {
                tx.commit()
                    .await
                    .map_err($crate::store::postgres::conflict)?;
                Ok(v)
            }
            Err(e) => {
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }};
}
pub(crate) use pg_run;

/// Connections per host process.
const POOL_SIZE: usize = 16;

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// The PostgreSQL implementation of every repository.
pub struct PgStore {
    pool: Pool,
    describe: String,
}

fn pool_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Pool(e.to_string())
}

impl PgStore {
    /// Connects, and creates or migrates the schema.
    pub async fn open(url: &str, _durability: Durability) -> Result<PgStore, HostError> {
        let config = tokio_postgres::Config::from_str(url).map_err(|e| {
            HostError::Config(format!("{} is not a PostgreSQL URL: {e}", redact(url)))
        })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(std::time::Duration::from_secs(10)))
            .wait_timeout(Some(std::time::Duration::from_secs(30)))
            .build()
            .map_err(|e| HostError::Config(e.to_string()))?;
        let mut client = pool.get().await.map_err(|e| {
            HostError::Store(StoreError::Pool(format!(
                "cannot connect to {}: {e}",
                redact(url)
            )))
        })?;
        migrations::migrate(&mut client).await?;
        Ok(PgStore {
            pool,
            describe: format!("postgresql {}", redact(url)),
        })
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await?;
        Ok(client.query(&stmt, params).await?)
    }

    async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Option<Row>, StoreError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await?;
        Ok(client.query_opt(&stmt, params).await?)
    }

    async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await?;
        Ok(client.execute(&stmt, params).await?)
    }
}

fn u(v: i64) -> u64 {
    v.max(0) as u64
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `columns` ("a, b") as `prefix.a, prefix.b`, for a query that joins.
fn prefixed(columns: &str, prefix: &str) -> String {
    columns
        .split(", ")
        .map(|c| format!("{prefix}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A session's log in one statement, so one snapshot: the session row, its
/// vendor's key, and its events after `$2` up to the row's own count.
static LOG_QUERY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {}, a.public_key, a.fingerprint,
            ARRAY(SELECT e.body FROM events e WHERE e.session_id = s.id AND e.seq > $2 AND e.seq <= s.event_count ORDER BY e.seq)
         FROM sessions s JOIN agents a ON a.id = s.agent_id WHERE s.id = $1",
        prefixed(SESSION_COLUMNS, "s")
    )
});

/// A session with its org and the event at its standing seq, in one
/// statement (one snapshot); read on every append, so built once.
static SESSION_STATE_QUERY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {}, o.handle, o.name, o.sandbox, o.disabled, o.policy, e.body
         FROM sessions s JOIN orgs o ON o.handle = s.org_handle
         LEFT JOIN events e ON e.session_id = s.id AND e.seq = s.standing_seq
         WHERE s.id = $1",
        prefixed(SESSION_COLUMNS, "s")
    )
});

const SESSION_COLUMNS: &str = "id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds, version";

fn session_of(r: &Row) -> Result<Session, StoreError> {
    Ok(Session {
        id: r.try_get(0)?,
        agent_id: r.try_get(1)?,
        org_handle: r.try_get(2)?,
        sandbox: r.try_get(3)?,
        status: r.try_get(4)?,
        opened_at: r.try_get(5)?,
        closed_at: r.try_get(6)?,
        event_count: u(r.try_get(7)?),
        chain_head: r.try_get(8)?,
        standing_seq: r.try_get::<_, Option<i64>>(9)?.map(u),
        buyer_rounds: r.try_get::<_, i32>(10)?.max(0) as u32,
        version: u(r.try_get(11)?),
    })
}

const AGENT_COLUMNS: &str =
    "id, public_key, fingerprint, agent_name, vendor_name, contact_email, status, registered_at, names_verified";

fn agent_of(r: &Row) -> Result<AgentRow, StoreError> {
    Ok(AgentRow {
        id: r.try_get(0)?,
        public_key: r.try_get(1)?,
        fingerprint: r.try_get(2)?,
        agent_name: r.try_get(3)?,
        vendor_name: r.try_get(4)?,
        contact_email: r.try_get(5)?,
        status: parse_status(r.try_get(6)?),
        registered_at: r.try_get(7)?,
        names_verified: r.try_get(8)?,
    })
}

const APPROVER_COLUMNS: &str =
    "a.id, a.org_handle, a.name, a.email, a.public_key, a.fingerprint, a.enrolled_at, a.revoked_at";

fn approver_of(r: &Row) -> Result<ApproverRow, StoreError> {
    Ok(ApproverRow {
        id: r.try_get(0)?,
        org_handle: r.try_get(1)?,
        name: r.try_get(2)?,
        email: r.try_get(3)?,
        public_key: r.try_get(4)?,
        fingerprint: r.try_get(5)?,
        enrolled_at: r.try_get(6)?,
        revoked_at: r.try_get(7)?,
    })
}

fn org_of(r: &Row) -> Result<Org, StoreError> {
    Ok(Org {
        handle: r.try_get(0)?,
        name: r.try_get(1)?,
        sandbox: r.try_get(2)?,
        disabled: r.try_get(3)?,
        policy: r.try_get(4)?,
    })
}

const PENDING_QUERY: &str = "SELECT ref, seq, answers, kind, actor, expires_at, payload, approvals_required, held_reason, created_at
     FROM pending WHERE session_id = $1 AND state = 'open' AND ($2::TEXT IS NULL OR ref = $2) ORDER BY seq DESC, created_at";

fn pending_of(r: &Row) -> Result<PendingRow, StoreError> {
    Ok(PendingRow {
        reference: r.try_get(0)?,
        seq: u(r.try_get(1)?),
        answers: r.try_get(2)?,
        kind: r.try_get(3)?,
        actor: r.try_get(4)?,
        expires_at: r.try_get(5)?,
        payload: r.try_get(6)?,
        approvals_required: r.try_get::<_, i32>(7)?.max(0) as u32,
        held_reason: r.try_get(8)?,
        created_at: r.try_get(9)?,
    })
}

// A revoked approver's approval no longer counts towards the policy.
const APPROVALS_QUERY: &str = "SELECT p.ref, p.approver_id, p.approval FROM approvals p JOIN approvers a ON a.id = p.approver_id
     WHERE p.session_id = $1 AND ($2::TEXT IS NULL OR p.ref = $2) AND a.revoked_at IS NULL
     ORDER BY p.ordinal, p.recorded_at, p.approver_id";

fn approval_of(r: &Row) -> Result<ApprovalRow, StoreError> {
    Ok(ApprovalRow {
        reference: r.try_get(0)?,
        approver_id: r.try_get(1)?,
        approval: r.try_get(2)?,
    })
}

fn all<T>(rows: Vec<Row>, f: impl Fn(&Row) -> Result<T, StoreError>) -> Result<Vec<T>, StoreError> {
    rows.iter().map(f).collect()
}

use super::sql::is_unique_violation;

pub(crate) fn conflict(e: tokio_postgres::Error) -> CommitError {
    if is_unique_violation(&e) {
        CommitError::Conflict
    } else {
        CommitError::Store(e.into())
    }
}

pub(crate) fn store(e: tokio_postgres::Error) -> CommitError {
    CommitError::Store(e.into())
}

/// The statements of one commit, inside `tx`.
async fn apply(tx: &deadpool_postgres::Transaction<'_>, c: &Commit) -> Result<(), CommitError> {
    let s = &c.session;
    let event_count = i(s.event_count);
    let standing = s.standing_seq.map(i);
    let rounds = i32::try_from(s.buyer_rounds).unwrap_or(i32::MAX);
    if c.new_session {
        let stmt = tx
                .prepare_cached(
                    "INSERT INTO sessions (id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds, version)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1)",
                )
                .await
                .map_err(store)?;
        tx.execute(
            &stmt,
            &[
                &s.id,
                &s.agent_id,
                &s.org_handle,
                &s.sandbox,
                &s.status,
                &s.opened_at,
                &s.closed_at,
                &event_count,
                &s.chain_head,
                &standing,
                &rounds,
            ],
        )
        .await
        .map_err(conflict)?;
    } else {
        // The row lock taken here serializes commits to this session
        // across every process; a commit that waited re-reads the row
        // and finds the version moved on.
        let stmt = tx
                .prepare_cached(
                    "UPDATE sessions SET status = $2, closed_at = $3, event_count = $4, chain_head = $5, standing_seq = $6, buyer_rounds = $7, version = version + 1
                     WHERE id = $1 AND version = $8",
                )
                .await
                .map_err(store)?;
        let changed = tx
            .execute(
                &stmt,
                &[
                    &s.id,
                    &s.status,
                    &s.closed_at,
                    &event_count,
                    &s.chain_head,
                    &standing,
                    &rounds,
                    &i(s.version),
                ],
            )
            .await
            .map_err(store)?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    if !c.events.is_empty() {
        let stmt = tx
            .prepare_cached(
                "INSERT INTO events (session_id, seq, event_hash, body) VALUES ($1, $2, $3, $4)",
            )
            .await
            .map_err(store)?;
        for e in &c.events {
            tx.execute(&stmt, &[&s.id, &i(e.seq), &e.event_hash, &e.body])
                .await
                .map_err(conflict)?;
        }
    }
    if c.supersede_pending {
        tx.execute(
            "UPDATE pending SET state = 'superseded' WHERE session_id = $1 AND state = 'open'",
            &[&s.id],
        )
        .await
        .map_err(store)?;
    }
    for change in &c.pending_changes {
        match change {
            PendingChange::Held { reference, reason } => tx
                .execute(
                    "UPDATE pending SET held_reason = $3 WHERE session_id = $1 AND ref = $2",
                    &[&s.id, reference, reason],
                )
                .await
                .map_err(store)?,
            PendingChange::Resolved { reference, state } => tx
                .execute(
                    "UPDATE pending SET state = $3 WHERE session_id = $1 AND ref = $2",
                    &[&s.id, reference, state],
                )
                .await
                .map_err(store)?,
        };
    }
    for p in &c.new_pending {
        let p = &p.row;
        let required = i32::try_from(p.approvals_required).unwrap_or(i32::MAX);
        tx.execute(
                "INSERT INTO pending (session_id, ref, seq, answers, kind, actor, expires_at, payload, approvals_required, draft, held_reason, state, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', $12)",
                &[&s.id, &p.reference, &i(p.seq), &p.answers, &p.kind, &p.actor, &p.expires_at, &p.payload, &required, &p.reference.starts_with("draft:"), &p.held_reason, &p.created_at],
            )
            .await
            .map_err(conflict)?;
    }
    for a in &c.approvals {
        let ordinal = i32::try_from(a.ordinal).unwrap_or(i32::MAX);
        tx.execute(
                "INSERT INTO approvals (session_id, ref, approver_id, approval, recorded_at, ordinal) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&s.id, &a.reference, &a.approver_id, &a.approval, &a.recorded_at, &ordinal],
            )
            .await
            .map_err(conflict)?;
    }
    if let Some(d) = &c.decision {
        tx.execute(
                "INSERT INTO decisions (decision_id, approver_id, session_id, body, body_sha256, signed_headers, outcome, detail, received_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[&d.decision_id, &d.approver_id, &s.id, &d.body, &d.body_sha256, &d.signed_headers, &d.outcome, &d.detail, &d.received_at],
            )
            .await
            .map_err(conflict)?;
    }
    Ok(())
}

impl Storage for PgStore {
    fn negotiations(&self) -> &dyn NegotiationRepo {
        self
    }
    fn principals(&self) -> &dyn PrincipalRepo {
        self
    }
    fn admin(&self) -> &dyn AdminRepo {
        self
    }
    fn gate(&self) -> &dyn GateRepo {
        self
    }
    fn anex(&self) -> &dyn AnexRepo {
        self
    }
    fn shared_limits(&self) -> Option<&dyn LimitRepo> {
        Some(self)
    }
    fn describe(&self) -> String {
        self.describe.clone()
    }
}

#[async_trait]
impl NegotiationRepo for PgStore {
    async fn org(&self, handle: &str) -> Result<Option<Org>, StoreError> {
        self.query_opt(
            "SELECT handle, name, sandbox, disabled, policy FROM orgs WHERE handle = $1",
            &[&handle],
        )
        .await?
        .map(|r| org_of(&r))
        .transpose()
    }

    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        self.query_opt(
            &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1"),
            &[&id],
        )
        .await?
        .map(|r| session_of(&r))
        .transpose()
    }

    async fn session_state(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        let Some(row) = self.query_opt(&SESSION_STATE_QUERY, &[&id]).await? else {
            return Ok(None);
        };
        Ok(Some(SessionRow {
            session: session_of(&row)?,
            org: Org {
                handle: row.try_get(12)?,
                name: row.try_get(13)?,
                sandbox: row.try_get(14)?,
                disabled: row.try_get(15)?,
                policy: row.try_get(16)?,
            },
            standing: row.try_get(17)?,
        }))
    }

    async fn event_by_hash(
        &self,
        session_id: &str,
        event_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .query_opt(
                "SELECT body FROM events WHERE session_id = $1 AND event_hash = $2",
                &[&session_id, &event_hash],
            )
            .await?
            .map(|r| r.try_get(0))
            .transpose()?)
    }

    async fn pending(
        &self,
        session_id: &str,
        only: Option<&str>,
    ) -> Result<Vec<PendingRow>, StoreError> {
        all(
            self.query(PENDING_QUERY, &[&session_id, &only]).await?,
            pending_of,
        )
    }

    async fn approvals(
        &self,
        session_id: &str,
        reference: &str,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        all(
            self.query(APPROVALS_QUERY, &[&session_id, &Some(reference)])
                .await?,
            approval_of,
        )
    }

    async fn decision(&self, decision_id: &str) -> Result<Option<DecisionRow>, StoreError> {
        self.query_opt(
            "SELECT approver_id, session_id, body_sha256, outcome, detail FROM decisions WHERE decision_id = $1",
            &[&decision_id],
        )
        .await?
        .map(|r| {
            Ok(DecisionRow {
                approver_id: r.try_get(0)?,
                session_id: r.try_get(1)?,
                body_sha256: r.try_get(2)?,
                outcome: r.try_get(3)?,
                detail: r.try_get(4)?,
            })
        })
        .transpose()
    }

    async fn commit(&self, c: &Commit) -> Result<(), CommitError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(store)?;
        match apply(&tx, c).await {
            Ok(()) => tx.commit().await.map_err(conflict),
            Err(e) => {
                // Roll back now, releasing the session's row lock at once
                // (a dropped transaction rolls back only later).
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }

    async fn log(&self, session_id: &str, after: u64) -> Result<Option<LogSnapshot>, StoreError> {
        let Some(row) = self
            .query_opt(&LOG_QUERY, &[&session_id, &i(after)])
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(LogSnapshot {
            session: session_of(&row)?,
            vendor_key: row.try_get(12)?,
            vendor_fingerprint: row.try_get(13)?,
            events: row.try_get(14)?,
        }))
    }

    async fn summary(&self, org_handle: &str) -> Result<Vec<SummaryRow>, StoreError> {
        // Three statements in one snapshot, whatever the number of sessions
        // (a console polls this): the sessions with their vendors, then the
        // open pending decisions and their approvals of all open sessions.
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let session_columns = prefixed(SESSION_COLUMNS, "s");
        let agent_columns = prefixed(AGENT_COLUMNS, "a");
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT {session_columns}, {agent_columns} FROM sessions s JOIN agents a ON a.id = s.agent_id
                 WHERE s.org_handle = $1 ORDER BY s.opened_at, s.id"
            ))
            .await?;
        let rows = tx.query(&stmt, &[&org_handle]).await?;
        let stmt = tx
            .prepare_cached(
                "SELECT p.session_id, p.ref, p.seq, p.answers, p.kind, p.actor, p.expires_at, p.payload, p.approvals_required, p.held_reason, p.created_at
                 FROM pending p JOIN sessions s ON s.id = p.session_id
                 WHERE s.org_handle = $1 AND s.status = 'open' AND p.state = 'open'
                 ORDER BY p.session_id, p.seq DESC, p.created_at",
            )
            .await?;
        let pending = tx.query(&stmt, &[&org_handle]).await?;
        let stmt = tx
            .prepare_cached(
                "SELECT p.session_id, p.ref, p.approver_id, p.approval FROM approvals p
                 JOIN approvers a ON a.id = p.approver_id JOIN sessions s ON s.id = p.session_id
                 WHERE s.org_handle = $1 AND s.status = 'open' AND a.revoked_at IS NULL
                 ORDER BY p.session_id, p.ordinal, p.recorded_at, p.approver_id",
            )
            .await?;
        let approvals = tx.query(&stmt, &[&org_handle]).await?;
        tx.commit().await?;
        let mut pending_of: std::collections::HashMap<String, Vec<PendingRow>> =
            std::collections::HashMap::new();
        for r in &pending {
            let session: String = r.try_get(0)?;
            pending_of.entry(session).or_default().push(PendingRow {
                reference: r.try_get(1)?,
                seq: u(r.try_get(2)?),
                answers: r.try_get(3)?,
                kind: r.try_get(4)?,
                actor: r.try_get(5)?,
                expires_at: r.try_get(6)?,
                payload: r.try_get(7)?,
                approvals_required: r.try_get::<_, i32>(8)?.max(0) as u32,
                held_reason: r.try_get(9)?,
                created_at: r.try_get(10)?,
            });
        }
        let mut approvals_of: std::collections::HashMap<String, Vec<ApprovalRow>> =
            std::collections::HashMap::new();
        for r in &approvals {
            let session: String = r.try_get(0)?;
            approvals_of.entry(session).or_default().push(ApprovalRow {
                reference: r.try_get(1)?,
                approver_id: r.try_get(2)?,
                approval: r.try_get(3)?,
            });
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let session = session_of(row)?;
            let vendor = AgentRow {
                id: row.try_get(12)?,
                public_key: row.try_get(13)?,
                fingerprint: row.try_get(14)?,
                agent_name: row.try_get(15)?,
                vendor_name: row.try_get(16)?,
                contact_email: row.try_get(17)?,
                status: parse_status(row.try_get(18)?),
                registered_at: row.try_get(19)?,
                names_verified: row.try_get(20)?,
            };
            out.push(SummaryRow {
                pending: pending_of.remove(&session.id).unwrap_or_default(),
                approvals: approvals_of.remove(&session.id).unwrap_or_default(),
                session,
                vendor,
            });
        }
        Ok(out)
    }
}

#[async_trait]
impl PrincipalRepo for PgStore {
    async fn agent(&self, id: &str) -> Result<Option<AgentRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = $1"),
            &[&id],
        )
        .await?
        .map(|r| agent_of(&r))
        .transpose()
    }

    async fn register_agent(&self, a: &AgentRow) -> Result<AgentRow, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute(
            "INSERT INTO agents (id, public_key, fingerprint, agent_name, vendor_name, contact_email, status, registered_at, names_verified)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, FALSE) ON CONFLICT (public_key) DO NOTHING",
            &[&a.id, &a.public_key, &a.fingerprint, &a.agent_name, &a.vendor_name, &a.contact_email, &status_text(a.status), &a.registered_at],
        )
        .await?;
        // Locked: two registrations of one key are recorded one after the other.
        let row = tx
            .query_opt(
                &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE public_key = $1 FOR UPDATE"),
                &[&a.public_key],
            )
            .await?
            .ok_or_else(|| StoreError::Corrupt("a registered key vanished".into()))?;
        let stored = agent_of(&row)?;
        let last = tx
            .query_opt(
                "SELECT ordinal, agent_name, vendor_name, contact_email FROM agent_registrations
                 WHERE agent_id = $1 ORDER BY ordinal DESC LIMIT 1",
                &[&stored.id],
            )
            .await?;
        let mut ordinal = 1_i64;
        if let Some(last) = &last {
            let names: (String, String, String) =
                (last.try_get(1)?, last.try_get(2)?, last.try_get(3)?);
            if names
                == (
                    a.agent_name.clone(),
                    a.vendor_name.clone(),
                    a.contact_email.clone(),
                )
            {
                tx.commit().await?;
                return Ok(stored);
            }
            ordinal = last.try_get::<_, i64>(0)? + 1;
        }
        tx.execute(
            "INSERT INTO agent_registrations (agent_id, ordinal, agent_name, vendor_name, contact_email, registered_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[&stored.id, &ordinal, &a.agent_name, &a.vendor_name, &a.contact_email, &a.registered_at],
        )
        .await?;
        let stored = if stored.names_verified {
            stored
        } else {
            tx.execute(
                "UPDATE agents SET agent_name = $2, vendor_name = $3, contact_email = $4 WHERE id = $1",
                &[&stored.id, &a.agent_name, &a.vendor_name, &a.contact_email],
            )
            .await?;
            AgentRow {
                agent_name: a.agent_name.clone(),
                vendor_name: a.vendor_name.clone(),
                contact_email: a.contact_email.clone(),
                ..stored
            }
        };
        tx.commit().await?;
        Ok(stored)
    }

    async fn agent_registrations(&self, id: &str) -> Result<Vec<RegistrationRow>, StoreError> {
        let rows = self
            .query(
                "SELECT ordinal, agent_name, vendor_name, contact_email, registered_at
                 FROM agent_registrations WHERE agent_id = $1 ORDER BY ordinal",
                &[&id],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(RegistrationRow {
                    ordinal: u32::try_from(r.try_get::<_, i64>(0)?).unwrap_or(u32::MAX),
                    agent_name: r.try_get(1)?,
                    vendor_name: r.try_get(2)?,
                    contact_email: r.try_get(3)?,
                    registered_at: r.try_get(4)?,
                })
            })
            .collect()
    }

    async fn active_approver(&self, id: &str) -> Result<Option<ApproverRow>, StoreError> {
        self.query_opt(
            &format!(
                "SELECT {APPROVER_COLUMNS} FROM approvers a JOIN orgs o ON o.handle = a.org_handle
                 WHERE a.id = $1 AND a.revoked_at IS NULL AND NOT o.disabled"
            ),
            &[&id],
        )
        .await?
        .map(|r| approver_of(&r))
        .transpose()
    }

    async fn enrollment_code(&self, code_hash: &str) -> Result<Option<CodeRow>, StoreError> {
        self.query_opt(
            "SELECT org_handle, name, email, expires_at, used_at IS NOT NULL FROM enrollment_codes WHERE code_hash = $1",
            &[&code_hash],
        )
        .await?
        .map(|r| {
            Ok(CodeRow {
                org_handle: r.try_get(0)?,
                name: r.try_get(1)?,
                email: r.try_get(2)?,
                expires_at: r.try_get(3)?,
                used: r.try_get(4)?,
            })
        })
        .transpose()
    }

    async fn enroll(
        &self,
        code_hash: &str,
        a: &ApproverRow,
        now_unix: i64,
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let spent = tx
            .execute(
                "UPDATE enrollment_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $3",
                &[&code_hash, &a.enrolled_at, &now_unix],
            )
            .await?;
        if spent == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO approvers (id, org_handle, name, email, public_key, fingerprint, enrolled_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&a.id, &a.org_handle, &a.name, &a.email, &a.public_key, &a.fingerprint, &a.enrolled_at],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn spend_nonce(
        &self,
        principal: &str,
        nonce: &str,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "INSERT INTO nonces (principal, nonce, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&principal, &nonce, &expires_at],
            )
            .await?
            == 1)
    }

    async fn purge_nonces(&self, now_unix: i64) -> Result<u64, StoreError> {
        // Old rate-limit windows go with them (the longest window is a day).
        self.execute(
            "DELETE FROM rate_windows WHERE window_start < $1",
            &[&(now_unix - 86_400)],
        )
        .await?;
        self.execute("DELETE FROM nonces WHERE expires_at < $1", &[&now_unix])
            .await
    }

    async fn approver_keys(&self) -> Result<Vec<ApproverRow>, StoreError> {
        all(
            self.query(
                &format!("SELECT {APPROVER_COLUMNS} FROM approvers a ORDER BY a.enrolled_at, a.id"),
                &[],
            )
            .await?,
            approver_of,
        )
    }
}

#[async_trait]
impl AdminRepo for PgStore {
    async fn insert_org(&self, o: &Org, created_at: &str) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&o.handle, &o.name, &o.sandbox, &o.disabled, &o.policy, &created_at],
        )
        .await?;
        Ok(())
    }

    async fn orgs(&self) -> Result<Vec<OrgListing>, StoreError> {
        all(
            self.query(
                "SELECT handle, name, sandbox, disabled, policy, created_at FROM orgs ORDER BY sandbox DESC, created_at, handle",
                &[],
            )
            .await?,
            |r| {
                Ok(OrgListing {
                    org: org_of(r)?,
                    created_at: r.try_get(5)?,
                })
            },
        )
    }

    async fn disable_org(&self, handle: &str) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "UPDATE orgs SET disabled = true WHERE handle = $1",
                &[&handle],
            )
            .await?
            == 1)
    }

    async fn set_policy(&self, handle: &str, policy_json: &str) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "UPDATE orgs SET policy = $2 WHERE handle = $1",
                &[&handle, &policy_json],
            )
            .await?
            == 1)
    }

    async fn agents(&self) -> Result<Vec<AgentRow>, StoreError> {
        all(
            self.query(
                &format!("SELECT {AGENT_COLUMNS} FROM agents ORDER BY registered_at, id"),
                &[],
            )
            .await?,
            agent_of,
        )
    }

    async fn set_agent_status(&self, id: &str, status: &str) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "UPDATE agents SET status = $2,
                     names_verified = CASE WHEN $2 = 'verified' THEN TRUE ELSE names_verified END
                 WHERE id = $1",
                &[&id, &status],
            )
            .await?
            == 1)
    }

    async fn insert_code(&self, code_hash: &str, k: &CodeRow) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO enrollment_codes (code_hash, org_handle, name, email, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, NULL)",
            &[&code_hash, &k.org_handle, &k.name, &k.email, &k.expires_at],
        )
        .await?;
        Ok(())
    }

    async fn approvers(&self) -> Result<Vec<ApproverRow>, StoreError> {
        self.approver_keys().await
    }

    async fn revoke_approver(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "UPDATE approvers SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
                &[&id, &at],
            )
            .await?
            == 1)
    }

    async fn meta_init(&self, key: &str, value: &str) -> Result<String, StoreError> {
        self.execute(
            "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
            &[&key, &value],
        )
        .await?;
        let row = self
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("meta {key} vanished")))?;
        Ok(row.try_get(0)?)
    }

    async fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
            .await?
            .map(|r| r.try_get(0))
            .transpose()?)
    }
}

#[async_trait]
impl LimitRepo for PgStore {
    async fn count(
        &self,
        scope: &str,
        key: &str,
        window_start: i64,
        _window_secs: i64,
    ) -> Result<u64, StoreError> {
        let row = self
            .query_opt(
                "INSERT INTO rate_windows (scope, key, window_start, count) VALUES ($1, $2, $3, 1)
                 ON CONFLICT (scope, key, window_start) DO UPDATE SET count = rate_windows.count + 1
                 RETURNING count",
                &[&scope, &key, &window_start],
            )
            .await?
            .ok_or_else(|| StoreError::Corrupt("a rate window vanished".into()))?;
        Ok(u(row.try_get(0)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_error_reads_in_the_servers_words() {
        let cluster = countersign_testkit::postgres::Cluster::shared().expect("test cluster");
        let url = cluster.fresh_database().await.expect("database");
        let store = PgStore::open(&url, Durability::default())
            .await
            .expect("open");
        let failed = store
            .query("SELECT 1 / 0", &[])
            .await
            .expect_err("division by zero");
        // The driver alone would say "postgresql: db error".
        assert_eq!(
            failed.to_string(),
            "postgresql: division by zero (SQLSTATE 22012)"
        );
    }
}
