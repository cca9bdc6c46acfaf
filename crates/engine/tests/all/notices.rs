//! What a notification says, as a person reads it: the amount grouped, the
//! expiry relative and in the machine's zone; the dispute naming its host,
//! session and counterparty. The expected text is built here by hand from
//! the offer's own expiry, not by the formatting module under test.

use std::sync::Arc;
use std::time::Duration;

use anp::EventKind;
use countersign_engine::*;
use serde_json::json;
use time::OffsetDateTime;

use crate::common::*;

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec",
];

/// "Fri 4 Dec, 06:53" for `at` shifted into UTC+9 (Tokyo keeps no summer time).
fn tokyo_en_gb(at: OffsetDateTime) -> String {
    let local = at.to_offset(time::UtcOffset::from_hms(9, 0, 0).unwrap());
    format!(
        "{} {} {}, {:02}:{:02}",
        WEEKDAYS[local.weekday().number_days_from_monday() as usize],
        local.day(),
        MONTHS[local.month() as usize - 1],
        local.hour(),
        local.minute()
    )
}

#[tokio::test]
async fn a_new_offer_notification_reads_as_a_person_writes_it() {
    let world = World::start().await;
    let (_data, engine) = world
        .engine_with("ada@fabrikam.example", |config| {
            config.humanizer = Humanizer::in_zone("en_GB.UTF-8", "Asia/Tokyo");
        })
        .await;
    let state = engine.app_state().await.unwrap();
    assert_eq!(state.locale, "en-GB");
    assert_eq!(state.time_zone.as_deref(), Some("Asia/Tokyo"));

    let recorder = Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    let (agent, session) = world.vendor("Northwind").await;
    // 2 d 23 h and half an hour: "2 d 23 h" for as long as the test runs.
    let expires_in = Duration::from_secs(2 * 86_400 + 23 * 3_600 + 30 * 60);
    let payload = offer(1140, expires_in);
    let expires_at = OffsetDateTime::parse(
        payload["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    submit(&agent, &session, EventKind::Offer, payload).await;
    engine.refresh().await.unwrap();

    let notice = recorder.pending.lock().unwrap()[0].clone();
    assert_eq!(notice.title, "ANP offer from Northwind waits for you");
    assert_eq!(
        notice.body,
        format!(
            "570,000 USD · expires in 2 d 23 h ({})",
            tokyo_en_gb(expires_at)
        )
    );
    assert_eq!(notice.total, "570000", "the exact amount travels too");
    // The session's timeline reads the same way.
    let detail = engine
        .session_detail(&notice.host_id, &session)
        .await
        .unwrap();
    assert_eq!(detail.timeline[2].summary, "Offer: 570,000 USD, 36 months");
}

#[tokio::test]
async fn a_german_machine_groups_with_points() {
    let world = World::start().await;
    let (_data, engine) = world
        .engine_with("ada@fabrikam.example", |config| {
            config.humanizer = Humanizer::in_zone("de_DE.UTF-8", "Europe/Berlin");
        })
        .await;
    let recorder = Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let body = recorder.pending.lock().unwrap()[0].body.clone();
    assert!(
        body.starts_with("570.000 USD · expires in 23 h 59 min (") && body.ends_with(")"),
        "{body}"
    );
    assert_eq!(engine.app_state().await.unwrap().locale, "de-DE");
}

#[tokio::test]
async fn a_dispute_notification_names_the_host_session_and_counterparty() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    submit(
        &agent,
        &session,
        EventKind::Message,
        json!({"body": "Hello."}),
    )
    .await;
    engine.refresh().await.unwrap();
    let host = engine.hosts().await.unwrap().remove(0);
    world.rewrite_unit_price(&session, 3, 1140, 1400).await;
    engine.audit_session(&host.host_id, &session).await.unwrap();
    let notice = recorder.disputed.lock().unwrap()[0].clone();
    let short: String = session.chars().take(8).collect();
    assert_eq!(
        notice.title,
        format!(
            "ANP session {short} on {} with Northwind is disputed",
            host.label
        )
    );
    assert!(
        notice.body.contains("(event 3, payload_hash)"),
        "{}",
        notice.body
    );
    assert_eq!(notice.host_label, host.label);
}
