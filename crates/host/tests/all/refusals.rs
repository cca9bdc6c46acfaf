//! Every refusal: the uniform 401 (byte-identical), replay, skew, oversized
//! bodies, rate limits, revoked and unverified agents, closed sessions.

use crate::common;

use anp::api;
use common::*;
use serde_json::{json, Value};

#[tokio::test]
async fn every_authentication_failure_is_the_same_bytes() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let other = t.register("Northwind").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let org = t.host().create_org("Tailspin").await.unwrap().org_handle;
    t.host().verify_agent(&vendor.id).await.unwrap();
    let disabled = t.host().create_org("Gone").await.unwrap().org_handle;
    t.host().disable_org(&disabled).await.unwrap();

    let status_path = format!("/api/agent/v1/sessions/{session}");
    let now = t.now();
    let mut refusals: Vec<(&str, u16, Vec<u8>)> = Vec::new();

    // no headers at all
    let (s, b) = t.raw("GET", &status_path, &[], vec![]).await;
    refusals.push(("no headers", s, b));
    // bad signature (signed by another key)
    let impostor = Party {
        id: vendor.id.clone(),
        key: anp::keys::generate_signing_key(),
        email: String::new(),
    };
    let (s, b) = t.signed(&impostor, "GET", &status_path, &Value::Null).await;
    refusals.push(("bad signature", s, b));
    // unknown agent
    let ghost = Party {
        id: uuid::Uuid::new_v4().to_string(),
        key: anp::keys::generate_signing_key(),
        email: String::new(),
    };
    let (s, b) = t.signed(&ghost, "GET", &status_path, &Value::Null).await;
    refusals.push(("unknown agent", s, b));
    // unknown session
    let (s, b) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{}", uuid::Uuid::new_v4()),
            &Value::Null,
        )
        .await;
    refusals.push(("unknown session", s, b));
    // another agent's session
    let (s, b) = t.signed(&other, "GET", &status_path, &Value::Null).await;
    refusals.push(("another agent's session", s, b));
    // skew: timestamp 10 minutes old
    let old = api::format_timestamp(t.host().clock().now() - time::Duration::minutes(10));
    let (s, b) = t
        .raw(
            "GET",
            &status_path,
            &signed_headers(&vendor, "GET", &status_path, b"", &old, "n-skew"),
            vec![],
        )
        .await;
    refusals.push(("skewed timestamp", s, b));
    // replay: the same nonce twice
    let h = signed_headers(&vendor, "GET", &status_path, b"", &now, "n-replay");
    let (s, _) = t.raw("GET", &status_path, &h, vec![]).await;
    assert_eq!(s, 200, "first use of a nonce passes");
    let (s, b) = t.raw("GET", &status_path, &h, vec![]).await;
    refusals.push(("replayed nonce", s, b));
    // nonce too long
    let long = "n".repeat(121);
    let (s, b) = t
        .raw(
            "GET",
            &status_path,
            &signed_headers(&vendor, "GET", &status_path, b"", &now, &long),
            vec![],
        )
        .await;
    refusals.push(("overlong nonce", s, b));
    // body tampered after signing
    let open_path = "/api/agent/v1/sessions";
    let body = serde_json::to_vec(
        &json!({ "target": { "sandbox": true }, "envelope": vendor_envelope() }),
    )
    .unwrap();
    let h = signed_headers(&vendor, "POST", open_path, &body, &now, "n-tamper");
    let mut tampered = body.clone();
    tampered.push(b' ');
    let (s, b) = t.raw("POST", open_path, &h, tampered).await;
    refusals.push(("tampered body", s, b));
    // unknown and disabled org handles, and the admin-only "sandbox" handle
    for (what, handle) in [
        (
            "unknown handle",
            "anp_org_00000000000000000000000000000000".to_owned(),
        ),
        ("disabled handle", disabled.clone()),
        ("admin handle", "sandbox".to_owned()),
    ] {
        let (s, b) = t
            .signed(
                &vendor,
                "POST",
                open_path,
                &json!({ "target": { "org_handle": handle }, "envelope": vendor_envelope() }),
            )
            .await;
        refusals.push((what, s, b));
    }
    // an approver id on the agent API, an agent id on the approver API
    let approver = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (s, b) = t.signed(&approver, "GET", &status_path, &Value::Null).await;
    refusals.push(("approver on agent API", s, b));
    let (s, b) = t
        .signed(&vendor, "GET", "/api/console/v1/summary", &Value::Null)
        .await;
    refusals.push(("agent on approver API", s, b));
    // revoked agent
    t.host().revoke_agent(&other.id).await.unwrap();
    let (s, b) = t
        .signed(
            &other,
            "POST",
            open_path,
            &json!({ "target": { "sandbox": true }, "envelope": vendor_envelope() }),
        )
        .await;
    refusals.push(("revoked agent", s, b));

    let (_, _, first) = &refusals[0];
    for (what, status, body) in &refusals {
        assert_eq!(*status, 401, "{what}");
        assert_eq!(body, first, "{what}: body differs from the uniform refusal");
    }
    let e: api::ErrorBody = serde_json::from_slice(first).unwrap();
    assert_eq!(e.error.code, "unauthorized");

    // and a valid handle works for the verified agent
    let (s, b) = t
        .signed(
            &vendor,
            "POST",
            open_path,
            &json!({ "target": { "org_handle": org }, "envelope": vendor_envelope() }),
        )
        .await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    t.running.shutdown().await;
}

#[tokio::test]
async fn live_targets_need_a_verified_agent() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let org = t.host().create_org("Tailspin").await.unwrap().org_handle;
    let body = json!({ "target": { "org_handle": org }, "envelope": vendor_envelope() });
    let (s, b) = t
        .signed(&vendor, "POST", "/api/agent/v1/sessions", &body)
        .await;
    assert_eq!(s, 403);
    assert!(String::from_utf8_lossy(&b).contains("not_verified"));
    t.host().verify_agent(&vendor.id).await.unwrap();
    let (s, _) = t
        .signed(&vendor, "POST", "/api/agent/v1/sessions", &body)
        .await;
    assert_eq!(s, 201);
    t.running.shutdown().await;
}

#[tokio::test]
async fn oversized_bodies_are_413_and_store_nothing() {
    let t = start(roomy_limits()).await; // 64 KiB body limit
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (s, doc) = t
        .submit(
            &vendor,
            &session,
            "message",
            json!({ "body": "x".repeat(70 * 1024) }),
        )
        .await;
    assert_eq!(s, 413);
    assert_eq!(doc["error"]["code"], "payload_too_large");
    assert_eq!(doc["protocol"], "ANP/0.1");
    let (_, body) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{session}"),
            &Value::Null,
        )
        .await;
    let st: api::SessionStatus = serde_json::from_slice(&body).unwrap();
    assert_eq!(st.session.event_count, 2);
    t.running.shutdown().await;
}

#[tokio::test]
async fn rate_limits_answer_429_in_the_anp_shape() {
    let mut limits = roomy_limits();
    limits.registration = countersign_host::Limit {
        max: 3,
        window: std::time::Duration::from_secs(3600),
    };
    let t = start(limits).await;
    // registration: 3 per window per IP
    for i in 0..3 {
        let _ = t.register(&format!("V{i}")).await;
    }
    let (s, b) = t
        .raw("POST", "/api/agent/v1/register", &[], b"{}".to_vec())
        .await;
    assert_eq!(s, 429);
    let e: api::ErrorBody = serde_json::from_slice(&b).unwrap();
    assert_eq!(e.error.code, "rate_limited");
    assert!(
        e.error.message.contains("registrations"),
        "{}",
        e.error.message
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn the_per_ip_limit_covers_every_route() {
    let t = start(small_limits(2)).await;
    assert_eq!(
        t.http
            .get(t.url("/.well-known/anp.json"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        t.http
            .get(t.url("/.well-known/anp.json"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let (s, b) = t.raw("GET", "/api/agent/v1/sessions/x", &[], vec![]).await;
    assert_eq!(s, 429, "{}", String::from_utf8_lossy(&b));
    assert!(String::from_utf8_lossy(&b).contains("this address"));
    t.running.shutdown().await;
}

#[tokio::test]
async fn per_agent_limit_refuses_the_agent_but_not_others() {
    let mut limits = roomy_limits();
    limits.per_agent = countersign_host::Limit {
        max: 2,
        window: std::time::Duration::from_secs(3600),
    };
    let t = start(limits).await;
    let a = t.register("A").await;
    let b = t.register("B").await;
    let (session, _) = t.open_sandbox(&a).await; // 1
    let path = format!("/api/agent/v1/sessions/{session}");
    assert_eq!(t.signed(&a, "GET", &path, &Value::Null).await.0, 200); // 2
    let (s, body) = t.signed(&a, "GET", &path, &Value::Null).await;
    assert_eq!(s, 429, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("this agent"));
    assert_eq!(
        t.open_sandbox(&b).await.1["log"]["events"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    t.running.shutdown().await;
}

/// The per-agent count is made with the nonce (one statement on
/// PostgreSQL): a replayed request is refused before it counts.
#[tokio::test]
async fn a_replayed_request_does_not_count_against_the_agents_limit() {
    let mut limits = roomy_limits();
    limits.per_agent = countersign_host::Limit {
        max: 3,
        window: std::time::Duration::from_secs(3600),
    };
    let t = start(limits).await;
    let a = t.register("A").await;
    let (session, _) = t.open_sandbox(&a).await; // 1
    let path = format!("/api/agent/v1/sessions/{session}");
    let h = signed_headers(&a, "GET", &path, b"", &t.now(), "n-once");
    assert_eq!(t.raw("GET", &path, &h, vec![]).await.0, 200); // 2
    for _ in 0..3 {
        let (s, body) = t.raw("GET", &path, &h, vec![]).await;
        assert_eq!(s, 401, "{}", String::from_utf8_lossy(&body));
    }
    assert_eq!(
        t.signed(&a, "GET", &path, &Value::Null).await.0,
        200,
        "the replays did not count"
    ); // 3
    let (s, body) = t.signed(&a, "GET", &path, &Value::Null).await;
    assert_eq!(s, 429, "{}", String::from_utf8_lossy(&body));
    t.running.shutdown().await;
}

/// The per-session count is made with the session's read (one statement on
/// PostgreSQL): only the session's own agent's submissions count.
#[tokio::test]
async fn another_agents_submissions_do_not_count_against_a_sessions_limit() {
    let mut limits = roomy_limits();
    limits.per_session = countersign_host::Limit {
        max: 2,
        window: std::time::Duration::from_secs(3600),
    };
    let t = start(limits).await;
    let a = t.register("A").await;
    let intruder = t.register("B").await;
    let (session, _) = t.open_sandbox(&a).await;
    for i in 0..3 {
        let (s, doc) = t
            .submit(
                &intruder,
                &session,
                "message",
                json!({ "body": format!("x{i}") }),
            )
            .await;
        assert_eq!(s, 401, "{doc}");
    }
    for i in 0..2 {
        let (s, doc) = t
            .submit(&a, &session, "message", json!({ "body": format!("m{i}") }))
            .await;
        assert_eq!(s, 200, "{doc}");
    }
    let (s, doc) = t
        .submit(&a, &session, "message", json!({ "body": "m3" }))
        .await;
    assert_eq!(s, 429, "{doc}");
    t.running.shutdown().await;
}

#[tokio::test]
async fn per_session_limit_counts_event_submissions() {
    let mut limits = roomy_limits();
    limits.per_session = countersign_host::Limit {
        max: 2,
        window: std::time::Duration::from_secs(3600),
    };
    let t = start(limits).await;
    let a = t.register("A").await;
    let (session, _) = t.open_sandbox(&a).await;
    for i in 0..2 {
        assert_eq!(
            t.submit(&a, &session, "message", json!({ "body": format!("m{i}") }))
                .await
                .0,
            200
        );
    }
    let (s, doc) = t
        .submit(&a, &session, "message", json!({ "body": "m3" }))
        .await;
    assert_eq!(s, 429);
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("session"));
    let (other, _) = t.open_sandbox(&a).await;
    assert_eq!(
        t.submit(&a, &other, "message", json!({ "body": "fine" }))
            .await
            .0,
        200
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn event_rules_closed_sessions_standing_offers_signatures_and_expiry() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;

    // counter_offer and decline with no standing offer
    let (s, doc) = t
        .submit(&vendor, &session, "counter_offer", offer(1200, FAR_FUTURE))
        .await;
    assert_eq!(
        (s, doc["error"]["code"].as_str()),
        (409, Some("no_standing_offer"))
    );
    let (s, doc) = t
        .submit(&vendor, &session, "decline", json!({ "reason": "no" }))
        .await;
    assert_eq!(
        (s, doc["error"]["code"].as_str()),
        (409, Some("no_standing_offer"))
    );

    // an already-expired offer
    let (s, doc) = t
        .submit(
            &vendor,
            &session,
            "offer",
            offer(1200, "2020-01-01T00:00:00Z"),
        )
        .await;
    assert_eq!(
        (s, doc["error"]["code"].as_str()),
        (409, Some("offer_expired"))
    );

    // a wrong authorship signature
    let payload = json!({ "body": "hello" });
    let sig = vendor.authorship("message", &json!({ "body": "something else" }));
    let (s, body) = t
        .signed(
            &vendor,
            "POST",
            &format!("/api/agent/v1/sessions/{session}/events"),
            &json!({ "kind": "message", "payload": payload, "signature": sig }),
        )
        .await;
    assert_eq!(s, 400);
    assert!(String::from_utf8_lossy(&body).contains("bad_signature"));

    // host-only kinds
    let (s, _) = t.submit(&vendor, &session, "session_open", json!({})).await;
    assert_eq!(s, 400);

    // close, then nothing more
    let (s, _) = t
        .submit(
            &vendor,
            &session,
            "session_close",
            json!({ "reason": "done" }),
        )
        .await;
    assert_eq!(s, 200);
    let (s, doc) = t
        .submit(&vendor, &session, "message", json!({ "body": "late" }))
        .await;
    assert_eq!(
        (s, doc["error"]["code"].as_str()),
        (409, Some("session_closed"))
    );
    let (_, body) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{session}"),
            &Value::Null,
        )
        .await;
    let st: api::SessionStatus = serde_json::from_slice(&body).unwrap();
    assert_eq!(st.session.event_count, 3);
    assert_eq!(st.session.status.as_deref(), Some("closed"));
    assert!(st.session.closed_at.is_some());
    t.running.shutdown().await;
}

#[tokio::test]
async fn nonces_are_purged_after_the_window_and_old_requests_stay_refused() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let path = format!("/api/agent/v1/sessions/{session}");
    let h = signed_headers(&vendor, "GET", &path, b"", &t.now(), "n-purge");
    assert_eq!(t.raw("GET", &path, &h, vec![]).await.0, 200);
    assert_eq!(
        t.host().purge_expired_nonces().await.unwrap(),
        0,
        "nonces inside the window are kept"
    );
    t.host()
        .clock()
        .advance(std::time::Duration::from_secs(601));
    assert_eq!(
        t.host().purge_expired_nonces().await.unwrap(),
        2,
        "the open and the status nonces"
    );
    let (s, _) = t.raw("GET", &path, &h, vec![]).await;
    assert_eq!(s, 401, "a purged nonce's request is outside the window");
    t.running.shutdown().await;
}

/// Moves the host's clock to `at` (forward only; real time keeps running
/// under it, a few milliseconds between two steps of a test).
fn move_clock_to(t: &TestHost, at: time::OffsetDateTime) {
    let by = at - t.host().clock().now();
    t.host().clock().advance(by.try_into().unwrap());
}

#[tokio::test]
async fn a_request_stays_refused_after_its_nonce_is_purged_at_the_edge_of_the_window() {
    // The window counts whole seconds: a request 300.9 s old is still
    // accepted. Its nonce must outlive that, whatever a purge in between
    // does (it used to expire at floor(ts) + 300, and a purge at ts + 300.5
    // deleted it, so the replay at ts + 300.9 went through).
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let path = format!("/api/agent/v1/sessions/{session}");
    // A timestamp whose fraction is .700, a moment ahead of the host: so
    // that ts + 300.5 is in the next whole second after floor(ts) + 300.
    let now = t.host().clock().now();
    let ts = now.replace_nanosecond(700_000_000).unwrap() + time::Duration::SECOND;
    let h = signed_headers(
        &vendor,
        "GET",
        &path,
        b"",
        &api::format_timestamp(ts),
        "n-edge",
    );
    assert_eq!(
        t.raw("GET", &path, &h, vec![]).await.0,
        200,
        "accepted at ts"
    );
    assert_eq!(
        t.raw("GET", &path, &h, vec![]).await.0,
        401,
        "replay refused"
    );

    move_clock_to(&t, ts + time::Duration::milliseconds(300_500));
    t.host().purge_expired_nonces().await.unwrap();
    move_clock_to(&t, ts + time::Duration::milliseconds(300_900));
    let (s, body) = t.raw("GET", &path, &h, vec![]).await;
    assert_eq!(
        s,
        401,
        "replayed 300.9 s after its timestamp, after a purge: {}",
        String::from_utf8_lossy(&body)
    );
    // The same moment, a fresh nonce with the same timestamp: the window
    // itself still accepts it (the refusal above is the nonce's).
    let fresh = signed_headers(
        &vendor,
        "GET",
        &path,
        b"",
        &api::format_timestamp(ts),
        "n-edge-2",
    );
    assert_eq!(t.raw("GET", &path, &fresh, vec![]).await.0, 200);
    t.running.shutdown().await;
}

#[tokio::test]
async fn invalid_payloads_name_the_violating_path_and_store_nothing() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let mut bad = offer(1200, FAR_FUTURE);
    bad["line_items"][0]["unit_price"] = json!(-5);
    bad["surprise"] = json!(true);
    let (s, doc) = t.submit(&vendor, &session, "offer", bad).await;
    assert_eq!(s, 400, "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("line_items[0].unit_price"), "{message}");
    assert!(message.contains("surprise"), "{message}");
    let mut envelope = vendor_envelope();
    envelope["agent"]["declared_ai"] = json!(false);
    let (s, b) = t
        .signed(
            &vendor,
            "POST",
            "/api/agent/v1/sessions",
            &json!({ "target": { "sandbox": true }, "envelope": envelope }),
        )
        .await;
    assert_eq!(s, 400);
    assert!(
        String::from_utf8_lossy(&b).contains("agent.declared_ai"),
        "{}",
        String::from_utf8_lossy(&b)
    );
    let (_, body) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{session}"),
            &Value::Null,
        )
        .await;
    let st: api::SessionStatus = serde_json::from_slice(&body).unwrap();
    assert_eq!(st.session.event_count, 2);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_huge_after_is_a_clear_400_not_a_crash() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (s, b) = t
        .signed(
            &vendor,
            "GET",
            &format!("/api/agent/v1/sessions/{session}/log?after=18446744073709551615"),
            &Value::Null,
        )
        .await;
    assert_eq!(s, 400, "{}", String::from_utf8_lossy(&b));
    assert!(String::from_utf8_lossy(&b).contains("after must be"));
    t.running.shutdown().await;
}
