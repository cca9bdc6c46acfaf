//! A gate request's deadline is the organization's own (docs/approver-api.md,
//! "Extending a gate request's deadline"), over real HTTP on the store this
//! suite runs on: an approver who may decide the request moves it later
//! with a reason, which the agent reads beside the new deadline; each
//! refusal alone (earlier, past the offer's own validity, past 30 days, no
//! reason, not the approver's step, already expired, an ANP offer) changes
//! nothing.

use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::common::*;
use crate::gate_support::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

/// A mirrored session whose seller offered, valid for `valid_secs`, and
/// the agent's request `r1` about it, due in 30 minutes.
async fn asked(t: &TestHost, agent: &Party, session_id: &str, valid_secs: i64) -> Talk {
    let mut talk = Talk::opened(session_id);
    talk.say(SELLER, "negotiate.offer", Talk::offer("1000", valid_secs));
    t.mirror(agent, &talk).await;
    let (s, v) = t.ask(agent, &talk, "r1", 2, None, 1800).await;
    assert_eq!(s, 201, "{v}");
    talk
}

fn path(session_id: &str) -> String {
    format!("/api/console/v1/sessions/concordia:{session_id}/requests/r1/deadline")
}

fn at(t: &TestHost, secs: i64) -> String {
    anp::api::format_timestamp(t.host().clock().now() + time::Duration::seconds(secs))
}

async fn extend(t: &TestHost, who: &Party, session_id: &str, body: Value) -> (u16, Value) {
    let (s, b) = t.signed(who, "POST", &path(session_id), &body).await;
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_approver_extends_a_gate_requests_deadline_with_a_reason_the_agent_reads() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let talk = asked(&t, &agent, "s-extend", 3 * 3600).await;
    let before = t.request_status(&agent, &talk, "r1").await;

    // The offer stands for an hour (its session's offer time): 50 minutes
    // is within it.
    let to = at(&t, 50 * 60);
    let (s, r) = extend(
        &t,
        &ann,
        "s-extend",
        json!({"expires_at": to, "reason": "Finance is in a budget meeting until 3 pm"}),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "pending");
    let moved = anp::api::parse_timestamp(r["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(
        moved.unix_timestamp(),
        anp::api::parse_timestamp(&to).unwrap().unix_timestamp()
    );
    let e = &r["extensions"][0];
    assert_eq!(e["by"], "ann@fabrikam.example");
    assert_eq!(e["from"], before["expires_at"]);
    assert_eq!(e["reason"], "Finance is in a budget meeting until 3 pm");

    // The agent reads the new deadline and why.
    let now = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(now["expires_at"], r["expires_at"]);
    assert_eq!(now["extensions"], r["extensions"]);
    // Past the old deadline it is still pending.
    t.host()
        .clock()
        .advance(std::time::Duration::from_secs(31 * 60));
    assert_eq!(
        t.request_status(&agent, &talk, "r1").await["status"],
        "pending"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn each_refusal_alone_names_what_is_wrong_and_changes_nothing() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    // The offer itself stands for an hour.
    let talk = asked(&t, &agent, "s-refuse", 3600).await;
    let before = t.request_status(&agent, &talk, "r1").await;
    let reason = "a real reason";
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "earlier than now's deadline",
            json!({"expires_at": at(&t, 60), "reason": reason}),
            400,
            "later than the current deadline",
        ),
        (
            "past the offer's own validity",
            json!({"expires_at": at(&t, 2 * 3600), "reason": reason}),
            400,
            "offer's own validity",
        ),
        (
            "no reason",
            json!({"expires_at": at(&t, 45 * 60), "reason": "  "}),
            400,
            "reason must be",
        ),
        (
            "a reason of two lines",
            json!({"expires_at": at(&t, 45 * 60), "reason": "one\ntwo"}),
            400,
            "reason must be",
        ),
        (
            "not a time",
            json!({"expires_at": "tomorrow", "reason": reason}),
            400,
            "RFC 3339",
        ),
        (
            "a member it does not know",
            json!({"expires_at": at(&t, 45 * 60), "reason": reason, "also": 1}),
            400,
            "deadline",
        ),
    ];
    for (what, body, status, says) in cases {
        let (s, r) = extend(&t, &ann, "s-refuse", body).await;
        assert_eq!(s, status, "{what}: {r}");
        assert!(r.to_string().contains(says), "{what}: {r}");
        let after = t.request_status(&agent, &talk, "r1").await;
        assert_eq!(after["expires_at"], before["expires_at"], "{what} moved it");
        assert!(after.get("extensions").is_none(), "{what} recorded one");
    }
    // Thirty days is the furthest, whatever the offer allows.
    let long = asked(&t, &agent, "s-long", 40 * 86_400).await;
    let (s, r) = extend(
        &t,
        &ann,
        "s-long",
        json!({"expires_at": at(&t, 31 * 86_400), "reason": reason}),
    )
    .await;
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("at most 30 days"), "{r}");
    let _ = long;
    // An ANP offer's expiry is the vendor's.
    let (s, b) = t
        .signed(
            &ann,
            "POST",
            "/api/console/v1/sessions/some-anp-session/requests/r1/deadline",
            &json!({"expires_at": at(&t, 3600), "reason": reason}),
        )
        .await;
    assert_eq!(s, 400);
    assert!(String::from_utf8_lossy(&b).contains("the vendor's"));
    // Expired: too late to extend.
    t.host()
        .clock()
        .advance(std::time::Duration::from_secs(31 * 60));
    let (s, r) = extend(
        &t,
        &ann,
        "s-refuse",
        json!({"expires_at": at(&t, 10 * 60), "reason": reason}),
    )
    .await;
    assert_eq!(s, 409, "{r}");
    assert!(r.to_string().contains("expired"), "{r}");
    t.running.shutdown().await;
}

#[tokio::test]
async fn only_who_may_decide_the_request_now_may_extend_it() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let fay = t.enroll(ORG, "Fay", "fay@fabrikam.example").await;
    t.host()
        .load_authority(
            ORG,
            r#"
[roles]
finance = ["fay@fabrikam.example"]
buyer = ["ann@fabrikam.example"]

[unnamed_currency]
reason = "finance decides"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "finance decides"
[[no_rule.step]]
role = "finance"
"#,
            "the test",
        )
        .await
        .unwrap();
    let _talk = asked(&t, &agent, "s-roles", 3 * 3600).await;
    let body = json!({"expires_at": at(&t, 50 * 60), "reason": "needs another look"});
    let (s, r) = extend(&t, &ann, "s-roles", body.clone()).await;
    assert_eq!(s, 409, "{r}");
    assert!(r.to_string().contains("finance"), "{r}");
    let (s, r) = extend(&t, &fay, "s-roles", body).await;
    assert_eq!(s, 200, "{r}");
    let _ = OffsetDateTime::now_utc();
    t.running.shutdown().await;
}
