//! Consoles deciding one step of a chain at the same moment (issue 30,
//! item 4): on the in-process host, and through nginx in front of three
//! host processes on one PostgreSQL database when the deployment run reruns
//! this suite, so the approvals race across processes. Whatever the order,
//! a step takes exactly the approvals it needs, one person counts once
//! (also from two consoles of their own), no step is skipped, and every
//! console that lost the race is told so; nothing is lost or doubled.

use countersign_engine::{DecideAction, DecideRequest, DecisionResult, Engine, InboxItem};

use crate::common::*;

const THREE_TIER: &str = include_str!("../../../../docs/examples/authority-three-tier.toml");

async fn row(engine: &Engine) -> InboxItem {
    engine.refresh().await.unwrap();
    engine
        .inbox()
        .await
        .unwrap()
        .into_iter()
        .find(|i| !i.is_draft)
        .expect("the vendor's offer in the inbox")
}

fn approve(item: &InboxItem) -> DecideRequest {
    DecideRequest {
        host_id: item.host_id.clone(),
        session_id: item.session_id.clone(),
        in_response_to: item.event_hash.clone(),
        action: DecideAction::Approve,
        reason: None,
        counter: None,
    }
}

/// Every console approves what it sees, all at once; the results in order.
async fn all_at_once(
    consoles: &[&Engine],
) -> Vec<Result<DecisionResult, countersign_engine::DecideError>> {
    let mut seen = Vec::new();
    for c in consoles {
        seen.push(row(c).await);
    }
    let tasks: Vec<_> = consoles
        .iter()
        .zip(seen)
        .map(|(c, item)| {
            let console = (*c).clone();
            tokio::spawn(async move { console.decide(approve(&item)).await })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// A race lost is told in the host's or the chain's words: never a
/// silence, never a decision left to send again.
fn told(lost: &countersign_engine::DecideError) {
    assert!(
        !["unreachable", "unauthorized", "locked"].contains(&lost.code()),
        "{lost:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn consoles_approving_one_step_at_once_count_each_person_once_and_skip_no_step() {
    let world = World::start().await;
    world
        .host()
        .load_authority(&world.org, THREE_TIER, "Ivy Admin")
        .await
        .unwrap();
    // Ann at two consoles of her own, Bob: the buyers. Fay and Frank: finance.
    let (_a, ann) = world.engine("ann@fabrikam.example").await;
    let (_a2, ann_again) = world.engine("ann@fabrikam.example").await;
    let (_b, bob) = world.engine("bob@fabrikam.example").await;
    let (_f, fay) = world.engine("fay@fabrikam.example").await;
    let (_g, frank) = world.engine("frank@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    // 500 seats at 100: 50,000 USD, a buyer then finance.
    submit(&agent, &session, anp::EventKind::Offer, offer(100, DAY)).await;

    // Step 1 (any one buyer): three consoles, two people, one approval.
    let step1 = all_at_once(&[&ann, &ann_again, &bob]).await;
    let counted: Vec<&DecisionResult> = step1.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(
        counted.len(),
        1,
        "exactly one buyer's approval counts: {step1:?}"
    );
    assert_eq!(counted[0].outcome, "awaiting_approvals", "{step1:?}");
    step1.iter().filter_map(|r| r.as_ref().err()).for_each(told);
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().all(|e| e.kind != anp::EventKind::Accept));

    // Step 2 (any one of finance): two consoles at once, one accept.
    let step2 = all_at_once(&[&fay, &frank]).await;
    let appended: Vec<&DecisionResult> = step2
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .filter(|d| d.outcome == "appended")
        .collect();
    assert_eq!(appended.len(), 1, "exactly one accept: {step2:?}");
    step2.iter().filter_map(|r| r.as_ref().err()).for_each(told);
    let log = agent.log(&session, None).await.unwrap();
    let accepts: Vec<_> = log
        .events
        .iter()
        .filter(|e| e.kind == anp::EventKind::Accept)
        .collect();
    assert_eq!(accepts.len(), 1, "one accept on the host's log");
    let payload = &accepts[0].payload;
    let mut by: Vec<String> = std::iter::once(&payload["approval"])
        .chain(payload["approvals"].as_array().into_iter().flatten())
        .filter_map(|a| a["approved_by"].as_str().map(str::to_owned))
        .collect();
    by.sort();
    assert_eq!(by.len(), 2, "one buyer and one of finance: {payload}");
    by.dedup();
    assert_eq!(by.len(), 2, "two distinct people: {payload}");
    let buyers = ["ann@fabrikam.example", "bob@fabrikam.example"];
    let finance = ["fay@fabrikam.example", "frank@fabrikam.example"];
    assert!(by.iter().any(|p| buyers.contains(&p.as_str())), "{by:?}");
    assert!(by.iter().any(|p| finance.contains(&p.as_str())), "{by:?}");
    // The host recorded exactly those two approvals.
    let (recorded, _) = world
        .host_sql(
            "SELECT approver_id FROM approvals WHERE session_id = $1",
            &[SqlArg::Text(&session)],
        )
        .await;
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    // Every console agrees the offer is accepted and verified.
    for console in [&ann, &ann_again, &bob, &fay, &frank] {
        console.refresh().await.unwrap();
        let host_id = console.hosts().await.unwrap()[0].host_id.clone();
        let detail = console.session_detail(&host_id, &session).await.unwrap();
        assert_eq!(detail.row.status, "accepted");
        assert_eq!(
            detail.verification.state,
            countersign_engine::Verification::Verified
        );
    }
}
