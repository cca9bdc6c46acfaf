//! Moving to a new approver key, through the engine against a real host
//! (in process on SQLite, and through nginx in front of three host
//! processes on PostgreSQL when the deployment run reruns this suite):
//! what the old key signed stays verifiable and is shown as its; what
//! comes after is signed with the new one; a decision in flight during the
//! move reaches its host exactly once; a host that cannot be reached keeps
//! the old key until the move is finished there.

use std::sync::Arc;

use anp::EventKind;
use countersign_engine::*;

use crate::common::*;

fn approve(host_id: &str, session: &str, hash: &str) -> DecideRequest {
    DecideRequest {
        host_id: host_id.to_owned(),
        session_id: session.to_owned(),
        in_response_to: hash.to_owned(),
        action: DecideAction::Approve,
        reason: None,
        counter: None,
    }
}

/// The decisions the host recorded on `session`: their ids.
async fn host_decisions(world: &World, session: &str) -> Vec<String> {
    world
        .host_sql(
            "SELECT decision_id FROM decisions WHERE session_id = $1 ORDER BY decision_id",
            &[SqlArg::Text(session)],
        )
        .await
        .0
}

/// The inbox item of `session`.
async fn item_of(engine: &Engine, session: &str) -> InboxItem {
    engine
        .inbox()
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.session_id == session)
        .expect("the offer is in the inbox")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_move_earlier_decisions_stay_verified_and_name_their_key_and_new_ones_use_the_new_key(
) {
    let world = World::start().await;
    let (data, engine) = world.engine("ann@fabrikam.example").await;
    let before = engine.key_status();
    let (agent, first) = world.vendor("Northwind").await;
    submit(&agent, &first, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = item_of(&engine, &first).await;
    let host_id = item.host_id.clone();
    let done = engine
        .decide(approve(&host_id, &first, &item.event_hash))
        .await
        .unwrap();
    assert_eq!(done.outcome, "appended");

    let moved = engine
        .move_to_new_key(Some(TEST_PASSPHRASE.into()))
        .await
        .unwrap();
    assert!(moved.finished, "{moved:?}");
    assert_eq!(moved.hosts.len(), 1);
    assert!(moved.hosts[0].moved, "{:?}", moved.hosts[0]);
    let after = engine.key_status();
    assert_ne!(after.fingerprint, before.fingerprint);
    assert_eq!(after.fingerprint, moved.fingerprint);
    assert_eq!(after.moving_from, None);
    // Settings lists both keys: the old one retired, the new one in use.
    let listed: Vec<(&str, bool)> = after
        .keys
        .iter()
        .map(|k| (k.fingerprint.as_str(), k.retired_at.is_some()))
        .collect();
    assert_eq!(
        listed,
        vec![
            (before.fingerprint.as_str(), true),
            (after.fingerprint.as_str(), false)
        ]
    );
    // The old key's sealed file is gone; only the new one is kept.
    assert!(!data
        .path()
        .join("approver-key.retiring.sealed.json")
        .exists());

    // The earlier session still verifies (its approval against the old
    // key as the host now publishes it, with its end) and names that key.
    engine.refresh().await.unwrap();
    let detail = engine.session_detail(&host_id, &first).await.unwrap();
    assert_eq!(detail.verification.state, Verification::Verified);
    assert_eq!(
        detail.decisions[0].signed_with.as_deref(),
        Some(before.fingerprint.as_str())
    );
    let export = engine
        .export_session(&host_id, &first, ExportFormat::Json)
        .await
        .unwrap();
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export.path).unwrap()).unwrap();
    let key = &exported["decisions"][0]["signed_with_key"];
    assert_eq!(key["fingerprint"], before.fingerprint.as_str());
    assert!(key["retired_at"].is_string(), "{key}");
    let public = anp::keys::parse_public_key(key["public_key"].as_str().unwrap()).unwrap();
    assert_eq!(anp::keys::fingerprint(&public), before.fingerprint);

    // A new offer is decided with the new key, which the host accepts.
    let (agent2, second) = world.vendor("Contoso").await;
    submit(&agent2, &second, EventKind::Offer, offer(990, DAY)).await;
    engine.refresh().await.unwrap();
    let item = item_of(&engine, &second).await;
    let done = engine
        .decide(approve(&host_id, &second, &item.event_hash))
        .await
        .unwrap();
    assert_eq!(done.outcome, "appended", "{}", done.detail);
    let detail = engine.session_detail(&host_id, &second).await.unwrap();
    assert_eq!(detail.verification.state, Verification::Verified);
    assert_eq!(
        detail.decisions[0].signed_with.as_deref(),
        Some(after.fingerprint.as_str())
    );
    // And the first session is still verified after the next poll.
    let detail = engine.session_detail(&host_id, &first).await.unwrap();
    assert_eq!(detail.verification.state, Verification::Verified);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_that_had_not_reached_its_host_is_sent_once_as_signed_before_the_host_moves() {
    let mut world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let before = engine.key_status();
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = item_of(&engine, &session).await;
    let host_id = item.host_id.clone();

    // The host is down: the decision is signed and kept, not sent.
    world.stop().await;
    let unsent = engine
        .decide(approve(&host_id, &session, &item.event_hash))
        .await
        .unwrap_err();
    assert_eq!(unsent.code(), "unreachable", "{unsent}");

    // Moving while it is down: that host keeps the old key, and says why.
    let moved = engine
        .move_to_new_key(Some(TEST_PASSPHRASE.into()))
        .await
        .unwrap();
    assert!(!moved.finished);
    assert!(!moved.hosts[0].moved);
    assert!(
        moved.hosts[0]
            .detail
            .contains("has not reached this host yet"),
        "{}",
        moved.hosts[0].detail
    );
    let status = engine.key_status();
    assert_eq!(
        status.moving_from.as_deref(),
        Some(before.fingerprint.as_str())
    );

    // It comes back; finishing the move sends the kept decision first,
    // signed with the old key as made, then moves the host.
    world.restart().await;
    let moved = engine.move_to_new_key(None).await.unwrap();
    assert!(moved.finished, "{moved:?}");
    assert!(moved.hosts[0].moved, "{:?}", moved.hosts[0]);
    assert!(
        moved.hosts[0].detail.contains("1 decision(s)"),
        "{:?}",
        moved.hosts[0]
    );
    assert_eq!(engine.key_status().moving_from, None);
    let recorded = host_decisions(&world, &session).await;
    assert_eq!(recorded.len(), 1, "sent exactly once: {recorded:?}");
    // Asking again after the move sends nothing twice.
    let again = engine
        .decide(approve(&host_id, &session, &item.event_hash))
        .await
        .unwrap();
    assert_eq!(again.outcome, "appended");
    assert_eq!(host_decisions(&world, &session).await, recorded);
    engine.refresh().await.unwrap();
    let detail = engine.session_detail(&host_id, &session).await.unwrap();
    assert_eq!(detail.verification.state, Verification::Verified);
    assert_eq!(detail.row.status, "accepted");
    assert_eq!(
        detail.decisions[0].signed_with.as_deref(),
        Some(before.fingerprint.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_made_during_the_move_reaches_the_host_exactly_once() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let engine = Arc::new(engine);
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = item_of(&engine, &session).await;
    let host_id = item.host_id.clone();

    // The person approves while the console moves to a new key.
    let deciding = {
        let engine = engine.clone();
        let request = approve(&host_id, &session, &item.event_hash);
        tokio::spawn(async move { engine.decide(request).await })
    };
    let moving = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.move_to_new_key(Some(TEST_PASSPHRASE.into())).await })
    };
    let decided = deciding.await.unwrap().unwrap();
    let moved = moving.await.unwrap().unwrap();
    assert_eq!(decided.outcome, "appended", "{}", decided.detail);
    assert!(moved.finished, "{moved:?}");
    assert_eq!(
        host_decisions(&world, &session).await.len(),
        1,
        "neither lost nor sent twice"
    );
    engine.refresh().await.unwrap();
    let detail = engine.session_detail(&host_id, &session).await.unwrap();
    assert_eq!(detail.verification.state, Verification::Verified);
    assert_eq!(detail.row.status, "accepted");
    // Whichever key signed it is the one the history names.
    let signed_with = detail.decisions[0].signed_with.clone().unwrap();
    assert!(engine
        .key_status()
        .keys
        .iter()
        .any(|k| k.fingerprint == signed_with));
}
