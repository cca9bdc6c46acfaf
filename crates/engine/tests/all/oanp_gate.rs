//! OANP through the gate, end to end over real HTTP: a buyer agent (the
//! typed gate client) mirrors its session log to a real host and asks
//! before its `offer.accept`; the engine polls, verifies the chain from its
//! pin, shows the merchant's counter beside the buyer's offer with the
//! arbiter's latest verdict and the rounds left, and the person's approval
//! reaches the agent as an ApprovalReceipt referencing the OANP session.

use countersign_client::{raw_messages, GateClient};
use countersign_engine::*;
use countersign_host_api::gate::{CreateSession, GateAction, GateCounterparty, RequestDecision};
use serde_json::{json, Value};

use crate::common::*;

fn terms(amount_minor: i64, inclusions: &[&str]) -> Value {
    json!({"price": {"amount_minor": amount_minor, "currency": "USD"},
           "inclusions": inclusions.iter().map(|k| json!({"kind": k, "value": "included"})).collect::<Vec<_>>()})
}

fn chain(specs: &[(&str, &str, Value)]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (i, (kind, role, payload)) in specs.iter().enumerate() {
        let mut e = json!({"type": kind, "message_id": format!("m{}", i + 1), "sender": {"role": role}, "payload": payload});
        if let Some(last) = out.last() {
            e["prev_hash"] = json!(oanp::canonical::commit(last).unwrap());
        }
        out.push(e);
    }
    out
}

fn log() -> Vec<Value> {
    chain(&[
        ("session.open", "buyer", json!({})),
        ("session.ack", "merchant", json!({})),
        (
            "session.accept",
            "arbiter",
            json!({"session_rules": {"max_rounds": 5}}),
        ),
        (
            "offer.propose",
            "buyer",
            json!({"round": 1, "terms": terms(39900, &["cable"])}),
        ),
        (
            "arbitration.evaluate",
            "arbiter",
            json!({"verdict": "unfair_to_merchant", "fairness_score": "0.9500"}),
        ),
        (
            "offer.counter",
            "merchant",
            json!({"round": 2, "terms": terms(41900, &["warranty"])}),
        ),
        (
            "arbitration.evaluate",
            "arbiter",
            json!({"verdict": "fair", "fairness_score": "1.0000",
                                                   "suggested_adjustment": {"amount_minor": 41500, "currency": "USD"}}),
        ),
    ])
}

/// A buyer agent enrolled for OANP, with `session_id` mirrored and a request on the merchant's counter.
pub async fn asked(world: &World, session_id: &str) -> (GateClient, String) {
    let code = world
        .host()
        .gate_enroll_code(&world.org, "OANP Buyer", "oanp")
        .await
        .unwrap();
    let key = anp::keys::generate_signing_key();
    let enrolled = GateClient::enroll(&world.url, &code.code, "OANP Buyer", &key, None)
        .await
        .unwrap();
    let agent = GateClient::new(&world.url, key, &enrolled.agent_id).unwrap();
    let envelopes = log();
    let session = CreateSession {
        protocol: "oanp".into(),
        session_id: session_id.into(),
        keys: [
            ("buyer", "procurement-buyer-7"),
            ("merchant", "ten_sandbox.merchant"),
        ]
        .into_iter()
        .map(|(r, a)| (r.to_owned(), a.to_owned()))
        .collect(),
        self_party: "buyer".into(),
        counterparty: GateCounterparty {
            id: "merchant".into(),
            name: Some("Contoso Monitors".into()),
            organization: Some("Contoso".into()),
        },
        messages: raw_messages(&envelopes).unwrap(),
    };
    agent.create_session(&session).await.unwrap();
    let counter_hash = oanp::canonical::commit(&envelopes[5]).unwrap();
    let expires = time::OffsetDateTime::now_utc() + time::Duration::hours(2);
    agent
        .request_decision(
            session_id,
            &RequestDecision {
                request_id: "r1".into(),
                message_hash: counter_hash.clone(),
                action: GateAction::Accept,
                amount: None,
                expires_at: approval_receipt_time(expires),
            },
        )
        .await
        .unwrap();
    (agent, counter_hash)
}

#[tokio::test]
async fn an_oanp_request_reaches_the_inbox_and_an_approval_reaches_the_agent_as_a_receipt() {
    let world = World::start().await;
    let (agent, counter_hash) = asked(&world, "ses_monitor").await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    engine.refresh().await.unwrap();
    let inbox = engine.inbox().await.unwrap();
    let item = inbox
        .iter()
        .find(|i| i.protocol == "oanp")
        .unwrap_or_else(|| panic!("{inbox:?}"));
    assert_eq!(item.proposal_kind, ProposalKind::OanpOffer);
    assert_eq!(item.event_hash, counter_hash);
    assert_eq!(
        item.amount
            .as_ref()
            .map(|a| (a.value.as_str(), a.currency.as_str())),
        Some(("419.00", "USD"))
    );
    assert_eq!(
        item.previous_amount.as_ref().map(|a| a.value.as_str()),
        Some("399.00")
    );
    assert_eq!(
        item.change.as_ref().map(|c| c.absolute.as_str()),
        Some("20")
    );
    assert_eq!(item.counterparty.organization.as_deref(), Some("Contoso"));

    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    let ProposalDetail::OanpOffer(offer) = &view.detail else {
        panic!("{:?}", view.detail)
    };
    assert_eq!(offer.offer.sender, "merchant");
    assert_eq!(offer.offer.terms.price.amount_minor, "41900");
    assert_eq!(
        offer.previous.as_ref().unwrap().terms.price.amount_minor,
        "39900"
    );
    assert_eq!(
        offer
            .inclusions_added
            .iter()
            .map(|i| i.kind.as_str())
            .collect::<Vec<_>>(),
        ["warranty"]
    );
    assert_eq!(
        offer
            .inclusions_removed
            .iter()
            .map(|i| i.kind.as_str())
            .collect::<Vec<_>>(),
        ["cable"]
    );
    let verdict = offer.verdict.as_ref().unwrap();
    assert_eq!(verdict.verdict.as_deref(), Some("fair"));
    assert_eq!(
        verdict
            .suggested_price
            .as_ref()
            .unwrap()
            .amount
            .as_ref()
            .unwrap()
            .value,
        "415.00"
    );
    assert_eq!((offer.max_rounds, offer.rounds_left), (Some(5), Some(3)));
    assert_eq!(offer.request.as_ref().unwrap().request_id, "r1");
    assert!(offer.notice.contains("not signed"));
    assert_eq!(view.capabilities.counter_form, Some(CounterForm::OanpTerms));

    // A counter that is not OANP terms is refused with its path, nothing sent.
    let check = engine
        .validate_counter(
            &item.host_id,
            &item.session_id,
            &item.event_hash,
            json!({"price": {"amount_minor": 0, "currency": "USD"}}),
        )
        .await
        .unwrap();
    assert!(!check.ok);
    assert_eq!(check.errors[0].path, "price/amount_minor");

    let result = decide(
        &engine,
        &item.host_id,
        &item.session_id,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    let status = agent.request("ses_monitor", "r1").await.unwrap();
    let status = serde_json::to_value(&status).unwrap();
    assert_eq!(status["status"], "approved", "{status}");
    assert_eq!(
        status["receipt"]["references"][0]["id"],
        "urn:oanp:session:ses_monitor"
    );
    assert_eq!(
        status["receipt"]["scope"]["offer_hash"],
        counter_hash.as_str()
    );
    assert_eq!(status["receipt"]["scope"]["amount"], "419.00 USD");

    // Decided: the offer reads as this console's approval; history shows the log.
    engine.refresh().await.unwrap();
    let after = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    let decided = after.decision.expect("the decision");
    assert_eq!(decided.action.as_deref(), Some("approve"));
    assert_eq!(decided.decided_by.as_deref(), Some("ann@fabrikam.example"));
    let detail = engine
        .session_detail(&item.host_id, &item.session_id)
        .await
        .unwrap();
    let summaries: Vec<&str> = detail.timeline.iter().map(|t| t.summary.as_str()).collect();
    assert_eq!(summaries.len(), 7, "{summaries:?}");
    assert!(
        summaries[5].starts_with("Counter-offer by the merchant (round 2): 419"),
        "{summaries:?}"
    );
    assert!(
        summaries[6].starts_with("Arbiter's verdict: fair, score 1.0000"),
        "{summaries:?}"
    );
    let export = engine
        .export_session(&item.host_id, &item.session_id, ExportFormat::Json)
        .await
        .unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&export.path).unwrap()).unwrap();
    let text = doc.to_string();
    // The log as mirrored (the arbiter's envelope after the counter links to it), with the pinned roles.
    assert!(
        text.contains(&format!("\"prev_hash\":\"{counter_hash}\"")),
        "{text}"
    );
    assert!(
        text.contains("\"roles\":{\"buyer\":\"procurement-buyer-7\""),
        "{text}"
    );
    let csv = engine
        .export_session(&item.host_id, &item.session_id, ExportFormat::Csv)
        .await
        .unwrap();
    let csv = std::fs::read_to_string(&csv.path).unwrap();
    assert_eq!(csv.lines().count(), 3, "a header and two offers: {csv}");
    assert!(csv.contains("\"41900\""), "{csv}");
}

fn approval_receipt_time(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

#[tokio::test]
async fn a_decline_and_a_counter_reach_the_agent_with_the_reason_and_oanp_terms() {
    let world = World::start().await;
    let (declined, _) = asked(&world, "ses_decline").await;
    let (countered, _) = asked(&world, "ses_counter").await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    engine.refresh().await.unwrap();
    let inbox = engine.inbox().await.unwrap();
    let item = |sid: &str| {
        inbox
            .iter()
            .find(|i| i.session_id == format!("oanp:{sid}"))
            .unwrap_or_else(|| panic!("{sid}: {inbox:?}"))
            .clone()
    };

    let d = item("ses_decline");
    let result = decide(
        &engine,
        &d.host_id,
        &d.session_id,
        &d.event_hash,
        DecideAction::Decline,
        None,
    )
    .await;
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    let status =
        serde_json::to_value(declined.request("ses_decline", "r1").await.unwrap()).unwrap();
    assert_eq!(status["status"], "denied", "{status}");
    assert_eq!(status["reason"], "Over our budget.");
    assert_eq!(status["receipt"]["scope"]["decision"], "deny");

    let c = item("ses_counter");
    let counter = terms(40500, &["warranty", "cable"]);
    let refused = engine
        .decide(DecideRequest {
            host_id: c.host_id.clone(),
            session_id: c.session_id.clone(),
            in_response_to: c.event_hash.clone(),
            action: DecideAction::Counter,
            reason: None,
            counter: Some(counter.clone()),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "reason_required", "{refused}");
    let result = engine
        .decide(DecideRequest {
            host_id: c.host_id.clone(),
            session_id: c.session_id.clone(),
            in_response_to: c.event_hash.clone(),
            action: DecideAction::Counter,
            reason: Some("Meet the arbiter's suggestion, with the cable.".into()),
            counter: Some(counter.clone()),
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    let status =
        serde_json::to_value(countered.request("ses_counter", "r1").await.unwrap()).unwrap();
    assert_eq!(status["status"], "countered", "{status}");
    assert_eq!(status["counter_terms"], counter);
    assert_eq!(
        status["receipt"]["references"][0]["id"],
        "urn:oanp:session:ses_counter"
    );
}
