//! The sandbox's ANP vendor agents: real offers in a new user's inbox, an
//! answer to a decline, a restart that keeps every session and pin, and a
//! sandbox left out once a real host is connected.

use std::time::Duration;

use anp::EventKind;
use countersign_engine::*;

use crate::common::*;
use crate::launch::{launch, sandbox_engine};

#[tokio::test]
async fn the_sandbox_shows_real_pending_decisions_and_reacts() {
    let data = tempfile::tempdir().unwrap();
    let mut config = crate::launch::config_in(data.path());
    config.poll_interval = Duration::from_millis(300);
    let engine = Engine::open(config).unwrap();
    let mut changes = engine.subscribe();
    let engine = launch(engine).await;
    // Wait (bounded) for the demo vendors' offers to arrive.
    let mut inbox = Vec::new();
    for _ in 0..100 {
        inbox = engine.inbox().await.unwrap();
        // The four ANP vendors (other protocols' demos arrive on their own
        // time, and are not what this test waits for).
        if inbox
            .iter()
            .filter(|i| i.protocol == "ANP/0.1")
            .map(|i| i.counterparty.display_name())
            .collect::<std::collections::HashSet<_>>()
            .len()
            >= 4
        {
            break;
        }
        let _ = tokio::time::timeout(Duration::from_millis(500), changes.recv()).await;
    }
    let vendors: std::collections::HashSet<_> = inbox
        .iter()
        .map(|i| i.counterparty.display_name().to_owned())
        .collect();
    assert!(vendors.len() >= 4, "sandbox inbox: {inbox:?}");
    let state = engine.app_state().await.unwrap();
    assert!(state.sandbox);
    let northwind = inbox
        .iter()
        .find(|i| {
            i.counterparty.display_name() == "Northwind Software" && i.actor == "vendor_agent"
        })
        .unwrap()
        .clone();
    // The sandbox's own demo vendors: their names verified by the sandbox,
    // their admin, so no row calls them unverified.
    for item in inbox.iter().filter(|i| i.protocol == "ANP/0.1") {
        assert_eq!(item.counterparty.verified, Some(true), "{item:?}");
    }
    // A chain on first launch: Northwind's offer above 100,000 USD needs a
    // buyer, then finance (the person); Grace, the demo colleague, approves
    // the first step by herself, and then it waits on the person.
    let chain = northwind
        .chain
        .clone()
        .expect("Northwind's offer is routed");
    assert_eq!(chain.reason, "Northwind Software above 100,000 USD: rule 1");
    let roles: Vec<&str> = chain
        .steps
        .iter()
        .map(|s| s.parts[0].role.as_str())
        .collect();
    assert_eq!(roles, ["buyer", "finance"]);
    let mut northwind = northwind;
    for _ in 0..60 {
        if northwind.waits_on_you {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        engine.refresh().await.unwrap();
        northwind = engine
            .inbox()
            .await
            .unwrap()
            .into_iter()
            .find(|i| i.event_hash == northwind.event_hash)
            .expect("still pending");
    }
    let chain = northwind.chain.clone().unwrap();
    assert!(northwind.waits_on_you, "Grace approved step 1: {chain:?}");
    assert_eq!(chain.current_step, Some(2));
    assert_eq!(
        chain.steps[0].parts[0].approved_by,
        ["grace@colleague.sandbox.example"]
    );
    assert_eq!(chain.your_role.as_deref(), Some("finance"));
    // Everything else waits on the person alone, as before.
    for item in inbox.iter().filter(|i| {
        i.protocol == "ANP/0.1" && i.counterparty.display_name() != "Northwind Software"
    }) {
        assert!(item.waits_on_you, "{item:?}");
    }
    engine
        .decide(DecideRequest {
            host_id: northwind.host_id.clone(),
            session_id: northwind.session_id.clone(),
            in_response_to: northwind.event_hash.clone(),
            action: DecideAction::Decline,
            reason: Some("Too high".into()),
            counter: None,
        })
        .await
        .unwrap();
    // The demo vendor answers the decline with a lower offer.
    let mut answered = None;
    for _ in 0..60 {
        engine.refresh().await.unwrap();
        answered = engine.inbox().await.unwrap().into_iter().find(|i| {
            i.session_id == northwind.session_id
                && i.actor == "vendor_agent"
                && i.event_hash != northwind.event_hash
        });
        if answered.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if answered.is_none() {
        let detail = engine
            .session_detail(&northwind.host_id, &northwind.session_id)
            .await
            .unwrap();
        for e in &detail.timeline {
            eprintln!("{} {} {} {}", e.seq, e.actor, e.kind, e.summary);
        }
        eprintln!("{:?}", engine.inbox().await.unwrap());
    }
    let answered = answered.expect("the demo vendor countered");
    assert_eq!(answered.kind, "offer");
    assert_eq!(previous_total(&answered), Some(total(&northwind).as_str()));
    let new: rust_decimal::Decimal = total(&answered).parse().unwrap();
    let old: rust_decimal::Decimal = total(&northwind).parse().unwrap();
    assert!(new < old, "{new} < {old}");
    engine.shutdown().await;
}

#[tokio::test]
async fn the_sandbox_survives_a_restart_with_its_sessions_and_pins() {
    let data = tempfile::tempdir().unwrap();
    let open = || sandbox_engine(data.path());
    let engine = open();
    let engine = launch(engine).await;
    let mut first = Vec::new();
    for _ in 0..100 {
        engine.refresh().await.unwrap();
        first = engine.sessions(HistoryFilter::default()).await.unwrap();
        if first.len() >= 8 && engine.inbox().await.unwrap().len() >= 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Four ANP vendors, the Concordia seller, the ANEX onboarding agent,
    // the OANP merchant and the purchasing assistant's plain terms.
    assert_eq!(first.len(), 8, "{first:?}");
    for (protocol, n) in [("concordia", 1), ("anex", 1), ("oanp", 1), ("plain", 1)] {
        assert_eq!(
            first.iter().filter(|r| r.protocol == protocol).count(),
            n,
            "{first:?}"
        );
    }
    let oanp_demo = || {
        let text = std::fs::read_to_string(data.path().join("sandbox/oanp-demo.json")).unwrap();
        let state: serde_json::Value = serde_json::from_str(&text).unwrap();
        (
            state["agent_id"].clone(),
            state["session_id"].clone(),
            state["messages"].as_array().map(Vec::len),
        )
    };
    let before = oanp_demo();
    engine.shutdown().await;
    drop(engine);

    let engine = open();
    let engine = launch(engine).await;
    engine.refresh().await.unwrap();
    let hosts = engine.hosts().await.unwrap();
    assert_eq!(hosts.len(), 1, "one sandbox host, re-bound to its new port");
    // The OANP demo's buyer carries on as the same agent in the same session.
    assert_eq!(oanp_demo(), before);
    assert!(hosts[0].reachable, "{:?}", hosts[0].last_error);
    let again = engine.sessions(HistoryFilter::default()).await.unwrap();
    assert_eq!(
        again.len(),
        first.len(),
        "the demos do not open their sessions twice"
    );
    // Every signed record verifies; OANP's envelopes are unsigned, so its
    // chain holds with authorship unproven (and nothing is disputed).
    for r in &again {
        let wanted = if r.protocol == "oanp" {
            Verification::Unproven
        } else {
            Verification::Verified
        };
        assert_eq!(r.verification, wanted, "{r:?}");
    }
    engine.shutdown().await;
}

#[tokio::test]
async fn after_a_real_host_is_connected_the_next_start_leaves_the_sandbox_out() {
    let data = tempfile::tempdir().unwrap();
    let open = || sandbox_engine(data.path());
    let engine = open();
    let engine = launch(engine).await;
    for _ in 0..100 {
        engine.refresh().await.unwrap();
        if !engine.inbox().await.unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!engine.inbox().await.unwrap().is_empty(), "demo offers");
    let world = World::start().await;
    let ada = ApproverProfile {
        name: "Ada".into(),
        email: "ada@fabrikam.example".into(),
    };
    let real = engine
        .connect_host_as(&world.url, &world.code("ada@fabrikam.example").await, &ada)
        .await
        .unwrap();
    // In this run the sandbox keeps going; the app is no longer "sandbox only".
    assert!(!engine.app_state().await.unwrap().sandbox);
    assert!(engine.hosts().await.unwrap().iter().all(|h| h.polled));
    assert!(!engine.inbox().await.unwrap().is_empty());
    engine.shutdown().await;
    drop(engine);

    let engine = open();
    let engine = launch(engine).await;
    let (vendor, session) = world.vendor("Litware").await;
    submit(&vendor, &session, EventKind::Offer, offer(40, DAY)).await;
    engine.refresh().await.unwrap();
    let inbox = engine.inbox().await.unwrap();
    assert_eq!(inbox.len(), 1, "only the real host's offer: {inbox:?}");
    assert_eq!(inbox[0].host_id, real.host_id);
    let state = engine.app_state().await.unwrap();
    assert_eq!(state.unread, 1);
    // The sandbox host is still listed, as no longer polled.
    let polled: Vec<(bool, bool)> = state.hosts.iter().map(|h| (h.sandbox, h.polled)).collect();
    assert_eq!(polled.len(), 2, "{:?}", state.hosts);
    assert!(
        polled.contains(&(true, false)) && polled.contains(&(false, true)),
        "{polled:?}"
    );
    // The demo's history stays readable.
    let sessions = engine.sessions(HistoryFilter::default()).await.unwrap();
    assert!(sessions.len() > 1, "{sessions:?}");
    engine.shutdown().await;
}
