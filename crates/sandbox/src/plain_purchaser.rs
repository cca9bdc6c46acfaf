//! The org's purchasing assistant: an agent built on no negotiation
//! protocol that asks a person about plain terms through the embedded
//! host's MCP endpoint, as any MCP client does (stateless JSON-RPC over
//! HTTP with its bearer token). On first launch it asks about Contoso's
//! quote and then revises it after Contoso came down, so a new user sees
//! plain terms beside the terms they revise. It then waits for the
//! person's decision: approved, it reports executing exactly those terms;
//! countered, it puts the person's terms to Contoso, which accepts them,
//! and asks again; declined, it abandons. Its token and progress are kept
//! in a file beside the host's database (owner-only: the token is a
//! credential).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::gate_agent::{demo_error, load, now_text, save};
use crate::{DemoHost, SandboxError};

const FILE: &str = "plain-purchaser.json";
const NAME: &str = "Purchasing assistant";

fn fail(e: impl std::fmt::Display) -> SandboxError {
    demo_error("the plain-terms demo", e)
}

/// Where the assistant is.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    /// Its MCP bearer token.
    token: String,
    /// Its latest request's id (none before the first).
    latest: Option<String>,
    /// How many requests it has made.
    asked: u32,
    /// Set once it reported what it did.
    done: bool,
}

fn terms(unit_price: &str, conditions: &[&str]) -> Value {
    json!({
        "counterparty": {"name": "Contoso Sensors Ltd", "id": "contoso-sensors.example"},
        "currency": "USD",
        "line_items": [
            {"description": "Industrial temperature sensor", "sku": "SEN-200", "quantity": "2000", "unit": "each", "unit_price": unit_price},
            {"description": "On-site calibration", "sku": "CAL-1", "quantity": "1", "unit_price": "1500.00"}
        ],
        "term": "12 months",
        "conditions": conditions,
    })
}

/// One tool call: its structured answer, or the tool's error text.
async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    name: &str,
    arguments: Value,
) -> Result<Value, SandboxError> {
    let answer = http
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .bearer_auth(token)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}}))
        .send()
        .await
        .map_err(fail)?;
    let status = answer.status();
    let v: Value = answer.json().await.map_err(fail)?;
    if !status.is_success() {
        return Err(fail(format!("{name}: HTTP {status}: {v}")));
    }
    if v["result"]["isError"] == true {
        return Err(fail(format!(
            "{name}: {}",
            v["result"]["content"][0]["text"]
        )));
    }
    Ok(v["result"]["structuredContent"].clone())
}

async fn ask(
    http: &reqwest::Client,
    sandbox: &DemoHost,
    state: &mut State,
    terms: Value,
    rationale: &str,
) -> Result<(), SandboxError> {
    let request_id = format!("po-{}", 7780 + state.asked);
    let mut args = json!({
        "request_id": request_id, "terms": terms, "rationale": rationale,
        "expires_at": now_text(crate::gate_agent::ASK_SECS),
    });
    if let Some(previous) = &state.latest {
        args["revises"] = json!(previous);
    }
    call(http, &sandbox.url, &state.token, "ask_about_terms", args).await?;
    state.latest = Some(request_id);
    state.asked += 1;
    Ok(())
}

/// Runs the assistant for as long as the sandbox runs.
pub(crate) async fn run(sandbox: &DemoHost) -> Result<(), SandboxError> {
    let path = sandbox.dir.join(FILE);
    let mut state = match load::<State>(&path) {
        Some(state) => state,
        None => {
            let agent = sandbox
                .host
                .mcp_agent(countersign_host::SANDBOX_HANDLE, NAME)
                .await
                .map_err(fail)?;
            let state = State {
                token: agent.credential.token,
                latest: None,
                asked: 0,
                done: false,
            };
            save(&path, &state)?;
            state
        }
    };
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(70))
        .build()
        .map_err(fail)?;
    loop {
        let before = serde_json::to_string(&state).map_err(fail)?;
        let turn = step(&http, sandbox, &mut state).await;
        if serde_json::to_string(&state).map_err(fail)? != before {
            save(&path, &state)?;
        }
        match turn {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => tracing::debug!("{e}"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One turn; `true` once there is nothing more to do.
async fn step(
    http: &reqwest::Client,
    sandbox: &DemoHost,
    state: &mut State,
) -> Result<bool, SandboxError> {
    if state.done {
        return Ok(true);
    }
    match state.asked {
        0 => {
            ask(http, sandbox, state, terms("12.50", &["Net 30"]),
                "Contoso's quote is the lowest of the three we received (Contoso 12.50, Fabrikam 13.10, Northwind 13.95 a sensor).").await?;
            return Ok(false);
        }
        1 => {
            ask(
                http,
                sandbox,
                state,
                terms("11.90", &["Net 30", "Delivery by 2027-01-15"]),
                "Contoso came down to 11.90 a sensor if we accept delivery by mid-January.",
            )
            .await?;
            return Ok(false);
        }
        _ => {}
    }
    let Some(latest) = state.latest.clone() else {
        return Ok(true);
    };
    let status = call(
        http,
        &sandbox.url,
        &state.token,
        "wait_for_decision",
        json!({"request_id": latest, "wait_seconds": 50}),
    )
    .await?;
    match status["status"].as_str() {
        Some("approved") => {
            let approved = status["offer"]["terms"].clone();
            let mut executed = approved.clone();
            if let Some(o) = executed.as_object_mut() {
                o.remove("total");
            }
            call(
                http,
                &sandbox.url,
                &state.token,
                "report_outcome",
                json!({"request_id": latest, "outcome": "executed", "terms": executed}),
            )
            .await?;
            state.done = true;
            Ok(true)
        }
        Some("countered") => {
            let mut counter = status["counter_terms"].clone();
            if let Some(o) = counter.as_object_mut() {
                o.remove("total");
            }
            ask(
                http,
                sandbox,
                state,
                counter,
                "Contoso accepted the terms you proposed.",
            )
            .await?;
            Ok(false)
        }
        Some("denied") | Some("expired") => {
            call(
                http,
                &sandbox.url,
                &state.token,
                "report_outcome",
                json!({"request_id": latest, "outcome": "abandoned"}),
            )
            .await?;
            state.done = true;
            Ok(true)
        }
        _ => Ok(false),
    }
}
