//! What a signed ANP append costs PostgreSQL, counted by the store
//! (`Storage::traffic`), and that what the store keeps between requests to
//! save those statements (the agents it authenticated, the logs it
//! answered, the rate-limit leases) never lets a stale copy decide: an agent
//! revoked or verified behind the process's back is seen on its next
//! request; and that the NOTIFYs it merges lose nothing when it stops.
//! Always on PostgreSQL, whatever the suite's store.

use crate::common;

use common::*;
use countersign_host::store::{self, Commit, CommitError, StoredEvent};
use countersign_host::{Durability, Host, Target};
use serde_json::Value;

/// A host on a fresh PostgreSQL database.
async fn on_postgres() -> TestHost {
    limited_on_postgres(roomy_limits()).await
}

/// A host with `limits` on a fresh PostgreSQL database.
async fn limited_on_postgres(limits: countersign_host::Limits) -> TestHost {
    serving(&fresh_postgres().await, |dir| config_in(dir, limits)).await
}

/// A host serving the PostgreSQL database at `url`, configured by
/// `config` (given the host's temporary directory).
async fn serving(
    url: &str,
    config: impl FnOnce(&std::path::Path) -> countersign_host::HostConfig,
) -> TestHost {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::open(Target::Postgres(url.to_owned()), config(dir.path()))
        .await
        .unwrap();
    let running = host.spawn("127.0.0.1:0").await.unwrap();
    TestHost {
        running,
        dir,
        http: reqwest::Client::new(),
    }
}

fn statements(t: &TestHost) -> u64 {
    t.host()
        .store()
        .traffic()
        .expect("PostgreSQL counts its statements")
        .statements
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_costs_postgresql_three_statements_when_alone() {
    let t = on_postgres().await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (status, _) = t
        .submit(
            &vendor,
            &session,
            "message",
            serde_json::json!({ "body": "warm" }),
        )
        .await;
    assert_eq!(status, 200);
    let before = statements(&t);
    let appends = 10;
    for n in 0..appends {
        let (status, body) = t
            .submit(
                &vendor,
                &session,
                "message",
                serde_json::json!({ "body": format!("note {n}") }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        // Each answer carries the whole log, the first events included,
        // though the store read only the new ones.
        let events = body["log"]["events"].as_array().map_or(0, Vec::len);
        assert_eq!(events, 2 + 1 + n + 1, "the whole log in answer {n}");
    }
    // Per append: the nonce spent with the agent's count and its row read
    // again, together with the session's state and its count; the commit
    // with its log; and the NOTIFY telling other processes (one per append
    // when they come one at a time). Neither the agent's row nor the
    // address's count costs a statement of its own: it used to be six.
    let spent = statements(&t) - before;
    assert!(
        spent <= appends as u64 * 3 + 1,
        "{spent} statements for {appends} appends"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_revoked_behind_the_process_is_refused_on_its_next_request() {
    let t = on_postgres().await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    // The process now keeps the agent's row.
    let status_path = format!("/api/agent/v1/sessions/{session}");
    assert_eq!(
        t.signed(&vendor, "GET", &status_path, &Value::Null).await.0,
        200
    );
    // Another process (here, an operator's statement) revokes it.
    assert_eq!(
        t.sql_execute(
            "UPDATE agents SET status = 'revoked' WHERE id = $1",
            &[&vendor.id]
        )
        .await,
        1
    );
    let (status, body) = t.signed(&vendor, "GET", &status_path, &Value::Null).await;
    assert_eq!(status, 401, "{}", String::from_utf8_lossy(&body));
    let (status, _) = t
        .submit(
            &vendor,
            &session,
            "message",
            serde_json::json!({ "body": "still here?" }),
        )
        .await;
    assert_eq!(status, 401, "an append is refused too");
    let row = t
        .sql_row(
            "SELECT event_count FROM sessions WHERE id = $1",
            &[&session],
        )
        .await;
    assert_eq!(row, vec![SqlValue::Int(2)], "nothing was appended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_verified_behind_the_process_may_open_a_live_session_at_once() {
    let t = on_postgres().await;
    let vendor = t.register("Contoso").await;
    let org = t.host().create_org("Tailspin").await.unwrap().org_handle;
    // Kept as a sandbox agent...
    t.open_sandbox(&vendor).await;
    // ...and verified by another process.
    assert_eq!(
        t.sql_execute(
            "UPDATE agents SET status = 'verified', names_verified = TRUE WHERE id = $1",
            &[&vendor.id]
        )
        .await,
        1
    );
    let live = t.open_org(&vendor, &org).await;
    assert!(!live.is_empty());
}

/// An append's nonce, the agent's limit, the session's owner and the
/// session's limit are all judged from the one statement that spends the
/// nonce and reads the session, in the order they were judged before: a
/// replayed append is refused and counts nowhere, an intruder's append to
/// another agent's session is the uniform refusal and counts against
/// neither that session nor anything it could see, and the session's limit
/// still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_in_one_statement_refuses_as_before() {
    let mut limits = roomy_limits();
    limits.per_session = countersign_host::Limit {
        max: 3,
        window: std::time::Duration::from_secs(3600),
    };
    let t = limited_on_postgres(limits).await;
    let vendor = t.register("Contoso").await;
    let intruder = t.register("Fabrikam").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.open_sandbox(&intruder).await; // the intruder is remembered too
    let path = format!("/api/agent/v1/sessions/{session}/events");
    let payload = serde_json::json!({ "body": "once" });
    let body = serde_json::to_vec(&serde_json::json!({
        "kind": "message",
        "payload": payload,
        "signature": vendor.authorship("message", &payload),
    }))
    .unwrap();
    let headers = signed_headers(&vendor, "POST", &path, &body, &t.now(), "n-1");
    assert_eq!(t.raw("POST", &path, &headers, body.clone()).await.0, 200); // 1
    for _ in 0..3 {
        let (status, answer) = t.raw("POST", &path, &headers, body.clone()).await;
        assert_eq!(status, 401, "{}", String::from_utf8_lossy(&answer));
    }
    let count = || async {
        t.sql_row(
            "SELECT event_count FROM sessions WHERE id = $1",
            &[&session],
        )
        .await
    };
    assert_eq!(
        count().await,
        vec![SqlValue::Int(3)],
        "the replays appended nothing"
    );
    for n in 0..3 {
        let (status, _) = t
            .submit(
                &intruder,
                &session,
                "message",
                serde_json::json!({ "body": format!("x{n}") }),
            )
            .await;
        assert_eq!(status, 401, "not the intruder's session");
    }
    // Neither the replays nor the intruder counted against the session.
    for n in 2..=3 {
        let (status, answer) = t
            .submit(
                &vendor,
                &session,
                "message",
                serde_json::json!({ "body": format!("m{n}") }),
            )
            .await;
        assert_eq!(status, 200, "append {n}: {answer}");
    }
    let (status, answer) = t
        .submit(
            &vendor,
            &session,
            "message",
            serde_json::json!({ "body": "m4" }),
        )
        .await;
    assert_eq!(status, 429, "{answer}");
    assert_eq!(count().await, vec![SqlValue::Int(5)]);
}

/// A commit of one event planned on `session` as read, at `seq`.
fn append_at(session: &countersign_host::store::Session, seq: u64, tag: &str) -> Commit {
    let mut moved = session.clone();
    moved.event_count = seq;
    moved.chain_head = format!("sha256:{tag}");
    let mut commit = Commit::on(moved);
    commit.events.push(StoredEvent {
        seq,
        event_hash: format!("sha256:{tag}"),
        body: format!("{{\"tag\":\"{tag}\"}}"),
    });
    commit
}

fn tags(log: &countersign_host::store::LogSnapshot) -> Vec<String> {
    log.events
        .iter()
        .map(|e| {
            serde_json::from_str::<Value>(e)
                .ok()
                .and_then(|v| v["tag"].as_str().map(str::to_owned))
                .unwrap_or_else(|| "(signed)".into())
        })
        .collect()
}

/// The plain append (one statement, no function) compares the session's
/// version as the function did, and the log it answers joins what other
/// processes appended with what it adds: two stores on one database, as
/// two processes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_append_on_a_moved_session_is_refused_and_its_log_joins_the_other_processes() {
    let url = fresh_postgres().await;
    let t = serving(&url, |dir| config_in(dir, roomy_limits())).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (status, _) = t
        .submit(
            &vendor,
            &session,
            "message",
            serde_json::json!({ "body": "hi" }),
        )
        .await;
    assert_eq!(status, 200);
    let a = store::open(&Target::Postgres(url.clone()), Durability::default())
        .await
        .unwrap();
    let b = store::open(&Target::Postgres(url.clone()), Durability::default())
        .await
        .unwrap();
    let read = a.negotiations().session(&session).await.unwrap().unwrap();
    let n = read.event_count;

    // B commits first and keeps the log it was answered.
    let first = b
        .negotiations()
        .commit_and_log(&append_at(&read, n + 1, "b1"), 0)
        .await
        .unwrap();
    assert_eq!(first.session.event_count, n + 1);
    assert_eq!(tags(&first).last().map(String::as_str), Some("b1"));

    // A, planned on the version before B's commit, is refused, even for a
    // seq no other event holds (only the version can tell), and stores
    // nothing.
    let stale = a
        .negotiations()
        .commit_and_log(&append_at(&read, n + 2, "stale"), 0)
        .await;
    assert!(matches!(stale, Err(CommitError::Conflict)), "{stale:?}");
    let now = a.negotiations().log(&session, 0).await.unwrap().unwrap();
    assert_eq!(now.session.event_count, n + 1);
    assert!(
        !tags(&now).contains(&"stale".to_owned()),
        "{:?}",
        tags(&now)
    );

    // A, planned again, appends; then B, which holds the log only up to
    // its own event, appends and is answered the whole log: A's event
    // (stored before its statement) and its own (added by it).
    let a2 = a
        .negotiations()
        .commit_and_log(&append_at(&now.session, n + 2, "a2"), 0)
        .await
        .unwrap();
    assert_eq!(a2.session.event_count, n + 2);
    let sent = b.traffic().unwrap().statements;
    let b3 = b
        .negotiations()
        .commit_and_log(&append_at(&a2.session, n + 3, "b3"), 0)
        .await
        .unwrap();
    assert_eq!(
        b.traffic().unwrap().statements - sent,
        1,
        "the commit and its whole log in one statement"
    );
    let whole = a.negotiations().log(&session, 0).await.unwrap().unwrap();
    assert_eq!(b3.session, whole.session);
    assert_eq!(b3.events, whole.events);
    let last: Vec<String> = tags(&b3).into_iter().skip(n as usize).collect();
    assert_eq!(last, ["b1", "a2", "b3"]);
    t.running.shutdown().await;
}

/// Writes queued in the outbox when the server stops are announced before
/// it goes: a second write within the 10 ms after the first's NOTIFY waits
/// in the outbox, and the server stops at once after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_process_announces_the_writes_still_in_its_outbox() {
    let url = fresh_postgres().await;
    let t = serving(&url, |dir| config_in(dir, roomy_limits())).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    // Another process, listening.
    let other = store::open(&Target::Postgres(url.clone()), Durability::default())
        .await
        .unwrap();
    let mut heard = other.change_feed().unwrap().listen().await.unwrap();
    // Quiet first (what the setup's writes announced has been heard), so
    // the next write's NOTIFY goes at once.
    while let Ok(Some(_)) =
        tokio::time::timeout(std::time::Duration::from_millis(300), heard.next()).await
    {}
    for n in 0..2 {
        let (status, _) = t
            .submit(
                &vendor,
                &session,
                "message",
                serde_json::json!({ "body": format!("last {n}") }),
            )
            .await;
        assert_eq!(status, 200);
    }
    t.running.shutdown().await;
    let mut announcements = 0;
    while let Ok(Some(_)) =
        tokio::time::timeout(std::time::Duration::from_secs(1), heard.next()).await
    {
        announcements += 1;
    }
    // Without the last NOTIFY at the stop, only the first is heard.
    assert!(
        announcements >= 2,
        "{announcements}: the first write's NOTIFY, then the second's from the outbox at the stop"
    );
}

/// `--db-connections` bounds the process's pool: thirty-two appends at once
/// through a process that keeps three connections open no fourth (its
/// listening connection for other processes' NOTIFYs aside).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_keeps_at_most_its_db_connections() {
    let url = fresh_postgres().await;
    let t = std::sync::Arc::new(
        serving(&url, |dir| countersign_host::HostConfig {
            db_connections: 3,
            ..config_in(dir, roomy_limits())
        })
        .await,
    );
    let mut tasks = Vec::new();
    for n in 0..8 {
        let vendor = std::sync::Arc::new(t.register(&format!("Vendor {n}")).await);
        let (session, _) = t.open_sandbox(&vendor).await;
        for m in 0..4 {
            let (t, vendor, session) = (t.clone(), vendor.clone(), session.clone());
            tasks.push(tokio::spawn(async move {
                t.submit(
                    &vendor,
                    &session,
                    "message",
                    serde_json::json!({ "body": format!("at once {m}") }),
                )
                .await
            }));
        }
    }
    for task in tasks {
        let (status, body) = task.await.unwrap();
        assert_eq!(status, 200, "{body}");
    }
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = db
        .query_one(
            "SELECT count(*) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND query <> 'LISTEN countersign_changes'",
            &[],
        )
        .await
        .unwrap();
    let held: i64 = row.get(0);
    assert!(
        (1..=3).contains(&held),
        "{held} pooled connections, at most 3"
    );
}
