//! Proxies from the environment (issue 28, item 9): reqwest honours
//! `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`, and a proxy resolves and
//! connects on its own, past the address the host checked and pinned. The
//! attack over real HTTP: the real `countersign-host` binary runs as its own
//! process with every proxy variable (both cases) naming a loopback "trap"
//! this test owns and no `NO_PROXY`; a gate agent's request is decided, and
//! the hint must reach the agent's listener directly while the trap sees no
//! connection at all. Runs on the suite's store (SQLite, and PostgreSQL in
//! the suite's second run).

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use countersign_client::{ApproverClient, GateDecisionInput};
use countersign_host::{Host, HostConfig, Target};
use countersign_testkit::process::{listening_addr, Guarded};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::common::*;
use crate::gate_support::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

/// Every variable reqwest reads a proxy from, in both cases.
const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// What the host's hint may not pass through: a loopback listener that
/// reports every connection it accepts, with the first bytes it read (a
/// proxied request names its absolute URL or `CONNECT`s), and answers 502.
async fn trap() -> (SocketAddr, mpsc::UnboundedReceiver<String>) {
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, peer)) = socket.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 1024];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let _ = tx.send(format!(
                    "a connection from {peer} sending {:?}",
                    String::from_utf8_lossy(&buf[..n])
                ));
                let _ = stream
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
                    .await;
            });
        }
    });
    (addr, rx)
}

/// What the agent's listener received: the request line's path, the body
/// and the signature header.
struct Hint {
    path: String,
    body: Vec<u8>,
    signature: String,
}

/// The gate agent's callback listener on loopback; its URL and what it hears.
async fn agent_listener() -> (String, mpsc::UnboundedReceiver<Hint>) {
    use axum::routing::post;
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hint",
        post(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let tx = tx.clone();
                async move {
                    let signature = headers
                        .get("x-countersign-signature")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let _ = tx.send(Hint {
                        path: uri.to_string(),
                        body: body.to_vec(),
                        signature,
                    });
                    "ok"
                }
            },
        ),
    );
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hint", socket.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(socket, app).await;
    });
    (url, rx)
}

/// `--db` for a target.
fn db_arg(target: &Target) -> String {
    match target {
        Target::Sqlite(path) => path.display().to_string(),
        Target::Postgres(url) => url.clone(),
    }
}

/// The real binary serving `target` on loopback, allowed to call back to
/// 127.0.0.1, in the environment of a deployment whose proxy variables an
/// attacker set: every one names `proxy`, and nothing is exempt. Its log
/// goes to `log`.
async fn spawn_host_behind_proxies(
    target: &Target,
    key: &Path,
    proxy: SocketAddr,
    log: &Path,
) -> (Guarded, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_countersign-host"));
    command
        .args(["--db", &db_arg(target), "serve", "--listen", "127.0.0.1:0"])
        .arg("--platform-key")
        .arg(key)
        .args(["--allow-callback-network", "127.0.0.1/32"])
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap());
    for var in PROXY_VARS {
        command.env(var, format!("http://{proxy}"));
    }
    let mut child = Guarded::spawn(&mut command, None).unwrap();
    let stdout = child.child_mut().stdout.take().unwrap();
    let addr = tokio::task::spawn_blocking(move || listening_addr(stdout, Duration::from_secs(60)))
        .await
        .unwrap()
        .unwrap();
    (child, format!("http://{addr}"))
}

/// Enrolls a gate agent at `remote` with `code` over HTTP, naming `callback`.
async fn enroll_gate_agent(remote: &RemoteHost, code: &str, callback: &str) -> Party {
    let key = anp::keys::generate_signing_key();
    let (proof, authority) = enroll_proof_v2(
        &remote.base,
        countersign_host_api::signing::EnrollRole::GateAgent,
        code,
        &key,
    );
    let body = json!({"code": code, "name": "Procurement Buyer",
        "public_key": anp::keys::public_key_b64(&key.verifying_key()),
        "proof": proof, "proof_version": 2, "authority": authority,
        "callback_url": callback});
    let answer = remote
        .http
        .post(format!("{}/api/gate/v1/enroll", remote.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let v: Value = answer.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 201, "{v}");
    Party {
        id: v["agent_id"].as_str().unwrap().to_owned(),
        key,
        email: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hint_goes_straight_to_the_agent_and_never_through_a_proxy_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let target = fresh_target(dir.path()).await;
    let key = dir.path().join("platform-key.json");
    // The admin opens first (migrates, creates the key) and issues the codes.
    let admin = Host::open(
        target.clone(),
        HostConfig {
            platform_key_path: Some(key.clone()),
            ..HostConfig::default()
        },
    )
    .await
    .unwrap();
    let gate_code = admin
        .gate_enroll_code(ORG, "Procurement Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let approver_code = admin
        .enroll_code(ORG, "Ann", "ann@fabrikam.example")
        .await
        .unwrap()
        .code;

    let (proxy, mut trapped) = trap().await;
    let (callback, mut hints) = agent_listener().await;
    let log = dir.path().join("host.log");
    let (_host, base) = spawn_host_behind_proxies(&target, &key, proxy, &log).await;
    let remote = RemoteHost::new(base.clone());

    let agent = enroll_gate_agent(&remote, &gate_code, &callback).await;
    let ann = remote
        .enroll(&approver_code, "Ann", "ann@fabrikam.example")
        .await;
    let mut talk = Talk::opened("ses_proxy");
    talk.say(SELLER, "negotiate.offer", Talk::offer("100000", 3600));
    let (s, v) = remote
        .json(&agent, "POST", "/api/gate/v1/sessions", &talk.create_body())
        .await;
    assert_eq!(s, 201, "{v}");
    let (s, v) = remote
        .json(
            &agent,
            "POST",
            "/api/gate/v1/sessions/ses_proxy/requests",
            &request_body(&talk, "r1", 2, None, 1800),
        )
        .await;
    assert_eq!(s, 201, "{v}");

    // Ann approves: the host hints the agent.
    let c = ApproverClient::new(&base, ann.key.clone(), &ann.id).unwrap();
    let id = "concordia:ses_proxy";
    let pending = c
        .summary()
        .await
        .unwrap()
        .sessions
        .into_iter()
        .find(|s| s.id == id)
        .expect("the session in Ann's summary")
        .pending
        .remove(0);
    let log_doc = c.gate_log(id, None).await.unwrap();
    let message: Value =
        serde_json::from_str(log_doc.messages[(pending.seq - 1) as usize].get()).unwrap();
    let input = GateDecisionInput {
        session_id: "ses_proxy",
        pending: &pending,
        offer_message: &message,
    };
    c.decide_gate(id, &c.approve_gate_request(&input).unwrap())
        .await
        .unwrap();

    // The hint, or the first connection the trap saw, whichever comes first;
    // the bound only keeps a broken host from hanging the suite.
    let host_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let hint = tokio::select! {
        hint = hints.recv() => hint.expect("the agent's listener is running"),
        seen = trapped.recv() => panic!(
            "the hint went to the proxy named by the environment: {}\nthe host's log:\n{}",
            seen.unwrap_or_default(),
            host_log()
        ),
        _ = tokio::time::sleep(Duration::from_secs(60)) => panic!(
            "no hint reached the agent within 60 s\nthe host's log:\n{}",
            host_log()
        ),
    };
    // Straight to the agent: an origin-form request line, the signed hint.
    assert_eq!(hint.path, "/hint");
    let body: Value = serde_json::from_slice(&hint.body).unwrap();
    assert_eq!(
        (
            body["session_id"].as_str(),
            body["request_id"].as_str(),
            body["status"].as_str()
        ),
        (Some("ses_proxy"), Some("r1"), Some("approved"))
    );
    let platform = anp::keys::parse_public_key(admin.platform_public_key()).unwrap();
    let signed = countersign_host_api::gate::callback_string(
        "ses_proxy",
        "r1",
        "approved",
        body["at"].as_str().unwrap(),
    );
    assert!(anp::keys::verify_b64(
        &platform,
        signed.as_bytes(),
        &hint.signature
    ));
    // And the trap saw no connection at all, checked once the hint is in.
    if let Ok(seen) = trapped.try_recv() {
        panic!("the proxy from the environment saw {seen}");
    }
}
