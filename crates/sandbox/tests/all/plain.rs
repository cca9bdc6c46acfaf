//! The sandbox's purchasing assistant, an MCP client of the embedded host
//! with no negotiation protocol behind it: on first launch its revised
//! plain terms wait in the inbox beside the terms they revise; a counter
//! is put to Contoso, which accepts it, and the assistant asks again; an
//! approval of those terms is executed exactly, which the console shows.

use std::time::Duration;

use countersign_engine::*;

use crate::concordia::{pending_of, state_file};
use crate::launch::{launch, sandbox_engine};

/// Waits (bounded) until the assistant's state says it asked `n` times.
async fn asked(data: &std::path::Path, n: u32) {
    for _ in 0..120 {
        if state_file(data, "plain-purchaser.json").is_some_and(|s| s["asked"] == n) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!(
        "the assistant did not ask {n} times: {:?}",
        state_file(data, "plain-purchaser.json")
    );
}

#[tokio::test]
async fn the_sandbox_assistant_asks_about_plain_terms_takes_a_counter_to_contoso_and_executes_the_approval(
) {
    let data = tempfile::tempdir().unwrap();
    let engine = launch(sandbox_engine(data.path())).await;
    asked(data.path(), 2).await;
    let item = pending_of(&engine, "plain", None)
        .await
        .expect("the assistant's terms reach the inbox");
    assert_eq!(item.proposal_kind, ProposalKind::PlainTerms);
    assert_eq!(item.amount.as_ref().unwrap().value, "25300.00");
    assert_eq!(item.previous_amount.as_ref().unwrap().value, "26500.00");
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    let ProposalDetail::PlainTerms(t) = &view.detail else {
        panic!("{:?}", view.detail)
    };
    assert_eq!(t.agent.name, "Purchasing assistant");
    assert_eq!(
        t.diff.as_ref().unwrap().conditions_added,
        ["Delivery by 2027-01-15"]
    );
    let chain = view.item.chain.as_ref().expect("routed");
    assert!(chain.you_may_decide, "the person decides it: {chain:?}");
    assert_eq!(chain.your_role.as_deref(), Some("finance"));

    // Countered: Contoso accepts the person's terms and the assistant asks again.
    let mut counter = serde_json::to_value(&t.terms).unwrap();
    counter.as_object_mut().unwrap().remove("total");
    counter["line_items"][0]["unit_price"] = serde_json::json!("11.50");
    let result = engine
        .decide(DecideRequest {
            host_id: item.host_id.clone(),
            session_id: item.session_id.clone(),
            in_response_to: item.event_hash.clone(),
            reason: Some("Our benchmark for this sensor is 11.50.".into()),
            counter: Some(counter),
            action: DecideAction::Counter,
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    asked(data.path(), 3).await;
    let again = pending_of(&engine, "plain", Some(&item.event_hash))
        .await
        .expect("the terms Contoso accepted");
    assert_eq!(again.amount.as_ref().unwrap().value, "24500.00");
    let result = engine
        .decide(DecideRequest {
            host_id: again.host_id.clone(),
            session_id: again.session_id.clone(),
            in_response_to: again.event_hash.clone(),
            reason: None,
            counter: None,
            action: DecideAction::Approve,
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);

    // The assistant reports executing exactly those terms: no breach.
    let mut executed = false;
    for _ in 0..120 {
        if state_file(data.path(), "plain-purchaser.json").is_some_and(|s| s["done"] == true) {
            executed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(executed, "the assistant reported");
    let mut shown = None;
    for _ in 0..40 {
        engine.refresh().await.unwrap();
        let detail = engine
            .session_detail(&again.host_id, &again.session_id)
            .await
            .unwrap();
        if detail
            .timeline
            .iter()
            .any(|e| e.summary.contains("executing"))
        {
            shown = Some(detail);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(shown.is_some(), "History shows the execution");
    let view = engine
        .proposal_view(&again.host_id, &again.session_id, &again.event_hash)
        .await
        .unwrap();
    let decided = view.decision.expect("decided");
    assert_eq!(decided.action.as_deref(), Some("approve"));
    assert_eq!(decided.breach, None);
    engine.shutdown().await;
}
