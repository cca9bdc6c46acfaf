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
    assert_eq!(report["appends"], 21);
    assert_eq!(report["errors"], 0);
    assert_eq!(report["sqlite_inserts"], 50);
    for figure in [
        "appends_per_second",
        "p50_ms",
        "p99_ms",
        "sqlite_inserts_per_second",
        "ratio",
    ] {
        assert!(report[figure].as_f64().unwrap() > 0.0, "{figure}: {report}");
    }
    assert_eq!(report["synchronous"], "NORMAL");
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
