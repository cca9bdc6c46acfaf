//! What waits on you, at a glance: the count the tray and the window title
//! show (pending decisions this approver can still act on, across hosts),
//! the one reminder a decision about to expire gets (never repeated, not
//! after a restart either), and the buttons a notification may carry.

use std::sync::Arc;
use std::time::Duration;

use anp::EventKind;
use countersign_engine::*;
use serde_json::json;
use time::OffsetDateTime;

use crate::common::*;

fn at(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
}

/// An engine approving as `email` in `dir`, on `clock`, connected to nothing.
fn reopened(dir: &std::path::Path, email: &str, clock: Arc<ManualClock>) -> Engine {
    let mut config = test_config(dir, email);
    config.humanizer = Humanizer::in_zone("en_GB.UTF-8", "UTC");
    config.clock = clock;
    Engine::open(config).unwrap()
}

#[tokio::test]
async fn the_waiting_count_leaves_out_what_you_approved_already_and_what_expired() {
    let world = World::start().await;
    world.load_policy("100000", 2, json!([])).await;
    let clock = Arc::new(ManualClock::at(OffsetDateTime::now_utc()));
    let given = clock.clone();
    let (_a, ada) = world
        .engine_with("ada@fabrikam.example", move |config| config.clock = given)
        .await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    let (northwind, nw_session) = world.vendor("Northwind").await;
    let (contoso, co_session) = world.vendor("Contoso").await;
    submit(&northwind, &nw_session, EventKind::Offer, offer(1140, DAY)).await;
    let soon = offer(1200, 2 * DAY);
    let contoso_expires = at(soon["expires_at"].as_str().unwrap());
    submit(&contoso, &co_session, EventKind::Offer, soon).await;
    ada.refresh().await.unwrap();
    grace.refresh().await.unwrap();
    let state = ada.app_state().await.unwrap();
    assert_eq!((state.unread, state.waiting), (2, 2));

    // Ada approves Northwind's: it now waits on Grace only. Opened or not,
    // it no longer waits on Ada; it still waits on Grace.
    let item = ada
        .inbox()
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.session_id == nw_session)
        .unwrap();
    let one = decide(
        &ada,
        &item.host_id,
        &nw_session,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    ada.refresh().await.unwrap();
    grace.refresh().await.unwrap();
    let page = ada.inbox_page(&InboxQuery::default()).await.unwrap();
    assert_eq!(page.total, 2, "both still pending at the host");
    assert_eq!(page.waiting, 1, "only Contoso's waits on Ada");
    assert_eq!(ada.app_state().await.unwrap().waiting, 1);
    assert_eq!(grace.app_state().await.unwrap().waiting, 2);

    // An hour before Contoso's expiry by Ada's clock, then past it: what
    // expired waits on nobody.
    clock.set(contoso_expires - Duration::from_secs(3600));
    let state = ada.app_state().await.unwrap();
    assert_eq!(state.waiting, 1);
    clock.set(contoso_expires + Duration::from_secs(60));
    assert_eq!(ada.app_state().await.unwrap().waiting, 0);
}

#[tokio::test]
async fn a_decision_about_to_expire_gets_one_reminder_never_repeated_after_a_restart() {
    let world = World::start().await;
    let data = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at(OffsetDateTime::now_utc()));
    let engine = reopened(data.path(), "ada@fabrikam.example", clock.clone());
    engine
        .connect_host(&world.url, &world.code("ada@fabrikam.example").await)
        .await
        .unwrap();
    let recorder = recorded(&engine);
    let (agent, session) = world.vendor("Northwind").await;
    let payload = offer(1140, DAY);
    let expires_at = at(payload["expires_at"].as_str().unwrap());
    submit(&agent, &session, EventKind::Offer, payload).await;
    engine.refresh().await.unwrap();
    assert_eq!(recorder.pending.lock().unwrap().len(), 1);
    assert!(recorder.reminders.lock().unwrap().is_empty());

    // Two hours before: the default reminder (an hour) is not due yet.
    clock.set(expires_at - Duration::from_secs(2 * 3600));
    engine.refresh().await.unwrap();
    assert!(recorder.reminders.lock().unwrap().is_empty());

    // Fifty minutes before: one reminder, saying so.
    clock.set(expires_at - Duration::from_secs(50 * 60));
    engine.refresh().await.unwrap();
    let reminders = recorder.reminders.lock().unwrap().clone();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert_eq!(reminders[0].title, "ANP offer from Northwind expires soon");
    assert!(
        reminders[0]
            .body
            .starts_with("570,000 USD · expires in 50 min ("),
        "{}",
        reminders[0].body
    );
    assert_eq!(reminders[0].session_id, session);
    assert_eq!(
        reminders[0].actions,
        [DecideAction::Approve, DecideAction::Decline]
    );

    // Again, and after a restart: nothing more.
    clock.set(expires_at - Duration::from_secs(40 * 60));
    engine.refresh().await.unwrap();
    assert_eq!(recorder.reminders.lock().unwrap().len(), 1);
    engine.shutdown().await;
    drop(engine);
    let engine = reopened(data.path(), "ada@fabrikam.example", clock.clone());
    let after = recorded(&engine);
    engine.refresh().await.unwrap();
    assert!(after.reminders.lock().unwrap().is_empty());
    assert!(after.pending.lock().unwrap().is_empty());
    assert_eq!(engine.app_state().await.unwrap().waiting, 1);
}

#[tokio::test]
async fn the_reminder_follows_its_setting_and_skips_what_arrived_that_close() {
    let world = World::start().await;
    let data = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at(OffsetDateTime::now_utc()));
    let engine = reopened(data.path(), "ada@fabrikam.example", clock.clone());
    engine
        .connect_host(&world.url, &world.code("ada@fabrikam.example").await)
        .await
        .unwrap();
    let recorder = recorded(&engine);

    // An offer that arrives 30 minutes before its expiry: its own notice
    // says so; no second one.
    let (agent, close) = world.vendor("Contoso").await;
    submit(
        &agent,
        &close,
        EventKind::Offer,
        offer(1200, Duration::from_secs(30 * 60)),
    )
    .await;
    engine.refresh().await.unwrap();
    assert_eq!(recorder.pending.lock().unwrap().len(), 1);
    clock.set(OffsetDateTime::now_utc() + Duration::from_secs(5 * 60));
    engine.refresh().await.unwrap();
    assert!(recorder.reminders.lock().unwrap().is_empty());

    // Three hours ahead is out of the default hour's reach, within 180
    // minutes' once the person asks for that; 0 sends none.
    let (agent, later) = world.vendor("Northwind").await;
    let payload = offer(1140, DAY);
    let expires_at = at(payload["expires_at"].as_str().unwrap());
    submit(&agent, &later, EventKind::Offer, payload).await;
    clock.set(expires_at - Duration::from_secs(2 * 3600 + 30 * 60));
    engine
        .set_setting(NOTIFY_EXPIRY_REMINDER, json!(0))
        .await
        .unwrap();
    engine.refresh().await.unwrap();
    assert!(recorder.reminders.lock().unwrap().is_empty());
    engine.refresh().await.unwrap();
    assert!(recorder.reminders.lock().unwrap().is_empty());
    let settings = engine
        .set_setting(NOTIFY_EXPIRY_REMINDER, json!(180))
        .await
        .unwrap();
    let setting = settings
        .settings
        .iter()
        .find(|s| s.id == NOTIFY_EXPIRY_REMINDER)
        .unwrap();
    assert_eq!(
        (setting.group.as_str(), setting.default.clone()),
        ("Notifications", json!(60))
    );
    engine.refresh().await.unwrap();
    let reminders = recorder.reminders.lock().unwrap().clone();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert_eq!(reminders[0].session_id, later);
    assert!(
        engine
            .set_setting(NOTIFY_EXPIRY_REMINDER, json!(1441))
            .await
            .is_err(),
        "a day at most"
    );
}

#[test]
fn a_notification_offers_approve_and_decline_only_where_the_server_and_the_protocol_do() {
    use NoticeAction::*;
    let both = [
        DecideAction::Approve,
        DecideAction::Decline,
        DecideAction::Counter,
    ];
    assert_eq!(notice_actions(&both, true), [Open, Approve, Decline]);
    assert!(
        notice_actions(&both, false).is_empty(),
        "no actions offered: a click opens the decision, as before"
    );
    assert_eq!(
        notice_actions(&[DecideAction::Decline], true),
        [Open, Decline]
    );
    let words: Vec<(&str, &str)> = [Open, Approve, Decline]
        .iter()
        .map(|a| (a.id(), a.label()))
        .collect();
    assert_eq!(
        words,
        [
            ("open", "Open"),
            ("approve", "Approve…"),
            ("decline", "Decline…")
        ]
    );
    // What each key the server reports back opens: the click is "Open";
    // nothing else is ours.
    assert_eq!(NoticeAction::from_id("default"), Some(Open));
    assert_eq!(
        NoticeAction::from_id("approve").and_then(NoticeAction::opens),
        Some(DecideAction::Approve)
    );
    assert_eq!(
        NoticeAction::from_id("decline").and_then(NoticeAction::opens),
        Some(DecideAction::Decline)
    );
    assert_eq!(NoticeAction::from_id("sign"), None);
    // The event the app is opened with names the decision form, or none.
    let target = ProposalRef {
        host_id: "h".into(),
        session_id: "s".into(),
        event_hash: "e".into(),
    };
    assert_eq!(
        serde_json::to_value(ProposalOpening::of(&target, Approve.opens())).unwrap(),
        json!({"host_id": "h", "session_id": "s", "event_hash": "e", "decide": "approve"})
    );
    assert_eq!(
        serde_json::to_value(ProposalOpening::of(&target, Open.opens())).unwrap()["decide"],
        json!(null)
    );
}
