//! ANEX over A2A's repository on PostgreSQL: a conversation changes only by
//! compare-and-swap on its version, ids are primary keys, so processes
//! sharing the database never apply two answers to one message.

use async_trait::async_trait;
use tokio_postgres::Row;

use super::{conflict, i, store, u, PgStore};
use crate::store::*;

const CP_COLUMNS: &str =
    "id, org_handle, identity, name, relation, token_hash, created_at, revoked_at";

fn cp_of(r: &Row) -> Result<AnexCounterpartyRow, StoreError> {
    Ok(AnexCounterpartyRow {
        id: r.try_get(0)?,
        org_handle: r.try_get(1)?,
        identity: r.try_get(2)?,
        name: r.try_get(3)?,
        relation: r.try_get(4)?,
        token_hash: r.try_get(5)?,
        created_at: r.try_get(6)?,
        revoked_at: r.try_get(7)?,
    })
}

const CONV_COLUMNS: &str =
    "context_id, org_handle, counterparty_id, conversation_id, doc, version, created_at, updated_at";

fn conv_of(r: &Row) -> Result<AnexConversationRow, StoreError> {
    Ok(AnexConversationRow {
        context_id: r.try_get(0)?,
        org_handle: r.try_get(1)?,
        counterparty_id: r.try_get(2)?,
        conversation_id: r.try_get(3)?,
        doc: r.try_get(4)?,
        version: u(r.try_get(5)?),
        created_at: r.try_get(6)?,
        updated_at: r.try_get(7)?,
    })
}

async fn apply(tx: &deadpool_postgres::Transaction<'_>, c: &AnexCommit) -> Result<(), CommitError> {
    let row = &c.conversation;
    let changed = match c.expected_version {
        None => tx
            .execute(
                &format!("INSERT INTO anex_conversations ({CONV_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"),
                &[
                    &row.context_id,
                    &row.org_handle,
                    &row.counterparty_id,
                    &row.conversation_id,
                    &row.doc,
                    &i(row.version),
                    &row.created_at,
                    &row.updated_at,
                ],
            )
            .await
            .map_err(conflict)?,
        Some(expected) => tx
            .execute(
                "UPDATE anex_conversations SET doc = $2, version = $3, updated_at = $4 WHERE context_id = $1 AND version = $5",
                &[&row.context_id, &row.doc, &i(row.version), &row.updated_at, &i(expected)],
            )
            .await
            .map_err(store)?,
    };
    if changed != 1 {
        return Err(CommitError::Conflict);
    }
    if let Some(d) = &c.decision {
        tx.execute(
            "INSERT INTO anex_decisions (decision_id, approver_id, context_id, body_sha256, outcome, detail, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&d.decision_id, &d.approver_id, &d.context_id, &d.body_sha256, &d.outcome, &d.detail, &d.received_at],
        )
        .await
        .map_err(conflict)?;
    }
    Ok(())
}

#[async_trait]
impl AnexRepo for PgStore {
    async fn insert_anex_counterparty(&self, row: &AnexCounterpartyRow) -> Result<(), StoreError> {
        self.execute(
            &format!("INSERT INTO anex_counterparties ({CP_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"),
            &[&row.id, &row.org_handle, &row.identity, &row.name, &row.relation, &row.token_hash, &row.created_at, &row.revoked_at],
        )
        .await?;
        Ok(())
    }

    async fn anex_counterparty_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<AnexCounterpartyRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {CP_COLUMNS} FROM anex_counterparties WHERE token_hash = $1"),
            &[&token_hash],
        )
        .await?
        .map(|r| cp_of(&r))
        .transpose()
    }

    async fn anex_counterparties(&self) -> Result<Vec<AnexCounterpartyRow>, StoreError> {
        self.query(
            &format!("SELECT {CP_COLUMNS} FROM anex_counterparties ORDER BY created_at, id"),
            &[],
        )
        .await?
        .iter()
        .map(cp_of)
        .collect()
    }

    async fn revoke_anex_counterparty(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        Ok(self
            .execute(
                "UPDATE anex_counterparties SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
                &[&id, &at],
            )
            .await?
            == 1)
    }

    async fn set_anex_file(
        &self,
        org_handle: &str,
        kind: AnexFile,
        json: &str,
    ) -> Result<bool, StoreError> {
        if self
            .query_opt("SELECT 1 FROM orgs WHERE handle = $1", &[&org_handle])
            .await?
            .is_none()
        {
            return Ok(false);
        }
        let sql = match kind {
            AnexFile::Policy => "INSERT INTO anex_files (org_handle, policy) VALUES ($1, $2) ON CONFLICT (org_handle) DO UPDATE SET policy = excluded.policy",
            AnexFile::Data => "INSERT INTO anex_files (org_handle, data) VALUES ($1, $2) ON CONFLICT (org_handle) DO UPDATE SET data = excluded.data",
        };
        self.execute(sql, &[&org_handle, &json]).await?;
        Ok(true)
    }

    async fn anex_files(
        &self,
        org_handle: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        match self
            .query_opt(
                "SELECT policy, data FROM anex_files WHERE org_handle = $1",
                &[&org_handle],
            )
            .await?
        {
            Some(r) => Ok((r.try_get(0)?, r.try_get(1)?)),
            None => Ok((None, None)),
        }
    }

    async fn anex_conversation(
        &self,
        context_id: &str,
    ) -> Result<Option<AnexConversationRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {CONV_COLUMNS} FROM anex_conversations WHERE context_id = $1"),
            &[&context_id],
        )
        .await?
        .map(|r| conv_of(&r))
        .transpose()
    }

    async fn anex_conversation_used(
        &self,
        org_handle: &str,
        counterparty_id: &str,
        conversation_id: &str,
    ) -> Result<bool, StoreError> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM anex_conversations WHERE org_handle = $1 AND counterparty_id = $2 AND conversation_id = $3",
                &[&org_handle, &counterparty_id, &conversation_id],
            )
            .await?
            .is_some())
    }

    async fn anex_conversations(
        &self,
        org_handle: &str,
    ) -> Result<Vec<AnexConversationRow>, StoreError> {
        self.query(
            &format!("SELECT {CONV_COLUMNS} FROM anex_conversations WHERE org_handle = $1 ORDER BY created_at, context_id"),
            &[&org_handle],
        )
        .await?
        .iter()
        .map(conv_of)
        .collect()
    }

    async fn anex_decision(
        &self,
        decision_id: &str,
    ) -> Result<Option<AnexDecisionRow>, StoreError> {
        self.query_opt(
            "SELECT decision_id, approver_id, context_id, body_sha256, outcome, detail, received_at FROM anex_decisions WHERE decision_id = $1",
            &[&decision_id],
        )
        .await?
        .map(|r| {
            Ok(AnexDecisionRow {
                decision_id: r.try_get(0)?,
                approver_id: r.try_get(1)?,
                context_id: r.try_get(2)?,
                body_sha256: r.try_get(3)?,
                outcome: r.try_get(4)?,
                detail: r.try_get(5)?,
                received_at: r.try_get(6)?,
            })
        })
        .transpose()
    }

    async fn anex_commit(&self, c: &AnexCommit) -> Result<(), CommitError> {
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
}
