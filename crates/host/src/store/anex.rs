//! ANEX over A2A's repository, written once for both stores: a conversation
//! changes only by compare-and-swap on its version, ids are primary keys, so
//! processes sharing a database never apply two answers to one message.
//! Each dialect's `run!` says only where a statement runs (SQLite's read
//! pool or writer thread, a PostgreSQL connection or transaction).

use async_trait::async_trait;

use super::postgres::{pg_run, PgStore};
use super::sql::{i, u, Conn, Row};
use super::sqlite::{lite_run, SqliteStore};
use super::*;

macro_rules! cp_columns {
    () => {
        "id, org_handle, identity, name, relation, token_hash, created_at, revoked_at"
    };
}

fn cp_of(r: &Row<'_, '_>) -> Result<AnexCounterpartyRow, StoreError> {
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

macro_rules! conv_columns {
    () => {
        "context_id, org_handle, counterparty_id, conversation_id, doc, version, created_at, updated_at"
    };
}

fn conv_of(r: &Row<'_, '_>) -> Result<AnexConversationRow, StoreError> {
    Ok(AnexConversationRow {
        context_id: r.get(0)?,
        org_handle: r.get(1)?,
        counterparty_id: r.get(2)?,
        conversation_id: r.get(3)?,
        doc: r.get(4)?,
        version: u(r.get(5)?),
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

fn decision_of(r: &Row<'_, '_>) -> Result<AnexDecisionRow, StoreError> {
    Ok(AnexDecisionRow {
        decision_id: r.get(0)?,
        approver_id: r.get(1)?,
        context_id: r.get(2)?,
        body_sha256: r.get(3)?,
        outcome: r.get(4)?,
        detail: r.get(5)?,
        received_at: r.get(6)?,
    })
}

/// A row that is there (its columns unread).
fn present(_: &Row<'_, '_>) -> Result<(), StoreError> {
    Ok(())
}

fn files_of(r: &Row<'_, '_>) -> Result<(Option<String>, Option<String>), StoreError> {
    Ok((r.get(0)?, r.get(1)?))
}

/// The statements of one commit, inside the dialect's transaction.
async fn apply(db: &impl Conn, c: &AnexCommit) -> Result<(), CommitError> {
    let row = &c.conversation;
    let changed = match c.expected_version {
        None => {
            db.exec_in_commit(
                concat!(
                    "INSERT INTO anex_conversations (",
                    conv_columns!(),
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                ),
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
            .await?
        }
        Some(expected) => {
            db.exec_in_commit(
                "UPDATE anex_conversations SET doc = ?2, version = ?3, updated_at = ?4 WHERE context_id = ?1 AND version = ?5",
                &[&row.context_id, &row.doc, &i(row.version), &row.updated_at, &i(expected)],
            )
            .await?
        }
    };
    if changed != 1 {
        return Err(CommitError::Conflict);
    }
    if let Some(d) = &c.decision {
        db.exec_in_commit(
            "INSERT INTO anex_decisions (decision_id, approver_id, context_id, body_sha256, outcome, detail, received_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[&d.decision_id, &d.approver_id, &d.context_id, &d.body_sha256, &d.outcome, &d.detail, &d.received_at],
        )
        .await?;
    }
    Ok(())
}

/// The repository, once; instantiated below for each store with its `run!`.
macro_rules! anex_repo {
    ($store:ty, $run:ident) => {
        #[async_trait]
        impl AnexRepo for $store {
            async fn insert_anex_counterparty(
                &self,
                row: &AnexCounterpartyRow,
            ) -> Result<(), StoreError> {
                let row = row.clone();
                $run!(self, write, |db| {
                    db.exec(
                        concat!("INSERT INTO anex_counterparties (", cp_columns!(), ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
                        &[&row.id, &row.org_handle, &row.identity, &row.name, &row.relation, &row.token_hash, &row.created_at, &row.revoked_at],
                    )
                    .await?;
                    Ok(())
                })
            }

            async fn anex_counterparty_by_token(
                &self,
                token_hash: &str,
            ) -> Result<Option<AnexCounterpartyRow>, StoreError> {
                let hash = token_hash.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!("SELECT ", cp_columns!(), " FROM anex_counterparties WHERE token_hash = ?1"),
                        &[&hash],
                        cp_of,
                    )
                    .await
                })
            }

            async fn anex_counterparties(&self) -> Result<Vec<AnexCounterpartyRow>, StoreError> {
                $run!(self, read, |db| {
                    db.rows(
                        concat!("SELECT ", cp_columns!(), " FROM anex_counterparties ORDER BY created_at, id"),
                        &[],
                        cp_of,
                    )
                    .await
                })
            }

            async fn revoke_anex_counterparty(&self, id: &str, at: &str) -> Result<bool, StoreError> {
                let (id, at) = (id.to_owned(), at.to_owned());
                $run!(self, write, |db| {
                    Ok(db
                        .exec(
                            "UPDATE anex_counterparties SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                            &[&id, &at],
                        )
                        .await?
                        == 1)
                })
            }

            async fn set_anex_file(
                &self,
                org_handle: &str,
                kind: AnexFile,
                json: &str,
            ) -> Result<bool, StoreError> {
                let (org, json) = (org_handle.to_owned(), json.to_owned());
                $run!(self, write, |db| {
                    if db
                        .row("SELECT 1 FROM orgs WHERE handle = ?1", &[&org], present)
                        .await?
                        .is_none()
                    {
                        return Ok(false);
                    }
                    let sql = match kind {
                        AnexFile::Policy => "INSERT INTO anex_files (org_handle, policy) VALUES (?1, ?2) ON CONFLICT (org_handle) DO UPDATE SET policy = excluded.policy",
                        AnexFile::Data => "INSERT INTO anex_files (org_handle, data) VALUES (?1, ?2) ON CONFLICT (org_handle) DO UPDATE SET data = excluded.data",
                    };
                    db.exec(sql, &[&org, &json]).await?;
                    Ok(true)
                })
            }

            async fn anex_files(
                &self,
                org_handle: &str,
            ) -> Result<(Option<String>, Option<String>), StoreError> {
                let org = org_handle.to_owned();
                $run!(self, read, |db| {
                    Ok(db
                        .row(
                            "SELECT policy, data FROM anex_files WHERE org_handle = ?1",
                            &[&org],
                            files_of,
                        )
                        .await?
                        .unwrap_or((None, None)))
                })
            }

            async fn anex_conversation(
                &self,
                context_id: &str,
            ) -> Result<Option<AnexConversationRow>, StoreError> {
                let id = context_id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!("SELECT ", conv_columns!(), " FROM anex_conversations WHERE context_id = ?1"),
                        &[&id],
                        conv_of,
                    )
                    .await
                })
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
                $run!(self, read, |db| {
                    Ok(db
                        .row(
                            "SELECT 1 FROM anex_conversations WHERE org_handle = ?1 AND counterparty_id = ?2 AND conversation_id = ?3",
                            &[&org, &cp, &conv],
                            present,
                        )
                        .await?
                        .is_some())
                })
            }

            async fn anex_conversations(
                &self,
                org_handle: &str,
            ) -> Result<Vec<AnexConversationRow>, StoreError> {
                let org = org_handle.to_owned();
                $run!(self, read, |db| {
                    db.rows(
                        concat!("SELECT ", conv_columns!(), " FROM anex_conversations WHERE org_handle = ?1 ORDER BY created_at, context_id"),
                        &[&org],
                        conv_of,
                    )
                    .await
                })
            }

            async fn anex_conversations_awaiting(
                &self,
            ) -> Result<Vec<AnexConversationRow>, StoreError> {
                $run!(self, read, |db| {
                    // A pending ask is stored as `"pending":{…}` (an answered
                    // one as `"pending":null`); counterparty text that reads
                    // the same only adds a conversation the caller then
                    // finds has nothing pending.
                    db.rows(
                        concat!("SELECT ", conv_columns!(), " FROM anex_conversations WHERE doc LIKE '%\"pending\":{%' ORDER BY org_handle, created_at, context_id"),
                        &[],
                        conv_of,
                    )
                    .await
                })
            }

            async fn anex_decision(
                &self,
                decision_id: &str,
            ) -> Result<Option<AnexDecisionRow>, StoreError> {
                let id = decision_id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        "SELECT decision_id, approver_id, context_id, body_sha256, outcome, detail, received_at FROM anex_decisions WHERE decision_id = ?1",
                        &[&id],
                        decision_of,
                    )
                    .await
                })
            }

            async fn anex_commit(&self, commit: &AnexCommit) -> Result<(), CommitError> {
                let commit = commit.clone();
                $run!(self, commit, |db| apply(db, &commit).await)
            }
        }
    };
}

anex_repo!(SqliteStore, lite_run);
anex_repo!(PgStore, pg_run);
