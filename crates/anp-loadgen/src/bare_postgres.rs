//! The PostgreSQL baseline: how fast this machine's PostgreSQL commits one
//! small row per transaction at the host's durability (`synchronous_commit
//! = on`: each commit is flushed to disk before it returns), from as many
//! concurrent connections as the load has agents, with no HTTP, JSON or
//! signatures. Concurrent commits share WAL flushes (group commit), as the
//! host's do.

use std::time::{Duration, Instant};

/// Inserts up to `rows` rows over `connections` connections, each row its
/// own transaction, until done or `budget` runs out; answers how many were
/// committed, how long it took, and the server's `synchronous_commit`.
pub async fn insert_rows(
    url: &str,
    connections: u32,
    rows: usize,
    budget: Duration,
) -> Result<(usize, Duration, String), tokio_postgres::Error> {
    let (setup, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    setup
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS bare_events (
                session_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL,
                payload TEXT NOT NULL, event_hash TEXT NOT NULL, at TEXT NOT NULL,
                PRIMARY KEY (session_id, seq))",
        )
        .await?;
    let synchronous: String = setup
        .query_one("SHOW synchronous_commit", &[])
        .await?
        .get(0);
    let per_connection = rows.div_ceil(connections.max(1) as usize);
    let started = Instant::now();
    let deadline = started + budget;
    let mut tasks = Vec::new();
    for c in 0..connections {
        let url = url.to_owned();
        tasks.push(tokio::spawn(async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
            tokio::spawn(connection);
            let insert = client
                .prepare(
                    "INSERT INTO bare_events (session_id, seq, kind, payload, event_hash, at)
                     VALUES ($1, $2, 'message', $3, $4, '2026-01-01T00:00:00.000Z')",
                )
                .await?;
            let session = format!("bench-{c}");
            let payload = r#"{"body":"load generator message, about the size of a short note"}"#;
            let hash = "0".repeat(64);
            let mut done = 0usize;
            while done < per_connection && Instant::now() < deadline {
                client
                    .execute(&insert, &[&session, &(done as i64 + 1), &payload, &hash])
                    .await?;
                done += 1;
            }
            Ok::<usize, tokio_postgres::Error>(done)
        }));
    }
    let mut total = 0;
    for task in tasks {
        // A task that panicked committed nothing we can count.
        if let Ok(done) = task.await {
            total += done?;
        }
    }
    Ok((total, started.elapsed(), synchronous))
}
