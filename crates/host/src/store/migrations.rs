//! The migrations both stores share, written once: each is SQL with a few
//! tokens for the types the dialects spell differently, rendered for each.
//! SQLite runs `FIRST` and `FIRST_CHANGES` as its versions 1 and 2,
//! PostgreSQL both (with its shared rate-limit table) as its version 1, as
//! each was released; `SHARED` follows in both. A new migration is added to
//! `SHARED`, once, and `tests/all/schema.rs` checks the two schemas stay
//! the same. A step only one dialect runs ([`Step::Postgres`]: a
//! server-side function, which SQLite has not) is skipped by the other, so
//! each dialect's own list stays append-only and SQLite's versions are not
//! moved by it.

use super::sql::Dialect;

/// The first schema: SQLite's version 1 and (with `FIRST_CHANGES`)
/// PostgreSQL's version 1.
pub(crate) const FIRST: &str = r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE orgs (
        handle TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        sandbox {bool} NOT NULL DEFAULT {false},
        disabled {bool} NOT NULL DEFAULT {false},
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
        expires_at {big} NOT NULL,
        used_at TEXT
    );
    CREATE TABLE nonces (
        principal TEXT NOT NULL,
        nonce TEXT NOT NULL,
        expires_at {big} NOT NULL,
        PRIMARY KEY (principal, nonce)
    ){without_rowid};
    CREATE INDEX nonces_expiry ON nonces(expires_at);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents(id),
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        sandbox {bool} NOT NULL,
        status TEXT NOT NULL,
        opened_at TEXT NOT NULL,
        closed_at TEXT,
        event_count {big} NOT NULL,
        chain_head TEXT NOT NULL,
        standing_seq {big},
        buyer_rounds INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_org ON sessions(org_handle);
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq {big} NOT NULL,
        event_hash TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ){without_rowid};
    CREATE TABLE pending (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        ref TEXT NOT NULL,
        seq {big} NOT NULL,
        answers TEXT,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        approvals_required INTEGER NOT NULL,
        draft {bool} NOT NULL,
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
        body {bytes} NOT NULL,
        body_sha256 TEXT NOT NULL,
        signed_headers TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        received_at TEXT NOT NULL
    );
    INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at)
        VALUES ('sandbox', 'Fabrikam Industries', {true}, {false}, NULL, {now});
    "#;

/// The first schema's changes: the write path compares a session's version
/// instead of holding a transaction across the request; approvals keep the
/// order they were given in. SQLite's version 2; part of PostgreSQL's 1.
pub(crate) const FIRST_CHANGES: &str = r#"
    ALTER TABLE sessions ADD COLUMN version {big} NOT NULL DEFAULT 0;
    ALTER TABLE approvals ADD COLUMN ordinal INTEGER NOT NULL DEFAULT 0;
    "#;

/// One migration after the first schema.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// Run by both dialects, rendered for each.
    Both(&'static str),
    /// Run by PostgreSQL only (SQLite skips it and does not count it).
    Postgres(&'static str),
}

impl Step {
    /// The step as `dialect` runs it, or `None` when it does not run it.
    pub(crate) fn for_dialect(self, dialect: Dialect) -> Option<String> {
        match (self, dialect) {
            (Step::Both(sql), _) => Some(render(sql, dialect)),
            (Step::Postgres(sql), Dialect::Postgres) => Some(render(sql, dialect)),
            (Step::Postgres(_), Dialect::Sqlite) => None,
        }
    }
}

/// How many of [`SHARED`]'s steps `dialect` runs (for its latest version).
pub(crate) const fn shared_steps(dialect: Dialect) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < SHARED.len() {
        if matches!(
            (SHARED[i], dialect),
            (Step::Both(_), _) | (Step::Postgres(_), Dialect::Postgres)
        ) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Every shared step `dialect` runs, in order, as it runs it.
pub(crate) fn shared_for(dialect: Dialect) -> impl Iterator<Item = String> {
    SHARED
        .iter()
        .filter_map(move |step| step.for_dialect(dialect))
}

/// The steps after the first schema, in order (SQLite's versions 3 to 8,
/// PostgreSQL's 2 to 8).
pub(crate) const SHARED: &[Step] = &[
    // The gate (docs/gate-api.md): the org's own agents, their enrollment
    // codes, mirrored sessions keyed by (org, protocol, session id), their
    // messages, the agents' requests, receipts and decisions.
    Step::Both(GATE_SCHEMA),
    // ANEX over A2A (docs/anex-binding.md): counterparties and their token
    // hashes, each org's ANEX policy and data set, conversations (one per
    // A2A context, its document) and the decisions on them.
    Step::Both(ANEX_SCHEMA),
    // A vendor's names stand unverified until an admin verifies them, and
    // every registration of a key is kept (its proof is replayable). Agents
    // an admin verified before keep their names verified.
    Step::Both(
        r#"
    ALTER TABLE agents ADD COLUMN names_verified {bool} NOT NULL DEFAULT {false};
    UPDATE agents SET names_verified = {true} WHERE status = 'verified';
    CREATE TABLE agent_registrations (
        agent_id TEXT NOT NULL REFERENCES agents(id),
        ordinal {big} NOT NULL,
        agent_name TEXT NOT NULL,
        vendor_name TEXT NOT NULL,
        contact_email TEXT NOT NULL,
        registered_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, ordinal)
    );
    INSERT INTO agent_registrations (agent_id, ordinal, agent_name, vendor_name, contact_email, registered_at)
        SELECT id, 1, agent_name, vendor_name, contact_email, registered_at FROM agents;
    "#,
    ),
    // The policy of authority (docs/authority.md): every version an org
    // loaded, its text, who loaded it and when; a load never replaces one.
    // A gate agent may name the approver who owns it (its enrollment code
    // carries the email to the agent): an owner is never the only
    // approval of its agent's request. An ANP pending decision and a gate
    // request keep the route they were given (JSON), and each approval or
    // receipt the step and role it counted at.
    Step::Both(
        r#"
    CREATE TABLE authority_policies (
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        version {big} NOT NULL,
        text TEXT NOT NULL,
        loaded_by TEXT NOT NULL,
        loaded_at TEXT NOT NULL,
        PRIMARY KEY (org_handle, version)
    );
    ALTER TABLE gate_codes ADD COLUMN owner_email TEXT;
    ALTER TABLE gate_agents ADD COLUMN owner_email TEXT;
    ALTER TABLE pending ADD COLUMN route TEXT;
    ALTER TABLE approvals ADD COLUMN step INTEGER;
    ALTER TABLE approvals ADD COLUMN role TEXT;
    ALTER TABLE gate_requests ADD COLUMN route TEXT;
    ALTER TABLE gate_receipts ADD COLUMN step INTEGER;
    ALTER TABLE gate_receipts ADD COLUMN role TEXT;
    "#,
    ),
    // PostgreSQL: a commit of an ANP session (and, for an append, the log
    // it answers with) as one call of one server-side function, instead of
    // BEGIN, a statement per row, COMMIT and a read of the log.
    Step::Postgres(super::postgres::COMMIT_FUNCTION), // An approver may move to a new key (docs/approver-api.md, "Moving to
    // a new key"): the old row is retired at a moment (not revoked: its
    // approvals still count and verify), a new row holds the new key, and
    // the statement both keys signed is kept, so anyone can follow the
    // approver from key to key.
    Step::Both(
        r#"
    ALTER TABLE approvers ADD COLUMN retired_at TEXT;
    CREATE TABLE approver_rotations (
        old_id TEXT PRIMARY KEY REFERENCES approvers(id),
        new_id TEXT NOT NULL UNIQUE REFERENCES approvers(id),
        statement TEXT NOT NULL,
        consent TEXT NOT NULL,
        proof TEXT NOT NULL,
        rotated_at TEXT NOT NULL
    );
    "#,
    ),
    // A gate request's deadline is the organization's own: an approver may
    // extend it, and each extension (who, from, to, why, when) is kept with
    // the request (JSON).
    Step::Both("ALTER TABLE gate_requests ADD COLUMN extensions TEXT;"),
    // Stand-ins (docs/authority.md): an approver lets another act for them
    // in some roles for a stated span of days. The signed request and the
    // statement signed are kept whole; the window is kept in UTC seconds
    // too, for the decisions that ask which are in force. An ANP approval
    // made by a stand-in names whom it was for.
    Step::Both(
        r#"
    CREATE TABLE delegations (
        id TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        from_id TEXT NOT NULL REFERENCES approvers(id),
        from_email TEXT NOT NULL,
        to_email TEXT NOT NULL,
        request TEXT NOT NULL,
        statement TEXT NOT NULL,
        starts_at {big} NOT NULL,
        ends_at {big} NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        revoked_by TEXT
    );
    CREATE INDEX delegations_org ON delegations(org_handle, ends_at);
    ALTER TABLE approvals ADD COLUMN for_email TEXT;
    "#,
    ),
    // PostgreSQL: the commit function stores whom an approval was for.
    Step::Postgres(super::postgres::COMMIT_FUNCTION_V2),
    // MCP (docs/mcp.md): a gate agent may call the host's MCP endpoint
    // with a bearer token an admin issued it; only the token's SHA-256 is
    // kept, and a token is revoked on its own or with its agent.
    Step::Both(
        r#"
    CREATE TABLE mcp_tokens (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES gate_agents(id),
        token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    "#,
    ),
];

/// Each token and how SQLite and PostgreSQL spell it. SQLite's spelling
/// renders each step to the very text it was released with.
const TOKENS: &[(&str, &str, &str)] = &[
    ("{big}", "INTEGER", "BIGINT"),
    ("{bytes}", "BLOB", "BYTEA"),
    ("{bool}", "INTEGER", "BOOLEAN"),
    ("{false}", "0", "FALSE"),
    ("{true}", "1", "TRUE"),
    ("{without_rowid}", " WITHOUT ROWID", ""),
    (
        "{now}",
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
    ),
];

/// `step` as `dialect` runs it.
pub(crate) fn render(step: &str, dialect: Dialect) -> String {
    TOKENS
        .iter()
        .fold(step.to_owned(), |sql, (token, sqlite, postgres)| {
            sql.replace(
                token,
                match dialect {
                    Dialect::Sqlite => sqlite,
                    Dialect::Postgres => postgres,
                },
            )
        })
}

/// The gate's tables.
const GATE_SCHEMA: &str = r#"
    CREATE TABLE gate_codes (
        code_hash TEXT PRIMARY KEY,
        org_handle TEXT NOT NULL REFERENCES orgs(handle),
        name TEXT NOT NULL,
        protocol TEXT NOT NULL,
        expires_at {big} NOT NULL,
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
        head_count {big} NOT NULL,
        head_hash TEXT NOT NULL,
        state TEXT NOT NULL,
        created_sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version {big} NOT NULL,
        PRIMARY KEY (org_handle, protocol, session_id)
    );
    CREATE TABLE gate_messages (
        org_handle TEXT NOT NULL,
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        seq {big} NOT NULL,
        hash TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (org_handle, protocol, session_id, seq),
        FOREIGN KEY (org_handle, protocol, session_id) REFERENCES gate_sessions(org_handle, protocol, session_id)
    ){without_rowid};
    CREATE TABLE gate_requests (
        org_handle TEXT NOT NULL,
        protocol TEXT NOT NULL,
        session_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        message_hash TEXT NOT NULL,
        seq {big} NOT NULL,
        kind TEXT NOT NULL,
        action TEXT NOT NULL,
        amount TEXT NOT NULL,
        threshold TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        expires_unix {big} NOT NULL,
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
        body {bytes} NOT NULL,
        body_sha256 TEXT NOT NULL,
        signed_headers TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        received_at TEXT NOT NULL
    );
"#;

/// ANEX over A2A's tables (the same in both dialects).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_rendered_in_both_dialects() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let steps = [FIRST, FIRST_CHANGES]
                .iter()
                .map(|step| render(step, dialect))
                .chain(shared_for(dialect));
            for sql in steps {
                assert!(!sql.contains('{'), "{dialect:?} left a token: {sql}");
            }
        }
        assert!(render(GATE_SCHEMA, Dialect::Sqlite).contains("body BLOB NOT NULL"));
        assert!(render(GATE_SCHEMA, Dialect::Postgres).contains("body BYTEA NOT NULL"));
    }
}
