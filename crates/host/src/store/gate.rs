//! The gate's repository, written once for both stores: a session's commits
//! compare-and-swap its version (on PostgreSQL under the row's lock, so
//! they serialize per session across processes; on SQLite the one writer
//! serializes them), request changes apply only while the request is
//! pending, ids are primary keys, and each due request is expired by one
//! conditional update, so no request is decided or expired twice.

use async_trait::async_trait;

use super::postgres::{pg_run, PgStore};
use super::sql::{i, i32_of, u, Conn, Dialect, Param, Row};
use super::sqlite::{lite_run, SqliteStore};
use super::*;

macro_rules! gate_agent_columns {
    ($p:literal) => {
        concat!(
            $p,
            "id, ",
            $p,
            "org_handle, ",
            $p,
            "protocol, ",
            $p,
            "name, ",
            $p,
            "public_key, ",
            $p,
            "fingerprint, ",
            $p,
            "callback_url, ",
            $p,
            "enrolled_at, ",
            $p,
            "revoked_at, ",
            $p,
            "owner_email"
        )
    };
}

fn gate_agent_of(r: &Row<'_, '_>) -> Result<GateAgentRow, StoreError> {
    Ok(GateAgentRow {
        id: r.get(0)?,
        org_handle: r.get(1)?,
        protocol: r.get(2)?,
        name: r.get(3)?,
        public_key: r.get(4)?,
        fingerprint: r.get(5)?,
        callback_url: r.get(6)?,
        enrolled_at: r.get(7)?,
        revoked_at: r.get(8)?,
        owner_email: r.get(9)?,
    })
}

macro_rules! session_columns {
    ($p:literal) => {
        concat!(
            $p,
            "org_handle, ",
            $p,
            "protocol, ",
            $p,
            "session_id, ",
            $p,
            "agent_id, ",
            $p,
            "self_party, ",
            $p,
            "counterparty_id, ",
            $p,
            "counterparty_name, ",
            $p,
            "counterparty_org, ",
            $p,
            "keys, ",
            $p,
            "head_count, ",
            $p,
            "head_hash, ",
            $p,
            "state, ",
            $p,
            "created_sha256, ",
            $p,
            "created_at, ",
            $p,
            "updated_at, ",
            $p,
            "version"
        )
    };
}

fn session_of(r: &Row<'_, '_>) -> Result<GateSession, StoreError> {
    Ok(GateSession {
        key: GateKey {
            org_handle: r.get(0)?,
            protocol: r.get(1)?,
            session_id: r.get(2)?,
        },
        agent_id: r.get(3)?,
        self_party: r.get(4)?,
        counterparty_id: r.get(5)?,
        counterparty_name: r.get(6)?,
        counterparty_org: r.get(7)?,
        keys: r.get(8)?,
        head_count: u(r.get(9)?),
        head_hash: r.get(10)?,
        state: r.get(11)?,
        created_sha256: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
        version: u(r.get(15)?),
    })
}

macro_rules! request_columns {
    () => {
        "request_id, message_hash, seq, kind, action, amount, threshold, expires_at, expires_unix, status, approvals_required, body_sha256, created_at, decided_at, reason, counter_terms, held_reason, route, extensions"
    };
}

/// A request whose columns start at `at`.
fn request_from(r: &Row<'_, '_>, at: usize) -> Result<GateRequestRow, StoreError> {
    Ok(GateRequestRow {
        request_id: r.get(at)?,
        message_hash: r.get(at + 1)?,
        seq: u(r.get(at + 2)?),
        kind: r.get(at + 3)?,
        action: r.get(at + 4)?,
        amount: r.get(at + 5)?,
        threshold: r.get(at + 6)?,
        expires_at: r.get(at + 7)?,
        expires_unix: r.get(at + 8)?,
        status: r.get(at + 9)?,
        approvals_required: r.get::<i32>(at + 10)?.max(0) as u32,
        body_sha256: r.get(at + 11)?,
        created_at: r.get(at + 12)?,
        decided_at: r.get(at + 13)?,
        reason: r.get(at + 14)?,
        counter_terms: r.get(at + 15)?,
        held_reason: r.get(at + 16)?,
        route: r.get(at + 17)?,
        extensions: r.get(at + 18)?,
    })
}

fn request_of(r: &Row<'_, '_>) -> Result<GateRequestRow, StoreError> {
    request_from(r, 0)
}

macro_rules! receipt_columns {
    () => {
        "g.request_id, g.approver_id, a.name, a.email, a.revoked_at IS NOT NULL, g.decision, g.receipt, g.recorded_at, g.step, g.role"
    };
}

/// A receipt whose columns start at `at`.
fn receipt_from(r: &Row<'_, '_>, at: usize) -> Result<GateReceiptRow, StoreError> {
    Ok(GateReceiptRow {
        request_id: r.get(at)?,
        approver_id: r.get(at + 1)?,
        approver_name: r.get(at + 2)?,
        approver_email: r.get(at + 3)?,
        approver_revoked: r.get(at + 4)?,
        decision: r.get(at + 5)?,
        receipt: r.get(at + 6)?,
        recorded_at: r.get(at + 7)?,
        step: r.get::<Option<i32>>(at + 8)?.map(|s| s.max(0) as u32),
        role: r.get(at + 9)?,
    })
}

fn receipt_of(r: &Row<'_, '_>) -> Result<GateReceiptRow, StoreError> {
    receipt_from(r, 0)
}

/// A row of an org-wide read: the session it belongs to, then the record.
type Placed<T> = (String, String, T);

fn placed_request(r: &Row<'_, '_>) -> Result<Placed<GateRequestRow>, StoreError> {
    Ok((r.get(0)?, r.get(1)?, request_from(r, 2)?))
}

fn placed_receipt(r: &Row<'_, '_>) -> Result<Placed<GateReceiptRow>, StoreError> {
    Ok((r.get(0)?, r.get(1)?, receipt_from(r, 2)?))
}

fn message_of(r: &Row<'_, '_>) -> Result<GateMessage, StoreError> {
    Ok(GateMessage {
        seq: u(r.get(0)?),
        hash: r.get(1)?,
        body: r.get(2)?,
    })
}

fn code_of(r: &Row<'_, '_>) -> Result<GateCodeRow, StoreError> {
    Ok(GateCodeRow {
        org_handle: r.get(0)?,
        name: r.get(1)?,
        protocol: r.get(2)?,
        expires_at: r.get(3)?,
        used: r.get(4)?,
        owner_email: r.get(5)?,
    })
}

fn decision_of(r: &Row<'_, '_>) -> Result<GateDecisionRow, StoreError> {
    Ok(GateDecisionRow {
        approver_id: r.get(0)?,
        key: GateKey {
            org_handle: r.get(1)?,
            protocol: r.get(2)?,
            session_id: r.get(3)?,
        },
        request_id: r.get(4)?,
        body_sha256: r.get(5)?,
        outcome: r.get(6)?,
        detail: r.get(7)?,
    })
}

fn session_and_agent(r: &Row<'_, '_>) -> Result<(GateSession, String, Option<String>), StoreError> {
    Ok((session_of(r)?, r.get(16)?, r.get(17)?))
}

fn expired_of(r: &Row<'_, '_>) -> Result<ExpiredRequest, StoreError> {
    Ok(ExpiredRequest {
        key: GateKey {
            org_handle: r.get(0)?,
            protocol: r.get(1)?,
            session_id: r.get(2)?,
        },
        request_id: r.get(3)?,
        agent_id: r.get(4)?,
    })
}

fn present(_: &Row<'_, '_>) -> Result<(), StoreError> {
    Ok(())
}

/// The statements of one commit, inside the dialect's transaction.
async fn apply(db: &impl Conn, c: &GateCommit) -> Result<(), CommitError> {
    let s = &c.session;
    let k = &s.key;
    let head_count = i(s.head_count);
    if c.new_session {
        db.exec_in_commit(
            concat!(
                "INSERT INTO gate_sessions (",
                session_columns!(""),
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 1)"
            ),
            &[
                &k.org_handle,
                &k.protocol,
                &k.session_id,
                &s.agent_id,
                &s.self_party,
                &s.counterparty_id,
                &s.counterparty_name,
                &s.counterparty_org,
                &s.keys,
                &head_count,
                &s.head_hash,
                &s.state,
                &s.created_sha256,
                &s.created_at,
                &s.updated_at,
            ],
        )
        .await?;
    } else {
        // On PostgreSQL the row lock taken here serializes commits to this
        // session across every process.
        let changed = db
            .exec(
                "UPDATE gate_sessions SET head_count = ?4, head_hash = ?5, state = ?6, updated_at = ?7, version = version + 1
                 WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND version = ?8",
                &[
                    &k.org_handle, &k.protocol, &k.session_id, &head_count, &s.head_hash,
                    &s.state, &s.updated_at, &i(s.version),
                ],
            )
            .await?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    for m in &c.messages {
        db.exec_in_commit(
            "INSERT INTO gate_messages (org_handle, protocol, session_id, seq, hash, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &[&k.org_handle, &k.protocol, &k.session_id, &i(m.seq), &m.hash, &m.body],
        )
        .await?;
    }
    for change in &c.request_changes {
        let changed = match change {
            RequestChange::Settle {
                request_id,
                status,
                at,
                reason,
                counter_terms,
            } => {
                db.exec(
                    "UPDATE gate_requests SET status = ?5, decided_at = ?6, reason = ?7, counter_terms = ?8, held_reason = NULL
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                    &[&k.org_handle, &k.protocol, &k.session_id, request_id, status, at, reason, counter_terms],
                )
                .await?
            }
            RequestChange::Held { request_id, reason } => {
                db.exec(
                    "UPDATE gate_requests SET held_reason = ?5
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                    &[&k.org_handle, &k.protocol, &k.session_id, request_id, reason],
                )
                .await?
            }
            RequestChange::Extend {
                request_id,
                from_unix,
                expires_at,
                expires_unix,
                extensions,
            } => {
                db.exec(
                    "UPDATE gate_requests SET expires_at = ?5, expires_unix = ?6, extensions = ?7
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4
                       AND status = 'pending' AND expires_unix = ?8",
                    &[&k.org_handle, &k.protocol, &k.session_id, request_id, expires_at, expires_unix, extensions, from_unix],
                )
                .await?
            }
            RequestChange::StillPending { request_id } => {
                // Locked on PostgreSQL: the sweeper's update of this row
                // waits for this commit, or this commit finds it expired.
                let sql = match db.dialect() {
                    Dialect::Sqlite => "SELECT 1 FROM gate_requests
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                    Dialect::Postgres => "SELECT 1 FROM gate_requests
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending' FOR UPDATE",
                };
                db.rows(sql, &[&k.org_handle, &k.protocol, &k.session_id, request_id], present)
                    .await?
                    .len() as u64
            }
        };
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    if let Some(r) = &c.new_request {
        db.exec_in_commit(
            concat!(
                "INSERT INTO gate_requests (org_handle, protocol, session_id, ",
                request_columns!(),
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"
            ),
            &[
                &k.org_handle, &k.protocol, &k.session_id, &r.request_id, &r.message_hash,
                &i(r.seq), &r.kind, &r.action, &r.amount, &r.threshold, &r.expires_at,
                &r.expires_unix, &r.status, &i32_of(r.approvals_required), &r.body_sha256,
                &r.created_at, &r.decided_at, &r.reason, &r.counter_terms, &r.held_reason,
                &r.route, &r.extensions,
            ],
        )
        .await?;
    }
    for r in &c.receipts {
        db.exec_in_commit(
            "INSERT INTO gate_receipts (org_handle, protocol, session_id, request_id, approver_id, decision, receipt, recorded_at, ordinal, step, role)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            &[
                &k.org_handle, &k.protocol, &k.session_id, &r.request_id, &r.approver_id,
                &r.decision, &r.receipt, &r.recorded_at, &i32_of(r.ordinal),
                &r.step.map(i32_of), &r.role,
            ],
        )
        .await?;
    }
    if let Some(d) = &c.decision {
        db.exec_in_commit(
            "INSERT INTO gate_decisions (decision_id, approver_id, org_handle, protocol, session_id, request_id, body, body_sha256, signed_headers, outcome, detail, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            &[
                &d.decision_id, &d.approver_id, &k.org_handle, &k.protocol, &k.session_id,
                &d.request_id, &d.body, &d.body_sha256, &d.signed_headers, &d.outcome,
                &d.detail, &d.received_at,
            ],
        )
        .await?;
    }
    Ok(())
}

/// A session with its messages, requests and receipts (inside the
/// dialect's snapshot).
async fn state(db: &impl Conn, key: &GateKey) -> Result<Option<GateState>, StoreError> {
    let params: [&dyn Param; 3] = [&key.org_handle, &key.protocol, &key.session_id];
    let Some(session) = db
        .row(
            concat!(
                "SELECT ",
                session_columns!(""),
                " FROM gate_sessions WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3"
            ),
            &params,
            session_of,
        )
        .await?
    else {
        return Ok(None);
    };
    let messages = db
        .rows(
            "SELECT seq, hash, body FROM gate_messages
             WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND seq <= ?4 ORDER BY seq",
            &[&key.org_handle, &key.protocol, &key.session_id, &i(session.head_count)],
            message_of,
        )
        .await?;
    let requests = db
        .rows(
            concat!(
                "SELECT ",
                request_columns!(),
                " FROM gate_requests WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 ORDER BY created_at, request_id"
            ),
            &params,
            request_of,
        )
        .await?;
    let receipts = db
        .rows(
            concat!(
                "SELECT ",
                receipt_columns!(),
                " FROM gate_receipts g JOIN approvers a ON a.id = g.approver_id
                 WHERE g.org_handle = ?1 AND g.protocol = ?2 AND g.session_id = ?3
                 ORDER BY g.request_id, g.ordinal, g.recorded_at"
            ),
            &params,
            receipt_of,
        )
        .await?;
    Ok(Some(GateState {
        session,
        messages,
        requests,
        receipts,
    }))
}

/// Every gate session of an org with its pending requests and their
/// receipts: three statements (inside the dialect's snapshot), whatever the
/// number of sessions.
async fn summary(db: &impl Conn, org: &str) -> Result<Vec<GateSummaryRow>, StoreError> {
    let sessions = db
        .rows(
            concat!(
                "SELECT ",
                session_columns!("s."),
                ", a.name, a.owner_email FROM gate_sessions s JOIN gate_agents a ON a.id = s.agent_id
                 WHERE s.org_handle = ?1 ORDER BY s.created_at, s.protocol, s.session_id"
            ),
            &[&org],
            session_and_agent,
        )
        .await?;
    let mut pending = db
        .rows(
            concat!(
                "SELECT protocol, session_id, ",
                request_columns!(),
                " FROM gate_requests WHERE org_handle = ?1 AND status = 'pending' ORDER BY created_at, request_id"
            ),
            &[&org],
            placed_request,
        )
        .await?;
    let mut receipts = db
        .rows(
            concat!(
                "SELECT g.protocol, g.session_id, ",
                receipt_columns!(),
                " FROM gate_receipts g JOIN approvers a ON a.id = g.approver_id
                 JOIN gate_requests r ON r.org_handle = g.org_handle AND r.protocol = g.protocol
                   AND r.session_id = g.session_id AND r.request_id = g.request_id
                 WHERE g.org_handle = ?1 AND r.status = 'pending'
                 ORDER BY g.request_id, g.ordinal, g.recorded_at"
            ),
            &[&org],
            placed_receipt,
        )
        .await?;
    let mut out = Vec::with_capacity(sessions.len());
    for (session, agent_name, owner_email) in sessions {
        let requests = take(&mut pending, &session.key);
        let given = take(&mut receipts, &session.key);
        out.push(GateSummaryRow {
            session,
            agent_name,
            owner_email,
            pending: requests,
            receipts: given,
        });
    }
    Ok(out)
}

/// Moves the records of session `key` out of `rows`, in their order.
fn take<T>(rows: &mut Vec<Placed<T>>, key: &GateKey) -> Vec<T> {
    let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(rows)
        .into_iter()
        .partition(|(protocol, id, _)| *protocol == key.protocol && *id == key.session_id);
    *rows = kept;
    taken.into_iter().map(|(_, _, record)| record).collect()
}

/// Marks every pending request due at `now_unix` expired, each by one
/// conditional update, and answers those marked. PostgreSQL does it in one
/// statement (`UPDATE … FROM … RETURNING`, the joined session included);
/// SQLite's RETURNING cannot name the joined table, and its one writer
/// makes the select-then-update atomic.
async fn expire(
    db: &impl Conn,
    now_unix: i64,
    at: &str,
) -> Result<Vec<ExpiredRequest>, StoreError> {
    match db.dialect() {
        Dialect::Postgres => {
            db.rows(
                "UPDATE gate_requests r SET status = 'expired', decided_at = ?2, held_reason = NULL
                 FROM gate_sessions s
                 WHERE s.org_handle = r.org_handle AND s.protocol = r.protocol AND s.session_id = r.session_id
                   AND r.status = 'pending' AND r.expires_unix <= ?1
                 RETURNING r.org_handle, r.protocol, r.session_id, r.request_id, s.agent_id",
                &[&now_unix, &at],
                expired_of,
            )
            .await
        }
        Dialect::Sqlite => {
            let due = db
                .rows(
                    "SELECT r.org_handle, r.protocol, r.session_id, r.request_id, s.agent_id
                     FROM gate_requests r JOIN gate_sessions s
                       ON s.org_handle = r.org_handle AND s.protocol = r.protocol AND s.session_id = r.session_id
                     WHERE r.status = 'pending' AND r.expires_unix <= ?1",
                    &[&now_unix],
                    expired_of,
                )
                .await?;
            for e in &due {
                db.exec(
                    "UPDATE gate_requests SET status = 'expired', decided_at = ?5, held_reason = NULL
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                    &[&e.key.org_handle, &e.key.protocol, &e.key.session_id, &e.request_id, &at],
                )
                .await?;
            }
            Ok(due)
        }
    }
}

/// The repository, once; instantiated below for each store with its `run!`.
macro_rules! gate_repo {
    ($store:ty, $run:ident) => {
        #[async_trait]
        impl GateRepo for $store {
            async fn insert_gate_code(
                &self,
                code_hash: &str,
                code: &GateCodeRow,
            ) -> Result<(), StoreError> {
                let (hash, k) = (code_hash.to_owned(), code.clone());
                $run!(self, write, |db| {
                    db.exec(
                        "INSERT INTO gate_codes (code_hash, org_handle, name, protocol, expires_at, used_at, owner_email) VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6)",
                        &[&hash, &k.org_handle, &k.name, &k.protocol, &k.expires_at, &k.owner_email],
                    )
                    .await?;
                    Ok(())
                })
            }

            async fn gate_code(&self, code_hash: &str) -> Result<Option<GateCodeRow>, StoreError> {
                let hash = code_hash.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        "SELECT org_handle, name, protocol, expires_at, used_at IS NOT NULL, owner_email FROM gate_codes WHERE code_hash = ?1",
                        &[&hash],
                        code_of,
                    )
                    .await
                })
            }

            async fn enroll_gate_agent(
                &self,
                code_hash: &str,
                a: &GateAgentRow,
                now_unix: i64,
            ) -> Result<bool, StoreError> {
                let (hash, a) = (code_hash.to_owned(), a.clone());
                $run!(self, tx, |db| {
                    let spent = db
                        .exec(
                            "UPDATE gate_codes SET used_at = ?2 WHERE code_hash = ?1 AND used_at IS NULL AND expires_at > ?3",
                            &[&hash, &a.enrolled_at, &now_unix],
                        )
                        .await?;
                    if spent == 0 {
                        return Ok(false);
                    }
                    db.exec(
                        concat!("INSERT INTO gate_agents (", gate_agent_columns!(""), ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, ?9)"),
                        &[&a.id, &a.org_handle, &a.protocol, &a.name, &a.public_key, &a.fingerprint, &a.callback_url, &a.enrolled_at, &a.owner_email],
                    )
                    .await?;
                    Ok(true)
                })
            }

            async fn active_gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!(
                            "SELECT ",
                            gate_agent_columns!("g."),
                            " FROM gate_agents g JOIN orgs o ON o.handle = g.org_handle
                             WHERE g.id = ?1 AND g.revoked_at IS NULL AND NOT o.disabled"
                        ),
                        &[&id],
                        gate_agent_of,
                    )
                    .await
                })
            }

            async fn gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!("SELECT ", gate_agent_columns!(""), " FROM gate_agents WHERE id = ?1"),
                        &[&id],
                        gate_agent_of,
                    )
                    .await
                })
            }

            async fn gate_agents(&self) -> Result<Vec<GateAgentRow>, StoreError> {
                $run!(self, read, |db| {
                    db.rows(
                        concat!("SELECT ", gate_agent_columns!(""), " FROM gate_agents ORDER BY enrolled_at, id"),
                        &[],
                        gate_agent_of,
                    )
                    .await
                })
            }

            async fn revoke_gate_agent(&self, id: &str, at: &str) -> Result<bool, StoreError> {
                let (id, at) = (id.to_owned(), at.to_owned());
                $run!(self, write, |db| {
                    Ok(db
                        .exec(
                            "UPDATE gate_agents SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                            &[&id, &at],
                        )
                        .await?
                        == 1)
                })
            }

            async fn gate_request_session(
                &self,
                agent_id: &str,
                protocol: &str,
                request_id: &str,
            ) -> Result<Option<String>, StoreError> {
                let (agent, protocol, id) = (agent_id.to_owned(), protocol.to_owned(), request_id.to_owned());
                $run!(self, read, |db| {
                    db.row(
                        "SELECT r.session_id FROM gate_requests r JOIN gate_sessions s
                           ON s.org_handle = r.org_handle AND s.protocol = r.protocol AND s.session_id = r.session_id
                         WHERE s.agent_id = ?1 AND r.protocol = ?2 AND r.request_id = ?3
                         ORDER BY r.created_at LIMIT 1",
                        &[&agent, &protocol, &id],
                        |r| r.get(0),
                    )
                    .await
                })
            }

            async fn insert_mcp_token(&self, row: &McpTokenRow) -> Result<(), StoreError> {
                let row = row.clone();
                $run!(self, write, |db| {
                    db.exec(
                        "INSERT INTO mcp_tokens (id, agent_id, token_hash, created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                        &[&row.id, &row.agent_id, &row.token_hash, &row.created_at, &row.revoked_at],
                    )
                    .await?;
                    Ok(())
                })
            }

            async fn mcp_agent(&self, token_hash: &str) -> Result<Option<GateAgentRow>, StoreError> {
                let hash = token_hash.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!(
                            "SELECT ",
                            gate_agent_columns!("g."),
                            " FROM mcp_tokens t JOIN gate_agents g ON g.id = t.agent_id
                             JOIN orgs o ON o.handle = g.org_handle
                             WHERE t.token_hash = ?1 AND t.revoked_at IS NULL
                               AND g.revoked_at IS NULL AND NOT o.disabled"
                        ),
                        &[&hash],
                        gate_agent_of,
                    )
                    .await
                })
            }

            async fn mcp_tokens(&self) -> Result<Vec<McpTokenRow>, StoreError> {
                $run!(self, read, |db| {
                    db.rows(
                        "SELECT id, agent_id, token_hash, created_at, revoked_at FROM mcp_tokens ORDER BY created_at, id",
                        &[],
                        |r| {
                            Ok(McpTokenRow {
                                id: r.get(0)?,
                                agent_id: r.get(1)?,
                                token_hash: r.get(2)?,
                                created_at: r.get(3)?,
                                revoked_at: r.get(4)?,
                            })
                        },
                    )
                    .await
                })
            }

            async fn revoke_mcp_token(&self, id: &str, at: &str) -> Result<bool, StoreError> {
                let (id, at) = (id.to_owned(), at.to_owned());
                $run!(self, write, |db| {
                    Ok(db
                        .exec(
                            "UPDATE mcp_tokens SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                            &[&id, &at],
                        )
                        .await?
                        == 1)
                })
            }

            async fn gate_state(&self, key: &GateKey) -> Result<Option<GateState>, StoreError> {
                let key = key.clone();
                $run!(self, snapshot, |db| state(db, &key).await)
            }

            async fn gate_decision(
                &self,
                decision_id: &str,
            ) -> Result<Option<GateDecisionRow>, StoreError> {
                let id = decision_id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        "SELECT approver_id, org_handle, protocol, session_id, request_id, body_sha256, outcome, detail FROM gate_decisions WHERE decision_id = ?1",
                        &[&id],
                        decision_of,
                    )
                    .await
                })
            }

            async fn gate_commit(&self, commit: &GateCommit) -> Result<(), CommitError> {
                let commit = commit.clone();
                $run!(self, commit, |db| apply(db, &commit).await)
            }

            async fn gate_summary(&self, org_handle: &str) -> Result<Vec<GateSummaryRow>, StoreError> {
                let org = org_handle.to_owned();
                $run!(self, snapshot, |db| summary(db, &org).await)
            }

            async fn expire_gate_requests(
                &self,
                now_unix: i64,
                now_text: &str,
            ) -> Result<Vec<ExpiredRequest>, StoreError> {
                let at = now_text.to_owned();
                $run!(self, write, |db| expire(db, now_unix, &at).await)
            }
        }
    };
}

gate_repo!(SqliteStore, lite_run);
gate_repo!(PgStore, pg_run);
