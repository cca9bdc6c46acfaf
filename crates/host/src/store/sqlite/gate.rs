//! The gate's repository on SQLite: the same writer and read pool as the
//! rest of the store, and the same compare-and-swap on a session's version.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};

use super::{is_constraint, SqliteStore};
use crate::store::*;

const GATE_AGENT_COLUMNS: &str =
    "id, org_handle, protocol, name, public_key, fingerprint, callback_url, enrolled_at, revoked_at";

fn gate_agent_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<GateAgentRow> {
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
    })
}

const SESSION_COLUMNS: &str = "org_handle, protocol, session_id, agent_id, self_party, counterparty_id, counterparty_name, counterparty_org, keys, head_count, head_hash, state, created_sha256, created_at, updated_at, version";

fn session_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<GateSession> {
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
        head_count: r.get(9)?,
        head_hash: r.get(10)?,
        state: r.get(11)?,
        created_sha256: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
        version: r.get(15)?,
    })
}

const REQUEST_COLUMNS: &str = "request_id, message_hash, seq, kind, action, amount, threshold, expires_at, expires_unix, status, approvals_required, body_sha256, created_at, decided_at, reason, counter_terms, held_reason";

fn request_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<GateRequestRow> {
    Ok(GateRequestRow {
        request_id: r.get(0)?,
        message_hash: r.get(1)?,
        seq: r.get(2)?,
        kind: r.get(3)?,
        action: r.get(4)?,
        amount: r.get(5)?,
        threshold: r.get(6)?,
        expires_at: r.get(7)?,
        expires_unix: r.get(8)?,
        status: r.get(9)?,
        approvals_required: r.get(10)?,
        body_sha256: r.get(11)?,
        created_at: r.get(12)?,
        decided_at: r.get(13)?,
        reason: r.get(14)?,
        counter_terms: r.get(15)?,
        held_reason: r.get(16)?,
    })
}

const RECEIPT_QUERY: &str = "SELECT g.request_id, g.approver_id, a.name, a.email, a.revoked_at IS NOT NULL, g.decision, g.receipt, g.recorded_at
     FROM gate_receipts g JOIN approvers a ON a.id = g.approver_id
     WHERE g.org_handle = ?1 AND g.protocol = ?2 AND g.session_id = ?3
     ORDER BY g.request_id, g.ordinal, g.recorded_at";

fn receipt_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<GateReceiptRow> {
    Ok(GateReceiptRow {
        request_id: r.get(0)?,
        approver_id: r.get(1)?,
        approver_name: r.get(2)?,
        approver_email: r.get(3)?,
        approver_revoked: r.get(4)?,
        decision: r.get(5)?,
        receipt: r.get(6)?,
        recorded_at: r.get(7)?,
    })
}

fn load_session(conn: &Connection, key: &GateKey) -> Result<Option<GateSession>, StoreError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM gate_sessions WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3"
        ))?
        .query_row(
            params![key.org_handle, key.protocol, key.session_id],
            session_of,
        )
        .optional()?)
}

fn apply(conn: &mut Connection, c: &GateCommit) -> Result<(), CommitError> {
    let tx = conn.savepoint().map_err(StoreError::from)?;
    let s = &c.session;
    let k = &s.key;
    let conflict = |e: rusqlite::Error| {
        if is_constraint(&e) {
            CommitError::Conflict
        } else {
            CommitError::Store(e.into())
        }
    };
    if c.new_session {
        tx.prepare_cached(&format!(
            "INSERT INTO gate_sessions ({SESSION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 1)"
        ))
        .map_err(StoreError::from)?
        .execute(params![
            k.org_handle, k.protocol, k.session_id, s.agent_id, s.self_party, s.counterparty_id,
            s.counterparty_name, s.counterparty_org, s.keys, s.head_count, s.head_hash, s.state,
            s.created_sha256, s.created_at, s.updated_at
        ])
        .map_err(conflict)?;
    } else {
        let changed = tx
            .prepare_cached(
                "UPDATE gate_sessions SET head_count = ?4, head_hash = ?5, state = ?6, updated_at = ?7, version = version + 1
                 WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND version = ?8",
            )
            .map_err(StoreError::from)?
            .execute(params![
                k.org_handle, k.protocol, k.session_id, s.head_count, s.head_hash, s.state,
                s.updated_at, s.version
            ])
            .map_err(StoreError::from)?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    for m in &c.messages {
        tx.prepare_cached(
            "INSERT INTO gate_messages (org_handle, protocol, session_id, seq, hash, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(StoreError::from)?
        .execute(params![k.org_handle, k.protocol, k.session_id, m.seq, m.hash, m.body])
        .map_err(conflict)?;
    }
    for change in &c.request_changes {
        let changed = match change {
            RequestChange::Settle {
                request_id,
                status,
                at,
                reason,
                counter_terms,
            } => tx
                .prepare_cached(
                    "UPDATE gate_requests SET status = ?5, decided_at = ?6, reason = ?7, counter_terms = ?8, held_reason = NULL
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                )
                .map_err(StoreError::from)?
                .execute(params![k.org_handle, k.protocol, k.session_id, request_id, status, at, reason, counter_terms]),
            RequestChange::Held { request_id, reason } => tx
                .prepare_cached(
                    "UPDATE gate_requests SET held_reason = ?5
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                )
                .map_err(StoreError::from)?
                .execute(params![k.org_handle, k.protocol, k.session_id, request_id, reason]),
            RequestChange::StillPending { request_id } => tx
                .prepare_cached(
                    "SELECT count(*) FROM gate_requests
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                )
                .map_err(StoreError::from)?
                .query_row(params![k.org_handle, k.protocol, k.session_id, request_id], |r| {
                    r.get::<_, i64>(0).map(|n| n as usize)
                }),
        }
        .map_err(StoreError::from)?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    if let Some(r) = &c.new_request {
        tx.prepare_cached(&format!(
            "INSERT INTO gate_requests (org_handle, protocol, session_id, {REQUEST_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"
        ))
        .map_err(StoreError::from)?
        .execute(params![
            k.org_handle, k.protocol, k.session_id, r.request_id, r.message_hash, r.seq, r.kind,
            r.action, r.amount, r.threshold, r.expires_at, r.expires_unix, r.status,
            r.approvals_required, r.body_sha256, r.created_at, r.decided_at, r.reason,
            r.counter_terms, r.held_reason
        ])
        .map_err(conflict)?;
    }
    for r in &c.receipts {
        tx.prepare_cached(
            "INSERT INTO gate_receipts (org_handle, protocol, session_id, request_id, approver_id, decision, receipt, recorded_at, ordinal)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(StoreError::from)?
        .execute(params![
            k.org_handle, k.protocol, k.session_id, r.request_id, r.approver_id, r.decision,
            r.receipt, r.recorded_at, r.ordinal
        ])
        .map_err(conflict)?;
    }
    if let Some(d) = &c.decision {
        tx.prepare_cached(
            "INSERT INTO gate_decisions (decision_id, approver_id, org_handle, protocol, session_id, request_id, body, body_sha256, signed_headers, outcome, detail, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(StoreError::from)?
        .execute(params![
            d.decision_id, d.approver_id, k.org_handle, k.protocol, k.session_id, d.request_id,
            d.body, d.body_sha256, d.signed_headers, d.outcome, d.detail, d.received_at
        ])
        .map_err(conflict)?;
    }
    tx.commit().map_err(StoreError::from)?;
    Ok(())
}

fn requests_of(
    conn: &Connection,
    key: &GateKey,
    pending_only: bool,
) -> Result<Vec<GateRequestRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {REQUEST_COLUMNS} FROM gate_requests
         WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND (?4 = 0 OR status = 'pending')
         ORDER BY created_at, request_id"
    ))?;
    let rows = stmt.query_map(
        params![key.org_handle, key.protocol, key.session_id, pending_only],
        request_of,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn receipts_of(conn: &Connection, key: &GateKey) -> Result<Vec<GateReceiptRow>, StoreError> {
    let mut stmt = conn.prepare_cached(RECEIPT_QUERY)?;
    let rows = stmt.query_map(
        params![key.org_handle, key.protocol, key.session_id],
        receipt_of,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[async_trait]
impl GateRepo for SqliteStore {
    async fn insert_gate_code(
        &self,
        code_hash: &str,
        code: &GateCodeRow,
    ) -> Result<(), StoreError> {
        let (hash, k) = (code_hash.to_owned(), code.clone());
        self.write(move |c| {
            c.execute(
                "INSERT INTO gate_codes (code_hash, org_handle, name, protocol, expires_at, used_at) VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
                params![hash, k.org_handle, k.name, k.protocol, k.expires_at],
            )?;
            Ok(())
        })
        .await
    }

    async fn gate_code(&self, code_hash: &str) -> Result<Option<GateCodeRow>, StoreError> {
        let hash = code_hash.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT org_handle, name, protocol, expires_at, used_at IS NOT NULL FROM gate_codes WHERE code_hash = ?1",
            )?
            .query_row([&hash], |r| {
                Ok(GateCodeRow {
                    org_handle: r.get(0)?,
                    name: r.get(1)?,
                    protocol: r.get(2)?,
                    expires_at: r.get(3)?,
                    used: r.get(4)?,
                })
            })
            .optional()?)
        })
        .await
    }

    async fn enroll_gate_agent(
        &self,
        code_hash: &str,
        a: &GateAgentRow,
        now_unix: i64,
    ) -> Result<bool, StoreError> {
        let (hash, a) = (code_hash.to_owned(), a.clone());
        self.write(move |c| {
            let tx = c.savepoint()?;
            let spent = tx.execute(
                "UPDATE gate_codes SET used_at = ?2 WHERE code_hash = ?1 AND used_at IS NULL AND expires_at > ?3",
                params![hash, a.enrolled_at, now_unix],
            )?;
            if spent == 0 {
                return Ok(false);
            }
            tx.execute(
                &format!("INSERT INTO gate_agents ({GATE_AGENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)"),
                params![a.id, a.org_handle, a.protocol, a.name, a.public_key, a.fingerprint, a.callback_url, a.enrolled_at],
            )?;
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    async fn active_gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| {
            let columns = GATE_AGENT_COLUMNS
                .split(", ")
                .map(|c| format!("g.{c}"))
                .collect::<Vec<_>>()
                .join(", ");
            Ok(c.prepare_cached(&format!(
                "SELECT {columns} FROM gate_agents g JOIN orgs o ON o.handle = g.org_handle
                 WHERE g.id = ?1 AND g.revoked_at IS NULL AND o.disabled = 0"
            ))?
            .query_row([&id], gate_agent_of)
            .optional()?)
        })
        .await
    }

    async fn gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError> {
        let id = id.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {GATE_AGENT_COLUMNS} FROM gate_agents WHERE id = ?1"
            ))?
            .query_row([&id], gate_agent_of)
            .optional()?)
        })
        .await
    }

    async fn gate_agents(&self) -> Result<Vec<GateAgentRow>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {GATE_AGENT_COLUMNS} FROM gate_agents ORDER BY enrolled_at, id"
            ))?;
            let rows = stmt.query_map([], gate_agent_of)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn revoke_gate_agent(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        let (id, at) = (id.to_owned(), at.to_owned());
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE gate_agents SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                params![id, at],
            )? == 1)
        })
        .await
    }

    async fn gate_state(&self, key: &GateKey) -> Result<Option<GateState>, StoreError> {
        let key = key.clone();
        self.read(move |c| {
            let tx = c.transaction()?;
            let Some(session) = load_session(&tx, &key)? else {
                return Ok(None);
            };
            let messages = {
                let mut stmt = tx.prepare_cached(
                    "SELECT seq, hash, body FROM gate_messages
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND seq <= ?4 ORDER BY seq",
                )?;
                let rows = stmt.query_map(
                    params![key.org_handle, key.protocol, key.session_id, session.head_count],
                    |r| {
                        Ok(GateMessage {
                            seq: r.get(0)?,
                            hash: r.get(1)?,
                            body: r.get(2)?,
                        })
                    },
                )?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            let requests = requests_of(&tx, &key, false)?;
            let receipts = receipts_of(&tx, &key)?;
            drop(tx);
            Ok(Some(GateState {
                session,
                messages,
                requests,
                receipts,
            }))
        })
        .await
    }

    async fn gate_decision(
        &self,
        decision_id: &str,
    ) -> Result<Option<GateDecisionRow>, StoreError> {
        let id = decision_id.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT approver_id, org_handle, protocol, session_id, request_id, body_sha256, outcome, detail FROM gate_decisions WHERE decision_id = ?1",
            )?
            .query_row([&id], |r| {
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
            })
            .optional()?)
        })
        .await
    }

    async fn gate_commit(&self, commit: &GateCommit) -> Result<(), CommitError> {
        let commit = commit.clone();
        self.writer.write(move |c| apply(c, &commit)).await
    }

    async fn gate_summary(&self, org_handle: &str) -> Result<Vec<GateSummaryRow>, StoreError> {
        let org = org_handle.to_owned();
        self.read(move |c| {
            let tx = c.transaction()?;
            let columns = SESSION_COLUMNS
                .split(", ")
                .map(|c| format!("s.{c}"))
                .collect::<Vec<_>>()
                .join(", ");
            let sessions = {
                let mut stmt = tx.prepare_cached(&format!(
                    "SELECT {columns}, a.name FROM gate_sessions s JOIN gate_agents a ON a.id = s.agent_id
                     WHERE s.org_handle = ?1 ORDER BY s.created_at, s.protocol, s.session_id"
                ))?;
                let rows = stmt.query_map([&org], |r| Ok((session_of(r)?, r.get::<_, String>(16)?)))?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            let mut out = Vec::with_capacity(sessions.len());
            for (session, agent_name) in sessions {
                let pending = requests_of(&tx, &session.key, true)?;
                let receipts = if pending.is_empty() {
                    Vec::new()
                } else {
                    receipts_of(&tx, &session.key)?
                        .into_iter()
                        .filter(|r| pending.iter().any(|p| p.request_id == r.request_id))
                        .collect()
                };
                out.push(GateSummaryRow {
                    session,
                    agent_name,
                    pending,
                    receipts,
                });
            }
            Ok(out)
        })
        .await
    }

    async fn expire_gate_requests(
        &self,
        now_unix: i64,
        now_text: &str,
    ) -> Result<Vec<ExpiredRequest>, StoreError> {
        let at = now_text.to_owned();
        self.write(move |c| {
            let tx = c.savepoint()?;
            let due = {
                let mut stmt = tx.prepare_cached(
                    "SELECT r.org_handle, r.protocol, r.session_id, r.request_id, s.agent_id
                     FROM gate_requests r JOIN gate_sessions s
                       ON s.org_handle = r.org_handle AND s.protocol = r.protocol AND s.session_id = r.session_id
                     WHERE r.status = 'pending' AND r.expires_unix <= ?1",
                )?;
                let rows = stmt.query_map([now_unix], |r| {
                    Ok(ExpiredRequest {
                        key: GateKey {
                            org_handle: r.get(0)?,
                            protocol: r.get(1)?,
                            session_id: r.get(2)?,
                        },
                        request_id: r.get(3)?,
                        agent_id: r.get(4)?,
                    })
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for e in &due {
                tx.prepare_cached(
                    "UPDATE gate_requests SET status = 'expired', decided_at = ?5, held_reason = NULL
                     WHERE org_handle = ?1 AND protocol = ?2 AND session_id = ?3 AND request_id = ?4 AND status = 'pending'",
                )?
                .execute(params![e.key.org_handle, e.key.protocol, e.key.session_id, e.request_id, at])?;
            }
            tx.commit()?;
            Ok(due)
        })
        .await
    }
}
