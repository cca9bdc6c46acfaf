//! Test helpers: a real host on 127.0.0.1:0, and signed raw HTTP for the
//! vendor, approver and gate roles (ANP/0.1's `anp::api::sign_request` on
//! the agent API, version 2's `countersign_host_api::signing` on the
//! host's own APIs).
//!
//! The store is a parameter of the whole suite: `COUNTERSIGN_TEST_STORE`
//! unset or `sqlite` runs every test on a SQLite file, `postgres` on a fresh
//! database of a PostgreSQL cluster the test process starts for itself
//! (`countersign_testkit::postgres`). `cargo test` runs both:
//! `stores::the_whole_suite_passes_on_postgresql` runs this binary again
//! with `postgres`.
#![allow(dead_code)]

use anp::api::{self, RegisterRequest, RegisterResponse};
use anp::keys::{self, SigningKey};
use anp::signed;
use anp::LogDocument;
use countersign_host::{Host, HostConfig, Limit, Limits, RunningHost, Target};
use countersign_host_api::approver::{EnrollRequest, EnrollResponse};
use countersign_host_api::signing;
use countersign_testkit::postgres::Cluster;
use serde_json::{json, Value};
use std::time::Duration;

pub struct TestHost {
    pub running: RunningHost,
    pub dir: tempfile::TempDir,
    pub http: reqwest::Client,
}

pub fn small_limits(max: u32) -> Limits {
    let l = Limit {
        max,
        window: Duration::from_secs(3600),
    };
    Limits {
        per_ip: l,
        per_agent: l,
        per_session: l,
        registration: l,
        max_body_bytes: 64 * 1024,
        gate_max_body_bytes: 256 * 1024,
        max_tracked_keys: 10_000,
    }
}

pub fn roomy_limits() -> Limits {
    small_limits(1_000_000)
}

/// The variable that selects the store of the whole suite.
pub const STORE_VAR: &str = "COUNTERSIGN_TEST_STORE";

/// Which store this run of the suite uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// A SQLite file in the test's temporary directory.
    Sqlite,
    /// A fresh database in this process's PostgreSQL cluster.
    Postgres,
}

pub fn store_kind() -> StoreKind {
    match std::env::var(STORE_VAR).as_deref() {
        Ok("postgres") => StoreKind::Postgres,
        Ok("sqlite") | Err(_) => StoreKind::Sqlite,
        Ok(other) => panic!("{STORE_VAR}={other:?}: expected sqlite or postgres"),
    }
}

/// A fresh database of the suite's store: a SQLite path in `dir`, or a new
/// PostgreSQL database. Panics with the fix when PostgreSQL is missing.
pub async fn fresh_target(dir: &std::path::Path) -> Target {
    match store_kind() {
        StoreKind::Sqlite => Target::Sqlite(dir.join("host.db")),
        StoreKind::Postgres => Target::Postgres(fresh_postgres().await),
    }
}

/// A fresh database in this process's PostgreSQL cluster.
pub async fn fresh_postgres() -> String {
    let cluster = tokio::task::spawn_blocking(|| Cluster::shared().map(|c| c.port()))
        .await
        .unwrap();
    if let Err(e) = cluster {
        panic!("{e}");
    }
    match Cluster::shared().unwrap().fresh_database().await {
        Ok(url) => url,
        Err(e) => panic!("{e}"),
    }
}

/// A host configuration whose key file lives in `dir` (PostgreSQL has no
/// "beside the database").
pub fn config_in(dir: &std::path::Path, limits: Limits) -> HostConfig {
    HostConfig {
        limits,
        platform_key_path: Some(dir.join("platform-key.json")),
        ..HostConfig::default()
    }
}

pub async fn start(limits: Limits) -> TestHost {
    start_with(config_in_limits(limits)).await
}

/// Like [`config_in`] without a directory yet: [`start_with`] sets the key
/// path inside the directory it creates.
fn config_in_limits(limits: Limits) -> HostConfig {
    HostConfig {
        limits,
        ..HostConfig::default()
    }
}

/// Starts a host with `config` (its key file goes into the test's own
/// directory unless the config names one).
pub async fn start_with(mut config: HostConfig) -> TestHost {
    let dir = tempfile::tempdir().unwrap();
    let target = fresh_target(dir.path()).await;
    if config.platform_key_path.is_none() {
        config.platform_key_path = Some(dir.path().join("platform-key.json"));
    }
    let host = Host::open(target, config).await.unwrap();
    let running = host.spawn("127.0.0.1:0").await.unwrap();
    TestHost {
        running,
        dir,
        http: reqwest::Client::new(),
    }
}

/// A value read back with [`TestHost::sql_row`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlValue {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

impl SqlValue {
    pub fn text(&self) -> &str {
        match self {
            SqlValue::Text(t) => t,
            other => panic!("expected text, got {other:?}"),
        }
    }
    pub fn bytes(&self) -> &[u8] {
        match self {
            SqlValue::Bytes(b) => b,
            other => panic!("expected bytes, got {other:?}"),
        }
    }
}

impl TestHost {
    pub fn host(&self) -> &Host {
        &self.running.host
    }

    /// What an operator with database access does by hand: one statement
    /// with text parameters `$1, $2, ...` (both stores read that form),
    /// answering how many rows changed.
    pub async fn sql_execute(&self, sql: &str, params: &[&str]) -> u64 {
        match self.host().target().clone() {
            Target::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                conn.execute(sql, rusqlite::params_from_iter(params.iter()))
                    .unwrap() as u64
            }
            Target::Postgres(url) => {
                let client = pg_client(&url).await;
                let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    params.iter().map(|p| p as _).collect();
                client.execute(sql, &params).await.unwrap()
            }
        }
    }

    /// One row of a query with text parameters, read by hand.
    pub async fn sql_row(&self, sql: &str, params: &[&str]) -> Vec<SqlValue> {
        match self.host().target().clone() {
            Target::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                conn.query_row(sql, rusqlite::params_from_iter(params.iter()), |r| {
                    let mut out = Vec::new();
                    for i in 0..r.as_ref().column_count() {
                        out.push(match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Null => SqlValue::Null,
                            rusqlite::types::ValueRef::Integer(n) => SqlValue::Int(n),
                            rusqlite::types::ValueRef::Real(x) => SqlValue::Text(x.to_string()),
                            rusqlite::types::ValueRef::Text(t) => {
                                SqlValue::Text(String::from_utf8_lossy(t).into_owned())
                            }
                            rusqlite::types::ValueRef::Blob(b) => SqlValue::Bytes(b.to_vec()),
                        });
                    }
                    Ok(out)
                })
                .unwrap()
            }
            Target::Postgres(url) => {
                let client = pg_client(&url).await;
                let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    params.iter().map(|p| p as _).collect();
                let row = client.query_one(sql, &params).await.unwrap();
                use tokio_postgres::types::Type;
                (0..row.len())
                    .map(|i| match *row.columns()[i].type_() {
                        Type::BYTEA => row
                            .get::<_, Option<Vec<u8>>>(i)
                            .map_or(SqlValue::Null, SqlValue::Bytes),
                        Type::INT8 => row
                            .get::<_, Option<i64>>(i)
                            .map_or(SqlValue::Null, SqlValue::Int),
                        Type::INT4 => row
                            .get::<_, Option<i32>>(i)
                            .map_or(SqlValue::Null, |n| SqlValue::Int(n.into())),
                        Type::BOOL => row
                            .get::<_, Option<bool>>(i)
                            .map_or(SqlValue::Null, |b| SqlValue::Int(b.into())),
                        _ => row
                            .get::<_, Option<String>>(i)
                            .map_or(SqlValue::Null, SqlValue::Text),
                    })
                    .collect()
            }
        }
    }
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.running.base_url(), path)
    }
    pub fn now(&self) -> String {
        api::format_timestamp(self.host().clock().now())
    }

    /// A raw request; returns status and body bytes.
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> (u16, Vec<u8>) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.http.request(method, self.url(path)).body(body);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.bytes().await.unwrap().to_vec())
    }

    pub async fn register(&self, name: &str) -> Party {
        let key = keys::generate_signing_key();
        let public_key = keys::public_key_b64(&key.verifying_key());
        let proof = keys::sign_b64(
            &key,
            signed::registration_proof_string(&public_key).as_bytes(),
        );
        let req = RegisterRequest {
            agent_name: format!("{name} Agent"),
            vendor_name: name.to_owned(),
            contact_email: "sales@vendor.example".into(),
            public_key,
            proof,
        };
        let (status, body) = self
            .raw(
                "POST",
                "/api/agent/v1/register",
                &[("content-type", "application/json".into())],
                serde_json::to_vec(&req).unwrap(),
            )
            .await;
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        let r: RegisterResponse = serde_json::from_slice(&body).unwrap();
        Party {
            id: r.agent_id,
            key,
            email: String::new(),
        }
    }

    pub async fn enroll(&self, org: &str, name: &str, email: &str) -> Party {
        let code = self
            .host()
            .enroll_code(org, name, email)
            .await
            .unwrap()
            .code;
        let key = keys::generate_signing_key();
        let public_key = keys::public_key_b64(&key.verifying_key());
        let (proof, authority) = enroll_proof_v2(
            &self.running.base_url(),
            signing::EnrollRole::Approver,
            &code,
            &key,
        );
        let req = EnrollRequest {
            code,
            name: name.into(),
            email: email.into(),
            public_key,
            proof,
            proof_version: Some(signing::PROOF_VERSION_2),
            authority: Some(authority),
        };
        let (status, body) = self
            .raw(
                "POST",
                "/api/console/v1/enroll",
                &[],
                serde_json::to_vec(&req).unwrap(),
            )
            .await;
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        let r: EnrollResponse = serde_json::from_slice(&body).unwrap();
        Party {
            id: r.approver_id,
            key,
            email: email.into(),
        }
    }

    /// A signed request by `party`.
    pub async fn signed(
        &self,
        party: &Party,
        method: &str,
        path: &str,
        body: &Value,
    ) -> (u16, Vec<u8>) {
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(body).unwrap()
        };
        let headers = self.signature_headers(party, method, path, &bytes);
        self.raw(method, path, &headers, bytes).await
    }

    /// The headers signing a request by `party` ([`sign_for`]: ANP/0.1's
    /// on the agent API, version 2 on the approver API and the gate).
    pub fn signature_headers(
        &self,
        party: &Party,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Vec<(&'static str, String)> {
        sign_for(
            &self.running.base_url(),
            party,
            method,
            path,
            body,
            &self.now(),
        )
    }

    pub async fn open_sandbox(&self, vendor: &Party) -> (String, Value) {
        let (status, body) = self
            .signed(
                vendor,
                "POST",
                "/api/agent/v1/sessions",
                &json!({ "target": { "sandbox": true }, "envelope": vendor_envelope() }),
            )
            .await;
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        let v: Value = serde_json::from_slice(&body).unwrap();
        (v["session_id"].as_str().unwrap().to_owned(), v)
    }

    /// Opens a session of `vendor` with the org `org_handle`; answers its id.
    pub async fn open_org(&self, vendor: &Party, org_handle: &str) -> String {
        let (status, body) = self
            .signed(
                vendor,
                "POST",
                "/api/agent/v1/sessions",
                &json!({ "target": { "org_handle": org_handle }, "envelope": vendor_envelope() }),
            )
            .await;
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        serde_json::from_slice::<Value>(&body).unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub async fn submit(
        &self,
        vendor: &Party,
        session: &str,
        kind: &str,
        payload: Value,
    ) -> (u16, Value) {
        let sig = vendor.authorship(kind, &payload);
        let (status, body) = self
            .signed(
                vendor,
                "POST",
                &format!("/api/agent/v1/sessions/{session}/events"),
                &json!({ "kind": kind, "payload": payload, "signature": sig }),
            )
            .await;
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    pub async fn summary(&self, approver: &Party) -> Value {
        let (status, body) = self
            .signed(approver, "GET", "/api/console/v1/summary", &Value::Null)
            .await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).unwrap()
    }

    /// A signed `GET /summary` carrying `If-None-Match` when given: status,
    /// the answer's `ETag` and its body.
    pub async fn summary_if(
        &self,
        approver: &Party,
        if_none_match: Option<&str>,
    ) -> (u16, Option<String>, Vec<u8>) {
        self.summary_at("/api/console/v1/summary", approver, if_none_match)
            .await
    }

    /// `GET /summary?wait=WAIT` with `If-None-Match: tag`: status, ETag and body.
    pub async fn summary_waiting(
        &self,
        approver: &Party,
        tag: &str,
        wait: &str,
    ) -> (u16, Option<String>, Vec<u8>) {
        let path = format!("/api/console/v1/summary?wait={wait}");
        self.summary_at(&path, approver, Some(tag)).await
    }

    /// Returns once `n` requests wait for a change on the host (so a write
    /// made next is one they must be woken by).
    pub async fn until_waiting(&self, n: usize) {
        for _ in 0..2000 {
            if self.host().changes().waiters() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("no summary request started waiting");
    }

    /// A signed GET of the summary at `path` (with its query): status, ETag, body.
    async fn summary_at(
        &self,
        path: &str,
        approver: &Party,
        if_none_match: Option<&str>,
    ) -> (u16, Option<String>, Vec<u8>) {
        let mut req = self.http.get(self.url(path));
        for (k, v) in self.signature_headers(approver, "GET", path, b"") {
            req = req.header(k, v);
        }
        if let Some(tag) = if_none_match {
            req = req.header("if-none-match", tag);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let etag = resp
            .headers()
            .get("etag")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, etag, resp.bytes().await.unwrap().to_vec())
    }

    pub async fn decide(&self, approver: &Party, session: &str, body: Value) -> (u16, Value) {
        let (status, bytes) = self
            .signed(
                approver,
                "POST",
                &format!("/api/console/v1/sessions/{session}/decisions"),
                &body,
            )
            .await;
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }
}

pub struct Party {
    pub id: String,
    pub key: SigningKey,
    pub email: String,
}

impl Party {
    pub fn authorship(&self, kind: &str, payload: &Value) -> String {
        let hash = anp::canonical::canonical_hash(payload);
        keys::sign_b64(&self.key, signed::authorship_string(kind, &hash).as_bytes())
    }

    /// An RFC-002 approval of `event_hash`, signed by this approver.
    pub fn approval(&self, event_hash: &str, at: &str) -> Value {
        let sig = keys::sign_b64(
            &self.key,
            signed::approval_string(event_hash, &self.email, at).as_bytes(),
        );
        json!({ "approved_by": self.email, "at": at, "method": "human", "signature": sig })
    }
}

pub fn vendor_envelope() -> Value {
    json!({
        "party": "Contoso",
        "agent": { "name": "Contoso Seller Agent", "declared_ai": true },
        "may_discuss": ["renewal pricing", "term length"],
        "may_disclose": ["list pricing"],
        "offer_authority": "propose_only"
    })
}

/// An offer of 500 CRM-ENT seats at `unit_price`, expiring at `expires_at`.
pub fn offer(unit_price: u64, expires_at: &str) -> Value {
    json!({
        "currency": "USD",
        "term_months": 12,
        "expires_at": expires_at,
        "line_items": [{
            "sku": "CRM-ENT", "description": "CRM Enterprise seats", "quantity": 500,
            "unit": "seat/year", "unit_price": unit_price, "currency": "USD"
        }],
        "conditions": ["Net 30 payment"]
    })
}

pub const FAR_FUTURE: &str = "2099-01-01T00:00:00Z";

/// A plain client of a PostgreSQL database, for what a test reads by hand.
pub async fn pg_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// A host reached only over HTTP (another process), with the system clock.
pub struct RemoteHost {
    pub base: String,
    pub http: reqwest::Client,
}

impl RemoteHost {
    pub fn new(base: impl Into<String>) -> RemoteHost {
        RemoteHost {
            base: base.into(),
            http: reqwest::Client::new(),
        }
    }

    /// A signed JSON request; status and parsed body (null when not JSON).
    pub async fn json(
        &self,
        party: &Party,
        method: &str,
        path: &str,
        body: &Value,
    ) -> (u16, Value) {
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(body).unwrap()
        };
        let (s, b) = self.send(party, method, path, bytes).await;
        (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
    }

    /// Enrolls an approver with a code the admin issued.
    pub async fn enroll(&self, code: &str, name: &str, email: &str) -> Party {
        let key = keys::generate_signing_key();
        let public_key = keys::public_key_b64(&key.verifying_key());
        let (proof, authority) =
            enroll_proof_v2(&self.base, signing::EnrollRole::Approver, code, &key);
        let req = EnrollRequest {
            code: code.into(),
            name: name.into(),
            email: email.into(),
            public_key,
            proof,
            proof_version: Some(signing::PROOF_VERSION_2),
            authority: Some(authority),
        };
        let resp = self
            .http
            .post(format!("{}/api/console/v1/enroll", self.base))
            .json(&req)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 201);
        let r: EnrollResponse = resp.json().await.unwrap();
        Party {
            id: r.approver_id,
            key,
            email: email.into(),
        }
    }

    pub async fn send(
        &self,
        party: &Party,
        method: &str,
        path: &str,
        body: Vec<u8>,
    ) -> (u16, Vec<u8>) {
        let ts = anp::api::format_timestamp(time::OffsetDateTime::now_utc());
        let h = sign_for(&self.base, party, method, path, &body, &ts);
        let mut req = self
            .http
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                format!("{}{path}", self.base),
            )
            .body(body);
        for (k, v) in h {
            req = req.header(k, v);
        }
        let resp = req.send().await.unwrap();
        (resp.status().as_u16(), resp.bytes().await.unwrap().to_vec())
    }

    pub async fn send_with(&self, h: &anp::api::SignedHeaders, method: &str, path: &str) -> u16 {
        let mut req = self.http.request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            format!("{}{path}", self.base),
        );
        for (k, v) in h.pairs() {
            req = req.header(k, v);
        }
        req.send().await.unwrap().status().as_u16()
    }

    pub async fn register(&self) -> Party {
        let key = anp::keys::generate_signing_key();
        let pk = anp::keys::public_key_b64(&key.verifying_key());
        let proof =
            anp::keys::sign_b64(&key, anp::signed::registration_proof_string(&pk).as_bytes());
        let body = json!({ "agent_name": "A", "vendor_name": "V", "contact_email": "a@v.example", "public_key": pk, "proof": proof });
        let resp = self
            .http
            .post(format!("{}/api/agent/v1/register", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        let v: Value = resp.json().await.unwrap();
        Party {
            id: v["agent_id"].as_str().unwrap().to_owned(),
            key,
            email: String::new(),
        }
    }

    pub async fn open(&self, vendor: &Party) -> String {
        let body = serde_json::to_vec(
            &json!({ "target": { "sandbox": true }, "envelope": vendor_envelope() }),
        )
        .unwrap();
        let (s, b) = self
            .send(vendor, "POST", "/api/agent/v1/sessions", body)
            .await;
        assert_eq!(s, 201);
        serde_json::from_slice::<Value>(&b).unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub async fn submit(&self, vendor: &Party, session: &str, payload: Value) -> u16 {
        let body = serde_json::to_vec(&json!({ "kind": "message", "signature": vendor.authorship("message", &payload), "payload": payload })).unwrap();
        self.send(
            vendor,
            "POST",
            &format!("/api/agent/v1/sessions/{session}/events"),
            body,
        )
        .await
        .0
    }

    /// A signed `GET /summary?wait=WAIT` with `If-None-Match: tag` at this
    /// process: status, the answer's `ETag` and its body.
    pub async fn summary_waiting(
        &self,
        approver: &Party,
        tag: &str,
        wait: u64,
    ) -> (u16, Option<String>, Vec<u8>) {
        let path = format!("/api/console/v1/summary?wait={wait}");
        let ts = anp::api::format_timestamp(time::OffsetDateTime::now_utc());
        let mut req = self.http.get(format!("{}{path}", self.base));
        for (k, v) in sign_for(&self.base, approver, "GET", &path, b"", &ts) {
            req = req.header(k, v);
        }
        let resp = req.header("if-none-match", tag).send().await.unwrap();
        let status = resp.status().as_u16();
        let etag = resp
            .headers()
            .get("etag")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, etag, resp.bytes().await.unwrap().to_vec())
    }

    /// The current summary's status, `ETag` and body at this process
    /// (a signed, unconditional `GET /summary`).
    pub async fn summary_tagged(&self, approver: &Party) -> (u16, String, Vec<u8>) {
        let path = "/api/console/v1/summary";
        let ts = anp::api::format_timestamp(time::OffsetDateTime::now_utc());
        let mut req = self.http.get(format!("{}{path}", self.base));
        for (k, v) in sign_for(&self.base, approver, "GET", path, b"", &ts) {
            req = req.header(k, v);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let etag = resp
            .headers()
            .get("etag")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        (status, etag, resp.bytes().await.unwrap().to_vec())
    }

    pub async fn log(&self, vendor: &Party, session: &str) -> LogDocument {
        let (s, b) = self
            .send(
                vendor,
                "GET",
                &format!("/api/agent/v1/sessions/{session}/log"),
                Vec::new(),
            )
            .await;
        assert_eq!(s, 200);
        serde_json::from_slice(&b).unwrap()
    }
}

/// The authority (`host:port`) of a base URL, as a version 2 signer names it.
pub fn authority_of(base: &str) -> String {
    let url = reqwest::Url::parse(base).unwrap();
    signing::authority(
        url.host_str().unwrap(),
        url.port_or_known_default().unwrap(),
    )
}

/// The headers signing a request by `party` to `base`: ANP/0.1's string on
/// the agent API (its wire), version 2 on the host's own APIs (approver
/// API, gate), covering method, host, path with query, caller and body.
pub fn sign_for(
    base: &str,
    party: &Party,
    method: &str,
    path: &str,
    body: &[u8],
    timestamp: &str,
) -> Vec<(&'static str, String)> {
    let nonce = uuid::Uuid::new_v4().to_string();
    if path.starts_with(api::AGENT_API_BASE) {
        let sig_path = path.split('?').next().unwrap();
        let h = api::sign_request(
            &party.key, &party.id, method, sig_path, body, timestamp, &nonce,
        );
        return h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect();
    }
    let authority = authority_of(base);
    let request = signing::RequestV2 {
        method,
        authority: &authority,
        path_and_query: path,
        body,
    };
    let h = signing::sign_request_v2(&party.key, &party.id, &request, timestamp, &nonce);
    h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// A version 2 enrollment body for `role` at `base` with `code`, proving `key`.
pub fn enroll_proof_v2(
    base: &str,
    role: signing::EnrollRole,
    code: &str,
    key: &SigningKey,
) -> (String, String) {
    let authority = authority_of(base);
    let proof = signing::sign_enroll_proof_v2(key, role, &authority, code);
    (proof, authority)
}

/// ANP/0.1 headers signing a request by `party` with a nonce of the test's
/// choosing (to replay it).
pub fn signed_headers(
    party: &Party,
    method: &str,
    path: &str,
    body: &[u8],
    ts: &str,
    nonce: &str,
) -> Vec<(&'static str, String)> {
    let h = api::sign_request(&party.key, &party.id, method, path, body, ts, nonce);
    h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect()
}
