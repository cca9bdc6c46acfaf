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
        }
    };
}

authority_repo!(SqliteStore, lite_run);
authority_repo!(PgStore, pg_run);
