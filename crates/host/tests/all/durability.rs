//! Concurrent appends keep the chain contiguous and valid; a kill -9 of the
//! real binary loses no acknowledged event; a newer database is refused.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use anp::KeyRing;
use anp::LogDocument;
use common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_submitters_keep_seq_contiguous_and_the_chain_valid() {
    let t = std::sync::Arc::new(start(roomy_limits()).await);
    let vendor = std::sync::Arc::new(t.register("Contoso").await);
    let (session, _) = t.open_sandbox(&vendor).await;
    let mut tasks = Vec::new();
    for task in 0..16 {
        let (t, vendor, session) = (t.clone(), vendor.clone(), session.clone());
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..10 {
                let body = format!("task {task} message {i}");
                let (s, doc) = t
                    .submit(&vendor, &session, "message", json!({ "body": body }))
                    .await;
                assert_eq!(s, 200, "{doc}");
                acked.push(body);
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for task in tasks {
        acked.extend(task.await.unwrap());
    }
    let (_, body) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{session}/log"),
            &Value::Null,
        )
        .await;
    let doc: LogDocument = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc.events.len(), 2 + 160);
    assert_eq!(
        doc.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=162).collect::<Vec<_>>()
    );
    let report = anp::verify_log(
        &session,
        &doc.events,
        &KeyRing::from_log_keys(&doc).unwrap(),
    );
    assert!(report.ok, "{report:?}");
    for body in acked {
        assert!(
            doc.events
                .iter()
                .any(|e| e.payload["body"] == body.as_str()),
            "{body} is in the log"
        );
    }
}

struct Server {
    child: Child,
    base: String,
}

fn start_binary(db: &str, key: &std::path::Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .arg("--db")
        .arg(db)
        .args(["serve", "--listen", "127.0.0.1:0", "--platform-key"])
        .arg(key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    Server { child, base }
}

#[tokio::test]
async fn kill_9_loses_no_acknowledged_event() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::cli::db_arg(&fresh_target(dir.path()).await);
    let key = dir.path().join("platform-key.json");
    let mut server = start_binary(&db, &key);
    // The helpers sign with the system clock, which the binary uses too.
    let t = RemoteHost {
        base: server.base.clone(),
        http: reqwest::Client::new(),
    };
    let vendor = t.register().await;
    let session = t.open(&vendor).await;
    let mut acked = 0;
    for i in 0..25 {
        let payload = json!({ "body": format!("message {i}") });
        if t.submit(&vendor, &session, payload).await == 200 {
            acked += 1;
        }
    }
    assert_eq!(acked, 25);
    // one request whose nonce was used before the crash
    let status_path = format!("/api/agent/v1/sessions/{session}");
    let ts = anp::api::format_timestamp(time::OffsetDateTime::now_utc());
    let used = anp::api::sign_request(
        &vendor.key,
        &vendor.id,
        "GET",
        &status_path,
        b"",
        &ts,
        "used-before-crash",
    );
    assert_eq!(t.send_with(&used, "GET", &status_path).await, 200);
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();

    let server = start_binary(&db, &key);
    let t = RemoteHost {
        base: server.base.clone(),
        http: reqwest::Client::new(),
    };
    let doc = t.log(&vendor, &session).await;
    assert_eq!(doc.events.len(), 2 + 25);
    assert_eq!(
        t.send_with(&used, "GET", &status_path).await,
        401,
        "nonces survive the restart"
    );
    for i in 0..25 {
        assert!(doc
            .events
            .iter()
            .any(|e| e.payload["body"] == format!("message {i}")));
    }
    assert!(
        anp::verify_log(
            &session,
            &doc.events,
            &KeyRing::from_log_keys(&doc).unwrap()
        )
        .ok
    );
    // and the same platform key signs after the restart
    assert_eq!(
        t.submit(&vendor, &session, json!({ "body": "after restart" }))
            .await,
        200
    );
    let mut child = server.child;
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn a_database_from_a_newer_version_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let target = fresh_target(dir.path()).await;
    let config = || config_in(dir.path(), roomy_limits());
    drop(
        countersign_host::Host::open(target.clone(), config())
            .await
            .unwrap(),
    );
    match &target {
        countersign_host::Target::Sqlite(db) => {
            let conn = rusqlite::Connection::open(db).unwrap();
            conn.pragma_update(None, "user_version", 999).unwrap();
        }
        countersign_host::Target::Postgres(url) => {
            pg_client(url)
                .await
                .execute("UPDATE countersign_schema SET version = 999", &[])
                .await
                .unwrap();
        }
    }
    let err = countersign_host::Host::open(target.clone(), config())
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("schema version 999"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .arg("--db")
        .arg(crate::cli::db_arg(&target))
        .args(["org", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("newer than this countersign-host"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn the_platform_key_is_created_readable_by_its_owner_only_and_reused() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("host.db");
    let first = countersign_host::Host::open(&db, countersign_host::HostConfig::default())
        .await
        .unwrap();
    let key_file = countersign_host::platform_key::default_path(&db);
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let fingerprint = first.platform_fingerprint().to_owned();
    drop(first);
    let again = countersign_host::Host::open(&db, countersign_host::HostConfig::default())
        .await
        .unwrap();
    assert_eq!(again.platform_fingerprint(), fingerprint);
}

#[tokio::test]
async fn a_different_platform_key_for_an_existing_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("host.db");
    drop(
        countersign_host::Host::open(&db, countersign_host::HostConfig::default())
            .await
            .unwrap(),
    );
    std::fs::remove_file(countersign_host::platform_key::default_path(&db)).unwrap();
    let err = countersign_host::Host::open(&db, countersign_host::HostConfig::default())
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("restore the original key file"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_copies_of_one_signed_append_are_stored_once() {
    let t = std::sync::Arc::new(start(roomy_limits()).await);
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let payload = json!({ "body": "sent twenty times at once" });
    let body = serde_json::to_vec(
        &json!({ "kind": "message", "payload": payload, "signature": vendor.authorship("message", &payload) }),
    )
    .unwrap();
    let path = format!("/api/agent/v1/sessions/{session}/events");
    let h = anp::api::sign_request(
        &vendor.key,
        &vendor.id,
        "POST",
        &path,
        &body,
        &t.now(),
        "one-nonce",
    );
    let headers: Vec<(&'static str, String)> =
        h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect();
    let mut copies = Vec::new();
    for _ in 0..20 {
        let (t, path, headers, body) = (t.clone(), path.clone(), headers.clone(), body.clone());
        copies.push(tokio::spawn(async move {
            t.raw("POST", &path, &headers, body).await.0
        }));
    }
    let mut statuses = Vec::new();
    for copy in copies {
        statuses.push(copy.await.unwrap());
    }
    statuses.sort();
    let mut expected = vec![200];
    expected.extend([401; 19]);
    assert_eq!(
        statuses, expected,
        "one copy spends the nonce, the rest get the uniform refusal"
    );
    let (_, body) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{session}/log"),
            &Value::Null,
        )
        .await;
    let doc: LogDocument = serde_json::from_slice(&body).unwrap();
    let stored = doc.events.iter().filter(|e| e.payload == payload).count();
    assert_eq!(stored, 1);
}

#[tokio::test]
async fn a_schema_1_database_is_upgraded_keeping_its_orgs_and_unexpired_nonces() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("host.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(include_str!("schema_v1.sql")).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at) VALUES ('anp_org_0123456789abcdef0123456789abcdef', 'Tailspin', 0, 0, NULL, '2026-01-01T00:00:00.000Z')",
            [],
        )
        .unwrap();
        let later = time::OffsetDateTime::now_utc().unix_timestamp() + 200;
        conn.execute(
            "INSERT INTO nonces (principal, nonce, expires_at) VALUES ('agent-1', 'fresh', ?1), ('agent-1', 'stale', 1)",
            [later],
        )
        .unwrap();
    }
    // Opened, not yet served: a served host purges expired nonces in the
    // background, which would race the check of what the upgrade carried.
    let host = countersign_host::Host::open(&db, config_in(dir.path(), roomy_limits()))
        .await
        .unwrap();
    let version: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, countersign_host::store::sqlite::LATEST_VERSION);
    // The unexpired nonce still refuses its replay: it moved to the nonce file.
    let nonces =
        rusqlite::Connection::open(countersign_host::store::sqlite::nonce_path(&db)).unwrap();
    let kept: Vec<String> = nonces
        .prepare("SELECT nonce FROM nonces ORDER BY nonce")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        kept,
        ["fresh", "stale"],
        "carried over as they were (purging drops the stale one)"
    );
    let t = host.spawn("127.0.0.1:0").await.unwrap();
    let orgs = t.host.list_orgs().await.unwrap();
    assert!(orgs.iter().any(|o| o.name == "Tailspin"), "{orgs:?}");
    let old_table: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'nonces'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        old_table, 0,
        "the old nonce table is gone from the main file"
    );
    // And the upgraded database negotiates.
    let remote = RemoteHost::new(t.base_url());
    let vendor = remote.register().await;
    let session = remote.open(&vendor).await;
    assert_eq!(
        remote
            .submit(&vendor, &session, json!({ "body": "after the upgrade" }))
            .await,
        200
    );
    t.shutdown().await;
}
