//! The vendor manager's desk against a real host: sessions of every
//! protocol with figures computed by hand (opening asks, agreed totals,
//! wins, waits to the millisecond, currencies kept apart), counterparties
//! matched on the identities their protocols prove and kept apart
//! otherwise, a person's link and unlink, CSV, and the sessions behind
//! each figure.

use std::sync::Arc;
use std::time::Duration;

use anp::EventKind;
use countersign_client::raw_messages;
use countersign_engine::*;
use countersign_host_api::gate::{CreateSession, GateAction, GateCounterparty, RequestDecision};
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::common::*;
use crate::gate::{gate_agent, Talk, BUYER};

/// Above 10,000 USD the buyer has two minutes; below, no response time.
const POLICY: &str = r#"
[roles]
buyer = ["ann@fabrikam.example"]

[[rule]]
name = "Above 10,000 USD"
amount = [{ currency = "USD", above = "10000" }]
[[rule.step]]
role = "buyer"
respond_within = "2m"

[unnamed_currency]
reason = "other currencies"
[[unnamed_currency.step]]
role = "buyer"

[no_rule]
reason = "everything else"
[[no_rule.step]]
role = "buyer"
"#;

fn time_of(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).unwrap()
}

fn decide_on(item: &InboxItem, action: DecideAction, reason: Option<&str>) -> DecideRequest {
    DecideRequest {
        host_id: item.host_id.clone(),
        session_id: item.session_id.clone(),
        in_response_to: item.event_hash.clone(),
        action,
        reason: reason.map(str::to_owned),
        counter: None,
    }
}

async fn pending_in(engine: &Engine, session_id: &str) -> InboxItem {
    engine.refresh().await.unwrap();
    engine
        .inbox()
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.session_id == session_id && !i.is_draft)
        .unwrap_or_else(|| panic!("a pending decision in {session_id}"))
}

/// When the stored record says the entry at `seq` was made.
async fn entry_at(engine: &Engine, item: &InboxItem) -> OffsetDateTime {
    let detail = engine
        .session_detail(&item.host_id, &item.session_id)
        .await
        .unwrap();
    let entry = detail.timeline.iter().find(|e| e.seq == item.seq).unwrap();
    time_of(&entry.at)
}

/// An OANP session in euros: the merchant's counter awaits the buyer.
fn oanp_log() -> Vec<Value> {
    let terms =
        |minor: i64| json!({"price": {"amount_minor": minor, "currency": "EUR"}, "inclusions": []});
    let specs = [
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
            json!({"round": 1, "terms": terms(30000)}),
        ),
        (
            "arbitration.evaluate",
            "arbiter",
            json!({"verdict": "fair", "fairness_score": "0.9000"}),
        ),
        (
            "offer.counter",
            "merchant",
            json!({"round": 2, "terms": terms(45000)}),
        ),
        (
            "arbitration.evaluate",
            "arbiter",
            json!({"verdict": "fair", "fairness_score": "1.0000"}),
        ),
    ];
    crate::oanp_gate::chain(&specs)
}

/// Moves the host's record of when the agent asked about `request_id`
/// `secs` earlier (the record is the host's word, not signed by anyone):
/// answers the new time. Deciding `secs` after it is deciding now.
async fn backdate(world: &World, protocol: &str, request_id: &str, secs: i64) -> OffsetDateTime {
    let (rows, _) = world
        .host_sql(
            "SELECT created_at FROM gate_requests WHERE protocol = $1 AND request_id = $2",
            &[SqlArg::Text(protocol), SqlArg::Text(request_id)],
        )
        .await;
    assert_eq!(rows.len(), 1, "{protocol} {request_id}: {rows:?}");
    let earlier = time_of(&rows[0]) - time::Duration::seconds(secs);
    let text = format_time(earlier);
    let (_, changed) = world
        .host_sql(
            "UPDATE gate_requests SET created_at = $1 WHERE protocol = $2 AND request_id = $3",
            &[
                SqlArg::Text(&text),
                SqlArg::Text(protocol),
                SqlArg::Text(request_id),
            ],
        )
        .await;
    assert_eq!(changed, 1);
    earlier
}

fn in_hours(hours: i64) -> String {
    approval_receipt::datetime::format_utc(OffsetDateTime::now_utc() + time::Duration::hours(hours))
}

fn plain_terms(unit_price: &str) -> Value {
    json!({
        "counterparty": {"name": "Contoso Ltd", "id": "contoso.example"},
        "currency": "USD",
        "line_items": [
            {"description": "Industrial sensor", "sku": "SEN-200", "quantity": "2000", "unit": "each", "unit_price": unit_price},
            {"description": "Calibration service", "quantity": "1", "unit_price": "150.00"}
        ],
    })
}

fn money<'a>(figures: &'a [CurrencyFigures], currency: &str) -> &'a CurrencyFigures {
    figures
        .iter()
        .find(|m| m.currency == currency)
        .unwrap_or_else(|| panic!("{currency} in {figures:?}"))
}

/// Sets the engine's clock `secs` after `from` and makes the decision
/// then. The host's clock is moved up to that moment first when it is
/// behind (the host refuses an approval dated in its future); the engine
/// signs its requests on the machine's clock, so the host's may run at most
/// five minutes ahead of it all test long.
async fn decide_after(
    world: &World,
    clock: &ManualClock,
    engine: &Engine,
    from: OffsetDateTime,
    secs: i64,
    request: DecideRequest,
) -> DecisionResult {
    let at = from + time::Duration::seconds(secs);
    let host_now = world.host().clock().now();
    if at > host_now {
        let ahead = (at - host_now).whole_milliseconds() as u64 + 1;
        world.host().clock().advance(Duration::from_millis(ahead));
    }
    clock.set(at);
    let done = engine.decide(request).await.unwrap();
    assert!(
        ["appended", "awaiting_approvals"].contains(&done.outcome.as_str()),
        "{}: {}",
        done.outcome,
        done.detail
    );
    done
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_counts_money_wins_and_waits_per_currency_across_every_protocol() {
    if through_deployment() {
        // The waits are measured on the host's clock, which the deployment's
        // processes keep to themselves.
        return;
    }
    let world = World::start().await;
    world
        .host()
        .load_authority(&world.org, POLICY, "Ivy Admin")
        .await
        .unwrap();
    let clock = Arc::new(ManualClock::at(world.host().clock().now()));
    let given = clock.clone();
    let (data, engine) = world
        .engine_with("ann@fabrikam.example", move |config| config.clock = given)
        .await;
    // Ann's key stays open across the hours the clock moves.
    engine
        .set_setting(KEY_IDLE_LOCK, json!(1440))
        .await
        .unwrap();

    // ANP/0.1, Northwind: opens at 1,200 a seat (600,000 USD); Ann counters
    // 30 s later; Northwind offers 1,140 (570,000 USD), which Ann approves
    // 200 s later, past the rule's two minutes.
    let (vendor, anp_session) = world.vendor("Northwind").await;
    submit(&vendor, &anp_session, EventKind::Offer, offer(1200, DAY)).await;
    let first = pending_in(&engine, &anp_session).await;
    let first_at = entry_at(&engine, &first).await;
    let mut counter = decide_on(&first, DecideAction::Counter, None);
    counter.counter = Some(offer(1100, DAY));
    decide_after(&world, &clock, &engine, first_at, 30, counter).await;
    submit(&vendor, &anp_session, EventKind::Offer, offer(1140, DAY)).await;
    let second = pending_in(&engine, &anp_session).await;
    let second_at = entry_at(&engine, &second).await;
    decide_after(
        &world,
        &clock,
        &engine,
        second_at,
        200,
        decide_on(&second, DecideAction::Approve, None),
    )
    .await;

    // Concordia, Contoso Ltd: offers 2,100 USD (its opening terms are no
    // offer), bargains to 2,000, which
    // Ann approves ten minutes after the agent asked; the agent accepts.
    let concordia_agent = gate_agent(&world).await;
    let (mut talk, i) = Talk::bargained("ses_desk", 86400);
    concordia_agent
        .create_session(&talk.create_named("Contoso Sales Agent", "Contoso Ltd"))
        .await
        .unwrap();
    crate::gate::ask(&concordia_agent, &talk, i, "req-desk", 86400).await;
    let asked_at = backdate(&world, "concordia", "req-desk", 600).await;
    let item = pending_in(&engine, "concordia:ses_desk").await;
    decide_after(
        &world,
        &clock,
        &engine,
        asked_at,
        600,
        decide_on(&item, DecideAction::Approve, None),
    )
    .await;
    let offer_id = talk.messages[i]["body"]["offer_id"].clone();
    let n = talk.messages.len();
    talk.say(BUYER, "negotiate.accept", json!({"offer_id": offer_id}));
    concordia_agent
        .append(&talk.session_id, &talk.head(n), &talk.messages[n..])
        .await
        .unwrap();

    // Plain terms, Contoso Ltd again (its id only the agent's word): 2,650
    // USD, declined five minutes after the ask.
    let assistant = world
        .host()
        .mcp_agent(&world.org, "Purchasing assistant")
        .await
        .unwrap();
    let token = assistant.credential.token;
    crate::plain::call(
        &world,
        &token,
        "ask_about_terms",
        json!({"request_id": "po-1", "terms": plain_terms("1.25"), "expires_at": in_hours(20)}),
    )
    .await
    .unwrap();
    let plain_asked_at = backdate(&world, "plain", "po-1", 300).await;
    let plain_item = {
        engine.refresh().await.unwrap();
        engine
            .inbox()
            .await
            .unwrap()
            .into_iter()
            .find(|i| i.protocol == "plain")
            .expect("the plain terms in the inbox")
    };
    decide_after(
        &world,
        &clock,
        &engine,
        plain_asked_at,
        300,
        decide_on(&plain_item, DecideAction::Decline, Some("Too dear.")),
    )
    .await;

    // OANP, Tailspin, in euros: the merchant counters at 450.00 EUR; Ann
    // declines a minute after the ask.
    let oanp_agent = crate::gate::gate_agent_for(&world, "oanp").await;
    let envelopes = oanp_log();
    oanp_agent
        .create_session(&CreateSession {
            protocol: "oanp".into(),
            session_id: "oanp-desk".into(),
            keys: [
                ("buyer", "procurement-buyer-7"),
                ("merchant", "tailspin.merchant"),
            ]
            .into_iter()
            .map(|(r, a)| (r.to_owned(), a.to_owned()))
            .collect(),
            self_party: "buyer".into(),
            counterparty: GateCounterparty {
                id: "merchant".into(),
                name: Some("Tailspin Displays".into()),
                organization: Some("Tailspin".into()),
            },
            messages: raw_messages(&envelopes).unwrap(),
        })
        .await
        .unwrap();
    oanp_agent
        .request_decision(
            "oanp-desk",
            &RequestDecision {
                request_id: "r1".into(),
                message_hash: oanp::canonical::commit(&envelopes[5]).unwrap(),
                action: GateAction::Accept,
                amount: None,
                expires_at: in_hours(20),
            },
        )
        .await
        .unwrap();
    let oanp_asked_at = backdate(&world, "oanp", "r1", 60).await;
    let oanp_item = pending_in(&engine, "oanp:oanp-desk").await;
    decide_after(
        &world,
        &clock,
        &engine,
        oanp_asked_at,
        60,
        decide_on(&oanp_item, DecideAction::Decline, Some("Over budget.")),
    )
    .await;

    // ANEX: a supplier's onboarding agent asks for data beyond policy.
    let mut requester = crate::anex::Requester::register(&world).await;
    requester
        .cfp(
            "Northwind Supplies Ltd",
            "supplier onboarding",
            &crate::anex::ASK,
            &[crate::anex::RETENTION],
        )
        .await;
    engine.refresh().await.unwrap();

    let desk = engine.desk(DeskQuery::default()).await.unwrap();
    let by_protocol = |p: &str| {
        desk.counterparties
            .iter()
            .filter(|c| c.protocols.iter().any(|x| x == p))
            .count()
    };
    assert_eq!(desk.sessions, 5, "{desk:#?}");

    // Money, per currency, never summed across them. USD: ANP agreed
    // 570,000 from 600,000; Concordia agreed 2,000 from 2,100; plain terms
    // not agreed. 30,100 won of 602,100 asked: 4.99917…%, to 5.00.
    assert_eq!(desk.money.len(), 2, "{:?}", desk.money);
    let usd = money(&desk.money, "USD");
    assert_eq!(usd.sessions, 3);
    assert_eq!(usd.agreed_sessions, 2);
    assert_eq!(usd.agreed_total, "572000");
    assert_eq!(usd.opening_total, "602100");
    assert_eq!(usd.won, "30100");
    assert_eq!(usd.won_percent.as_deref(), Some("5.00"));
    let eur = money(&desk.money, "EUR");
    assert_eq!((eur.sessions, eur.agreed_sessions), (1, 0));
    assert_eq!(eur.agreed_total, "0");

    // Waits, to the millisecond as signed: 30, 60, 200, 300, 600 s.
    // Nearest rank: the median is the 3rd, the 90th percentile the 5th.
    assert_eq!(desk.waits.decisions, 5, "{:#?}", desk.slowest);
    assert_eq!(desk.waits.median_seconds, Some(200));
    assert_eq!(desk.waits.p90_seconds, Some(600));
    let seconds: Vec<u64> = desk.slowest.iter().map(|w| w.seconds).collect();
    assert_eq!(seconds, [600, 300, 200, 60, 30]);
    // Only the approval past the rule's two minutes; the counter came
    // within them, and the other rules set no response time.
    assert_eq!(desk.waits.past_response_time, 1);
    let approval = &desk.slowest[2];
    assert_eq!(approval.respond_within_minutes, Some(2));
    assert_eq!(approval.role.as_deref(), Some("buyer"));
    assert_eq!(approval.action, "approve");
    assert_eq!(desk.slowest[4].respond_within_minutes, Some(2));
    assert_eq!(desk.slowest[0].respond_within_minutes, None);

    // Decisions by person and role.
    assert_eq!(desk.people.len(), 1, "{:?}", desk.people);
    let ann = &desk.people[0];
    assert_eq!(ann.person, "ann@fabrikam.example");
    assert_eq!((ann.approvals, ann.declines, ann.counters), (2, 2, 1));

    // Counterparties: Northwind (ANP), Contoso Ltd twice (a Concordia key,
    // and the plain agent's word: never merged on the name, said to be
    // possibly the same), Tailspin (OANP) and the ANEX requester's DID.
    assert_eq!(desk.counterparties.len(), 5, "{:#?}", desk.counterparties);
    for p in ["ANP/0.1", "concordia", "plain", "oanp", "anex"] {
        assert_eq!(by_protocol(p), 1, "{p}");
    }
    let contoso: Vec<&CounterpartyRow> = desk
        .counterparties
        .iter()
        .filter(|c| c.name == "Contoso Ltd")
        .collect();
    assert_eq!(contoso.len(), 2);
    assert_eq!(contoso[0].maybe_same_as, [contoso[1].id.clone()]);
    assert_eq!(contoso[1].maybe_same_as, [contoso[0].id.clone()]);
    let northwind = desk
        .counterparties
        .iter()
        .find(|c| c.protocols == ["ANP/0.1"])
        .unwrap();
    assert_eq!(northwind.name, "Northwind");
    assert_eq!(money(&northwind.money, "USD").won, "30000");
    assert_eq!(
        money(&northwind.money, "USD").won_percent.as_deref(),
        Some("5.00")
    );
    assert_eq!(northwind.waits.median_seconds, Some(30));
    assert_eq!(northwind.counters, 1);
    let anex = desk
        .counterparties
        .iter()
        .find(|c| c.protocols == ["anex"])
        .unwrap();
    let anex_page = engine
        .counterparty(&anex.id, DeskQuery::default())
        .await
        .unwrap();
    assert!(
        anex_page.identities.iter().any(|i| i.kind == "did"),
        "{:?}",
        anex_page.identities
    );

    // Northwind's page: its key and agent id, its sessions with the win.
    let page = engine
        .counterparty(&northwind.id, DeskQuery::default())
        .await
        .unwrap();
    let kinds: Vec<&str> = page.identities.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, ["id", "key"], "{:?}", page.identities);
    assert!(page.identities.iter().all(|i| !i.changed_mid_session));
    assert_eq!(page.sessions.len(), 1);
    let win = &page.sessions[0];
    assert_eq!(win.opening.as_deref(), Some("600000"));
    assert_eq!(win.agreed.as_deref(), Some("570000"));
    assert_eq!(win.won.as_deref(), Some("30000"));
    assert_eq!(win.state, SessionState::Agreed);
    assert_eq!(
        page.by_state,
        [StateCount {
            protocol: "ANP/0.1".into(),
            state: SessionState::Agreed,
            count: 1
        }]
    );

    // A date range holds sessions by their first entry, or for a record
    // without times (ANEX) when this console first saw its ask: all five
    // today, none tomorrow.
    let today = world.host().clock().now().date().to_string();
    let day = engine
        .desk(DeskQuery {
            from: Some(today.clone()),
            to: Some(today),
            ..DeskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(day.sessions, 5, "{:#?}", day.counterparties);

    let tomorrow = (world.host().clock().now() + time::Duration::days(1)).date();
    let later = engine
        .desk(DeskQuery {
            from: Some(tomorrow.to_string()),
            ..DeskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((later.sessions, later.counterparties.len()), (0, 0));
    assert!(later.money.is_empty() && later.waits.decisions == 0);
    let err = engine
        .desk(DeskQuery {
            from: Some("2026-13-01".into()),
            ..DeskQuery::default()
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("from must be a day"), "{err}");

    // Every figure opens its sessions.
    let past = engine
        .desk_sessions(DeskQuery::default(), DeskFigure::PastResponseTime)
        .await
        .unwrap();
    let ids: Vec<&str> = past.rows.iter().map(|r| r.session_id.as_str()).collect();
    assert_eq!(ids, [anp_session.as_str()]);
    let euros = engine
        .desk_sessions(
            DeskQuery::default(),
            DeskFigure::Currency {
                currency: "EUR".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(euros.rows.len(), 1);
    assert_eq!(euros.rows[0].session_id, "oanp:oanp-desk");
    let agreed = engine
        .desk_sessions(
            DeskQuery::default(),
            DeskFigure::Agreed {
                currency: "USD".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(agreed.rows.len(), 2);

    // The person links the two Contosos: one counterparty, both sessions,
    // both identities; unlinked, two again. What was verified is unchanged.
    let concordia_page = engine
        .counterparty(&contoso[0].id, DeskQuery::default())
        .await
        .unwrap();
    let plain_page = engine
        .counterparty(&contoso[1].id, DeskQuery::default())
        .await
        .unwrap();
    let a = concordia_page.identities[0].identity.clone();
    let b = plain_page.identities[0].identity.clone();
    let err = engine.link_identities(&a, &a).await.unwrap_err();
    assert!(
        err.to_string().contains("already one counterparty"),
        "{err}"
    );
    let err = engine.link_identities(&a, "key:nobody").await.unwrap_err();
    assert!(err.to_string().contains("no identity"), "{err}");
    let link = engine.link_identities(&a, &b).await.unwrap();
    assert_eq!(link.linked_by, "ann@fabrikam.example");
    let linked = engine.desk(DeskQuery::default()).await.unwrap();
    assert_eq!(linked.counterparties.len(), 4);
    let one = linked
        .counterparties
        .iter()
        .find(|c| c.name == "Contoso Ltd")
        .unwrap();
    assert_eq!(one.sessions, 2);
    assert!(one.maybe_same_as.is_empty());
    let merged = engine
        .counterparty(&one.id, DeskQuery::default())
        .await
        .unwrap();
    assert_eq!(merged.links.len(), 1);
    assert_eq!(merged.sessions.len(), 2);
    engine.unlink_identities(link.link_id).await.unwrap();
    assert_eq!(
        engine
            .desk(DeskQuery::default())
            .await
            .unwrap()
            .counterparties
            .len(),
        5
    );
    let err = engine.unlink_identities(link.link_id).await.unwrap_err();
    assert!(err.to_string().contains("link"), "{err}");

    // CSV of the counterparty list: one row per counterparty and currency.
    let csv = engine
        .export_desk_csv(DeskQuery::default(), DeskList::Counterparties)
        .await
        .unwrap();
    assert!(csv.path.starts_with(&data.path().display().to_string()));
    let rows = csv_rows(&std::fs::read_to_string(&csv.path).unwrap());
    assert_eq!(rows[0][0], "counterparty_id");
    let northwind_row = rows.iter().find(|r| r[1] == "Northwind").unwrap();
    assert_eq!(
        &northwind_row[4..10],
        ["USD", "1", "570000", "600000", "30000", "5.00"]
    );
    assert_eq!(rows.len(), 1 + 5);
    // The audit pack of every decision verifies offline, each decision
    // proven, whatever its protocol.
    let pack = engine
        .export_audit_pack(AuditPackQuery::default())
        .await
        .unwrap();
    assert_eq!((pack.sessions, pack.decisions), (4, 5));
    let options = countersign_verify::Options {
        now: OffsetDateTime::now_utc(),
        offer: None,
        pin: None,
    };
    let report = countersign_verify::pack::verify(&pack.path, &options);
    assert_eq!(report.status, "verified", "{}", report.to_text());
    assert!(
        report.decisions.iter().all(|d| d.status == "proven"),
        "{}",
        report.to_text()
    );
    let approval = report
        .decisions
        .iter()
        .find(|d| d.session_id == anp_session && d.action == "approve")
        .unwrap();
    assert_eq!(approval.role.as_deref(), Some("buyer"), "{approval:?}");
}

/// Copies a pack folder.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The pack's folder of the session whose folder name ends with `tail`.
fn session_dir(pack: &std::path::Path, protocol: &str) -> String {
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(pack.join("index.json")).unwrap()).unwrap();
    index["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["protocol"] == protocol)
        .unwrap()["dir"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audit_pack_verifies_offline_decision_by_decision_and_a_changed_byte_fails_at_its_record(
) {
    let world = World::start().await;
    let (data, engine) = world.engine("ann@fabrikam.example").await;
    // ANP: Northwind's 570,000 USD, approved.
    let (vendor, anp_session) = world.vendor("Northwind").await;
    submit(&vendor, &anp_session, EventKind::Offer, offer(1140, DAY)).await;
    let item = pending_in(&engine, &anp_session).await;
    engine
        .decide(decide_on(&item, DecideAction::Approve, None))
        .await
        .unwrap();
    // Concordia: Contoso's 2,000 USD, approved.
    let agent = gate_agent(&world).await;
    let (talk, i) = Talk::bargained("ses_pack", 86400);
    agent.create_session(&talk.create()).await.unwrap();
    crate::gate::ask(&agent, &talk, i, "req-pack", 86400).await;
    let item = pending_in(&engine, "concordia:ses_pack").await;
    engine
        .decide(decide_on(&item, DecideAction::Approve, None))
        .await
        .unwrap();
    engine.refresh().await.unwrap();

    // Bad queries are named, and nothing is written.
    for (query, words) in [
        (
            AuditPackQuery {
                min_total: Some("100000".into()),
                ..AuditPackQuery::default()
            },
            "currency must be a three-letter code",
        ),
        (
            AuditPackQuery {
                min_total: Some("lots".into()),
                currency: Some("USD".into()),
                ..AuditPackQuery::default()
            },
            "min_total must be a decimal amount",
        ),
        (
            AuditPackQuery {
                action: Some("approved".into()),
                ..AuditPackQuery::default()
            },
            "action must be approve, decline or counter",
        ),
        (
            AuditPackQuery {
                from: Some("2026-02-30".into()),
                ..AuditPackQuery::default()
            },
            "from must be a day",
        ),
    ] {
        let err = engine.export_audit_pack(query).await.unwrap_err();
        assert!(err.to_string().contains(words), "{err}");
    }
    assert!(!data.path().join("exports").exists());

    // Every approval above 100,000 USD: the ANP one only.
    let big = engine
        .export_audit_pack(AuditPackQuery {
            action: Some("approve".into()),
            min_total: Some("100000".into()),
            currency: Some("USD".into()),
            ..AuditPackQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((big.sessions, big.decisions), (1, 1));

    let pack = engine
        .export_audit_pack(AuditPackQuery {
            action: Some("approve".into()),
            ..AuditPackQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((pack.sessions, pack.decisions), (2, 2));
    assert!(pack.path.starts_with(&data.path().display().to_string()));
    let options = countersign_verify::Options {
        now: OffsetDateTime::now_utc(),
        offer: None,
        pin: None,
    };
    let report = countersign_verify::pack::verify(&pack.path, &options);
    assert_eq!(report.status, "verified", "{}", report.to_text());
    assert_eq!(report.decisions.len(), 2);
    for d in &report.decisions {
        assert_eq!(d.status, "proven", "{}", report.to_text());
        assert!(
            d.by.as_deref()
                .is_some_and(|b| b.starts_with("ann@fabrikam.example")),
            "{d:?}"
        );
    }
    let anp = report
        .decisions
        .iter()
        .find(|d| d.session_id == anp_session)
        .unwrap();
    assert!(anp.proof.contains("accept event"), "{}", anp.proof);
    let concordia = report
        .decisions
        .iter()
        .find(|d| d.session_id == "concordia:ses_pack")
        .unwrap();
    assert!(
        concordia.proof.contains("ApprovalReceipt"),
        "{}",
        concordia.proof
    );
    assert!(
        concordia
            .by
            .as_deref()
            .is_some_and(|b| b.contains("did:key:z")),
        "{concordia:?}"
    );
    assert!(
        concordia
            .rule
            .as_deref()
            .is_some_and(|r| r.starts_with("above ")),
        "{concordia:?}"
    );

    // The reference Concordia SDK verifies the pack's receipt over its offer.
    let dir = session_dir(std::path::Path::new(&pack.path), "concordia");
    let decisions = std::path::Path::new(&pack.path)
        .join(&dir)
        .join("decisions");
    let file = std::fs::read_dir(&decisions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let decision: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let request =
        json!({"receipt": decision["receipt"], "offer": decision["offer"], "now": decision["at"]});
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../concordia/interop/verify_receipt.py");
    let mut child = std::process::Command::new(countersign_testkit::python::interop_python())
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let sdk: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sdk["valid"], true, "{sdk}");

    // One byte changed in the Concordia record (a price): the pack fails at
    // that record, and its decision is no longer proven; the ANP one is.
    let tampered = tempfile::tempdir().unwrap();
    copy_dir(std::path::Path::new(&pack.path), tampered.path());
    let record = tampered.path().join(&dir).join("record.json");
    let text = std::fs::read_to_string(&record).unwrap();
    let changed = text.replacen("2000", "2001", 1);
    assert_ne!(text, changed);
    std::fs::write(&record, changed).unwrap();
    let report = countersign_verify::pack::verify(&tampered.path().display().to_string(), &options);
    assert_eq!(report.status, "failed");
    // Named at the record (its digest, the changed message's signature),
    // and at the decision whose offer is no longer in it; nowhere else.
    let at_record: Vec<&str> = report
        .failures
        .iter()
        .filter(|f| f.at == format!("{dir}/record.json"))
        .map(|f| f.check.as_str())
        .collect();
    assert_eq!(at_record, ["digest", "signature"], "{}", report.to_text());
    assert!(
        report.failures.iter().all(|f| f.at.starts_with(&dir)),
        "{}",
        report.to_text()
    );
    let statuses: Vec<(&str, &str)> = report
        .decisions
        .iter()
        .map(|d| (d.session_id.as_str(), d.status))
        .collect();
    assert!(
        statuses.contains(&("concordia:ses_pack", "not proven")),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&(anp_session.as_str(), "proven")),
        "{statuses:?}"
    );

    // An index naming another console key: neither the ANP approval nor the
    // receipt is the console's any more.
    let tampered = tempfile::tempdir().unwrap();
    copy_dir(std::path::Path::new(&pack.path), tampered.path());
    let index_path = tampered.path().join("index.json");
    let mut index: Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap()).unwrap();
    let stranger = anp::keys::generate_signing_key();
    index["console_keys"] =
        json!([{"public_key": approval_receipt::keys::public_key_text(&stranger.verifying_key())}]);
    std::fs::write(&index_path, index.to_string()).unwrap();
    let report = countersign_verify::pack::verify(&tampered.path().display().to_string(), &options);
    assert_eq!(report.status, "failed");
    let anp_failure = report
        .failures
        .iter()
        .find(|f| f.check == "approval")
        .unwrap_or_else(|| panic!("{}", report.to_text()));
    assert!(
        anp_failure.detail.contains("none of the console keys"),
        "{}",
        anp_failure.detail
    );
    assert!(
        report.decisions.iter().all(|d| d.status == "not proven"),
        "{}",
        report.to_text()
    );

    let tampered = tempfile::tempdir().unwrap();
    copy_dir(std::path::Path::new(&pack.path), tampered.path());
    let anp_dir = session_dir(tampered.path(), "ANP/0.1");
    let anp_decisions = tampered.path().join(&anp_dir).join("decisions");
    let file = std::fs::read_dir(&anp_decisions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("approve", "decline", 1)).unwrap();
    let report = countersign_verify::pack::verify(&tampered.path().display().to_string(), &options);
    assert_eq!(report.status, "failed");
    assert!(
        report.failures[0]
            .at
            .starts_with(&format!("{anp_dir}/decisions/")),
        "{}",
        report.to_text()
    );
}

#[tokio::test]
async fn an_agent_that_changes_keys_between_sessions_stays_one_counterparty_with_the_change_flagged(
) {
    let world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let agent = gate_agent(&world).await;
    // The same seller agent id, a new key in its second session.
    let (first, i) = Talk::bargained("ses_key_1", 86400);
    agent.create_session(&first.create()).await.unwrap();
    crate::gate::ask(&agent, &first, i, "req-key-1", 86400).await;
    // Its messages carry whole seconds: the second session's come later.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (second, j) = Talk::bargained("ses_key_2", 86400);
    assert_ne!(first.seller_fingerprint(), second.seller_fingerprint());
    agent.create_session(&second.create()).await.unwrap();
    crate::gate::ask(&agent, &second, j, "req-key-2", 86400).await;
    engine.refresh().await.unwrap();

    let desk = engine.desk(DeskQuery::default()).await.unwrap();
    assert_eq!(desk.counterparties.len(), 1, "{:#?}", desk.counterparties);
    let row = &desk.counterparties[0];
    assert_eq!((row.sessions, row.key_changes), (2, 1));
    let page = engine
        .counterparty(&row.id, DeskQuery::default())
        .await
        .unwrap();
    let key = |fingerprint: String| {
        page.identities
            .iter()
            .find(|i| i.identity == format!("key:{fingerprint}"))
            .unwrap_or_else(|| panic!("{fingerprint} in {:?}", page.identities))
            .clone()
    };
    let (old, new) = (
        key(first.seller_fingerprint()),
        key(second.seller_fingerprint()),
    );
    assert_eq!(new.replaces.as_deref(), Some(old.identity.as_str()));
    assert_eq!(old.replaces, None);
    assert_eq!((old.sessions, new.sessions), (1, 1));
    assert!(old.first_seen <= new.first_seen);
    let id = page.identities.iter().find(|i| i.kind == "id").unwrap();
    assert_eq!(id.sessions, 2);
    assert!(
        id.identity.starts_with("concordia agent_seller_01 at "),
        "{}",
        id.identity
    );
}

#[tokio::test]
async fn an_approval_counted_while_others_were_awaited_is_proven_once_an_accept_carries_it() {
    let world = World::start().await;
    world.load_policy("100000", 2, json!([])).await;
    let (_a, ada) = world.engine("ada@fabrikam.example").await;
    let (_g, grace) = world.engine("grace@fabrikam.example").await;
    let (vendor, session) = world.vendor("Northwind").await;
    submit(&vendor, &session, EventKind::Offer, offer(1140, DAY)).await;
    let item = pending_in(&ada, &session).await;
    let one = ada
        .decide(decide_on(&item, DecideAction::Approve, None))
        .await
        .unwrap();
    assert_eq!(one.outcome, "awaiting_approvals", "{}", one.detail);
    ada.refresh().await.unwrap();
    let options = countersign_verify::Options {
        now: OffsetDateTime::now_utc(),
        offer: None,
        pin: None,
    };
    // Nothing fails, but nothing in the record proves Ada's approval yet.
    let pack = ada
        .export_audit_pack(AuditPackQuery::default())
        .await
        .unwrap();
    let report = countersign_verify::pack::verify(&pack.path, &options);
    assert_eq!(report.status, "unproven", "{}", report.to_text());
    assert_eq!(report.exit_code(), 1);
    assert!(report.failures.is_empty(), "{}", report.to_text());
    assert!(report.decisions[0]
        .proof
        .contains("awaited other approvals"));

    // Grace approves too: the accept carries both; Ada's is proven, as hers.
    let item = pending_in(&grace, &session).await;
    let two = grace
        .decide(decide_on(&item, DecideAction::Approve, None))
        .await
        .unwrap();
    assert_eq!(two.outcome, "appended", "{}", two.detail);
    ada.refresh().await.unwrap();
    let pack = ada
        .export_audit_pack(AuditPackQuery::default())
        .await
        .unwrap();
    let report = countersign_verify::pack::verify(&pack.path, &options);
    assert_eq!(report.status, "verified", "{}", report.to_text());
    let d = &report.decisions[0];
    assert_eq!(d.by.as_deref(), Some("ada@fabrikam.example"));
    assert!(d.proof.contains("accept event"), "{}", d.proof);
}
