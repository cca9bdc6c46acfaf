//! Versioned schema migrations, tracked in SQLite's `user_version`: each
//! entry runs once, in order, inside a transaction.

use rusqlite::Connection;

/// Every migration, in order; index + 1 is the schema version it produces.
/// Never edit a released entry: add a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    r#"
    CREATE TABLE hosts (
        host_id TEXT PRIMARY KEY,
        protocol TEXT NOT NULL,
        url TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        sandbox INTEGER NOT NULL,
        approver_id TEXT NOT NULL,
        approver_email TEXT NOT NULL,
        platform_key TEXT NOT NULL,
        platform_fingerprint TEXT NOT NULL,
        approver_keys TEXT NOT NULL DEFAULT '[]',
        reachable INTEGER NOT NULL DEFAULT 1,
        last_error TEXT,
        last_poll_at TEXT,
        created_at TEXT NOT NULL
    );
    CREATE TABLE sessions (
        host_id TEXT NOT NULL REFERENCES hosts(host_id),
        session_id TEXT NOT NULL,
        protocol TEXT NOT NULL,
        status TEXT NOT NULL,
        sandbox INTEGER NOT NULL,
        vendor TEXT NOT NULL,
        pin_seq INTEGER NOT NULL DEFAULT 0,
        pin_hash TEXT NOT NULL,
        remote_count INTEGER NOT NULL DEFAULT 0,
        remote_head TEXT NOT NULL DEFAULT '',
        verification TEXT NOT NULL DEFAULT 'verified',
        dispute_detail TEXT,
        failing_seq INTEGER,
        failing_checks TEXT NOT NULL DEFAULT '[]',
        unproven TEXT NOT NULL DEFAULT '[]',
        last_total TEXT,
        currency TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id)
    );
    CREATE TABLE events (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event_hash TEXT NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        body TEXT NOT NULL,
        signature_state TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id, seq)
    );
    CREATE INDEX events_by_hash ON events (host_id, session_id, event_hash);
    CREATE TABLE pending (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        event_hash TEXT NOT NULL,
        body TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id, event_hash)
    );
    CREATE TABLE seen (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        event_hash TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id, event_hash)
    );
    CREATE TABLE notified (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id, subject)
    );
    CREATE TABLE decisions (
        decision_id TEXT PRIMARY KEY,
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        in_response_to TEXT NOT NULL,
        action TEXT NOT NULL,
        body TEXT NOT NULL,
        headers TEXT,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        at TEXT NOT NULL
    );
    CREATE INDEX decisions_by_offer ON decisions (host_id, session_id, in_response_to);
    "#,
    // 2: settings a person changes; what a decision answered and appended;
    // the evidence of each dispute and its acknowledgement.
    r#"
    CREATE TABLE settings (
        id TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    ALTER TABLE decisions ADD COLUMN proposal TEXT;
    ALTER TABLE decisions ADD COLUMN appended_seq INTEGER;
    ALTER TABLE decisions ADD COLUMN appended_hash TEXT;
    ALTER TABLE decisions ADD COLUMN appended_kind TEXT;
    CREATE TABLE disputes (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        detected_at TEXT NOT NULL,
        seq INTEGER NOT NULL,
        checks TEXT NOT NULL,
        detail TEXT NOT NULL,
        request TEXT,
        host_answer BLOB,
        acknowledged_note TEXT,
        acknowledged_at TEXT,
        acknowledged_by TEXT,
        PRIMARY KEY (host_id, session_id)
    );
    "#,
    // 3: every protocol's sessions. The counterparty in neutral words (an
    // ANP vendor's agent id, agent name and vendor name become its id, name
    // and organization), and the keys this console pinned for a session's
    // parties the first time it saw them (Concordia pins each party's key;
    // ANP vouches for the vendor's through the summary and pins none here).
    r#"
    ALTER TABLE sessions RENAME COLUMN vendor TO counterparty;
    UPDATE sessions SET counterparty = json_object(
        'id', json_extract(counterparty, '$.agent_id'),
        'name', json_extract(counterparty, '$.agent_name'),
        'organization', json_extract(counterparty, '$.vendor_name'),
        'fingerprint', json_extract(counterparty, '$.fingerprint'),
        'status', json_extract(counterparty, '$.status'))
    WHERE json_extract(counterparty, '$.agent_id') IS NOT NULL;
    ALTER TABLE sessions ADD COLUMN pinned_keys TEXT NOT NULL DEFAULT '{}';
    "#,
    // 4: receipts a person filed (an OANP arbiter's receipt and its session
    // log), byte for byte as imported; verified each time they are shown.
    r#"
    CREATE TABLE receipts (
        receipt_id TEXT PRIMARY KEY,
        protocol TEXT NOT NULL,
        file_name TEXT NOT NULL,
        body BLOB NOT NULL,
        log_file_name TEXT,
        log BLOB,
        sandbox INTEGER NOT NULL DEFAULT 0,
        imported_at TEXT NOT NULL
    );
    "#,
    // 5: what the host says about each request of a gate session (decided
    // at another console, by whom, why; expired), as its log last said it,
    // in the host's order (`position`).
    r#"
    CREATE TABLE host_requests (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        message_hash TEXT NOT NULL,
        position INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id, request_id)
    );
    CREATE INDEX host_requests_by_message ON host_requests (host_id, session_id, message_hash);
    "#,
    // 6: when the person allowed plain HTTP to a host off loopback (the lab
    // override at connect), kept with the host and shown on Hosts.
    r#"
    ALTER TABLE hosts ADD COLUMN plain_http_allowed_at TEXT;
    "#,
    // 7: expired proposals the person put away (local only: nothing was
    // sent, and the host's record is untouched).
    r#"
    CREATE TABLE dismissed (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        event_hash TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id, event_hash)
    );
    "#,
    // 8: receipts a person removed: the bytes go, this record of which
    // receipt it was (file, SHA-256, what it said), who and when stays.
    r#"
    CREATE TABLE receipt_removals (
        removal_id INTEGER PRIMARY KEY AUTOINCREMENT,
        receipt_id TEXT NOT NULL,
        protocol TEXT NOT NULL,
        file_name TEXT NOT NULL,
        receipt_sha256 TEXT NOT NULL,
        log_file_name TEXT,
        log_sha256 TEXT,
        sandbox INTEGER NOT NULL,
        imported_at TEXT NOT NULL,
        session_id TEXT,
        headline TEXT NOT NULL,
        removed_at TEXT NOT NULL,
        removed_by_name TEXT NOT NULL,
        removed_by_email TEXT NOT NULL
    );
    CREATE INDEX receipt_removals_by_receipt ON receipt_removals (receipt_id);
    "#,
    // 9: which approver key each host knows and each decision was signed
    // with, and every key this console has signed with (moving to a new
    // key retires one; the decisions it signed stay verifiable with it).
    // Before this, a console had one key: opening fills the blanks with it.
    r#"
    ALTER TABLE hosts ADD COLUMN key_fingerprint TEXT;
    ALTER TABLE decisions ADD COLUMN key_fingerprint TEXT;
    CREATE TABLE signing_keys (
        fingerprint TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        since TEXT NOT NULL,
        retired_at TEXT
    );
    "#,
    // 10: the host's record of every approval in an ANP session (who, as
    // which role at which step, for whom, under which rule), read when its
    // log carries an accept: what an ANP approval cannot say itself.
    r#"
    CREATE TABLE session_approvals (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        body TEXT NOT NULL,
        read_at TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id)
    );
    "#,
    // The desk's figures of each session, computed from the records below
    // and kept until any of them changes: each trigger forgets the
    // session's figures when a record they are read from is written.
    r#"
    CREATE TABLE desk_facts (
        host_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (host_id, session_id)
    );
    CREATE TRIGGER desk_sessions_insert AFTER INSERT ON sessions BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_sessions_update AFTER UPDATE ON sessions BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_events_insert AFTER INSERT ON events BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_events_delete AFTER DELETE ON events BEGIN
        DELETE FROM desk_facts WHERE host_id = OLD.host_id AND session_id = OLD.session_id; END;
    CREATE TRIGGER desk_decisions_insert AFTER INSERT ON decisions BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_decisions_update AFTER UPDATE ON decisions BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_approvals_insert AFTER INSERT ON session_approvals BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_approvals_update AFTER UPDATE ON session_approvals BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_requests_insert AFTER INSERT ON host_requests BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_requests_delete AFTER DELETE ON host_requests BEGIN
        DELETE FROM desk_facts WHERE host_id = OLD.host_id AND session_id = OLD.session_id; END;
    CREATE TRIGGER desk_notified_insert AFTER INSERT ON notified BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id AND session_id = NEW.session_id; END;
    CREATE TRIGGER desk_hosts_update AFTER UPDATE OF approver_email ON hosts BEGIN
        DELETE FROM desk_facts WHERE host_id = NEW.host_id; END;
    CREATE TABLE counterparty_links (
        link_id INTEGER PRIMARY KEY AUTOINCREMENT,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        linked_by TEXT NOT NULL,
        linked_at TEXT NOT NULL,
        unlinked_by TEXT,
        unlinked_at TEXT
    );
    "#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Brings `conn` to [`SCHEMA_VERSION`]; refuses a database from a newer build.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let current: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "database schema version {current} is newer than this build's {SCHEMA_VERSION}"
        )));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as u32 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_2_session_keeps_its_vendor_as_a_neutral_counterparty() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..2] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 2).unwrap();
        conn.execute_batch(
            r#"INSERT INTO hosts (host_id, protocol, url, label, sandbox, approver_id, approver_email,
                 platform_key, platform_fingerprint, created_at)
               VALUES ('h', 'ANP/0.1', 'http://x', 'x', 0, 'a', 'a@b', 'k', 'f', 't');
               INSERT INTO sessions (host_id, session_id, protocol, status, sandbox, vendor, pin_hash, updated_at)
               VALUES ('h', 's', 'ANP/0.1', 'open', 0,
                 '{"agent_id":"agt_1","agent_name":"Northwind Agent","vendor_name":"Northwind","fingerprint":"ab12","status":"verified"}',
                 'p', 't');"#,
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let (counterparty, keys): (String, String) = conn
            .query_row(
                "SELECT counterparty, pinned_keys FROM sessions WHERE session_id = 's'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let value: serde_json::Value = serde_json::from_str(&counterparty).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"id": "agt_1", "name": "Northwind Agent", "organization": "Northwind",
                               "fingerprint": "ab12", "status": "verified"})
        );
        assert_eq!(keys, "{}");
    }
}
