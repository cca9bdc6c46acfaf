//! Sessions and everything negotiated in them (ANP), written once for both
//! stores: a session changes only by compare-and-swap on its version (on
//! PostgreSQL under the row's lock, so appends from every process serialize
//! per session; on SQLite the one writer serializes them), and events,
//! pending decisions, approvals and decisions are keyed, so a second writer
//! of the same key conflicts instead of forking the log.

use async_trait::async_trait;

use super::postgres::{pg_run, PgStore};
use super::sql::{i, i32_of, u, Conn, Dialect, Row};
use super::sqlite::{lite_run, SqliteStore};
use super::*;

/// A session's columns, each prefixed by `$p` (a table alias and a dot, or
/// nothing).
/// An org's columns under the alias `o`, with the version and text of its
/// policy of authority in force (NULL when it has none): read with the org,
/// in the same statement, so routing a request costs no round trip.
macro_rules! org_columns {
    () => {
        "o.handle, o.name, o.sandbox, o.disabled, o.policy,
         (SELECT ap.version FROM authority_policies ap WHERE ap.org_handle = o.handle ORDER BY ap.version DESC LIMIT 1),
         (SELECT ap.text FROM authority_policies ap WHERE ap.org_handle = o.handle ORDER BY ap.version DESC LIMIT 1)"
    };
}
pub(super) use org_columns;

macro_rules! session_columns {
    ($p:literal) => {
        concat!(
            $p,
            "id, ",
            $p,
            "agent_id, ",
            $p,
            "org_handle, ",
            $p,
            "sandbox, ",
            $p,
            "status, ",
            $p,
            "opened_at, ",
            $p,
            "closed_at, ",
            $p,
            "event_count, ",
            $p,
            "chain_head, ",
            $p,
            "standing_seq, ",
            $p,
            "buyer_rounds, ",
            $p,
            "version"
        )
    };
}
pub(super) use session_columns;

/// An agent's columns, each prefixed by `$p`.
macro_rules! agent_columns {
    ($p:literal) => {
        concat!(
            $p,
            "id, ",
            $p,
            "public_key, ",
            $p,
            "fingerprint, ",
            $p,
            "agent_name, ",
            $p,
            "vendor_name, ",
            $p,
            "contact_email, ",
            $p,
            "status, ",
            $p,
            "registered_at, ",
            $p,
            "names_verified"
        )
    };
}
pub(super) use agent_columns;

pub(super) fn session_of(r: &Row<'_, '_>) -> Result<Session, StoreError> {
    session_from(r, 0)
}

/// A session whose columns start at `at`.
pub(super) fn session_from(r: &Row<'_, '_>, at: usize) -> Result<Session, StoreError> {
    Ok(Session {
        id: r.get(at)?,
        agent_id: r.get(at + 1)?,
        org_handle: r.get(at + 2)?,
        sandbox: r.get(at + 3)?,
        status: r.get(at + 4)?,
        opened_at: r.get(at + 5)?,
        closed_at: r.get(at + 6)?,
        event_count: u(r.get(at + 7)?),
        chain_head: r.get(at + 8)?,
        standing_seq: r.get::<Option<i64>>(at + 9)?.map(u),
        buyer_rounds: r.get::<i32>(at + 10)?.max(0) as u32,
        version: u(r.get(at + 11)?),
    })
}

pub(super) fn agent_of(r: &Row<'_, '_>) -> Result<AgentRow, StoreError> {
    agent_from(r, 0)
}

/// An agent whose columns start at `at`.
pub(super) fn agent_from(r: &Row<'_, '_>, at: usize) -> Result<AgentRow, StoreError> {
    Ok(AgentRow {
        id: r.get(at)?,
        public_key: r.get(at + 1)?,
        fingerprint: r.get(at + 2)?,
        agent_name: r.get(at + 3)?,
        vendor_name: r.get(at + 4)?,
        contact_email: r.get(at + 5)?,
        status: parse_status(&r.get::<String>(at + 6)?),
        registered_at: r.get(at + 7)?,
        names_verified: r.get(at + 8)?,
    })
}

pub(super) fn org_of(r: &Row<'_, '_>) -> Result<Org, StoreError> {
    org_from(r, 0)
}

/// The number of columns [`org_columns!`] reads.
pub(super) const ORG_COLUMNS: usize = 7;

/// An org whose columns ([`org_columns!`]) start at `at`.
fn org_from(r: &Row<'_, '_>, at: usize) -> Result<Org, StoreError> {
    let version: Option<i64> = r.get(at + 5)?;
    let text: Option<String> = r.get(at + 6)?;
    Ok(Org {
        handle: r.get(at)?,
        name: r.get(at + 1)?,
        sandbox: r.get(at + 2)?,
        disabled: r.get(at + 3)?,
        policy: r.get(at + 4)?,
        authority: match (version, text) {
            (Some(v), Some(text)) => Some(OrgAuthority {
                version: u(v),
                text,
            }),
            _ => None,
        },
    })
}

fn session_row_of(r: &Row<'_, '_>) -> Result<SessionRow, StoreError> {
    session_row_from(r, 0)
}

/// A pending decision whose columns start at `at`.
fn pending_from(r: &Row<'_, '_>, at: usize) -> Result<PendingRow, StoreError> {
    Ok(PendingRow {
        reference: r.get(at)?,
        seq: u(r.get(at + 1)?),
        answers: r.get(at + 2)?,
        kind: r.get(at + 3)?,
        actor: r.get(at + 4)?,
        expires_at: r.get(at + 5)?,
        payload: r.get(at + 6)?,
        approvals_required: r.get::<i32>(at + 7)?.max(0) as u32,
        held_reason: r.get(at + 8)?,
        created_at: r.get(at + 9)?,
        route: r.get(at + 10)?,
    })
}

fn pending_of(r: &Row<'_, '_>) -> Result<PendingRow, StoreError> {
    pending_from(r, 0)
}

/// An approval whose columns start at `at`.
fn approval_from(r: &Row<'_, '_>, at: usize) -> Result<ApprovalRow, StoreError> {
    Ok(ApprovalRow {
        reference: r.get(at)?,
        approver_id: r.get(at + 1)?,
        approval: r.get(at + 2)?,
        step: r.get::<Option<i32>>(at + 3)?.map(|s| s.max(0) as u32),
        role: r.get(at + 4)?,
        for_email: r.get(at + 5)?,
    })
}

fn recorded_approval(r: &Row<'_, '_>) -> Result<RecordedApproval, StoreError> {
    Ok(RecordedApproval {
        row: approval_from(r, 0)?,
        recorded_at: r.get(6)?,
        route: r.get(7)?,
        approvals_required: r.get::<i32>(8)?.max(0) as u32,
    })
}

fn approval_of(r: &Row<'_, '_>) -> Result<ApprovalRow, StoreError> {
    approval_from(r, 0)
}

fn decision_of(r: &Row<'_, '_>) -> Result<DecisionRow, StoreError> {
    Ok(DecisionRow {
        approver_id: r.get(0)?,
        session_id: r.get(1)?,
        body_sha256: r.get(2)?,
        outcome: r.get(3)?,
        detail: r.get(4)?,
    })
}

fn text_of(r: &Row<'_, '_>) -> Result<String, StoreError> {
    r.get(0)
}

fn keyed_pending(r: &Row<'_, '_>) -> Result<(String, PendingRow), StoreError> {
    Ok((r.get(0)?, pending_from(r, 1)?))
}

fn keyed_approval(r: &Row<'_, '_>) -> Result<(String, ApprovalRow), StoreError> {
    Ok((r.get(0)?, approval_from(r, 1)?))
}

fn session_and_vendor(r: &Row<'_, '_>) -> Result<(Session, AgentRow), StoreError> {
    Ok((session_of(r)?, agent_from(r, 12)?))
}

/// A session with its org and the event at its standing seq (the id is
/// `$id`): one statement (one snapshot), read on every append.
macro_rules! session_state {
    ($id:literal) => {
        concat!(
            "SELECT ",
            session_columns!("s."),
            ", ",
            org_columns!(),
            ", e.body
     FROM sessions s JOIN orgs o ON o.handle = s.org_handle
     LEFT JOIN events e ON e.session_id = s.id AND e.seq = s.standing_seq
     WHERE s.id = ",
            $id
        )
    };
}
pub(super) use session_state;

const SESSION_STATE: &str = session_state!("?1");

/// A session's state whose columns start at `at` ([`session_state`]).
pub(super) fn session_row_from(r: &Row<'_, '_>, at: usize) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        session: session_from(r, at)?,
        org: org_from(r, at + 12)?,
        standing: r.get(at + 12 + ORG_COLUMNS)?,
    })
}

/// [`SESSION_STATE`] with one request counted in a shared rate-limit window
/// (PostgreSQL's `rate_windows`) when the session exists and `?2` owns it:
/// one statement. The count is the last column (NULL when not counted).
const SESSION_STATE_COUNTING: &str = concat!(
    "WITH counted AS (
         INSERT INTO rate_windows (scope, key, window_start, count)
         SELECT CAST(?3 AS TEXT), CAST(?4 AS TEXT), CAST(?5 AS BIGINT), 1
         WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1 AND agent_id = ?2)
         ON CONFLICT (scope, key, window_start) DO UPDATE SET count = rate_windows.count + 1
         RETURNING count)
     SELECT ",
    session_columns!("s."),
    ", ",
    org_columns!(),
    ", e.body, (SELECT count FROM counted)
     FROM sessions s JOIN orgs o ON o.handle = s.org_handle
     LEFT JOIN events e ON e.session_id = s.id AND e.seq = s.standing_seq
     WHERE s.id = ?1"
);

const PENDING: &str = "SELECT ref, seq, answers, kind, actor, expires_at, payload, approvals_required, held_reason, created_at, route
     FROM pending WHERE session_id = ?1 AND state = 'open' AND (CAST(?2 AS TEXT) IS NULL OR ref = ?2) ORDER BY seq DESC, created_at";

/// Approvals in the order they were given; the last tie-break is the order
/// they were stored in, which only SQLite keeps (its rowid).
fn approvals_sql(dialect: Dialect, org_wide: bool) -> String {
    let last = match dialect {
        Dialect::Sqlite => "p.rowid",
        Dialect::Postgres => "p.approver_id",
    };
    // A revoked approver's approval no longer counts towards the policy.
    if org_wide {
        format!(
            "SELECT p.session_id, p.ref, p.approver_id, p.approval, p.step, p.role, p.for_email FROM approvals p
             JOIN approvers a ON a.id = p.approver_id JOIN sessions s ON s.id = p.session_id
             WHERE s.org_handle = ?1 AND s.status = 'open' AND a.revoked_at IS NULL
             ORDER BY p.session_id, p.ordinal, p.recorded_at, {last}"
        )
    } else {
        format!(
            "SELECT p.ref, p.approver_id, p.approval, p.step, p.role, p.for_email FROM approvals p JOIN approvers a ON a.id = p.approver_id
             WHERE p.session_id = ?1 AND p.ref = ?2 AND a.revoked_at IS NULL
             ORDER BY p.ordinal, p.recorded_at, {last}"
        )
    }
}

/// Whether a pending decision is a draft (the buyer's own proposal, not
/// an event yet), by its reference.
pub(super) fn is_draft(reference: &str) -> bool {
    reference.starts_with("draft:")
}

/// The statements of one commit inside SQLite's writer (PostgreSQL makes
/// the same commit in one call: `postgres/commit.rs`).
async fn apply(db: &impl Conn, c: &Commit) -> Result<(), CommitError> {
    let s = &c.session;
    let event_count = i(s.event_count);
    let standing = s.standing_seq.map(i);
    let rounds = i32_of(s.buyer_rounds);
    if c.new_session {
        db.exec_in_commit(
            "INSERT INTO sessions (id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1)",
            &[&s.id, &s.agent_id, &s.org_handle, &s.sandbox, &s.status, &s.opened_at, &s.closed_at, &event_count, &s.chain_head, &standing, &rounds],
        )
        .await?;
    } else {
        // On PostgreSQL the row lock taken here serializes commits to this
        // session across every process; a commit that waited re-reads the
        // row and finds the version moved on.
        let changed = db
            .exec(
                "UPDATE sessions SET status = ?2, closed_at = ?3, event_count = ?4, chain_head = ?5, standing_seq = ?6, buyer_rounds = ?7, version = version + 1
                 WHERE id = ?1 AND version = ?8",
                &[&s.id, &s.status, &s.closed_at, &event_count, &s.chain_head, &standing, &rounds, &i(s.version)],
            )
            .await?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    for e in &c.events {
        db.exec_in_commit(
            "INSERT INTO events (session_id, seq, event_hash, body) VALUES (?1, ?2, ?3, ?4)",
            &[&s.id, &i(e.seq), &e.event_hash, &e.body],
        )
        .await?;
    }
    if c.supersede_pending {
        db.exec(
            "UPDATE pending SET state = 'superseded' WHERE session_id = ?1 AND state = 'open'",
            &[&s.id],
        )
        .await?;
    }
    for change in &c.pending_changes {
        match change {
            PendingChange::Held { reference, reason } => {
                db.exec(
                    "UPDATE pending SET held_reason = ?3 WHERE session_id = ?1 AND ref = ?2",
                    &[&s.id, reference, reason],
                )
                .await?
            }
            PendingChange::Resolved { reference, state } => {
                db.exec(
                    "UPDATE pending SET state = ?3 WHERE session_id = ?1 AND ref = ?2",
                    &[&s.id, reference, state],
                )
                .await?
            }
        };
    }
    for p in &c.new_pending {
        let p = &p.row;
        db.exec_in_commit(
            "INSERT INTO pending (session_id, ref, seq, answers, kind, actor, expires_at, payload, approvals_required, draft, held_reason, state, created_at, route)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'open', ?12, ?13)",
            &[&s.id, &p.reference, &i(p.seq), &p.answers, &p.kind, &p.actor, &p.expires_at, &p.payload, &i32_of(p.approvals_required), &is_draft(&p.reference), &p.held_reason, &p.created_at, &p.route],
        )
        .await?;
    }
    for a in &c.approvals {
        db.exec_in_commit(
            "INSERT INTO approvals (session_id, ref, approver_id, approval, recorded_at, ordinal, step, role, for_email) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &[&s.id, &a.reference, &a.approver_id, &a.approval, &a.recorded_at, &i32_of(a.ordinal), &i32_of(a.step), &a.role, &a.for_email],
        )
        .await?;
    }
    if let Some(d) = &c.decision {
        db.exec_in_commit(
            "INSERT INTO decisions (decision_id, approver_id, session_id, body, body_sha256, signed_headers, outcome, detail, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &[&d.decision_id, &d.approver_id, &s.id, &d.body, &d.body_sha256, &d.signed_headers, &d.outcome, &d.detail, &d.received_at],
        )
        .await?;
    }
    Ok(())
}

/// A session's log in one snapshot: the session row, its vendor's key, and
/// its events after `after` up to the row's own count. PostgreSQL reads it
/// in one statement (the events as an array, which SQLite has not);
/// SQLite in three inside its read transaction.
async fn log(db: &impl Conn, id: &str, after: u64) -> Result<Option<LogSnapshot>, StoreError> {
    match db.dialect() {
        Dialect::Postgres => {
            db.row(
                concat!(
                    "SELECT ",
                    session_columns!("s."),
                    ", a.public_key, a.fingerprint,
                        ARRAY(SELECT e.body FROM events e WHERE e.session_id = s.id AND e.seq > ?2 AND e.seq <= s.event_count ORDER BY e.seq)
                     FROM sessions s JOIN agents a ON a.id = s.agent_id WHERE s.id = ?1"
                ),
                &[&id, &i(after)],
                |r| {
                    Ok(LogSnapshot {
                        session: session_of(r)?,
                        vendor_key: r.get(12)?,
                        vendor_fingerprint: r.get(13)?,
                        events: match r {
                            Row::Pg(r) => r.try_get(14)?,
                            Row::Lite(_) => Vec::new(),
                        },
                    })
                },
            )
            .await
        }
        Dialect::Sqlite => {
            let Some(session) = db
                .row(
                    concat!("SELECT ", session_columns!(""), " FROM sessions WHERE id = ?1"),
                    &[&id],
                    session_of,
                )
                .await?
            else {
                return Ok(None);
            };
            let key = db
                .row(
                    "SELECT public_key, fingerprint FROM agents WHERE id = ?1",
                    &[&session.agent_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .await?
                .ok_or_else(|| StoreError::Corrupt(format!("session {id} has no vendor")))?;
            let events = db
                .rows(
                    "SELECT body FROM events WHERE session_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
                    &[&id, &i(after), &i(session.event_count)],
                    text_of,
                )
                .await?;
            Ok(Some(LogSnapshot {
                session,
                vendor_key: key.0,
                vendor_fingerprint: key.1,
                events,
            }))
        }
    }
}

/// Every session of an org with its vendor, open pending decisions and
/// their approvals: three statements (inside the dialect's snapshot),
/// whatever the number of sessions (a console polls this).
async fn summary(db: &impl Conn, org: &str) -> Result<Vec<SummaryRow>, StoreError> {
    let sessions = db
        .rows(
            concat!(
                "SELECT ",
                session_columns!("s."),
                ", ",
                agent_columns!("a."),
                " FROM sessions s JOIN agents a ON a.id = s.agent_id
                 WHERE s.org_handle = ?1 ORDER BY s.opened_at, s.id"
            ),
            &[&org],
            session_and_vendor,
        )
        .await?;
    let pending = db
        .rows(
            "SELECT p.session_id, p.ref, p.seq, p.answers, p.kind, p.actor, p.expires_at, p.payload, p.approvals_required, p.held_reason, p.created_at, p.route
             FROM pending p JOIN sessions s ON s.id = p.session_id
             WHERE s.org_handle = ?1 AND s.status = 'open' AND p.state = 'open'
             ORDER BY p.session_id, p.seq DESC, p.created_at",
            &[&org],
            keyed_pending,
        )
        .await?;
    let approvals = db
        .rows(&approvals_sql(db.dialect(), true), &[&org], keyed_approval)
        .await?;
    let mut pending_of = group(pending);
    let mut approvals_of = group(approvals);
    Ok(sessions
        .into_iter()
        .map(|(session, vendor)| SummaryRow {
            pending: pending_of.remove(&session.id).unwrap_or_default(),
            approvals: approvals_of.remove(&session.id).unwrap_or_default(),
            session,
            vendor,
        })
        .collect())
}

/// Records by the session they belong to, each session's in their order.
fn group<T>(rows: Vec<(String, T)>) -> std::collections::HashMap<String, Vec<T>> {
    let mut out: std::collections::HashMap<String, Vec<T>> = std::collections::HashMap::new();
    for (session, row) in rows {
        out.entry(session).or_default().push(row);
    }
    out
}

impl SqliteStore {
    /// Applies `c` in the writer's next group commit; with `log_after`,
    /// then reads the session's log after that seq on a read connection.
    async fn commit_session(
        &self,
        c: &Commit,
        log_after: Option<u64>,
    ) -> Result<Option<LogSnapshot>, CommitError> {
        let commit = c.clone();
        lite_run!(self, commit, |db| apply(db, &commit).await)?;
        let Some(after) = log_after else {
            return Ok(None);
        };
        let id = c.session.id.clone();
        let snapshot: Result<_, StoreError> =
            lite_run!(self, consistent, |db| log(db, &id, after).await);
        Ok(snapshot?)
    }
}

/// The repository, once; instantiated below for each store with its `run!`.
macro_rules! negotiation_repo {
    ($store:ty, $run:ident) => {
        #[async_trait]
        impl NegotiationRepo for $store {
            async fn org(&self, handle: &str) -> Result<Option<Org>, StoreError> {
                let handle = handle.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!("SELECT ", org_columns!(), " FROM orgs o WHERE o.handle = ?1"),
                        &[&handle],
                        org_of,
                    )
                    .await
                })
            }

            async fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!("SELECT ", session_columns!(""), " FROM sessions WHERE id = ?1"),
                        &[&id],
                        session_of,
                    )
                    .await
                })
            }

            async fn session_state(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| db.row(SESSION_STATE, &[&id], session_row_of).await)
            }

            async fn session_state_counting(
                &self,
                id: &str,
                owner: &str,
                counting: &SharedWindow,
            ) -> Result<Option<(SessionRow, Option<u64>)>, StoreError> {
                let (id, owner, w) = (id.to_owned(), owner.to_owned(), counting.clone());
                $run!(self, read, |db| {
                    db.row(
                        SESSION_STATE_COUNTING,
                        &[&id, &owner, &w.scope, &w.key, &w.start],
                        |r| Ok((session_row_of(r)?, r.get::<Option<i64>>(13 + ORG_COLUMNS)?.map(u))),
                    )
                    .await
                })
            }

            async fn event_by_hash(
                &self,
                session_id: &str,
                event_hash: &str,
            ) -> Result<Option<String>, StoreError> {
                let (id, hash) = (session_id.to_owned(), event_hash.to_owned());
                $run!(self, read, |db| {
                    db.row(
                        "SELECT body FROM events WHERE session_id = ?1 AND event_hash = ?2",
                        &[&id, &hash],
                        text_of,
                    )
                    .await
                })
            }

            async fn pending(
                &self,
                session_id: &str,
                only: Option<&str>,
            ) -> Result<Vec<PendingRow>, StoreError> {
                let (id, only) = (session_id.to_owned(), only.map(str::to_owned));
                $run!(self, read, |db| db.rows(PENDING, &[&id, &only], pending_of).await)
            }

            async fn approvals(
                &self,
                session_id: &str,
                reference: &str,
            ) -> Result<Vec<ApprovalRow>, StoreError> {
                let (id, reference) = (session_id.to_owned(), reference.to_owned());
                $run!(self, read, |db| {
                    db.rows(&approvals_sql(db.dialect(), false), &[&id, &reference], approval_of)
                        .await
                })
            }

            async fn session_approvals(
                &self,
                session_id: &str,
            ) -> Result<Vec<RecordedApproval>, StoreError> {
                let id = session_id.to_owned();
                $run!(self, read, |db| {
                    db.rows(
                        "SELECT p.ref, p.approver_id, p.approval, p.step, p.role, p.for_email, p.recorded_at, q.route, q.approvals_required
                         FROM approvals p JOIN pending q ON q.session_id = p.session_id AND q.ref = p.ref
                         WHERE p.session_id = ?1 ORDER BY p.recorded_at, p.ref, p.ordinal",
                        &[&id],
                        recorded_approval,
                    )
                    .await
                })
            }

            async fn decision(&self, decision_id: &str) -> Result<Option<DecisionRow>, StoreError> {
                let id = decision_id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        "SELECT approver_id, session_id, body_sha256, outcome, detail FROM decisions WHERE decision_id = ?1",
                        &[&id],
                        decision_of,
                    )
                    .await
                })
            }

            async fn commit(&self, commit: &Commit) -> Result<(), CommitError> {
                self.commit_session(commit, None).await.map(|_| ())
            }

            async fn commit_and_log(
                &self,
                commit: &Commit,
                after: u64,
            ) -> Result<LogSnapshot, CommitError> {
                self.commit_session(commit, Some(after))
                    .await?
                    .ok_or_else(|| StoreError::Corrupt(format!("session {} has no log after its commit", commit.session.id)).into())
            }

            async fn log(
                &self,
                session_id: &str,
                after: u64,
            ) -> Result<Option<LogSnapshot>, StoreError> {
                let id = session_id.to_owned();
                $run!(self, consistent, |db| log(db, &id, after).await)
            }

            async fn summary(&self, org_handle: &str) -> Result<Vec<SummaryRow>, StoreError> {
                let org = org_handle.to_owned();
                $run!(self, snapshot, |db| summary(db, &org).await)
            }
        }
    };
}

negotiation_repo!(SqliteStore, lite_run);
negotiation_repo!(PgStore, pg_run);
