//! MCP with the official Python MCP SDK (`mcp`, in .venv/ by
//! `bash .ci/setup`) as the agent and the console engine as the person: the
//! agent (`crates/host/interop/mcp_plain_agent.py`, written from
//! docs/mcp.md) asks about terms over MCP, revises them and waits past one
//! bound; the person decides in the engine (approve, decline with a
//! reason, counter); the agent checks the receipt with the host's tool and
//! the reference Concordia SDK, then reports what it did. Executing other
//! terms than approved is a breach the console tells the person once.

use std::path::PathBuf;
use std::process::Stdio;

use countersign_engine::{DecideAction, DecideRequest, Engine, InboxItem};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::common::*;

use countersign_testkit::python::interop_python as python;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Approves,
    Declines,
    Counters,
}

/// The plain-terms request waiting in the engine's inbox.
async fn waiting(engine: &Engine) -> InboxItem {
    for _ in 0..40 {
        engine.refresh().await.unwrap();
        if let Some(item) = engine
            .inbox()
            .await
            .unwrap()
            .into_iter()
            .find(|i| i.protocol == "plain")
        {
            return item;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("no plain terms in the inbox");
}

async fn run(world: &World, engine: &Engine, person: Person, then: &str) -> (Value, InboxItem) {
    let token = world
        .host()
        .mcp_agent(&world.org, "Purchasing assistant")
        .await
        .unwrap()
        .credential
        .token;
    let mut child = tokio::process::Command::new(python())
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../host/interop/mcp_plain_agent.py"))
        .args(["--host", &world.url, "--then", then])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{token}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || match lines.next_line().await.unwrap() {
        Some(line) => serde_json::from_str::<Value>(&line).unwrap(),
        None => {
            let mut err = String::new();
            stderr.read_to_string(&mut err).await.unwrap();
            panic!("the MCP agent stopped: {err}");
        }
    };
    let first = next().await;
    assert_eq!(first["waiting"]["request_id"], "po-2", "{first}");
    let item = waiting(engine).await;
    let (action, reason, counter) = match person {
        Person::Approves => (DecideAction::Approve, None, None),
        Person::Declines => (
            DecideAction::Decline,
            Some("Contoso is on hold with finance.".to_owned()),
            None,
        ),
        Person::Counters => {
            let mut terms = json!({
                "counterparty": {"name": "Contoso Ltd", "id": "contoso.example"},
                "currency": "USD",
                "line_items": [
                    {"description": "Industrial sensor", "sku": "SEN-200", "quantity": "2000", "unit": "each", "unit_price": "1.10"},
                    {"description": "Calibration service", "quantity": "1", "unit_price": "150.00"}
                ],
                "term": "12 months",
                "conditions": ["Net 30", "Delivery by 2027-01-15"],
            });
            terms["conditions"] = json!(["Net 30"]);
            (
                DecideAction::Counter,
                Some("Last year we paid 1.10.".to_owned()),
                Some(terms),
            )
        }
    };
    let result = engine
        .decide(DecideRequest {
            host_id: item.host_id.clone(),
            session_id: item.session_id.clone(),
            in_response_to: item.event_hash.clone(),
            reason,
            counter,
            action,
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);
    let result = next().await;
    assert!(child.wait().await.unwrap().success(), "{result}");
    (result["result"].clone(), item)
}

fn checked(r: &Value) {
    assert_eq!(r["after_bound"]["status"], "pending", "{r}");
    assert_eq!(r["host_checks"][0]["valid"], true, "{r}");
    assert_eq!(r["host_checks"][0]["recorded_by_host"], true, "{r}");
    assert_eq!(
        r["sdk_checks"][0]["valid"], true,
        "the Concordia SDK accepts the engine's receipt: {r}"
    );
    assert_eq!(r["sdk_checks"][0]["checks"]["offer_hash"], true, "{r}");
}

#[tokio::test]
async fn an_mcp_agent_executes_what_the_person_approved_in_the_console() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&engine);
    let (r, item) = run(&world, &engine, Person::Approves, "honest").await;
    checked(&r);
    assert_eq!(r["status"], "approved", "{r}");
    assert_eq!(
        r["decision"]["decided_by"][0]["email"], "ada@fabrikam.example",
        "{r}"
    );
    assert_eq!(r["report"]["breach"], Value::Null, "{r}");
    engine.refresh().await.unwrap();
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    assert_eq!(view.decision.and_then(|d| d.breach), None);
    assert!(recorder.breaches.lock().unwrap().is_empty());
    assert_eq!(breaches_in_history(&engine, &item.session_id).await, 0);
}

#[tokio::test]
async fn an_mcp_agent_executing_other_terms_is_reported_to_the_person_once() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = recorded(&engine);
    let (r, item) = run(&world, &engine, Person::Approves, "cheat").await;
    checked(&r);
    assert!(r["report"]["breach"].as_str().is_some(), "{r}");
    engine.refresh().await.unwrap();
    engine.refresh().await.unwrap();
    let notices = recorder.breaches.lock().unwrap().clone();
    assert_eq!(notices.len(), 1, "told once: {notices:?}");
    assert_eq!(breaches_in_history(&engine, &item.session_id).await, 1);
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    let breach = view
        .decision
        .and_then(|d| d.breach)
        .expect("the breach on the decided terms");
    assert_eq!(notices[0].body, breach);
    assert_eq!(
        notices[0].title,
        "Your agent executed terms with Contoso Ltd that you did not approve"
    );
    assert!(breach.contains("other terms"), "{breach}");
}

#[tokio::test]
async fn an_mcp_agent_declined_or_countered_in_the_console_abandons() {
    for person in [Person::Declines, Person::Counters] {
        let world = World::start().await;
        let (_data, engine) = world.engine("ada@fabrikam.example").await;
        let (r, _) = run(&world, &engine, person, "honest").await;
        checked(&r);
        match person {
            Person::Declines => {
                assert_eq!(r["status"], "denied", "{r}");
                assert_eq!(
                    r["decision"]["reason"], "Contoso is on hold with finance.",
                    "{r}"
                );
            }
            _ => {
                assert_eq!(r["status"], "countered", "{r}");
                assert_eq!(r["decision"]["counter_terms"]["total"], "2350.00", "{r}");
            }
        }
        assert_eq!(r["report"]["status"], r["status"], "{r}");
        assert_eq!(
            r["report"]["breach"],
            Value::Null,
            "abandoning breaks nothing: {r}"
        );
    }
}

/// The same through a Concordia gate session: the reference SDK's buying
/// agent mirrors its negotiation to the gate and asks through MCP
/// (`crates/host/interop/mcp_buyer.py`); the person approves in the engine;
/// the agent checks the receipt with the host's tool and the SDK, and
/// accepts.
#[tokio::test]
async fn a_concordia_agent_asking_through_mcp_is_decided_in_the_console() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let code = world
        .host()
        .gate_enroll_code(&world.org, "Procurement Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let mut child = tokio::process::Command::new(python())
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../host/interop/mcp_buyer.py"))
        .args(["--host", &world.url, "--code", &code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || match lines.next_line().await.unwrap() {
        Some(line) => serde_json::from_str::<Value>(&line).unwrap(),
        None => {
            let mut err = String::new();
            stderr.read_to_string(&mut err).await.unwrap();
            panic!("the MCP agent stopped: {err}");
        }
    };
    let enrolled = next().await;
    let agent_id = enrolled["enrolled"].as_str().expect("enrolled").to_owned();
    let token = world.host().mcp_token(&agent_id).await.unwrap().token;
    stdin
        .write_all(format!("{token}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let waiting = next().await;
    assert!(waiting["waiting"].is_object(), "{waiting}");
    let item = {
        let mut found = None;
        for _ in 0..40 {
            engine.refresh().await.unwrap();
            found = engine
                .inbox()
                .await
                .unwrap()
                .into_iter()
                .find(|i| i.protocol == "concordia");
            if found.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        found.expect("the Concordia offer in the inbox")
    };
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
    let r = next().await;
    assert!(child.wait().await.unwrap().success(), "{r}");
    let r = &r["result"];
    assert_eq!(r["status"], "approved", "{r}");
    assert_eq!(r["after_bound"]["status"], "pending", "{r}");
    assert_eq!(r["host_checks"][0]["valid"], true, "{r}");
    assert_eq!(
        r["sdk_checks"][0]["valid"], true,
        "the SDK accepts the engine's receipt: {r}"
    );
    assert_eq!(r["state"], "agreed", "it accepted: {r}");
    engine.refresh().await.unwrap();
    let view = engine
        .proposal_view(&item.host_id, &item.session_id, &item.event_hash)
        .await
        .unwrap();
    assert_eq!(view.decision.and_then(|d| d.breach), None);
}
