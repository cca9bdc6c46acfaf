//! SQLite's versioned schema migrations, tracked in `PRAGMA user_version`.
//! A database from a newer version is refused, never silently downgraded.

use rusqlite::Connection;

use crate::store::migrations::{render, SHARED};
use crate::store::sql::Dialect;
use crate::store::StoreError;

/// SQLite's own migrations, as released: version N is `OWN[N-1]`; the
/// shared ones (`store::migrations::SHARED`) follow.
const OWN: &[&str] = &[
    // 1: the whole first schema.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE orgs (
        handle TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        sandbox INTEGER NOT NULL DEFAULT 0,
        disabled INTEGER NOT NULL DEFAULT 0,
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
        expires_at INTEGER NOT NULL,
        used_at TEXT
    );
    CREATE TABLE nonces (
        principal TEXT NOT NULL,
        nonce TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (principal, nonce)
    ) WITHOUT ROWID;
    CREATE INDEX nonces_expiry ON nonces(expires_at);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents(id),
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        sandbox INTEGER NOT NULL,
        status TEXT NOT NULL,
        opened_at TEXT NOT NULL,
        closed_at TEXT,
        event_count INTEGER NOT NULL,
        chain_head TEXT NOT NULL,
        standing_seq INTEGER,
        buyer_rounds INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_org ON sessions(org_handle);
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        event_hash TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE pending (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        ref TEXT NOT NULL,
        seq INTEGER NOT NULL,
        answers TEXT,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        approvals_required INTEGER NOT NULL,
        draft INTEGER NOT NULL,
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
        PRIMARY KEY (session_id, ref, approver_id)
    );
    CREATE TABLE decisions (
        decision_id TEXT PRIMARY KEY,
        approver_id TEXT NOT NULL REFERENCES approvers(id),
        session_id TEXT NOT NULL REFERENCES sessions(id),
        body BLOB NOT NULL,
        body_sha256 TEXT NOT NULL,
        signed_headers TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        received_at TEXT NOT NULL
    );
    INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at)
        VALUES ('sandbox', 'Fabrikam Industries', 1, 0, NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    "#,
    // 2: the write path compares a session's version instead of holding a
    // transaction across the request; approvals keep the order they were
    // given in. (Nonces move to their own file when the store opens: see
    // `SqliteStore::open`.)
    r#"
    ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE approvals ADD COLUMN ordinal INTEGER NOT NULL DEFAULT 0;
    "#,
];

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = (OWN.len() + SHARED.len()) as i64;

/// Every migration in order, as SQLite runs it.
fn migrations() -> Vec<String> {
    OWN.iter()
        .map(|sql| (*sql).to_owned())
        .chain(SHARED.iter().map(|step| render(step, Dialect::Sqlite)))
        .collect()
}

/// Brings the database up to [`LATEST_VERSION`], each step in a transaction.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > LATEST_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: LATEST_VERSION,
        });
    }
    for (index, sql) in migrations().iter().enumerate().skip(found.max(0) as usize) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the lock.
        let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if now > index as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
