//! A quick figure, not an assertion: signed appends per second from 32
//! concurrent vendor agents, each in its own session. Run with
//! `cargo test -p countersign-host --release --test all throughput -- --ignored --nocapture`.
//! (The full load generator with latency percentiles lives with countersign-client.)

use crate::common;

use std::sync::Arc;
use std::time::Instant;

use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
#[ignore = "prints a performance figure; run explicitly"]
async fn appends_per_second() {
    let t = Arc::new(start(roomy_limits()).await);
    let agents = 32;
    let per_agent = 50;
    let mut parties = Vec::new();
    for i in 0..agents {
        let p = t.register(&format!("V{i}")).await;
        let (s, _) = t.open_sandbox(&p).await;
        parties.push((Arc::new(p), s));
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (p, s) in parties {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_agent {
                let (status, _) = t
                    .submit(&p, &s, "message", json!({ "body": format!("m{i}") }))
                    .await;
                assert_eq!(status, 200);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let total = agents * per_agent;
    println!(
        "{total} signed appends in {secs:.2} s: {:.0} appends/s",
        total as f64 / secs
    );
}
