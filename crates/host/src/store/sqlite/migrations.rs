//! SQLite's versioned schema migrations, tracked in `PRAGMA user_version`.
//! A database from a newer version is refused, never silently downgraded.

use rusqlite::Connection;

use crate::store::StoreError;

/// Each migration, in order; version N is `MIGRATIONS[N-1]`.
const MIGRATIONS: &[&str] = &[
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
    // 3: the gate (docs/gate-api.md): the org's own agents, their
    // enrollment codes, mirrored sessions keyed by (org, protocol, session
    // id), their messages, the agents' requests, receipts and decisions.
    GATE_SCHEMA,
    // 4: ANEX over A2A (docs/anex-binding.md): counterparties and their
    // token hashes, each org's ANEX policy and data set, conversations
    // (one per A2A context, its document) and the decisions on them.
    ANEX_SCHEMA,
    // 5: a vendor's names stand unverified until an admin verifies them,
    // and every registration of a key is kept (its proof is replayable).
    // Agents an admin verified before keep their names verified.
    r#"
    ALTER TABLE agents ADD COLUMN names_verified INTEGER NOT NULL DEFAULT 0;
    UPDATE agents SET names_verified = 1 WHERE status = 'verified';
    CREATE TABLE agent_registrations (
        agent_id TEXT NOT NULL REFERENCES agents(id),
        ordinal INTEGER NOT NULL,
        agent_name TEXT NOT NULL,
        vendor_name TEXT NOT NULL,
        contact_email TEXT NOT NULL,
        registered_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, ordinal)
    );
    INSERT INTO agent_registrations (agent_id, ordinal, agent_name, vendor_name, contact_email, registered_at)
        SELECT id, 1, agent_name, vendor_name, contact_email, registered_at FROM agents;
    "#,
];

/// The gate's tables (SQLite version 3).
const GATE_SCHEMA: &str = r#"
    CREATE TABLE gate_codes (
        code_hash TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        name TEXT NOT NULL,
        protocol TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at TEXT
    );
    CREATE TABLE gate_agents (
        id TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        protocol TEXT NOT NULL,
        name TEXT NOT NULL,
        public_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        callback_url TEXT,
        enrolled_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE gate_sessions (
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        agent_id TEXT NOT NULL REFERENCES gate_agents(id),
        self_party TEXT NOT NULL,
        counterparty_id TEXT NOT NULL,
        counterparty_name TEXT,
        counterparty_org TEXT,
        keys TEXT NOT NULL,
        head_count INTEGER NOT NULL,
        head_hash TEXT NOT NULL,
        state TEXT NOT NULL,
        created_sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (org_handle, protocol, session_id)
    );
    CREATE TABLE gate_messages (
        org_handle TEXT NOT NULL,
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (org_handle, protocol, session_id, seq),
        FOREIGN KEY (org_handle, protocol, session_id) REFERENCES gate_sessions(org_handle, protocol, session_id)
    ) WITHOUT ROWID;
    CREATE TABLE gate_requests (
        org_handle TEXT NOT NULL,
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        message_hash TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        action TEXT NOT NULL,
        amount TEXT NOT NULL,
        threshold TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        expires_unix INTEGER NOT NULL,
        status TEXT NOT NULL,
        approvals_required INTEGER NOT NULL,
        body_sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL,
        decided_at TEXT,
        reason TEXT,
        counter_terms TEXT,
        held_reason TEXT,
        PRIMARY KEY (org_handle, protocol, session_id, request_id),
        FOREIGN KEY (org_handle, protocol, session_id) REFERENCES gate_sessions(org_handle, protocol, session_id)
    );
    CREATE INDEX gate_requests_due ON gate_requests(status, expires_unix);
    CREATE TABLE gate_receipts (
        org_handle TEXT NOT NULL,
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        approver_id TEXT NOT NULL REFERENCES approvers(id),
        decision TEXT NOT NULL,
        receipt TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        PRIMARY KEY (org_handle, protocol, session_id, request_id, approver_id, decision)
    );
    CREATE TABLE gate_decisions (
        decision_id TEXT PRIMARY KEY,
        approver_id TEXT NOT NULL REFERENCES approvers(id),
        org_handle TEXT NOT NULL,
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        body BLOB NOT NULL,
        body_sha256 TEXT NOT NULL,
        signed_headers TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        received_at TEXT NOT NULL
    );
"#;

/// ANEX over A2A's tables (version 4).
const ANEX_SCHEMA: &str = r#"
    CREATE TABLE anex_counterparties (
        id TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        identity TEXT NOT NULL,
        name TEXT NOT NULL,
        relation TEXT,
        token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE anex_files (
        org_handle TEXT PRIMARY KEY REFERENCES orgs(handle),
        policy TEXT,
        data TEXT
    );
    CREATE TABLE anex_conversations (
        context_id TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        counterparty_id TEXT NOT NULL REFERENCES anex_counterparties(id),
        conversation_id TEXT NOT NULL,
        doc TEXT NOT NULL,
        version BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (org_handle, counterparty_id, conversation_id)
    );
    CREATE TABLE anex_decisions (
        decision_id TEXT PRIMARY KEY,
        approver_id TEXT NOT NULL REFERENCES approvers(id),
        context_id TEXT NOT NULL REFERENCES anex_conversations(context_id),
        body_sha256 TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        received_at TEXT NOT NULL
    );
"#;

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database up to [`LATEST_VERSION`], each step in a transaction.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > LATEST_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: LATEST_VERSION,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
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
