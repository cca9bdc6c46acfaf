-- The whole schema of countersign-host schema version 1 (the release before
-- version 2), as its migration wrote it: a fixture for the upgrade test.
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
