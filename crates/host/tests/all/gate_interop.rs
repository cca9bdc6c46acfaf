//! Interop with the reference Concordia SDK (`concordia-protocol` 0.10.0,
//! in .venv/ by `bash .ci/setup`): two SDK agents negotiate, and the buying
//! agent (`crates/host/interop/gate_buyer.py`, written from
//! docs/gate-api.md alone) mirrors its transcript to a real host over HTTP
//! and asks before it accepts; a person (the Rust approver client, signing
//! ApprovalReceipts with `crates/approval-receipt`) decides; the agent
//! checks the hint's signature, verifies the receipts with the SDK's own
//! `verify_approval_receipt`, and accepts (AGREED) or, refused, counters.

use std::path::PathBuf;
use std::process::Stdio;

use countersign_client::{ApproverClient, GateDecisionInput};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::common::*;

/// A host that calls the SDK agent's loopback callback: an admin must
/// allow that network (`--allow-callback-network 127.0.0.1/32`).
async fn start_allowing_loopback_callbacks() -> TestHost {
    start_with(countersign_host::HostConfig {
        limits: roomy_limits(),
        callback_networks: vec![
            countersign_host::callback::Network::parse("127.0.0.1/32").unwrap(),
        ],
        // Version 1 refused: the agent written from docs/gate-api.md must
        // sign and enroll with version 2.
        accept_v1_signatures: false,
        ..countersign_host::HostConfig::default()
    })
    .await
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) use countersign_testkit::python::interop_python as python;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Approves,
    Declines,
}

/// Runs the SDK buying agent against `t`, deciding its request as `person`
/// does; answers what the agent reports.
async fn negotiate(t: &TestHost, person: Person) -> Value {
    let ann = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ann",
            "ann@fabrikam.example",
        )
        .await;
    let approver = ApproverClient::new(&t.running.base_url(), ann.key.clone(), &ann.id).unwrap();
    let code = t
        .host()
        .gate_enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Procurement Buyer",
            "concordia",
        )
        .await
        .unwrap()
        .code;
    let mut child = tokio::process::Command::new(python())
        .arg(repo_root().join("crates/host/interop/gate_buyer.py"))
        .args([
            "--host",
            &t.running.base_url(),
            "--code",
            &code,
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
    let sid = waiting["session_id"].as_str().unwrap().to_owned();
    let id = format!("concordia:{sid}");

    // The person's console: the request in the summary, the offer in the log.
    let summary = approver.summary().await.unwrap();
    let session = summary
        .sessions
        .iter()
        .find(|s| s.id == id)
        .expect("the SDK agent's session is in the summary");
    assert_eq!(
        session.counterparty.organization.as_deref(),
        Some("Contoso")
    );
    let pending = session.pending[0].clone();
    assert_eq!(
        pending.request_id.as_deref(),
        waiting["request_id"].as_str()
    );
    assert_eq!(pending.amount.as_deref(), Some("2000.00 USD"));
    let log = approver.gate_log(&id, None).await.unwrap();
    let offer: Value =
        serde_json::from_str(log.messages[(pending.seq - 1) as usize].get()).unwrap();
    assert_eq!(offer["type"], "negotiate.counter");
    assert_eq!(offer["from"]["agent_id"], "agent_seller_01");
    let input = GateDecisionInput {
        session_id: &sid,
        pending: &pending,
        offer_message: &offer,
    };
    let request = match person {
        Person::Approves => approver.approve_gate_request(&input).unwrap(),
        Person::Declines => approver
            .decline_gate_request(&input, "Above our benchmark for this class of sensor.")
            .unwrap(),
    };
    approver.decide_gate(&id, &request).await.unwrap();

    let line = lines.next_line().await.unwrap();
    let status = child.wait().await.unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).await.unwrap();
    assert!(status.success(), "the SDK agent failed: {line:?} {err}");
    let result: Value = serde_json::from_str(&line.unwrap_or_default()).unwrap();

    // The mirrored transcript verifies here too, whole, and is the SDK's.
    let log = approver.gate_log(&id, None).await.unwrap();
    let messages: Vec<Value> = log
        .messages
        .iter()
        .map(|m| serde_json::from_str(m.get()).unwrap())
        .collect();
    let keys = concordia::Keys::from_json(&serde_json::json!(log.keys)).unwrap();
    let (report, replay) = concordia::verify_and_replay(&messages, &keys);
    assert!(report.is_valid(), "{:?}", report.failures);
    let state = replay.unwrap().unwrap().state();
    assert_eq!(
        state,
        if person == Person::Approves {
            concordia::State::Agreed
        } else {
            concordia::State::Active
        }
    );
    result["result"].clone()
}

#[tokio::test]
async fn the_sdk_agent_asks_a_person_approves_and_the_session_is_agreed() {
    let t = start_allowing_loopback_callbacks().await;
    let r = negotiate(&t, Person::Approves).await;
    assert_eq!(r["mirrored_head_is_the_offer"], true, "{r}");
    assert_eq!(r["asked"]["status"], "pending", "{r}");
    assert_eq!(r["asked"]["approvals_required"], 1, "{r}");
    assert_eq!(
        r["hint"]["signed"], true,
        "the hint's signature verifies: {r}"
    );
    assert_eq!(r["hint"]["body"]["status"], "approved", "{r}");
    assert_eq!(r["status"], "approved", "{r}");
    let checks = r["sdk_checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{r}");
    assert_eq!(
        checks[0]["valid"], true,
        "the SDK's verify_approval_receipt accepts it: {r}"
    );
    assert_eq!(checks[0]["decision"], "approve");
    assert_eq!(checks[0]["checks"]["offer_hash"], true);
    assert_eq!(r["proven"], true, "{r}");
    assert_eq!(r["state"], "agreed", "{r}");
    assert_eq!(r["last_type"], "negotiate.accept", "{r}");
    assert_eq!(r["gate"]["state"], "agreed", "{r}");
    assert_eq!(r["mirrored"], true, "{r}");
    t.running.shutdown().await;
}

#[tokio::test]
async fn the_sdk_agent_refused_by_a_person_counters_instead() {
    let t = start_allowing_loopback_callbacks().await;
    let r = negotiate(&t, Person::Declines).await;
    assert_eq!(r["hint"]["signed"], true, "{r}");
    assert_eq!(r["status"], "denied", "{r}");
    let checks = r["sdk_checks"].as_array().unwrap();
    assert_eq!(
        checks[0]["valid"], true,
        "the SDK accepts the deny receipt: {r}"
    );
    assert_eq!(checks[0]["decision"], "deny");
    assert_eq!(r["state"], "active", "{r}");
    assert_eq!(r["last_type"], "negotiate.counter", "{r}");
    assert_eq!(r["gate"]["state"], "active", "{r}");
    assert_eq!(r["mirrored"], true, "{r}");
    t.running.shutdown().await;
}
