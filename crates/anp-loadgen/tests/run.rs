//! Runs the real binary, small, against its in-process host.

use std::process::Command;

#[test]
fn a_small_run_prints_every_figure() {
    let out = Command::new(env!("CARGO_BIN_EXE_anp-loadgen"))
        .args([
            "--agents",
            "3",
            "--events",
            "7",
            "--per-session",
            "4",
            "--sqlite-rows",
            "50",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["store"], "sqlite");
    let runs = report["runs"].as_array().unwrap();
    let settings: Vec<&str> = runs
        .iter()
        .map(|r| r["synchronous"].as_str().unwrap())
        .collect();
    assert_eq!(settings, ["FULL", "NORMAL"], "the host's default first");
    for run in runs {
        assert_eq!(run["appends"], 21, "{run}");
        assert_eq!(run["errors"], 0, "{run}");
        assert_eq!(run["sqlite_inserts"], 50, "{run}");
        for figure in [
            "appends_per_second",
            "p50_ms",
            "p99_ms",
            "sqlite_inserts_per_second",
            "ratio",
        ] {
            assert!(run[figure].as_f64().unwrap() > 0.0, "{figure}: {run}");
        }
    }
}

#[test]
fn one_setting_measures_one_run_and_both_needs_the_in_process_host() {
    let out = Command::new(env!("CARGO_BIN_EXE_anp-loadgen"))
        .args([
            "--agents",
            "2",
            "--events",
            "3",
            "--sqlite-rows",
            "20",
            "--sync",
            "normal",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["synchronous"], "NORMAL");

    let out = Command::new(env!("CARGO_BIN_EXE_anp-loadgen"))
        .args(["--host", "http://127.0.0.1:9", "--sync", "both"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--sync both measures its own in-process host"));
}

#[test]
fn a_host_off_loopback_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_anp-loadgen"))
        .args(["--host", "http://192.0.2.1:8480"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be an http:// URL on loopback"));
}

#[test]
fn a_small_postgres_run_prints_one_and_three_processes_beside_bare_inserts_and_the_ceiling() {
    let out = Command::new(env!("CARGO_BIN_EXE_anp-loadgen"))
        .args([
            "--store",
            "postgres",
            "--agents",
            "4",
            "--events",
            "5",
            "--per-session",
            "3",
            "--sqlite-rows",
            "40",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["store"], "postgres");
    assert_eq!(report["synchronous_commit"], "on");
    assert_eq!(report["bare_inserts"], 40);
    let runs = report["deployments"].as_array().unwrap();
    let shapes: Vec<(u64, &str)> = runs
        .iter()
        .map(|r| (r["processes"].as_u64().unwrap(), r["via"].as_str().unwrap()))
        .collect();
    assert_eq!(shapes, [(1, "direct"), (3, "nginx"), (3, "direct")]);
    for run in runs {
        assert_eq!(run["appends"], 20, "{run}");
        assert_eq!(run["errors"], 0, "{run}");
        for figure in [
            "appends_per_second",
            "p50_ms",
            "p99_ms",
            "ratio",
            "ceiling_ratio",
            "statements_per_append",
            "round_trips_per_append",
        ] {
            assert!(run[figure].as_f64().unwrap() > 0.0, "{figure}: {run}");
        }
        // Counted by the host processes' store: every statement waits for
        // its answer or shares a round trip with others, never more.
        assert!(
            run["round_trips_per_append"].as_f64().unwrap()
                <= run["statements_per_append"].as_f64().unwrap(),
            "{run}"
        );
    }
    // The same load on an in-process host with almost no database behind
    // it, measured in the same run.
    let ceiling = &report["ceiling"];
    assert_eq!(ceiling["appends"], 20, "{ceiling}");
    assert_eq!(ceiling["errors"], 0, "{ceiling}");
    for figure in ["appends_per_second", "p99_ms", "ratio"] {
        assert!(
            ceiling[figure].as_f64().unwrap() > 0.0,
            "{figure}: {ceiling}"
        );
    }
}
