//! Plays a dishonest host operator: rewrites a session's stored log in the
//! host's SQLite database into another internally valid chain (the edited
//! offer re-signed by its vendor, every later hash recomputed, the session's
//! head moved). Only a console that pinned the old head can tell.

use std::path::Path;
use std::time::Duration;

use anp::keys::{self, SigningKey};
use rusqlite::{params, Connection};
use serde_json::Value;

use crate::{E2eError, Result};

/// Replaces the payload of event `seq` in `session_id` with `payload`,
/// re-signed with `vendor_key`, and re-links every event after it.
pub fn rewrite_event(
    host_db: &Path,
    session_id: &str,
    seq: u64,
    payload: Value,
    vendor_key: &SigningKey,
) -> Result<String> {
    let sql = |e: rusqlite::Error| E2eError::Unexpected(format!("host database: {e}"));
    let mut conn = Connection::open(host_db).map_err(sql)?;
    conn.busy_timeout(Duration::from_secs(30)).map_err(sql)?;
    let tx = conn.transaction().map_err(sql)?;
    let mut events: Vec<(u64, Value)> = {
        let mut statement = tx
            .prepare("SELECT seq, body FROM events WHERE session_id = ?1 ORDER BY seq")
            .map_err(sql)?;
        let rows = statement
            .query_map(params![session_id], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(sql)?;
        let mut events = Vec::new();
        for row in rows {
            let (seq, body) = row.map_err(sql)?;
            let body: Value = serde_json::from_str(&body)
                .map_err(|e| E2eError::Unexpected(format!("event body: {e}")))?;
            events.push((seq as u64, body));
        }
        events
    };
    let mut prev = anp::signed::GENESIS_HASH.to_owned();
    let mut head = prev.clone();
    for (event_seq, body) in events.iter_mut() {
        if *event_seq == seq {
            let kind = body["kind"].as_str().unwrap_or_default().to_owned();
            let payload_hash = anp::canonical::canonical_hash(&payload);
            let signature = keys::sign_b64(
                vendor_key,
                anp::signed::authorship_string(&kind, &payload_hash).as_bytes(),
            );
            body["payload"] = payload.clone();
            body["payload_hash"] = Value::String(payload_hash);
            body["signature"] = Value::String(signature);
            body["signer"] = Value::String(keys::fingerprint(&vendor_key.verifying_key()));
        }
        if *event_seq >= seq {
            body["prev_hash"] = Value::String(prev.clone());
            let text = |name: &str| body[name].as_str().unwrap_or_default().to_owned();
            let hash = anp::signed::event_hash(
                session_id,
                *event_seq,
                &text("actor"),
                &text("kind"),
                &text("payload_hash"),
                &prev,
                &text("at"),
            );
            body["event_hash"] = Value::String(hash.clone());
            tx.execute(
                "UPDATE events SET event_hash = ?1, body = ?2 WHERE session_id = ?3 AND seq = ?4",
                params![hash, body.to_string(), session_id, *event_seq as i64],
            )
            .map_err(sql)?;
        }
        prev = body["event_hash"].as_str().unwrap_or_default().to_owned();
        head = prev.clone();
    }
    tx.execute(
        "UPDATE sessions SET chain_head = ?1 WHERE id = ?2",
        params![head, session_id],
    )
    .map_err(sql)?;
    tx.commit().map_err(sql)?;
    Ok(head)
}

/// The embedded sandbox host's database inside a console data directory:
/// the SQLite file that holds the host's `approvers` and `events` tables.
pub fn find_host_db(data_dir: &Path) -> Option<std::path::PathBuf> {
    let mut stack = vec![data_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).ok()?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if is_host_db(&path) {
                return Some(path);
            }
        }
    }
    None
}

fn is_host_db(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name.ends_with("-wal") || name.ends_with("-shm") || name.ends_with("-journal") {
        return false;
    }
    let Ok(conn) = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return false;
    };
    conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('approvers', 'events', 'enrollment_codes')",
        [],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n == 3)
    .unwrap_or(false)
}
