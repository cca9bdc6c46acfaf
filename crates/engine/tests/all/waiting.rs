//! A started console holds one waiting request per host (`GET
//! /summary?wait=`) and hears of a change the moment the host answers it,
//! not at its next poll; a host that does not offer waiting is polled on the
//! timer, and Hosts says which; a host that stops and comes back is heard
//! again, with what changed meanwhile.

use std::time::Duration;

use anp::EventKind;
use countersign_engine::{Engine, UpdateMode};

use crate::common::*;

/// Returns once `$done` (an expression that may `.await`) holds, checking
/// every 25 ms for up to a minute: a wait for a state, not a measurement
/// (the tests' poll interval is an hour).
macro_rules! until {
    ($what:expr, $done:expr) => {{
        let mut held = false;
        for _ in 0..2400 {
            if $done {
                held = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(held, "{} did not happen", $what);
    }};
}

async fn mode(engine: &Engine) -> (UpdateMode, String, bool) {
    let host = engine.hosts().await.unwrap().remove(0);
    (host.updates.mode, host.updates.detail, host.reachable)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_console_hears_of_an_offer_at_once_not_at_its_next_poll() {
    let world = World::start().await;
    // An hour between polls (the tests' setting): only the waiting request
    // can bring the offer within the minute `until` allows.
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let told = recorded(&engine);
    let (vendor, session) = world.vendor("Northwind").await;
    engine.start().await.unwrap();
    until!("the console waiting at the host", {
        mode(&engine).await.0 == UpdateMode::Waiting
    });
    let (_, detail, _) = mode(&engine).await;
    assert!(detail.starts_with("Hears of changes at once"), "{detail}");
    let requests_before = engine.poll_stats().requests;
    submit(&vendor, &session, EventKind::Offer, offer(1200, DAY)).await;
    until!("the notifier told of the offer", {
        !told.pending.lock().unwrap().is_empty()
    });
    let notices = told.pending.lock().unwrap().clone();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].session_id, session);
    assert_eq!(engine.inbox().await.unwrap().len(), 1);
    // The answer to the waiting request carried it, and the offer's log was
    // fetched: no poll in between.
    let spent = engine.poll_stats().requests - requests_before;
    assert!(spent <= 3, "{spent} requests to hear of one offer");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_without_waiting_is_polled_on_the_timer_and_hosts_says_so() {
    let world = World::start_in_process(countersign_host::HostConfig {
        wait_for_changes: false,
        ..World::host_config()
    })
    .await;
    let (_data, engine) = world
        .engine_with("ada@fabrikam.example", |c| {
            c.poll_interval = Duration::from_secs(1)
        })
        .await;
    let told = recorded(&engine);
    let (vendor, session) = world.vendor("Northwind").await;
    engine.start().await.unwrap();
    until!("Hosts saying the host is polled", {
        let (mode, detail, _) = mode(&engine).await;
        mode == UpdateMode::Polling && detail.contains("does not offer waiting")
    });
    let (_, detail, _) = mode(&engine).await;
    assert_eq!(
        detail,
        "Polls every 1 s: the host does not offer waiting for changes."
    );
    submit(&vendor, &session, EventKind::Offer, offer(1200, DAY)).await;
    until!("the timed poll finding the offer", {
        !told.pending.lock().unwrap().is_empty()
    });
    assert_eq!(told.pending.lock().unwrap()[0].session_id, session);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_stops_and_comes_back_is_heard_again_with_what_changed_meanwhile() {
    let mut world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let told = recorded(&engine);
    let (vendor, session) = world.vendor("Northwind").await;
    engine.start().await.unwrap();
    until!("the console waiting at the host", {
        mode(&engine).await.0 == UpdateMode::Waiting
    });
    world.stop().await;
    until!("Hosts saying the host cannot be reached", {
        !mode(&engine).await.2
    });
    world.restart().await;
    // Appended before the console is back: its first request must bring it.
    submit(&vendor, &session, EventKind::Offer, offer(1200, DAY)).await;
    until!("the notifier told of the offer", {
        !told.pending.lock().unwrap().is_empty()
    });
    assert_eq!(told.pending.lock().unwrap()[0].session_id, session);
    until!("the console waiting at the host again", {
        let (mode, _, reachable) = mode(&engine).await;
        mode == UpdateMode::Waiting && reachable
    });
    // Nothing doubled: one notice, one inbox row.
    assert_eq!(told.pending.lock().unwrap().len(), 1);
    assert_eq!(engine.inbox().await.unwrap().len(), 1);
    engine.shutdown().await;
}
