//! Plain terms over the gate's signed HTTP API (docs/gate-api.md, "Plain
//! terms"), for agents that use no MCP: a request read strictly (every
//! field named, nothing stored when refused), its repeat, a conflict, the
//! thread's entries as the agent reads them, and the protocol boundaries.

use serde_json::{json, Value};

use crate::common::*;
use crate::gate_support::now_text;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

fn terms() -> Value {
    json!({
        "counterparty": {"name": "Contoso Ltd", "id": "contoso.example"},
        "currency": "USD",
        "line_items": [
            {"description": "Industrial sensor", "sku": "SEN-200", "quantity": "2000", "unit": "each", "unit_price": "1.25"}
        ],
        "term": "12 months",
        "conditions": ["Net 30"],
    })
}

fn ask(request_id: &str, terms: Value) -> Value {
    json!({"request_id": request_id, "terms": terms, "expires_at": now_text(3600),
           "rationale": "Cheapest of three quotes."})
}

#[tokio::test]
async fn plain_terms_are_asked_about_repeated_safely_and_read_back_with_their_signed_entry() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent_for(ORG, "plain", None).await;
    // One body, sent twice below: a repeat is the same bytes.
    let first = ask("po-1", terms());
    let (s, v) = t.gate(&agent, "POST", "/plain", &first).await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["session_id"], "po-1");
    assert_eq!(v["status"], "pending");
    assert_eq!(v["amount"], "2500.00 USD");
    assert_eq!(v["entry"]["type"], "plain.terms");
    assert_eq!(v["entry"]["terms"]["total"], "2500.00");
    let key = approval_receipt::keys::parse_public_key(t.host().platform_public_key()).unwrap();
    plain::verify(&plain::Thread::empty(), "po-1", &[v["entry"].clone()], &key)
        .expect("the entry is the host's, signed");
    assert_eq!(v["message_hash"], plain::hash(&v["entry"]).as_str());

    // The same request again: the same answer, nothing new.
    let (s, again) = t.gate(&agent, "POST", "/plain", &first).await;
    assert_eq!(s, 200, "{again}");
    assert_eq!(again["created_at"], v["created_at"]);
    // The same id with other terms: a conflict.
    let mut other = terms();
    other["line_items"][0]["quantity"] = json!("3000");
    let (s, e) = t.gate(&agent, "POST", "/plain", &ask("po-1", other)).await;
    assert_eq!(
        (s, e["error"]["code"].as_str()),
        (409, Some("request_conflict")),
        "{e}"
    );
    let (s, read) = t.gate(&agent, "GET", "/plain/po-1", &Value::Null).await;
    assert_eq!(s, 200, "{read}");
    assert_eq!(read["request_id"], "po-1");
    assert_eq!(t.count("gate_messages").await, 1);
    assert_eq!(t.count("gate_requests").await, 1);

    // Another agent of the org cannot reuse the thread's name, nor see it.
    let colleague = t.gate_agent_for(ORG, "plain", None).await;
    let (s, e) = t
        .gate(&colleague, "POST", "/plain", &ask("po-1", terms()))
        .await;
    assert_eq!(
        (s, e["error"]["code"].as_str()),
        (409, Some("request_conflict")),
        "{e}"
    );
    let (s, e) = t.gate(&colleague, "GET", "/plain/po-1", &Value::Null).await;
    assert_eq!(s, 404, "{e}");
    let (s, e) = t
        .gate(
            &colleague,
            "POST",
            "/plain/po-1/outcome",
            &json!({"outcome": "abandoned"}),
        )
        .await;
    assert_eq!(s, 404, "{e}");
}

#[tokio::test]
async fn malformed_plain_terms_are_refused_naming_the_field_and_nothing_is_stored() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent_for(ORG, "plain", None).await;
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = ask("po-9", terms());
        f(&mut v);
        v
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            with(&|v| v["terms"] = json!("a purchase")),
            "terms: must be an object",
        ),
        (
            with(&|v| v["terms"]["currency"] = json!("dollars")),
            "terms.currency",
        ),
        (
            with(&|v| v["terms"]["line_items"][0]["unit_price"] = json!(1.25)),
            "terms.line_items[0].unit_price",
        ),
        (
            with(&|v| v["terms"]["line_items"][0]["quantity"] = json!("1e6")),
            "terms.line_items[0].quantity",
        ),
        (
            with(&|v| v["terms"]["line_items"][0]["description"] = json!("\u{1b}[31mred")),
            "terms.line_items[0].description",
        ),
        (
            with(&|v| v["terms"]["counterparty"]["id"] = json!("")),
            "terms.counterparty.id",
        ),
        (
            with(&|v| v["terms"]["conditions"] = json!(["ok", 7])),
            "terms.conditions[1]",
        ),
        (
            with(&|v| v["terms"]["total"] = json!("1.00")),
            "terms.total",
        ),
        (
            with(&|v| v["terms"]["approved"] = json!(true)),
            "terms.approved",
        ),
        (
            with(&|v| v["rationale"] = json!("x".repeat(4001))),
            "rationale",
        ),
        (
            with(&|v| v["expires_at"] = json!("next week")),
            "expires_at",
        ),
        (
            with(&|v| v["expires_at"] = json!("2020-01-01T00:00:00Z")),
            "expires_at",
        ),
        (with(&|v| v["request_id"] = json!("../po")), "request_id"),
        (with(&|v| v["revises"] = json!("po-0")), "revises"),
        (with(&|v| v["approve"] = json!(true)), "approve"),
    ];
    for (body, names) in cases {
        let (s, e) = t.gate(&agent, "POST", "/plain", &body).await;
        assert!(matches!(s, 400 | 409), "{names}: {s} {e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(names), "{names}: {message}");
        assert_eq!(t.gate_counts().await, [0; 5], "{names}: nothing stored");
    }
    // Markup is data: accepted, kept as text.
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/plain",
            &with(&|v| {
                v["terms"]["line_items"][0]["description"] = json!("<img src=x onerror=alert(1)>")
            }),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(
        v["entry"]["terms"]["line_items"][0]["description"],
        "<img src=x onerror=alert(1)>"
    );
}

#[tokio::test]
async fn plain_terms_and_mirrored_transcripts_do_not_cross() {
    let mut limits = roomy_limits();
    limits.gate_max_body_bytes = 16 * 1024;
    let t = start(limits).await;
    let plain_agent = t.gate_agent_for(ORG, "plain", None).await;
    let concordia_agent = t.gate_agent(ORG, None).await;
    let (s, e) = t
        .gate(&concordia_agent, "POST", "/plain", &ask("po-1", terms()))
        .await;
    assert_eq!(
        (s, e["error"]["code"].as_str()),
        (400, Some("unknown_protocol")),
        "{e}"
    );
    let (s, e) = t
        .gate(&plain_agent, "POST", "/sessions", &json!({"protocol": "plain", "session_id": "x", "keys": {}, "self": "a", "counterparty": {"id": "b"}, "messages": [{}]}))
        .await;
    assert_eq!(
        (s, e["error"]["code"].as_str()),
        (400, Some("unknown_protocol")),
        "{e}"
    );
    let mut big = ask("po-2", terms());
    big["rationale"] = json!("x".repeat(20 * 1024));
    let (s, e) = t.gate(&plain_agent, "POST", "/plain", &big).await;
    assert_eq!(s, 413, "{e}");
    assert_eq!(t.gate_counts().await, [0; 5]);
}
