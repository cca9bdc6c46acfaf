//! Slow clients (issue 28, item 1), over real loopback HTTP: a connection
//! that withholds its headers or its body cannot hold the host, nor can
//! many of them crowd out a client that sends its request at once, even in
//! a process short of file descriptors.

use std::net::SocketAddr;
use std::time::Duration;

use countersign_host::{Connections, HostConfig};
use countersign_testkit::process::{listening_addr, Guarded};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

const HALF_HEADERS: &[u8] = b"GET /.well-known/anp.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

/// A host whose connection bounds are `connections`.
async fn start_bounded(connections: Connections) -> TestHost {
    start_with(HostConfig {
        limits: roomy_limits(),
        connections,
        ..HostConfig::default()
    })
    .await
}

fn bounds(header_secs: u64, body_secs: u64, max: usize) -> Connections {
    Connections {
        header_read_timeout: Duration::from_secs(header_secs),
        body_read_timeout: Duration::from_secs(body_secs),
        max_connections: max,
    }
}

/// A connection that has sent `bytes` and nothing more.
async fn slow(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    stream
}

/// Everything the host sends until it closes the connection (a reset counts
/// as closed). The cap only keeps a broken host from hanging the suite.
async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(120), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the host never closed the connection");
    seen
}

async fn discovery_status(base: &str) -> u16 {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    match client
        .get(format!("{base}/.well-known/anp.json"))
        .send()
        .await
    {
        Ok(answer) => answer.status().as_u16(),
        Err(e) => panic!("GET /.well-known/anp.json failed: {e}"),
    }
}

#[tokio::test]
async fn a_connection_that_sends_half_its_headers_is_closed_after_the_header_deadline() {
    let t = start_bounded(bounds(1, 30, 64)).await;
    let mut stream = slow(t.running.addr, HALF_HEADERS).await;
    let answered = until_closed(&mut stream).await;
    assert!(
        !answered.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answered)
    );
    // The host still answers others.
    assert_eq!(discovery_status(&t.running.base_url()).await, 200);
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_deadline() {
    let t = start_bounded(bounds(1, 30, 64)).await;
    let mut stream = slow(t.running.addr, b"").await;
    assert!(until_closed(&mut stream).await.is_empty());
}

#[tokio::test]
async fn a_body_that_stalls_is_refused_with_408_and_nothing_is_stored() {
    let t = start_bounded(bounds(30, 1, 64)).await;
    let head = "POST /api/agent/v1/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n";
    let mut stream = slow(t.running.addr, head.as_bytes()).await;
    stream
        .write_all(br#"{"agent_name": "Slow Agent", "vendor_name": "Sl"#)
        .await
        .unwrap();
    let answered = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
    assert!(answered.starts_with("HTTP/1.1 408"), "{answered}");
    assert!(
        answered.contains("did not arrive within the 1 s"),
        "{answered}"
    );
    assert!(answered.contains("nothing was stored"), "{answered}");
    assert!(t.host().list_agents().await.unwrap().is_empty());
    // A whole body in time is still served.
    t.register("Prompt").await;
    assert_eq!(t.host().list_agents().await.unwrap().len(), 1);
}

#[tokio::test]
async fn at_the_connection_cap_new_clients_take_the_place_of_slow_ones() {
    // Eight slots, and slow clients the header deadline would hold for
    // ten minutes: five times as many as there are slots.
    let t = start_bounded(bounds(600, 600, 8)).await;
    let mut held = Vec::new();
    for _ in 0..40 {
        held.push(slow(t.running.addr, HALF_HEADERS).await);
    }
    assert_eq!(discovery_status(&t.running.base_url()).await, 200);
    t.register("Under Attack").await;
    assert_eq!(t.host().list_agents().await.unwrap().len(), 1);
    // The slowest were closed to make room.
    let mut oldest = held.remove(0);
    assert!(!until_closed(&mut oldest).await.starts_with(b"HTTP"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_with_256_file_descriptors_answers_while_300_slow_clients_are_connected() {
    // The review's attack on the real binary: 300 connections that never
    // finish their headers against a process allowed 256 open files.
    let dir = tempfile::tempdir().unwrap();
    let db = match fresh_target(dir.path()).await {
        countersign_host::Target::Sqlite(path) => path.display().to_string(),
        countersign_host::Target::Postgres(url) => url,
    };
    let key = dir.path().join("platform-key.json");
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", r#"ulimit -n 256 && exec "$0" "$@""#])
        .arg(env!("CARGO_BIN_EXE_countersign-host"))
        .args(["--db", &db, "serve", "--listen", "127.0.0.1:0"])
        .arg("--platform-key")
        .arg(&key)
        .args(["--header-timeout-secs", "600"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = Guarded::spawn(&mut command, None).unwrap();
    let stdout = child.child_mut().stdout.take().unwrap();
    let addr = tokio::task::spawn_blocking(move || listening_addr(stdout, Duration::from_secs(60)))
        .await
        .unwrap()
        .unwrap();
    let mut held = Vec::new();
    for _ in 0..300 {
        held.push(slow(addr, HALF_HEADERS).await);
    }
    assert_eq!(discovery_status(&format!("http://{addr}")).await, 200);
    assert_eq!(discovery_status(&format!("http://{addr}")).await, 200);
    assert!(
        child.child_mut().try_wait().unwrap().is_none(),
        "the host process exited"
    );
    drop(held);
}

/// A signed request by `party` on a connection of its own (a client with
/// no pool shared with the test's): status, `Retry-After`, `ETag`.
async fn on_own_connection(
    t: &TestHost,
    party: &Party,
    method: &str,
    path: &str,
    body: Vec<u8>,
    if_none_match: Option<&str>,
) -> (u16, Option<String>, Option<String>) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let signed_path = path.to_owned();
    let mut req = http
        .request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            t.url(&signed_path),
        )
        .body(body.clone());
    for (k, v) in t.signature_headers(party, method, &signed_path, &body) {
        req = req.header(k, v);
    }
    if let Some(tag) = if_none_match {
        req = req.header("if-none-match", tag);
    }
    let resp = req.send().await.unwrap();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (retry_after, etag) = (header("retry-after"), header("etag"));
    (resp.status().as_u16(), retry_after, etag)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_a_waiting_console_makes_room_for_a_vendor_and_is_asked_back_later() {
    // Three slots, every one held by a console waiting for a change (for
    // up to 90 s); nothing else is connected.
    let t = start_bounded(bounds(600, 600, 3)).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();
    let path = "/api/console/v1/summary?wait=90";
    let wait = || on_own_connection(&t, &ada, "GET", path, Vec::new(), Some(&tag));
    // The vendor's offer, on a new connection once all three wait: at the
    // cap, the wait held longest gives its place up at once, instead of the
    // append waiting out the 90 s.
    let payload = offer(100, FAR_FUTURE);
    let signature = vendor.authorship("offer", &payload);
    let body = serde_json::to_vec(
        &serde_json::json!({ "kind": "offer", "payload": payload, "signature": signature }),
    )
    .unwrap();
    let append = async {
        t.until_waiting(3).await;
        tokio::time::timeout(
            Duration::from_secs(30),
            on_own_connection(
                &t,
                &vendor,
                "POST",
                &format!("/api/agent/v1/sessions/{session}/events"),
                body,
                None,
            ),
        )
        .await
        .expect("the append waited for a console's wait to end")
    };
    let (a, b, c, appended) = tokio::join!(wait(), wait(), wait(), append);
    assert_eq!(appended.0, 200);
    let answers = [a, b, c];
    // One console was asked to come back in 10 s, nothing having changed
    // for it yet; the other two heard of the offer at once.
    let made_room: Vec<_> = answers.iter().filter(|a| a.0 == 304).collect();
    assert_eq!(made_room.len(), 1, "{answers:?}");
    assert_eq!(made_room[0].1.as_deref(), Some("10"), "{answers:?}");
    assert_eq!(made_room[0].2.as_deref(), Some(tag.as_str()));
    for heard in answers.iter().filter(|a| a.0 != 304) {
        assert_eq!(heard.0, 200, "{answers:?}");
        assert_eq!(heard.1, None);
    }
}
