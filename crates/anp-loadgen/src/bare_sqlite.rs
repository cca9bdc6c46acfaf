//! The baseline: how fast this machine commits one small row per transaction
//! with the host's durability settings (WAL, `synchronous` as the host uses,
//! one IMMEDIATE transaction per append), with no HTTP, JSON or signatures.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// Inserts `rows` rows, each in its own IMMEDIATE transaction, until done or
/// `budget` runs out; returns how many were committed and how long it took.
pub fn insert_rows(
    path: &Path,
    synchronous: &str,
    rows: usize,
    budget: Duration,
) -> rusqlite::Result<(usize, Duration)> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS events (
            session_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
            payload TEXT NOT NULL, event_hash TEXT NOT NULL, at TEXT NOT NULL,
            PRIMARY KEY (session_id, seq))",
    )?;
    let payload = r#"{"body":"load generator message, about the size of a short note"}"#;
    let hash = "0".repeat(64);
    let started = Instant::now();
    let mut done = 0;
    while done < rows && started.elapsed() < budget {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO events (session_id, seq, kind, payload, event_hash, at)
             VALUES ('bench', ?1, 'message', ?2, ?3, '2026-01-01T00:00:00.000Z')",
            rusqlite::params![done as i64 + 1, payload, hash],
        )?;
        tx.commit()?;
        done += 1;
    }
    Ok((done, started.elapsed()))
}
