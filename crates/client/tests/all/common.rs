//! Test helpers: a real countersign-host on 127.0.0.1:0, and a real HTTP proxy in
//! front of it that can misbehave on purpose (rewrite logs, fail, hang), so
//! the client is tested against a live peer, never a mock of itself.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use countersign_client::{AgentClient, ApproverClient};
use countersign_host::config::DiscoveryMode;
use countersign_host::{Host, HostConfig, Limit, Limits, RunningHost};
use serde_json::{json, Value};

/// The variable that runs the vendor and approver checks against a
/// deployment instead of an in-process host: `nginx-postgres` means three
/// host processes on one PostgreSQL database behind nginx.
/// `deployment::the_conformance_checks_pass_through_nginx_...` sets it.
pub const DEPLOYMENT_VAR: &str = "COUNTERSIGN_CLIENT_TEST_HOST";

pub fn through_deployment() -> bool {
    countersign_testkit::deployment::selected(DEPLOYMENT_VAR)
}

/// What a host process of the deployment runs (see
/// `countersign_testkit::deployment::Launch::ThisTest`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a host process of the nginx + PostgreSQL deployment fixture; the fixture runs it"]
async fn deployment_host_process() {
    countersign_testkit::deployment::serve_from_env().await;
}

enum Serving {
    InProcess(RunningHost),
    Deployment(Box<countersign_testkit::deployment::Deployment>),
}

pub struct TestHost {
    serving: Serving,
    admin: Host,
    _dir: tempfile::TempDir,
}

pub async fn start_host() -> TestHost {
    if through_deployment() {
        let deployment = countersign_testkit::deployment::Deployment::start_refusing_v1(
            countersign_testkit::deployment::Launch::ThisTest(
                "common::deployment_host_process".into(),
            ),
            3,
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        return TestHost {
            admin: deployment.admin.clone(),
            serving: Serving::Deployment(Box::new(deployment)),
            _dir: tempfile::tempdir().unwrap(),
        };
    }
    start_host_with_agent_limit(1_000_000).await
}

/// A host allowing each agent `per_agent` signed requests per hour.
pub async fn start_host_with_agent_limit(per_agent: u32) -> TestHost {
    start_host_with(per_agent, DiscoveryMode::Full).await
}

/// A host whose `/.well-known/anp.json` serves what `discovery` says.
pub async fn start_host_in(discovery: DiscoveryMode) -> TestHost {
    start_host_with(1_000_000, discovery).await
}

/// An in-process host whose public URL is that of a proxy in front of it
/// (the authority version 2 signatures sent through the proxy name), with
/// the proxy and its URL.
pub async fn start_host_behind_proxy() -> (TestHost, Proxy, String) {
    let port = countersign_testkit::process::free_port().unwrap();
    let public_url = format!("http://127.0.0.1:{port}");
    let host = start_host_at(1_000_000, DiscoveryMode::Full, Some(public_url.clone())).await;
    let proxy = Proxy::start_on(port, &host.url()).await;
    (host, proxy, public_url)
}

async fn start_host_with(per_agent: u32, discovery: DiscoveryMode) -> TestHost {
    start_host_at(per_agent, discovery, None).await
}

async fn start_host_at(
    per_agent: u32,
    discovery: DiscoveryMode,
    public_url: Option<String>,
) -> TestHost {
    let dir = tempfile::tempdir().unwrap();
    let roomy = Limit {
        max: 1_000_000,
        window: Duration::from_secs(60),
    };
    let config = HostConfig {
        limits: Limits {
            per_ip: roomy,
            per_agent: Limit {
                max: per_agent,
                window: Duration::from_secs(3600),
            },
            per_session: roomy,
            registration: roomy,
            ..Limits::default()
        },
        discovery,
        // Version 1 signatures refused: every test proves the clients
        // speak version 2 (docs/approver-api.md, "Signed requests").
        accept_v1_signatures: false,
        public_url,
        ..HostConfig::default()
    };
    let host = Host::open(&dir.path().join("host.db"), config)
        .await
        .unwrap();
    let running = host.clone().spawn("127.0.0.1:0").await.unwrap();
    TestHost {
        serving: Serving::InProcess(running),
        admin: host,
        _dir: dir,
    }
}

impl TestHost {
    pub fn url(&self) -> String {
        match &self.serving {
            Serving::InProcess(running) => running.base_url(),
            Serving::Deployment(d) => d.url(),
        }
    }
    /// The admin's handle on the host's store.
    pub fn host(&self) -> &Host {
        &self.admin
    }
    pub async fn shutdown(self) {
        match self.serving {
            Serving::InProcess(running) => running.shutdown().await,
            Serving::Deployment(d) => drop(d),
        }
    }
}

/// An approver of the sandbox buyer, enrolled with a code from the host.
pub async fn enroll(host: &TestHost, name: &str, email: &str) -> ApproverClient {
    let code = host
        .host()
        .enroll_code(countersign_host::SANDBOX_HANDLE, name, email)
        .await
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    let enrolled = ApproverClient::enroll(&host.url(), &code, name, email, &key)
        .await
        .unwrap();
    ApproverClient::new(&host.url(), key, &enrolled.approver_id).unwrap()
}

/// Registers a fresh key at `base_url`; returns the key and the agent id.
pub async fn register(base_url: &str) -> (anp::keys::SigningKey, String) {
    let key = anp::keys::generate_signing_key();
    let reg = AgentClient::register(
        base_url,
        &key,
        "Contoso Seller",
        "Contoso",
        "sales@contoso.example",
    )
    .await
    .unwrap();
    (key, reg.agent_id)
}

/// Registers a fresh key at `register_at`; returns a client for it talking
/// to `client_url` (the host itself, or a proxy in front of it).
pub async fn new_agent(register_at: &str, client_url: &str) -> AgentClient {
    let (key, agent_id) = register(register_at).await;
    AgentClient::new(client_url, key, &agent_id).unwrap()
}

/// A valid offer expiring in a day.
pub fn offer(unit_price: u32, quantity: u32) -> Value {
    let expires = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    json!({
        "currency": "USD",
        "term_months": 36,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{
            "sku": "CRM-ENT",
            "description": "CRM Enterprise seats",
            "quantity": quantity,
            "unit": "seat/year",
            "unit_price": unit_price,
            "currency": "USD"
        }],
        "conditions": ["Net 60 payment"]
    })
}

/// What the proxy does to the next answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward faithfully.
    Pass,
    /// Change the payload of the last event of any log, keeping its hashes.
    TamperLastPayload,
    /// Change event 2's `at` and re-chain every later hash consistently: a
    /// history rewrite that verifies on its own but not against a pin.
    RewriteHistory,
    /// Answer the next N GETs with a 503 in the ANP error shape.
    FailGets(u32),
    /// Answer every request with 503.
    AlwaysFail,
    /// Never answer.
    Hang,
    /// Answer appends with the bare log document instead of `{log, protocol}`.
    UnwrapAppend,
    /// Name a fresh buyer key in every log's `keys` block.
    SwapBuyerKey,
    /// Forward every JSON answer pretty-printed: the same document in other
    /// bytes, so a test can tell bytes kept from bytes re-serialized.
    PrettyPrint,
}

#[derive(Clone)]
pub struct Proxy {
    upstream: String,
    http: reqwest::Client,
    mode: Arc<Mutex<Mode>>,
    pub seen: Arc<Mutex<Vec<(String, String)>>>,
    /// How many answers the proxy changed.
    pub changed: Arc<std::sync::atomic::AtomicUsize>,
}

impl Proxy {
    /// Starts a proxy to `upstream` on 127.0.0.1:0; returns it and its URL.
    pub async fn start(upstream: &str) -> (Proxy, String) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Proxy::serve(listener, upstream)
    }

    /// Starts a proxy to `upstream` on 127.0.0.1:`port`.
    pub async fn start_on(port: u16, upstream: &str) -> Proxy {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        Proxy::serve(listener, upstream).0
    }

    fn serve(listener: tokio::net::TcpListener, upstream: &str) -> (Proxy, String) {
        let proxy = Proxy {
            upstream: upstream.to_owned(),
            http: reqwest::Client::new(),
            mode: Arc::new(Mutex::new(Mode::Pass)),
            seen: Arc::new(Mutex::new(Vec::new())),
            changed: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        };
        let addr = listener.local_addr().unwrap();
        let state = proxy.clone();
        let app = axum::Router::new().fallback(move |method, uri, headers, body| {
            let state = state.clone();
            async move { state.forward(method, uri, headers, body).await }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        (proxy, format!("http://{addr}"))
    }

    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    async fn forward(
        &self,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> axum::response::Response {
        self.seen
            .lock()
            .unwrap()
            .push((method.to_string(), uri.to_string()));
        let mode = {
            let mut guard = self.mode.lock().unwrap();
            let mode = *guard;
            if let Mode::FailGets(n) = mode {
                if method == Method::GET {
                    *guard = if n <= 1 {
                        Mode::Pass
                    } else {
                        Mode::FailGets(n - 1)
                    };
                }
            }
            mode
        };
        let unavailable = || {
            let body = anp::api::ErrorBody::new("internal", "The host is restarting; try again.");
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response()
        };
        match mode {
            Mode::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return unavailable();
            }
            Mode::AlwaysFail => return unavailable(),
            Mode::FailGets(_) if method == Method::GET => return unavailable(),
            _ => {}
        }
        let url = format!(
            "{}{}",
            self.upstream,
            uri.path_and_query().map_or("", |p| p.as_str())
        );
        let mut request = self.http.request(method, url).body(body.to_vec());
        for (name, value) in &headers {
            if name.as_str().starts_with("x-anp-")
                || name.as_str().starts_with("x-countersign-")
                || name == "content-type"
            {
                request = request.header(name, value);
            }
        }
        let answer = request.send().await.unwrap();
        let status = answer.status();
        let bytes = answer.bytes().await.unwrap();
        let mut out = bytes.to_vec();
        if status.is_success() {
            if let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) {
                if mode == Mode::PrettyPrint {
                    out = serde_json::to_vec_pretty(&value).unwrap();
                } else if tamper(&mut value, mode) {
                    self.changed
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    out = serde_json::to_vec(&value).unwrap();
                }
            }
        }
        (
            StatusCode::from_u16(status.as_u16()).unwrap(),
            [("content-type", "application/json")],
            out,
        )
            .into_response()
    }
}

/// Applies `mode` to the log inside an answer; true when something changed.
fn tamper(answer: &mut Value, mode: Mode) -> bool {
    if mode == Mode::UnwrapAppend {
        let wrapped = answer.get("log").is_some() && answer.get("session_id").is_none();
        if wrapped {
            *answer = answer["log"].take();
        }
        return wrapped;
    }
    let doc = if answer.get("events").is_some() {
        answer
    } else if let Some(log) = answer.get_mut("log") {
        log
    } else {
        return false;
    };
    if mode == Mode::SwapBuyerKey {
        let key = anp::keys::generate_signing_key().verifying_key();
        doc["keys"]["buyer"] = json!({
            "public_key": anp::keys::public_key_b64(&key),
            "fingerprint": anp::keys::fingerprint(&key),
        });
        return true;
    }
    let session_id = doc["session"]["id"].as_str().unwrap_or_default().to_owned();
    let Some(events) = doc["events"].as_array_mut() else {
        return false;
    };
    match mode {
        Mode::TamperLastPayload => match events.last_mut() {
            Some(last) => {
                last["payload"]["tampered"] = json!(true);
                true
            }
            None => false,
        },
        Mode::RewriteHistory => {
            if events.len() < 3 || events[0]["seq"] != json!(1) {
                return false;
            }
            events[1]["at"] = json!("2020-01-01T00:00:00.000Z");
            let mut prev = events[0]["event_hash"].as_str().unwrap().to_owned();
            for event in events.iter_mut().skip(1) {
                event["prev_hash"] = json!(prev);
                let hash = anp::signed::event_hash(
                    &session_id,
                    event["seq"].as_u64().unwrap(),
                    event["actor"].as_str().unwrap(),
                    event["kind"].as_str().unwrap(),
                    event["payload_hash"].as_str().unwrap(),
                    &prev,
                    event["at"].as_str().unwrap(),
                );
                event["event_hash"] = json!(hash);
                prev = hash;
            }
            doc["session"]["chain_head"] = json!(prev);
            doc["chain"]["head"] = json!(prev);
            true
        }
        _ => false,
    }
}
