//! A proposal once decided: the offer view reads as decided (who, when, the
//! outcome, the event it appended and whether that event is verified), for
//! this console's decisions and for answers the log shows from elsewhere;
//! for gate sessions (Concordia, OANP), as the host says another console
//! decided the request (by whom, why), completed this console's approval,
//! or let it expire, before the org's agent answers on the transcript.

use anp::EventKind;
use countersign_engine::*;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn an_approved_offer_reads_as_decided_with_the_accept_it_appended() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap().remove(0);
    let before = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(before.pending);
    assert_eq!(before.decision, None, "nothing decided yet");

    let result = decide(
        &engine,
        &item.host_id,
        &session,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    let log = agent.log(&session, None).await.unwrap();
    let accept = log
        .events
        .iter()
        .find(|e| e.kind == EventKind::Accept)
        .unwrap();
    let appended = result.appended.clone().expect("the accept it appended");
    assert_eq!(appended.seq, accept.seq);
    assert_eq!(appended.event_hash, accept.event_hash);
    assert_eq!(appended.kind, "accept");
    assert!(appended.verified, "verified by the refresh after deciding");

    // The same offer, asked for again after it left the pending set: no
    // "not found", but what became of it.
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(!view.pending);
    assert_eq!(
        total(&view.item),
        "570000",
        "the offer itself is still shown"
    );
    assert!(!view.item.unread);
    let decision = view.decision.expect("a decision");
    assert_eq!(decision.action.as_deref(), Some("approve"));
    assert_eq!(decision.outcome, "appended");
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Ada (ada@fabrikam.example)"),
        "the profile's name with the email it approves as"
    );
    assert_eq!(
        decision.countered, None,
        "an approval offers nothing instead"
    );
    assert_eq!(
        decision.decision_id.as_deref(),
        Some(result.decision_id.as_str())
    );
    assert!(anp::api::parse_timestamp(decision.at.as_deref().unwrap()).is_some());
    assert_eq!(decision.appended, Some(appended));
    let page = engine.inbox_page(&InboxQuery::default()).await.unwrap();
    assert_eq!((page.total, page.unread), (0, 0));
    assert_eq!(engine.app_state().await.unwrap().unread, 0);
}

#[tokio::test]
async fn a_decline_and_a_counter_name_the_events_they_appended() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (north, declined) = world.vendor("Northwind").await;
    let (tail, countered) = world.vendor("Tailspin").await;
    submit(&north, &declined, EventKind::Offer, offer(1140, DAY)).await;
    submit(&tail, &countered, EventKind::Offer, offer(900, DAY)).await;
    engine.refresh().await.unwrap();
    let inbox = engine.inbox().await.unwrap();
    let of = |session: &str| inbox.iter().find(|i| i.session_id == session).unwrap();

    let (one, two) = (of(&declined), of(&countered));
    decide(
        &engine,
        &one.host_id,
        &declined,
        &one.event_hash,
        DecideAction::Decline,
        None,
    )
    .await;
    decide(
        &engine,
        &two.host_id,
        &countered,
        &two.event_hash,
        DecideAction::Counter,
        Some(offer(850, DAY)),
    )
    .await;
    for (item, session, kind, action) in [
        (one, &declined, "decline", "decline"),
        (two, &countered, "counter_offer", "counter"),
    ] {
        let view = engine
            .proposal_view(&item.host_id, session, &item.event_hash)
            .await
            .unwrap();
        let decision = view.decision.unwrap();
        assert_eq!(decision.action.as_deref(), Some(action));
        assert_eq!(decision.outcome, "appended");
        let countered = decision.countered.clone();
        let appended = decision.appended.unwrap();
        assert_eq!(appended.kind, kind);
        assert_eq!(appended.seq, item.seq + 1, "right after the offer");
        assert!(appended.verified);
        match (action, countered) {
            ("decline", None) => {}
            ("counter", Some(ProposalDiff::AnpOffer(diff))) => {
                // The counter as sent (850) beside the offer it answered (900).
                assert_eq!(unit_prices(&diff), [(Some("900"), Some("850"))], "{diff:?}");
            }
            (action, countered) => panic!("{action}: {countered:?}"),
        }
    }
}

/// Grace decides a vendor's offer (priced `price`) at her console; what
/// Ada's console, which saw the same offer pending, then shows of it.
async fn decided_elsewhere(
    price: u64,
    action: DecideAction,
    counter: Option<serde_json::Value>,
) -> ProposalDecision {
    let world = World::start().await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(price, DAY)).await;
    ada.refresh().await.unwrap();
    grace.refresh().await.unwrap();
    let item = ada.inbox().await.unwrap().remove(0);
    let graces = grace.inbox().await.unwrap().remove(0);
    decide(
        &grace,
        &graces.host_id,
        &session,
        &graces.event_hash,
        action,
        counter,
    )
    .await;
    ada.refresh().await.unwrap();
    let view = ada
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(!view.pending);
    view.decision.expect("what became of it")
}

/// The unit prices an ANP diff changes, old beside new.
fn unit_prices(diff: &AnpOfferDiff) -> Vec<(Option<&str>, Option<&str>)> {
    diff.line_items
        .iter()
        .flat_map(|l| &l.fields)
        .filter(|f| f.field == "unit_price")
        .map(|f| (f.old.as_deref(), f.new.as_deref()))
        .collect()
}

#[tokio::test]
async fn an_offer_approved_elsewhere_shows_the_accept_on_the_log() {
    let decision = decided_elsewhere(1140, DecideAction::Approve, None).await;
    assert_eq!(decision.outcome, "answered", "not by this console");
    assert_eq!(decision.action.as_deref(), Some("approve"));
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("grace@fabrikam.example")
    );
    assert_eq!(decision.decision_id, None);
    assert_eq!(decision.countered, None);
    assert_eq!(decision.appended.unwrap().kind, "accept");
}

/// An ANP counter made at another console is only on the log: its
/// counter-offer event carries the terms, shown beside the offer.
#[tokio::test]
async fn an_offer_countered_elsewhere_shows_the_counter_offer_on_the_log() {
    let decision = decided_elsewhere(900, DecideAction::Counter, Some(offer(820, DAY))).await;
    assert_eq!(
        (decision.outcome.as_str(), decision.action.as_deref()),
        ("answered", Some("counter")),
        "not by this console"
    );
    let Some(ProposalDiff::AnpOffer(diff)) = decision.countered else {
        panic!("the counter's terms: {:?}", decision.countered);
    };
    assert_eq!(unit_prices(&diff), [(Some("900"), Some("820"))], "{diff:?}");
}

#[tokio::test]
async fn a_replaced_offer_says_which_newer_one_replaced_it() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let first = engine.inbox().await.unwrap().remove(0);
    submit(&agent, &session, EventKind::Offer, offer(1100, DAY)).await;
    engine.refresh().await.unwrap();
    let view = engine
        .proposal_view(&first.host_id, &session, &first.event_hash)
        .await
        .unwrap();
    assert!(!view.pending);
    let decision = view.decision.unwrap();
    assert_eq!(decision.outcome, "withdrawn");
    assert_eq!(decision.action, None);
    assert!(
        decision.detail.contains(&format!("seq {}", first.seq + 1)),
        "{}",
        decision.detail
    );
}

#[tokio::test]
async fn an_approval_waiting_for_another_approver_is_shown_as_such() {
    let world = World::start().await;
    world.load_policy("100000", 2, json!([])).await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap().remove(0);
    let result = decide(
        &engine,
        &item.host_id,
        &session,
        &item.event_hash,
        DecideAction::Approve,
        None,
    )
    .await;
    assert_eq!(result.outcome, "awaiting_approvals");
    assert_eq!(result.appended, None, "nothing appended yet");
    let view = engine
        .proposal_view(&item.host_id, &session, &item.event_hash)
        .await
        .unwrap();
    assert!(view.pending, "it still waits, for the second approver");
    assert_eq!(view.item.approvals_given, 1);
    let decision = view.decision.unwrap();
    assert_eq!(decision.outcome, "awaiting_approvals");
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Ada (ada@fabrikam.example)")
    );
}

// ---- gate sessions decided through the host at another console ----

/// The one pending decision of gate session `id` at `engine`, after a refresh.
async fn gate_row(engine: &Engine, id: &str) -> InboxItem {
    engine.refresh().await.unwrap();
    let rows: Vec<InboxItem> = engine
        .inbox()
        .await
        .unwrap()
        .into_iter()
        .filter(|i| i.session_id == id)
        .collect();
    assert_eq!(rows.len(), 1, "one pending decision in {id}: {rows:?}");
    rows.into_iter().next().unwrap()
}

fn gate_decision(item: &InboxItem, action: DecideAction, reason: Option<&str>) -> DecideRequest {
    DecideRequest {
        host_id: item.host_id.clone(),
        session_id: item.session_id.clone(),
        in_response_to: item.event_hash.clone(),
        action,
        reason: reason.map(str::to_owned),
        counter: None,
    }
}

/// What `engine` shows became of `item`, after a refresh: it has left the
/// pending set.
async fn became(engine: &Engine, item: &InboxItem) -> ProposalDecision {
    engine.refresh().await.unwrap();
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    assert!(!view.pending, "{view:?}");
    view.decision.expect("what became of it")
}

/// A Concordia gate request pending at two consoles, Ada's and Grace's.
/// Bind `_world` and `_dirs` by name when destructuring: they keep the
/// host and the consoles' folders alive.
struct AskedAtTwo {
    _world: World,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    ada: Engine,
    grace: Engine,
    agent: countersign_client::GateClient,
    talk: crate::gate::Talk,
    /// The request as Ada's inbox lists it.
    item: InboxItem,
    /// The same request in Grace's.
    graces: InboxItem,
}

async fn asked_at_two(session: &str, request_id: &str) -> AskedAtTwo {
    let world = World::start().await;
    let (a, ada) = world.engine("ada@fabrikam.example").await;
    let (g, grace) = world.engine("grace@fabrikam.example").await;
    let agent = crate::gate::gate_agent(&world).await;
    let (talk, i) = crate::gate::Talk::bargained(session, 86400);
    crate::gate::mirror_and_ask(&agent, &talk, i, request_id).await;
    let id = format!("concordia:{}", talk.session_id);
    let item = gate_row(&ada, &id).await;
    let graces = gate_row(&grace, &id).await;
    AskedAtTwo {
        _world: world,
        _dirs: (a, g),
        ada,
        grace,
        agent,
        talk,
        item,
        graces,
    }
}

#[tokio::test]
async fn a_concordia_request_declined_at_another_console_reads_declined_by_that_approver_with_the_reason(
) {
    let AskedAtTwo {
        ada,
        grace,
        agent,
        talk,
        item,
        graces,
        _world,
        _dirs,
    } = asked_at_two("ses_declined_elsewhere", "req-1").await;

    let reason = "Above our benchmark. <img src=x onerror=alert(1)>";
    let result = grace
        .decide(gate_decision(&graces, DecideAction::Decline, Some(reason)))
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);

    // Ada's console: the transcript has not moved (the agent has not
    // answered yet), only the host knows.
    let decision = became(&ada, &item).await;
    assert_eq!(decision.outcome, "decided", "{decision:?}");
    assert_eq!(decision.action.as_deref(), Some("decline"));
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Grace (grace@fabrikam.example)")
    );
    assert_eq!(decision.reason.as_deref(), Some(reason), "as written");
    assert_eq!(decision.decision_id, None, "not decided at this console");
    assert!(anp::api::parse_timestamp(decision.at.as_deref().unwrap()).is_some());
    assert_eq!(decision.appended, None, "nothing on the transcript yet");

    // The agent answers with its own counter: the view names it, still
    // declined by Grace.
    let mut talk = talk;
    let n = talk.messages.len();
    talk.say(
        crate::gate::BUYER,
        "negotiate.counter",
        crate::gate::Talk::offer("1900", 86400),
    );
    agent
        .append(&talk.session_id, &talk.head(n), &talk.messages[n..])
        .await
        .unwrap();
    let decision = became(&ada, &item).await;
    assert_eq!(decision.outcome, "decided");
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Grace (grace@fabrikam.example)")
    );
    let appended = decision.appended.expect("the agent's answer");
    assert_eq!((appended.seq, appended.verified), (n as u64 + 1, true));
}

#[tokio::test]
async fn a_concordia_request_countered_at_another_console_shows_the_terms_offered_instead() {
    let AskedAtTwo {
        ada,
        grace,
        item,
        graces,
        _world,
        _dirs,
        ..
    } = asked_at_two("ses_countered_elsewhere", "req-3").await;

    let terms = crate::gate::Talk::offer("1900", 86400)["terms"].clone();
    let result = grace
        .decide(DecideRequest {
            counter: Some(terms),
            ..gate_decision(&graces, DecideAction::Counter, Some("Meet us at 1900."))
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    // Grace's console shows her counter as she sent it.
    let hers = became(&grace, &graces).await;
    assert_eq!(hers.outcome, "appended");
    assert!(hers.countered.is_some(), "{hers:?}");

    // Ada's: the host's record of Grace's counter, beside the seller's 2000.
    let decision = became(&ada, &item).await;
    assert_eq!(
        (decision.outcome.as_str(), decision.action.as_deref()),
        ("decided", Some("counter"))
    );
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Grace (grace@fabrikam.example)")
    );
    let Some(ProposalDiff::ConcordiaOffer(diff)) = decision.countered else {
        panic!("the counter's terms: {:?}", decision.countered);
    };
    let price = diff
        .terms
        .iter()
        .find(|t| t.term == "price")
        .expect("the price moved");
    let values = |t: &Option<Term>| t.as_ref().map(|t| t.value.clone());
    assert_eq!(
        (values(&price.old), values(&price.new)),
        (Some("2000".to_owned()), Some("1900".to_owned()))
    );
    assert!(
        diff.terms.iter().all(|t| t.term != "delivery"),
        "the delivery date did not change: {diff:?}"
    );
}

#[tokio::test]
async fn an_approval_here_reads_approved_by_both_once_another_console_gives_the_last_one() {
    let world = World::start().await;
    world.load_policy("1000", 2, json!([])).await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    let agent = crate::gate::gate_agent(&world).await;
    let (talk, i) = crate::gate::Talk::bargained("ses_two_consoles", 86400);
    crate::gate::mirror_and_ask(&agent, &talk, i, "req-2").await;
    let id = format!("concordia:{}", talk.session_id);
    let item = gate_row(&ada, &id).await;

    let one = ada
        .decide(gate_decision(&item, DecideAction::Approve, None))
        .await
        .unwrap();
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    let waiting = ada
        .proposal_view(&item.host_id, &id, &item.event_hash)
        .await
        .unwrap();
    assert!(waiting.pending);
    assert_eq!(
        waiting.decision.map(|d| d.outcome).as_deref(),
        Some("awaiting_approvals")
    );

    let graces = gate_row(&grace, &id).await;
    let two = grace
        .decide(gate_decision(&graces, DecideAction::Approve, None))
        .await
        .unwrap();
    assert_eq!(two.outcome, "appended", "{}", two.detail);

    let decision = became(&ada, &item).await;
    assert_eq!(
        decision.outcome, "decided",
        "not a stale awaiting_approvals"
    );
    assert_eq!(decision.action.as_deref(), Some("approve"));
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Ada (ada@fabrikam.example), Grace (grace@fabrikam.example)")
    );
    assert_eq!(
        decision.decision_id.as_deref(),
        Some(one.decision_id.as_str()),
        "this console gave one of them"
    );
    assert!(decision.detail.contains("2 of 2"), "{}", decision.detail);
}

#[tokio::test]
async fn an_oanp_request_decided_at_other_consoles_reads_declined_and_approved_not_withdrawn() {
    let world = World::start().await;
    world.load_policy("100", 2, json!([])).await;
    let (_a, ann) = world.engine("ann@fabrikam.example").await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    let (_l, linus) = world.engine("linus@fabrikam.example").await;
    crate::oanp_gate::asked(&world, "ses_declined_elsewhere").await;
    crate::oanp_gate::asked(&world, "ses_approved_elsewhere").await;
    let declined = "oanp:ses_declined_elsewhere";
    let approved = "oanp:ses_approved_elsewhere";
    let ann_declined = gate_row(&ann, declined).await;
    let ann_approved = gate_row(&ann, approved).await;

    // Grace declines one at her console.
    let graces = gate_row(&grace, declined).await;
    let result = grace
        .decide(gate_decision(
            &graces,
            DecideAction::Decline,
            Some("Over our budget for monitors."),
        ))
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    let decision = became(&ann, &ann_declined).await;
    assert_eq!(decision.outcome, "decided", "{decision:?}");
    assert_eq!(decision.action.as_deref(), Some("decline"));
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Grace (grace@fabrikam.example)")
    );
    assert_eq!(
        decision.reason.as_deref(),
        Some("Over our budget for monitors.")
    );

    // Ann approves the other first, Linus gives the second approval.
    let one = ann
        .decide(gate_decision(&ann_approved, DecideAction::Approve, None))
        .await
        .unwrap();
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    let linuses = gate_row(&linus, approved).await;
    let two = linus
        .decide(gate_decision(&linuses, DecideAction::Approve, None))
        .await
        .unwrap();
    assert_eq!(two.outcome, "appended", "{}", two.detail);
    let decision = became(&ann, &ann_approved).await;
    assert_eq!(decision.outcome, "decided", "{decision:?}");
    assert_eq!(decision.action.as_deref(), Some("approve"));
    assert_eq!(
        decision.decided_by.as_deref(),
        Some("Ann (ann@fabrikam.example), Linus (linus@fabrikam.example)")
    );
}

#[tokio::test]
async fn a_gate_request_nobody_decided_in_time_reads_expired() {
    let world = World::start().await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let agent = crate::gate::gate_agent(&world).await;
    // The seller's counter is valid for 3 s: the request expires with it.
    let (talk, i) = crate::gate::Talk::bargained("ses_nobody", 3);
    crate::gate::mirror_and_ask(&agent, &talk, i, "req-3").await;
    let id = format!("concordia:{}", talk.session_id);
    let item = gate_row(&ada, &id).await;
    let expires = time::OffsetDateTime::parse(
        &item.expires_at,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let wait = expires - time::OffsetDateTime::now_utc() + time::Duration::milliseconds(500);
    tokio::time::sleep(std::time::Duration::try_from(wait).unwrap_or_default()).await;

    let decision = became(&ada, &item).await;
    assert_eq!(decision.outcome, "expired", "{decision:?}");
    assert_eq!(decision.action, None);
    assert_eq!(decision.decided_by, None);
    assert_eq!(decision.at.as_deref(), Some(item.expires_at.as_str()));
    assert!(
        decision.detail.contains("must not accept"),
        "{}",
        decision.detail
    );
}

/// The org's agent accepts message `i` of `talk` on the gate, whatever was
/// decided; answers the accept's seq.
async fn accept_anyway(
    agent: &countersign_client::GateClient,
    talk: &mut crate::gate::Talk,
    i: usize,
) -> usize {
    let n = talk.messages.len();
    let offer_id = talk.messages[i]["body"]["offer_id"].clone();
    talk.say(
        crate::gate::BUYER,
        "negotiate.accept",
        serde_json::json!({"offer_id": offer_id}),
    );
    agent
        .append(&talk.session_id, &talk.head(n), &talk.messages[n..])
        .await
        .unwrap();
    n + 1
}

/// The org's agent accepting a counter-offer the person declined is shown
/// as a breach, naming the accept, at every console.
#[tokio::test]
async fn an_agent_accepting_what_was_declined_is_shown_as_a_breach() {
    let world = World::start().await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&ada);
    let agent = crate::gate::gate_agent(&world).await;
    let (talk, i) = crate::gate::Talk::bargained("ses_breach", 86400);
    crate::gate::mirror_and_ask(&agent, &talk, i, "req-1").await;
    let item = gate_row(&ada, &format!("concordia:{}", talk.session_id)).await;
    let result = ada
        .decide(gate_decision(
            &item,
            DecideAction::Decline,
            Some("Too high."),
        ))
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    assert_eq!(
        became(&ada, &item).await.breach,
        None,
        "declined, nothing done yet"
    );

    let mut talk = talk;
    let accepted_at = accept_anyway(&agent, &mut talk, i).await;
    assert!(
        recorder.breaches.lock().unwrap().is_empty(),
        "no notice while the agent keeps to the decision"
    );
    let decision = became(&ada, &item).await;
    let breach = decision.breach.expect("the accept against the decline");
    assert!(
        breach.contains(&format!("accepted at seq {accepted_at}")),
        "{breach}"
    );

    // The person is told once, with what the view says, and the notice
    // opens that proposal.
    let notices = recorder.breaches.lock().unwrap().clone();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].body, breach);
    assert_eq!(notices[0].event_hash, item.event_hash);
    assert_eq!(notices[0].session_id, item.session_id);
    assert_eq!(notices[0].protocol, "concordia");
    assert!(
        notices[0].title.contains("without your approval"),
        "{}",
        notices[0].title
    );
    // History marks the session.
    assert_eq!(breaches_in_history(&ada, &item.session_id).await, 1);
    // The accept agreed the session: nothing more can come, and asking
    // again does not tell again.
    ada.refresh().await.unwrap();
    assert_eq!(recorder.breaches.lock().unwrap().len(), 1, "told once");
}

/// With the breach notification turned off, nothing is shown, and turning
/// it back on replays nothing; the offer view still says it.
#[tokio::test]
async fn a_breach_notification_turned_off_stays_silent() {
    let world = World::start().await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&ada);
    ada.set_setting(countersign_engine::NOTIFY_BREACH, serde_json::json!(false))
        .await
        .unwrap();
    let agent = crate::gate::gate_agent(&world).await;
    let (mut talk, i) = crate::gate::Talk::bargained("ses_breach_off", 86400);
    crate::gate::mirror_and_ask(&agent, &talk, i, "req-1").await;
    let item = gate_row(&ada, &format!("concordia:{}", talk.session_id)).await;
    let result = ada
        .decide(gate_decision(&item, DecideAction::Decline, Some("No.")))
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    let accepted_at = accept_anyway(&agent, &mut talk, i).await;
    let breach = became(&ada, &item).await.breach;
    assert!(
        breach.is_some_and(|b| b.contains(&format!("accepted at seq {accepted_at}"))),
        "the view still says it"
    );
    ada.set_setting(countersign_engine::NOTIFY_BREACH, serde_json::json!(true))
        .await
        .unwrap();
    ada.refresh().await.unwrap();
    assert!(
        recorder.breaches.lock().unwrap().is_empty(),
        "nothing replayed"
    );
    assert_eq!(
        breaches_in_history(&ada, &item.session_id).await,
        1,
        "history counts it with the notification off"
    );
}

/// The org's agent accepting a counterparty's offer it never asked anyone
/// about is a breach too: told once, and the offer view says so.
#[tokio::test]
async fn an_agent_accepting_without_asking_is_a_breach() {
    let world = World::start().await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&ada);
    let agent = crate::gate::gate_agent(&world).await;
    let (mut talk, i) = crate::gate::Talk::bargained("ses_unasked", 86400);
    agent.create_session(&talk.create()).await.unwrap();
    ada.refresh().await.unwrap();
    assert!(
        recorder.breaches.lock().unwrap().is_empty(),
        "offers alone are no breach"
    );

    let accepted_at = accept_anyway(&agent, &mut talk, i).await;
    ada.refresh().await.unwrap();
    let notices = recorder.breaches.lock().unwrap().clone();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].event_hash, talk.hash(i), "the offer it accepted");
    assert!(
        notices[0]
            .body
            .contains(&format!("accepted at seq {accepted_at} without asking")),
        "{}",
        notices[0].body
    );
    let view = ada
        .proposal_view(
            &notices[0].host_id,
            &notices[0].session_id,
            &notices[0].event_hash,
        )
        .await
        .unwrap();
    let decision = view.decision.expect("what became of it");
    assert_eq!(decision.breach.as_deref(), Some(notices[0].body.as_str()));
    // The seller's first offer, which the agent countered, is no breach.
    let first = ada
        .proposal_view(
            &notices[0].host_id,
            &notices[0].session_id,
            &talk.hash(i - 2),
        )
        .await
        .unwrap();
    assert_eq!(first.decision.and_then(|d| d.breach), None);
    ada.refresh().await.unwrap();
    assert_eq!(recorder.breaches.lock().unwrap().len(), 1, "told once");
}
