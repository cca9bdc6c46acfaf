//! The reference Concordia SDK (`concordia-protocol` 0.10.0, in .venv/ by
//! `bash .ci/setup`) with the engine in the loop: the SDK buying agent
//! (`crates/host/interop/gate_buyer.py`, written from docs/gate-api.md
//! alone) negotiates with an SDK seller, mirrors its transcript to a real
//! host's gate and asks before it accepts; a person decides in the console
//! engine (polling the approver API, signing an ApprovalReceipt); the agent
//! verifies the receipt with the SDK's own `verify_approval_receipt`, then
//! accepts (AGREED) or, refused, counters.

use std::path::PathBuf;
use std::process::Stdio;

use countersign_engine::{
    DecideAction, DecideRequest, Engine, ProposalDetail, ProposalDiff, Term, Verification,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::common::*;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

use countersign_testkit::python::interop_python as python;

/// How the person decides, in the console.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Approves,
    Declines,
    Counters,
}

/// Runs the SDK buying agent against the world's host; the person decides
/// its request in `engine` as `person` does. Answers what the agent reports.
async fn negotiate(world: &World, engine: &Engine, person: Person) -> Value {
    negotiate_with(world, engine, person, &[]).await
}

/// [`negotiate`], with more arguments for the agent (`--accept-anyway`).
async fn negotiate_with(
    world: &World,
    engine: &Engine,
    person: Person,
    agent_args: &[&str],
) -> Value {
    let code = world
        .host()
        .gate_enroll_code(&world.org, "Procurement Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let mut child = tokio::process::Command::new(python())
        .arg(repo_root().join("crates/host/interop/gate_buyer.py"))
        .args(["--host", &world.url, "--code", &code, "--wait", "30"])
        .args(agent_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = match lines.next_line().await.unwrap() {
        Some(line) => serde_json::from_str(&line).unwrap(),
        None => {
            let mut err = String::new();
            stderr.read_to_string(&mut err).await.unwrap();
            panic!("the SDK agent printed nothing: {err}");
        }
    };
    let waiting = &first["waiting"];
    assert!(
        waiting.is_object(),
        "the agent asked before accepting: {first}"
    );
    let id = format!("concordia:{}", waiting["session_id"].as_str().unwrap());

    // The console polls, and the SDK's request is in the inbox.
    engine.refresh().await.unwrap();
    let item = engine
        .inbox()
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.session_id == id)
        .expect("the SDK agent's request is in the inbox");
    assert_eq!(item.protocol, "concordia");
    assert_eq!(item.kind, "negotiate.counter");
    assert_eq!(item.actor, "agent_seller_01");
    assert_eq!(item.counterparty.name, "Contoso Sales Agent");
    assert_eq!(item.counterparty.organization.as_deref(), Some("Contoso"));
    assert_eq!(item.verification, Verification::Verified);
    let amount = item.amount.clone().unwrap();
    assert_eq!(
        (amount.value.as_str(), amount.currency.as_str()),
        ("2000.00", "USD")
    );
    // It answers the buyer's 1,900.
    assert_eq!(
        item.previous_amount.as_ref().map(|a| a.value.as_str()),
        Some("1900")
    );
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    let ProposalDetail::ConcordiaOffer(offer) = &view.detail else {
        panic!("not a Concordia offer: {:?}", view.detail)
    };
    assert_eq!(
        offer.request.as_ref().map(|r| r.request_id.as_str()),
        waiting["request_id"].as_str()
    );
    assert_eq!(
        offer.reasoning.as_deref(),
        Some("We can meet you part way.")
    );
    let diff = offer
        .diff
        .as_ref()
        .expect("the diff against the buyer's counter");
    assert_eq!(diff.terms.len(), 1, "{diff:?}");
    assert_eq!(diff.terms[0].term, "price");

    let (action, reason, counter) = match person {
        Person::Approves => (DecideAction::Approve, None, None),
        Person::Declines => (
            DecideAction::Decline,
            Some("Above our benchmark for this class of sensor.".to_owned()),
            None,
        ),
        Person::Counters => (
            DecideAction::Counter,
            Some("Meet us at 1,950.".to_owned()),
            Some(json!({"price": {"value": 1950, "currency": "USD"}})),
        ),
    };
    let result = engine
        .decide(DecideRequest {
            host_id: item.host_id.clone(),
            session_id: item.session_id.clone(),
            in_response_to: item.event_hash.clone(),
            action,
            reason,
            counter,
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);

    let line = lines.next_line().await.unwrap();
    let status = child.wait().await.unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).await.unwrap();
    assert!(status.success(), "the SDK agent failed: {line:?} {err}");
    let result: Value = serde_json::from_str(&line.unwrap_or_default()).unwrap();

    // The console follows the agent's next message and still verifies it all.
    engine.refresh().await.unwrap();
    if person == Person::Counters {
        // What was offered instead, beside the SDK seller's offer it answered.
        let decided = engine
            .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
            .await
            .unwrap()
            .decision
            .expect("the counter");
        let Some(ProposalDiff::ConcordiaOffer(countered)) = decided.countered else {
            panic!("the counter's terms: {:?}", decided.countered);
        };
        let price = countered
            .terms
            .iter()
            .find(|t| t.term == "price")
            .expect("the price moved");
        let value = |t: &Option<Term>| t.as_ref().map(|t| t.value.clone());
        assert_eq!(value(&price.old), value(&diff.terms[0].new), "their offer");
        assert_eq!(value(&price.new).as_deref(), Some("1950"), "the counter");
    }
    let detail = engine
        .session_detail(&item.host_id, &item.session_id)
        .await
        .unwrap();
    assert_eq!(detail.row.verification, Verification::Verified);
    assert_eq!(
        detail.timeline.last().map(|e| e.kind.as_str()),
        result["result"]["last_type"].as_str()
    );
    // Each message stored here byte for byte as the SDK wrote it and the
    // host keeps it (not re-serialized: the SDK's key order and numbers).
    let host_copy = world
        .gate_message_bodies(waiting["session_id"].as_str().unwrap())
        .await;
    let db = rusqlite::Connection::open(engine.data_dir().join(countersign_engine::DATABASE_FILE))
        .unwrap();
    let mut stmt = db
        .prepare("SELECT body FROM events WHERE session_id = ?1 ORDER BY seq")
        .unwrap();
    let ours: Vec<String> = stmt
        .query_map([&id], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ours.len(), host_copy.len());
    assert_eq!(ours, host_copy);
    // The SDK's own text, not a re-serialization: it writes `concordia`
    // first (a sorted writer starts with `body`) and `2200.0` (JCS writes
    // `2200`). Checked on the text itself, so it holds whatever member order
    // serde_json keeps in this build.
    assert!(ours[0].starts_with("{\"concordia\""), "{}", ours[0]);
    assert!(!jcs::is_canonical(&ours[0]), "{}", ours[0]);
    let mut result = result["result"].clone();
    // What the agent asked about, for the test.
    result["waiting"] = first["waiting"].clone();
    result
}

#[tokio::test]
async fn the_sdk_agent_asks_a_person_approves_in_the_engine_and_the_session_is_agreed() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&engine);
    let r = negotiate(&world, &engine, Person::Approves).await;
    assert_eq!(r["mirrored_head_is_the_offer"], true, "{r}");
    assert_eq!(r["asked"]["status"], "pending", "{r}");
    assert_eq!(
        r["hint"]["signed"], true,
        "the hint's signature verifies: {r}"
    );
    assert_eq!(r["status"], "approved", "{r}");
    let checks = r["sdk_checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{r}");
    assert_eq!(
        checks[0]["valid"], true,
        "the SDK's verify_approval_receipt accepts the engine's receipt: {r}"
    );
    assert_eq!(checks[0]["decision"], "approve");
    assert_eq!(checks[0]["checks"]["offer_hash"], true);
    assert_eq!(r["proven"], true, "{r}");
    assert_eq!(r["state"], "agreed", "{r}");
    assert_eq!(r["last_type"], "negotiate.accept", "{r}");
    assert_eq!(r["gate"]["state"], "agreed", "{r}");
    assert_eq!(r["mirrored"], true, "{r}");
    // The console's history says so too.
    let rows = engine
        .sessions(countersign_engine::HistoryFilter::default())
        .await
        .unwrap();
    assert_eq!(rows[0].status, "agreed");
    // The SDK's accept answers the very message it asked about and was
    // approved: no breach is read from its envelopes.
    engine.refresh().await.unwrap();
    assert!(recorder.breaches.lock().unwrap().is_empty());
    let rows = engine
        .sessions(countersign_engine::HistoryFilter::default())
        .await
        .unwrap();
    assert_eq!(rows[0].breaches, 0, "{:?}", rows[0]);
}

#[tokio::test]
async fn the_sdk_agent_declined_in_the_engine_counters_instead() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let r = negotiate(&world, &engine, Person::Declines).await;
    assert_eq!(r["status"], "denied", "{r}");
    let checks = r["sdk_checks"].as_array().unwrap();
    assert_eq!(
        checks[0]["valid"], true,
        "the SDK accepts the engine's deny receipt: {r}"
    );
    assert_eq!(checks[0]["decision"], "deny");
    assert_eq!(r["proven"], true, "{r}");
    assert_eq!(r["state"], "active", "{r}");
    assert_eq!(r["last_type"], "negotiate.counter", "{r}");
    assert_eq!(r["gate"]["state"], "active", "{r}");
}

#[tokio::test]
async fn the_sdk_agent_sends_the_counter_terms_a_person_wrote_in_the_engine() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let r = negotiate(&world, &engine, Person::Counters).await;
    assert_eq!(r["status"], "countered", "{r}");
    let checks = r["sdk_checks"].as_array().unwrap();
    assert_eq!(checks[0]["valid"], true, "{r}");
    assert_eq!(checks[0]["decision"], "deny");
    assert_eq!(r["last_type"], "negotiate.counter", "{r}");
    assert_eq!(
        r["last_body"]["terms"]["price"]["value"]
            .as_f64()
            .map(|v| v as i64),
        Some(1950),
        "the agent countered with the person's terms: {r}"
    );
}

/// The SDK agent asks, the person declines, and it accepts anyway: the
/// console reads the breach from the SDK's own envelopes, tells the person
/// once with the offer view's words, and marks the session in history.
#[tokio::test]
async fn an_sdk_agent_accepting_what_a_person_declined_is_reported() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&engine);
    let r = negotiate_with(&world, &engine, Person::Declines, &["--accept-anyway"]).await;
    assert_eq!(r["status"], "denied", "{r}");
    assert_eq!(
        r["last_type"], "negotiate.accept",
        "it accepted anyway: {r}"
    );
    assert_eq!(r["state"], "agreed", "{r}");
    assert_eq!(r["mirrored"], true, "{r}");

    let id = format!(
        "concordia:{}",
        r["waiting"]["session_id"].as_str().unwrap_or_default()
    );
    assert_eq!(breaches_in_history(&engine, &id).await, 1);
    let notices = recorder.breaches.lock().unwrap().clone();
    assert_eq!(notices.len(), 1, "told once: {notices:?}");
    assert_eq!(notices[0].session_id, id);
    assert_eq!(
        notices[0].title,
        "Your agent accepted an offer from Contoso without your approval"
    );
    let view = engine
        .proposal_view(&notices[0].host_id, &id, &notices[0].event_hash)
        .await
        .unwrap();
    let decision = view.decision.expect("decided");
    assert_eq!(decision.action.as_deref(), Some("decline"));
    let breach = decision.breach.expect("the accept against the decline");
    assert_eq!(notices[0].body, breach);
    assert!(
        breach.contains("although the decision recorded for this request was a decline"),
        "{breach}"
    );
    engine.refresh().await.unwrap();
    assert_eq!(recorder.breaches.lock().unwrap().len(), 1, "told once");
}
