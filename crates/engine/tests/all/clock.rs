//! The engine reads every "now" from the clock it is given: what a
//! notification says, whether an offer is expired (and so refused locally,
//! nothing sent), and the time a decision is recorded at.

use std::sync::Arc;
use std::time::Duration;

use anp::EventKind;
use countersign_engine::*;
use time::OffsetDateTime;

use crate::common::*;

fn at(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_notices_and_decision_times_follow_the_engines_clock() {
    let world = World::start().await;
    let clock = Arc::new(ManualClock::at(OffsetDateTime::now_utc()));
    let given = clock.clone();
    let (_data, engine) = world
        .engine_with("ann@fabrikam.example", move |config| {
            config.humanizer = Humanizer::in_zone("en_GB.UTF-8", "Asia/Tokyo");
            config.clock = given;
        })
        .await;
    let recorder = Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    let (agent, session) = world.vendor("Northwind").await;
    let payload = offer(1140, DAY);
    let expires_at = at(payload["expires_at"].as_str().unwrap());
    submit(&agent, &session, EventKind::Offer, payload).await;

    // Three hours before the expiry by the engine's clock (a day away by
    // the machine's): the notification counts from the engine's clock.
    clock.set(expires_at - Duration::from_secs(3 * 3600));
    engine.refresh().await.unwrap();
    let notice = recorder.pending.lock().unwrap()[0].clone();
    assert!(
        notice.body.starts_with("570,000 USD · expires in 3 h ("),
        "{}",
        notice.body
    );

    // A minute after it: expired here, refused locally, nothing sent, even
    // though the host (on the machine's clock) would still take it. It has
    // left the pending list for the expired section.
    clock.set(expires_at + Duration::from_secs(60));
    let page = engine.inbox_page(&InboxQuery::default()).await.unwrap();
    assert!(page.items.is_empty());
    let item = page.expired[0].clone();
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(view.expired);
    let refused = engine
        .decide(DecideRequest {
            host_id: item.host_id.clone(),
            session_id: session.clone(),
            in_response_to: item.event_hash.clone(),
            action: DecideAction::Approve,
            reason: None,
            counter: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "offer_expired");
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().all(|e| e.kind != EventKind::Accept));

    // Back before it (a second behind the machine's clock, since the host
    // refuses an approval signed in its future): approved, and recorded at
    // the clock's time.
    let decided_at = (OffsetDateTime::now_utc() - Duration::from_secs(1))
        .replace_millisecond(0)
        .unwrap();
    clock.set(decided_at);
    // The engine's clock jumped a day past the last decision, so its idle
    // lock engaged: unlock, as the person would.
    engine
        .unlock_key(Some(TEST_PASSPHRASE.into()))
        .await
        .unwrap();
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(!view.expired);
    decide(
        &engine,
        &item.host_id,
        &session,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    let detail = engine
        .session_detail(&item.host_id, &session)
        .await
        .unwrap();
    assert_eq!(detail.decisions.len(), 1);
    assert_eq!(at(&detail.decisions[0].at), decided_at);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_poll_moves_the_hosts_last_poll_and_tells_the_ui() {
    let world = World::start().await;
    let start = OffsetDateTime::now_utc();
    let clock = Arc::new(ManualClock::at(start));
    let given = clock.clone();
    let (_data, engine) = world
        .engine_with("ann@fabrikam.example", move |config| config.clock = given)
        .await;
    engine.refresh().await.unwrap();
    let first = engine.hosts().await.unwrap()[0].last_poll_at.clone();
    assert!(first.is_some());

    // 43 minutes on, the host reachable all along and nothing new on it.
    let mut changes = engine.subscribe();
    clock.set(start + Duration::from_secs(43 * 60));
    engine.refresh().await.unwrap();
    let host = engine.hosts().await.unwrap().remove(0);
    assert!(host.reachable, "{:?}", host.last_error);
    let last = host.last_poll_at.expect("a last poll");
    assert_ne!(Some(&last), first.as_ref());
    assert_eq!(
        at(&last).unix_timestamp(),
        (start + Duration::from_secs(43 * 60)).unix_timestamp()
    );
    // The Hosts screen hears of it, so its "Last poll" line moves.
    let mut heard = Vec::new();
    while let Ok(event) = changes.try_recv() {
        heard.push(event);
    }
    assert!(
        heard
            .iter()
            .any(|e| e.what == ChangeScope::Hosts
                && e.host_id.as_deref() == Some(host.host_id.as_str())),
        "{heard:?}"
    );
}

/// An offer nobody decided in time leaves the pending list for the inbox's
/// expired section, offers only what ANP still takes (a late decline), and
/// can be dismissed for good; one that has not expired cannot be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_offer_has_its_own_section_and_can_be_dismissed() {
    let world = World::start().await;
    let clock = Arc::new(ManualClock::at(OffsetDateTime::now_utc()));
    let given = clock.clone();
    let (_data, engine) = world
        .engine_with("ann@fabrikam.example", move |config| config.clock = given)
        .await;
    let (agent, session) = world.vendor("Tailspin").await;
    let payload = offer(1140, DAY);
    let expires_at = at(payload["expires_at"].as_str().unwrap());
    submit(&agent, &session, EventKind::Offer, payload).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap().remove(0);

    // Still standing: it cannot be dismissed, only decided.
    let err = engine
        .dismiss(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("has not expired"), "{err}");

    clock.set(expires_at + Duration::from_secs(60));
    let page = engine.inbox_page(&InboxQuery::default()).await.unwrap();
    assert!(page.items.is_empty(), "{:?}", page.items);
    assert_eq!(page.total, 0);
    assert_eq!(page.expired.len(), 1);
    assert_eq!(page.expired[0].event_hash, item.event_hash);
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(view.expired && view.pending);
    // ANP takes a late decline (the vendor is told) and a counter (a new
    // offer of ours, with its own expiry: the host checks only that); never
    // an approval.
    let late = vec![DecideAction::Decline, DecideAction::Counter];
    assert_eq!(view.capabilities.actions, late);
    assert_eq!(view.capabilities.after_expiry, late);

    engine
        .dismiss(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    let page = engine.inbox_page(&InboxQuery::default()).await.unwrap();
    assert!(page.expired.is_empty() && page.items.is_empty());
    // Nothing was sent: the host's log has no answer to the offer.
    let log = agent.log(&session, None).await.unwrap();
    assert!(log
        .events
        .iter()
        .all(|e| e.kind != EventKind::Decline && e.kind != EventKind::Accept));
}
