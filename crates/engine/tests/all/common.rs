//! A real `countersign-host` on loopback, real vendor agents over HTTP, and engines
//! in their own temporary data directories.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use anp::api::Target;
use anp::EventKind;
use countersign_client::AgentClient;
use std::sync::Mutex;

use countersign_engine::{
    ApproverProfile, BreachNotice, DisputeNotice, Engine, EngineConfig, Notifier, PendingNotice,
    SandboxMode,
};
use serde_json::{json, Value};
use tempfile::TempDir;
use time::OffsetDateTime;

/// The variable that runs every engine test against a deployment instead
/// of an in-process host: `nginx-postgres` means three host processes on one
/// PostgreSQL database behind nginx (`countersign_testkit::deployment`).
/// `deployment::every_engine_test_passes_through_nginx_...` sets it.
pub const DEPLOYMENT_VAR: &str = "COUNTERSIGN_ENGINE_TEST_HOST";

/// The ignored test a host process of the deployment runs (see
/// `countersign_testkit::deployment::Launch::ThisTest`).
pub const HOST_PROCESS_TEST: &str = "common::deployment_host_process";

pub fn through_deployment() -> bool {
    countersign_testkit::deployment::selected(DEPLOYMENT_VAR)
}

/// What a test process of the deployment runs: a host serving the database
/// the fixture names, until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a host process of the nginx + PostgreSQL deployment fixture; the fixture runs it"]
async fn deployment_host_process() {
    countersign_testkit::deployment::serve_from_env().await;
}

/// Every engine test again, against the deployment: this test runs this
/// binary once more with [`DEPLOYMENT_VAR`] set, so `cargo test` proves the
/// engine works unchanged through nginx in front of three host processes on
/// one PostgreSQL database. A failure prints the inner run's report.
#[test]
fn every_engine_test_passes_through_nginx_in_front_of_three_host_processes_on_postgresql() {
    if through_deployment() {
        return; // the inner run skips this test; nothing to nest
    }
    if let Err(report) = countersign_testkit::deployment::rerun_this_binary(
        DEPLOYMENT_VAR,
        "nginx-postgres",
        &["every_engine_test_passes_through_nginx"],
    ) {
        panic!("{report}");
    }
}

/// Where the world's host is served from.
enum Serving {
    /// One host in this process on a SQLite file; `None` while stopped.
    InProcess {
        db: PathBuf,
        running: Option<countersign_host::RunningHost>,
        addr: std::net::SocketAddr,
    },
    /// Three host processes on PostgreSQL behind nginx; "stopping the host"
    /// stops nginx, the deployment's one address.
    Deployment(Box<countersign_testkit::deployment::Deployment>),
}

/// A parameter of [`World::host_sql`].
#[derive(Clone, Copy)]
pub enum SqlArg<'a> {
    Text(&'a str),
    Int(i64),
}

pub struct World {
    pub dir: TempDir,
    serving: Serving,
    admin: countersign_host::Host,
    pub url: String,
    pub org: String,
}

impl World {
    pub async fn start() -> World {
        let dir = tempfile::tempdir().unwrap();
        if !through_deployment() {
            // Version 1 signatures refused: every test proves the console
            // speaks version 2 (docs/approver-api.md, "Signed requests").
            return World::in_process(dir, World::host_config()).await;
        }
        let deployment = countersign_testkit::deployment::Deployment::start_refusing_v1(
            countersign_testkit::deployment::Launch::ThisTest(HOST_PROCESS_TEST.into()),
            3,
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let admin = deployment.admin.clone();
        let url = deployment.url();
        World::with_org(dir, Serving::Deployment(Box::new(deployment)), admin, url).await
    }

    /// The configuration of a test host: version 1 signatures refused, and
    /// the SDK agents' loopback callbacks allowed, as an admin would allow
    /// the network they listen on.
    pub fn host_config() -> countersign_host::HostConfig {
        countersign_host::HostConfig {
            accept_v1_signatures: false,
            callback_networks: vec![
                countersign_host::callback::Network::parse("127.0.0.1/32").unwrap()
            ],
            ..countersign_host::HostConfig::default()
        }
    }

    /// A world whose host runs in this process with `config`, whichever
    /// way the suite runs (for what only a host's configuration shows).
    pub async fn start_in_process(config: countersign_host::HostConfig) -> World {
        World::in_process(tempfile::tempdir().unwrap(), config).await
    }

    async fn in_process(dir: TempDir, config: countersign_host::HostConfig) -> World {
        let db = dir.path().join("host.sqlite3");
        let host = countersign_host::Host::open(&db, config).await.unwrap();
        let running = host.clone().spawn("127.0.0.1:0").await.unwrap();
        let (addr, url) = (running.addr, running.base_url());
        let serving = Serving::InProcess {
            db,
            running: Some(running),
            addr,
        };
        World::with_org(dir, serving, host, url).await
    }

    async fn with_org(
        dir: TempDir,
        serving: Serving,
        admin: countersign_host::Host,
        url: String,
    ) -> World {
        let org = admin
            .create_org("Fabrikam Industries")
            .await
            .unwrap()
            .org_handle;
        World {
            dir,
            serving,
            admin,
            url,
            org,
        }
    }

    /// The host the admin works on (the serving one, or one on the same
    /// database).
    pub fn host(&self) -> &countersign_host::Host {
        &self.admin
    }

    /// The one address consoles know the host by.
    pub fn addr(&self) -> std::net::SocketAddr {
        match &self.serving {
            Serving::InProcess { addr, .. } => *addr,
            Serving::Deployment(d) => d.nginx.addr(),
        }
    }

    /// The host stops answering at its address (which is then free).
    pub async fn stop(&mut self) {
        match &mut self.serving {
            Serving::InProcess { running, .. } => {
                if let Some(running) = running.take() {
                    running.shutdown().await;
                }
            }
            Serving::Deployment(d) => {
                d.nginx.stop();
                // Stopping blocked this thread; let the clients' connection
                // tasks see their connections closed, as they would have while
                // an in-process host shut down.
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
    }

    /// The same host answers again at the same address.
    pub async fn restart(&mut self) {
        let addr = self.addr();
        match &mut self.serving {
            Serving::InProcess { running, .. } => {
                *running = Some(self.admin.clone().spawn(&addr.to_string()).await.unwrap());
            }
            Serving::Deployment(d) => d.nginx.restart().unwrap(),
        }
    }

    /// Runs `sql` (parameters `$1`, `$2`, … bound to `args` in order) on the
    /// host's database, SQLite or PostgreSQL: the first column of every row
    /// it answers, as text (empty for a statement), and the rows it changed.
    pub async fn host_sql(&self, sql: &str, args: &[SqlArg<'_>]) -> (Vec<String>, u64) {
        match &self.serving {
            Serving::InProcess { db, .. } => {
                let conn = rusqlite::Connection::open(db).unwrap();
                let params: Vec<&dyn rusqlite::ToSql> = args
                    .iter()
                    .map(|a| match a {
                        SqlArg::Text(t) => t as &dyn rusqlite::ToSql,
                        SqlArg::Int(n) => n as &dyn rusqlite::ToSql,
                    })
                    .collect();
                let mut stmt = conn.prepare(sql).unwrap();
                if stmt.column_count() == 0 {
                    let n = stmt.execute(params.as_slice()).unwrap();
                    return (Vec::new(), n as u64);
                }
                let rows = stmt
                    .query_map(params.as_slice(), |r| r.get::<_, String>(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                (rows, 0)
            }
            Serving::Deployment(d) => {
                let (client, connection) =
                    tokio_postgres::connect(&d.db_url, tokio_postgres::NoTls)
                        .await
                        .unwrap();
                tokio::spawn(connection);
                let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
                    .iter()
                    .map(|a| match a {
                        SqlArg::Text(t) => t as &(dyn tokio_postgres::types::ToSql + Sync),
                        SqlArg::Int(n) => n as &(dyn tokio_postgres::types::ToSql + Sync),
                    })
                    .collect();
                if sql.trim_start().to_ascii_uppercase().starts_with("SELECT") {
                    let rows = client.query(sql, &params).await.unwrap();
                    (rows.iter().map(|r| r.get(0)).collect(), 0)
                } else {
                    (Vec::new(), client.execute(sql, &params).await.unwrap())
                }
            }
        }
    }

    /// What the host's operator could do with database access: rewrite one
    /// stored JSON text, the `body` of the one row of `table` that `key`
    /// names (a `WHERE` clause over `$1`, `$2`).
    async fn tamper_body(
        &self,
        table: &str,
        key: &str,
        args: &[SqlArg<'_>],
        edit: impl Fn(&str) -> String,
    ) {
        let (bodies, _) = self
            .host_sql(&format!("SELECT body FROM {table} WHERE {key}"), args)
            .await;
        assert_eq!(bodies.len(), 1, "one row of {table} where {key}");
        let forged = edit(&bodies[0]);
        assert_ne!(forged, bodies[0]);
        let mut with_body = vec![SqlArg::Text(&forged)];
        with_body.extend_from_slice(args);
        let shifted = key.replace("$2", "$3").replace("$1", "$2");
        let (_, n) = self
            .host_sql(
                &format!("UPDATE {table} SET body = $1 WHERE {shifted}"),
                &with_body,
            )
            .await;
        assert_eq!(n, 1);
    }

    /// Rewrites one stored ANP event's JSON text.
    pub async fn tamper_event(&self, session: &str, seq: i64, edit: impl Fn(&str) -> String) {
        let args = [SqlArg::Text(session), SqlArg::Int(seq)];
        self.tamper_body("events", "session_id = $1 AND seq = $2", &args, edit)
            .await;
    }

    /// Rewrites one mirrored gate message's stored JSON text (`seq`
    /// 1-based; `session` the transcript's own id).
    pub async fn tamper_gate_message(
        &self,
        session: &str,
        seq: i64,
        edit: impl Fn(&str) -> String,
    ) {
        let args = [SqlArg::Text(session), SqlArg::Int(seq)];
        self.tamper_body("gate_messages", "session_id = $1 AND seq = $2", &args, edit)
            .await;
    }

    /// Every mirrored message of gate session `session` as the host stores
    /// it (its JSON text as the agent sent it), in order.
    pub async fn gate_message_bodies(&self, session: &str) -> Vec<String> {
        self.host_sql(
            "SELECT body FROM gate_messages WHERE session_id = $1 ORDER BY seq",
            &[SqlArg::Text(session)],
        )
        .await
        .0
    }

    /// The operator swaps the keys a gate session was mirrored with.
    pub async fn tamper_gate_session_keys(&self, session: &str, keys: &str) {
        let (_, n) = self
            .host_sql(
                "UPDATE gate_sessions SET keys = $1 WHERE session_id = $2",
                &[SqlArg::Text(keys), SqlArg::Text(session)],
            )
            .await;
        assert_eq!(n, 1);
    }

    /// The host's copy of session `session` has event `seq`'s unit price
    /// changed in its database, as an operator editing history would.
    pub async fn rewrite_unit_price(&self, session: &str, seq: i64, from: u64, to: u64) {
        self.tamper_event(session, seq, |body| {
            let forged = body.replace(
                &format!("\"unit_price\":{from}"),
                &format!("\"unit_price\":{to}"),
            );
            assert_ne!(forged, body, "the event carries unit_price {from}");
            forged
        })
        .await;
    }

    /// Loads an org policy that needs `approvers` distinct approvers above
    /// `above_total` and keeps `secret_values` (`[{label, value}]`) out of
    /// everything sent outward.
    pub async fn load_policy(&self, above_total: &str, approvers: u32, secret_values: Value) {
        let policy = json!({
            "max_rounds": 0, "concession_per_round": "0", "skus": {},
            "approval": { "above_total": above_total, "approvers_required": approvers },
            "may_discuss": ["pricing"], "may_disclose": [], "will_not_disclose": [],
            "secret_values": secret_values
        });
        self.host()
            .load_policy(&self.org, &policy.to_string())
            .await
            .unwrap();
    }

    pub async fn code(&self, email: &str) -> String {
        self.host()
            .enroll_code(&self.org, &name_of(email), email)
            .await
            .unwrap()
            .code
    }

    /// An engine enrolled as `email`, sandbox off, in its own data dir.
    pub async fn engine(&self, email: &str) -> (TempDir, Engine) {
        self.engine_with(email, |_| {}).await
    }

    /// As [`World::engine`], with `adjust` applied to the config first.
    pub async fn engine_with(
        &self,
        email: &str,
        adjust: impl FnOnce(&mut EngineConfig),
    ) -> (TempDir, Engine) {
        let data = tempfile::tempdir().unwrap();
        let mut config = test_config(data.path(), email);
        adjust(&mut config);
        let engine = Engine::open(config).unwrap();
        engine
            .connect_host(&self.url, &self.code(email).await)
            .await
            .unwrap();
        (data, engine)
    }

    /// A verified vendor agent with an open session to the org.
    pub async fn vendor(&self, name: &str) -> (AgentClient, String) {
        let key = anp::keys::generate_signing_key();
        let reg = AgentClient::register(
            &self.url,
            &key,
            &format!("{name} Agent"),
            name,
            "sales@vendor.example",
        )
        .await
        .unwrap();
        self.host().verify_agent(&reg.agent_id).await.unwrap();
        let agent = AgentClient::new(&self.url, key, &reg.agent_id).unwrap();
        let envelope = countersign_client::default_envelope(
            name,
            &format!("{name} Agent"),
            "sales@vendor.example",
        );
        let opened = agent
            .open_session(
                Target::Org {
                    org_handle: self.org.clone(),
                },
                envelope,
            )
            .await
            .unwrap();
        (agent, opened.session_id)
    }
}

/// The passphrase the tests seal their approver keys with.
pub const TEST_PASSPHRASE: &str = "a passphrase only the tests use";

/// A config in `dir` whose approver key is sealed with [`TEST_PASSPHRASE`],
/// given up front: no test asks the machine's secret store, and none types.
pub fn config_in(dir: impl Into<std::path::PathBuf>) -> EngineConfig {
    let mut config = EngineConfig::new(dir.into());
    config.key_store = countersign_engine::KeyStoreChoice::Passphrase;
    config.key_passphrase = Some(TEST_PASSPHRASE.to_owned());
    config
}

/// The config the tests use: sandbox off, an hour between polls (tests
/// refresh by hand), approving as `email`.
pub fn test_config(dir: &std::path::Path, email: &str) -> EngineConfig {
    let mut config = config_in(dir);
    config.sandbox = SandboxMode::Off;
    config.poll_interval = Duration::from_secs(3600);
    config.approver = ApproverProfile {
        name: name_of(email),
        email: email.into(),
    };
    config
}

/// The name an approver enrolls under: the email's local part, capitalised
/// ("grace@fabrikam.example" is "Grace"), so views naming them can be told
/// apart.
pub fn name_of(email: &str) -> String {
    let local = email.split('@').next().unwrap_or(email);
    let mut chars = local.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub fn offer(unit_price: u64, expires_in: Duration) -> Value {
    json!({
        "currency": "USD",
        "term_months": 36,
        "expires_at": anp::api::format_timestamp(OffsetDateTime::now_utc() + expires_in),
        "line_items": [{
            "sku": "CRM-ENT",
            "description": "CRM Enterprise seats",
            "quantity": 500,
            "unit": "seat/year",
            "unit_price": unit_price,
            "currency": "USD"
        }],
        "conditions": ["Net 60 payment"],
        "notes": "Includes premier support."
    })
}

pub const DAY: Duration = Duration::from_secs(24 * 3600);

pub async fn submit(
    agent: &AgentClient,
    session: &str,
    kind: EventKind,
    payload: Value,
) -> anp::LogDocument {
    agent.submit(session, kind, payload).await.unwrap()
}

/// A notifier that keeps every notice it is given, to count and read them.
#[derive(Default)]
pub struct Recorder {
    pub pending: Mutex<Vec<PendingNotice>>,
    pub reminders: Mutex<Vec<PendingNotice>>,
    pub disputed: Mutex<Vec<DisputeNotice>>,
    pub breaches: Mutex<Vec<BreachNotice>>,
}

impl Notifier for Recorder {
    fn pending(&self, notice: &PendingNotice) {
        self.pending.lock().unwrap().push(notice.clone());
    }
    fn reminder(&self, notice: &PendingNotice) {
        self.reminders.lock().unwrap().push(notice.clone());
    }
    fn disputed(&self, notice: &DisputeNotice) {
        self.disputed.lock().unwrap().push(notice.clone());
    }
    fn breach(&self, notice: &BreachNotice) {
        self.breaches.lock().unwrap().push(notice.clone());
    }
}

/// Approves, declines (with a reason) or counters (with `counter`) one offer.
pub async fn decide(
    engine: &Engine,
    host_id: &str,
    session: &str,
    hash: &str,
    action: countersign_engine::DecideAction,
    counter: Option<Value>,
) -> countersign_engine::DecisionResult {
    use countersign_engine::{DecideAction, DecideRequest};
    engine
        .decide(DecideRequest {
            host_id: host_id.to_owned(),
            session_id: session.to_owned(),
            in_response_to: hash.to_owned(),
            reason: (action == DecideAction::Decline).then(|| "Over our budget.".to_owned()),
            counter,
            action,
        })
        .await
        .unwrap()
}

/// An inbox row's exact amount (every ANP offer has one).
pub fn total(item: &countersign_engine::InboxItem) -> String {
    item.amount
        .as_ref()
        .expect("an ANP offer has an amount")
        .value
        .clone()
}

/// The amount of the offer a row answers, when it answers one.
pub fn previous_total(item: &countersign_engine::InboxItem) -> Option<&str> {
    item.previous_amount.as_ref().map(|a| a.value.as_str())
}

/// The ANP offer view of a proposal view.
pub fn anp_view(view: &countersign_engine::ProposalView) -> &countersign_engine::AnpOfferView {
    match &view.detail {
        countersign_engine::ProposalDetail::AnpOffer(offer) => offer,
        other => panic!("not an ANP offer: {other:?}"),
    }
}

/// A counter check's ANP diff, as JSON.
pub fn anp_diff(diff: Option<countersign_engine::ProposalDiff>) -> Value {
    match diff {
        Some(countersign_engine::ProposalDiff::AnpOffer(diff)) => {
            serde_json::to_value(diff).unwrap()
        }
        other => panic!("not an ANP diff: {other:?}"),
    }
}

/// Sets a notifier on `engine` that keeps what it is told.
pub fn recorded(engine: &Engine) -> std::sync::Arc<Recorder> {
    let recorder = std::sync::Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    recorder
}

/// The history row's count of proposals accepted against a decision.
pub async fn breaches_in_history(engine: &Engine, session_id: &str) -> u32 {
    let rows = engine
        .sessions(countersign_engine::HistoryFilter::default())
        .await
        .unwrap();
    rows.iter()
        .find(|r| r.session_id == session_id)
        .expect("the session in history")
        .breaches
}

/// Reads the CSV export into rows of fields (every field is quoted).
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| {
            let mut fields = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match (c, quoted) {
                    ('"', true) if chars.peek() == Some(&'"') => {
                        field.push('"');
                        chars.next();
                    }
                    ('"', _) => quoted = !quoted,
                    (',', false) => fields.push(std::mem::take(&mut field)),
                    (c, _) => field.push(c),
                }
            }
            fields.push(field);
            fields
        })
        .collect()
}
