//! The SQLite store: one file in WAL mode, nothing to install. One writer
//! thread takes the short writes (a commit is a compare on the session's
//! version and a few inserts), every write that is waiting in one
//! transaction and one fsync ([`group`]); reads run on a small pool of
//! their own connections, which WAL lets proceed beside the writer; nonces
//! live in a second file with its own writer, so spending a nonce never
//! waits for an append. The server and the admin CLI open the same files at
//! the same time (busy timeout).

mod group;
mod migrations;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use group::GroupWriter;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::*;
use crate::config::Durability;

pub use migrations::LATEST_VERSION;

/// Runs `body`, an operation written once for both stores (see
/// [`super::sql`]), with `db` a [`super::sql::Lite`] on SQLite: `read` on a
/// pooled read connection (`snapshot`: inside one read transaction),
/// `write`, `tx` and `commit` on the writer thread (each in its own
/// savepoint of the next group commit, rolled back alone when it fails).
macro_rules! lite_run {
    ($store:expr, read, |$db:ident| $body:expr) => {
        $store
            .read(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
    ($store:expr, write, |$db:ident| $body:expr) => {
        $store
            .write(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
    ($store:expr, tx, |$db:ident| $body:expr) => {
        $crate::store::sqlite::lite_run!($store, write, |$db| $body)
    };
    ($store:expr, snapshot, |$db:ident| $body:expr) => {
        $store
            .read(move |c| {
                let tx = c.transaction()?;
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&tx);
                    $body
                })
            })
            .await
    };
    ($store:expr, commit, |$db:ident| $body:expr) => {
        $store
            .commit(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
}
pub(crate) use lite_run;

/// How long a connection waits for another writer before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle read connections kept open.
const READERS: usize = 4;

/// The nonce file beside the database: `<db>.nonces`.
pub fn nonce_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".nonces");
    PathBuf::from(name)
}

/// The SQLite implementation of every repository.
pub struct SqliteStore {
    path: PathBuf,
    writer: GroupWriter,
    nonces: GroupWriter,
    readers: Arc<ReadPool>,
}

struct ReadPool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

fn connection(path: &Path, durability: Durability) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", durability.pragma())?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

impl ReadPool {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = Connection::open(&self.path)?;
                conn.busy_timeout(BUSY_TIMEOUT)?;
                conn
            }
        };
        let result = f(&mut conn);
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < READERS {
                idle.push(conn);
            }
        }
        result
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}

impl SqliteStore {
    /// Opens (creating and migrating) the database and its nonce file.
    pub fn open(path: &Path, durability: Durability) -> Result<SqliteStore, StoreError> {
        let mut writer = connection(path, durability)?;
        migrations::migrate(&mut writer)?;
        let nonces = connection(&nonce_path(path), durability)?;
        nonces.execute_batch(
            "CREATE TABLE IF NOT EXISTS nonces (
                principal TEXT NOT NULL,
                nonce TEXT NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (principal, nonce)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS nonces_expiry ON nonces(expires_at);",
        )?;
        move_legacy_nonces(&mut writer, &nonces)?;
        Ok(SqliteStore {
            path: path.to_owned(),
            writer: GroupWriter::start(writer, "writer")?,
            nonces: GroupWriter::start(nonces, "nonces")?,
            readers: Arc::new(ReadPool {
                path: path.to_owned(),
                idle: Mutex::new(Vec::new()),
            }),
        })
    }

    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let pool = self.readers.clone();
        blocking(move || pool.with(f)).await
    }

    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.writer.write(f).await
    }

    /// Runs one commit's statements on the writer: an `Err` undoes them.
    pub(crate) async fn commit<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, CommitError> + Send + 'static,
    ) -> Result<T, CommitError> {
        self.writer.write(f).await
    }
}

/// Databases of schema 1 kept nonces in the main file: carry the unexpired
/// ones over (a replay must stay refused across the upgrade), then drop it.
fn move_legacy_nonces(writer: &mut Connection, nonces: &Connection) -> Result<(), StoreError> {
    let legacy: i64 = writer.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'nonces'",
        [],
        |r| r.get(0),
    )?;
    if legacy == 0 {
        return Ok(());
    }
    let tx = writer.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut stmt = tx.prepare("SELECT principal, nonce, expires_at FROM nonces")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        for row in rows {
            let (principal, nonce, expires) = row?;
            nonces.execute(
                "INSERT OR IGNORE INTO nonces (principal, nonce, expires_at) VALUES (?1, ?2, ?3)",
                params![principal, nonce, expires],
            )?;
        }
    }
    tx.execute_batch("DROP TABLE nonces")?;
    tx.commit()?;
    Ok(())
}

const SESSION_COLUMNS: &str = "id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds, version";

fn session_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        agent_id: r.get(1)?,
        org_handle: r.get(2)?,
        sandbox: r.get(3)?,
        status: r.get(4)?,
        opened_at: r.get(5)?,
        closed_at: r.get(6)?,
        event_count: r.get(7)?,
        chain_head: r.get(8)?,
        standing_seq: r.get(9)?,
        buyer_rounds: r.get(10)?,
        version: r.get(11)?,
    })
}

fn load_session(conn: &Connection, id: &str) -> Result<Option<Session>, StoreError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"
        ))?
        .query_row([id], session_of)
        .optional()?)
}

const AGENT_COLUMNS: &str =
    "id, public_key, fingerprint, agent_name, vendor_name, contact_email, status, registered_at, names_verified";

fn agent_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<AgentRow> {
    Ok(AgentRow {
        id: r.get(0)?,
        public_key: r.get(1)?,
        fingerprint: r.get(2)?,
        agent_name: r.get(3)?,
        vendor_name: r.get(4)?,
        contact_email: r.get(5)?,
        status: parse_status(&r.get::<_, String>(6)?),
        registered_at: r.get(7)?,
        names_verified: r.get(8)?,
    })
}

const APPROVER_COLUMNS: &str =
    "a.id, a.org_handle, a.name, a.email, a.public_key, a.fingerprint, a.enrolled_at, a.revoked_at";

fn approver_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApproverRow> {
    Ok(ApproverRow {
        id: r.get(0)?,
        org_handle: r.get(1)?,
        name: r.get(2)?,
        email: r.get(3)?,
        public_key: r.get(4)?,
        fingerprint: r.get(5)?,
        enrolled_at: r.get(6)?,
        revoked_at: r.get(7)?,
    })
}

fn pending_rows(
    conn: &Connection,
    session_id: &str,
    only: Option<&str>,
) -> Result<Vec<PendingRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT ref, seq, answers, kind, actor, expires_at, payload, approvals_required, held_reason, created_at
         FROM pending WHERE session_id = ?1 AND state = 'open' AND (?2 IS NULL OR ref = ?2) ORDER BY seq DESC, created_at",
    )?;
    let rows = stmt.query_map(params![session_id, only], |r| {
        Ok(PendingRow {
            reference: r.get(0)?,
            seq: r.get(1)?,
            answers: r.get(2)?,
            kind: r.get(3)?,
            actor: r.get(4)?,
            expires_at: r.get(5)?,
            payload: r.get(6)?,
            approvals_required: r.get(7)?,
            held_reason: r.get(8)?,
            created_at: r.get(9)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn approval_rows(
    conn: &Connection,
    session_id: &str,
    reference: Option<&str>,
) -> Result<Vec<ApprovalRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        // A revoked approver's approval no longer counts towards the policy.
        "SELECT p.ref, p.approver_id, p.approval FROM approvals p JOIN approvers a ON a.id = p.approver_id
         WHERE p.session_id = ?1 AND (?2 IS NULL OR p.ref = ?2) AND a.revoked_at IS NULL
         ORDER BY p.ordinal, p.recorded_at, p.rowid",
    )?;
    let rows = stmt.query_map(params![session_id, reference], |r| {
        Ok(ApprovalRow {
            reference: r.get(0)?,
            approver_id: r.get(1)?,
            approval: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

use super::sql::is_constraint;

fn apply(conn: &mut Connection, c: &Commit) -> Result<(), CommitError> {
    let tx = conn.savepoint().map_err(StoreError::from)?;
    let s = &c.session;
    let conflict = |e: rusqlite::Error| {
        if is_constraint(&e) {
            CommitError::Conflict
        } else {
            CommitError::Store(e.into())
        }
    };
    if c.new_session {
        tx.prepare_cached(
            "INSERT INTO sessions (id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1)",
        )
        .map_err(StoreError::from)?
        .execute(params![s.id, s.agent_id, s.org_handle, s.sandbox, s.status, s.opened_at, s.closed_at, s.event_count, s.chain_head, s.standing_seq, s.buyer_rounds])
        .map_err(conflict)?;
    } else {
        let changed = tx
            .prepare_cached(
                "UPDATE sessions SET status = ?2, closed_at = ?3, event_count = ?4, chain_head = ?5, standing_seq = ?6, buyer_rounds = ?7, version = version + 1
                 WHERE id = ?1 AND version = ?8",
            )
            .map_err(StoreError::from)?
            .execute(params![s.id, s.status, s.closed_at, s.event_count, s.chain_head, s.standing_seq, s.buyer_rounds, s.version])
            .map_err(StoreError::from)?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    for e in &c.events {
        tx.prepare_cached(
            "INSERT INTO events (session_id, seq, event_hash, body) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(StoreError::from)?
        .execute(params![s.id, e.seq, e.event_hash, e.body])
        .map_err(conflict)?;
    }
    if c.supersede_pending {
        tx.prepare_cached(
            "UPDATE pending SET state = 'superseded' WHERE session_id = ?1 AND state = 'open'",
        )
        .map_err(StoreError::from)?
        .execute([&s.id])
        .map_err(StoreError::from)?;
    }
    for change in &c.pending_changes {
        match change {
            PendingChange::Held { reference, reason } => tx
                .prepare_cached(
                    "UPDATE pending SET held_reason = ?3 WHERE session_id = ?1 AND ref = ?2",
                )
                .map_err(StoreError::from)?
                .execute(params![s.id, reference, reason]),
            PendingChange::Resolved { reference, state } => tx
                .prepare_cached("UPDATE pending SET state = ?3 WHERE session_id = ?1 AND ref = ?2")
                .map_err(StoreError::from)?
                .execute(params![s.id, reference, state]),
        }
        .map_err(StoreError::from)?;
    }
    for p in &c.new_pending {
        let p = &p.row;
        tx.prepare_cached(
            "INSERT INTO pending (session_id, ref, seq, answers, kind, actor, expires_at, payload, approvals_required, draft, held_reason, state, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'open', ?12)",
        )
        .map_err(StoreError::from)?
        .execute(params![s.id, p.reference, p.seq, p.answers, p.kind, p.actor, p.expires_at, p.payload, p.approvals_required, p.reference.starts_with("draft:"), p.held_reason, p.created_at])
        .map_err(conflict)?;
    }
    for a in &c.approvals {
        tx.prepare_cached(
            "INSERT INTO approvals (session_id, ref, approver_id, approval, recorded_at, ordinal) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(StoreError::from)?
        .execute(params![s.id, a.reference, a.approver_id, a.approval, a.recorded_at, a.ordinal])
        .map_err(conflict)?;
    }
    if let Some(d) = &c.decision {
        tx.prepare_cached(
            "INSERT INTO decisions (decision_id, approver_id, session_id, body, body_sha256, signed_headers, outcome, detail, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(StoreError::from)?
        .execute(params![d.decision_id, d.approver_id, s.id, d.body, d.body_sha256, d.signed_headers, d.outcome, d.detail, d.received_at])
        .map_err(conflict)?;
    }
    tx.commit().map_err(StoreError::from)?;
    Ok(())
}

impl Storage for SqliteStore {
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
        None
    }
    fn describe(&self) -> String {
        format!("sqlite {}", self.path.display())
    }
}

#[async_trait]
impl NegotiationRepo for SqliteStore {
    async fn org(&self, handle: &str) -> Result<Option<Org>, StoreError> {
        let handle = handle.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT handle, name, sandbox, disabled, policy FROM orgs WHERE handle = ?1",
            )?
            .query_row([&handle], |r| {
                Ok(Org {
                    handle: r.get(0)?,
                    name: r.get(1)?,
                    sandbox: r.get(2)?,
                    disabled: r.get(3)?,
                    policy: r.get(4)?,
                })
            })
            .optional()?)
        })
        .await
    }

    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| load_session(c, &id)).await
    }

    async fn session_state(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| {
            let tx = c.transaction()?;
            let Some(session) = load_session(&tx, &id)? else {
                return Ok(None);
            };
            let org = tx
                .prepare_cached(
                    "SELECT handle, name, sandbox, disabled, policy FROM orgs WHERE handle = ?1",
                )?
                .query_row([&session.org_handle], |r| {
                    Ok(Org {
                        handle: r.get(0)?,
                        name: r.get(1)?,
                        sandbox: r.get(2)?,
                        disabled: r.get(3)?,
                        policy: r.get(4)?,
                    })
                })?;
            let standing = match session.standing_seq {
                Some(seq) => tx
                    .prepare_cached("SELECT body FROM events WHERE session_id = ?1 AND seq = ?2")?
                    .query_row(params![id, seq], |r| r.get(0))
                    .optional()?,
                None => None,
            };
            drop(tx);
            Ok(Some(SessionRow {
                session,
                org,
                standing,
            }))
        })
        .await
    }

    async fn event_by_hash(
        &self,
        session_id: &str,
        event_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        let (id, hash) = (session_id.to_owned(), event_hash.to_owned());
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT body FROM events WHERE session_id = ?1 AND event_hash = ?2",
            )?
            .query_row(params![id, hash], |r| r.get(0))
            .optional()?)
        })
        .await
    }

    async fn pending(
        &self,
        session_id: &str,
        only: Option<&str>,
    ) -> Result<Vec<PendingRow>, StoreError> {
        let (id, only) = (session_id.to_owned(), only.map(str::to_owned));
        self.read(move |c| pending_rows(c, &id, only.as_deref()))
            .await
    }

    async fn approvals(
        &self,
        session_id: &str,
        reference: &str,
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        let (id, reference) = (session_id.to_owned(), reference.to_owned());
        self.read(move |c| approval_rows(c, &id, Some(&reference)))
            .await
    }

    async fn decision(&self, decision_id: &str) -> Result<Option<DecisionRow>, StoreError> {
        let id = decision_id.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT approver_id, session_id, body_sha256, outcome, detail FROM decisions WHERE decision_id = ?1",
            )?
            .query_row([&id], |r| {
                Ok(DecisionRow {
                    approver_id: r.get(0)?,
                    session_id: r.get(1)?,
                    body_sha256: r.get(2)?,
                    outcome: r.get(3)?,
                    detail: r.get(4)?,
                })
            })
            .optional()?)
        })
        .await
    }

    async fn commit(&self, commit: &Commit) -> Result<(), CommitError> {
        let commit = commit.clone();
        self.writer.write(move |c| apply(c, &commit)).await
    }

    async fn log(&self, session_id: &str, after: u64) -> Result<Option<LogSnapshot>, StoreError> {
        let id = session_id.to_owned();
        self.read(move |c| {
            let tx = c.transaction()?;
            let Some(session) = load_session(&tx, &id)? else {
                return Ok(None);
            };
            let (vendor_key, vendor_fingerprint) = tx
                .prepare_cached("SELECT public_key, fingerprint FROM agents WHERE id = ?1")?
                .query_row([&session.agent_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let events = {
                let mut stmt = tx.prepare_cached(
                    "SELECT body FROM events WHERE session_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
                )?;
                let rows = stmt.query_map(params![id, after, session.event_count], |r| r.get(0))?;
                rows.collect::<Result<Vec<String>, _>>()?
            };
            Ok(Some(LogSnapshot {
                session,
                vendor_key,
                vendor_fingerprint,
                events,
            }))
        })
        .await
    }

    async fn summary(&self, org_handle: &str) -> Result<Vec<SummaryRow>, StoreError> {
        let org = org_handle.to_owned();
        self.read(move |c| {
            let tx = c.transaction()?;
            let sessions = {
                let mut stmt = tx.prepare_cached(&format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions WHERE org_handle = ?1 ORDER BY opened_at, id"
                ))?;
                let rows = stmt.query_map([&org], session_of)?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            let mut out = Vec::with_capacity(sessions.len());
            for session in sessions {
                let vendor = tx
                    .prepare_cached(&format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?1"))?
                    .query_row([&session.agent_id], agent_of)?;
                let (pending, approvals) = if session.status == "open" {
                    (pending_rows(&tx, &session.id, None)?, approval_rows(&tx, &session.id, None)?)
                } else {
                    (Vec::new(), Vec::new())
                };
                out.push(SummaryRow {
                    session,
                    vendor,
                    pending,
                    approvals,
                });
            }
            Ok(out)
        })
        .await
    }
}

#[async_trait]
impl PrincipalRepo for SqliteStore {
    async fn agent(&self, id: &str) -> Result<Option<AgentRow>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| {
            Ok(
                c.prepare_cached(&format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?1"))?
                    .query_row([&id], agent_of)
                    .optional()?,
            )
        })
        .await
    }

    async fn register_agent(&self, agent: &AgentRow) -> Result<AgentRow, StoreError> {
        let a = agent.clone();
        self.write(move |c| {
            c.prepare_cached(
                "INSERT INTO agents (id, public_key, fingerprint, agent_name, vendor_name, contact_email, status, registered_at, names_verified)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0) ON CONFLICT (public_key) DO NOTHING",
            )?
            .execute(params![a.id, a.public_key, a.fingerprint, a.agent_name, a.vendor_name, a.contact_email, status_text(a.status), a.registered_at])?;
            let stored = c
                .prepare_cached(&format!("SELECT {AGENT_COLUMNS} FROM agents WHERE public_key = ?1"))?
                .query_row([&a.public_key], agent_of)?;
            let last: Option<(u32, String, String, String)> = c
                .prepare_cached(
                    "SELECT ordinal, agent_name, vendor_name, contact_email FROM agent_registrations
                     WHERE agent_id = ?1 ORDER BY ordinal DESC LIMIT 1",
                )?
                .query_row([&stored.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .optional()?;
            let same = last.as_ref().is_some_and(|(_, agent_name, vendor_name, email)| {
                (agent_name, vendor_name, email) == (&a.agent_name, &a.vendor_name, &a.contact_email)
            });
            if same {
                return Ok(stored);
            }
            let ordinal = last.map_or(1, |(n, ..)| n + 1);
            c.prepare_cached(
                "INSERT INTO agent_registrations (agent_id, ordinal, agent_name, vendor_name, contact_email, registered_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![stored.id, ordinal, a.agent_name, a.vendor_name, a.contact_email, a.registered_at])?;
            if stored.names_verified {
                return Ok(stored);
            }
            c.prepare_cached(
                "UPDATE agents SET agent_name = ?2, vendor_name = ?3, contact_email = ?4 WHERE id = ?1",
            )?
            .execute(params![stored.id, a.agent_name, a.vendor_name, a.contact_email])?;
            Ok(c.prepare_cached(&format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?1"))?
                .query_row([&stored.id], agent_of)?)
        })
        .await
    }

    async fn agent_registrations(&self, id: &str) -> Result<Vec<RegistrationRow>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT ordinal, agent_name, vendor_name, contact_email, registered_at
                 FROM agent_registrations WHERE agent_id = ?1 ORDER BY ordinal",
            )?;
            let rows = stmt.query_map([&id], |r| {
                Ok(RegistrationRow {
                    ordinal: r.get(0)?,
                    agent_name: r.get(1)?,
                    vendor_name: r.get(2)?,
                    contact_email: r.get(3)?,
                    registered_at: r.get(4)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn active_approver(&self, id: &str) -> Result<Option<ApproverRow>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {APPROVER_COLUMNS} FROM approvers a JOIN orgs o ON o.handle = a.org_handle
                 WHERE a.id = ?1 AND a.revoked_at IS NULL AND o.disabled = 0"
            ))?
            .query_row([&id], approver_of)
            .optional()?)
        })
        .await
    }

    async fn enrollment_code(&self, code_hash: &str) -> Result<Option<CodeRow>, StoreError> {
        let hash = code_hash.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT org_handle, name, email, expires_at, used_at IS NOT NULL FROM enrollment_codes WHERE code_hash = ?1",
            )?
            .query_row([&hash], |r| {
                Ok(CodeRow {
                    org_handle: r.get(0)?,
                    name: r.get(1)?,
                    email: r.get(2)?,
                    expires_at: r.get(3)?,
                    used: r.get(4)?,
                })
            })
            .optional()?)
        })
        .await
    }

    async fn enroll(
        &self,
        code_hash: &str,
        a: &ApproverRow,
        now_unix: i64,
    ) -> Result<bool, StoreError> {
        let (hash, a) = (code_hash.to_owned(), a.clone());
        self.write(move |c| {
            let tx = c.savepoint()?;
            let spent = tx.execute(
                "UPDATE enrollment_codes SET used_at = ?2 WHERE code_hash = ?1 AND used_at IS NULL AND expires_at > ?3",
                params![hash, a.enrolled_at, now_unix],
            )?;
            if spent == 0 {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO approvers (id, org_handle, name, email, public_key, fingerprint, enrolled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![a.id, a.org_handle, a.name, a.email, a.public_key, a.fingerprint, a.enrolled_at],
            )?;
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    async fn spend_nonce(
        &self,
        principal: &str,
        nonce: &str,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        let (principal, nonce) = (principal.to_owned(), nonce.to_owned());
        self.nonces
            .write(move |c| {
                let inserted = c
                    .prepare_cached("INSERT OR IGNORE INTO nonces (principal, nonce, expires_at) VALUES (?1, ?2, ?3)")?
                    .execute(params![principal, nonce, expires_at])?;
                Ok(inserted == 1)
            })
            .await
    }

    async fn purge_nonces(&self, now_unix: i64) -> Result<u64, StoreError> {
        self.nonces
            .write(move |c| {
                Ok(c.execute("DELETE FROM nonces WHERE expires_at < ?1", [now_unix])? as u64)
            })
            .await
    }

    async fn approver_keys(&self) -> Result<Vec<ApproverRow>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {APPROVER_COLUMNS} FROM approvers a ORDER BY a.enrolled_at, a.id"
            ))?;
            let rows = stmt.query_map([], approver_of)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}

#[async_trait]
impl AdminRepo for SqliteStore {
    async fn insert_org(&self, org: &Org, created_at: &str) -> Result<(), StoreError> {
        let (o, at) = (org.clone(), created_at.to_owned());
        self.write(move |c| {
            c.execute(
                "INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![o.handle, o.name, o.sandbox, o.disabled, o.policy, at],
            )?;
            Ok(())
        })
        .await
    }

    async fn orgs(&self) -> Result<Vec<OrgListing>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare(
                "SELECT handle, name, sandbox, disabled, policy, created_at FROM orgs ORDER BY sandbox DESC, created_at, handle",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(OrgListing {
                    org: Org {
                        handle: r.get(0)?,
                        name: r.get(1)?,
                        sandbox: r.get(2)?,
                        disabled: r.get(3)?,
                        policy: r.get(4)?,
                    },
                    created_at: r.get(5)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn disable_org(&self, handle: &str) -> Result<bool, StoreError> {
        let handle = handle.to_owned();
        self.write(move |c| {
            Ok(c.execute("UPDATE orgs SET disabled = 1 WHERE handle = ?1", [&handle])? == 1)
        })
        .await
    }

    async fn set_policy(&self, handle: &str, policy_json: &str) -> Result<bool, StoreError> {
        let (handle, policy) = (handle.to_owned(), policy_json.to_owned());
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE orgs SET policy = ?2 WHERE handle = ?1",
                params![handle, policy],
            )? == 1)
        })
        .await
    }

    async fn agents(&self) -> Result<Vec<AgentRow>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {AGENT_COLUMNS} FROM agents ORDER BY registered_at, id"
            ))?;
            let rows = stmt.query_map([], agent_of)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn set_agent_status(&self, id: &str, status: &str) -> Result<bool, StoreError> {
        let (id, status) = (id.to_owned(), status.to_owned());
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE agents SET status = ?2,
                     names_verified = CASE WHEN ?2 = 'verified' THEN 1 ELSE names_verified END
                 WHERE id = ?1",
                params![id, status],
            )? == 1)
        })
        .await
    }

    async fn insert_code(&self, code_hash: &str, code: &CodeRow) -> Result<(), StoreError> {
        let (hash, k) = (code_hash.to_owned(), code.clone());
        self.write(move |c| {
            c.execute(
                "INSERT INTO enrollment_codes (code_hash, org_handle, name, email, expires_at, used_at) VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
                params![hash, k.org_handle, k.name, k.email, k.expires_at],
            )?;
            Ok(())
        })
        .await
    }

    async fn approvers(&self) -> Result<Vec<ApproverRow>, StoreError> {
        self.approver_keys().await
    }

    async fn revoke_approver(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        let (id, at) = (id.to_owned(), at.to_owned());
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE approvers SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                params![id, at],
            )? == 1)
        })
        .await
    }

    async fn meta_init(&self, key: &str, value: &str) -> Result<String, StoreError> {
        let (key, value) = (key.to_owned(), value.to_owned());
        self.write(move |c| {
            c.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?1, ?2)",
                params![key, value],
            )?;
            Ok(
                c.query_row("SELECT value FROM meta WHERE key = ?1", [&key], |r| {
                    r.get(0)
                })?,
            )
        })
        .await
    }

    async fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.to_owned();
        self.read(move |c| {
            Ok(
                c.query_row("SELECT value FROM meta WHERE key = ?1", [&key], |r| {
                    r.get(0)
                })
                .optional()?,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PRAGMA synchronous` as each writer connection runs it (0 OFF,
    /// 1 NORMAL, 2 FULL): the setting is per connection, so it is read on
    /// the writer threads themselves.
    async fn synchronous_of(store: &SqliteStore) -> (i64, i64) {
        let read = |c: &mut Connection| -> Result<i64, StoreError> {
            Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?)
        };
        (
            store.writer.write(read).await.expect("writer"),
            store.nonces.write(read).await.expect("nonces"),
        )
    }

    #[tokio::test]
    async fn the_default_durability_fsyncs_every_commit_of_both_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store =
            SqliteStore::open(&dir.path().join("host.db"), Durability::default()).expect("open");
        assert_eq!(
            synchronous_of(&store).await,
            (2, 2),
            "FULL on the events and the nonces"
        );
        let store =
            SqliteStore::open(&dir.path().join("fast.db"), Durability::Normal).expect("open");
        assert_eq!(synchronous_of(&store).await, (1, 1), "NORMAL when asked");
    }
}
