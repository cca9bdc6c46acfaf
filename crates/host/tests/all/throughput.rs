//! Many vendor agents appending at once, each to its own session (what
//! `anp-loadgen` measures; its figures live there, never in a test): every
//! append is acknowledged, and every session's log holds exactly its own
//! events, contiguous and verifying against the head the host announced.

use crate::common;

use std::sync::Arc;

use common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_agents_each_append_to_their_own_session_and_every_log_verifies() {
    let t = Arc::new(start(roomy_limits()).await);
    let (agents, per_agent) = (16, 12);
    let mut parties = Vec::new();
    for i in 0..agents {
        let p = t.register(&format!("V{i}")).await;
        let (s, _) = t.open_sandbox(&p).await;
        parties.push((Arc::new(p), s));
    }
    let mut tasks = Vec::new();
    for (p, s) in parties.clone() {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_agent {
                let (status, answer) = t
                    .submit(&p, &s, "message", json!({ "body": format!("{s} m{i}") }))
                    .await;
                assert_eq!(status, 200, "{answer}");
                // The append answers the log as the append left it.
                let events = answer["log"]["events"].as_array().unwrap();
                assert_eq!(events.len(), 2 + i + 1, "{answer}");
                assert_eq!(
                    events.last().unwrap()["payload"]["body"],
                    format!("{s} m{i}")
                );
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    for (p, s) in &parties {
        let (status, body) = t
            .signed(
                p,
                "GET",
                &format!("/api/agent/v1/sessions/{s}/log"),
                &Value::Null,
            )
            .await;
        assert_eq!(status, 200);
        let doc: anp::LogDocument = serde_json::from_slice(&body).unwrap();
        assert!(anp::verify_document(&doc).unwrap().ok, "the log verifies");
        assert_eq!(doc.session.event_count, 2 + per_agent as u64);
        assert_eq!(doc.chain.head, doc.session.chain_head);
        let bodies: Vec<String> = doc
            .events
            .iter()
            .skip(2)
            .map(|e| e.payload["body"].as_str().unwrap().to_owned())
            .collect();
        let expected: Vec<String> = (0..per_agent).map(|i| format!("{s} m{i}")).collect();
        assert_eq!(bodies, expected, "only this session's events, in order");
    }
    if let Ok(t) = Arc::try_unwrap(t) {
        t.running.shutdown().await;
    }
}
