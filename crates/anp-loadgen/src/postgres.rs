//! `--store postgres`: in one run, on a throwaway PostgreSQL cluster of its
//! own (`synchronous_commit = on`), the same load against one host process
//! and then against three behind nginx, and the bare PostgreSQL insert rate
//! from as many connections as there are agents, with the ratios.

use std::time::Duration;

use countersign_host::Durability;
use countersign_testkit::deployment::{Deployment, Launch};
use countersign_testkit::postgres::Cluster;
use serde::Serialize;

use crate::{bare_postgres, load, stats, Args, TARGET_P99_MS, TARGET_RATIO};

/// One load against one deployment.
#[derive(Serialize, Debug)]
pub struct DeploymentFigures {
    /// Host processes.
    pub processes: usize,
    /// `nginx` (in front of the processes) or `direct` (agents spread over
    /// them).
    pub via: &'static str,
    /// Acknowledged, verified appends.
    pub appends: usize,
    /// Failed appends.
    pub errors: usize,
    /// The first failure.
    pub first_error: Option<String>,
    /// Wall time of the append phase.
    pub seconds: f64,
    /// Appends per second.
    pub appends_per_second: f64,
    /// Latency percentiles and maximum, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Slowest append, ms.
    pub max_ms: f64,
    /// Appends per second over bare inserts per second.
    pub ratio: f64,
    /// Ratio ≥ 0.3, p99 < 50 ms, no errors.
    pub target_met: bool,
}

/// The figures of one `--store postgres` run.
#[derive(Serialize, Debug)]
pub struct PgReport {
    /// Always `postgres`.
    pub store: &'static str,
    /// The server's `synchronous_commit`.
    pub synchronous_commit: String,
    /// Concurrent agents.
    pub agents: u32,
    /// One host process, three behind nginx, three reached directly.
    pub deployments: Vec<DeploymentFigures>,
    /// Bare inserts committed.
    pub bare_inserts: usize,
    /// Their wall time.
    pub bare_seconds: f64,
    /// Bare inserts per second (from `agents` connections).
    pub bare_inserts_per_second: f64,
    /// The same load on an in-process host over SQLite without fsync: the
    /// host's and the agents' own work with almost no database behind it,
    /// so an upper bound on what any store reaches on this machine.
    pub ceiling: Ceiling,
    /// Errors over every deployment.
    pub errors: usize,
}

/// What the host reaches when its database costs almost nothing.
#[derive(Serialize, Debug)]
pub struct Ceiling {
    /// Acknowledged, verified appends.
    pub appends: usize,
    /// Failed appends.
    pub errors: usize,
    /// Appends per second.
    pub appends_per_second: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Appends per second over the bare PostgreSQL inserts per second: the
    /// highest ratio a PostgreSQL store could reach on this machine.
    pub ratio: f64,
}

pub async fn run(args: &Args) -> Result<PgReport, String> {
    let cluster = tokio::task::spawn_blocking(Cluster::start)
        .await
        .map_err(|e| e.to_string())??;
    let launch = Launch::ThisBinary(vec!["--as-host-process".into()]);
    let mut measured = Vec::new();
    // One process; three behind nginx (what a deployment runs); three with
    // the agents spread over them directly (what nginx itself costs).
    for (processes, via) in [(1usize, "direct"), (3, "nginx"), (3, "direct")] {
        let deployment = Deployment::start_on(&cluster, launch.clone(), processes).await?;
        let spread: Vec<String> = deployment.hosts.iter().map(|h| h.url()).collect();
        let (base_url, spread) = if via == "nginx" {
            (deployment.url(), Vec::new())
        } else {
            (spread[0].clone(), spread)
        };
        let plan = args.plan(base_url, spread);
        let outcome = load::run(&plan).await?;
        drop(deployment);
        measured.push((processes, via, outcome));
    }
    let ceiling = ceiling_load(args).await?;
    let bare_db = cluster.fresh_database().await?;
    let (rows, bare_elapsed, synchronous_commit) = bare_postgres::insert_rows(
        &bare_db,
        args.agents,
        args.sqlite_rows as usize,
        Duration::from_secs(args.max_seconds),
    )
    .await
    .map_err(|e| format!("bare PostgreSQL baseline: {e}"))?;
    let bare_rate = stats::rate(rows, bare_elapsed);
    let mut errors = ceiling.errors;
    let ceiling = {
        let f = stats::figures(&ceiling.latencies, ceiling.elapsed);
        Ceiling {
            appends: f.appends,
            errors: ceiling.errors,
            appends_per_second: f.per_second,
            p99_ms: f.p99_ms,
            ratio: stats::ratio(f.per_second, bare_rate),
        }
    };
    let deployments = measured
        .into_iter()
        .map(|(processes, via, outcome)| {
            let f = stats::figures(&outcome.latencies, outcome.elapsed);
            let ratio = stats::ratio(f.per_second, bare_rate);
            errors += outcome.errors;
            DeploymentFigures {
                processes,
                via,
                appends: f.appends,
                errors: outcome.errors,
                first_error: outcome.first_error,
                seconds: outcome.elapsed.as_secs_f64(),
                appends_per_second: f.per_second,
                p50_ms: f.p50_ms,
                p99_ms: f.p99_ms,
                max_ms: f.max_ms,
                ratio,
                target_met: ratio >= TARGET_RATIO
                    && f.p99_ms < TARGET_P99_MS
                    && outcome.errors == 0,
            }
        })
        .collect();
    Ok(PgReport {
        store: "postgres",
        synchronous_commit,
        agents: args.agents,
        deployments,
        bare_inserts: rows,
        bare_seconds: bare_elapsed.as_secs_f64(),
        bare_inserts_per_second: bare_rate,
        ceiling,
        errors,
    })
}

/// The same plan against an in-process host on a temporary SQLite file at
/// `synchronous=NORMAL` (no fsync; a commit costs a few microseconds).
async fn ceiling_load(args: &Args) -> Result<load::Outcome, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let host = load::spawn_host(&dir.path().join("ceiling.db"), Durability::Normal)
        .await
        .map_err(|e| format!("the in-process host for the ceiling: {e}"))?;
    let plan = args.plan(host.base_url(), Vec::new());
    let outcome = load::run(&plan).await;
    host.shutdown().await;
    outcome
}

pub fn print_text(r: &PgReport) {
    println!(
        "store: PostgreSQL (a throwaway cluster of this run, synchronous_commit={})",
        r.synchronous_commit
    );
    for d in &r.deployments {
        println!(
            "{} host process(es) ({}): {} signed appends by {} agents in {:.2} s = {:.0} appends/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; ratio to bare inserts {:.3}; target (ratio >= {TARGET_RATIO}, p99 < {TARGET_P99_MS:.0} ms, no errors): {}",
            d.processes,
            d.via,
            d.appends,
            r.agents,
            d.seconds,
            d.appends_per_second,
            d.p50_ms,
            d.p99_ms,
            d.max_ms,
            d.ratio,
            if d.target_met { "met" } else { "missed" }
        );
        if let Some(e) = &d.first_error {
            println!("  errors: {} (first: {e})", d.errors);
        }
    }
    println!(
        "bare PostgreSQL inserts ({} connections, one row per transaction): {} in {:.2} s = {:.0} inserts/s",
        r.agents, r.bare_inserts, r.bare_seconds, r.bare_inserts_per_second
    );
    let c = &r.ceiling;
    println!(
        "ceiling: the same load on an in-process host over SQLite without fsync (the host's and agents' own work, almost no database): {:.0} appends/s, p99 {:.2} ms; ratio to bare PostgreSQL inserts {:.3}, the most any store could reach on this machine",
        c.appends_per_second, c.p99_ms, c.ratio
    );
}
