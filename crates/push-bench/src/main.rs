//! `push-bench`: how soon an offer reaches the person, and what an idle
//! console costs a host (issue 32's targets, printed side by side).
//!
//! For each deployment (one host on SQLite; three host processes on one
//! PostgreSQL database behind nginx, on a throwaway cluster of its own) a
//! real console engine connects over HTTP and starts, holding its waiting
//! request; a vendor agent then appends offers one at a time, each in a
//! fresh session, and the time from just before the agent's append to the
//! moment the engine calls its notifier (the seam the desktop notification
//! hangs on, in this process) is recorded: p50, p99 and the slowest. Then
//! both consoles sit idle for `--idle-seconds`, and the requests each sent
//! meanwhile (as the engine counts them) are scaled to an hour.
//!
//! A benchmark, never a test: the figures depend on the machine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anp::api::Target;
use anp::EventKind;
use clap::Parser;
use countersign_client::AgentClient;
use countersign_engine::{
    ApproverProfile, BreachNotice, DisputeNotice, Engine, EngineConfig, Notifier, PendingNotice,
    SandboxMode, UpdateMode,
};
use countersign_host::{Host, HostConfig};
use countersign_testkit::deployment::{roomy_limits, Deployment, Launch};
use countersign_testkit::postgres::Cluster;
use tokio::sync::mpsc;

mod held;

/// p99 must stay under this (ms).
const TARGET_P99_MS: f64 = 1000.0;
/// p50 must stay under this (ms).
const TARGET_P50_MS: f64 = 200.0;
/// An idle console may cost a host at most this many requests an hour.
const TARGET_IDLE_PER_HOUR: f64 = 60.0;
/// Longest wait for one offer's notice before the run is called failed.
const NOTICE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Parser, Debug)]
#[command(
    name = "push-bench",
    about = "Offer-to-notifier latency on SQLite and on three hosts behind nginx on PostgreSQL, and an idle console's requests per hour"
)]
struct Args {
    /// Offers per deployment (p99 wants at least 200).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    offers: u64,
    /// Seconds both consoles are left idle before their requests are
    /// counted and scaled to an hour.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    idle_seconds: u64,
    /// Consoles that hold a waiting request at one host process while its
    /// append throughput and memory are measured (0 skips that part).
    #[arg(long, default_value_t = 1000)]
    waiting: usize,
    /// Seconds of appends per phase of the waiting part.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    load_seconds: u64,
    /// Concurrent vendor agents appending in the waiting part.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    agents: u32,
    /// Only the waiting part (no latency or idle figures).
    #[arg(long)]
    waiting_only: bool,
    /// Internal: run as one host process of the PostgreSQL deployment.
    #[arg(long, hide = true)]
    as_host_process: bool,
}

/// Hands every pending notice (its session, when) to the measuring loop.
struct Stopwatch(mpsc::UnboundedSender<(String, Instant)>);

impl Notifier for Stopwatch {
    fn pending(&self, notice: &PendingNotice) {
        let _ = self.0.send((notice.session_id.clone(), Instant::now()));
    }
    fn reminder(&self, _: &PendingNotice) {}
    fn disputed(&self, _: &DisputeNotice) {}
    fn breach(&self, _: &BreachNotice) {}
}

/// One deployment's console, kept running for the idle phase.
struct Measured {
    name: &'static str,
    latencies_ms: Vec<f64>,
    engine: Engine,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("push-bench: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    if args.as_host_process {
        runtime.block_on(countersign_testkit::deployment::serve_from_env());
        return std::process::ExitCode::from(1);
    }
    match runtime.block_on(run(&args)) {
        Ok(met) => std::process::ExitCode::from(if met { 0 } else { 1 }),
        Err(e) => {
            eprintln!("push-bench: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

async fn run(args: &Args) -> Result<bool, String> {
    let met = if args.waiting_only {
        true
    } else {
        latency_and_idle(args).await?
    };
    if args.waiting > 0 {
        let figures = held::run(args.waiting, args.load_seconds, args.agents).await?;
        held::print(&figures);
    }
    Ok(met)
}

/// The offer-to-notifier latency on both deployments, then both consoles idle.
async fn latency_and_idle(args: &Args) -> Result<bool, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    // One host on SQLite, serving in this process.
    let sqlite = Host::open(
        dir.path().join("host.sqlite3"),
        HostConfig {
            limits: roomy_limits(),
            ..HostConfig::default()
        },
    )
    .await
    .map_err(|e| format!("opening the SQLite host: {e}"))?;
    let running = sqlite
        .clone()
        .spawn("127.0.0.1:0")
        .await
        .map_err(|e| format!("serving the SQLite host: {e}"))?;
    // Three host processes (this binary, re-run) on a cluster of its own.
    let cluster = tokio::task::spawn_blocking(Cluster::start)
        .await
        .map_err(|e| e.to_string())??;
    let deployment = Deployment::start_on(
        &cluster,
        Launch::ThisBinary(vec!["--as-host-process".into()]),
        3,
    )
    .await?;

    let one = measure(
        "1 host process, SQLite",
        &running.base_url(),
        &sqlite,
        args.offers,
        &dir.path().join("console-sqlite"),
    )
    .await?;
    let three = measure(
        "3 host processes behind nginx, PostgreSQL",
        &deployment.url(),
        &deployment.admin,
        args.offers,
        &dir.path().join("console-postgres"),
    )
    .await?;

    // Both consoles idle at once, for the same measured interval.
    let before: Vec<u64> = [&one, &three]
        .iter()
        .map(|m| m.engine.poll_stats().requests)
        .collect();
    let idle_started = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.idle_seconds)).await;
    let idle = idle_started.elapsed().as_secs_f64();
    let per_hour: Vec<(u64, f64)> = [&one, &three]
        .iter()
        .zip(before)
        .map(|(m, b)| {
            let sent = m.engine.poll_stats().requests.saturating_sub(b);
            (sent, sent as f64 * 3600.0 / idle)
        })
        .collect();

    println!(
        "push-bench: {} offers per deployment, each from a vendor agent's append to the console's notifier",
        args.offers
    );
    println!(
        "{:<44} {:>9} {:>9} {:>9} {:>22}",
        "deployment", "p50 ms", "p99 ms", "max ms", "idle requests/hour"
    );
    let mut met = true;
    for (m, (sent, hourly)) in [&one, &three].iter().zip(&per_hour) {
        let (p50, p99, max) = percentiles(&m.latencies_ms);
        met &= p50 < TARGET_P50_MS && p99 < TARGET_P99_MS && *hourly <= TARGET_IDLE_PER_HOUR;
        println!(
            "{:<44} {:>9.1} {:>9.1} {:>9.1} {:>22}",
            m.name,
            p50,
            p99,
            max,
            format!("{hourly:.0} ({sent} in {idle:.0} s)")
        );
    }
    println!(
        "idle: requests the console sent while nothing changed, counted over {idle:.0} s and scaled to an hour (a console polling every 5 s sends 720)"
    );
    println!(
        "targets: p50 < {TARGET_P50_MS} ms, p99 < {TARGET_P99_MS} ms, idle ≤ {TARGET_IDLE_PER_HOUR} requests/hour: {}",
        if met { "met" } else { "NOT met" }
    );
    for m in [&one, &three] {
        m.engine.shutdown().await;
    }
    drop(deployment);
    running.shutdown().await;
    Ok(met)
}

/// Connects a console to `url`, starts it, and times `offers` offers from
/// a vendor agent to its notifier.
async fn measure(
    name: &'static str,
    url: &str,
    admin: &Host,
    offers: u64,
    data_dir: &std::path::Path,
) -> Result<Measured, String> {
    let org = admin
        .create_org("Fabrikam Industries")
        .await
        .map_err(|e| e.to_string())?
        .org_handle;
    let code = admin
        .enroll_code(&org, "Ada Lovelace", "ada@fabrikam.example")
        .await
        .map_err(|e| e.to_string())?
        .code;
    let mut config = EngineConfig::new(data_dir.to_owned());
    config.sandbox = SandboxMode::Off;
    // A throwaway console: its key sealed in its temporary data directory
    // (an approver key must be kept before anything is enrolled with it).
    config.key_store = countersign_engine::KeyStoreChoice::Passphrase;
    config.key_passphrase = Some("a passphrase only the benchmark uses".to_owned());
    config.approver = ApproverProfile {
        name: "Ada Lovelace".into(),
        email: "ada@fabrikam.example".into(),
    };
    let engine = Engine::open(config).map_err(|e| e.to_string())?;
    engine
        .connect_host(url, &code)
        .await
        .map_err(|e| format!("{name}: connecting the console: {e}"))?;
    let (tx, mut told) = mpsc::unbounded_channel();
    engine.set_notifier(Arc::new(Stopwatch(tx)));
    engine.start().await.map_err(|e| e.to_string())?;
    let waiting = async {
        loop {
            let hosts = engine.hosts().await.unwrap_or_default();
            if hosts.iter().any(|h| h.updates.mode == UpdateMode::Waiting) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .map_err(|_| format!("{name}: the console never started waiting at the host"))?;

    let key = anp::keys::generate_signing_key();
    let registered = AgentClient::register(
        url,
        &key,
        "Northwind Agent",
        "Northwind",
        "sales@northwind.example",
    )
    .await
    .map_err(|e| e.to_string())?;
    admin
        .verify_agent(&registered.agent_id)
        .await
        .map_err(|e| e.to_string())?;
    let agent = AgentClient::new(url, key, &registered.agent_id).map_err(|e| e.to_string())?;
    let mut latencies_ms = Vec::with_capacity(offers as usize);
    for _ in 0..offers {
        let opened = agent
            .open_session(
                Target::Org {
                    org_handle: org.clone(),
                },
                countersign_client::default_envelope(
                    "Northwind",
                    "Northwind Agent",
                    "sales@northwind.example",
                ),
            )
            .await
            .map_err(|e| e.to_string())?;
        // The new session wakes the console too; the offer is timed from a
        // console that has taken it in and waits again.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let appended = Instant::now();
        agent
            .submit(&opened.session_id, EventKind::Offer, offer())
            .await
            .map_err(|e| e.to_string())?;
        loop {
            let (session, at) = tokio::time::timeout(NOTICE_TIMEOUT, told.recv())
                .await
                .map_err(|_| format!("{name}: no notice within {NOTICE_TIMEOUT:?}"))?
                .ok_or("the notifier went away")?;
            if session == opened.session_id {
                latencies_ms.push(at.duration_since(appended).as_secs_f64() * 1000.0);
                break;
            }
        }
    }
    Ok(Measured {
        name,
        latencies_ms,
        engine,
    })
}

/// p50, p99 and the maximum of `values` (nearest rank).
fn percentiles(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |p: f64| {
        let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
        sorted.get(i).copied().unwrap_or(f64::NAN)
    };
    (
        rank(0.50),
        rank(0.99),
        sorted.last().copied().unwrap_or(f64::NAN),
    )
}

/// A formal offer, a day to decide.
fn offer() -> serde_json::Value {
    let expires = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    serde_json::json!({
        "currency": "USD",
        "term_months": 36,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{
            "sku": "CRM-ENT",
            "description": "CRM Enterprise seats",
            "quantity": 500,
            "unit": "seat/year",
            "unit_price": 1200,
            "currency": "USD"
        }],
        "conditions": ["Net 60 payment"],
        "notes": "Includes premier support."
    })
}
