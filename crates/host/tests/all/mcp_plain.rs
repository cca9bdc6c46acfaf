//! Plain terms over MCP (docs/mcp.md, docs/gate-api.md "Plain terms"): an
//! agent on the official Python MCP SDK that speaks no negotiation
//! protocol (`crates/host/interop/mcp_plain_agent.py`) asks about terms,
//! revises them, waits past a bound, and gets the person's decision
//! (approve, decline with a reason, counter) as a Concordia ApprovalReceipt
//! over the host's signed entry of the terms, which it checks with the
//! host's tool and with the reference Concordia SDK; it then reports what
//! it did, and a report that breaks the decision is answered as a breach.

use std::process::Stdio;

use approval_receipt::receipt::{build_receipt_referencing, sign_receipt, Decision, ReceiptDraft};
use countersign_client::ApproverClient;
use serde_json::{json, Value};
use time::OffsetDateTime;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::*;
use crate::gate_interop::python;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Approves,
    Declines,
    Counters,
}

use crate::mcp::next_json;

/// Runs the plain-terms agent against `t`, the person deciding as
/// `person`; answers the agent's report and the thread's log as the
/// person's console reads it.
async fn ask_plain(t: &TestHost, person: Person, then: &str) -> (Value, Vec<Value>) {
    let ann = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ann",
            "ann@fabrikam.example",
        )
        .await;
    let approver = ApproverClient::new(&t.running.base_url(), ann.key.clone(), &ann.id).unwrap();
    let agent = t
        .host()
        .mcp_agent(countersign_host::SANDBOX_HANDLE, "Purchasing assistant")
        .await
        .unwrap();
    let mut child = tokio::process::Command::new(python())
        .arg(
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop/mcp_plain_agent.py"),
        )
        .args(["--host", &t.running.base_url(), "--then", then])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stderr = child.stderr.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{}\n", agent.credential.token).as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let waiting = next_json(&mut lines, &mut stderr).await;
    let sid = waiting["waiting"]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{waiting}"))
        .to_owned();
    assert_eq!(sid, "po-1", "a thread is named by its first request");
    let id = format!("plain:{sid}");

    let summary = approver.summary().await.unwrap();
    let session = summary
        .sessions
        .iter()
        .find(|s| s.id == id)
        .expect("the thread in the summary");
    assert_eq!(session.protocol, "plain");
    assert_eq!(session.pending.len(), 1, "only the revision waits");
    let pending = session.pending[0].clone();
    assert_eq!(pending.request_id.as_deref(), Some("po-2"));
    assert_eq!(pending.amount.as_deref(), Some("2550.00 USD"));
    let log = approver.gate_log(&id, None).await.unwrap();
    let offer: Value =
        serde_json::from_str(log.messages[(pending.seq - 1) as usize].get()).unwrap();
    assert_eq!(offer["type"], "plain.terms");
    assert_eq!(offer["revises"], "po-1");

    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: OffsetDateTime::now_utc(),
        expires_at: OffsetDateTime::now_utc() + time::Duration::minutes(30),
        decision: if person == Person::Approves {
            Decision::Approve
        } else {
            Decision::Deny
        },
        offer_message: offer.clone(),
        amount: "2550.00 USD".parse().unwrap(),
        threshold_crossed: pending.threshold.clone().unwrap().parse().unwrap(),
        session_id: sid.clone(),
        role: None,
        on_behalf_of: None,
    };
    let receipt = sign_receipt(
        build_receipt_referencing(
            &draft,
            &ann.key.verifying_key(),
            &format!("urn:countersign:plain:{sid}"),
        )
        .unwrap(),
        &ann.key,
    )
    .unwrap();
    let mut counter = offer["terms"].clone();
    counter["line_items"][0]["unit_price"] = json!("1.10");
    counter["total"] = json!("2350.00");
    let decision = match person {
        Person::Approves => json!({"action": "approve"}),
        Person::Declines => {
            json!({"action": "decline", "reason": "Contoso is on hold with finance."})
        }
        Person::Counters => {
            json!({"action": "counter", "reason": "Last year we paid 1.10.", "counter_terms": counter})
        }
    };
    let mut request = json!({
        "decision_id": uuid::Uuid::new_v4().to_string(),
        "in_response_to": "po-2",
        "receipt": receipt,
    });
    for (k, v) in decision.as_object().unwrap() {
        request[k] = v.clone();
    }
    let request: countersign_host_api::approver::GateDecisionRequest =
        serde_json::from_value(request).unwrap();
    let answer = approver.decide_gate(&id, &request).await.unwrap();
    assert_eq!(
        answer.outcome,
        countersign_host_api::approver::DecisionOutcome::Appended,
        "{}",
        answer.detail
    );

    let result = next_json(&mut lines, &mut stderr).await;
    assert!(child.wait().await.unwrap().success(), "{result}");
    let log = approver.gate_log(&id, None).await.unwrap();
    let entries: Vec<Value> = log
        .messages
        .iter()
        .map(|m| serde_json::from_str(m.get()).unwrap())
        .collect();
    // The thread verifies here as the console will: the host's key signed
    // every entry, each chained to the one before.
    let key = approval_receipt::keys::parse_public_key(t.host().platform_public_key()).unwrap();
    plain::verify(&plain::Thread::empty(), &sid, &entries, &key).expect("the thread verifies");
    (result["result"].clone(), entries)
}

fn common(r: &Value) {
    assert_eq!(
        r["tools"],
        json!([
            "ask_about_terms",
            "check_receipt",
            "get_decision",
            "report_outcome",
            "request_decision",
            "wait_for_decision"
        ]),
        "no tool approves: {r}"
    );
    assert_eq!(r["first"]["status"], "pending", "{r}");
    assert_eq!(
        r["first"]["amount"], "2650.00 USD",
        "the host's exact total: {r}"
    );
    assert_eq!(r["revised"]["amount"], "2550.00 USD", "{r}");
    assert_eq!(
        r["first_after"]["status"], "superseded",
        "the revision supersedes: {r}"
    );
    assert_eq!(r["after_bound"]["status"], "pending", "{r}");
    assert_eq!(
        r["revised"]["offer"]["rationale"], "Contoso came down to 1.20 a unit.",
        "the rationale is kept as the agent's words: {r}"
    );
}

#[tokio::test]
async fn plain_terms_approved_are_executed_and_the_receipt_verifies_with_the_concordia_sdk() {
    let t = start(roomy_limits()).await;
    let (r, entries) = ask_plain(&t, Person::Approves, "honest").await;
    common(&r);
    assert_eq!(r["status"], "approved", "{r}");
    assert_eq!(r["host_checks"][0]["valid"], true, "{r}");
    assert_eq!(r["host_checks"][0]["recorded_by_host"], true, "{r}");
    assert_eq!(
        r["sdk_checks"][0]["valid"], true,
        "the Concordia SDK's verify: {r}"
    );
    assert_eq!(r["sdk_checks"][0]["checks"]["offer_hash"], true, "{r}");
    assert_eq!(r["report"]["breach"], Value::Null, "{r}");
    assert_eq!(r["report"]["status"], "approved", "{r}");
    assert_eq!(
        r["report_again"]["status"], "approved",
        "the same report again is answered again: {r}"
    );
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[2]["type"], "plain.outcome");
    assert_eq!(entries[2]["outcome"], "executed");
}

#[tokio::test]
async fn plain_terms_executed_otherwise_than_approved_are_a_breach() {
    let t = start(roomy_limits()).await;
    let (r, entries) = ask_plain(&t, Person::Approves, "cheat").await;
    common(&r);
    assert_eq!(r["status"], "approved", "{r}");
    assert_eq!(
        r["report"]["breach"], "The agent executed terms other than the ones a person approved.",
        "{r}"
    );
    assert_eq!(
        entries[2]["terms"]["line_items"][0]["quantity"], "2500",
        "the report is kept as evidence"
    );
    assert_eq!(
        r["report_again"]["breach"], r["report"]["breach"],
        "a repeat says so again: {r}"
    );
    assert_eq!(entries.len(), 3, "and writes nothing");
}

#[tokio::test]
async fn plain_terms_declined_with_a_reason_are_abandoned() {
    let t = start(roomy_limits()).await;
    let (r, entries) = ask_plain(&t, Person::Declines, "honest").await;
    common(&r);
    assert_eq!(r["status"], "denied", "{r}");
    assert_eq!(
        r["decision"]["reason"], "Contoso is on hold with finance.",
        "{r}"
    );
    assert_eq!(r["sdk_checks"][0]["valid"], true, "{r}");
    assert_eq!(r["host_checks"][0]["decision"], "deny", "{r}");
    assert_eq!(r["report"]["breach"], Value::Null, "{r}");
    assert_eq!(entries[2]["outcome"], "abandoned");
}

#[tokio::test]
async fn plain_terms_countered_carry_the_persons_terms() {
    let t = start(roomy_limits()).await;
    let (r, _) = ask_plain(&t, Person::Counters, "honest").await;
    common(&r);
    assert_eq!(r["status"], "countered", "{r}");
    assert_eq!(
        r["decision"]["counter_terms"]["line_items"][0]["unit_price"], "1.10",
        "{r}"
    );
    assert_eq!(r["sdk_checks"][0]["valid"], true, "{r}");
}

fn good_terms() -> Value {
    json!({
        "counterparty": {"name": "Contoso Ltd", "id": "contoso.example"},
        "currency": "USD",
        "line_items": [{"description": "Industrial sensor", "sku": "SEN-200", "quantity": "2000", "unit_price": "1.25"}],
        "conditions": ["Net 30"],
    })
}

#[tokio::test]
async fn malformed_plain_terms_over_mcp_name_their_field_and_store_nothing() {
    let t = start(roomy_limits()).await;
    let agent = t
        .host()
        .mcp_agent(countersign_host::SANDBOX_HANDLE, "Purchasing assistant")
        .await
        .unwrap();
    let token = agent.credential.token;
    let ask = |terms: Value| json!({"request_id": "po-1", "terms": terms, "expires_at": "2099-01-01T00:00:00Z"});
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = good_terms();
        f(&mut v);
        ask(v)
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            with(&|v| v["line_items"][0]["unit_price"] = json!(1.25)),
            "line_items[0].unit_price",
        ),
        (
            with(&|v| v["line_items"][0]["quantity"] = json!("-5")),
            "line_items[0].quantity",
        ),
        (with(&|v| v["line_items"] = json!([])), "line_items"),
        (with(&|v| v["currency"] = json!("usd")), "currency"),
        (
            with(&|v| v["counterparty"]["name"] = json!("a\u{0}b")),
            "counterparty.name",
        ),
        (
            with(&|v| v["conditions"] = json!(["\u{202e}gnp.exe", ""])),
            "conditions[0]",
        ),
        (
            with(&|v| v["conditions"] = json!(["Net 30", ""])),
            "conditions[1]",
        ),
        (with(&|v| v["discount"] = json!("10%")), "discount"),
        (
            json!({"request_id": "po-1", "terms": good_terms(), "expires_at": "2020-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"request_id": "po-1", "terms": good_terms()}),
            "expires_at",
        ),
        (
            json!({"request_id": "po-1", "terms": good_terms(), "expires_at": "2099-01-01T00:00:00Z", "rationale": "x".repeat(4001)}),
            "rationale",
        ),
    ];
    for (args, names) in cases {
        let e = crate::mcp::tool(&t, &token, "ask_about_terms", args)
            .await
            .unwrap_err();
        assert!(e.contains(names), "{names}: {e}");
        assert_eq!(t.gate_counts().await, [0; 5], "{names}: nothing stored");
    }
    // A report on nothing, and a report that is not an outcome.
    let e = crate::mcp::tool(
        &t,
        &token,
        "report_outcome",
        json!({"request_id": "po-404", "outcome": "abandoned"}),
    )
    .await
    .unwrap_err();
    assert!(e.starts_with("not_found"), "{e}");
    crate::mcp::tool(&t, &token, "ask_about_terms", ask(good_terms()))
        .await
        .unwrap();
    let e = crate::mcp::tool(
        &t,
        &token,
        "report_outcome",
        json!({"request_id": "po-1", "outcome": "approved"}),
    )
    .await
    .unwrap_err();
    assert!(e.contains("outcome"), "{e}");
    let e = crate::mcp::tool(
        &t,
        &token,
        "report_outcome",
        json!({"request_id": "po-1", "outcome": "executed"}),
    )
    .await
    .unwrap_err();
    assert!(e.contains("terms"), "{e}");
    // An agent of another organization knows nothing of it.
    let other = t.host().create_org("Contoso").await.unwrap().org_handle;
    let theirs = t
        .host()
        .mcp_agent(&other, "Their assistant")
        .await
        .unwrap()
        .credential
        .token;
    for name in ["get_decision", "wait_for_decision"] {
        let e = crate::mcp::tool(&t, &theirs, name, json!({"request_id": "po-1"}))
            .await
            .unwrap_err();
        assert!(e.starts_with("not_found"), "{name}: {e}");
    }
    let e = crate::mcp::tool(
        &t,
        &theirs,
        "report_outcome",
        json!({"request_id": "po-1", "outcome": "abandoned"}),
    )
    .await
    .unwrap_err();
    assert!(e.starts_with("not_found"), "{e}");
    // A plain agent has no mirrored sessions to ask about.
    let e = crate::mcp::tool(
        &t,
        &token,
        "request_decision",
        json!({"session_id": "po-1", "request_id": "r", "expires_at": "2099-01-01T00:00:00Z"}),
    )
    .await
    .unwrap_err();
    assert!(e.starts_with("unknown_protocol"), "{e}");
}
