//! The approver API: enrollment, summary, decisions with their policy,
//! idempotency, screening and expiry, and a full negotiation ending in a
//! two-approver accept.

use crate::common;

use anp::api;
use anp::KeyRing;
use anp::LogDocument;
use common::*;
use serde_json::{json, Value};

fn pending_of(summary: &Value, session: &str) -> Vec<Value> {
    summary["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session)
        .unwrap()["pending"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn enrollment_codes_work_once() {
    let t = start(roomy_limits()).await;
    let code = t
        .host()
        .enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    let pk = anp::keys::public_key_b64(&key.verifying_key());
    let proof = anp::keys::sign_b64(&key, anp::signed::registration_proof_string(&pk).as_bytes());
    let body = serde_json::to_vec(&json!({ "code": code, "name": "Ada", "email": "ada@fabrikam.example", "public_key": pk, "proof": proof })).unwrap();
    let (s, b) = t
        .raw("POST", "/api/console/v1/enroll", &[], body.clone())
        .await;
    assert_eq!(s, 201);
    let r: countersign_host_api::approver::EnrollResponse = serde_json::from_slice(&b).unwrap();
    assert_eq!(r.platform_fingerprint, t.host().platform_fingerprint());
    let (s, b) = t.raw("POST", "/api/console/v1/enroll", &[], body).await;
    assert_eq!(s, 403);
    assert!(String::from_utf8_lossy(&b).contains("bad_enrollment_code"));
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_full_negotiation_ends_in_a_two_approver_accept() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let bob = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Bob",
            "bob@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;

    // 1. vendor offers 500 x 1200 = 600000: above the sandbox's 250000 threshold
    let (s, _) = t
        .submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    assert_eq!(s, 200);
    let pending = pending_of(&t.summary(&ada).await, &session);
    assert_eq!(
        pending.len(),
        2,
        "the inbound offer and the agent's draft: {pending:?}"
    );
    let inbound = pending.iter().find(|p| p["seq"] == 3).unwrap();
    assert_eq!(inbound["approvals_required"], 2);
    let draft = pending.iter().find(|p| p["seq"] == 0).unwrap();
    assert!(draft["event_hash"].as_str().unwrap().starts_with("draft:"));
    assert_eq!(
        draft["draft"]["line_items"][0]["unit_price"], 1000,
        "round 0 opens at the target price"
    );

    // 2. Ada sends the draft counter
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": draft["event_hash"] })).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "appended");
    let doc: LogDocument = serde_json::from_value(r["log"].clone()).unwrap();
    let counter = doc.events.last().unwrap();
    assert_eq!(
        (counter.kind.as_str(), counter.actor.as_str()),
        ("counter_offer", "buyer")
    );

    // 3. vendor counters at 1100 (550000, still above threshold)
    let (s, _) = t
        .submit(&vendor, &session, "counter_offer", offer(1100, FAR_FUTURE))
        .await;
    assert_eq!(s, 200);
    let pending = pending_of(&t.summary(&ada).await, &session);
    let inbound = pending.iter().find(|p| p["seq"] != 0).unwrap().clone();
    let hash = inbound["event_hash"].as_str().unwrap().to_owned();

    // 4. Ada approves: recorded, awaiting a second approver
    let at = t.now();
    let ada_decision = json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &at) });
    let (s, r) = t.decide(&ada, &session, ada_decision.clone()).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "awaiting_approvals");
    // the same approver again (new decision id) is refused by the policy
    let again = json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &at) });
    let (s, r) = t.decide(&ada, &session, again).await;
    assert_eq!((s, r["error"]["code"].as_str()), (409, Some("policy")));
    // repeating the first decision returns its first outcome and changes nothing
    let (s, r) = t.decide(&ada, &session, ada_decision.clone()).await;
    assert_eq!(
        (s, r["outcome"].as_str()),
        (200, Some("awaiting_approvals"))
    );
    let pending = pending_of(&t.summary(&ada).await, &session);
    let p = pending
        .iter()
        .find(|p| p["event_hash"] == hash.as_str())
        .unwrap();
    assert_eq!(p["approvals"].as_array().unwrap().len(), 1);
    assert_eq!(p["approvals"][0]["approved_by"], "ada@fabrikam.example");

    // an approval signed by Bob's key but claiming Ada is refused
    let mut forged = bob.approval(&hash, &at);
    forged["approved_by"] = json!("ada@fabrikam.example");
    let (s, _) = t.decide(&bob, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": forged })).await;
    assert_eq!(s, 400);
    // a bad signature is refused
    let mut bad = bob.approval(&hash, &at);
    bad["at"] = json!("2020-01-01T00:00:00Z");
    let (s, r) = t.decide(&bob, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": bad })).await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (400, Some("bad_signature"))
    );

    // 5. Bob approves: the accept is appended
    let (s, r) = t.decide(&bob, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": bob.approval(&hash, &t.now()) })).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "appended");
    let doc: LogDocument = serde_json::from_value(r["log"].clone()).unwrap();
    assert_eq!(doc.session.status, "accepted");
    let accept = doc.events.last().unwrap();
    assert_eq!(
        (accept.kind.as_str(), accept.actor.as_str()),
        ("accept", "buyer")
    );
    assert_eq!(
        accept.signer.as_deref(),
        Some(t.host().platform_fingerprint())
    );
    assert_eq!(accept.payload["in_response_to"], hash.as_str());
    let ring = KeyRing::from_log_keys(&doc).unwrap();
    assert!(anp::verify_log(&session, &doc.events, &ring).ok);

    // both approvals verify against the keys the org's approvers read,
    // named, from the signed approver API
    let (status, body) = t
        .signed(&ada, "GET", "/api/console/v1/keys", &Value::Null)
        .await;
    assert_eq!(status, 200);
    let wk: api::WellKnown = serde_json::from_slice(&body).unwrap();
    let mut approvals = vec![accept.payload["approval"].clone()];
    approvals.extend(
        accept.payload["approvals"]
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    assert_eq!(approvals.len(), 2);
    let mut signers = Vec::new();
    for a in &approvals {
        let a: anp::payload::Approval = serde_json::from_value(a.clone()).unwrap();
        let key = wk
            .platform_keys
            .iter()
            .find(|k| k.approved_by.as_deref() == Some(a.approved_by.as_str()))
            .unwrap();
        let vk = anp::keys::parse_public_key(&key.public_key).unwrap();
        let string = anp::signed::approval_string(&hash, &a.approved_by, &a.at);
        assert!(
            anp::keys::verify_b64(&vk, string.as_bytes(), &a.signature),
            "{} approval verifies",
            a.approved_by
        );
        signers.push(a.approved_by);
    }
    signers.sort();
    assert_eq!(signers, ["ada@fabrikam.example", "bob@fabrikam.example"]);

    // 6. after accept: only message and session_close
    let (s, r) = t
        .submit(&vendor, &session, "offer", offer(1000, FAR_FUTURE))
        .await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (409, Some("session_closed"))
    );
    let (s, _) = t
        .submit(
            &vendor,
            &session,
            "message",
            json!({ "body": "Thank you." }),
        )
        .await;
    assert_eq!(s, 200);
    assert!(pending_of(&t.summary(&ada).await, &session).is_empty());

    // a decision id reused with a different body is a conflict
    let mut changed = ada_decision.clone();
    changed["action"] = json!("decline");
    changed["reason"] = json!("changed my mind");
    changed.as_object_mut().unwrap().remove("approval");
    let (s, r) = t.decide(&ada, &session, changed).await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (409, Some("decision_conflict"))
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn decline_needs_a_reason_and_appends_a_decline() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": hash })).await;
    assert_eq!(s, 400, "{r}");
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": hash, "reason": "Too expensive for this term." })).await;
    assert_eq!(s, 200, "{r}");
    let doc: LogDocument = serde_json::from_value(r["log"].clone()).unwrap();
    let last = doc.events.last().unwrap();
    assert_eq!(last.kind.as_str(), "decline");
    assert_eq!(
        last.payload,
        json!({ "reason": "Too expensive for this term." })
    );
    // the offer is no longer standing
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": hash, "reason": "again" })).await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (409, Some("not_standing"))
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn screening_holds_a_leaking_counter_and_sends_a_clean_one() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut leaking = offer(1050, FAR_FUTURE);
    leaking["notes"] = json!("We cannot go past $600,000 in total.");
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "counter", "in_response_to": hash, "offer": leaking })).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "held");
    assert!(
        r["detail"].as_str().unwrap().contains("budget ceiling"),
        "{r}"
    );
    let doc: LogDocument = serde_json::from_value(r["log"].clone()).unwrap();
    assert_eq!(doc.events.len(), 3, "nothing was sent");
    let pending = pending_of(&t.summary(&ada).await, &session);
    let p = pending
        .iter()
        .find(|p| p["event_hash"] == hash.as_str())
        .unwrap();
    assert!(p["held_reason"]
        .as_str()
        .unwrap()
        .contains("budget ceiling"));

    let at_walk_away = offer(1150, FAR_FUTURE);
    let (_, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "counter", "in_response_to": hash, "offer": at_walk_away })).await;
    assert_eq!(r["outcome"], "held");
    assert!(r["detail"].as_str().unwrap().contains("walk-away"), "{r}");

    let (_, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "counter", "in_response_to": hash, "offer": offer(1050, FAR_FUTURE) })).await;
    assert_eq!(r["outcome"], "appended", "{r}");
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_unreadable_policy_holds_everything() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let org = t.host().create_org("Tailspin").await.unwrap().org_handle;
    t.host().verify_agent(&vendor.id).await.unwrap();
    let ada = t.enroll(&org, "Ada", "ada@tailspin.example").await;
    let (s, b) = t
        .signed(
            &vendor,
            "POST",
            "/api/agent/v1/sessions",
            &json!({ "target": { "org_handle": org }, "envelope": vendor_envelope() }),
        )
        .await;
    assert_eq!(s, 201);
    let session = serde_json::from_slice::<Value>(&b).unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    t.sql_execute(
        "UPDATE orgs SET policy = '{broken' WHERE handle = $1",
        &[&org],
    )
    .await;
    let hash = pending_of(&t.summary(&ada).await, &session)[0]["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": hash, "reason": "No." })).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "held");
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .contains("screening is unavailable"),
        "{r}"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_expired_offer_cannot_be_approved() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let expires = api::format_timestamp(t.host().clock().now() + time::Duration::hours(1));
    // 10 seats: below the threshold, one approver is enough
    let mut small = offer(1200, &expires);
    small["line_items"][0]["quantity"] = json!(10);
    let (s, _) = t.submit(&vendor, &session, "offer", small).await;
    assert_eq!(s, 200);
    let hash = pending_of(&t.summary(&ada).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    t.host()
        .clock()
        .advance(std::time::Duration::from_secs(2 * 3600));
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &t.now()) })).await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (409, Some("offer_expired")),
        "{r}"
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
    assert_eq!(st.session.status.as_deref(), Some("open"));
    assert_eq!(st.session.event_count, 3);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_vendor_may_accept_the_buyers_counter_offer() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "counter", "in_response_to": hash, "offer": offer(1050, FAR_FUTURE) })).await;
    let counter_hash = r["log"]["events"].as_array().unwrap().last().unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, r) = t
        .submit(
            &vendor,
            &session,
            "accept",
            json!({ "in_response_to": hash }),
        )
        .await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (409, Some("not_standing")),
        "{r}"
    );
    let (s, r) = t
        .submit(
            &vendor,
            &session,
            "accept",
            json!({ "in_response_to": counter_hash }),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["log"]["session"]["status"], "accepted");
    t.running.shutdown().await;
}

#[tokio::test]
async fn each_decision_is_kept_exactly_as_received() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = uuid::Uuid::new_v4().to_string();
    let body = serde_json::to_vec(&json!({ "decision_id": id, "action": "decline", "in_response_to": hash, "reason": "Over budget." })).unwrap();
    let path = format!("/api/console/v1/sessions/{session}/decisions");
    let h = api::sign_request(
        &ada.key,
        &ada.id,
        "POST",
        &path,
        &body,
        &t.now(),
        "decision-nonce",
    );
    let headers: Vec<(&str, String)> = h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect();
    let (s, _) = t.raw("POST", &path, &headers, body.clone()).await;
    assert_eq!(s, 200);

    let row = t
        .sql_row(
            "SELECT body, signed_headers FROM decisions WHERE decision_id = $1",
            &[&id],
        )
        .await;
    let (stored, stored_headers) = (row[0].bytes().to_vec(), row[1].text().to_owned());
    assert_eq!(stored, body, "body bytes as sent");
    let kept: api::SignedHeaders = serde_json::from_str(&stored_headers).unwrap();
    assert_eq!(kept, h);
    // anyone with the approver's key can recheck the request signature
    let when = api::parse_timestamp(&kept.timestamp).unwrap();
    api::check_signed_request(
        &kept,
        &ada.key.verifying_key(),
        "POST",
        &path,
        &stored,
        when,
    )
    .unwrap();
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_draft_that_would_reveal_the_walk_away_price_is_held_with_its_reason() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    t.host().verify_agent(&vendor.id).await.unwrap();
    let org = t.host().create_org("Tailspin").await.unwrap().org_handle;
    // target == walk-away: the only price the agent can draft is the secret one
    let policy = r#"{ "max_rounds": 2, "concession_per_round": "0.5",
        "skus": { "CRM-ENT": { "target_unit_price": "1100", "walk_away_unit_price": "1100" } },
        "approval": { "above_total": "1000000", "approvers_required": 2 },
        "may_discuss": ["pricing"], "will_not_disclose": ["walk-away thresholds"] }"#;
    t.host().load_policy(&org, policy).await.unwrap();
    let ada = t.enroll(&org, "Ada", "ada@tailspin.example").await;
    let (s, b) = t
        .signed(
            &vendor,
            "POST",
            "/api/agent/v1/sessions",
            &json!({ "target": { "org_handle": org }, "envelope": vendor_envelope() }),
        )
        .await;
    assert_eq!(s, 201);
    let opened: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(opened["buyer_envelope"]["party"], "Tailspin");
    let session = opened["session_id"].as_str().unwrap().to_owned();
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let pending = pending_of(&t.summary(&ada).await, &session);
    let draft = pending.iter().find(|p| p["seq"] == 0).unwrap();
    assert_eq!(draft["draft"]["line_items"][0]["unit_price"], 1100);
    assert!(
        draft["held_reason"]
            .as_str()
            .unwrap()
            .contains("walk-away price for CRM-ENT"),
        "{draft}"
    );
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": draft["event_hash"] })).await;
    assert_eq!(s, 200);
    assert_eq!(r["outcome"], "held");
    assert_eq!(
        r["log"]["events"].as_array().unwrap().len(),
        3,
        "nothing sent"
    );
    // discarding the draft leaves the vendor's offer pending
    let (_, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": draft["event_hash"] })).await;
    assert!(r["detail"].as_str().unwrap().contains("discarded"), "{r}");
    let pending = pending_of(&t.summary(&ada).await, &session);
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["seq"], 3);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_revoked_approvers_approval_stops_counting() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let bob = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Bob",
            "bob@fabrikam.example",
        )
        .await;
    let cy = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Cy",
            "cy@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&bob).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &t.now()) })).await;
    assert_eq!(r["outcome"], "awaiting_approvals");
    t.host().revoke_approver(&ada.id).await.unwrap();
    let (_, r) = t.decide(&bob, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": bob.approval(&hash, &t.now()) })).await;
    assert_eq!(
        r["outcome"], "awaiting_approvals",
        "Ada's approval no longer counts: {r}"
    );
    let (_, r) = t.decide(&cy, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": cy.approval(&hash, &t.now()) })).await;
    assert_eq!(r["outcome"], "appended", "{r}");
    let accept = r["log"]["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        accept["payload"]["approval"]["approved_by"],
        "bob@fabrikam.example"
    );
    assert_eq!(
        accept["payload"]["approvals"][0]["approved_by"],
        "cy@fabrikam.example"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_approval_dated_in_the_future_is_refused() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)
        .into_iter()
        .find(|p| p["seq"] == 3)
        .unwrap()["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let later = api::format_timestamp(t.host().clock().now() + time::Duration::hours(1));
    let (s, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &later) })).await;
    assert_eq!(s, 400);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("future"),
        "{r}"
    );
    let pending = pending_of(&t.summary(&ada).await, &session);
    assert!(
        pending
            .iter()
            .all(|p| p["approvals"].as_array().unwrap().is_empty()),
        "nothing recorded"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_unchanged_summary_answers_304_and_any_change_a_new_tag() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;

    let (status, tag, body) = t.summary_if(&ada, None).await;
    assert_eq!(status, 200);
    let tag = tag.expect("the summary carries an ETag");
    assert!(
        tag.starts_with('"') && tag.ends_with('"'),
        "a quoted tag: {tag}"
    );
    let first: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(first["sessions"][0]["id"], session.as_str());

    // The same summary: 304, no body, the same tag.
    let (status, again, body) = t.summary_if(&ada, Some(&tag)).await;
    assert_eq!(status, 304);
    assert!(body.is_empty(), "a 304 has no body");
    assert_eq!(again.as_deref(), Some(tag.as_str()));
    // RFC 9110 forms: a list, a weak tag, `*`.
    for header in [format!("\"x\", {tag}"), format!("W/{tag}"), "*".to_owned()] {
        let (status, _, _) = t.summary_if(&ada, Some(&header)).await;
        assert_eq!(status, 304, "If-None-Match: {header}");
    }
    // A tag that is not the current one gets the whole answer.
    let (status, _, body) = t.summary_if(&ada, Some("\"stale\"")).await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), first);

    // An offer moves the head and adds a pending decision: a new tag.
    let (s, _) = t
        .submit(&vendor, &session, "offer", offer(100, FAR_FUTURE))
        .await;
    assert_eq!(s, 200);
    let (status, moved, body) = t.summary_if(&ada, Some(&tag)).await;
    assert_eq!(status, 200);
    assert_ne!(moved.as_deref(), Some(tag.as_str()));
    let now: Value = serde_json::from_slice(&body).unwrap();
    assert!(!pending_of(&now, &session).is_empty());

    // The condition never skips authentication: unsigned, it is refused.
    let (status, _) = t
        .raw(
            "GET",
            "/api/console/v1/summary",
            &[("if-none-match", moved.unwrap())],
            Vec::new(),
        )
        .await;
    assert_eq!(status, 401);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_waiting_summary_answers_as_soon_as_an_offer_arrives() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();

    let (waited, (s, _)) = tokio::join!(t.summary_waiting(&ada, &tag, "90"), async {
        t.until_waiting(1).await;
        t.submit(&vendor, &session, "offer", offer(100, FAR_FUTURE))
            .await
    });
    assert_eq!(s, 200);
    // Without the wake-up the request would sit out its 90 s and answer 304.
    let (status, moved, body) = waited;
    assert_eq!(status, 200, "the offer wakes the waiting console");
    assert_ne!(moved.as_deref(), Some(tag.as_str()));
    let now: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        !pending_of(&now, &session).is_empty(),
        "it carries the offer"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_console_revoked_while_its_summary_waits_hears_nothing_more_on_it() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();

    // Ada's request waits; the admin revokes her key (a lost laptop); an
    // offer then arrives in her organization and wakes the request.
    let (waited, (s, _)) = tokio::join!(t.summary_waiting(&ada, &tag, "90"), async {
        t.until_waiting(1).await;
        t.host().revoke_approver(&ada.id).await.unwrap();
        t.submit(&vendor, &session, "offer", offer(100, FAR_FUTURE))
            .await
    });
    assert_eq!(s, 200);
    let (status, _, body) = waited;
    assert_eq!(
        status,
        304,
        "the revoked key was answered: {}",
        String::from_utf8_lossy(&body)
    );
    assert!(body.is_empty());
    // Its next request is refused, with the reason.
    let (status, _, _) = t.summary_if(&ada, None).await;
    assert_eq!(status, 401);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_waiting_summary_is_not_answered_by_a_write_that_changes_nothing_it_shows() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    t.open_sandbox(&vendor).await;
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();
    // Another vendor registering is a write Ada cannot see.
    let (waited, _) = tokio::join!(t.summary_waiting(&ada, &tag, "2"), async {
        t.until_waiting(1).await;
        t.register("Northwind").await
    });
    let (status, again, body) = waited;
    assert_eq!(status, 304, "nothing Ada sees changed");
    assert_eq!(again.as_deref(), Some(tag.as_str()));
    assert!(body.is_empty());
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_offer_wakes_the_waiting_consoles_of_its_own_org_and_no_other() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let northwind = t
        .host()
        .create_org("Northwind Buying")
        .await
        .unwrap()
        .org_handle;
    let (session, _) = t.open_sandbox(&vendor).await;
    // What a waiting summary request of each org holds.
    let own = t
        .host()
        .changes()
        .subscribe(countersign_host::SANDBOX_HANDLE);
    let elsewhere = t.host().changes().subscribe(&northwind);
    let (s, _) = t
        .submit(&vendor, &session, "offer", offer(100, FAR_FUTURE))
        .await;
    assert_eq!(s, 200);
    assert!(
        own.has_changed().unwrap(),
        "the sandbox's consoles are woken by an offer to the sandbox"
    );
    assert!(
        !elsewhere.has_changed().unwrap(),
        "Northwind's consoles sleep through another org's offer"
    );
    // A write that names no org (a vendor agent registering) wakes every org's.
    t.register("Fabrikam").await;
    assert!(elsewhere.has_changed().unwrap());
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_console_of_a_large_org_hears_of_the_next_change_no_sooner_than_its_pace() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    // 499 other consoles of the sandbox org wait (held here, not over
    // HTTP): with Ada's, 500, a pace of a second between her answers.
    let others: Vec<_> = (0..499)
        .map(|_| {
            t.host()
                .changes()
                .subscribe(countersign_host::SANDBOX_HANDLE)
        })
        .collect();
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();
    // Her first change is told at once.
    let (waited, _) = tokio::join!(t.summary_waiting(&ada, &tag, "90"), async {
        t.until_waiting(500).await;
        t.submit(&vendor, &session, "offer", offer(100, FAR_FUTURE))
            .await
    });
    let told = std::time::Instant::now();
    let (status, tag, _) = waited;
    assert_eq!(status, 200);
    // The next, right after, waits out the pace.
    let (s, _) = t
        .submit(&vendor, &session, "offer", offer(90, FAR_FUTURE))
        .await;
    assert_eq!(s, 200);
    let (status, _, _) = t.summary_waiting(&ada, &tag.unwrap(), "90").await;
    assert_eq!(status, 200);
    let spaced = told.elapsed();
    let pace = countersign_host::changes::PACE_PER_WAITER * 500;
    assert!(
        spaced >= pace / 2,
        "the second change was told {spaced:?} after the first (pace {pace:?})"
    );
    drop(others);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_wait_out_of_range_is_refused_with_its_bounds() {
    let t = start(roomy_limits()).await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();
    for wait in ["0", "91", "abc", "-1", "1.5"] {
        let (status, _, body) = t.summary_waiting(&ada, &tag, wait).await;
        assert_eq!(status, 400, "wait={wait}");
        let text = String::from_utf8_lossy(&body);
        assert!(
            text.contains("wait must be whole seconds from 1 to 90"),
            "wait={wait}: {text}"
        );
    }
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_waiting_summary_answers_at_once_when_the_host_stops() {
    let t = start(roomy_limits()).await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (_, tag, _) = t.summary_if(&ada, None).await;
    let tag = tag.unwrap();
    let path = "/api/console/v1/summary?wait=90";
    let mut req = t.http.get(t.url(path)).header("if-none-match", &tag);
    for (k, v) in t.signature_headers(&ada, "GET", path, b"") {
        req = req.header(k, v);
    }
    let waiting = tokio::spawn(req.send());
    t.until_waiting(1).await;
    let TestHost { running, dir, .. } = t;
    // Without the stop signal the server would wait for the request to sit
    // out its 90 s before it could finish shutting down.
    let stopped =
        tokio::time::timeout(std::time::Duration::from_secs(45), running.shutdown()).await;
    assert!(
        stopped.is_ok(),
        "the waiting request kept the host from stopping"
    );
    let answer = waiting.await.unwrap().unwrap();
    assert_eq!(answer.status().as_u16(), 304, "answered, unchanged");
    assert_eq!(answer.headers().get("etag").unwrap().to_str().unwrap(), tag);
    drop(dir);
}

#[tokio::test]
async fn a_host_with_waiting_switched_off_refuses_wait_and_still_answers_summaries() {
    let t = start_with(countersign_host::HostConfig {
        limits: roomy_limits(),
        wait_for_changes: false,
        ..countersign_host::HostConfig::default()
    })
    .await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (status, tag, _) = t.summary_if(&ada, None).await;
    assert_eq!(status, 200);
    let (status, _, body) = t.summary_waiting(&ada, &tag.unwrap(), "30").await;
    assert_eq!(status, 400);
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("wait is not offered by this host"), "{text}");
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_revoked_key_is_told_it_was_revoked_and_anyone_else_gets_the_uniform_refusal() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let ada = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)[0]["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    // The admin revokes Ada's key (a lost laptop).
    t.host().revoke_approver(&ada.id).await.unwrap();
    let revoked_at = t
        .host()
        .list_approvers()
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.approver_id == ada.id)
        .and_then(|a| a.revoked_at)
        .unwrap();

    // Whoever holds the key is told why, and when: on a read and on a
    // decision, and the decision is not stored.
    let (status, body) = t
        .signed(&ada, "GET", "/api/console/v1/summary", &Value::Null)
        .await;
    assert_eq!(status, 401);
    let e: api::ErrorBody = serde_json::from_slice(&body).unwrap();
    assert_eq!(e.error.code, "key_revoked");
    assert!(
        e.error.message.contains(&revoked_at) && e.error.message.contains("new enrollment code"),
        "{}",
        e.error.message
    );
    let (status, r) = t
        .decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &t.now()) }))
        .await;
    assert_eq!(status, 401);
    assert_eq!(r["error"]["code"], "key_revoked", "{r}");
    let bob = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Bob",
            "bob@fabrikam.example",
        )
        .await;
    let pending = pending_of(&t.summary(&bob).await, &session);
    assert_eq!(
        pending[0]["approvals"].as_array().map(Vec::len),
        Some(0),
        "nothing of Ada's was stored: {pending:?}"
    );

    // Anyone else naming Ada's id learns nothing: the uniform refusal.
    let mallory = Party {
        id: ada.id.clone(),
        key: anp::keys::generate_signing_key(),
        email: ada.email.clone(),
    };
    let (status, body) = t
        .signed(&mallory, "GET", "/api/console/v1/summary", &Value::Null)
        .await;
    assert_eq!(status, 401);
    let e: api::ErrorBody = serde_json::from_slice(&body).unwrap();
    assert_eq!(e.error.code, "unauthorized");
    assert!(!e.error.message.contains("revoked at"));
    t.running.shutdown().await;
}
