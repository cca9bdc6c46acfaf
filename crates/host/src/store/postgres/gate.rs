//! The gate's repository on PostgreSQL: a session's commits serialize on
//! its row lock (compare-and-swap on its version), request changes apply
//! only while the request is pending, ids are primary keys, and the
//! sweeper marks each due request by one conditional update, so processes
//! sharing the database never decide or expire a request twice.

use async_trait::async_trait;
use tokio_postgres::Row;

use super::{conflict, i, prefixed, store, u, PgStore};
use crate::store::*;

const GATE_AGENT_COLUMNS: &str =
    "id, org_handle, protocol, name, public_key, fingerprint, callback_url, enrolled_at, revoked_at";

fn gate_agent_of(r: &Row) -> Result<GateAgentRow, StoreError> {
    Ok(GateAgentRow {
        id: r.try_get(0)?,
        org_handle: r.try_get(1)?,
        protocol: r.try_get(2)?,
        name: r.try_get(3)?,
        public_key: r.try_get(4)?,
        fingerprint: r.try_get(5)?,
        callback_url: r.try_get(6)?,
        enrolled_at: r.try_get(7)?,
        revoked_at: r.try_get(8)?,
    })
}

const SESSION_COLUMNS: &str = "org_handle, protocol, session_id, agent_id, self_party, counterparty_id, counterparty_name, counterparty_org, keys, head_count, head_hash, state, created_sha256, created_at, updated_at, version";

fn session_of(r: &Row) -> Result<GateSession, StoreError> {
    Ok(GateSession {
        key: GateKey {
            org_handle: r.try_get(0)?,
            protocol: r.try_get(1)?,
            session_id: r.try_get(2)?,
        },
        agent_id: r.try_get(3)?,
        self_party: r.try_get(4)?,
        counterparty_id: r.try_get(5)?,
        counterparty_name: r.try_get(6)?,
        counterparty_org: r.try_get(7)?,
        keys: r.try_get(8)?,
        head_count: u(r.try_get(9)?),
        head_hash: r.try_get(10)?,
        state: r.try_get(11)?,
        created_sha256: r.try_get(12)?,
        created_at: r.try_get(13)?,
        updated_at: r.try_get(14)?,
        version: u(r.try_get(15)?),
    })
}

const REQUEST_COLUMNS: &str = "request_id, message_hash, seq, kind, action, amount, threshold, expires_at, expires_unix, status, approvals_required, body_sha256, created_at, decided_at, reason, counter_terms, held_reason";

fn request_of(r: &Row) -> Result<GateRequestRow, StoreError> {
    Ok(GateRequestRow {
        request_id: r.try_get(0)?,
        message_hash: r.try_get(1)?,
        seq: u(r.try_get(2)?),
        kind: r.try_get(3)?,
        action: r.try_get(4)?,
        amount: r.try_get(5)?,
        threshold: r.try_get(6)?,
        expires_at: r.try_get(7)?,
        expires_unix: r.try_get(8)?,
        status: r.try_get(9)?,
        approvals_required: r.try_get::<_, i32>(10)?.max(0) as u32,
        body_sha256: r.try_get(11)?,
        created_at: r.try_get(12)?,
        decided_at: r.try_get(13)?,
        reason: r.try_get(14)?,
        counter_terms: r.try_get(15)?,
        held_reason: r.try_get(16)?,
    })
}

fn receipt_of(r: &Row) -> Result<GateReceiptRow, StoreError> {
    Ok(GateReceiptRow {
        request_id: r.try_get(0)?,
        approver_id: r.try_get(1)?,
        approver_name: r.try_get(2)?,
        approver_email: r.try_get(3)?,
        approver_revoked: r.try_get(4)?,
        decision: r.try_get(5)?,
        receipt: r.try_get(6)?,
        recorded_at: r.try_get(7)?,
    })
}

const RECEIPT_QUERY: &str = "SELECT g.request_id, g.approver_id, a.name, a.email, a.revoked_at IS NOT NULL, g.decision, g.receipt, g.recorded_at
     FROM gate_receipts g JOIN approvers a ON a.id = g.approver_id
     WHERE g.org_handle = $1 AND g.protocol = $2 AND g.session_id = $3
     ORDER BY g.request_id, g.ordinal, g.recorded_at";

fn all<T>(rows: &[Row], f: impl Fn(&Row) -> Result<T, StoreError>) -> Result<Vec<T>, StoreError> {
    rows.iter().map(f).collect()
}

/// The statements of one commit, inside `tx`.
async fn apply(tx: &deadpool_postgres::Transaction<'_>, c: &GateCommit) -> Result<(), CommitError> {
    let s = &c.session;
    let k = &s.key;
    let head_count = i(s.head_count);
    if c.new_session {
        let stmt = tx
            .prepare_cached(&format!(
                "INSERT INTO gate_sessions ({SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 1)"
            ))
            .await
            .map_err(store)?;
        tx.execute(
            &stmt,
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
        .await
        .map_err(conflict)?;
    } else {
        // The row lock taken here serializes commits to this session
        // across every process.
        let stmt = tx
            .prepare_cached(
                "UPDATE gate_sessions SET head_count = $4, head_hash = $5, state = $6, updated_at = $7, version = version + 1
                 WHERE org_handle = $1 AND protocol = $2 AND session_id = $3 AND version = $8",
            )
            .await
            .map_err(store)?;
        let changed = tx
            .execute(
                &stmt,
                &[
                    &k.org_handle,
                    &k.protocol,
                    &k.session_id,
                    &head_count,
                    &s.head_hash,
                    &s.state,
                    &s.updated_at,
                    &i(s.version),
                ],
            )
            .await
            .map_err(store)?;
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    if !c.messages.is_empty() {
        let stmt = tx
            .prepare_cached(
                "INSERT INTO gate_messages (org_handle, protocol, session_id, seq, hash, body) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .await
            .map_err(store)?;
        for m in &c.messages {
            tx.execute(
                &stmt,
                &[
                    &k.org_handle,
                    &k.protocol,
                    &k.session_id,
                    &i(m.seq),
                    &m.hash,
                    &m.body,
                ],
            )
            .await
            .map_err(conflict)?;
        }
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
                .execute(
                    "UPDATE gate_requests SET status = $5, decided_at = $6, reason = $7, counter_terms = $8, held_reason = NULL
                     WHERE org_handle = $1 AND protocol = $2 AND session_id = $3 AND request_id = $4 AND status = 'pending'",
                    &[&k.org_handle, &k.protocol, &k.session_id, request_id, status, at, reason, counter_terms],
                )
                .await
                .map_err(store)?,
            RequestChange::Held { request_id, reason } => tx
                .execute(
                    "UPDATE gate_requests SET held_reason = $5
                     WHERE org_handle = $1 AND protocol = $2 AND session_id = $3 AND request_id = $4 AND status = 'pending'",
                    &[&k.org_handle, &k.protocol, &k.session_id, request_id, reason],
                )
                .await
                .map_err(store)?,
            RequestChange::StillPending { request_id } => {
                // FOR UPDATE: the sweeper's update of this row waits for
                // this commit, or this commit finds it expired.
                tx.query(
                    "SELECT 1 FROM gate_requests
                     WHERE org_handle = $1 AND protocol = $2 AND session_id = $3 AND request_id = $4 AND status = 'pending' FOR UPDATE",
                    &[&k.org_handle, &k.protocol, &k.session_id, request_id],
                )
                .await
                .map_err(store)?
                .len() as u64
            }
        };
        if changed == 0 {
            return Err(CommitError::Conflict);
        }
    }
    if let Some(r) = &c.new_request {
        let required = i32::try_from(r.approvals_required).unwrap_or(i32::MAX);
        tx.execute(
            &format!(
                "INSERT INTO gate_requests (org_handle, protocol, session_id, {REQUEST_COLUMNS})
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
            ),
            &[
                &k.org_handle,
                &k.protocol,
                &k.session_id,
                &r.request_id,
                &r.message_hash,
                &i(r.seq),
                &r.kind,
                &r.action,
                &r.amount,
                &r.threshold,
                &r.expires_at,
                &r.expires_unix,
                &r.status,
                &required,
                &r.body_sha256,
                &r.created_at,
                &r.decided_at,
                &r.reason,
                &r.counter_terms,
                &r.held_reason,
            ],
        )
        .await
        .map_err(conflict)?;
    }
    for r in &c.receipts {
        let ordinal = i32::try_from(r.ordinal).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO gate_receipts (org_handle, protocol, session_id, request_id, approver_id, decision, receipt, recorded_at, ordinal)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &k.org_handle,
                &k.protocol,
                &k.session_id,
                &r.request_id,
                &r.approver_id,
                &r.decision,
                &r.receipt,
                &r.recorded_at,
                &ordinal,
            ],
        )
        .await
        .map_err(conflict)?;
    }
    if let Some(d) = &c.decision {
        tx.execute(
            "INSERT INTO gate_decisions (decision_id, approver_id, org_handle, protocol, session_id, request_id, body, body_sha256, signed_headers, outcome, detail, received_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            &[
                &d.decision_id,
                &d.approver_id,
                &k.org_handle,
                &k.protocol,
                &k.session_id,
                &d.request_id,
                &d.body,
                &d.body_sha256,
                &d.signed_headers,
                &d.outcome,
                &d.detail,
                &d.received_at,
            ],
        )
        .await
        .map_err(conflict)?;
    }
    Ok(())
}

#[async_trait]
impl GateRepo for PgStore {
    async fn insert_gate_code(&self, code_hash: &str, k: &GateCodeRow) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO gate_codes (code_hash, org_handle, name, protocol, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, NULL)",
            &[&code_hash, &k.org_handle, &k.name, &k.protocol, &k.expires_at],
        )
        .await?;
        Ok(())
    }

    async fn gate_code(&self, code_hash: &str) -> Result<Option<GateCodeRow>, StoreError> {
        self.query_opt(
            "SELECT org_handle, name, protocol, expires_at, used_at IS NOT NULL FROM gate_codes WHERE code_hash = $1",
            &[&code_hash],
        )
        .await?
        .map(|r| {
            Ok(GateCodeRow {
                org_handle: r.try_get(0)?,
                name: r.try_get(1)?,
                protocol: r.try_get(2)?,
                expires_at: r.try_get(3)?,
                used: r.try_get(4)?,
            })
        })
        .transpose()
    }

    async fn enroll_gate_agent(
        &self,
        code_hash: &str,
        a: &GateAgentRow,
        now_unix: i64,
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let spent = tx
            .execute(
                "UPDATE gate_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $3",
                &[&code_hash, &a.enrolled_at, &now_unix],
            )
            .await?;
        if spent == 0 {
            return Ok(false);
        }
        tx.execute(
            &format!("INSERT INTO gate_agents ({GATE_AGENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)"),
            &[&a.id, &a.org_handle, &a.protocol, &a.name, &a.public_key, &a.fingerprint, &a.callback_url, &a.enrolled_at],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn active_gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError> {
        self.query_opt(
            &format!(
                "SELECT {} FROM gate_agents g JOIN orgs o ON o.handle = g.org_handle
                 WHERE g.id = $1 AND g.revoked_at IS NULL AND NOT o.disabled",
                prefixed(GATE_AGENT_COLUMNS, "g")
            ),
            &[&id],
        )
        .await?
        .map(|r| gate_agent_of(&r))
        .transpose()
    }

    async fn gate_agent(&self, id: &str) -> Result<Option<GateAgentRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {GATE_AGENT_COLUMNS} FROM gate_agents WHERE id = $1"),
            &[&id],
        )
        .await?
        .map(|r| gate_agent_of(&r))
        .transpose()
    }

    async fn gate_agents(&self) -> Result<Vec<GateAgentRow>, StoreError> {
        let rows = self
            .query(
                &format!("SELECT {GATE_AGENT_COLUMNS} FROM gate_agents ORDER BY enrolled_at, id"),
                &[],
            )
            .await?;
        all(&rows, gate_agent_of)
    }

    async fn revoke_gate_agent(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "UPDATE gate_agents SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
                &[&id, &at],
            )
            .await?
            == 1)
    }

    async fn gate_state(&self, key: &GateKey) -> Result<Option<GateState>, StoreError> {
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&key.org_handle, &key.protocol, &key.session_id];
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM gate_sessions WHERE org_handle = $1 AND protocol = $2 AND session_id = $3"
            ))
            .await?;
        let Some(row) = tx.query_opt(&stmt, &params).await? else {
            tx.commit().await?;
            return Ok(None);
        };
        let session = session_of(&row)?;
        let stmt = tx
            .prepare_cached(
                "SELECT seq, hash, body FROM gate_messages
                 WHERE org_handle = $1 AND protocol = $2 AND session_id = $3 ORDER BY seq",
            )
            .await?;
        let messages = tx
            .query(&stmt, &params)
            .await?
            .iter()
            .map(|r| {
                Ok(GateMessage {
                    seq: u(r.try_get(0)?),
                    hash: r.try_get(1)?,
                    body: r.try_get(2)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT {REQUEST_COLUMNS} FROM gate_requests
                 WHERE org_handle = $1 AND protocol = $2 AND session_id = $3 ORDER BY created_at, request_id"
            ))
            .await?;
        let requests = all(&tx.query(&stmt, &params).await?, request_of)?;
        let stmt = tx.prepare_cached(RECEIPT_QUERY).await?;
        let receipts = all(&tx.query(&stmt, &params).await?, receipt_of)?;
        tx.commit().await?;
        Ok(Some(GateState {
            session,
            messages,
            requests,
            receipts,
        }))
    }

    async fn gate_decision(
        &self,
        decision_id: &str,
    ) -> Result<Option<GateDecisionRow>, StoreError> {
        self.query_opt(
            "SELECT approver_id, org_handle, protocol, session_id, request_id, body_sha256, outcome, detail FROM gate_decisions WHERE decision_id = $1",
            &[&decision_id],
        )
        .await?
        .map(|r| {
            Ok(GateDecisionRow {
                approver_id: r.try_get(0)?,
                key: GateKey {
                    org_handle: r.try_get(1)?,
                    protocol: r.try_get(2)?,
                    session_id: r.try_get(3)?,
                },
                request_id: r.try_get(4)?,
                body_sha256: r.try_get(5)?,
                outcome: r.try_get(6)?,
                detail: r.try_get(7)?,
            })
        })
        .transpose()
    }

    async fn gate_commit(&self, c: &GateCommit) -> Result<(), CommitError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(store)?;
        match apply(&tx, c).await {
            Ok(()) => tx.commit().await.map_err(conflict),
            Err(e) => {
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }

    async fn gate_summary(&self, org_handle: &str) -> Result<Vec<GateSummaryRow>, StoreError> {
        // Three statements in one snapshot, whatever the number of sessions.
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT {}, a.name FROM gate_sessions s JOIN gate_agents a ON a.id = s.agent_id
                 WHERE s.org_handle = $1 ORDER BY s.created_at, s.protocol, s.session_id",
                prefixed(SESSION_COLUMNS, "s")
            ))
            .await?;
        let sessions = tx.query(&stmt, &[&org_handle]).await?;
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT protocol, session_id, {REQUEST_COLUMNS} FROM gate_requests
                 WHERE org_handle = $1 AND status = 'pending' ORDER BY created_at, request_id"
            ))
            .await?;
        let pending = tx.query(&stmt, &[&org_handle]).await?;
        let stmt = tx
            .prepare_cached(
                "SELECT g.protocol, g.session_id, g.request_id, g.approver_id, a.name, a.email, a.revoked_at IS NOT NULL, g.decision, g.receipt, g.recorded_at
                 FROM gate_receipts g JOIN approvers a ON a.id = g.approver_id
                 JOIN gate_requests r ON r.org_handle = g.org_handle AND r.protocol = g.protocol
                   AND r.session_id = g.session_id AND r.request_id = g.request_id
                 WHERE g.org_handle = $1 AND r.status = 'pending'
                 ORDER BY g.request_id, g.ordinal, g.recorded_at",
            )
            .await?;
        let receipts = tx.query(&stmt, &[&org_handle]).await?;
        tx.commit().await?;
        let mut out = Vec::with_capacity(sessions.len());
        for row in &sessions {
            let session = session_of(row)?;
            let agent_name: String = row.try_get(16)?;
            let mine = |r: &Row| -> Result<bool, StoreError> {
                Ok(r.try_get::<_, String>(0)? == session.key.protocol
                    && r.try_get::<_, String>(1)? == session.key.session_id)
            };
            let mut requests = Vec::new();
            for r in &pending {
                if mine(r)? {
                    requests.push(GateRequestRow {
                        request_id: r.try_get(2)?,
                        message_hash: r.try_get(3)?,
                        seq: u(r.try_get(4)?),
                        kind: r.try_get(5)?,
                        action: r.try_get(6)?,
                        amount: r.try_get(7)?,
                        threshold: r.try_get(8)?,
                        expires_at: r.try_get(9)?,
                        expires_unix: r.try_get(10)?,
                        status: r.try_get(11)?,
                        approvals_required: r.try_get::<_, i32>(12)?.max(0) as u32,
                        body_sha256: r.try_get(13)?,
                        created_at: r.try_get(14)?,
                        decided_at: r.try_get(15)?,
                        reason: r.try_get(16)?,
                        counter_terms: r.try_get(17)?,
                        held_reason: r.try_get(18)?,
                    });
                }
            }
            let mut given = Vec::new();
            for r in &receipts {
                if mine(r)? {
                    given.push(GateReceiptRow {
                        request_id: r.try_get(2)?,
                        approver_id: r.try_get(3)?,
                        approver_name: r.try_get(4)?,
                        approver_email: r.try_get(5)?,
                        approver_revoked: r.try_get(6)?,
                        decision: r.try_get(7)?,
                        receipt: r.try_get(8)?,
                        recorded_at: r.try_get(9)?,
                    });
                }
            }
            out.push(GateSummaryRow {
                session,
                agent_name,
                pending: requests,
                receipts: given,
            });
        }
        Ok(out)
    }

    async fn expire_gate_requests(
        &self,
        now_unix: i64,
        now_text: &str,
    ) -> Result<Vec<ExpiredRequest>, StoreError> {
        // One statement: each due row is marked by exactly one process.
        let rows = self
            .query(
                "UPDATE gate_requests r SET status = 'expired', decided_at = $2, held_reason = NULL
                 FROM gate_sessions s
                 WHERE s.org_handle = r.org_handle AND s.protocol = r.protocol AND s.session_id = r.session_id
                   AND r.status = 'pending' AND r.expires_unix <= $1
                 RETURNING r.org_handle, r.protocol, r.session_id, r.request_id, s.agent_id",
                &[&now_unix, &now_text],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(ExpiredRequest {
                    key: GateKey {
                        org_handle: r.try_get(0)?,
                        protocol: r.try_get(1)?,
                        session_id: r.try_get(2)?,
                    },
                    request_id: r.try_get(3)?,
                    agent_id: r.try_get(4)?,
                })
            })
            .collect()
    }
}
