//! A proposal once decided: the offer view reads as decided (who, when, the
//! outcome, the event it appended and whether that event is verified), for
//! this console's decisions and for answers the log shows from elsewhere.

use anp::EventKind;
use countersign_engine::*;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn an_approved_offer_reads_as_decided_with_the_accept_it_appended() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap().remove(0);
    let before = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(before.pending);
    assert_eq!(before.decision, None, "nothing decided yet");

    let result = decide(
        &engine,
        &item.host_id,
        &session,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    let log = agent.log(&session, None).await.unwrap();
    let accept = log
        .events
        .iter()
        .find(|e| e.kind == EventKind::Accept)
        .unwrap();
    let appended = result.appended.clone().expect("the accept it appended");
    assert_eq!(appended.seq, accept.seq);
    assert_eq!(appended.event_hash, accept.event_hash);
    assert_eq!(appended.kind, "accept");
    assert!(appended.verified, "verified by the refresh after deciding");

    // The same offer, asked for again after it left the pending set: no
    // "not found", but what became of it.
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(!view.pending);
    assert_eq!(
        total(&view.item),
        "570000",
        "the offer itself is still shown"
    );
    assert!(!view.item.unread);
    let decision = view.decision.expect("a decision");
    assert_eq!(decision.action.as_deref(), Some("approve"));
    assert_eq!(decision.outcome, "appended");
    assert_eq!(decision.decided_by.as_deref(), Some("ada@fabrikam.example"));
    assert_eq!(
        decision.decision_id.as_deref(),
        Some(result.decision_id.as_str())
    );
    assert!(anp::api::parse_timestamp(decision.at.as_deref().unwrap()).is_some());
    assert_eq!(decision.appended, Some(appended));
    let page = engine.inbox_page(&InboxQuery::default()).await.unwrap();
    assert_eq!((page.total, page.unread), (0, 0));
    assert_eq!(engine.app_state().await.unwrap().unread, 0);
}

#[tokio::test]
async fn a_decline_and_a_counter_name_the_events_they_appended() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (north, declined) = world.vendor("Northwind").await;
    let (tail, countered) = world.vendor("Tailspin").await;
    submit(&north, &declined, EventKind::Offer, offer(1140, DAY)).await;
    submit(&tail, &countered, EventKind::Offer, offer(900, DAY)).await;
    engine.refresh().await.unwrap();
    let inbox = engine.inbox().await.unwrap();
    let of = |session: &str| inbox.iter().find(|i| i.session_id == session).unwrap();

    let (one, two) = (of(&declined), of(&countered));
    decide(
        &engine,
        &one.host_id,
        &declined,
        &one.event_hash,
        DecideAction::Decline,
        None,
    )
    .await;
    decide(
        &engine,
        &two.host_id,
        &countered,
        &two.event_hash,
        DecideAction::Counter,
        Some(offer(850, DAY)),
    )
    .await;
    for (item, session, kind, action) in [
        (one, &declined, "decline", "decline"),
        (two, &countered, "counter_offer", "counter"),
    ] {
        let view = engine
            .proposal_view(&item.host_id, session, &item.event_hash)
            .await
            .unwrap();
        let decision = view.decision.unwrap();
        assert_eq!(decision.action.as_deref(), Some(action));
        assert_eq!(decision.outcome, "appended");
        let appended = decision.appended.unwrap();
        assert_eq!(appended.kind, kind);
        assert_eq!(appended.seq, item.seq + 1, "right after the offer");
        assert!(appended.verified);
    }
}

#[tokio::test]
async fn an_offer_approved_elsewhere_shows_the_accept_on_the_log() {
    let world = World::start().await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    ada.refresh().await.unwrap();
    grace.refresh().await.unwrap();
    let item = ada.inbox().await.unwrap().remove(0);
    let graces = grace.inbox().await.unwrap().remove(0);
    decide(
        &grace,
        &graces.host_id,
        &session,
        &graces.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    ada.refresh().await.unwrap();
    let view = ada
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(!view.pending);
    let decision = view.decision.unwrap();
    assert_eq!(decision.outcome, "answered", "not by this console");
    assert_eq!(decision.action.as_deref(), Some("approve"));
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("grace@fabrikam.example")
    );
    assert_eq!(decision.decision_id, None);
    assert_eq!(decision.appended.unwrap().kind, "accept");
}

#[tokio::test]
async fn a_replaced_offer_says_which_newer_one_replaced_it() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let first = engine.inbox().await.unwrap().remove(0);
    submit(&agent, &session, EventKind::Offer, offer(1100, DAY)).await;
    engine.refresh().await.unwrap();
    let view = engine
        .proposal_view(&first.host_id, &session, &first.event_hash)
        .await
        .unwrap();
    assert!(!view.pending);
    let decision = view.decision.unwrap();
    assert_eq!(decision.outcome, "withdrawn");
    assert_eq!(decision.action, None);
    assert!(
        decision.detail.contains(&format!("seq {}", first.seq + 1)),
        "{}",
        decision.detail
    );
}

#[tokio::test]
async fn an_approval_waiting_for_another_approver_is_shown_as_such() {
    let world = World::start().await;
    world.load_policy("100000", 2, json!([])).await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap().remove(0);
    let result = decide(
        &engine,
        &item.host_id,
        &session,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    assert_eq!(result.outcome, "awaiting_approvals");
    assert_eq!(result.appended, None, "nothing appended yet");
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(view.pending, "it still waits, for the second approver");
    assert_eq!(view.item.approvals_given, 1);
    let decision = view.decision.unwrap();
    assert_eq!(decision.outcome, "awaiting_approvals");
    assert_eq!(decision.decided_by.as_deref(), Some("ada@fabrikam.example"));
}
