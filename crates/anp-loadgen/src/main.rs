//! `anp-loadgen`: N concurrent vendor agents, each registering, opening a
//! sandbox session and submitting signed events against one host with durable
//! storage; then, in the same run, bare SQLite inserts with the host's
//! durability settings, and the ratio between the two. Loopback only,
//! bounded in count and in time.

mod bare_postgres;
mod bare_sqlite;
mod load;
mod postgres;
mod stats;
mod traffic;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;

/// The host's allocator (`countersign-host` uses it too), so that the
/// in-process host measures what a served one costs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "anp-loadgen",
    version,
    about = "Signed ANP appends per second against one host, beside bare SQLite inserts"
)]
struct Args {
    /// Concurrent vendor agents.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1024))]
    agents: u32,
    /// Signed events each agent submits.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    events: u32,
    /// Events per session before an agent opens a fresh one (the host answers
    /// every append with the whole log, so long sessions cost more per append).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    per_session: u32,
    /// A running host on loopback (`http://127.0.0.1:PORT`); default: spawn one
    /// in-process on a temporary database. Its rate limits apply.
    #[arg(long, value_name = "URL")]
    host: Option<String>,
    /// `synchronous` of the in-process host and of the bare SQLite baseline.
    /// Default: `both`, the host's default (`full`) then `normal`, side by
    /// side in one run. With `--host`, the running host's setting, which the
    /// bare baseline then uses (default `full`, the host's default).
    #[arg(long, value_enum)]
    sync: Option<Sync>,
    /// Rows for the bare baseline (SQLite, or PostgreSQL with --store postgres).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    sqlite_rows: u32,
    /// Longest time the append phase may run; it stops there and reports.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    max_seconds: u64,
    /// The store of the hosts under load: `sqlite` (one in-process host on a
    /// temporary file) or `postgres` (a throwaway PostgreSQL cluster of its
    /// own, 1 then 3 host processes on it, beside bare PostgreSQL inserts).
    #[arg(long, value_enum, default_value_t = Store::Sqlite)]
    store: Store,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Internal: run as one host process of the PostgreSQL deployment.
    #[arg(long, hide = true)]
    as_host_process: bool,
    /// Internal: as a host process, where to write the store's statement
    /// and round-trip counts.
    #[arg(long, hide = true, value_name = "DIR")]
    traffic_dir: Option<std::path::PathBuf>,
}

impl Args {
    /// The load these arguments ask for, against `base_url` (and, when
    /// `spread` is not empty, spread over those hosts).
    fn plan(&self, base_url: String, spread: Vec<String>) -> load::Plan {
        load::Plan {
            base_url,
            spread,
            agents: self.agents,
            events: self.events,
            per_session: self.per_session,
            budget: Duration::from_secs(self.max_seconds),
        }
    }
}

/// Which store the load runs on.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Store {
    /// One in-process host on a SQLite file.
    Sqlite,
    /// Host processes on a throwaway PostgreSQL cluster.
    Postgres,
}

/// SQLite durability, as the host's `--sync` flag names it.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Sync {
    /// `synchronous=FULL` then `synchronous=NORMAL`, one after the other.
    Both,
    /// `synchronous=FULL`: an acknowledged event survives power loss (the
    /// host's default; its commits share fsyncs).
    Full,
    /// `synchronous=NORMAL`: survives a process crash, not power loss.
    Normal,
}

impl Sync {
    /// The durabilities to measure, the host's default first.
    fn durabilities(self) -> &'static [countersign_host::Durability] {
        use countersign_host::Durability;
        match self {
            Sync::Both => &[Durability::Full, Durability::Normal],
            Sync::Full => &[Durability::Full],
            Sync::Normal => &[Durability::Normal],
        }
    }
}

/// The figures of a SQLite run: one [`Report`] per durability measured.
#[derive(Serialize, Debug)]
struct SqliteReport {
    store: &'static str,
    runs: Vec<Report>,
}

/// The figures of one run.
#[derive(Serialize, Debug)]
struct Report {
    host: String,
    in_process_host: bool,
    synchronous: &'static str,
    agents: u32,
    appends: usize,
    errors: usize,
    first_error: Option<String>,
    seconds: f64,
    appends_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    sqlite_inserts: usize,
    sqlite_seconds: f64,
    sqlite_inserts_per_second: f64,
    ratio: f64,
    target_met: bool,
}

/// The target of issue 3 on a 2-core machine.
const TARGET_APPENDS_PER_SECOND: f64 = 1000.0;
/// Signed appends must keep this share of bare inserts at the same
/// durability: the least measured before the store was written once (issue
/// 29: "no worse than today's, 0.34 to 0.39 at FULL"), replacing the
/// withdrawn 0.3 of the first target.
const TARGET_RATIO: f64 = 0.34;
/// p99 latency must stay under this, in milliseconds.
const TARGET_P99_MS: f64 = 50.0;

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("anp-loadgen: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    if args.as_host_process {
        let traffic_dir = args.traffic_dir.clone();
        runtime.block_on(countersign_testkit::deployment::serve_from_env_with(
            |host| {
                if let Some(dir) = traffic_dir {
                    traffic::report_forever(host, dir);
                }
            },
        ));
        return ExitCode::from(1);
    }
    if args.store == Store::Postgres {
        if args.host.is_some() {
            eprintln!("anp-loadgen: --store postgres starts its own hosts; it takes no --host");
            return ExitCode::from(2);
        }
        return match runtime.block_on(postgres::run(&args)) {
            Ok(report) => {
                if args.json {
                    println!("{}", serde_json::to_string(&report).unwrap_or_default());
                } else {
                    postgres::print_text(&report);
                }
                ExitCode::from(if report.errors == 0 { 0 } else { 1 })
            }
            Err(e) => {
                eprintln!("anp-loadgen: {e}");
                ExitCode::from(1)
            }
        };
    }
    let sync = match (&args.host, args.sync) {
        (Some(_), Some(Sync::Both)) => {
            eprintln!("anp-loadgen: --sync both measures its own in-process host; with --host, name the running host's setting (--sync full or --sync normal)");
            return ExitCode::from(2);
        }
        (Some(_), None) => Sync::Full,
        (None, None) => Sync::Both,
        (_, Some(sync)) => sync,
    };
    let mut runs = Vec::new();
    for &durability in sync.durabilities() {
        match runtime.block_on(run(&args, durability)) {
            Ok(report) => {
                if !args.json {
                    print_text(&report);
                    println!();
                }
                runs.push(report);
            }
            Err(e) => {
                eprintln!("anp-loadgen: {e}");
                return ExitCode::from(e.exit_code());
            }
        }
    }
    let errors: usize = runs.iter().map(|r| r.errors).sum();
    if args.json {
        let report = SqliteReport {
            store: "sqlite",
            runs,
        };
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        print_summary(&runs);
    }
    ExitCode::from(if errors == 0 { 0 } else { 1 })
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
enum RunError {
    /// `--host` is not a loopback http URL.
    #[error("--host {0:?} must be an http:// URL on loopback (127.0.0.1, ::1 or localhost); this tool never loads another machine")]
    NotLoopback(String),
    /// The temporary directory or host could not be set up.
    #[error("setting up: {0}")]
    Setup(String),
    /// Every agent failed before the append phase.
    #[error("no agent could start: {0}")]
    NoAgent(String),
}

impl RunError {
    fn exit_code(&self) -> u8 {
        match self {
            RunError::NotLoopback(_) => 2,
            _ => 1,
        }
    }
}

async fn run(args: &Args, durability: countersign_host::Durability) -> Result<Report, RunError> {
    let dir =
        tempfile::tempdir().map_err(|e| RunError::Setup(format!("temporary directory: {e}")))?;
    let (base_url, running) = match &args.host {
        Some(url) => (check_loopback(url)?, None),
        None => {
            let running = load::spawn_host(&dir.path().join("host.db"), durability)
                .await
                .map_err(|e| RunError::Setup(e.to_string()))?;
            (running.base_url(), Some(running))
        }
    };
    let plan = args.plan(base_url.clone(), Vec::new());
    let outcome = load::run(&plan).await;
    if let Some(running) = running {
        running.shutdown().await;
    }
    let outcome = outcome.map_err(RunError::NoAgent)?;

    let synchronous = durability.pragma();
    let (rows, sqlite_elapsed) = bare_sqlite::insert_rows(
        &dir.path().join("bare.db"),
        synchronous,
        args.sqlite_rows as usize,
        Duration::from_secs(args.max_seconds),
    )
    .map_err(|e| RunError::Setup(format!("bare SQLite baseline: {e}")))?;

    let f = stats::figures(&outcome.latencies, outcome.elapsed);
    let sqlite_rate = stats::rate(rows, sqlite_elapsed);
    let ratio = stats::ratio(f.per_second, sqlite_rate);
    Ok(Report {
        host: base_url,
        in_process_host: args.host.is_none(),
        synchronous,
        agents: args.agents,
        appends: f.appends,
        errors: outcome.errors,
        first_error: outcome.first_error,
        seconds: outcome.elapsed.as_secs_f64(),
        appends_per_second: f.per_second,
        p50_ms: f.p50_ms,
        p99_ms: f.p99_ms,
        max_ms: f.max_ms,
        sqlite_inserts: rows,
        sqlite_seconds: sqlite_elapsed.as_secs_f64(),
        sqlite_inserts_per_second: sqlite_rate,
        ratio,
        target_met: f.per_second >= TARGET_APPENDS_PER_SECOND
            && sqlite_rate > 0.0
            && ratio >= TARGET_RATIO
            && f.p99_ms < TARGET_P99_MS
            && outcome.errors == 0,
    })
}

fn check_loopback(url: &str) -> Result<String, RunError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| RunError::NotLoopback(url.to_owned()))?;
    let host = parsed.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if parsed.scheme() == "http" && loopback {
        Ok(url.trim_end_matches('/').to_owned())
    } else {
        Err(RunError::NotLoopback(url.to_owned()))
    }
}

fn print_text(r: &Report) {
    println!(
        "host: {} ({}, synchronous={})",
        r.host,
        if r.in_process_host {
            "in-process, temporary database"
        } else {
            "external"
        },
        r.synchronous
    );
    println!(
        "signed appends: {} by {} agents in {:.2} s = {:.0} appends/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        r.appends, r.agents, r.seconds, r.appends_per_second, r.p50_ms, r.p99_ms, r.max_ms
    );
    match &r.first_error {
        Some(e) => println!("errors: {} (first: {e})", r.errors),
        None => println!("errors: 0"),
    }
    println!(
        "bare SQLite inserts (WAL, synchronous={}, one IMMEDIATE transaction each): {} in {:.2} s = {:.0} inserts/s",
        r.synchronous, r.sqlite_inserts, r.sqlite_seconds, r.sqlite_inserts_per_second
    );
    println!("ratio signed appends / bare inserts: {:.3}", r.ratio);
    println!(
        "target (>= {TARGET_APPENDS_PER_SECOND:.0} appends/s and >= {TARGET_RATIO} of bare inserts, no worse than before the store was written once; p99 < {TARGET_P99_MS:.0} ms, no errors): {}",
        if r.target_met { "met" } else { "missed" }
    );
}

/// One line per durability, so the two can be read side by side.
fn print_summary(runs: &[Report]) {
    if runs.len() < 2 {
        return;
    }
    println!("side by side (bare inserts at the same synchronous setting):");
    for r in runs {
        println!(
            "  synchronous={:<6} {:>7.0} appends/s  p99 {:>6.2} ms  bare {:>7.0} inserts/s  ratio {:.3}  {}",
            r.synchronous,
            r.appends_per_second,
            r.p99_ms,
            r.sqlite_inserts_per_second,
            r.ratio,
            if r.target_met { "met" } else { "missed" }
        );
    }
    println!("  (FULL is the host's default: the host's appends share each fsync, bare single-row transactions pay one each; NORMAL commits without fsync)");
}
