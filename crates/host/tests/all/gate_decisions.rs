//! The approver API on gate sessions (docs/approver-api.md), with the Rust
//! approver client signing ApprovalReceipts (`crates/approval-receipt`):
//! the request in the summary, the transcript in its own form, approve /
//! decline / counter and the receipts `crates/concordia` verifies, the
//! org's policy (two approvers, screening), idempotency, expiry, refused
//! receipts, and the signed callback hint.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use concordia::approval_receipt::receipt::{verify_receipt, Decision};
use countersign_client::{check_decision, ApproverClient, GateDecisionInput};
use countersign_host_api::approver::{DecisionOutcome, PendingDecision, Summary};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::common::*;
use crate::gate_support::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

fn client(t: &TestHost, p: &Party) -> ApproverClient {
    ApproverClient::new(&t.running.base_url(), p.key.clone(), &p.id).unwrap()
}

/// A mirrored session whose seller has just made an offer at `price`, and
/// the agent's request `r1` about it.
async fn asked(t: &TestHost, agent: &Party, session_id: &str, price: &str) -> Talk {
    let mut talk = Talk::opened(session_id);
    talk.say(SELLER, "negotiate.offer", Talk::offer(price, 3600));
    t.mirror(agent, &talk).await;
    let (s, v) = t.ask(agent, &talk, "r1", 2, None, 1800).await;
    assert_eq!(s, 201, "{v}");
    talk
}

fn pending_of(summary: &Summary, id: &str) -> Vec<PendingDecision> {
    summary
        .sessions
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("{id} in the summary"))
        .pending
        .clone()
}

/// What the approver client needs, read from the summary and the log.
async fn input_of(c: &ApproverClient, session_id: &str) -> (PendingDecision, Value) {
    let id = format!("concordia:{session_id}");
    let pending = pending_of(&c.summary().await.unwrap(), &id).remove(0);
    let log = c.gate_log(&id, None).await.unwrap();
    let message: Value =
        serde_json::from_str(log.messages[(pending.seq - 1) as usize].get()).unwrap();
    (pending, message)
}

#[tokio::test]
async fn a_request_appears_in_the_summary_with_its_hash_amount_and_approvals() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let c = client(&t, &ann);
    let (s, tag, _) = t.summary_if(&ann, None).await;
    assert_eq!(s, 200);
    let talk = asked(&t, &agent, "ses_summary", "300000.00").await;

    let summary = c.summary().await.unwrap();
    let session = summary
        .sessions
        .iter()
        .find(|s| s.id == "concordia:ses_summary")
        .expect("the gate session is in the summary");
    assert_eq!(session.protocol, "concordia");
    assert_eq!(session.status, "active");
    assert_eq!(session.event_count, 3);
    assert_eq!(session.chain_head, talk.hash(2));
    assert_eq!(session.counterparty.id, SELLER);
    assert_eq!(
        session.counterparty.organization.as_deref(),
        Some("Contoso")
    );
    assert_eq!(session.counterparty.status, "declared");
    assert_eq!(
        session.counterparty.fingerprint,
        anp::keys::fingerprint(&talk.seller.verifying_key())
    );
    assert_eq!(session.agent.as_ref().unwrap().agent_id, agent.id);
    assert!(session.vendor.is_none());
    let p = &session.pending[0];
    assert_eq!(p.seq, 3);
    assert_eq!(p.event_hash, talk.hash(2));
    assert_eq!(p.kind, "negotiate.offer");
    assert_eq!(p.actor, "counterparty");
    assert_eq!(p.request_id.as_deref(), Some("r1"));
    assert_eq!(p.action.as_deref(), Some("accept"));
    assert_eq!(p.amount.as_deref(), Some("300000 USD"));
    assert_eq!(p.threshold.as_deref(), Some("250000 USD"));
    // Above the sandbox's 250000: two distinct approvers.
    assert_eq!(p.approvals_required, 2);
    // The summary's tag moved with the new request; unchanged, it is 304.
    let (s, tag2, _) = t.summary_if(&ann, tag.as_deref()).await;
    assert_eq!(s, 200);
    assert_ne!(tag2, tag);
    let (s, _, body) = t.summary_if(&ann, tag2.as_deref()).await;
    assert_eq!((s, body.len()), (304, 0));

    // The log: the transcript in its own form, byte for byte, with keys and requests.
    let log = c.gate_log("concordia:ses_summary", Some(1)).await.unwrap();
    assert_eq!((log.protocol.as_str(), log.after), ("concordia", 1));
    assert_eq!(log.self_party, BUYER);
    assert_eq!(log.messages.len(), 2);
    assert_eq!(
        log.messages[1].get(),
        serde_json::to_string(&talk.messages[2]).unwrap()
    );
    assert_eq!(log.keys[SELLER], talk.keys()[SELLER].as_str().unwrap());
    assert_eq!(log.head.count, 3);
    assert_eq!(log.requests[0].request_id, "r1");
    // The messages verify from the log alone, with the log's keys.
    let keys = concordia::Keys::from_json(&json!(log.keys)).unwrap();
    let all = c.gate_log("concordia:ses_summary", None).await.unwrap();
    let messages: Vec<Value> = all
        .messages
        .iter()
        .map(|m| serde_json::from_str(m.get()).unwrap())
        .collect();
    assert!(concordia::verify_transcript(&messages, &keys).is_valid());

    // Another org's approver sees none of it.
    let other = t.host().create_org("Tailspin Toys").await.unwrap();
    let bob = t
        .enroll(&other.org_handle, "Bob", "bob@tailspin.example")
        .await;
    assert!(client(&t, &bob)
        .summary()
        .await
        .unwrap()
        .sessions
        .is_empty());
    let e = client(&t, &bob)
        .gate_log("concordia:ses_summary", None)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401));
    t.running.shutdown().await;
}

#[tokio::test]
async fn approve_decline_and_counter_produce_receipts_concordia_verifies() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let c = client(&t, &ann);
    let mut talks = Vec::new();
    for sid in ["ses_approve", "ses_decline", "ses_counter"] {
        talks.push(asked(&t, &agent, sid, "120000.00").await);
    }
    let ann_did = concordia::approval_receipt::did_key::encode(&ann.key.verifying_key());
    for (talk, action) in talks.iter().zip(["approve", "decline", "counter"]) {
        let sid = talk.session_id.as_str();
        let (pending, message) = input_of(&c, sid).await;
        assert_eq!(pending.approvals_required, 1);
        let input = GateDecisionInput {
            session_id: sid,
            pending: &pending,
            offer_message: &message,
        };
        let request = match action {
            "approve" => c.approve_gate_request(&input).unwrap(),
            "decline" => c
                .decline_gate_request(&input, "Above what we pay for this class of sensor.")
                .unwrap(),
            _ => c
                .counter_gate_request(
                    &input,
                    "Meet us nearer our benchmark.",
                    json!({"price": {"value": 110000, "currency": "USD"}, "delivery": {"value": "2026-12-20"}}),
                )
                .unwrap(),
        };
        let answer = c
            .decide_gate(&format!("concordia:{sid}"), &request)
            .await
            .unwrap();
        assert_eq!(
            answer.outcome,
            DecisionOutcome::Appended,
            "{action}: {}",
            answer.detail
        );

        // What the agent reads back.
        let status = t.request_status(&agent, talk, "r1").await;
        let expected = match action {
            "approve" => "approved",
            "decline" => "denied",
            _ => "countered",
        };
        assert_eq!(status["status"], expected, "{status}");
        assert_eq!(status["decided_by"][0]["email"], "ann@fabrikam.example");
        assert_eq!(status["decided_by"][0]["identity"], ann_did.as_str());
        let receipt = &status["receipt"];
        assert_eq!(status["receipts"][0], *receipt);
        assert!(
            status.get("held_reason").is_none(),
            "approvers only: {status}"
        );
        // crates/concordia verifies it against the mirrored message alone.
        let report = verify_receipt(
            receipt,
            &talk.messages[2],
            None,
            OffsetDateTime::now_utc(),
            &[],
        );
        assert!(
            report.is_valid(),
            "{action}: {:?}",
            report.failures().collect::<Vec<_>>()
        );
        assert_eq!(
            report.decision,
            Some(if action == "approve" {
                Decision::Approve
            } else {
                Decision::Deny
            })
        );
        assert_eq!(receipt["scope"]["offer_hash"], talk.hash(2).as_str());
        assert_eq!(receipt["scope"]["amount"], "120000 USD");
        assert_eq!(receipt["scope"]["threshold_crossed"], "250000 USD");
        assert_eq!(
            receipt["references"][0]["id"],
            format!("urn:concordia:session:{sid}").as_str()
        );
        // The typed client checks the decision the same way, from the receipts.
        let typed: countersign_host_api::gate::GateRequestStatus =
            serde_json::from_value(status.clone()).unwrap();
        check_decision(&typed, &talk.messages[2], OffsetDateTime::now_utc()).unwrap();
        match action {
            "decline" => {
                assert_eq!(
                    status["reason"],
                    "Above what we pay for this class of sensor."
                );
                assert_eq!(status["counter_terms"], Value::Null);
            }
            "counter" => {
                assert_eq!(status["reason"], "Meet us nearer our benchmark.");
                assert_eq!(status["counter_terms"]["price"]["value"], 110000);
            }
            _ => assert_eq!(status["reason"], Value::Null),
        }
        // A decided request is no longer pending, and takes no second decision.
        assert!(pending_of(&c.summary().await.unwrap(), &format!("concordia:{sid}")).is_empty());
        let again = c.approve_gate_request(&input).unwrap();
        let e = c
            .decide_gate(&format!("concordia:{sid}"), &again)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some("no_standing_offer"), "{e}");
    }
    // The receipt does not verify against another offer (one cent off).
    let status = t.request_status(&agent, &talks[0], "r1").await;
    let mut other = talks[0].messages[2].clone();
    other["body"]["terms"]["price"]["value"] = json!(120000.01);
    let report = verify_receipt(
        &status["receipt"],
        &other,
        None,
        OffsetDateTime::now_utc(),
        &[],
    );
    assert!(!report.is_valid());
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_two_approver_policy_needs_two_distinct_approvers_and_approves_once() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let bob = t.enroll(ORG, "Bob", "bob@fabrikam.example").await;
    let cat = t.enroll(ORG, "Cat", "cat@fabrikam.example").await;
    let talk = asked(&t, &agent, "ses_two", "400000.00").await;
    let sid = "concordia:ses_two";

    let (pending, message) = input_of(&client(&t, &ann), "ses_two").await;
    assert_eq!(pending.approvals_required, 2);
    let input = GateDecisionInput {
        session_id: "ses_two",
        pending: &pending,
        offer_message: &message,
    };
    let first = client(&t, &ann).approve_gate_request(&input).unwrap();
    let answer = client(&t, &ann).decide_gate(sid, &first).await.unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::AwaitingApprovals,
        "{}",
        answer.detail
    );
    let status = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(
        (
            status["status"].as_str(),
            status["approvals_given"].as_u64()
        ),
        (Some("pending"), Some(1))
    );
    let summary = client(&t, &bob).summary().await.unwrap();
    assert_eq!(
        pending_of(&summary, sid)[0].approvals[0].approved_by,
        "ann@fabrikam.example"
    );
    // The same approver again does not count twice.
    let twice = client(&t, &ann).approve_gate_request(&input).unwrap();
    let e = client(&t, &ann).decide_gate(sid, &twice).await.unwrap_err();
    assert_eq!(e.code(), Some("policy"), "{e}");

    // Bob and Cat at once: exactly one of them completes it.
    let b = client(&t, &bob).approve_gate_request(&input).unwrap();
    let c = client(&t, &cat).approve_gate_request(&input).unwrap();
    let (bc, cb) = (client(&t, &bob), client(&t, &cat));
    let (rb, rc) = tokio::join!(bc.decide_gate(sid, &b), cb.decide_gate(sid, &c));
    let outcomes: Vec<Result<DecisionOutcome, String>> = [rb, rc]
        .into_iter()
        .map(|r| {
            r.map(|a| a.outcome)
                .map_err(|e| e.code().unwrap_or("?").to_owned())
        })
        .collect();
    assert!(
        outcomes.contains(&Ok(DecisionOutcome::Appended)),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&Err("no_standing_offer".to_owned())),
        "{outcomes:?}"
    );
    let status = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(status["status"], "approved");
    assert_eq!(status["approvals_given"], 2);
    assert_eq!(status["receipts"].as_array().unwrap().len(), 2);
    let typed: countersign_host_api::gate::GateRequestStatus =
        serde_json::from_value(status.clone()).unwrap();
    check_decision(&typed, &talk.messages[2], OffsetDateTime::now_utc()).unwrap();
    // Two receipts by one key are not two approvals to the agent's check.
    let mut forged = typed.clone();
    forged.receipts[1] = forged.receipts[0].clone();
    let e = check_decision(&forged, &talk.messages[2], OffsetDateTime::now_utc()).unwrap_err();
    assert!(e.to_string().contains("distinct keys"), "{e}");
    assert_eq!(t.count("gate_receipts").await, 2);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_retry_with_the_same_ids_changes_nothing() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let mut talk = Talk::opened("ses_retry");
    talk.say(SELLER, "negotiate.offer", Talk::offer("90000", 3600));
    t.mirror(&agent, &talk).await;
    // Kept, so the agent's retry below sends the same body (its expiry
    // computed again could fall in the next second).
    let asking = request_body(&talk, "r1", 2, None, 1800);
    let (s, v) = t.ask_body(&agent, &talk, &asking).await;
    assert_eq!(s, 201, "{v}");
    let c = client(&t, &ann);
    let (pending, message) = input_of(&c, "ses_retry").await;
    let input = GateDecisionInput {
        session_id: "ses_retry",
        pending: &pending,
        offer_message: &message,
    };
    let request = c.approve_gate_request(&input).unwrap();
    let body = serde_json::to_value(&request).unwrap();
    let (s, first) = t.decide(&ann, "concordia:ses_retry", body.clone()).await;
    assert_eq!(s, 200, "{first}");
    let counts = t.gate_counts().await;
    let (s, again) = t.decide(&ann, "concordia:ses_retry", body.clone()).await;
    assert_eq!(s, 200, "{again}");
    assert_eq!(again["outcome"], first["outcome"]);
    assert_eq!(again["detail"], first["detail"]);
    assert_eq!(t.gate_counts().await, counts, "a replay stores nothing");
    // The same id for another decision is a conflict.
    let mut other = body.clone();
    other["action"] = json!("decline");
    other["reason"] = json!("changed my mind");
    let (s, v) = t.decide(&ann, "concordia:ses_retry", other).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("decision_conflict")),
        "{v}"
    );
    // The agent's request id repeated: the same request, nothing new.
    let (s, v) = t.ask_body(&agent, &talk, &asking).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["status"], "approved");
    assert_eq!(t.gate_counts().await, counts);
    t.running.shutdown().await;
}

/// One change to a receipt before it is signed again.
type Edit = Box<dyn Fn(&mut Value)>;

#[tokio::test]
async fn receipts_that_do_not_fit_the_request_are_refused_and_nothing_is_recorded() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let eve = t.enroll(ORG, "Eve", "eve@fabrikam.example").await;
    let mut talk = asked(&t, &agent, "ses_fit", "100000").await;
    talk.say(
        BUYER,
        "negotiate.signal",
        json!({"priority_ranking": ["price"]}),
    );
    t.mirror_more(&agent, &talk, 3).await;
    let c = client(&t, &ann);
    let (pending, message) = input_of(&c, "ses_fit").await;
    let input = GateDecisionInput {
        session_id: "ses_fit",
        pending: &pending,
        offer_message: &message,
    };
    let good = serde_json::to_value(c.approve_gate_request(&input).unwrap()).unwrap();
    let sign = |receipt: &mut Value, key: &anp::keys::SigningKey| {
        receipt.as_object_mut().unwrap().remove("signature");
        let signed = concordia::approval_receipt::sign_receipt(receipt.clone(), key).unwrap();
        *receipt = signed;
    };
    let before = t.gate_counts().await;
    let mut cases: Vec<(&str, Value, u16, &str)> = Vec::new();
    // Signed by another approver's key (Eve's), sent by Ann.
    let by_eve = client(&t, &eve).approve_gate_request(&input).unwrap();
    let mut v = good.clone();
    v["receipt"] = by_eve.receipt;
    cases.push(("signed by another key", v, 400, "bad_signature"));
    // The signature no longer covers what it says.
    let mut v = good.clone();
    v["receipt"]["scope"]["amount"] = json!("1 USD");
    cases.push(("changed after signing", v, 400, "bad_signature"));
    // Each field re-signed by Ann, so only the field is wrong.
    let another_message = talk.messages[3].clone();
    let mut edits: Vec<(&str, Edit)> = vec![
        (
            "another message's hash",
            Box::new(move |r: &mut Value| {
                r["scope"]["offer_hash"] =
                    json!(concordia::message_hash(&another_message).unwrap());
            }),
        ),
        (
            "another session",
            Box::new(|r: &mut Value| {
                r["references"][0]["id"] = json!("urn:concordia:session:ses_other");
            }),
        ),
        (
            "another amount",
            Box::new(|r: &mut Value| r["scope"]["amount"] = json!("99999.99 USD")),
        ),
        (
            "another threshold",
            Box::new(|r: &mut Value| r["scope"]["threshold_crossed"] = json!("1000000 USD")),
        ),
        (
            "after the request's expiry",
            Box::new(|r: &mut Value| r["expires_at"] = json!("2099-01-01T00:00:00Z")),
        ),
        (
            "a deny for an approve",
            Box::new(|r: &mut Value| r["scope"]["decision"] = json!("deny")),
        ),
    ];
    for (what, edit) in edits.drain(..) {
        let mut v = good.clone();
        edit(&mut v["receipt"]);
        sign(&mut v["receipt"], &ann.key);
        v["decision_id"] = json!(uuid::Uuid::new_v4().to_string());
        cases.push((what, v, 400, "invalid_request"));
    }
    for (what, mut body, status, code) in cases {
        body["decision_id"] = json!(uuid::Uuid::new_v4().to_string());
        let (s, v) = t.decide(&ann, "concordia:ses_fit", body).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (status, Some(code)),
            "{what}: {v}"
        );
        assert!(
            v["error"]["message"].as_str().unwrap().contains("receipt"),
            "{what}: {v}"
        );
        assert_eq!(t.gate_counts().await, before, "{what}: nothing recorded");
    }
    assert_eq!(
        t.request_status(&agent, &talk, "r1").await["status"],
        "pending"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_expired_request_cannot_be_decided_and_reads_expired() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let talk = asked(&t, &agent, "ses_expire", "100000").await;
    let c = client(&t, &ann);
    let (pending, message) = input_of(&c, "ses_expire").await;
    let input = GateDecisionInput {
        session_id: "ses_expire",
        pending: &pending,
        offer_message: &message,
    };
    let request = c.approve_gate_request(&input).unwrap();
    t.host().clock().advance(Duration::from_secs(1801));
    // Read as expired at once, before the sweeper marks it (the host's
    // clock moved: requests are signed by its clock from here on).
    assert_eq!(
        t.request_status(&agent, &talk, "r1").await["status"],
        "expired"
    );
    let summary: Summary = serde_json::from_value(t.summary(&ann).await).unwrap();
    assert!(pending_of(&summary, "concordia:ses_expire").is_empty());
    let (s, v) = t
        .decide(
            &ann,
            "concordia:ses_expire",
            serde_json::to_value(&request).unwrap(),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("offer_expired")),
        "{v}"
    );
    assert_eq!(t.count("gate_receipts").await, 0);
    assert_eq!(t.host().expire_gate_requests().await.unwrap(), 1);
    assert_eq!(
        t.host().expire_gate_requests().await.unwrap(),
        0,
        "marked once"
    );
    let status = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(status["status"], "expired");
    assert_eq!(status["receipt"], Value::Null);
    t.running.shutdown().await;
}

#[tokio::test]
async fn screening_holds_a_counter_that_leaks_a_confidential_value() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let talk = asked(&t, &agent, "ses_screen", "200000").await;
    let c = client(&t, &ann);
    let (pending, message) = input_of(&c, "ses_screen").await;
    let input = GateDecisionInput {
        session_id: "ses_screen",
        pending: &pending,
        offer_message: &message,
    };
    // The sandbox's budget ceiling is 600000: as a price, and in words.
    for (terms, reason) in [
        (
            json!({"price": {"value": 600000, "currency": "USD"}}),
            "Try this.",
        ),
        (
            json!({"price": {"value": 180000, "currency": "USD"}}),
            "Our ceiling is $600,000.00.",
        ),
    ] {
        let request = c.counter_gate_request(&input, reason, terms).unwrap();
        let answer = c
            .decide_gate("concordia:ses_screen", &request)
            .await
            .unwrap();
        assert_eq!(answer.outcome, DecisionOutcome::Held, "{}", answer.detail);
        assert!(
            answer.detail.contains("budget ceiling"),
            "{}",
            answer.detail
        );
        assert_eq!(
            answer.request.held_reason.as_deref(),
            Some(answer.detail.as_str())
        );
    }
    // Nothing reached the agent: still pending, no receipt, no reason.
    let status = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(status["status"], "pending");
    assert_eq!(
        (status["receipt"].clone(), status["counter_terms"].clone()),
        (Value::Null, Value::Null)
    );
    assert!(status.get("held_reason").is_none());
    assert_eq!(t.count("gate_receipts").await, 0);
    // The approver sees why, and a clean counter then goes through.
    let p = &pending_of(&c.summary().await.unwrap(), "concordia:ses_screen")[0];
    assert!(p.held_reason.as_deref().unwrap().contains("budget ceiling"));
    let clean = c
        .counter_gate_request(
            &input,
            "Meet us at 180k.",
            json!({"price": {"value": 180000, "currency": "USD"}}),
        )
        .unwrap();
    let answer = c.decide_gate("concordia:ses_screen", &clean).await.unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::Appended,
        "{}",
        answer.detail
    );
    assert_eq!(
        t.request_status(&agent, &talk, "r1").await["status"],
        "countered"
    );
    // Counter terms that are no Concordia terms are refused, not held.
    let talk2 = asked(&t, &agent, "ses_screen2", "200000").await;
    let (pending, message) = input_of(&c, &talk2.session_id).await;
    let input = GateDecisionInput {
        session_id: &talk2.session_id,
        pending: &pending,
        offer_message: &message,
    };
    let bad = c.counter_gate_request(&input, "x", json!([1, 2])).unwrap();
    let e = c
        .decide_gate("concordia:ses_screen2", &bad)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("invalid_request"), "{e}");
    t.running.shutdown().await;
}

/// What a tiny agent-side listener received: the body and the signature header.
type Hints = Arc<Mutex<Vec<(Vec<u8>, String)>>>;

async fn listener() -> (String, Hints, tokio::task::JoinHandle<()>) {
    use axum::routing::post;
    let hints: Hints = Arc::default();
    let seen = hints.clone();
    let app = axum::Router::new().route(
        "/hint",
        post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let seen = seen.clone();
                async move {
                    let sig = headers
                        .get("x-countersign-signature")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    seen.lock().unwrap().push((body.to_vec(), sig));
                    "ok"
                }
            },
        ),
    );
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hint", socket.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(socket, app).await;
    });
    (url, hints, task)
}

#[tokio::test]
async fn the_callback_hint_arrives_signed_and_the_fetch_is_the_truth() {
    // The agent listens on loopback: an admin must allow that network.
    let t =
        start_with(countersign_host::HostConfig {
            limits: roomy_limits(),
            callback_networks: vec![
                countersign_host::callback::Network::parse("127.0.0.1/32").unwrap()
            ],
            ..countersign_host::HostConfig::default()
        })
        .await;
    let (url, hints, task) = listener().await;
    let agent = t.gate_agent(ORG, Some(&url)).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let talk = asked(&t, &agent, "ses_hint", "100000").await;
    let c = client(&t, &ann);
    let (pending, message) = input_of(&c, "ses_hint").await;
    let input = GateDecisionInput {
        session_id: "ses_hint",
        pending: &pending,
        offer_message: &message,
    };
    assert!(
        hints.lock().unwrap().is_empty(),
        "no hint before a decision"
    );
    c.decide_gate(
        "concordia:ses_hint",
        &c.approve_gate_request(&input).unwrap(),
    )
    .await
    .unwrap();
    let mut waited = 0;
    while hints.lock().unwrap().is_empty() && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    let (body, signature) = hints
        .lock()
        .unwrap()
        .first()
        .cloned()
        .expect("a hint arrives");
    let hint: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(hint["protocol"], "countersign-gate/v1");
    assert_eq!(
        (hint["session_id"].as_str(), hint["request_id"].as_str()),
        (Some("ses_hint"), Some("r1"))
    );
    assert_eq!(hint["status"], "approved");
    // Signed by the platform key the agent got when it enrolled.
    let platform = anp::keys::parse_public_key(t.host().platform_public_key()).unwrap();
    let signed = countersign_host_api::gate::callback_string(
        "ses_hint",
        "r1",
        "approved",
        hint["at"].as_str().unwrap(),
    );
    assert!(anp::keys::verify_b64(
        &platform,
        signed.as_bytes(),
        &signature
    ));
    assert!(!anp::keys::verify_b64(
        &platform,
        signed.replace("approved", "denied").as_bytes(),
        &signature
    ));
    // The hint is only a hint: the fetch is what the agent acts on.
    let status = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(status["status"], "approved");
    let typed: countersign_host_api::gate::GateRequestStatus =
        serde_json::from_value(status).unwrap();
    check_decision(&typed, &talk.messages[2], OffsetDateTime::now_utc()).unwrap();
    // An expiry is hinted too.
    let talk2 = asked(&t, &agent, "ses_hint2", "100000").await;
    t.host().clock().advance(Duration::from_secs(1801));
    t.host().expire_gate_requests().await.unwrap();
    let mut waited = 0;
    while hints.lock().unwrap().len() < 2 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    let second: Value = serde_json::from_slice(&hints.lock().unwrap()[1].0).unwrap();
    assert_eq!(
        (second["session_id"].as_str(), second["status"].as_str()),
        (Some(talk2.session_id.as_str()), Some("expired"))
    );
    assert_eq!(
        hints.lock().unwrap().len(),
        2,
        "one hint per settled request"
    );
    task.abort();
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_decision_id_names_one_decision_across_anp_and_gate_sessions() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let vendor = t.register("Contoso").await;
    let (anp_session, _) = t.open_sandbox(&vendor).await;
    let (s, doc) = t
        .submit(&vendor, &anp_session, "offer", offer(1000, FAR_FUTURE))
        .await;
    assert_eq!(s, 200, "{doc}");
    let offer_hash = doc["log"]["events"][2]["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    asked(&t, &agent, "ses_ids", "90000").await;
    let c = client(&t, &ann);
    let (pending, message) = input_of(&c, "ses_ids").await;
    let input = GateDecisionInput {
        session_id: "ses_ids",
        pending: &pending,
        offer_message: &message,
    };
    // An id used on the ANP session first…
    let used = uuid::Uuid::new_v4().to_string();
    let (s, v) = t
        .decide(
            &ann,
            &anp_session,
            json!({"decision_id": used, "action": "decline", "in_response_to": offer_hash, "reason": "Too high."}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let mut gate = serde_json::to_value(c.approve_gate_request(&input).unwrap()).unwrap();
    gate["decision_id"] = json!(used);
    let (s, v) = t.decide(&ann, "concordia:ses_ids", gate.clone()).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("decision_conflict")),
        "{v}"
    );
    // …and one used on the gate session first.
    let fresh = uuid::Uuid::new_v4().to_string();
    gate["decision_id"] = json!(fresh);
    let (s, v) = t.decide(&ann, "concordia:ses_ids", gate).await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = t
        .decide(
            &ann,
            &anp_session,
            json!({"decision_id": fresh, "action": "decline", "in_response_to": offer_hash, "reason": "Too high."}),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("decision_conflict")),
        "{v}"
    );
    t.running.shutdown().await;
}
