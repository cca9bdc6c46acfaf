//! Poll-cycle benchmark: N sessions on one real host (default 1,000, 100 of
//! them pending, 50 events each), then the cost of an unchanged cycle and of
//! a one-event change, and the process memory. Prints its figures.
//!
//! `SESSIONS=1000 EVENTS=50 PENDING=100 cargo run --release -p countersign-engine --example poll_bench`
//!
//! The host runs in the same process (loopback HTTP), so CPU time and RSS
//! include the host's share; the request and byte counts are the engine's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anp::api::Target;
use anp::EventKind;
use countersign_client::AgentClient;
use countersign_engine::{ApproverProfile, Engine, EngineConfig, SandboxMode};
use serde_json::json;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// User + system CPU seconds of this process, from /proc (Linux only).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn offer(price: u64) -> serde_json::Value {
    let expires = time::OffsetDateTime::now_utc() + Duration::from_secs(7 * 24 * 3600);
    json!({
        "currency": "USD", "term_months": 12,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{ "sku": "CRM-ENT", "description": "CRM seats", "quantity": 500,
                         "unit": "seat/year", "unit_price": price, "currency": "USD" }]
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sessions = env("SESSIONS", 1000);
    let events = env("EVENTS", 50).max(3);
    let pending = env("PENDING", 100).min(sessions);
    let dir = tempfile::tempdir()?;
    // The benchmark seeds faster than a real vendor may send: lift the limits.
    let mut host_config = countersign_host::HostConfig::default();
    let lots = countersign_host::Limit {
        max: u32::MAX / 2,
        window: Duration::from_secs(60),
    };
    host_config.limits.per_ip = lots;
    host_config.limits.per_agent = lots;
    host_config.limits.per_session = lots;
    let host = countersign_host::Host::open(&dir.path().join("host.sqlite3"), host_config).await?;
    let org = host.create_org("Bench Buyer").await?.org_handle;
    let code = host
        .enroll_code(&org, "Bench", "bench@buyer.example")
        .await?
        .code;
    let running = host.clone().spawn("127.0.0.1:0").await?;
    let url = running.base_url();

    // Seed: one vendor, N sessions, messages up to EVENTS events, offers in PENDING.
    let key = anp::keys::generate_signing_key();
    let reg =
        AgentClient::register(&url, &key, "Bench Agent", "Bench Vendor", "v@bench.example").await?;
    host.verify_agent(&reg.agent_id).await?;
    let agent = Arc::new(AgentClient::new(&url, key, &reg.agent_id)?);
    let seeded = Instant::now();
    let mut ids = Vec::new();
    let workers = 8;
    let mut handles = Vec::new();
    for w in 0..workers {
        let agent = agent.clone();
        let org = org.clone();
        handles.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            for i in (w..sessions).step_by(workers) {
                let env = countersign_client::default_envelope(
                    "Bench Vendor",
                    "Bench Agent",
                    "v@bench.example",
                );
                let opened = agent
                    .open_session(
                        Target::Org {
                            org_handle: org.clone(),
                        },
                        env,
                    )
                    .await
                    .expect("open");
                let extra = if i < pending { events - 3 } else { events - 2 };
                for m in 0..extra {
                    agent
                        .submit(
                            &opened.session_id,
                            EventKind::Message,
                            json!({ "body": format!("message {m}") }),
                        )
                        .await
                        .expect("message");
                }
                if i < pending {
                    agent
                        .submit(&opened.session_id, EventKind::Offer, offer(1000 + i as u64))
                        .await
                        .expect("offer");
                }
                mine.push(opened.session_id);
            }
            mine
        }));
    }
    for h in handles {
        ids.extend(h.await?);
    }
    println!(
        "seeded {sessions} sessions x {events} events ({pending} pending) in {:.1}s",
        seeded.elapsed().as_secs_f64()
    );

    let data = tempfile::tempdir()?;
    let mut config = EngineConfig::new(data.path().to_owned());
    config.sandbox = SandboxMode::Off;
    config.poll_interval = Duration::from_secs(3600);
    config.key_store = countersign_engine::KeyStoreChoice::Passphrase;
    config.key_passphrase = Some("a passphrase only the benchmark uses".to_owned());
    config.approver = ApproverProfile {
        name: "Bench".into(),
        email: "bench@buyer.example".into(),
    };
    let rss_before = rss_mb();
    let engine = Engine::open(config)?;
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    engine.connect_host(&url, &code).await?; // enrolls and runs the first (full) sync
    let first = engine.poll_stats();
    println!(
        "first sync: {} requests, {:.1} MB received, {} events verified+stored, {:.2}s wall, {:.2}s CPU",
        first.requests, first.bytes as f64 / 1e6, first.events_stored, t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0
    );
    println!("inbox: {} pending", engine.inbox().await?.len());

    // An unchanged host, side by side: the whole summary (as the first cycle
    // after a start reads it) and the conditional request (304) every later
    // cycle sends. Alternating rounds, so drift on a noisy machine hits both.
    const ROUNDS: u32 = 10;
    let (mut full, mut conditional) = (Cycle::default(), Cycle::default());
    for _ in 0..ROUNDS {
        engine.forget_summary_tags();
        full.add(&engine, engine.refresh()).await?;
        conditional.add(&engine, engine.refresh()).await?;
    }
    full.print("unchanged cycle, whole summary", ROUNDS);
    conditional.print("unchanged cycle, conditional (304)", ROUNDS);
    println!(
        "conditional / whole: {:.3} of the wall time, {:.3} of the CPU",
        conditional.wall / full.wall,
        conditional.cpu / full.cpu
    );

    agent
        .submit(
            &ids[ids.len() / 2],
            EventKind::Message,
            json!({ "body": "one more" }),
        )
        .await?;
    let before = engine.poll_stats();
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    engine.refresh().await?;
    let after = engine.poll_stats();
    println!(
        "one-event cycle: {} request(s), {:.1} KB received, {} event(s) stored, {:.1} ms wall, {:.1} ms CPU",
        after.requests - before.requests,
        (after.bytes - before.bytes) as f64 / 1e3,
        after.events_stored - before.events_stored,
        t0.elapsed().as_secs_f64() * 1e3,
        (cpu_seconds() - cpu0) * 1e3
    );
    println!(
        "process RSS: {:.1} MB before the engine opened, {:.1} MB after sync (host in-process; the engine keeps events in SQLite, not in memory)",
        rss_before,
        rss_mb()
    );
    let db = std::fs::metadata(data.path().join(countersign_engine::DATABASE_FILE))?.len();
    println!("engine database: {:.1} MB", db as f64 / 1e6);
    running.shutdown().await;
    Ok(())
}

/// Sums of several poll cycles of one kind.
#[derive(Default)]
struct Cycle {
    requests: u64,
    bytes: u64,
    wall: f64,
    cpu: f64,
}

impl Cycle {
    async fn add(
        &mut self,
        engine: &Engine,
        cycle: impl std::future::Future<Output = Result<(), countersign_engine::EngineError>>,
    ) -> Result<(), countersign_engine::EngineError> {
        let before = engine.poll_stats();
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        cycle.await?;
        self.wall += t0.elapsed().as_secs_f64();
        self.cpu += cpu_seconds() - cpu0;
        let after = engine.poll_stats();
        self.requests += after.requests - before.requests;
        self.bytes += after.bytes - before.bytes;
        Ok(())
    }

    fn print(&self, what: &str, rounds: u32) {
        let n = f64::from(rounds);
        println!(
            "{what}: {:.1} request(s), {:.1} KB received, {:.1} ms wall, {:.1} ms CPU (mean of {rounds})",
            self.requests as f64 / n,
            self.bytes as f64 / 1e3 / n,
            self.wall * 1e3 / n,
            self.cpu * 1e3 / n
        );
    }
}
