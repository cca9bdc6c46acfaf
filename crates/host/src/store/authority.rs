//! The policy of authority's versions, written once for both stores: a load
//! inserts the next version of the org's policy under its primary key
//! `(org, version)`, so two loads at once never share a number (the second
//! fails and is run again), and no version is ever replaced.

use async_trait::async_trait;

use super::postgres::{pg_run, PgStore};
use super::sql::{i, u, Conn, Row};
use super::sqlite::{lite_run, SqliteStore};
use super::*;

fn version_of(r: &Row<'_, '_>) -> Result<AuthorityRow, StoreError> {
    Ok(AuthorityRow {
        org_handle: r.get(0)?,
        version: u(r.get(1)?),
        text: r.get(2)?,
        loaded_by: r.get(3)?,
        loaded_at: r.get(4)?,
    })
}

fn present(_: &Row<'_, '_>) -> Result<(), StoreError> {
    Ok(())
}

fn number_of(r: &Row<'_, '_>) -> Result<i64, StoreError> {
    r.get(0)
}

const COLUMNS: &str = "org_handle, version, text, loaded_by, loaded_at";

fn delegation_of(r: &Row<'_, '_>) -> Result<DelegationRow, StoreError> {
    Ok(DelegationRow {
        id: r.get(0)?,
        org_handle: r.get(1)?,
        from_id: r.get(2)?,
        from_email: r.get(3)?,
        to_email: r.get(4)?,
        request: r.get(5)?,
        statement: r.get(6)?,
        starts_at: r.get(7)?,
        ends_at: r.get(8)?,
        created_at: r.get(9)?,
        revoked_at: r.get(10)?,
        revoked_by: r.get(11)?,
    })
}

const DELEGATION: &str = "id, org_handle, from_id, from_email, to_email, request, statement, starts_at, ends_at, created_at, revoked_at, revoked_by";

macro_rules! authority_repo {
    ($store:ty, $run:ident) => {
        #[async_trait]
        impl AuthorityRepo for $store {
            async fn load_authority(
                &self,
                org_handle: &str,
                text: &str,
                loaded_by: &str,
                loaded_at: &str,
            ) -> Result<Option<u64>, StoreError> {
                let (org, text, by, at) = (
                    org_handle.to_owned(),
                    text.to_owned(),
                    loaded_by.to_owned(),
                    loaded_at.to_owned(),
                );
                $run!(self, tx, |db| {
                    if db
                        .row("SELECT 1 FROM orgs WHERE handle = ?1", &[&org], present)
                        .await?
                        .is_none()
                    {
                        return Ok(None);
                    }
                    let last = db
                        .row(
                            "SELECT COALESCE(MAX(version), 0) FROM authority_policies WHERE org_handle = ?1",
                            &[&org],
                            number_of,
                        )
                        .await?
                        .unwrap_or(0);
                    let version = u(last) + 1;
                    db.exec(
                        "INSERT INTO authority_policies (org_handle, version, text, loaded_by, loaded_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                        &[&org, &i(version), &text, &by, &at],
                    )
                    .await?;
                    Ok(Some(version))
                })
            }

            async fn authority(
                &self,
                org_handle: &str,
                version: Option<u64>,
            ) -> Result<Option<AuthorityRow>, StoreError> {
                let org = org_handle.to_owned();
                $run!(self, read, |db| {
                    match version {
                        Some(v) => {
                            db.row(
                                &format!("SELECT {COLUMNS} FROM authority_policies WHERE org_handle = ?1 AND version = ?2"),
                                &[&org, &i(v)],
                                version_of,
                            )
                            .await
                        }
                        None => {
                            db.row(
                                &format!("SELECT {COLUMNS} FROM authority_policies WHERE org_handle = ?1 ORDER BY version DESC LIMIT 1"),
                                &[&org],
                                version_of,
                            )
                            .await
                        }
                    }
                })
            }

            async fn insert_delegation(
                &self,
                row: &DelegationRow,
            ) -> Result<Result<(), DelegationRow>, StoreError> {
                let d = row.clone();
                $run!(self, tx, |db| {
                    if let Some(before) = db
                        .row(
                            &format!("SELECT {DELEGATION} FROM delegations WHERE id = ?1"),
                            &[&d.id],
                            delegation_of,
                        )
                        .await?
                    {
                        return Ok(Err(before));
                    }
                    db.exec(
                        &format!("INSERT INTO delegations ({DELEGATION}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"),
                        &[
                            &d.id, &d.org_handle, &d.from_id, &d.from_email, &d.to_email,
                            &d.request, &d.statement, &d.starts_at, &d.ends_at, &d.created_at,
                            &d.revoked_at, &d.revoked_by,
                        ],
                    )
                    .await?;
                    Ok(Ok(()))
                })
            }

            async fn delegations_of(
                &self,
                org_handle: &str,
                email: &str,
            ) -> Result<Vec<DelegationRow>, StoreError> {
                let (org, email) = (org_handle.to_owned(), email.to_owned());
                $run!(self, read, |db| {
                    db.rows(
                        &format!("SELECT {DELEGATION} FROM delegations WHERE org_handle = ?1 AND (from_email = ?2 OR to_email = ?2) ORDER BY created_at DESC, id"),
                        &[&org, &email],
                        delegation_of,
                    )
                    .await
                })
            }

            async fn delegations_in_force(
                &self,
                org_handle: &str,
                now: i64,
            ) -> Result<Vec<DelegationRow>, StoreError> {
                let org = org_handle.to_owned();
                $run!(self, read, |db| {
                    db.rows(
                        &format!("SELECT {DELEGATION} FROM delegations WHERE org_handle = ?1 AND revoked_at IS NULL AND starts_at <= ?2 AND ends_at > ?2 ORDER BY created_at, id"),
                        &[&org, &now],
                        delegation_of,
                    )
                    .await
                })
            }

            async fn revoke_delegation(
                &self,
                org_handle: &str,
                id: &str,
                by: &str,
                at: &str,
            ) -> Result<Option<DelegationRow>, StoreError> {
                let (org, id, by, at) = (
                    org_handle.to_owned(),
                    id.to_owned(),
                    by.to_owned(),
                    at.to_owned(),
                );
                $run!(self, tx, |db| {
                    db.exec(
                        "UPDATE delegations SET revoked_at = ?4, revoked_by = ?3 WHERE org_handle = ?1 AND id = ?2 AND (from_email = ?3 OR to_email = ?3) AND revoked_at IS NULL",
                        &[&org, &id, &by, &at],
                    )
                    .await?;
                    db.row(
                        &format!("SELECT {DELEGATION} FROM delegations WHERE org_handle = ?1 AND id = ?2 AND (from_email = ?3 OR to_email = ?3)"),
                        &[&org, &id, &by],
                        delegation_of,
                    )
                    .await
                })
            }
        }
    };
}

authority_repo!(SqliteStore, lite_run);
authority_repo!(PgStore, pg_run);
