//! PostgreSQL's versioned schema migrations, tracked in
//! `countersign_schema`. Several host processes may start at once: the
//! migration runs under a transaction-scoped advisory lock, so one migrates
//! and the others find it done. A database from a newer version is refused.

use deadpool_postgres::Client;

use crate::store::migrations::{render, shared_for, shared_steps, FIRST, FIRST_CHANGES};
use crate::store::sql::Dialect;
use crate::store::StoreError;

/// PostgreSQL's version 1 beyond the first schema and its changes: the
/// rate-limit windows every process shares.
const RATE_WINDOWS: &str = r#"
    -- Counters only: not worth a WAL write; a crash of the database resets them.
    CREATE UNLOGGED TABLE rate_windows (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (scope, key, window_start)
    );
"#;

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = 1 + shared_steps(Dialect::Postgres) as i64;

/// Every migration in order, as PostgreSQL runs it.
fn migrations() -> Vec<String> {
    // Version 1: the first schema with its changes and the rate windows.
    let first = [FIRST, FIRST_CHANGES]
        .iter()
        .map(|step| render(step, Dialect::Postgres))
        .collect::<String>()
        + RATE_WINDOWS;
    std::iter::once(first)
        .chain(shared_for(Dialect::Postgres))
        .collect()
}

/// An arbitrary constant naming countersign-host's migration lock.
const LOCK_KEY: i64 = 0x0063_6f75_6e74_6572;

/// Brings the database up to [`LATEST_VERSION`] in one transaction.
pub async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS countersign_schema (version BIGINT NOT NULL)")
        .await?;
    let found: i64 = match tx
        .query_opt("SELECT version FROM countersign_schema", &[])
        .await?
    {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO countersign_schema (version) VALUES (0)", &[])
                .await?;
            0
        }
    };
    if found > LATEST_VERSION {
        // Release the lock now: a dropped transaction only rolls back when
        // its connection next runs, and other processes wait on the lock.
        tx.rollback().await?;
        return Err(StoreError::NewerSchema {
            found,
            supported: LATEST_VERSION,
        });
    }
    for sql in migrations().iter().skip(found.max(0) as usize) {
        tx.batch_execute(sql).await?;
    }
    tx.execute(
        "UPDATE countersign_schema SET version = $1",
        &[&LATEST_VERSION],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
