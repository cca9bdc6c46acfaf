//! A real `countersign-host` on loopback, real vendor agents over HTTP, and engines
//! in their own temporary data directories.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use anp::api::Target;
use anp::EventKind;
use anp_client::AgentClient;
use std::sync::Mutex;

use countersign_engine::{
    ApproverProfile, DisputeNotice, Engine, EngineConfig, Notifier, PendingNotice, SandboxMode,
};
use serde_json::{json, Value};
use tempfile::TempDir;
use time::OffsetDateTime;

pub struct World {
    pub dir: TempDir,
    pub db: PathBuf,
    pub host: Option<countersign_host::RunningHost>,
    pub url: String,
    pub org: String,
}

impl World {
    pub async fn start() -> World {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("host.sqlite3");
        let host =
            countersign_host::Host::open(&db, countersign_host::HostConfig::default()).unwrap();
        let org = host.create_org("Fabrikam Industries").unwrap().org_handle;
        let running = host.spawn("127.0.0.1:0").await.unwrap();
        let url = running.base_url();
        World {
            dir,
            db,
            host: Some(running),
            url,
            org,
        }
    }

    pub fn host(&self) -> &countersign_host::Host {
        &self.host.as_ref().unwrap().host
    }

    pub fn code(&self, email: &str) -> String {
        self.host()
            .enroll_code(&self.org, "Test Approver", email)
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
            .connect_host(&self.url, &self.code(email))
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
        self.host().verify_agent(&reg.agent_id).unwrap();
        let agent = AgentClient::new(&self.url, key, &reg.agent_id).unwrap();
        let envelope =
            anp_client::default_envelope(name, &format!("{name} Agent"), "sales@vendor.example");
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

/// The config the tests use: sandbox off, an hour between polls (tests
/// refresh by hand), approving as `email`.
pub fn test_config(dir: &std::path::Path, email: &str) -> EngineConfig {
    let mut config = EngineConfig::new(dir.to_owned());
    config.sandbox = SandboxMode::Off;
    config.poll_interval = Duration::from_secs(3600);
    config.approver = ApproverProfile {
        name: "Test Approver".into(),
        email: email.into(),
    };
    config
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
    pub disputed: Mutex<Vec<DisputeNotice>>,
}

impl Notifier for Recorder {
    fn pending(&self, notice: &PendingNotice) {
        self.pending.lock().unwrap().push(notice.clone());
    }
    fn disputed(&self, notice: &DisputeNotice) {
        self.disputed.lock().unwrap().push(notice.clone());
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
            offer: counter,
            action,
        })
        .await
        .unwrap()
}

/// The host's copy of the session `session` has event `seq`'s unit price
/// changed in its database, as an operator editing history would.
pub fn rewrite_unit_price(db: &std::path::Path, session: &str, seq: u64, from: u64, to: u64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let body: String = conn
        .query_row(
            "SELECT body FROM events WHERE session_id = ?1 AND seq = ?2",
            rusqlite::params![session, seq],
            |r| r.get(0),
        )
        .unwrap();
    let forged = body.replace(
        &format!("\"unit_price\":{from}"),
        &format!("\"unit_price\":{to}"),
    );
    assert_ne!(forged, body, "the event carries unit_price {from}");
    conn.execute(
        "UPDATE events SET body = ?1 WHERE session_id = ?2 AND seq = ?3",
        rusqlite::params![forged, session, seq],
    )
    .unwrap();
}
