//! The sandbox's Concordia demo, on a real engine with its embedded host:
//! the org's buying agent enrolled at the gate, the scripted seller's offer
//! mirrored and asked about, the person's decisions acted on. The host side
//! is read as the demo's own agent reads it (its key from the demo's state
//! file, over signed HTTP); the console side through the engine.

use std::time::Duration;

use countersign_client::GateClient;
use countersign_engine::*;
use serde_json::Value;

use crate::launch::{launch, sandbox_engine};

/// A delivery date two months from today (`YYYY-MM-DD`): a date a counter
/// may still commit to, whenever the test runs.
fn later_day() -> String {
    let day = (time::OffsetDateTime::now_utc() + time::Duration::days(60)).date();
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

/// The Concordia demo's state file, as it keeps it.
fn demo_state(data: &std::path::Path) -> Option<Value> {
    state_file(data, "concordia-demo.json")
}

/// A sandbox demo's state file `name`, as the demo keeps it.
pub fn state_file(data: &std::path::Path, name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(data.join("sandbox").join(name)).ok()?;
    serde_json::from_str(&text).ok()
}

/// A demo's own agent (its key and id from its state file), as a gate
/// client of the sandbox host.
pub async fn demo_agent(engine: &Engine, state: &Value) -> GateClient {
    let url = engine.hosts().await.unwrap()[0].url.clone();
    let seed = jcs::b64url::decode(state["buyer_key"].as_str().unwrap()).unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&seed.try_into().unwrap());
    GateClient::new(&url, key, state["agent_id"].as_str().unwrap()).unwrap()
}

/// Waits (bounded) until the inbox holds a `protocol` proposal other than
/// `not`.
pub async fn pending_of(engine: &Engine, protocol: &str, not: Option<&str>) -> Option<InboxItem> {
    for _ in 0..80 {
        engine.refresh().await.unwrap();
        let found = engine
            .inbox()
            .await
            .unwrap()
            .into_iter()
            .find(|i| i.protocol == protocol && Some(i.event_hash.as_str()) != not);
        if found.is_some() {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    None
}

/// Waits (bounded) until the demo keeping state file `name` has made
/// `requests` requests; its state.
pub async fn asked(data: &std::path::Path, name: &str, requests: u32) -> Value {
    for _ in 0..80 {
        if let Some(state) = state_file(data, name).filter(|s| s["requests"] == requests) {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the demo keeping {name} did not make request {requests}");
}

/// The price of the awaited offer, as the inbox shows it.
fn amount(item: &InboxItem) -> rust_decimal::Decimal {
    item.amount.as_ref().unwrap().value.parse().unwrap()
}

#[tokio::test]
async fn the_sandbox_asks_for_a_concordia_decision_and_acts_on_each_answer() {
    let data = tempfile::tempdir().unwrap();
    let engine = sandbox_engine(data.path());
    let recorder = std::sync::Arc::new(crate::common::Recorder::default());
    engine.set_notifier(recorder.clone());
    let engine = launch(engine).await;

    // The host side: the demo's buying agent enrolled at the gate, its
    // session mirrored (its open and offer, the seller's accept_session and
    // counter-offer) and a decision asked for.
    let state = asked(data.path(), "concordia-demo.json", 1).await;
    let session_id = state["session_id"].as_str().unwrap().to_owned();
    let agent = demo_agent(&engine, &state).await;
    let view = agent.session(&session_id).await.unwrap();
    assert_eq!(
        (view.protocol.as_str(), view.state.as_str()),
        ("concordia", "active")
    );
    assert_eq!(view.head.count, 4);
    let asked = agent.request(&session_id, "req-1").await.unwrap();
    assert_eq!(asked.status.as_str(), "pending");
    assert_eq!(asked.amount, "48000 USD");

    // The console side: the offer in the inbox, beside the ANP ones.
    let first = pending_of(&engine, "concordia", None)
        .await
        .expect("the sandbox's Concordia offer reaches the inbox");
    assert_eq!(first.kind, "negotiate.counter");
    // It answers the agent's own opening offer: the terms diff at once.
    assert_eq!(first.previous_amount.as_ref().unwrap().value, "40000");
    assert_eq!(
        first.counterparty.organization.as_deref(),
        Some("Contoso Industrial")
    );
    assert_eq!(amount(&first), "48000".parse().unwrap());
    let inbox = engine.inbox().await.unwrap();
    assert!(inbox.iter().any(|i| i.protocol == "ANP/0.1"), "{inbox:?}");
    let key = |item: &InboxItem| (item.host_id.clone(), item.session_id.clone());
    // History files an active Concordia session under "open".
    let open = engine
        .sessions(HistoryFilter {
            state: Some(StateFilter::Open),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        open.iter().any(|r| r.session_id == first.session_id),
        "{open:?}"
    );

    // Declined: the seller answers with a lower offer, asked about again.
    engine
        .decide(DecideRequest {
            host_id: first.host_id.clone(),
            session_id: first.session_id.clone(),
            in_response_to: first.event_hash.clone(),
            action: DecideAction::Decline,
            reason: Some("Too high for this quarter".into()),
            counter: None,
        })
        .await
        .unwrap();
    let second = pending_of(&engine, "concordia", Some(&first.event_hash))
        .await
        .expect("the seller answered the decline with a new offer");
    assert_eq!(key(&second), key(&first));
    assert_eq!(amount(&second), "45000".parse().unwrap());
    // Compared with the seller's own previous offer; the agent's offer (the
    // agent's signal is no offer) stands apart as the gap.
    assert_eq!(second.previous_amount.as_ref().unwrap().value, "48000");
    assert_eq!(second.gap.as_ref().unwrap().ours.value, "40000");
    assert_eq!(
        agent
            .request(&session_id, "req-1")
            .await
            .unwrap()
            .status
            .as_str(),
        "denied"
    );
    // The person's reason reached the seller in the agent's signal.
    let state = demo_state(data.path()).unwrap();
    let signal = &state["messages"][4];
    assert_eq!(signal["type"], "negotiate.signal");
    assert_eq!(
        signal["reasoning"],
        "Our approver declined this offer: Too high for this quarter"
    );

    // Countered below the seller's floor: the seller meets halfway.
    engine
        .decide(DecideRequest {
            host_id: second.host_id.clone(),
            session_id: second.session_id.clone(),
            in_response_to: second.event_hash.clone(),
            action: DecideAction::Counter,
            reason: Some("Our budget is 40,000".into()),
            counter: Some(serde_json::json!({
                "item": {"value": "Industrial vibration sensors, model VX-200"},
                "quantity": {"value": 2000, "unit": "units"},
                "price": {"value": 40000, "currency": "USD"},
                "delivery": {"value": later_day(), "type": "date"},
                "payment_terms": {"value": "Net 45"},
                "warranty_months": {"value": 36},
            })),
        })
        .await
        .unwrap();
    let third = pending_of(&engine, "concordia", Some(&second.event_hash))
        .await
        .expect("the seller answered the counter");
    assert_eq!(third.kind, "negotiate.counter");
    assert_eq!(amount(&third), "42500".parse().unwrap());
    let status = agent.request(&session_id, "req-2").await.unwrap();
    assert_eq!(status.status.as_str(), "countered");

    // Approved: the agent accepts, and the session is agreed on the gate.
    engine
        .decide(DecideRequest {
            host_id: third.host_id.clone(),
            session_id: third.session_id.clone(),
            in_response_to: third.event_hash.clone(),
            action: DecideAction::Approve,
            reason: None,
            counter: None,
        })
        .await
        .unwrap();
    let mut agreed = String::new();
    for _ in 0..80 {
        agreed = agent.session(&session_id).await.unwrap().state;
        if agreed == "agreed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(agreed, "agreed");
    assert_eq!(
        agent
            .request(&session_id, "req-3")
            .await
            .unwrap()
            .status
            .as_str(),
        "approved"
    );
    // The console reads the agreement from the mirrored transcript.
    let mut kinds = Vec::new();
    for _ in 0..40 {
        engine.refresh().await.unwrap();
        let detail = engine
            .session_detail(&first.host_id, &first.session_id)
            .await
            .unwrap();
        kinds = detail
            .timeline
            .iter()
            .map(|e| e.kind.clone())
            .collect::<Vec<_>>();
        if kinds.last().map(String::as_str) == Some("negotiate.accept") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        kinds,
        [
            "negotiate.open",
            "negotiate.accept_session",
            "negotiate.offer",
            "negotiate.counter",
            "negotiate.signal",
            "negotiate.offer",
            "negotiate.counter",
            "negotiate.counter",
            "negotiate.accept",
        ]
    );
    assert!(!engine
        .inbox()
        .await
        .unwrap()
        .iter()
        .any(|i| i.protocol == "concordia"));

    // The export: the transcript with its keys and this console's receipts,
    // which countersign-verify checks as it is (links, signatures, the state
    // machine, each receipt against the message it approves).
    let exported = engine
        .export_session(&first.host_id, &first.session_id, ExportFormat::Json)
        .await
        .unwrap();
    let bytes = std::fs::read(&exported.path).unwrap();
    let options = countersign_verify::Options {
        now: time::OffsetDateTime::now_utc(),
        offer: None,
        pin: None,
    };
    let verdict = |bytes: &[u8]| {
        countersign_verify::verify_input(
            "export.json",
            &countersign_verify::Input::new(bytes),
            &options,
        )
    };
    let outcome = verdict(&bytes);
    assert_eq!(outcome.status, "verified", "{:?}", outcome.failures);
    assert_eq!(outcome.kind, "Concordia transcript");
    assert!(
        outcome.summary.contains("9 messages checked"),
        "{}",
        outcome.summary
    );
    assert!(
        outcome.summary.contains("state agreed"),
        "{}",
        outcome.summary
    );
    assert!(
        outcome.summary.contains("3 receipts checked"),
        "{}",
        outcome.summary
    );
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    let decisions: Vec<&str> = doc["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scope"]["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["deny", "deny", "approve"]);
    assert_eq!(doc["keys"].as_object().unwrap().len(), 2);
    // A receipt edited after the fact fails, naming it and the check.
    let mut forged = doc.clone();
    forged["receipts"][2]["scope"]["amount"] = serde_json::json!("1.00 USD");
    let outcome = verdict(&serde_json::to_vec(&forged).unwrap());
    assert_eq!(outcome.status, "failed");
    assert!(
        outcome
            .failures
            .iter()
            .any(|f| f.at.starts_with("receipt 2") && f.check == "signature"),
        "{:?}",
        outcome.failures
    );
    // A receipt for a message the transcript does not hold.
    let mut stray = doc.clone();
    stray["receipts"][0]["scope"]["offer_hash"] =
        serde_json::json!(format!("sha256:{}", "0".repeat(64)));
    let outcome = verdict(&serde_json::to_vec(&stray).unwrap());
    assert!(
        outcome
            .failures
            .iter()
            .any(|f| f.at.starts_with("receipt 0") && f.check == "offer_hash"),
        "{:?}",
        outcome.failures
    );

    // The CSV: every offer and counter, both sides, with its price (beside
    // each of its terms).
    let csv = engine
        .export_session(&first.host_id, &first.session_id, ExportFormat::Csv)
        .await
        .unwrap();
    let csv = std::fs::read_to_string(&csv.path).unwrap();
    let mut prices: Vec<(String, String)> = crate::common::csv_rows(&csv)
        .into_iter()
        .skip(1)
        .filter(|r| r[0] == "entry" && !r[8].is_empty())
        .map(|r| (r[1].clone(), r[8].clone()))
        .collect();
    prices.dedup();
    let prices: Vec<&str> = prices.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        prices,
        ["40000", "48000", "45000", "40000", "42500"],
        "{csv}"
    );
    // The session's chart: each side's prices by round.
    let detail = engine
        .session_detail(&first.host_id, &first.session_id)
        .await
        .unwrap();
    let totals =
        |points: &[SeriesPoint]| points.iter().map(|p| p.total.clone()).collect::<Vec<_>>();
    assert_eq!(
        totals(&detail.series.counterparty),
        ["48000", "45000", "42500"]
    );
    assert_eq!(totals(&detail.series.ours), ["40000", "40000"]);
    engine.shutdown().await;
    // The demo's agent kept to every decision: nothing to flag.
    engine.refresh().await.unwrap();
    assert!(recorder.breaches.lock().unwrap().is_empty());
    for row in engine.sessions(HistoryFilter::default()).await.unwrap() {
        assert_eq!(row.breaches, 0, "{row:?}");
    }
}
