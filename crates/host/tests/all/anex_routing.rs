//! ANEX asks routed through the organization's policy of authority
//! (docs/authority.md), over real HTTP on the store this suite runs on: an
//! ask for bank details takes two of finance, each receipt signed as its
//! role; the requester hears nothing until the last approval; one person
//! counts once; a holder's decline decides at once; someone outside the
//! step is refused.

use crate::a2a::{beyond_policy, rpc, setup, URI};
use crate::common::*;

use countersign_client::ApproverClient;
use countersign_host_api::anex::AnexPending;
use countersign_host_api::approver::{DecisionOutcome, RouteView};
use serde_json::json;

const POLICY: &str = r#"
[roles]
buyer = ["ann@fabrikam.example"]
finance = ["fay@fabrikam.example", "frank@fabrikam.example"]

[[rule]]
name = "Bank details asked over ANEX"
protocol = ["anex"]
data_item = ["bank_details"]
[[rule.step]]
role = "finance"
count = 2

[unnamed_currency]
reason = "other currencies go to finance"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything else: one buyer"
[[no_rule.step]]
role = "buyer"
"#;

struct People {
    ann: ApproverClient,
    fay: ApproverClient,
    frank: ApproverClient,
}

async fn people(t: &TestHost, org: &str) -> People {
    let client =
        |p: &Party| ApproverClient::new(&t.running.base_url(), p.key.clone(), &p.id).unwrap();
    let ann = t.enroll(org, "Ann", "ann@fabrikam.example").await;
    let fay = t.enroll(org, "Fay", "fay@fabrikam.example").await;
    let frank = t.enroll(org, "Frank", "frank@fabrikam.example").await;
    t.host()
        .load_authority(org, POLICY, "the test")
        .await
        .unwrap();
    People {
        ann: client(&ann),
        fay: client(&fay),
        frank: client(&frank),
    }
}

/// The ANEX ask as `who` sees it: its session id, the pending ask and its
/// route, and how many approvals it has.
async fn ask_of(who: &ApproverClient) -> Option<(String, AnexPending, RouteView, usize)> {
    let summary = who.summary().await.unwrap();
    let session = summary.sessions.iter().find(|s| s.protocol == "anex")?;
    let p = session.pending.first()?;
    Some((
        session.id.clone(),
        p.anex.clone().unwrap(),
        p.route.clone().unwrap(),
        p.approvals.len(),
    ))
}

#[tokio::test]
async fn an_ask_for_bank_details_takes_two_of_finance_and_only_the_last_approval_answers() {
    let t = start(roomy_limits()).await;
    let s = setup(&t).await;
    let p = people(&t, &s.org).await;
    let (task_id, _, _) = beyond_policy(&t, &s).await;

    let (id, pending, route, given) = ask_of(&p.ann).await.unwrap();
    assert_eq!(route.reason, "Bank details asked over ANEX: rule 1");
    assert_eq!(route.policy_version, Some(1));
    assert!(!route.you_may_act, "Ann is no finance: {route:?}");
    assert_eq!(given, 0);

    // Ann is refused: the step waits on finance.
    let e = p
        .ann
        .decide_anex(
            &id,
            &p.ann.approve_anex_as(&pending, Some("buyer")).unwrap(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("finance"), "{e}");
    // Fay must sign as finance: a receipt without the role is refused.
    let e = p
        .fay
        .decide_anex(&id, &p.fay.approve_anex(&pending).unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("approver.role is absent"), "{e}");

    // Fay's approval counts; the requester hears nothing yet.
    let fays = p.fay.approve_anex_as(&pending, Some("finance")).unwrap();
    let first = p.fay.decide_anex(&id, &fays).await.unwrap();
    assert_eq!(
        first.outcome,
        DecisionOutcome::AwaitingApprovals,
        "{}",
        first.detail
    );
    assert!(first.answer.is_null());
    let (_, task) = rpc(&t, &s, "GetTask", json!({"id": task_id})).await;
    assert_eq!(task["result"]["metadata"][URI]["awaiting"], "owner");
    // The same request again answers the same.
    let again = p.fay.decide_anex(&id, &fays).await.unwrap();
    assert_eq!(again.outcome, DecisionOutcome::AwaitingApprovals);
    // One person counts once.
    let e = p
        .fay
        .decide_anex(
            &id,
            &p.fay.approve_anex_as(&pending, Some("finance")).unwrap(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("already approved"), "{e}");
    let (_, _, route, given) = ask_of(&p.frank).await.unwrap();
    assert_eq!(given, 1);
    assert!(route.you_may_act, "{route:?}");

    // Frank's approval completes the chain: the PROPOSE goes out.
    let last = p
        .frank
        .decide_anex(
            &id,
            &p.frank.approve_anex_as(&pending, Some("finance")).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(last.outcome, DecisionOutcome::Appended, "{}", last.detail);
    assert_eq!(last.answer["performative"], "PROPOSE");
    let (_, task) = rpc(&t, &s, "GetTask", json!({"id": task_id})).await;
    assert_eq!(task["result"]["metadata"][URI]["awaiting"], "counterparty");
    assert!(ask_of(&p.fay).await.is_none(), "nothing waits any more");
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_finance_holders_decline_decides_the_ask_at_once() {
    let t = start(roomy_limits()).await;
    let s = setup(&t).await;
    let p = people(&t, &s.org).await;
    let (task_id, _, _) = beyond_policy(&t, &s).await;
    let (id, pending, _, _) = ask_of(&p.fay).await.unwrap();
    // Ann holds no role of the step: her decline is refused too.
    let mut no = p.ann.decline_anex(&pending, "not ours to share").unwrap();
    no.decision_id = uuid::Uuid::new_v4().to_string();
    let e = p.ann.decide_anex(&id, &no).await.unwrap_err().to_string();
    assert!(e.contains("finance"), "{e}");
    let mut decline = p
        .fay
        .anex_request_as(
            countersign_host_api::approver::DecisionAction::Decline,
            &pending,
            &countersign_client::as_asked(&pending),
            Some("finance"),
            None,
        )
        .unwrap();
    decline.reason = Some("we share bank details only after a signed contract".into());
    let decided = p.fay.decide_anex(&id, &decline).await.unwrap();
    assert_eq!(
        decided.outcome,
        DecisionOutcome::Appended,
        "{}",
        decided.detail
    );
    assert_eq!(decided.answer["performative"], "REFUSE");
    let (_, task) = rpc(&t, &s, "GetTask", json!({"id": task_id})).await;
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_REJECTED");
    t.running.shutdown().await;
}
