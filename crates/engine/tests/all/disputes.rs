//! A disputed session's next steps: where it is at a glance, the evidence
//! (the stored copy beside the host's conflicting answer, byte for byte,
//! with the exact seq and check), and an acknowledgement that leaves it
//! disputed and its decisions refused.

use anp::EventKind;
use countersign_engine::*;
use serde_json::{json, Value};

use crate::common::*;

/// A session the host's operator rewrote after the console verified it.
async fn disputed(
    world: &World,
    engine: &Engine,
) -> (String, String, countersign_client::AgentClient) {
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let host_id = engine.hosts().await.unwrap()[0].host_id.clone();
    world.rewrite_unit_price(&session, 3, 1140, 1400).await;
    let state = engine.audit_session(&host_id, &session).await.unwrap();
    assert_eq!(state.state, Verification::Disputed);
    (host_id, session, agent)
}

/// The host's answer to a full log request, as any approver reads it.
async fn host_log_bytes(world: &World, session: &str) -> Vec<u8> {
    let key = anp::keys::generate_signing_key();
    let code = world.code("auditor@fabrikam.example").await;
    let enrolled = countersign_client::ApproverClient::enroll(
        &world.url,
        &code,
        "Auditor",
        "auditor@fabrikam.example",
        &key,
    )
    .await
    .unwrap();
    let client =
        countersign_client::ApproverClient::new(&world.url, key, &enrolled.approver_id).unwrap();
    client.log_raw(session, None).await.unwrap().bytes
}

#[tokio::test]
async fn a_dispute_names_its_host_and_session_at_a_glance() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (host_id, session, _agent) = disputed(&world, &engine).await;
    let detail = engine.session_detail(&host_id, &session).await.unwrap();
    let dispute = detail.dispute.expect("a dispute view");
    assert_eq!(dispute.session_id, session);
    assert_eq!(dispute.host_url, world.url);
    assert_eq!(dispute.host_label, world.url.trim_start_matches("http://"));
    assert_eq!(dispute.counterparty, "Northwind");
    assert_eq!(dispute.failing_seq, 3);
    assert!(dispute.checks.contains(&"payload_hash".to_owned()));
    assert!(dispute.host_answer_kept);
    assert_eq!(
        dispute.request.as_deref(),
        Some(format!("GET /api/console/v1/sessions/{session}/log").as_str())
    );
    assert!(dispute.detected_at.is_some());
    assert_eq!(dispute.acknowledged, None);

    // A session that is not disputed has no dispute to show or export.
    let (other_agent, other) = world.vendor("Tailspin").await;
    submit(&other_agent, &other, EventKind::Offer, offer(900, DAY)).await;
    engine.refresh().await.unwrap();
    let fine = engine.session_detail(&host_id, &other).await.unwrap();
    assert_eq!(fine.dispute, None);
    let err = engine.export_dispute(&host_id, &other).await.unwrap_err();
    assert!(err.to_string().contains("is not disputed"), "{err}");
}

#[tokio::test]
async fn the_evidence_holds_both_copies_byte_for_byte_with_the_seq_and_check() {
    let world = World::start().await;
    let (data, engine) = world.engine("ada@fabrikam.example").await;
    let (host_id, session, _agent) = disputed(&world, &engine).await;
    let exported = engine.export_dispute(&host_id, &session).await.unwrap();
    let dir = std::path::PathBuf::from(&exported.path);
    assert!(dir.starts_with(data.path().join("exports")));

    // The host's answer, exactly as the host sends it to anyone asking.
    let host_answer = std::fs::read(dir.join("host-answer.json")).unwrap();
    assert_eq!(host_answer, host_log_bytes(&world, &session).await);
    // The stored copy: the events as this console stored them, verbatim.
    let stored_text = std::fs::read_to_string(dir.join("stored-events.json")).unwrap();
    let detail = engine.session_detail(&host_id, &session).await.unwrap();
    let stored: Vec<Value> = serde_json::from_str(&stored_text).unwrap();
    assert_eq!(stored.len(), detail.timeline.len());
    assert_eq!(stored[2]["payload"]["line_items"][0]["unit_price"], 1140);

    let evidence: Value =
        serde_json::from_slice(&std::fs::read(dir.join("evidence.json")).unwrap()).unwrap();
    assert_eq!(evidence["session_id"], json!(session));
    assert_eq!(evidence["host"]["url"], json!(world.url));
    assert_eq!(evidence["failing_seq"], 3);
    assert!(evidence["checks"]
        .as_array()
        .unwrap()
        .contains(&json!("payload_hash")));
    assert_eq!(
        evidence["stored_copy"]["sha256"],
        json!(jcs_hex(stored_text.as_bytes()))
    );
    assert_eq!(
        evidence["host_answer"]["sha256"],
        json!(jcs_hex(&host_answer))
    );
    // The failing event, both versions side by side.
    let ours = &evidence["stored_copy"]["event_at_failing_seq"];
    let theirs = &evidence["host_answer"]["event_at_failing_seq"];
    assert_eq!(ours["payload"]["line_items"][0]["unit_price"], 1140);
    assert_eq!(theirs["payload"]["line_items"][0]["unit_price"], 1400);
    assert_eq!(ours["seq"], 3);
    assert_eq!(theirs["seq"], 3);
    let written = std::fs::metadata(dir.join("evidence.json")).unwrap().len()
        + host_answer.len() as u64
        + stored_text.len() as u64;
    assert_eq!(exported.bytes, written);
}

fn jcs_hex(bytes: &[u8]) -> String {
    jcs::sha256_hex(bytes)
}

#[tokio::test]
async fn acknowledging_keeps_the_session_disputed_and_its_decisions_refused() {
    let world = World::start().await;
    let (data, engine) = world.engine("ada@fabrikam.example").await;
    let (host_id, session, _agent) = disputed(&world, &engine).await;
    let err = engine
        .acknowledge_dispute(&host_id, &session, "   ")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs a note"), "{err}");

    let note = "Called Fabrikam's host admin: they restored a backup. Ticket 4411.";
    let view = engine
        .acknowledge_dispute(&host_id, &session, note)
        .await
        .unwrap();
    let ack = view.acknowledged.expect("acknowledged");
    assert_eq!(ack.note, note);
    assert_eq!(ack.by, "ada@fabrikam.example");

    let detail = engine.session_detail(&host_id, &session).await.unwrap();
    assert_eq!(detail.verification.state, Verification::Disputed);
    let item = engine.inbox().await.unwrap().remove(0);
    let err = engine
        .decide(DecideRequest {
            host_id: host_id.clone(),
            session_id: session.clone(),
            in_response_to: item.event_hash.clone(),
            action: DecideAction::Approve,
            reason: None,
            counter: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), "disputed");

    // The note survives a restart and goes into the evidence.
    engine.shutdown().await;
    drop(engine);
    let reopened = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let detail = reopened.session_detail(&host_id, &session).await.unwrap();
    assert_eq!(detail.dispute.unwrap().acknowledged.unwrap().note, note);
    let exported = reopened.export_dispute(&host_id, &session).await.unwrap();
    let evidence: Value = serde_json::from_slice(
        &std::fs::read(std::path::Path::new(&exported.path).join("evidence.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(evidence["acknowledged"]["note"], json!(note));
}
