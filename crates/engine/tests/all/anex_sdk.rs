//! The A2A reference SDK (`a2a-sdk` 1.3.0, in .venv/ by `bash .ci/setup`)
//! with the engine in the loop: the SDK counterparty
//! (`crates/host/interop/anex_requester.py`, written from
//! docs/anex-binding.md alone) resolves the org's Agent Card on a real host
//! on loopback, activates the ANEX extension, gets a CFP within policy
//! answered at once, then sends one beyond policy and sees the task wait.
//! The ask reaches the console engine's inbox item by item (required marks,
//! the policy's verdicts); a person counters or refuses it through the
//! engine (an ApprovalReceipt over the terms record); the SDK sees our
//! PROPOSE (or REFUSE), accepts, gets exactly the accepted items and is
//! refused one it was not given.

use std::path::PathBuf;
use std::process::Stdio;

use countersign_engine::{DecideAction, DecideRequest, Engine, ProposalDetail};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::anex::{DATA, NO_SHARING, POLICY, RETENTION, SUPPLIER, URI};
use crate::common::*;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

use countersign_testkit::python::interop_python as python;

/// How the person decides, in the console.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Counters,
    Refuses,
}

const REFUSAL: &str = "Bank details only once a contract is signed.";

/// Runs the SDK requester against the world's host; the person decides the
/// ask beyond policy in `engine` as `person` does. Answers every step the
/// requester printed.
async fn negotiate(world: &World, engine: &Engine, person: Person) -> Vec<Value> {
    world
        .host()
        .load_anex_policy(&world.org, POLICY)
        .await
        .unwrap();
    world.host().load_anex_data(&world.org, DATA).await.unwrap();
    let issued = world
        .host()
        .add_anex_counterparty(
            &world.org,
            SUPPLIER,
            "Northwind onboarding",
            Some("supplier"),
        )
        .await
        .unwrap();
    let mut child = tokio::process::Command::new(python())
        .arg(repo_root().join("crates/host/interop/anex_requester.py"))
        .args([
            "--host",
            &world.url,
            "--org",
            &world.org,
            "--token",
            &issued.token,
            "--wait",
            "30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut steps: Vec<Value> = Vec::new();
    let mut decided = false;
    while let Some(line) = lines.next_line().await.unwrap() {
        let step: Value = serde_json::from_str(&line).unwrap();
        let waiting = step["step"] == "waiting";
        steps.push(step.clone());
        if !waiting {
            continue;
        }
        decide_in_the_engine(engine, &step, person).await;
        decided = true;
    }
    let status = child.wait().await.unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).await.unwrap();
    assert!(
        status.success(),
        "the SDK requester failed: {steps:?} {err}"
    );
    assert!(decided, "the SDK never waited for the owner: {steps:?}");
    steps
}

/// The ask the SDK is waiting on, read and decided through the engine.
async fn decide_in_the_engine(engine: &Engine, waiting: &Value, person: Person) {
    assert_eq!(waiting["state"], "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    assert_eq!(waiting["awaiting"], "owner", "{waiting}");
    assert_eq!(waiting["has_status_message"], false, "{waiting}");
    let session = format!("anex:{}", waiting["context_id"].as_str().unwrap());

    engine.refresh().await.unwrap();
    let inbox = engine.inbox().await.unwrap();
    // Only the ask beyond policy waits: the SDK's within-policy CFPs were
    // answered by the policy alone.
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    let item = &inbox[0];
    assert_eq!(item.session_id, session);
    assert_eq!(item.protocol, "anex");
    assert_eq!(item.kind, "CFP");
    assert_eq!(item.counterparty.id, SUPPLIER);
    assert_eq!(item.counterparty.name, "Northwind onboarding");
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    assert!(view.pending);
    let ProposalDetail::AnexAsk(ask) = &view.detail else {
        panic!("not an ANEX ask: {:?}", view.detail)
    };
    assert_eq!(ask.conversation_id, "conv-beyond");
    assert_eq!(ask.message_id, "m1");
    assert_eq!(ask.requester.identity, SUPPLIER);
    assert_eq!(ask.requester.owner, "Northwind Supplies Ltd");
    assert_eq!(ask.purpose, "supplier onboarding");
    assert!(ask.policy_known);
    let items: Vec<(&str, bool, Option<bool>)> = ask
        .items
        .iter()
        .map(|i| (i.item.as_str(), i.required, i.within_policy))
        .collect();
    assert_eq!(
        items,
        vec![
            ("legal_name", true, Some(true)),
            ("tax_id", true, Some(true)),
            ("bank_details", true, Some(false)),
            ("ap_contact", false, Some(true)),
        ]
    );
    assert_eq!(ask.promises_offered, vec![RETENTION.to_owned()]);
    assert_eq!(ask.promises_missing, vec![NO_SHARING.to_owned()]);

    let (action, reason, counter) = match person {
        Person::Counters => (
            DecideAction::Counter,
            None,
            Some(
                json!({"access": ["legal_name", "tax_id", "bank_details"], "promise": [RETENTION, NO_SHARING]}),
            ),
        ),
        Person::Refuses => (DecideAction::Decline, Some(REFUSAL.to_owned()), None),
    };
    let done = engine
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
    assert_eq!(done.outcome, "appended", "{}", done.detail);
}

fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no {name} step in {steps:?}"))
}

#[tokio::test]
async fn the_a2a_sdk_waits_a_person_counters_in_the_engine_and_the_sdk_gets_exactly_the_accepted_data(
) {
    let world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let steps = negotiate(&world, &engine, Person::Counters).await;

    let checks = step(&steps, "checks");
    assert_eq!(checks["extension_uri"], URI, "{checks}");
    assert_eq!(checks["required"], true, "{checks}");
    let within = step(&steps, "within");
    assert_eq!(within["state"], "TASK_STATE_INPUT_REQUIRED", "{within}");
    assert_eq!(within["awaiting"], "counterparty", "{within}");
    assert_eq!(within["answer"]["performative"], "PROPOSE", "{within}");
    assert_eq!(within["accepted_state"], "TASK_STATE_COMPLETED", "{within}");

    let done = step(&steps, "done");
    assert!(done.get("error").is_none(), "{done}");
    assert!(
        done["polls"].as_u64().unwrap() >= 1,
        "the SDK polled: {done}"
    );
    assert_eq!(done["state"], "TASK_STATE_INPUT_REQUIRED", "{done}");
    assert_eq!(done["awaiting"], "counterparty", "{done}");
    assert_eq!(done["answer"]["performative"], "PROPOSE", "{done}");
    assert_eq!(done["answer"]["in_reply_to"], "m1", "{done}");
    assert_eq!(
        done["answer"]["content"]["response"],
        json!({"access": ["legal_name", "tax_id", "bank_details"], "promise": [RETENTION, NO_SHARING]}),
        "the SDK reads the person's counter"
    );
    // The SDK's ACCEPT-PROPOSAL concludes the terms.
    assert_eq!(done["accepted_state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        done["artifact"]["access"],
        json!(["bank_details", "legal_name", "tax_id"])
    );
    // Its data REQUEST gets exactly the accepted items, no more.
    assert_eq!(done["data_state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(done["data"]["performative"], "INFORM", "{done}");
    assert_eq!(
        done["data"]["content"]["data"],
        json!({
            "legal_name": "Fabrikam Industries Inc.",
            "tax_id": "US-12-3456789",
            "bank_details": {"iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX"},
        })
    );
    // The item the person removed is refused, and nothing of it leaves.
    assert_eq!(done["refused_state"], "TASK_STATE_REJECTED", "{done}");
    assert_eq!(done["refused"]["performative"], "REFUSE", "{done}");
    assert_eq!(done["refused"]["content"]["items"], json!(["ap_contact"]));
    assert!(done["refused"]["content"].get("data").is_none(), "{done}");
    assert!(
        !done["refused"].to_string().contains("ap@fabrikam.example"),
        "{done}"
    );

    // The console follows: nothing left to decide, and history holds the
    // accepted terms with the person's receipt over the record the SDK holds.
    engine.refresh().await.unwrap();
    assert!(engine.inbox().await.unwrap().is_empty());
    let session = format!(
        "anex:{}",
        step(&steps, "waiting")["context_id"].as_str().unwrap()
    );
    let rows = engine
        .sessions(countersign_engine::HistoryFilter::default())
        .await
        .unwrap();
    let row = rows
        .iter()
        .find(|r| r.session_id == session)
        .expect("the conversation is in history");
    let detail = engine
        .session_detail(&row.host_id, &row.session_id)
        .await
        .unwrap();
    let kinds: Vec<&str> = detail.timeline.iter().map(|t| t.kind.as_str()).collect();
    // The SDK's two data requests are on the record too: one answered, one refused.
    assert_eq!(
        kinds,
        vec![
            "CFP",
            "PROPOSE",
            "ACCEPT-PROPOSAL",
            "REQUEST",
            "INFORM",
            "REQUEST",
            "REFUSE"
        ],
        "{kinds:?}"
    );
    assert_eq!(
        detail.timeline[2].summary,
        "Accepted terms: legal_name, tax_id, bank_details; promises: no retention beyond 90 days; no sharing with third parties"
    );
    assert_eq!(detail.decisions.len(), 1);
    let receipt = detail.decisions[0].receipt.as_ref().expect("the receipt");
    assert_eq!(receipt["scope"]["decision"], "approve", "{receipt}");
    assert_eq!(receipt["scope"]["terms"], done["artifact"], "{receipt}");
}

#[tokio::test]
async fn the_a2a_sdk_reads_the_refusal_a_person_made_in_the_engine() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let steps = negotiate(&world, &engine, Person::Refuses).await;
    let done = step(&steps, "done");
    assert_eq!(done["state"], "TASK_STATE_REJECTED", "{done}");
    assert_eq!(done["awaiting"], "none", "{done}");
    assert_eq!(done["answer"]["performative"], "REFUSE", "{done}");
    assert_eq!(done["answer"]["in_reply_to"], "m1", "{done}");
    assert_eq!(done["answer"]["content"]["response"], REFUSAL, "{done}");
    assert!(
        done.get("accepted_state").is_none() && done.get("data").is_none(),
        "nothing was accepted or shared after a refusal: {done}"
    );
    engine.refresh().await.unwrap();
    assert!(engine.inbox().await.unwrap().is_empty());
    let session = format!(
        "anex:{}",
        step(&steps, "waiting")["context_id"].as_str().unwrap()
    );
    let rows = engine
        .sessions(countersign_engine::HistoryFilter::default())
        .await
        .unwrap();
    let row = rows.iter().find(|r| r.session_id == session).unwrap();
    let detail = engine
        .session_detail(&row.host_id, &row.session_id)
        .await
        .unwrap();
    let kinds: Vec<&str> = detail.timeline.iter().map(|t| t.kind.as_str()).collect();
    assert_eq!(kinds, vec!["CFP", "REFUSE"], "{kinds:?}");
    let receipt = detail.decisions[0].receipt.as_ref().expect("the receipt");
    assert_eq!(receipt["scope"]["decision"], "deny", "{receipt}");
}
