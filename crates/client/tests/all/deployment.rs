//! The vendor (SPEC §8) and approver conformance checks again, against a
//! deployment: this test runs this binary once more with
//! `COUNTERSIGN_CLIENT_TEST_HOST=nginx-postgres`, so the same checks, their
//! assertions unchanged, pass through nginx in front of three host processes
//! on one PostgreSQL database. (The transport checks need a host with a
//! one-hour agent limit and stay in-process.)

use crate::common::{through_deployment, DEPLOYMENT_VAR};

#[test]
fn the_conformance_checks_pass_through_nginx_in_front_of_three_host_processes_on_postgresql() {
    if through_deployment() {
        return; // the inner run skips this test; nothing to nest
    }
    if let Err(report) = countersign_testkit::deployment::rerun_this_binary(
        DEPLOYMENT_VAR,
        "nginx-postgres",
        &["deployment::", "transport::"],
    ) {
        panic!("{report}");
    }
}
