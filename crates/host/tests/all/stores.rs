//! The whole suite on PostgreSQL: this test runs the test binary again with
//! `COUNTERSIGN_TEST_STORE=postgres`, so `cargo test` runs every test of
//! this crate on both stores (see `common`). A failure prints the inner
//! run's report, which names the failing tests.

use crate::common::{store_kind, StoreKind, STORE_VAR};

#[test]
fn the_whole_suite_passes_on_postgresql() {
    if store_kind() == StoreKind::Postgres {
        return; // this is the inner run itself
    }
    if let Err(report) = countersign_testkit::deployment::rerun_this_binary(
        STORE_VAR,
        "postgres",
        &[
            "stores::the_whole_suite_passes_on_postgresql",
            "deployment::",
        ],
    ) {
        panic!("{report}");
    }
}
