//! The sandbox's OANP demo, on a real engine with its embedded host: the
//! org's buyer agent enrolled at the gate for OANP, the scripted merchant's
//! counter mirrored with the arbiter's verdict and asked about, and the
//! person's decisions acted on (a counter answered by a new counter, an
//! approval agreed, a decline closing the session). The host side is read
//! as the demo's own agent reads it (its key from the demo's state file,
//! over signed HTTP); the console side through the engine.

use std::time::Duration;

use countersign_client::GateClient;
use countersign_engine::*;
use serde_json::{json, Value};

use crate::concordia::{asked, demo_agent, pending_of, state_file};
use crate::launch::{launch, sandbox_engine};

/// Waits (bounded) until the OANP demo has made `requests` requests; its state.
async fn oanp_asked(data: &std::path::Path, requests: u32) -> Value {
    asked(data, "oanp-demo.json", requests).await
}

/// Waits (bounded) until the gate reads the session as `state`.
async fn gate_state(agent: &GateClient, session_id: &str, state: &str) -> String {
    let mut now = String::new();
    for _ in 0..80 {
        now = agent.session(session_id).await.unwrap().state;
        if now == state {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    now
}

/// The session's timeline kinds once the console has read through `last`.
async fn kinds_through(engine: &Engine, item: &InboxItem, last: &str) -> Vec<String> {
    let mut kinds = Vec::new();
    for _ in 0..40 {
        engine.refresh().await.unwrap();
        let detail = engine
            .session_detail(&item.host_id, &item.session_id)
            .await
            .unwrap();
        kinds = detail.timeline.iter().map(|e| e.kind.clone()).collect();
        if kinds.last().map(String::as_str) == Some(last) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    kinds
}

fn decide(item: &InboxItem, action: DecideAction) -> DecideRequest {
    DecideRequest {
        host_id: item.host_id.clone(),
        session_id: item.session_id.clone(),
        in_response_to: item.event_hash.clone(),
        action,
        reason: None,
        counter: None,
    }
}

fn offer_view(view: &ProposalView) -> &OanpOfferView {
    let ProposalDetail::OanpOffer(offer) = &view.detail else {
        panic!("{:?}", view.detail)
    };
    offer
}

#[tokio::test]
async fn the_sandbox_asks_about_the_merchants_oanp_counter_a_counter_is_answered_and_an_approval_agrees(
) {
    let data = tempfile::tempdir().unwrap();
    let engine = sandbox_engine(data.path());
    let recorder = std::sync::Arc::new(crate::common::Recorder::default());
    engine.set_notifier(recorder.clone());
    let engine = launch(engine).await;

    // The host side: the buyer agent enrolled for OANP, its log mirrored
    // (open, ack, the arbiter's rules, its offer and the merchant's counter,
    // each scored) and a decision asked for on the counter.
    let state = oanp_asked(data.path(), 1).await;
    let session_id = state["session_id"].as_str().unwrap().to_owned();
    let agent = demo_agent(&engine, &state).await;
    let view = agent.session(&session_id).await.unwrap();
    assert_eq!(
        (view.protocol.as_str(), view.state.as_str()),
        ("oanp", "active")
    );
    assert_eq!(view.head.count, 7);
    let request = agent.request(&session_id, "req-1").await.unwrap();
    assert_eq!(request.status.as_str(), "pending");
    assert_eq!(request.amount, "5400.00 USD");

    // The console side: the merchant's counter in the inbox, beside the
    // other protocols' offers, against the buyer's opening offer.
    let first = pending_of(&engine, "oanp", None)
        .await
        .expect("the sandbox's OANP counter reaches the inbox");
    assert_eq!(first.session_id, format!("oanp:{session_id}"));
    assert_eq!(first.kind, "offer.counter");
    assert_eq!(first.proposal_kind, ProposalKind::OanpOffer);
    assert_eq!(first.amount.as_ref().unwrap().value, "5400.00");
    assert_eq!(first.previous_amount.as_ref().unwrap().value, "4560.00");
    assert_eq!(
        first.counterparty.organization.as_deref(),
        Some("Contoso Monitors")
    );
    let inbox = engine.inbox().await.unwrap();
    for protocol in ["ANP/0.1", "concordia", "anex"] {
        assert!(
            inbox.iter().any(|i| i.protocol == protocol),
            "{protocol}: {inbox:?}"
        );
    }
    let view = engine
        .proposal_view(&first.host_id, &first.session_id, &first.event_hash)
        .await
        .unwrap();
    let offer = offer_view(&view);
    assert_eq!(offer.offer.sender, "merchant");
    let verdict = offer.verdict.as_ref().expect("the arbiter's verdict");
    assert_eq!(verdict.verdict.as_deref(), Some("unfair_to_buyer"));
    assert_eq!(verdict.fairness_score.as_deref(), Some("0.9333"));
    assert_eq!(
        verdict.suggested_price.as_ref().unwrap().amount_minor,
        "504000"
    );
    assert_eq!((offer.max_rounds, offer.rounds_left), (Some(6), Some(4)));
    let added: Vec<&str> = offer
        .inclusions_added
        .iter()
        .map(|i| i.kind.as_str())
        .collect();
    assert_eq!(added, ["warranty"]);

    // Countered below the merchant's floor: the buyer sends the person's
    // terms, the arbiter scores them, the merchant meets halfway, and the
    // buyer asks again.
    let ours = json!({"price": {"amount_minor": 480000, "currency": "USD"},
                      "inclusions": [{"kind": "warranty", "value": "included"},
                                     {"kind": "cable", "value": "included"}]});
    engine
        .decide(DecideRequest {
            reason: Some("Our budget is 4,800 USD".into()),
            counter: Some(ours.clone()),
            ..decide(&first, DecideAction::Counter)
        })
        .await
        .unwrap();
    let second = pending_of(&engine, "oanp", Some(&first.event_hash))
        .await
        .expect("the merchant answered the counter with a new one");
    assert_eq!(second.session_id, first.session_id);
    assert_eq!(second.kind, "offer.counter");
    assert_eq!(second.amount.as_ref().unwrap().value, "5100.00");
    // Compared with the merchant's own previous counter; the person's
    // terms, as the buyer sent them, stand apart as the gap.
    assert_eq!(second.previous_amount.as_ref().unwrap().value, "5400.00");
    assert_eq!(second.gap.as_ref().unwrap().ours.value, "4800.00");
    assert_eq!(
        agent
            .request(&session_id, "req-1")
            .await
            .unwrap()
            .status
            .as_str(),
        "countered"
    );
    let state = oanp_asked(data.path(), 2).await;
    assert_eq!(state["messages"][7]["type"], "offer.counter");
    assert_eq!(state["messages"][7]["sender"]["role"], "buyer");
    assert_eq!(state["messages"][7]["payload"]["terms"], ours);
    assert_eq!(state["messages"][7]["payload"]["round"], 3);
    let view = engine
        .proposal_view(&second.host_id, &second.session_id, &second.event_hash)
        .await
        .unwrap();
    let offer = offer_view(&view);
    assert_eq!(offer.rounds_left, Some(2));
    assert_eq!(
        offer.verdict.as_ref().unwrap().verdict.as_deref(),
        Some("fair")
    );

    // Approved: the buyer accepts, the arbiter agrees the terms.
    engine
        .decide(decide(&second, DecideAction::Approve))
        .await
        .unwrap();
    assert_eq!(gate_state(&agent, &session_id, "agreed").await, "agreed");
    assert_eq!(
        agent
            .request(&session_id, "req-2")
            .await
            .unwrap()
            .status
            .as_str(),
        "approved"
    );
    let kinds = kinds_through(&engine, &first, "session.agree").await;
    assert_eq!(
        kinds.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "session.open",
            "session.ack",
            "session.accept",
            "offer.propose",
            "arbitration.evaluate",
            "offer.counter",
            "arbitration.evaluate",
            "offer.counter",
            "arbitration.evaluate",
            "offer.counter",
            "arbitration.evaluate",
            "offer.accept",
            "session.agree",
        ]
    );
    let state = state_file(data.path(), "oanp-demo.json").unwrap();
    let agree = &state["messages"][12];
    assert_eq!(agree["sender"]["role"], "arbiter");
    assert_eq!(
        agree["payload"]["final_terms"]["price"]["amount_minor"],
        510000
    );
    assert!(!engine
        .inbox()
        .await
        .unwrap()
        .iter()
        .any(|i| i.protocol == "oanp"));
    let accepted = engine
        .sessions(HistoryFilter {
            state: Some(StateFilter::Agreed),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        accepted.iter().any(|r| r.session_id == first.session_id),
        "{accepted:?}"
    );
    // The agreed terms, whole: the merchant's counter our buyer accepted.
    let detail = engine
        .session_detail(&first.host_id, &first.session_id)
        .await
        .unwrap();
    let agreed = detail.agreed.expect("the agreed terms");
    assert!(
        agreed
            .terms
            .iter()
            .any(|t| t.name == "price.amount_minor" && t.value == "510000"),
        "{:?}",
        agreed.terms
    );
    engine.shutdown().await;
    // The demo's agent kept to every decision: nothing to flag.
    engine.refresh().await.unwrap();
    assert!(recorder.breaches.lock().unwrap().is_empty());
    for row in engine.sessions(HistoryFilter::default()).await.unwrap() {
        assert_eq!(row.breaches, 0, "{row:?}");
    }
}

#[tokio::test]
async fn a_declined_sandbox_oanp_counter_closes_the_session_with_the_persons_reason() {
    let data = tempfile::tempdir().unwrap();
    let engine = sandbox_engine(data.path());
    let engine = launch(engine).await;
    let state = oanp_asked(data.path(), 1).await;
    let session_id = state["session_id"].as_str().unwrap().to_owned();
    let agent = demo_agent(&engine, &state).await;
    let first = pending_of(&engine, "oanp", None)
        .await
        .expect("the sandbox's OANP counter reaches the inbox");
    engine
        .decide(DecideRequest {
            reason: Some("Over our monitor budget".into()),
            ..decide(&first, DecideAction::Decline)
        })
        .await
        .unwrap();
    assert_eq!(gate_state(&agent, &session_id, "closed").await, "closed");
    assert_eq!(
        agent
            .request(&session_id, "req-1")
            .await
            .unwrap()
            .status
            .as_str(),
        "denied"
    );
    let kinds = kinds_through(&engine, &first, "session.close").await;
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("session.close"));
    let state = state_file(data.path(), "oanp-demo.json").unwrap();
    let close = &state["messages"][7];
    assert_eq!(close["sender"]["role"], "arbiter");
    assert_eq!(
        close["payload"]["detail"],
        "Fabrikam's approver declined the merchant's offer of round 2: Over our monitor budget"
    );
    // Nothing more is asked: no OANP offer pending, no second request.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    engine.refresh().await.unwrap();
    assert!(!engine
        .inbox()
        .await
        .unwrap()
        .iter()
        .any(|i| i.protocol == "oanp"));
    assert_eq!(
        state_file(data.path(), "oanp-demo.json").unwrap()["requests"],
        1
    );
    let closed = engine
        .sessions(HistoryFilter {
            state: Some(StateFilter::Closed),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        closed.iter().any(|r| r.session_id == first.session_id),
        "{closed:?}"
    );
    engine.shutdown().await;
}
