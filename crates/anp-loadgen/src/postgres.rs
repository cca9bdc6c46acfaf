//! `--store postgres`: in one run, on a throwaway PostgreSQL cluster of its
//! own (`synchronous_commit = on`), the same load against one host process
//! and then against three behind nginx, the same load on an in-process host
//! whose database costs almost nothing (the ceiling), and the bare
//! PostgreSQL insert rate from as many connections as there are agents,
//! with the ratios, and the statements and round trips the host processes
//! sent PostgreSQL per append (counted by their store).

use std::time::Duration;

use countersign_host::Durability;
use countersign_testkit::deployment::{Deployment, Launch};
use countersign_testkit::postgres::Cluster;
use serde::Serialize;

use crate::{bare_postgres, load, stats, traffic, Args, TARGET_P99_MS};

/// The PostgreSQL store must reach this share of the in-process ceiling
/// measured in the same run (issue 29).
pub const TARGET_CEILING_RATIO: f64 = 0.7;

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
    /// Appends per second over the in-process ceiling's, same run.
    pub ceiling_ratio: f64,
    /// Statements the host processes sent PostgreSQL during the append
    /// phase, per acknowledged append (the phase's session opens included:
    /// one per `--per-session` appends).
    pub statements_per_append: f64,
    /// Round trips to PostgreSQL during the append phase, per append.
    pub round_trips_per_append: f64,
    /// Ceiling ratio ≥ 0.7, p99 < 50 ms, no errors.
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
    let mut measured = Vec::new();
    // One process; three behind nginx (what a deployment runs); three with
    // the agents spread over them directly (what nginx itself costs).
    for (processes, via) in [(1usize, "direct"), (3, "nginx"), (3, "direct")] {
        let counts = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
        let launch = Launch::ThisBinary(vec![
            "--as-host-process".into(),
            "--traffic-dir".into(),
            counts.path().display().to_string(),
        ]);
        let deployment = Deployment::start_on(&cluster, launch, processes).await?;
        let spread: Vec<String> = deployment.hosts.iter().map(|h| h.url()).collect();
        let (base_url, spread) = if via == "nginx" {
            (deployment.url(), Vec::new())
        } else {
            (spread[0].clone(), spread)
        };
        let plan = args.plan(base_url, spread);
        let (outcome, before) = load::run_with(&plan, traffic::total(counts.path())).await?;
        let after = traffic::total(counts.path()).await;
        drop(deployment);
        let per_append = traffic::per_append(before?, after?, outcome.latencies.len());
        measured.push((processes, via, outcome, per_append));
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
        .map(|(processes, via, outcome, (statements, round_trips))| {
            let f = stats::figures(&outcome.latencies, outcome.elapsed);
            let ratio = stats::ratio(f.per_second, bare_rate);
            let ceiling_ratio = stats::ratio(f.per_second, ceiling.appends_per_second);
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
                ceiling_ratio,
                statements_per_append: statements,
                round_trips_per_append: round_trips,
                target_met: ceiling_ratio >= TARGET_CEILING_RATIO
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
            "{} host process(es) ({}): {} signed appends by {} agents in {:.2} s = {:.0} appends/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {:.2} statements and {:.2} round trips to PostgreSQL per append; ratio to bare inserts {:.3}, to the in-process ceiling {:.3}",
            d.processes,
            d.via,
            d.appends,
            r.agents,
            d.seconds,
            d.appends_per_second,
            d.p50_ms,
            d.p99_ms,
            d.max_ms,
            d.statements_per_append,
            d.round_trips_per_append,
            d.ratio,
            d.ceiling_ratio,
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
    println!(
        "side by side (target: >= {TARGET_CEILING_RATIO} of the ceiling, p99 < {TARGET_P99_MS:.0} ms, no errors):"
    );
    for d in &r.deployments {
        println!(
            "  {} process{} ({:<6}) {:>6.0} appends/s  p99 {:>6.2} ms  {:>5.2} statements, {:>5.2} round trips per append  {:.3} of the ceiling  {}",
            d.processes,
            if d.processes == 1 { " " } else { "es" },
            d.via,
            d.appends_per_second,
            d.p99_ms,
            d.statements_per_append,
            d.round_trips_per_append,
            d.ceiling_ratio,
            if d.target_met { "met" } else { "missed" }
        );
    }
    println!(
        "  ceiling               {:>6.0} appends/s  p99 {:>6.2} ms",
        c.appends_per_second, c.p99_ms
    );
}
