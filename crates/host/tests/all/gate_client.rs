//! The typed gate-agent client (`countersign_client::GateClient`) against a
//! real host: the whole round trip an agent makes (enroll, mirror, extend,
//! ask, wait, check the receipts), the gate's refusal detail read back into
//! `ClientError`, and the calls it may safely repeat.

use std::time::Duration;

use countersign_client::{
    check_decision, raw_messages, ApproverClient, GateClient, GateDecisionInput,
};
use countersign_host_api::gate::{
    CreateSession, GateAction, GateCounterparty, Head, RequestDecision, RequestState,
};
use serde_json::json;
use time::OffsetDateTime;

use crate::common::*;
use crate::gate_support::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

fn create_of(talk: &Talk, upto: usize) -> CreateSession {
    CreateSession {
        protocol: "concordia".into(),
        session_id: talk.session_id.clone(),
        keys: serde_json::from_value(talk.keys()).unwrap(),
        self_party: BUYER.into(),
        counterparty: GateCounterparty {
            id: SELLER.into(),
            name: Some("Contoso Sales Agent".into()),
            organization: Some("Contoso".into()),
        },
        messages: raw_messages(&talk.messages[..upto]).unwrap(),
    }
}

#[tokio::test]
async fn the_gate_client_mirrors_asks_waits_and_checks_the_receipt() {
    let t = start(roomy_limits()).await;
    let base = t.running.base_url();
    let code = t
        .host()
        .gate_enroll_code(ORG, "Procurement Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    let enrolled = GateClient::enroll(&base, &code, "Procurement Buyer", &key, None)
        .await
        .unwrap();
    assert_eq!(enrolled.protocol, "concordia");
    let e = GateClient::enroll(&base, &code, "Procurement Buyer", &key, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("bad_enrollment_code"), "a code works once");
    let gate = GateClient::new(&base, key, &enrolled.agent_id).unwrap();

    let mut talk = Talk::opened("ses_client");
    talk.say(SELLER, "negotiate.offer", Talk::offer("99000", 3600));
    // Created twice (a retry): the same head.
    let head = gate
        .create_session(&create_of(&talk, 2))
        .await
        .unwrap()
        .head;
    assert_eq!(
        gate.create_session(&create_of(&talk, 2))
            .await
            .unwrap()
            .head,
        head
    );
    assert_eq!(head.count, 2);
    // A forged message comes back as the gate's detail: which one, which check.
    let mut forged = talk.messages[2].clone();
    forged["reasoning"] = json!("edited");
    let e = gate
        .append("ses_client", &head, &[forged])
        .await
        .unwrap_err();
    let detail = e.gate_detail().expect("the gate's detail");
    assert_eq!(
        (detail.index, detail.check.as_deref()),
        (Some(2), Some("signature"))
    );
    // A stale head comes back with the head the host holds.
    let stale = Head {
        count: 1,
        hash: talk.hash(0),
    };
    let e = gate
        .append("ses_client", &stale, &talk.messages[2..])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("head_mismatch"));
    assert_eq!(e.gate_detail().unwrap().head.as_ref(), Some(&head));
    let head = gate
        .append("ses_client", &head, &talk.messages[2..])
        .await
        .unwrap()
        .head;
    assert_eq!(gate.session("ses_client").await.unwrap().state, "active");

    let ask = RequestDecision {
        request_id: "req.client-1".into(),
        message_hash: head.hash.clone(),
        action: GateAction::Accept,
        amount: Some("99000.00 USD".into()),
        expires_at: anp::api::format_timestamp(
            OffsetDateTime::now_utc() + time::Duration::minutes(20),
        ),
    };
    let asked = gate.request_decision("ses_client", &ask).await.unwrap();
    assert_eq!(asked.status, RequestState::Pending);
    assert_eq!(
        gate.request_decision("ses_client", &ask).await.unwrap(),
        asked
    );
    // A pending request is nothing to act on.
    let pending = gate.request("ses_client", "req.client-1").await.unwrap();
    assert!(check_decision(&pending, &talk.messages[2], OffsetDateTime::now_utc()).is_err());

    // A person approves while the agent waits.
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let approver = ApproverClient::new(&base, ann.key.clone(), &ann.id).unwrap();
    let person = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let summary = approver.summary().await.unwrap();
        let p = summary
            .sessions
            .iter()
            .find(|s| s.id == "concordia:ses_client")
            .unwrap()
            .pending[0]
            .clone();
        let input = GateDecisionInput {
            session_id: "ses_client",
            pending: &p,
            offer_message: &talk.messages[2],
        };
        approver
            .decide_gate(
                "concordia:ses_client",
                &approver.approve_gate_request(&input).unwrap(),
            )
            .await
            .unwrap()
    };
    let wait = gate.wait_for_decision(
        "ses_client",
        "req.client-1",
        Duration::from_millis(50),
        Duration::from_secs(20),
    );
    let (decided, status) = tokio::join!(person, wait);
    assert_eq!(decided.request.status, RequestState::Approved);
    let status = status.unwrap();
    assert_eq!(status.status, RequestState::Approved);
    check_decision(&status, &talk.messages[2], OffsetDateTime::now_utc()).unwrap();
    // Against another message the same receipts do not stand.
    let e = check_decision(&status, &talk.messages[1], OffsetDateTime::now_utc()).unwrap_err();
    assert!(e.to_string().contains("offer_hash"), "{e}");
    // Ids that could change the route are refused before anything is sent.
    for bad in ["../x", "a/b", ".hidden"] {
        assert!(gate.session(bad).await.is_err(), "{bad}");
    }
    t.running.shutdown().await;
}
