//! The MCP surface (docs/mcp.md) with the official Python MCP SDK (`mcp`,
//! in .venv/ by `bash .ci/setup`) as the agent's client, over real HTTP to
//! a real host: an agent built on the reference Concordia SDK
//! (`crates/host/interop/mcp_buyer.py`) mirrors its negotiation to the
//! gate, asks through MCP about the seller's standing offer, waits past one
//! bound (still pending), and gets the person's decision (approve, decline
//! with a reason, counter), whose receipt it checks with the host's tool
//! and the SDK's `verify_approval_receipt`. Then every refusal: a wrong,
//! revoked or missing token, a revoked agent, another agent's session,
//! malformed arguments, an oversized body, a browser's Origin.

use std::process::Stdio;

use countersign_client::{ApproverClient, GateDecisionInput};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::common::*;
use crate::gate_interop::python;
use crate::gate_support::{now_text, Talk, SELLER};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Approves,
    Declines,
    Counters,
}

fn script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop/mcp_buyer.py")
}

pub(crate) async fn next_json(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    stderr: &mut tokio::process::ChildStderr,
) -> Value {
    match lines.next_line().await.unwrap() {
        Some(line) => serde_json::from_str(&line).unwrap(),
        None => {
            let mut err = String::new();
            stderr.read_to_string(&mut err).await.unwrap();
            panic!("the MCP agent stopped: {err}");
        }
    }
}

/// Runs the MCP agent against `t`, the person deciding as `person`;
/// answers what the agent reports.
async fn ask_through_mcp(t: &TestHost, person: Person) -> Value {
    let ann = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ann",
            "ann@fabrikam.example",
        )
        .await;
    let approver = ApproverClient::new(&t.running.base_url(), ann.key.clone(), &ann.id).unwrap();
    let code = t
        .host()
        .gate_enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Procurement Buyer",
            "concordia",
        )
        .await
        .unwrap()
        .code;
    let mut child = tokio::process::Command::new(python())
        .arg(script())
        .args(["--host", &t.running.base_url(), "--code", &code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stderr = child.stderr.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();

    // The admin issues the enrolled agent its MCP token.
    let enrolled = next_json(&mut lines, &mut stderr).await;
    let agent_id = enrolled["enrolled"].as_str().expect("enrolled").to_owned();
    let token = t.host().mcp_token(&agent_id).await.unwrap().token;
    stdin
        .write_all(format!("{token}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();

    let waiting = next_json(&mut lines, &mut stderr).await;
    let sid = waiting["waiting"]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("the agent asked first: {waiting}"))
        .to_owned();
    let id = format!("concordia:{sid}");
    let summary = approver.summary().await.unwrap();
    let session = summary.sessions.iter().find(|s| s.id == id).unwrap();
    let pending = session.pending[0].clone();
    assert_eq!(
        pending.request_id.as_deref(),
        waiting["waiting"]["request_id"].as_str()
    );
    let log = approver.gate_log(&id, None).await.unwrap();
    let offer: Value =
        serde_json::from_str(log.messages[(pending.seq - 1) as usize].get()).unwrap();
    let input = GateDecisionInput {
        session_id: &sid,
        pending: &pending,
        offer_message: &offer,
    };
    let request = match person {
        Person::Approves => approver.approve_gate_request(&input).unwrap(),
        Person::Declines => approver
            .decline_gate_request(&input, "Above our benchmark for this class of sensor.")
            .unwrap(),
        Person::Counters => approver
            .counter_gate_request(
                &input,
                "We can do 1,950.",
                json!({"price": {"value": 1950, "currency": "USD"}}),
            )
            .unwrap(),
    };
    approver.decide_gate(&id, &request).await.unwrap();

    let result = next_json(&mut lines, &mut stderr).await;
    let status = child.wait().await.unwrap();
    assert!(status.success(), "the MCP agent failed: {result}");
    result["result"].clone()
}

fn common_checks(r: &Value) {
    assert_eq!(
        r["tools"],
        json!([
            "ask_about_terms",
            "check_receipt",
            "get_decision",
            "report_outcome",
            "request_decision",
            "wait_for_decision"
        ]),
        "no tool can approve: {r}"
    );
    assert_eq!(r["asked"]["status"], "pending", "{r}");
    assert_eq!(
        r["asked_about_the_offer"], true,
        "the standing offer was found: {r}"
    );
    assert_eq!(r["asked"]["amount"], "2000.00 USD", "{r}");
    assert!(
        r["asked"]["chain"]["steps"].is_array(),
        "the chain it needs: {r}"
    );
    assert_eq!(r["after_bound"]["status"], "pending", "a bound passed: {r}");
    assert!(
        r["after_bound"]["next"]
            .as_str()
            .unwrap()
            .contains("wait_for_decision again"),
        "{r}"
    );
}

#[tokio::test]
async fn an_mcp_agent_asks_a_person_approves_and_the_receipt_verifies_everywhere() {
    let t = start(roomy_limits()).await;
    let r = ask_through_mcp(&t, Person::Approves).await;
    common_checks(&r);
    assert_eq!(r["status"], "approved", "{r}");
    assert_eq!(
        r["decision"]["decided_by"][0]["name"], "Ann",
        "who decided: {r}"
    );
    let host = &r["host_checks"][0];
    assert_eq!(host["valid"], true, "the host's check_receipt: {r}");
    assert_eq!(host["recorded_by_host"], true, "{r}");
    assert_eq!(host["decision"], "approve", "{r}");
    assert_eq!(
        r["sdk_checks"][0]["valid"], true,
        "the Concordia SDK's verify: {r}"
    );
    assert_eq!(r["sdk_checks"][0]["checks"]["offer_hash"], true, "{r}");
    assert_eq!(
        r["forged_check"]["valid"], false,
        "a changed receipt fails: {r}"
    );
    assert_eq!(r["proven"], true, "{r}");
    assert_eq!(r["state"], "agreed", "{r}");
}

#[tokio::test]
async fn an_mcp_agent_told_no_with_a_reason_does_not_accept() {
    let t = start(roomy_limits()).await;
    let r = ask_through_mcp(&t, Person::Declines).await;
    common_checks(&r);
    assert_eq!(r["status"], "denied", "{r}");
    assert_eq!(
        r["decision"]["reason"], "Above our benchmark for this class of sensor.",
        "{r}"
    );
    assert_eq!(r["host_checks"][0]["decision"], "deny", "{r}");
    assert_eq!(r["host_checks"][0]["valid"], true, "{r}");
    assert_eq!(r["sdk_checks"][0]["valid"], true, "{r}");
    assert_eq!(r["last_type"], "negotiate.counter", "{r}");
    assert_eq!(r["state"], "active", "{r}");
}

#[tokio::test]
async fn an_mcp_agent_countered_sends_the_persons_terms() {
    let t = start(roomy_limits()).await;
    let r = ask_through_mcp(&t, Person::Counters).await;
    common_checks(&r);
    assert_eq!(r["status"], "countered", "{r}");
    assert_eq!(
        r["decision"]["counter_terms"]["price"]["value"], 1950,
        "{r}"
    );
    assert_eq!(r["sdk_checks"][0]["valid"], true, "{r}");
    assert_eq!(r["last_type"], "negotiate.counter", "{r}");
}

/// A gate agent of `org` with a Concordia session mirrored (the seller's
/// offer standing), and its MCP token.
struct McpAgent {
    token: String,
    party: Party,
    talk: Talk,
}

async fn agent_with_session(t: &TestHost, org: &str, session_id: &str) -> McpAgent {
    let party = t.gate_agent(org, None).await;
    let mut talk = Talk::opened(session_id);
    talk.say(SELLER, "negotiate.offer", Talk::offer("150000.00", 3600));
    t.mirror(&party, &talk).await;
    let token = t.host().mcp_token(&party.id).await.unwrap().token;
    McpAgent { token, party, talk }
}

/// One raw JSON-RPC `tools/call` (or any method), as any MCP client sends
/// it on the wire: answers the HTTP status and body.
pub(crate) async fn raw(
    t: &TestHost,
    token: Option<&str>,
    body: Vec<u8>,
    extra: &[(&str, &str)],
) -> (u16, String) {
    let mut req = reqwest::Client::new()
        .post(format!("{}/mcp", t.running.base_url()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let answer = req.send().await.unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

pub(crate) fn call(name: &str, arguments: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    }))
    .unwrap()
}

/// A tool's answer: `Ok(structured)` or `Err(error text)`.
pub(crate) async fn tool(
    t: &TestHost,
    token: &str,
    name: &str,
    arguments: Value,
) -> Result<Value, String> {
    let (status, body) = raw(t, Some(token), call(name, arguments), &[]).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("JSON: {body}"));
    let result = &v["result"];
    if result["isError"] == true {
        Err(result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    } else {
        assert!(v["error"].is_null(), "{v}");
        Ok(result["structuredContent"].clone())
    }
}

fn ask_args(a: &McpAgent, request_id: &str) -> Value {
    json!({
        "session_id": a.talk.session_id,
        "request_id": request_id,
        "amount": "150000.00 USD",
        "expires_at": now_text(600),
    })
}

#[tokio::test]
async fn a_wrong_missing_or_revoked_token_gets_the_uniform_refusal_and_nothing_is_read() {
    let t = start(roomy_limits()).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_tokens").await;
    let args = ask_args(&a, "req_1");
    // The token works: the control.
    assert!(tool(
        &t,
        &a.token,
        "get_decision",
        json!({"session_id": "ses_tokens", "request_id": "none"})
    )
    .await
    .unwrap_err()
    .starts_with("not_found"));

    let (_, uniform) = raw(&t, None, call("request_decision", args.clone()), &[]).await;
    let revoked = t.host().mcp_token(&a.party.id).await.unwrap();
    let tokens = countersign_host::mcp_admin::list_tokens(t.host().store().as_ref())
        .await
        .unwrap();
    assert_eq!(tokens.len(), 2, "two tokens issued, none shown: {tokens:?}");
    countersign_host::mcp_admin::revoke_token(
        t.host().store().as_ref(),
        &revoked.info.token_id,
        time::OffsetDateTime::now_utc(),
    )
    .await
    .unwrap();
    let mut wrong = a.token.clone();
    wrong.pop();
    wrong.push(if a.token.ends_with('A') { 'B' } else { 'A' });
    for (what, token) in [
        ("no token", None),
        ("a token one character off", Some(wrong.as_str())),
        ("not an MCP token", Some("anex_abc")),
        ("a revoked token", Some(revoked.token.as_str())),
    ] {
        let (status, body) = raw(&t, token, call("request_decision", args.clone()), &[]).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert_eq!(body, uniform, "{what}: the same bytes as any refusal");
    }
    // Revoking the agent refuses its tokens too.
    countersign_host::admin::revoke_agent(t.host().store().as_ref(), &a.party.id)
        .await
        .unwrap();
    let (status, body) = raw(&t, Some(&a.token), call("request_decision", args), &[]).await;
    assert_eq!(status, 401, "a revoked agent: {body}");
    assert_eq!(body, uniform);
    assert_eq!(t.count("gate_requests").await, 0, "nothing was asked");
}

#[tokio::test]
async fn another_agents_or_another_orgs_session_is_as_unknown_as_none() {
    let t = start(roomy_limits()).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_mine").await;
    let other_org = t.host().create_org("Contoso").await.unwrap().org_handle;
    let b = agent_with_session(&t, &other_org, "ses_theirs").await;
    let (sid, rid) = ("ses_mine", "req_1");
    tool(&t, &a.token, "request_decision", ask_args(&a, rid))
        .await
        .unwrap();
    let unknown = tool(
        &t,
        &b.token,
        "get_decision",
        json!({"session_id": "ses_nothing", "request_id": rid}),
    )
    .await
    .unwrap_err();
    assert!(unknown.starts_with("unauthorized"), "{unknown}");
    for (name, args) in [
        (
            "get_decision",
            json!({"session_id": sid, "request_id": rid}),
        ),
        (
            "wait_for_decision",
            json!({"session_id": sid, "request_id": rid, "wait_seconds": 1}),
        ),
        (
            "request_decision",
            json!({"session_id": sid, "request_id": "req_2", "expires_at": now_text(600)}),
        ),
        (
            "check_receipt",
            json!({"receipt": {}, "session_id": sid, "request_id": rid}),
        ),
    ] {
        let e = tool(&t, &b.token, name, args).await.unwrap_err();
        assert_eq!(e, unknown, "{name}: another org's session reads as none");
    }
    // Another agent of the same org is refused the same way.
    let c = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_colleague").await;
    let e = tool(
        &t,
        &c.token,
        "get_decision",
        json!({"session_id": sid, "request_id": rid}),
    )
    .await
    .unwrap_err();
    assert_eq!(e, unknown);
    assert_eq!(
        t.count("gate_requests").await,
        1,
        "only the owner's request"
    );
}

#[tokio::test]
async fn malformed_arguments_each_name_their_field_and_store_nothing() {
    let t = start(roomy_limits()).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_bad").await;
    let with = |key: &str, value: Value| {
        let mut v = ask_args(&a, "req_bad");
        v[key] = value;
        v
    };
    let mut without_expiry = ask_args(&a, "req_bad");
    without_expiry.as_object_mut().unwrap().remove("expires_at");
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "a session id with a slash",
            with("session_id", json!("../ses_bad")),
            "session_id",
        ),
        (
            "a request id with markup",
            with("request_id", json!("<script>alert(1)</script>")),
            "request_id",
        ),
        (
            "an empty request id",
            with("request_id", json!("")),
            "request_id",
        ),
        (
            "an expiry in words",
            with("expires_at", json!("tomorrow at nine")),
            "expires_at",
        ),
        (
            "an expiry already past",
            with("expires_at", json!("2020-01-01T00:00:00Z")),
            "expired",
        ),
        ("no expiry", without_expiry, "expires_at"),
        (
            "an amount in words",
            with("amount", json!("150000 dollars")),
            "amount",
        ),
        (
            "an amount as a JSON number",
            with("amount", json!(150000.0)),
            "amount",
        ),
        (
            "an amount unlike the offer's",
            with("amount", json!("1.00 USD")),
            "1.00 USD",
        ),
        (
            "an unknown message hash",
            with("message_hash", json!("sha256:00")),
            "message_hash",
        ),
        (
            "an unknown argument",
            with("approve", json!(true)),
            "approve",
        ),
    ];
    for (what, args, names) in cases {
        let e = tool(&t, &a.token, "request_decision", args)
            .await
            .unwrap_err();
        assert!(e.contains(names), "{what}: the error names {names}: {e}");
        assert_eq!(t.count("gate_requests").await, 0, "{what}: nothing stored");
    }
    for (seconds, names) in [
        (json!(0), "wait_seconds"),
        (json!(51), "wait_seconds"),
        (json!("ten"), "wait_seconds"),
    ] {
        let e = tool(
            &t,
            &a.token,
            "wait_for_decision",
            json!({"session_id": "ses_bad", "request_id": "r", "wait_seconds": seconds}),
        )
        .await
        .unwrap_err();
        assert!(e.contains(names), "{e}");
    }
    for (args, names) in [
        (json!({"receipt": "a receipt"}), "receipt"),
        (
            json!({"receipt": {}, "session_id": "ses_bad"}),
            "request_id",
        ),
        (json!({"receipt": {}}), "offer"),
        (
            json!({"receipt": {}, "offer": {}, "session_id": "ses_bad", "request_id": "r"}),
            "offer",
        ),
    ] {
        let e = tool(&t, &a.token, "check_receipt", args).await.unwrap_err();
        assert!(e.contains(names), "{e}");
    }
}

#[tokio::test]
async fn a_repeated_ask_is_the_same_request_and_a_changed_one_conflicts() {
    let t = start(roomy_limits()).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_again").await;
    let args = ask_args(&a, "req_1");
    let first = tool(&t, &a.token, "request_decision", args.clone())
        .await
        .unwrap();
    assert_eq!(
        first["message_hash"],
        a.talk.hash(2),
        "the seller's standing offer"
    );
    let again = tool(&t, &a.token, "request_decision", args.clone())
        .await
        .unwrap();
    assert_eq!(again["request_id"], first["request_id"]);
    assert_eq!(again["created_at"], first["created_at"]);
    let mut changed = args;
    changed["expires_at"] = json!(now_text(900));
    let e = tool(&t, &a.token, "request_decision", changed)
        .await
        .unwrap_err();
    assert!(e.starts_with("request_conflict"), "{e}");
    assert_eq!(t.count("gate_requests").await, 1);
    // With the offer answered, nothing stands to ask about.
    let mut talk = a.talk;
    talk.say(
        crate::gate_support::BUYER,
        "negotiate.counter",
        Talk::offer("140000.00", 3600),
    );
    let (s, v) = t.mirror_more(&a.party, &talk, 3).await;
    assert_eq!(s, 200, "{v}");
    let e = tool(
        &t,
        &a.token,
        "request_decision",
        json!({"session_id": "ses_again", "request_id": "req_2", "expires_at": now_text(600)}),
    )
    .await
    .unwrap_err();
    assert!(e.starts_with("not_standing"), "{e}");
    let read = tool(
        &t,
        &a.token,
        "get_decision",
        json!({"session_id": "ses_again", "request_id": "req_1"}),
    )
    .await
    .unwrap();
    assert_eq!(read["status"], "superseded", "{read}");
    assert!(
        read["next"].as_str().unwrap().contains("Do not accept"),
        "{read}"
    );
}

#[tokio::test]
async fn an_oversized_call_a_browser_page_and_a_flood_are_refused() {
    let mut limits = roomy_limits();
    limits.gate_max_body_bytes = 64 * 1024;
    let t = start(limits).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_big").await;
    let mut big = ask_args(&a, "req_big");
    big["padding"] = json!("x".repeat(100 * 1024));
    let (status, body) = raw(&t, Some(&a.token), call("request_decision", big), &[]).await;
    assert_eq!(status, 413, "{body}");
    let (status, body) = raw(
        &t,
        Some(&a.token),
        call("request_decision", ask_args(&a, "req_web")),
        &[("origin", "https://evil.example")],
    )
    .await;
    assert!(
        status == 403 || status == 400,
        "a browser's call is refused: {status} {body}"
    );
    assert_eq!(t.count("gate_requests").await, 0);
}

#[tokio::test]
async fn an_agents_calls_count_against_its_rate_limit() {
    let t = start(small_limits(40)).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_flood").await;
    let mut refused = None;
    for i in 0..60 {
        let (status, body) = raw(
            &t,
            Some(&a.token),
            call(
                "get_decision",
                json!({"session_id": "ses_flood", "request_id": "r"}),
            ),
            &[],
        )
        .await;
        if status != 200 {
            refused = Some((i, status, body));
            break;
        }
    }
    let (i, status, body) = refused.expect("a limit is hit");
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("rate_limited"), "{body}");
    assert!(i <= 40, "within the limit's count: {i}");
}

#[tokio::test]
async fn every_tool_describes_its_arguments_for_a_model() {
    let t = start(roomy_limits()).await;
    let a = agent_with_session(&t, countersign_host::SANDBOX_HANDLE, "ses_list").await;
    let body =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).unwrap();
    let (status, text) = raw(&t, Some(&a.token), body, &[]).await;
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let tools = v["result"]["tools"].as_array().unwrap();
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert!(tool["description"].as_str().unwrap().len() > 60, "{name}");
        let props = tool["inputSchema"]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name}: {tool}"));
        for (arg, schema) in props {
            assert!(
                schema["description"].as_str().is_some_and(|d| d.len() > 10),
                "{name}.{arg} is described: {schema}"
            );
        }
    }
    let ask = tools
        .iter()
        .find(|t| t["name"] == "request_decision")
        .unwrap();
    let required: Vec<&str> = ask["inputSchema"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["session_id", "request_id", "expires_at"]);
    assert!(ask["inputSchema"]["properties"]["amount"]["description"]
        .as_str()
        .unwrap()
        .contains("150000.00 USD"));
}
