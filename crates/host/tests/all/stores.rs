//! The whole suite on PostgreSQL: this test runs the test binary again with
//! `COUNTERSIGN_TEST_STORE=postgres`, so `cargo test` runs every test of
//! this crate on both stores (see `common`). A failure prints the inner
//! run's report, which names the failing tests.

use std::process::Command;

use crate::common::{store_kind, StoreKind, STORE_VAR};

#[test]
fn the_whole_suite_passes_on_postgresql() {
    if store_kind() == StoreKind::Postgres {
        return; // this is the inner run itself
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .env(STORE_VAR, "postgres")
        .args(["--skip", "stores::the_whole_suite_passes_on_postgresql"])
        .args(["--skip", "deployment::"])
        .output()
        .unwrap();
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the suite on PostgreSQL failed:\n{report}"
    );
    assert!(
        report.contains("test result: ok."),
        "the inner run reported no result:\n{report}"
    );
}
