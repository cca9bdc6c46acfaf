//! PostgreSQL's versioned schema migrations, tracked in
//! `countersign_schema`. Several host processes may start at once: the
//! migration runs under a transaction-scoped advisory lock, so one migrates
//! and the others find it done. A database from a newer version is refused.

use deadpool_postgres::Client;

use crate::store::migrations::{render, SHARED};
use crate::store::sql::Dialect;
use crate::store::StoreError;

/// PostgreSQL's own migrations, as released: version N is `OWN[N-1]`;
/// the shared ones (`store::migrations::SHARED`) follow.
const OWN: &[&str] = &[
    // 1: the schema of SQLite's version 2, and the shared rate-limit windows.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE orgs (
        handle TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        sandbox BOOLEAN NOT NULL DEFAULT false,
        disabled BOOLEAN NOT NULL DEFAULT false,
        policy TEXT,
        created_at TEXT NOT NULL
    );
    CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        public_key TEXT NOT NULL UNIQUE,
        fingerprint TEXT NOT NULL,
        agent_name TEXT NOT NULL,
        vendor_name TEXT NOT NULL,
        contact_email TEXT NOT NULL,
        status TEXT NOT NULL,
        registered_at TEXT NOT NULL
    );
    CREATE TABLE approvers (
        id TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        public_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        enrolled_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE enrollment_codes (
        code_hash TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at TEXT
    );
    CREATE TABLE nonces (
        principal TEXT NOT NULL,
        nonce TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (principal, nonce)
    );
    CREATE INDEX nonces_expiry ON nonces(expires_at);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents(id),
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        sandbox BOOLEAN NOT NULL,
        status TEXT NOT NULL,
        opened_at TEXT NOT NULL,
        closed_at TEXT,
        event_count BIGINT NOT NULL,
        chain_head TEXT NOT NULL,
        standing_seq BIGINT,
        buyer_rounds INTEGER NOT NULL DEFAULT 0,
        version BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_org ON sessions(org_handle);
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq BIGINT NOT NULL,
        event_hash TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE pending (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        ref TEXT NOT NULL,
        seq BIGINT NOT NULL,
        answers TEXT,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        approvals_required INTEGER NOT NULL,
        draft BOOLEAN NOT NULL,
        held_reason TEXT,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, ref)
    );
    CREATE TABLE approvals (
        session_id TEXT NOT NULL,
        ref TEXT NOT NULL,
        approver_id TEXT NOT NULL REFERENCES approvers(id),
        approval TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        PRIMARY KEY (session_id, ref, approver_id)
    );
    CREATE TABLE decisions (
        decision_id TEXT PRIMARY KEY,
        approver_id TEXT NOT NULL REFERENCES approvers(id),
        session_id TEXT NOT NULL REFERENCES sessions(id),
        body BYTEA NOT NULL,
        body_sha256 TEXT NOT NULL,
        signed_headers TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        received_at TEXT NOT NULL
    );
    -- Counters only: not worth a WAL write; a crash of the database resets them.
    CREATE UNLOGGED TABLE rate_windows (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (scope, key, window_start)
    );
    INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at)
        VALUES ('sandbox', 'Fabrikam Industries', true, false, NULL,
                to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
    "#,
];

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = (OWN.len() + SHARED.len()) as i64;

/// Every migration in order, as PostgreSQL runs it.
fn migrations() -> Vec<String> {
    OWN.iter()
        .map(|sql| (*sql).to_owned())
        .chain(SHARED.iter().map(|step| render(step, Dialect::Postgres)))
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
