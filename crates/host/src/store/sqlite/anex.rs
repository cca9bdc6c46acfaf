//! ANEX over A2A's repository on SQLite: the same writer and read pool as
//! the rest of the store; a conversation changes only by compare-and-swap
//! on its version.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};

use super::{is_constraint, SqliteStore};
use crate::store::*;

const CP_COLUMNS: &str =
    "id, org_handle, identity, name, relation, token_hash, created_at, revoked_at";

fn cp_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<AnexCounterpartyRow> {
    Ok(AnexCounterpartyRow {
        id: r.get(0)?,
        org_handle: r.get(1)?,
        identity: r.get(2)?,
        name: r.get(3)?,
        relation: r.get(4)?,
        token_hash: r.get(5)?,
        created_at: r.get(6)?,
        revoked_at: r.get(7)?,
    })
}

const CONV_COLUMNS: &str =
    "context_id, org_handle, counterparty_id, conversation_id, doc, version, created_at, updated_at";

fn conv_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<AnexConversationRow> {
    Ok(AnexConversationRow {
        context_id: r.get(0)?,
        org_handle: r.get(1)?,
        counterparty_id: r.get(2)?,
        conversation_id: r.get(3)?,
        doc: r.get(4)?,
        version: r.get::<_, i64>(5)?.max(0) as u64,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

fn version(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn apply(conn: &mut Connection, c: &AnexCommit) -> Result<(), CommitError> {
    let tx = conn.savepoint().map_err(StoreError::from)?;
    let row = &c.conversation;
    let result = match c.expected_version {
        None => tx.execute(
            &format!("INSERT INTO anex_conversations ({CONV_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
            params![
                row.context_id,
                row.org_handle,
                row.counterparty_id,
                row.conversation_id,
                row.doc,
                version(row.version),
                row.created_at,
                row.updated_at
            ],
        ),
        Some(expected) => tx.execute(
            "UPDATE anex_conversations SET doc = ?2, version = ?3, updated_at = ?4 WHERE context_id = ?1 AND version = ?5",
            params![row.context_id, row.doc, version(row.version), row.updated_at, version(expected)],
        ),
    };
    match result {
        Ok(1) => {}
        Ok(_) => return Err(CommitError::Conflict),
        Err(e) if is_constraint(&e) => return Err(CommitError::Conflict),
        Err(e) => return Err(StoreError::from(e).into()),
    }
    if let Some(d) = &c.decision {
        match tx.execute(
            "INSERT INTO anex_decisions (decision_id, approver_id, context_id, body_sha256, outcome, detail, received_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![d.decision_id, d.approver_id, d.context_id, d.body_sha256, d.outcome, d.detail, d.received_at],
        ) {
            Ok(_) => {}
            Err(e) if is_constraint(&e) => return Err(CommitError::Conflict),
            Err(e) => return Err(StoreError::from(e).into()),
        }
    }
    tx.commit().map_err(StoreError::from)?;
    Ok(())
}

#[async_trait]
impl AnexRepo for SqliteStore {
    async fn insert_anex_counterparty(&self, row: &AnexCounterpartyRow) -> Result<(), StoreError> {
        let row = row.clone();
        self.write(move |c| {
            c.execute(
                &format!("INSERT INTO anex_counterparties ({CP_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
                params![row.id, row.org_handle, row.identity, row.name, row.relation, row.token_hash, row.created_at, row.revoked_at],
            )?;
            Ok(())
        })
        .await
    }

    async fn anex_counterparty_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<AnexCounterpartyRow>, StoreError> {
        let hash = token_hash.to_owned();
        self.read(move |c| {
            Ok(c.query_row(
                &format!("SELECT {CP_COLUMNS} FROM anex_counterparties WHERE token_hash = ?1"),
                params![hash],
                cp_of,
            )
            .optional()?)
        })
        .await
    }

    async fn anex_counterparties(&self) -> Result<Vec<AnexCounterpartyRow>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {CP_COLUMNS} FROM anex_counterparties ORDER BY created_at, id"
            ))?;
            let rows = stmt.query_map([], cp_of)?.collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
        .await
    }

    async fn revoke_anex_counterparty(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        let (id, at) = (id.to_owned(), at.to_owned());
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE anex_counterparties SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                params![id, at],
            )? == 1)
        })
        .await
    }

    async fn set_anex_file(
        &self,
        org_handle: &str,
        kind: AnexFile,
        json: &str,
    ) -> Result<bool, StoreError> {
        let (org, json) = (org_handle.to_owned(), json.to_owned());
        self.write(move |c| {
            let exists: Option<i64> = c
                .query_row("SELECT 1 FROM orgs WHERE handle = ?1", params![org], |r| r.get(0))
                .optional()?;
            if exists.is_none() {
                return Ok(false);
            }
            let sql = match kind {
                AnexFile::Policy => "INSERT INTO anex_files (org_handle, policy) VALUES (?1, ?2) ON CONFLICT (org_handle) DO UPDATE SET policy = excluded.policy",
                AnexFile::Data => "INSERT INTO anex_files (org_handle, data) VALUES (?1, ?2) ON CONFLICT (org_handle) DO UPDATE SET data = excluded.data",
            };
            c.execute(sql, params![org, json])?;
            Ok(true)
        })
        .await
    }

    async fn anex_files(
        &self,
        org_handle: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        let org = org_handle.to_owned();
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT policy, data FROM anex_files WHERE org_handle = ?1",
                params![org],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .unwrap_or((None, None)))
        })
        .await
    }

    async fn anex_conversation(
        &self,
        context_id: &str,
    ) -> Result<Option<AnexConversationRow>, StoreError> {
        let id = context_id.to_owned();
        self.read(move |c| {
            Ok(c.query_row(
                &format!("SELECT {CONV_COLUMNS} FROM anex_conversations WHERE context_id = ?1"),
                params![id],
                conv_of,
            )
            .optional()?)
        })
        .await
    }

    async fn anex_conversation_used(
        &self,
        org_handle: &str,
        counterparty_id: &str,
        conversation_id: &str,
    ) -> Result<bool, StoreError> {
        let (org, cp, conv) = (
            org_handle.to_owned(),
            counterparty_id.to_owned(),
            conversation_id.to_owned(),
        );
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT 1 FROM anex_conversations WHERE org_handle = ?1 AND counterparty_id = ?2 AND conversation_id = ?3",
                params![org, cp, conv],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .is_some())
        })
        .await
    }

    async fn anex_conversations(
        &self,
        org_handle: &str,
    ) -> Result<Vec<AnexConversationRow>, StoreError> {
        let org = org_handle.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {CONV_COLUMNS} FROM anex_conversations WHERE org_handle = ?1 ORDER BY created_at, context_id"
            ))?;
            let rows = stmt
                .query_map(params![org], conv_of)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
        .await
    }

    async fn anex_decision(
        &self,
        decision_id: &str,
    ) -> Result<Option<AnexDecisionRow>, StoreError> {
        let id = decision_id.to_owned();
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT decision_id, approver_id, context_id, body_sha256, outcome, detail, received_at FROM anex_decisions WHERE decision_id = ?1",
                params![id],
                |r| {
                    Ok(AnexDecisionRow {
                        decision_id: r.get(0)?,
                        approver_id: r.get(1)?,
                        context_id: r.get(2)?,
                        body_sha256: r.get(3)?,
                        outcome: r.get(4)?,
                        detail: r.get(5)?,
                        received_at: r.get(6)?,
                    })
                },
            )
            .optional()?)
        })
        .await
    }

    async fn anex_commit(&self, commit: &AnexCommit) -> Result<(), CommitError> {
        let commit = commit.clone();
        self.writer.write(move |c| apply(c, &commit)).await
    }
}
