//! OANP at the gate (docs/gate-api.md): an organization's buyer agent
//! mirrors its session envelopes (verified with `crates/oanp` before
//! anything is stored: the frame, the sender's role, every link, nothing
//! after the agreement), extends the head exactly, asks before its
//! `offer.accept` of the merchant's counter, and reads back a person's
//! ApprovalReceipt that references the OANP session.

use approval_receipt::receipt::{
    build_receipt_referencing, sign_receipt, Decision, OnBehalfOf, ReceiptDraft,
};
use countersign_client::ApproverClient;
use countersign_host_api::approver::DecisionOutcome;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::common::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

/// An OANP session log being written: envelopes chained as `crates/oanp` chains them.
struct Log {
    session_id: String,
    envelopes: Vec<Value>,
}

fn terms(amount_minor: i64, inclusions: &[&str]) -> Value {
    json!({"price": {"amount_minor": amount_minor, "currency": "USD"},
           "inclusions": inclusions.iter().map(|k| json!({"kind": k, "value": "included"})).collect::<Vec<_>>()})
}

impl Log {
    fn new(session_id: &str) -> Log {
        let mut log = Log {
            session_id: session_id.into(),
            envelopes: Vec::new(),
        };
        log.say("session.open", "buyer", json!({"max_rounds": 5}));
        log.say("session.ack", "merchant", json!({}));
        log.say(
            "session.accept",
            "arbiter",
            json!({"session_rules": {"max_rounds": 5, "fair_band": "0.05"}}),
        );
        log.say(
            "offer.propose",
            "buyer",
            json!({"round": 1, "terms": terms(39900, &[])}),
        );
        log.say(
            "arbitration.evaluate",
            "arbiter",
            json!({"verdict": "unfair_to_merchant", "fairness_score": "0.9500"}),
        );
        log.say(
            "offer.counter",
            "merchant",
            json!({"round": 1, "terms": terms(41900, &["warranty", "cable"])}),
        );
        log.say(
            "arbitration.evaluate",
            "arbiter",
            json!({"verdict": "fair", "fairness_score": "1.0000"}),
        );
        log
    }

    fn say(&mut self, kind: &str, role: &str, payload: Value) -> Value {
        let mut e = json!({"type": kind, "message_id": format!("m{}", self.envelopes.len() + 1),
                           "sender": {"role": role}, "payload": payload});
        if let Some(last) = self.envelopes.last() {
            e["prev_hash"] = json!(oanp::canonical::commit(last).unwrap());
        }
        self.envelopes.push(e.clone());
        e
    }

    fn hash(&self, i: usize) -> String {
        oanp::canonical::commit(&self.envelopes[i]).unwrap()
    }

    fn head(&self, n: usize) -> Value {
        json!({"count": n, "hash": self.hash(n - 1)})
    }

    fn create(&self, envelopes: &[Value]) -> Value {
        json!({"protocol": "oanp", "session_id": self.session_id,
               "keys": {"buyer": "procurement-buyer-7", "merchant": "ten_sandbox.merchant", "arbiter": "arbiter-dev.valyzen.ai"},
               "self": "buyer",
               "counterparty": {"id": "merchant", "name": "Contoso Monitors <b>", "organization": "Contoso"},
               "messages": envelopes})
    }
}

async fn oanp_agent(t: &TestHost) -> Party {
    let code = t
        .host()
        .gate_enroll_code(ORG, "OANP Buyer", "oanp")
        .await
        .unwrap();
    assert_eq!(code.protocol, "oanp");
    let key = anp::keys::generate_signing_key();
    let (s, b) = t.gate_enroll(&code.code, &key, None).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(v["protocol"], "oanp");
    Party {
        id: v["agent_id"].as_str().unwrap().to_owned(),
        key,
        email: String::new(),
    }
}

#[tokio::test]
async fn oanp_envelopes_are_stored_only_once_they_chain_and_batches_extend_the_head_exactly() {
    let t = start(roomy_limits()).await;
    let agent = oanp_agent(&t).await;
    let log = Log::new("01M42N9KCCR8TAGDXTFR3Q8TE8");

    // Each broken alone: the refusal names the envelope and the check, and nothing is stored.
    let mut cases: Vec<(&str, Vec<Value>, u64, &str)> = Vec::new();
    let mut unlinked = log.envelopes.clone();
    unlinked[4]["prev_hash"] = json!(format!("sha256:{}", "a".repeat(64)));
    cases.push(("a broken link", unlinked, 4, "link"));
    let mut edited = log.envelopes.clone();
    edited[3]["payload"]["terms"]["price"]["amount_minor"] = json!(100);
    cases.push((
        "an edited offer the next envelope no longer links to",
        edited,
        4,
        "link",
    ));
    let mut wrong_sender = log.envelopes[..3].to_vec();
    wrong_sender[2]["sender"]["role"] = json!("buyer");
    cases.push((
        "session.accept sent by the buyer",
        wrong_sender,
        2,
        "envelope",
    ));
    let mut unknown = log.envelopes[..2].to_vec();
    unknown[1]["type"] = json!("offer.bribe");
    cases.push(("an unknown type", unknown, 1, "envelope"));
    cases.push((
        "a log not starting with session.open",
        log.envelopes[1..3].to_vec(),
        0,
        "state",
    ));
    for (what, envelopes, index, check) in cases {
        let (s, v) = t
            .gate(&agent, "POST", "/sessions", &log.create(&envelopes))
            .await;
        assert_eq!(s, 400, "{what}: {v}");
        assert_eq!(v["error"]["code"], "transcript_invalid", "{what}: {v}");
        assert_eq!(v["error"]["index"], index, "{what}: {v}");
        assert_eq!(v["error"]["check"], check, "{what}: {v}");
        assert_eq!(v["protocol"], "oanp");
    }
    let (s, v) = t
        .gate(&agent, "POST", "/sessions", &{
            let mut body = log.create(&log.envelopes);
            body["keys"]["notary"] = json!("x");
            body
        })
        .await;
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("roles"),
        "{v}"
    );
    assert_eq!(t.count("gate_messages").await, 0);
    assert_eq!(t.count("gate_sessions").await, 0);

    // The first five, then the rest after the head exactly.
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions",
            &log.create(&log.envelopes[..5]),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["protocol"], "oanp");
    assert_eq!(v["head"], log.head(5));
    let path = format!("/sessions/{}/messages", log.session_id);
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            &path,
            &json!({"after": log.head(4), "messages": log.envelopes[5..]}),
        )
        .await;
    assert_eq!(s, 409, "{v}");
    assert_eq!(
        v["error"]["head"],
        log.head(5),
        "names the head it holds: {v}"
    );
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            &path,
            &json!({"after": log.head(5), "messages": log.envelopes[6..]}),
        )
        .await;
    assert_eq!(
        s, 400,
        "a batch skipping an envelope does not link to the pin: {v}"
    );
    assert_eq!(v["error"]["check"], "pin");
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            &path,
            &json!({"after": log.head(5), "messages": log.envelopes[5..]}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["head"], log.head(7));
    // Stored byte for byte as mirrored.
    let row = t
        .sql_row(
            "SELECT body FROM gate_messages WHERE session_id = $1 AND CAST(seq AS TEXT) = $2",
            &[&log.session_id, "6"],
        )
        .await;
    assert_eq!(
        row[0].text(),
        serde_json::to_string(&log.envelopes[5]).unwrap()
    );

    // Nothing follows the agreement.
    let mut done = Log {
        session_id: "ses_done".into(),
        envelopes: log.envelopes.clone(),
    };
    done.say("offer.accept", "buyer", json!({"round": 1}));
    done.say(
        "session.agree",
        "arbiter",
        json!({"final_terms": terms(41900, &["warranty", "cable"])}),
    );
    done.say(
        "offer.counter",
        "merchant",
        json!({"round": 2, "terms": terms(40000, &[])}),
    );
    let (s, v) = t
        .gate(&agent, "POST", "/sessions", &done.create(&done.envelopes))
        .await;
    assert_eq!(s, 400, "{v}");
    assert_eq!(
        (v["error"]["index"].as_u64(), v["error"]["check"].as_str()),
        (Some(9), Some("state")),
        "{v}"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn the_buyer_agent_asks_before_offer_accept_and_a_person_approves_with_a_receipt_referencing_the_oanp_session(
) {
    let t = start(roomy_limits()).await;
    let agent = oanp_agent(&t).await;
    let log = Log::new("ses_oanp_1");
    let (s, v) = t
        .gate(&agent, "POST", "/sessions", &log.create(&log.envelopes))
        .await;
    assert_eq!(s, 201, "{v}");
    let ask = |index: usize, amount: Option<&str>| {
        let mut body = json!({"request_id": "r1", "message_hash": log.hash(index), "action": "accept",
                              "expires_at": approval_receipt::datetime::format_utc(OffsetDateTime::now_utc() + time::Duration::hours(1))});
        if let Some(a) = amount {
            body["amount"] = json!(a);
        }
        body
    };
    let path = format!("/sessions/{}/requests", log.session_id);
    // The buyer's own offer, and the arbiter's evaluation, are not the merchant's standing offer.
    for (index, why) in [(3, "not by the counterparty"), (6, "not an offer")] {
        let (s, v) = t.gate(&agent, "POST", &path, &ask(index, None)).await;
        assert_eq!(s, 409, "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(why), "{v}");
    }
    let (s, v) = t
        .gate(&agent, "POST", &path, &ask(5, Some("418.99 USD")))
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("amount_mismatch")),
        "{v}"
    );
    let (s, v) = t.gate(&agent, "POST", &path, &ask(5, None)).await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(
        v["amount"], "419.00 USD",
        "read exactly from 41900 minor units"
    );
    assert_eq!(v["status"], "pending");

    // The approver API carries it.
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let c = ApproverClient::new(&t.running.base_url(), ann.key.clone(), &ann.id).unwrap();
    let id = format!("oanp:{}", log.session_id);
    let summary = c.summary().await.unwrap();
    let session = summary
        .sessions
        .iter()
        .find(|s| s.id == id)
        .expect("the OANP session in the summary");
    assert_eq!(session.protocol, "oanp");
    let pending = session.pending[0].clone();
    assert_eq!(pending.event_hash, log.hash(5));
    assert_eq!(pending.amount.as_deref(), Some("419.00 USD"));
    let glog = c.gate_log(&id, None).await.unwrap();
    let offer: Value = serde_json::from_str(glog.messages[5].get()).unwrap();
    assert_eq!(offer, log.envelopes[5], "the envelope in its own form");

    // A receipt referencing a Concordia session is refused; one referencing the OANP session is appended.
    let receipt = |session: &str| {
        let draft = ReceiptDraft {
            receipt_uuid: uuid::Uuid::new_v4(),
            issued_at: OffsetDateTime::now_utc(),
            expires_at: OffsetDateTime::now_utc() + time::Duration::minutes(30),
            decision: Decision::Approve,
            offer_message: offer.clone(),
            amount: "419.00 USD".parse().unwrap(),
            threshold_crossed: pending.threshold.clone().unwrap().parse().unwrap(),
            session_id: log.session_id.clone(),
            role: None,
            on_behalf_of: None,
        };
        let built = build_receipt_referencing(&draft, &ann.key.verifying_key(), session).unwrap();
        sign_receipt(built, &ann.key).unwrap()
    };
    let decide = |receipt: Value, decision_id: &str| {
        serde_json::from_value::<countersign_host_api::approver::GateDecisionRequest>(json!({
            "decision_id": decision_id, "action": "approve", "in_response_to": "r1", "receipt": receipt,
        }))
        .unwrap()
    };
    let wrong = c
        .decide_gate(
            &id,
            &decide(
                receipt(&format!("urn:concordia:session:{}", log.session_id)),
                &uuid::Uuid::new_v4().to_string(),
            ),
        )
        .await
        .unwrap_err();
    assert!(
        wrong.to_string().contains("urn:oanp:session:ses_oanp_1"),
        "{wrong}"
    );
    let answer = c
        .decide_gate(
            &id,
            &decide(
                receipt(&format!("urn:oanp:session:{}", log.session_id)),
                &uuid::Uuid::new_v4().to_string(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::Appended,
        "{}",
        answer.detail
    );
    let (s, status) = t
        .gate(
            &agent,
            "GET",
            &format!("/sessions/{}/requests/r1", log.session_id),
            &Value::Null,
        )
        .await;
    assert_eq!(s, 200, "{status}");
    assert_eq!(status["status"], "approved");
    assert_eq!(
        status["receipt"]["references"][0]["id"],
        "urn:oanp:session:ses_oanp_1"
    );
    assert_eq!(
        status["receipt"]["scope"]["offer_hash"],
        log.hash(5).as_str()
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_merchant_agent_asks_before_accepting_the_buyers_offer() {
    let t = start(roomy_limits()).await;
    let agent = oanp_agent(&t).await;
    let log = Log::new("ses_merchant_side");
    let mut body = log.create(&log.envelopes[..5]);
    body["self"] = json!("merchant");
    body["counterparty"] = json!({"id": "buyer", "name": "Fabrikam Buyer"});
    let (s, v) = t.gate(&agent, "POST", "/sessions", &body).await;
    assert_eq!(s, 201, "{v}");
    let ask = |index: usize| {
        json!({"request_id": format!("r{index}"), "message_hash": log.hash(index), "action": "accept",
               "expires_at": approval_receipt::datetime::format_utc(OffsetDateTime::now_utc() + time::Duration::hours(1))})
    };
    let path = format!("/sessions/{}/requests", log.session_id);
    let (s, v) = t.gate(&agent, "POST", &path, &ask(3)).await;
    assert_eq!(
        s, 201,
        "the buyer's offer.propose stands for the merchant: {v}"
    );
    assert_eq!(v["amount"], "399.00 USD");
    // Once the merchant has countered, the buyer's offer no longer stands.
    let more = Log {
        session_id: "ses_merchant_late".into(),
        envelopes: log.envelopes.clone(),
    };
    let mut body = more.create(&more.envelopes);
    body["self"] = json!("merchant");
    body["counterparty"] = json!({"id": "buyer"});
    let (s, v) = t.gate(&agent, "POST", "/sessions", &body).await;
    assert_eq!(s, 201, "{v}");
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            &format!("/sessions/{}/requests", more.session_id),
            &{
                let mut b = ask(3);
                b["message_hash"] = json!(more.hash(3));
                b
            },
        )
        .await;
    assert_eq!(s, 409, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("answered it"),
        "{v}"
    );
    t.running.shutdown().await;
}

/// A session whose merchant counter names `category` in its terms.
fn with_category(session_id: &str, category: Value) -> Log {
    let mut log = Log {
        session_id: session_id.into(),
        envelopes: Vec::new(),
    };
    log.say("session.open", "buyer", json!({"max_rounds": 5}));
    log.say("session.ack", "merchant", json!({}));
    log.say(
        "session.accept",
        "arbiter",
        json!({"session_rules": {"max_rounds": 5, "fair_band": "0.05"}}),
    );
    log.say(
        "offer.propose",
        "buyer",
        json!({"round": 1, "terms": terms(39900, &[])}),
    );
    log.say(
        "arbitration.evaluate",
        "arbiter",
        json!({"verdict": "unfair_to_merchant", "fairness_score": "0.9500"}),
    );
    let mut counter = terms(41900, &["warranty"]);
    counter["category"] = category;
    log.say(
        "offer.counter",
        "merchant",
        json!({"round": 1, "terms": counter}),
    );
    log.say(
        "arbitration.evaluate",
        "arbiter",
        json!({"verdict": "fair", "fairness_score": "1.0000"}),
    );
    log
}

#[tokio::test]
async fn an_oanp_offer_is_routed_by_the_category_its_terms_name() {
    let t = start(roomy_limits()).await;
    let agent = oanp_agent(&t).await;
    let fay = t.enroll(ORG, "Fay", "fay@fabrikam.example").await;
    t.host()
        .load_authority(
            ORG,
            r#"
[roles]
finance = ["fay@fabrikam.example"]

[[rule]]
name = "Monitors"
category = ["monitors"]
[[rule.step]]
role = "finance"
count = 1

[unnamed_currency]
reason = "other currencies: finance"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything else: finance"
[[no_rule.step]]
role = "finance"
"#,
            "the test",
        )
        .await
        .unwrap();
    for (session, category, reason) in [
        ("ses_cat_a", json!("monitors"), "Monitors: rule 1"),
        (
            "ses_cat_b",
            json!(["cables", "monitors"]),
            "Monitors: rule 1",
        ),
        (
            "ses_cat_c",
            json!("cables"),
            "USD is named by no rule: fallback (other currencies: finance)",
        ),
    ] {
        let log = with_category(session, category);
        let (s, v) = t
            .gate(&agent, "POST", "/sessions", &log.create(&log.envelopes))
            .await;
        assert_eq!(s, 201, "{v}");
        let body = json!({"request_id": "r1", "message_hash": log.hash(5), "action": "accept",
                          "expires_at": approval_receipt::datetime::format_utc(OffsetDateTime::now_utc() + time::Duration::hours(1))});
        let (s, v) = t
            .gate(
                &agent,
                "POST",
                &format!("/sessions/{session}/requests"),
                &body,
            )
            .await;
        assert_eq!(s, 201, "{v}");
        let summary = t.summary(&fay).await;
        let pending = summary["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == format!("oanp:{session}"))
            .unwrap()["pending"][0]
            .clone();
        assert_eq!(pending["route"]["reason"], reason, "{pending}");
    }
    t.running.shutdown().await;
}

/// Every gate request goes to finance (Fay); Grace holds no role.
const FINANCE_ONLY: &str = r#"
[roles]
finance = ["fay@fabrikam.example"]

[unnamed_currency]
reason = "other currencies go to finance"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything goes to finance"
[[no_rule.step]]
role = "finance"
"#;

#[tokio::test]
async fn a_stand_in_approves_an_oanp_request_for_the_holder_and_the_receipt_names_both() {
    let t = start(roomy_limits()).await;
    t.host()
        .load_authority(ORG, FINANCE_ONLY, "Ivy Admin")
        .await
        .unwrap();
    let agent = oanp_agent(&t).await;
    let log = Log::new("ses_oanp_stand_in");
    let (s, v) = t
        .gate(&agent, "POST", "/sessions", &log.create(&log.envelopes))
        .await;
    assert_eq!(s, 201, "{v}");
    let fay = t.enroll(ORG, "Fay", "fay@fabrikam.example").await;
    let grace = t.enroll(ORG, "Grace", "grace@fabrikam.example").await;
    let base = t.running.base_url();
    // Fay lets Grace stand in for her as finance today.
    let today = OffsetDateTime::now_utc().date().to_string();
    let given = ApproverClient::new(&base, fay.key.clone(), &fay.id)
        .unwrap()
        .delegate(
            "oanp-stand-in",
            "grace@fabrikam.example",
            &["finance".into()],
            &today,
            &today,
            "UTC",
            OffsetDateTime::now_utc(),
        )
        .await
        .unwrap();
    let ask = json!({"request_id": "r1", "message_hash": log.hash(5), "action": "accept",
                     "expires_at": approval_receipt::datetime::format_utc(OffsetDateTime::now_utc() + time::Duration::hours(1))});
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            &format!("/sessions/{}/requests", log.session_id),
            &ask,
        )
        .await;
    assert_eq!(s, 201, "{v}");

    let c = ApproverClient::new(&base, grace.key.clone(), &grace.id).unwrap();
    let id = format!("oanp:{}", log.session_id);
    let pending = c
        .summary()
        .await
        .unwrap()
        .sessions
        .into_iter()
        .find(|s| s.id == id)
        .unwrap()
        .pending[0]
        .clone();
    let route = pending.route.clone().expect("routed");
    assert!(route.you_may_act);
    assert_eq!(route.your_role.as_deref(), Some("finance"));
    let stand_in = route.your_stand_in.clone().expect("Grace stands in");
    assert_eq!(stand_in.person, "fay@fabrikam.example");
    assert_eq!(
        stand_in.delegation,
        format!("urn:countersign:delegation:{}", given.delegation_id)
    );
    let glog = c.gate_log(&id, None).await.unwrap();
    let offer: Value = serde_json::from_str(glog.messages[5].get()).unwrap();
    let receipt = |on_behalf_of: Option<OnBehalfOf>| {
        let draft = ReceiptDraft {
            receipt_uuid: uuid::Uuid::new_v4(),
            issued_at: OffsetDateTime::now_utc(),
            expires_at: OffsetDateTime::now_utc() + time::Duration::minutes(30),
            decision: Decision::Approve,
            offer_message: offer.clone(),
            amount: "419.00 USD".parse().unwrap(),
            threshold_crossed: pending.threshold.clone().unwrap().parse().unwrap(),
            session_id: log.session_id.clone(),
            role: Some("finance".into()),
            on_behalf_of,
        };
        let session = format!("urn:oanp:session:{}", log.session_id);
        let built =
            build_receipt_referencing(&draft, &grace.key.verifying_key(), &session).unwrap();
        sign_receipt(built, &grace.key).unwrap()
    };
    let decide = |receipt: Value| {
        serde_json::from_value::<countersign_host_api::approver::GateDecisionRequest>(json!({
            "decision_id": uuid::Uuid::new_v4().to_string(), "action": "approve",
            "in_response_to": "r1", "receipt": receipt,
        }))
        .unwrap()
    };
    // Signed without saying for whom, or for someone else: refused.
    let e = c
        .decide_gate(&id, &decide(receipt(None)))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("approver.on_behalf_of is absent"),
        "{e}"
    );
    let someone_else = OnBehalfOf {
        person: "carol@fabrikam.example".into(),
        delegation: stand_in.delegation.clone(),
    };
    let e = c
        .decide_gate(&id, &decide(receipt(Some(someone_else))))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("approver.on_behalf_of is"), "{e}");
    // For Fay, under the delegation: appended, and the agent reads both.
    let for_fay = OnBehalfOf {
        person: stand_in.person.clone(),
        delegation: stand_in.delegation.clone(),
    };
    let answer = c
        .decide_gate(&id, &decide(receipt(Some(for_fay))))
        .await
        .unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::Appended,
        "{}",
        answer.detail
    );
    let (s, status) = t
        .gate(
            &agent,
            "GET",
            &format!("/sessions/{}/requests/r1", log.session_id),
            &Value::Null,
        )
        .await;
    assert_eq!(s, 200, "{status}");
    assert_eq!(status["status"], "approved");
    assert_eq!(
        status["receipt"]["approver"]["on_behalf_of"],
        json!({"person": "fay@fabrikam.example", "delegation": stand_in.delegation})
    );
    assert_eq!(status["receipt"]["approver"]["role"], "finance");
    t.running.shutdown().await;
}
