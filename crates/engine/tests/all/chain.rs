//! A chain of approvals (docs/authority.md) as the console meets it: the
//! host routes an ANP offer through the org's policy of authority, the
//! inbox row carries the chain as it stands for this person, and the
//! engine signs nothing the chain would refuse.

use countersign_engine::{DecideAction, DecideRequest, Engine, InboxItem};

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

#[tokio::test]
async fn the_inbox_shows_whose_turn_it_is_and_nothing_out_of_turn_is_signed() {
    let world = World::start().await;
    let (_a, ann) = world.engine("ann@fabrikam.example").await;
    let (_f, fay) = world.engine("fay@fabrikam.example").await;
    let (told_ann, told_fay) = (recorded(&ann), recorded(&fay));
    world
        .host()
        .load_authority(&world.org, THREE_TIER, "Ivy Admin")
        .await
        .unwrap();
    let (agent, session) = world.vendor("Northwind").await;
    // 500 seats at 100: 50,000 USD, a buyer then finance.
    submit(&agent, &session, anp::EventKind::Offer, offer(100, DAY)).await;

    let seen_by_fay = row(&fay).await;
    let chain = seen_by_fay
        .chain
        .clone()
        .expect("a routed offer carries its chain");
    assert_eq!(chain.reason, "Above 10,000 USD: rule 2");
    assert_eq!(chain.policy_version, Some(1));
    assert_eq!(chain.current_step, Some(1));
    assert!(!chain.you_may_approve && !chain.you_may_decide);
    assert_eq!(seen_by_fay.approvals_required, 2);
    // It waits on the buyer, not on Fay: her count (tray, title) leaves it
    // out, and nothing calls her yet.
    assert_eq!(fay.app_state().await.unwrap().waiting, 0);
    assert_eq!(told_fay.pending.lock().unwrap().len(), 0);
    // Out of turn: refused before anything is signed or sent.
    let refused = fay.decide(approve(&seen_by_fay)).await.unwrap_err();
    assert_eq!(refused.code(), "not_your_turn", "{refused}");
    assert_eq!(
        refused.to_string(),
        "Not yours to decide now: step 1 of its chain of approvals waits on buyer, and you hold none of those roles. Nothing was signed or sent."
    );
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().all(|e| e.kind != anp::EventKind::Accept));

    // Ann, a buyer, approves: the chain moves on to finance.
    let seen_by_ann = row(&ann).await;
    assert_eq!(ann.app_state().await.unwrap().waiting, 1);
    assert_eq!(
        told_ann.pending.lock().unwrap().len(),
        1,
        "Ann is told at once"
    );
    assert!(seen_by_ann.chain.as_ref().unwrap().you_may_approve);
    let one = ann.decide(approve(&seen_by_ann)).await.unwrap();
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    assert_eq!(
        one.detail,
        "Approved at step 1 as buyer; step 2 waits on finance (1 more)."
    );
    // Ann's approval counts already: she may not approve again.
    let again = row(&ann).await;
    assert!(!again.chain.as_ref().unwrap().you_may_approve);

    assert_eq!(
        ann.app_state().await.unwrap().waiting,
        0,
        "no longer on Ann"
    );
    // Now it is Fay's turn, and her approval completes it.
    let seen_by_fay = row(&fay).await;
    assert_eq!(fay.app_state().await.unwrap().waiting, 1);
    // Her turn is when she hears of it, once.
    assert_eq!(told_fay.pending.lock().unwrap().len(), 1);
    fay.refresh().await.unwrap();
    assert_eq!(told_fay.pending.lock().unwrap().len(), 1);
    let chain = seen_by_fay.chain.clone().unwrap();
    assert_eq!(chain.current_step, Some(2));
    assert!(chain.you_may_approve);
    assert_eq!(
        chain.steps[0].parts[0].approved_by,
        ["ann@fabrikam.example"]
    );
    let two = fay.decide(approve(&seen_by_fay)).await.unwrap();
    assert_eq!(two.outcome, "appended", "{}", two.detail);
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().any(|e| e.kind == anp::EventKind::Accept));

    // History and the exports name the chain each decision was made on:
    // the rule and policy version, the step and role, who approved before.
    let detail = fay
        .session_detail(&seen_by_fay.host_id, &session)
        .await
        .unwrap();
    let made = detail.decisions[0].chain.clone().expect("the chain");
    assert_eq!(made.reason, "Above 10,000 USD: rule 2");
    assert_eq!(made.policy_version, Some(1));
    assert_eq!(
        (made.step, made.role.as_deref()),
        (Some(2), Some("finance"))
    );
    assert_eq!(made.steps[0].parts[0].approved_by, ["ann@fabrikam.example"]);
    let json = fay
        .export_session(
            &seen_by_fay.host_id,
            &session,
            countersign_engine::ExportFormat::Json,
        )
        .await
        .unwrap();
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json.path).unwrap()).unwrap();
    let chain = &exported["decisions"][0]["chain"];
    assert_eq!(chain["role"], "finance", "{chain}");
    assert_eq!(chain["step"], 2);
    assert_eq!(chain["policy_version"], 1);
    let csv = fay
        .export_session(
            &seen_by_fay.host_id,
            &session,
            countersign_engine::ExportFormat::Csv,
        )
        .await
        .unwrap();
    let rows = csv_rows(&std::fs::read_to_string(&csv.path).unwrap());
    let named = |term: &str| {
        rows.iter()
            .find(|r| r[0] == "decision" && r[10] == term)
            .map(|r| r[11].clone())
    };
    assert_eq!(named("chain.role").as_deref(), Some("finance"));
    assert_eq!(named("chain.step").as_deref(), Some("2"));
    assert_eq!(
        named("chain.reason").as_deref(),
        Some("Above 10,000 USD: rule 2")
    );
}

/// An approval as History lists the host's record: who, step, role, for whom.
type Recorded = (String, Option<u32>, Option<String>, Option<String>);

#[tokio::test]
async fn a_stand_in_decides_for_the_holder_and_history_says_for_whom() {
    let world = World::start().await;
    let (_a, ann) = world.engine("ann@fabrikam.example").await;
    let (_f, fay) = world.engine("fay@fabrikam.example").await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    world
        .host()
        .load_authority(&world.org, THREE_TIER, "Ivy Admin")
        .await
        .unwrap();
    // Fay (finance) lets Grace, who holds no role, stand in for her today.
    let mine = fay.stand_ins().await.unwrap();
    let here = &mine.hosts[0];
    assert_eq!(here.my_roles, ["finance"]);
    assert!(here
        .colleagues
        .iter()
        .any(|c| c.email == "grace@fabrikam.example"));
    let today = mine.today.clone();
    // Refused before anything is signed: no role, days the wrong way round.
    let give = |roles: Vec<String>, from: &str, to: &str| countersign_engine::GiveStandIn {
        host_id: here.host_id.clone(),
        to: "grace@fabrikam.example".into(),
        roles,
        from_date: from.into(),
        to_date: to.into(),
    };
    let e = fay
        .give_stand_in(give(vec![], &today, &today))
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("Choose at least one"), "{e}");
    let e = fay
        .give_stand_in(give(vec!["finance".into()], &today, "2000-01-01"))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Until (2000-01-01) is before From"),
        "{e}"
    );
    // The host's refusal, in its words: a role Fay does not hold.
    let e = fay
        .give_stand_in(give(vec!["cfo".into()], &today, &today))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("you do not hold \"cfo\""), "{e}");
    let given = fay
        .give_stand_in(give(vec!["finance".into()], &today, &today))
        .await
        .unwrap();
    assert_eq!(
        (given.state.as_str(), given.to_name.as_str()),
        ("in_force", "Grace")
    );
    let graces = grace.stand_ins().await.unwrap();
    assert_eq!(graces.hosts[0].received.len(), 1);
    assert_eq!(graces.hosts[0].received[0].from, "fay@fabrikam.example");
    assert!(graces.hosts[0].my_roles.is_empty());

    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, anp::EventKind::Offer, offer(100, DAY)).await;
    let seen_by_ann = row(&ann).await;
    let one = ann.decide(approve(&seen_by_ann)).await.unwrap();
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    // Step 2 waits on finance: on Grace, standing in for Fay.
    let seen_by_grace = row(&grace).await;
    let chain = seen_by_grace.chain.clone().unwrap();
    assert!(chain.you_may_approve);
    assert_eq!(chain.your_role.as_deref(), Some("finance"));
    let stand_in = chain.your_stand_in.clone().expect("Grace stands in");
    assert_eq!(stand_in.for_person, "fay@fabrikam.example");
    assert_eq!(
        stand_in.delegation,
        format!("urn:countersign:delegation:{}", given.delegation_id)
    );
    assert_eq!(grace.app_state().await.unwrap().waiting, 1);
    let two = grace.decide(approve(&seen_by_grace)).await.unwrap();
    assert_eq!(two.outcome, "appended", "{}", two.detail);
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().any(|e| e.kind == anp::EventKind::Accept));
    // History and the CSV say for whom.
    let detail = grace
        .session_detail(&seen_by_grace.host_id, &session)
        .await
        .unwrap();
    let made = detail.decisions[0].chain.clone().unwrap();
    assert_eq!(
        made.stand_in.map(|s| s.for_person).as_deref(),
        Some("fay@fabrikam.example")
    );
    let csv = grace
        .export_session(
            &seen_by_grace.host_id,
            &session,
            countersign_engine::ExportFormat::Csv,
        )
        .await
        .unwrap();
    let rows = csv_rows(&std::fs::read_to_string(&csv.path).unwrap());
    assert!(rows
        .iter()
        .any(|r| r[0] == "decision" && r[10] == "chain.for" && r[11] == "fay@fabrikam.example"));

    // Fay's console, where nothing was decided, reads the host's record of
    // who approved as what once the log carries the accept.
    fay.refresh().await.unwrap();
    let fays_host = fay.stand_ins().await.unwrap().hosts[0].host_id.clone();
    let detail = fay.session_detail(&fays_host, &session).await.unwrap();
    assert!(
        detail.decisions.is_empty(),
        "nothing decided at Fay's console"
    );
    let record: Vec<Recorded> = detail
        .host_approvals
        .iter()
        .map(|a| {
            (
                a.approved_by.clone(),
                a.step,
                a.role.clone(),
                a.for_person.clone(),
            )
        })
        .collect();
    assert_eq!(
        record,
        [
            (
                "ann@fabrikam.example".to_owned(),
                Some(1),
                Some("buyer".to_owned()),
                None
            ),
            (
                "grace@fabrikam.example".to_owned(),
                Some(2),
                Some("finance".to_owned()),
                Some("fay@fabrikam.example".to_owned())
            ),
        ]
    );
    assert_eq!(
        detail.host_approvals[1].reason.as_deref(),
        Some("Above 10,000 USD: rule 2")
    );
    assert_eq!(detail.host_approvals[1].policy_version, Some(1));
    let csv = fay
        .export_session(&fays_host, &session, countersign_engine::ExportFormat::Csv)
        .await
        .unwrap();
    let rows = csv_rows(&std::fs::read_to_string(&csv.path).unwrap());
    assert!(rows.iter().any(|r| r[0] == "host_approval"
        && r[3] == "grace@fabrikam.example"
        && r[10] == "approval.for"
        && r[11] == "fay@fabrikam.example"));
    let json = fay
        .export_session(&fays_host, &session, countersign_engine::ExportFormat::Json)
        .await
        .unwrap();
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json.path).unwrap()).unwrap();
    assert_eq!(exported["host_approvals"][1]["role"], "finance");

    // Grace gives it up; Fay sees it revoked, by Grace.
    let revoked = grace
        .revoke_stand_in(&graces.hosts[0].host_id, &given.delegation_id)
        .await
        .unwrap();
    assert_eq!(revoked.state, "revoked");
    let fays = fay.stand_ins().await.unwrap();
    assert_eq!(
        fays.hosts[0].given[0].revoked_by.as_deref(),
        Some("grace@fabrikam.example")
    );
}

/// Finance has a minute, then the CFO may approve too.
const ESCALATING: &str = r#"
[roles]
buyer = ["ann@fabrikam.example"]
finance = ["fay@fabrikam.example"]
cfo = ["carol@fabrikam.example"]

[[rule]]
name = "Above 10,000 USD"
amount = [{ currency = "USD", above = "10000" }]
[[rule.step]]
role = "buyer"
[[rule.step]]
role = "finance"
respond_within = "1m"
escalate_to = "cfo"

[unnamed_currency]
reason = "other currencies"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything else"
[[no_rule.step]]
role = "buyer"
"#;

#[tokio::test]
async fn an_overdue_step_is_offered_to_its_escalation_role_and_its_own_role_is_told_once() {
    if through_deployment() {
        // The deployment's host processes keep their own clocks; the host
        // suite tests escalation on both stores under an injected clock.
        return;
    }
    let world = World::start().await;
    world
        .host()
        .load_authority(&world.org, ESCALATING, "Ivy Admin")
        .await
        .unwrap();
    let (_a, ann) = world.engine("ann@fabrikam.example").await;
    let (_f, fay) = world.engine("fay@fabrikam.example").await;
    let (_c, carol) = world.engine("carol@fabrikam.example").await;
    let (told_fay, told_carol) = (recorded(&fay), recorded(&carol));
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, anp::EventKind::Offer, offer(100, DAY)).await;
    let one = ann.decide(approve(&row(&ann).await)).await.unwrap();
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    // Fay's turn: she is told; the CFO is not, and may not act.
    assert!(row(&fay).await.chain.unwrap().you_may_approve);
    assert_eq!(told_fay.pending.lock().unwrap().len(), 1);
    assert!(!row(&carol).await.chain.unwrap().you_may_approve);
    assert_eq!(told_carol.pending.lock().unwrap().len(), 0);
    assert_eq!(told_fay.reminders.lock().unwrap().len(), 0);

    // A minute and a second later (the host's clock; within the window its
    // signed requests allow): the step is overdue.
    world
        .host()
        .clock()
        .advance(std::time::Duration::from_secs(61));
    let chain = row(&fay).await.chain.unwrap();
    assert!(chain.steps[1].escalated, "{chain:?}");
    assert!(chain.you_may_approve, "finance still may");
    // Fay is told once that it is overdue and offered to the CFO too.
    let overdue = told_fay.reminders.lock().unwrap().clone();
    assert_eq!(overdue.len(), 1, "{overdue:?}");
    assert!(
        overdue[0]
            .title
            .contains("past its response time: offered to cfo too"),
        "{}",
        overdue[0].title
    );
    fay.refresh().await.unwrap();
    assert_eq!(told_fay.reminders.lock().unwrap().len(), 1, "once");
    // The CFO's turn has come: told as for any step, and the approval counts.
    let carols = row(&carol).await;
    let chain = carols.chain.clone().unwrap();
    assert!(chain.you_may_approve);
    assert_eq!(chain.your_role.as_deref(), Some("cfo"));
    assert_eq!(told_carol.pending.lock().unwrap().len(), 1);
    assert_eq!(
        told_carol.reminders.lock().unwrap().len(),
        0,
        "not told it is overdue: it is theirs now"
    );
    let two = carol.decide(approve(&carols)).await.unwrap();
    assert_eq!(two.outcome, "appended", "{}", two.detail);
}
