//! OANP through the gate, end to end over real HTTP: a buyer agent (the
//! typed gate client) mirrors its session log to a real host and asks
//! before its `offer.accept`; the engine polls, verifies the chain from its
//! pin, shows the merchant's counter beside the buyer's offer with the
//! arbiter's latest verdict and the rounds left, and the person's approval
//! reaches the agent as an ApprovalReceipt referencing the OANP session.

use countersign_client::{raw_messages, GateClient};
use countersign_engine::*;
use countersign_host_api::gate::{
    CreateSession, GateAction, GateCounterparty, Head, RequestDecision,
};
use serde_json::{json, Value};

use crate::common::*;

fn terms(amount_minor: i64, inclusions: &[&str]) -> Value {
    json!({"price": {"amount_minor": amount_minor, "currency": "USD"},
           "inclusions": inclusions.iter().map(|k| json!({"kind": k, "value": "included"})).collect::<Vec<_>>()})
}

pub(crate) fn chain(specs: &[(&str, &str, Value)]) -> Vec<Value> {
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
    assert_eq!(
        decided.decided_by.as_deref(),
        Some("Ann (ann@fabrikam.example)")
    );
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
    let offers: std::collections::BTreeSet<String> = csv_rows(&csv)
        .into_iter()
        .skip(1)
        .filter(|r| r[0] == "entry" && !r[8].is_empty())
        .map(|r| r[1].clone())
        .collect();
    assert_eq!(offers.len(), 2, "two offers, term by term: {csv}");
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

/// The publisher's development receipt, re-aimed at `session_id` and at a
/// log whose head is `head` after `length` envelopes, the signed head the
/// envelope `before_agree`. Its signature no longer verifies (it is not the
/// arbiter's any more); the chain check, which is what this reads, is
/// independent of it.
fn receipt_for(session_id: &str, head: &str, length: usize, before_agree: &str) -> Vec<u8> {
    let mut r: Value = serde_json::from_slice(include_bytes!(
        "../../../../vendor/oanp/fixtures/dev-receipt.json"
    ))
    .unwrap();
    r["session_id"] = json!(session_id);
    r["signed_payload"]["session"]["session_id"] = json!(session_id);
    r["signed_payload"]["session"]["chain_head"] = json!(before_agree);
    r["chain"]["head"] = json!(head);
    r["chain"]["length"] = json!(length);
    serde_json::to_vec(&r).unwrap()
}

fn check<'a>(view: &'a ReceiptView, id: &str) -> &'a OanpCheck {
    let ReceiptDetail::OanpReceipt(v) = &view.detail;
    v.checks.iter().find(|c| c.id == id).unwrap()
}

/// A receipt filed without its log is checked against the session log this
/// console holds for the session it signs (mirrored by the org's agent
/// through the gate, verified as it arrived): the chain check runs on those
/// envelopes and the view names the session; a receipt naming another head
/// fails it; with no such session the chain is not checked; and the same
/// bytes filed twice say so.
#[tokio::test]
async fn a_receipt_filed_without_its_log_is_checked_against_the_session_this_console_holds() {
    let world = World::start().await;
    let (agent, _) = asked(&world, "ses_held").await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    engine.refresh().await.unwrap();
    let mut envelopes = log();
    let before = envelopes.len();
    for (kind, role, payload) in [
        ("offer.accept", "buyer", json!({"round": 2})),
        (
            "session.agree",
            "arbiter",
            json!({"final_terms": terms(41900, &["warranty"])}),
        ),
    ] {
        let prev = oanp::canonical::commit(envelopes.last().unwrap()).unwrap();
        envelopes.push(
            json!({"type": kind, "message_id": format!("m{}", envelopes.len() + 1),
                              "sender": {"role": role}, "payload": payload, "prev_hash": prev}),
        );
    }
    let head = Head {
        count: before as u64,
        hash: oanp::canonical::commit(&envelopes[before - 1]).unwrap(),
    };
    agent
        .append("ses_held", &head, &envelopes[before..])
        .await
        .unwrap();
    engine.refresh().await.unwrap();

    let n = envelopes.len();
    let last = oanp::canonical::commit(&envelopes[n - 1]).unwrap();
    let before_agree = oanp::canonical::commit(&envelopes[n - 2]).unwrap();
    let file = |bytes: Vec<u8>| ImportReceipt {
        protocol: "oanp".into(),
        file_name: "arbiter-receipt.json".into(),
        bytes,
        log_file_name: None,
        log_bytes: None,
    };
    let view = engine
        .import_receipt(file(receipt_for("ses_held", &last, n, &before_agree)))
        .await
        .unwrap();
    let held = view
        .held_log
        .as_ref()
        .expect("checked against the console's copy");
    assert_eq!(held.session_id, "oanp:ses_held");
    assert_eq!(held.entries as usize, n);
    let chain = check(&view, "chain");
    assert!(chain.ok && !chain.skipped, "{chain:?}");
    assert!(chain.detail.starts_with("9 envelopes"), "{}", chain.detail);
    assert!(!view.filed_before);
    // Opened again later, the same check.
    let reopened = engine.receipt_view(&view.row.receipt_id).await.unwrap();
    assert_eq!(reopened.held_log, view.held_log);
    assert!(check(&reopened, "chain").ok);
    // Filed again: the first filing, said so; nothing new in the list.
    let again = engine
        .import_receipt(file(receipt_for("ses_held", &last, n, &before_agree)))
        .await
        .unwrap();
    assert!(again.filed_before);
    assert_eq!(again.row.receipt_id, view.row.receipt_id);
    assert_eq!(engine.receipts().await.unwrap().receipts.len(), 1);

    // A receipt whose head is not this session's last envelope fails.
    let wrong = engine
        .import_receipt(file(receipt_for(
            "ses_held",
            &before_agree,
            n,
            &before_agree,
        )))
        .await
        .unwrap();
    assert!(wrong.held_log.is_some());
    let chain = check(&wrong, "chain");
    assert!(!chain.ok && !chain.skipped, "{chain:?}");
    assert!(!wrong.row.proof);
    // One for a session this console does not hold: not checked, as before.
    let elsewhere = engine
        .import_receipt(file(receipt_for("ses_other", &last, n, &before_agree)))
        .await
        .unwrap();
    assert!(elsewhere.held_log.is_none());
    assert!(check(&elsewhere, "chain").skipped);
}
