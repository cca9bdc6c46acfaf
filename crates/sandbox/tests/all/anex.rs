//! The sandbox's ANEX onboarding agent: an ask beyond the sandbox's policy
//! on first launch, and a narrower ask after a refusal.

use countersign_engine::{DecideAction, DecideRequest, Engine, ProposalDetail, ProposalView};
use serde_json::Value;

use crate::launch::launch;

const RETENTION: &str = "no retention beyond 90 days";
const NO_SHARING: &str = "no sharing with third parties";

fn ask_of(view: &ProposalView) -> &countersign_engine::AnexAskView {
    match &view.detail {
        ProposalDetail::AnexAsk(a) => a,
        other => panic!("not an ANEX ask: {other:?}"),
    }
}

fn request(
    view: &ProposalView,
    action: DecideAction,
    reason: Option<&str>,
    counter: Option<Value>,
) -> DecideRequest {
    DecideRequest {
        host_id: view.item.host_id.clone(),
        session_id: view.item.session_id.clone(),
        in_response_to: view.item.event_hash.clone(),
        action,
        reason: reason.map(str::to_owned),
        counter,
    }
}

#[tokio::test]
async fn the_sandbox_meets_a_new_user_with_an_anex_ask_and_its_agent_reacts_to_a_refusal() {
    let data = tempfile::tempdir().unwrap();
    let mut config = crate::launch::config_in(data.path());
    config.poll_interval = std::time::Duration::from_millis(300);
    let engine = Engine::open(config).unwrap();
    let engine = launch(engine).await;
    let mut ask = None;
    for _ in 0..60 {
        ask = engine
            .inbox()
            .await
            .unwrap()
            .into_iter()
            .find(|i| i.protocol == "anex");
        if ask.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    let item = ask.expect("the sandbox's onboarding agent asks on first launch");
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    let detail = ask_of(&view);
    assert_eq!(detail.requester.owner, "Northwind Supplies Ltd");
    let beyond: Vec<&str> = detail
        .items
        .iter()
        .filter(|i| i.within_policy == Some(false))
        .map(|i| i.item.as_str())
        .collect();
    assert_eq!(beyond, vec!["bank_details"]);
    assert_eq!(
        detail.promises_offered,
        vec![RETENTION.to_owned(), NO_SHARING.to_owned()]
    );
    engine
        .decide(request(
            &view,
            DecideAction::Decline,
            Some("Bank details only once a contract is signed."),
            None,
        ))
        .await
        .unwrap();
    // The agent asks again without the bank details; the policy answers at
    // once and the agent accepts: a second conversation, agreed, with no
    // decision left for the person.
    let mut agreed = None;
    let mut agreed_terms = None;
    for _ in 0..60 {
        engine.refresh().await.unwrap();
        let sessions = engine
            .sessions(countersign_engine::HistoryFilter::default())
            .await
            .unwrap();
        if let Some(row) = sessions
            .iter()
            .find(|r| r.protocol == "anex" && r.session_id != item.session_id)
        {
            let detail = engine
                .session_detail(&row.host_id, &row.session_id)
                .await
                .unwrap();
            if let Some(t) = detail.timeline.iter().find(|t| t.kind == "ACCEPT-PROPOSAL") {
                agreed = Some(t.summary.clone());
                agreed_terms = detail.agreed.clone();
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert_eq!(
        agreed.as_deref(),
        Some("Accepted terms: legal_name, tax_id, ap_contact; promises: no retention beyond 90 days; no sharing with third parties")
    );
    // The session's page says what was agreed, every item and promise.
    let terms: Vec<(String, String)> = agreed_terms
        .expect("the agreed terms")
        .terms
        .into_iter()
        .map(|t| (t.name, t.value))
        .collect();
    // Compared as a set: serde_json keeps an object's members sorted, or
    // as written when a crate of the build turns on `preserve_order`.
    let mut names: Vec<&str> = terms.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "data.ap_contact",
            "data.legal_name",
            "data.tax_id",
            "promises[0]",
            "promises[1]"
        ],
        "{terms:?}"
    );
    assert!(engine
        .inbox()
        .await
        .unwrap()
        .iter()
        .all(|i| i.protocol != "anex"));
    engine.shutdown().await;
}
