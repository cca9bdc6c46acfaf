//! The gate, as an agent reaches it (docs/gate-api.md): enrollment, the
//! mirrored transcript stored only once it verifies (each refused check
//! alone, with the store read back by hand), batches that must extend the
//! head exactly, requests for a decision, and the uniform refusal.

use serde_json::{json, Value};

use crate::common::*;
use crate::gate_support::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

#[tokio::test]
async fn a_gate_agent_enrolls_once_and_a_bad_code_stores_nothing() {
    let t = start(roomy_limits()).await;
    let key = anp::keys::generate_signing_key();
    let (s, b) = t.gate_enroll("gate_enroll_00ff", &key, None).await;
    assert_eq!(s, 403, "{}", String::from_utf8_lossy(&b));
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(v["error"]["code"], "bad_enrollment_code");
    assert_eq!(v["protocol"], "gate");
    assert_eq!(t.count("gate_agents").await, 0);

    let code = t
        .host()
        .gate_enroll_code(ORG, "Procurement Buyer", "concordia")
        .await
        .unwrap();
    assert_eq!(code.protocol, "concordia");
    // A proof by another key is refused before the code is spent.
    let other = anp::keys::generate_signing_key();
    let pk = anp::keys::public_key_b64(&key.verifying_key());
    let bad_proof = anp::keys::sign_b64(
        &other,
        anp::signed::registration_proof_string(&pk).as_bytes(),
    );
    let (s, b) = t
        .raw(
            "POST",
            "/api/gate/v1/enroll",
            &[],
            serde_json::to_vec(
                &json!({"code": code.code, "name": "B", "public_key": pk, "proof": bad_proof}),
            )
            .unwrap(),
        )
        .await;
    assert_eq!(s, 400, "{}", String::from_utf8_lossy(&b));
    assert!(String::from_utf8_lossy(&b).contains("bad_proof"));
    // A callback the host would never call is refused, and the code survives.
    let (s, b) = t
        .gate_enroll(&code.code, &key, Some("https://169.254.169.254/latest"))
        .await;
    assert_eq!(s, 400, "{}", String::from_utf8_lossy(&b));
    assert!(String::from_utf8_lossy(&b).contains("not a public address"));
    assert_eq!(t.count("gate_agents").await, 0);

    let (s, b) = t.gate_enroll(&code.code, &key, None).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert!(v["agent_id"].as_str().unwrap().starts_with("gate_"));
    assert_eq!(v["org"], ORG);
    assert_eq!(v["protocol"], "concordia");
    assert_eq!(v["platform_key"], t.host().platform_public_key());
    // The code works once.
    let (s, _) = t.gate_enroll(&code.code, &key, None).await;
    assert_eq!(s, 403);
    assert_eq!(t.count("gate_agents").await, 1);
    let listed = t.host().list_gate_agents().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].agent_id, v["agent_id"].as_str().unwrap());
    // An unknown protocol gets no code.
    let e = t
        .host()
        .gate_enroll_code(ORG, "X", "oanp-9")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("concordia"), "{e}");
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_verified_transcript_is_stored_as_mirrored_and_reads_back() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let mut talk = Talk::opened("ses_9d4e8f01");
    talk.say(SELLER, "negotiate.offer", Talk::offer("150000.00", 3600));
    let head = t.mirror(&agent, &talk).await;
    assert_eq!(head["session_id"], "ses_9d4e8f01");
    assert_eq!(head["protocol"], "concordia");
    assert_eq!(head["head"], talk.head(3));
    let (s, v) = t
        .gate(&agent, "GET", "/sessions/ses_9d4e8f01", &Value::Null)
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["state"], "active");
    assert_eq!(v["head"]["count"], 3);
    // Stored byte for byte as mirrored.
    let row = t
        .sql_row(
            "SELECT body FROM gate_messages WHERE session_id = $1 AND CAST(seq AS TEXT) = $2",
            &["ses_9d4e8f01", "3"],
        )
        .await;
    assert_eq!(
        row[0].text(),
        serde_json::to_string(&talk.messages[2]).unwrap()
    );
    // The same body again: the same answer, nothing more stored.
    let again = t.mirror(&agent, &talk).await;
    assert_eq!(again, head);
    assert_eq!(t.count("gate_messages").await, 3);
    // Another body for the same session: 409 with the head held.
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions",
            &talk.create_body_of(&talk.messages[..2]),
        )
        .await;
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "session_exists");
    assert_eq!(v["error"]["head"], talk.head(3));
    assert_eq!(v["protocol"], "concordia");
    t.running.shutdown().await;
}

/// One transcript broken in one way, with the check the refusal must name.
fn broken() -> Vec<(&'static str, Value, u64, &'static str)> {
    let mut out = Vec::new();
    // A body changed after signing.
    let mut talk = Talk::opened("ses_bad_sig");
    talk.say(SELLER, "negotiate.offer", Talk::offer("150000", 3600));
    let mut body = talk.create_body();
    body["messages"][2]["body"]["terms"]["price"]["value"] = json!(1);
    out.push(("a body changed after signing", body, 2, "signature"));
    // A link to the wrong message (re-signed, so only the link is wrong).
    let mut talk = Talk::opened("ses_bad_link");
    let mut m = talk.say(SELLER, "negotiate.offer", Talk::offer("150000", 3600));
    m["prev_hash"] = json!(talk.hash(0));
    talk.sign(&mut m, SELLER);
    let mut body = talk.create_body();
    body["messages"][2] = m;
    out.push(("a broken link", body, 2, "link"));
    // Not from genesis.
    let mut talk = Talk::new("ses_bad_genesis");
    let mut m = talk.say(
        SELLER,
        "negotiate.open",
        json!({"terms": {"price": {"value": 1, "currency": "USD"}}}),
    );
    m["prev_hash"] = json!(format!("sha256:{}", "1".repeat(64)));
    talk.sign(&mut m, SELLER);
    out.push(("not from genesis", talk.create_body_of(&[m]), 0, "genesis"));
    // A message of another session.
    let mut talk = Talk::opened("ses_bad_session");
    let mut m = talk.say(SELLER, "negotiate.offer", Talk::offer("150000", 3600));
    m["session_id"] = json!("ses_other");
    talk.sign(&mut m, SELLER);
    let mut body = talk.create_body();
    body["messages"][2] = m;
    out.push(("another session's message", body, 2, "session"));
    // The initiator answering its own open: a state-machine violation.
    let mut talk = Talk::new("ses_bad_state");
    talk.say(
        SELLER,
        "negotiate.open",
        json!({"terms": {"price": {"value": 1, "currency": "USD"}}}),
    );
    talk.say(SELLER, "negotiate.accept_session", json!({}));
    out.push((
        "the initiator accepting its own open",
        talk.create_body(),
        1,
        "state",
    ));
    // Signed by a party with no key given.
    let talk = Talk::opened("ses_bad_key");
    let mut body = talk.create_body();
    let buyer_key = body["keys"][BUYER].clone();
    body["keys"] = json!({BUYER: buyer_key, "agent_x": buyer_key});
    body["counterparty"]["id"] = json!("agent_x");
    out.push(("a sender with no key", body, 0, "key"));
    // Not a transcript the gate can key: self and counterparty the same.
    let talk = Talk::opened("ses_bad_parties");
    let mut body = talk.create_body();
    body["counterparty"]["id"] = json!(BUYER);
    out.push(("self and counterparty the same", body, 0, ""));
    out
}

#[tokio::test]
async fn each_refused_transcript_names_the_message_and_the_check_and_stores_nothing() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    for (what, body, index, check) in broken() {
        let (s, v) = t.gate(&agent, "POST", "/sessions", &body).await;
        assert_eq!(s, 400, "{what}: {v}");
        if check.is_empty() {
            assert_eq!(v["error"]["code"], "invalid_request", "{what}: {v}");
        } else {
            assert_eq!(v["error"]["code"], "transcript_invalid", "{what}: {v}");
            assert_eq!(v["error"]["check"], check, "{what}: {v}");
            assert_eq!(v["error"]["index"], index, "{what}: {v}");
            let id = format!("msg_{index:04}");
            assert_eq!(v["error"]["message_id"], id.as_str(), "{what}: {v}");
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("message {index} ({id}): ")),
                "{what}: {message}"
            );
        }
        assert_eq!(v["protocol"], "concordia", "{what}");
        assert_eq!(t.gate_counts().await, [0; 5], "{what}: nothing stored");
    }
    // A protocol the gate does not speak, or not the agent's.
    let talk = Talk::opened("ses_proto");
    for protocol in ["oanp", "concordia/2", "ANP/0.1"] {
        let mut body = talk.create_body();
        body["protocol"] = json!(protocol);
        let (s, v) = t.gate(&agent, "POST", "/sessions", &body).await;
        assert_eq!(s, 400, "{protocol}: {v}");
        assert_eq!(v["error"]["code"], "unknown_protocol", "{protocol}: {v}");
    }
    // Unknown members and malformed JSON name what was wrong.
    let mut body = talk.create_body();
    body["extra"] = json!(1);
    let (s, v) = t.gate(&agent, "POST", "/sessions", &body).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("extra"),
        "{v}"
    );
    assert_eq!(t.gate_counts().await, [0; 5]);
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_oversized_body_is_413_and_stores_nothing() {
    let t = start(roomy_limits()).await; // the gate takes 256 KiB here
    let agent = t.gate_agent(ORG, None).await;
    let mut talk = Talk::opened("ses_big");
    talk.say(
        SELLER,
        "negotiate.signal",
        json!({"note": "x".repeat(300 * 1024)}),
    );
    let (s, v) = t
        .gate(&agent, "POST", "/sessions", &talk.create_body())
        .await;
    assert_eq!(s, 413, "{v}");
    assert_eq!(v["error"]["code"], "payload_too_large");
    assert_eq!(v["protocol"], "gate");
    assert_eq!(t.gate_counts().await, [0; 5]);
    // The gate's limit is its own: 100 KiB passes here, above the ANP APIs' 64 KiB.
    let mut talk = Talk::opened("ses_mid");
    talk.say(
        SELLER,
        "negotiate.signal",
        json!({"note": "x".repeat(100 * 1024)}),
    );
    t.mirror(&agent, &talk).await;
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_batch_must_extend_the_stored_head_exactly() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let mut talk = Talk::opened("ses_extend");
    t.mirror(&agent, &talk).await;
    talk.say(SELLER, "negotiate.offer", Talk::offer("150000", 3600));
    talk.say(BUYER, "negotiate.counter", Talk::offer("140000", 3600));

    // `after` is not the head held.
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions/ses_extend/messages",
            &json!({"after": talk.head(1), "messages": talk.messages[2..]}),
        )
        .await;
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "head_mismatch");
    assert_eq!(v["error"]["head"], talk.head(2));
    // The right `after`, but the first message does not link to it.
    let mut stray = talk.messages[2].clone();
    stray["prev_hash"] = json!(talk.hash(0));
    talk.sign(&mut stray, SELLER);
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions/ses_extend/messages",
            &json!({"after": talk.head(2), "messages": [stray]}),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["error"]["check"], "pin");
    assert_eq!(v["error"]["index"], 2);
    // A second message with a bad signature: nothing of the batch is stored.
    let mut forged = talk.messages[3].clone();
    forged["reasoning"] = json!("changed after signing");
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions/ses_extend/messages",
            &json!({"after": talk.head(2), "messages": [talk.messages[2], forged]}),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    assert_eq!(
        (v["error"]["check"].as_str(), v["error"]["index"].as_u64()),
        (Some("signature"), Some(3))
    );
    assert_eq!(t.count("gate_messages").await, 2);

    let (s, v) = t.mirror_more(&agent, &talk, 2).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["head"], talk.head(4));
    // The same batch again (an answer lost on the way): the head, nothing more.
    let (s, v) = t.mirror_more(&agent, &talk, 2).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["head"], talk.head(4));
    assert_eq!(t.count("gate_messages").await, 4);
    // Keys are pinned at creation: a re-signed message by a new key fails.
    let mut impostor = Talk::new("ses_extend");
    impostor.seller = anp::keys::generate_signing_key();
    let mut m = talk.messages[3].clone();
    m["prev_hash"] = json!(talk.hash(3));
    m["type"] = json!("negotiate.counter");
    m["from"] = json!({"agent_id": SELLER});
    m["id"] = json!("msg_0004");
    impostor.sign(&mut m, SELLER);
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions/ses_extend/messages",
            &json!({"after": talk.head(4), "messages": [m]}),
        )
        .await;
    assert_eq!(
        (s, v["error"]["check"].as_str()),
        (400, Some("signature")),
        "{v}"
    );
    assert_eq!(t.count("gate_messages").await, 4);
    t.running.shutdown().await;
}

#[tokio::test]
async fn only_the_agent_that_mirrored_a_session_may_touch_it() {
    let t = start(roomy_limits()).await;
    let owner = t.gate_agent(ORG, None).await;
    let colleague = t.gate_agent(ORG, None).await;
    let mut talk = Talk::opened("ses_owned");
    t.mirror(&owner, &talk).await;
    talk.say(SELLER, "negotiate.offer", Talk::offer("150000", 3600));
    let uniform = {
        let (s, b) = t
            .signed(
                &colleague,
                "GET",
                "/api/gate/v1/sessions/ses_nowhere",
                &Value::Null,
            )
            .await;
        assert_eq!(s, 401);
        b
    };
    for (method, path, body) in [
        ("GET", "/sessions/ses_owned".to_owned(), Value::Null),
        (
            "POST",
            "/sessions/ses_owned/messages".to_owned(),
            json!({"after": talk.head(2), "messages": talk.messages[2..]}),
        ),
        (
            "GET",
            "/sessions/ses_owned/requests/r1".to_owned(),
            Value::Null,
        ),
    ] {
        let (s, b) = t
            .signed(&colleague, method, &format!("/api/gate/v1{path}"), &body)
            .await;
        assert_eq!(s, 401, "{path}");
        assert_eq!(
            b, uniform,
            "{path}: the same bytes as for a session that does not exist"
        );
    }
    // A vendor agent's or an approver's signature is no gate agent's.
    let approver = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    let (s, b) = t
        .signed(
            &approver,
            "GET",
            "/api/gate/v1/sessions/ses_owned",
            &Value::Null,
        )
        .await;
    assert_eq!((s, b), (401, uniform.clone()));
    // A revoked agent is refused everywhere.
    countersign_host::admin::revoke_agent(t.host().store().as_ref(), &owner.id)
        .await
        .unwrap();
    let (s, b) = t
        .signed(
            &owner,
            "GET",
            "/api/gate/v1/sessions/ses_owned",
            &Value::Null,
        )
        .await;
    assert_eq!((s, b), (401, uniform));
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_request_names_the_standing_offer_its_amount_and_expiry() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let mut talk = Talk::opened("ses_ask");
    talk.say(SELLER, "negotiate.offer", Talk::offer("150000.00", 600));
    talk.say(BUYER, "negotiate.counter", Talk::offer("140000", 3600));
    talk.say(SELLER, "negotiate.counter", Talk::offer("145000.50", 900));
    t.mirror(&agent, &talk).await;

    // A hash that names no mirrored message.
    let (s, v) = t
        .gate(
            &agent,
            "POST",
            "/sessions/ses_ask/requests",
            &json!({"request_id": "r0", "message_hash": format!("sha256:{}", "0".repeat(64)), "action": "accept", "expires_at": "2099-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_request")),
        "{v}"
    );
    // The org's own counter, and an offer a later counter answered.
    for (index, why) in [(3, "not by the counterparty"), (2, "answered it")] {
        let (s, v) = t.ask(&agent, &talk, "r1", index, None, 600).await;
        assert_eq!(s, 409, "{v}");
        assert_eq!(v["error"]["code"], "not_standing");
        assert!(v["error"]["message"].as_str().unwrap().contains(why), "{v}");
    }
    // The amount stated must be the offer's.
    let (s, v) = t
        .ask(&agent, &talk, "r1", 4, Some("145000.00 USD"), 600)
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("amount_mismatch")),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("145000.5 USD"),
        "{v}"
    );
    let (s, v) = t
        .ask(&agent, &talk, "r1", 4, Some("145000.50 EUR"), 600)
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("amount_mismatch")),
        "{v}"
    );
    // A time already past.
    let (s, v) = t.ask(&agent, &talk, "r1", 4, None, -5).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("offer_expired")),
        "{v}"
    );
    assert_eq!(t.count("gate_requests").await, 0);

    // The standing offer: the expiry is the offer's own when earlier.
    // Kept, so the retry below sends the same body (an expiry computed
    // again could fall in the next second).
    let asking = request_body(&talk, "r1", 4, Some("145000.50 USD"), 86_400);
    let (s, v) = t.ask_body(&agent, &talk, &asking).await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["status"], "pending");
    assert_eq!(v["amount"], "145000.50 USD");
    let valid_until = talk.messages[4]["body"]["valid_until"].as_str().unwrap();
    let expires = anp::api::parse_timestamp(v["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires, anp::api::parse_timestamp(valid_until).unwrap());
    // The sandbox policy: one approver up to 250000.
    assert_eq!(v["approvals_required"], 1);
    assert_eq!(v["threshold"], "250000 USD");
    // The same request again answers the same; another body under the id is a conflict.
    let (s, again) = t.ask_body(&agent, &talk, &asking).await;
    assert_eq!(s, 200, "{again}");
    assert_eq!(again, v);
    let (s, c) = t.ask(&agent, &talk, "r1", 4, None, 600).await;
    assert_eq!(
        (s, c["error"]["code"].as_str()),
        (409, Some("request_conflict")),
        "{c}"
    );
    let (s, c) = t.ask(&agent, &talk, "r2", 4, None, 600).await;
    assert_eq!(
        (s, c["error"]["code"].as_str()),
        (409, Some("request_conflict")),
        "{c}"
    );
    assert!(
        c["error"]["message"].as_str().unwrap().contains("r1"),
        "{c}"
    );
    assert_eq!(t.count("gate_requests").await, 1);
    let status = t.request_status(&agent, &talk, "r1").await;
    assert_eq!(status["status"], "pending");
    assert_eq!(status["approvals_given"], 0);
    assert_eq!(status["receipt"], Value::Null);
    let (s, v) = t
        .gate(&agent, "GET", "/sessions/ses_ask/requests/r9", &Value::Null)
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );

    // A later counter by the seller supersedes the request.
    talk.say(SELLER, "negotiate.counter", Talk::offer("146000", 900));
    let (s, v) = t.mirror_more(&agent, &talk, 5).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        t.request_status(&agent, &talk, "r1").await["status"],
        "superseded"
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_offer_without_a_readable_price_needs_a_stated_amount_and_the_strictest_rule() {
    let t = start(roomy_limits()).await;
    let agent = t.gate_agent(ORG, None).await;
    let mut talk = Talk::opened("ses_noprice");
    talk.say(
        SELLER,
        "negotiate.offer",
        json!({"conditions": [{"if": {"volume": "high"}, "then": {"price": {"value": 1000, "currency": "USD"}}}]}),
    );
    t.mirror(&agent, &talk).await;
    let (s, v) = t.ask(&agent, &talk, "r1", 2, None, 600).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_request")),
        "{v}"
    );
    let (s, v) = t.ask(&agent, &talk, "r1", 2, Some("1000 USD"), 600).await;
    assert_eq!(s, 201, "{v}");
    // Below the sandbox's threshold, but the host could not check the amount.
    assert_eq!(v["approvals_required"], 2);
    t.running.shutdown().await;
}

#[tokio::test]
async fn unknown_gate_routes_and_methods_answer_in_the_gate_shape() {
    let t = start(roomy_limits()).await;
    let (s, b) = t.raw("GET", "/api/gate/v1/nowhere", &[], Vec::new()).await;
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (s, v["error"]["code"].as_str(), v["protocol"].as_str()),
        (404, Some("not_found"), Some("gate"))
    );
    let (s, b) = t
        .raw("DELETE", "/api/gate/v1/sessions", &[], Vec::new())
        .await;
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (405, Some("method_not_allowed"))
    );
    // The other surfaces keep ANP's shape.
    let (s, b) = t
        .raw("GET", "/api/console/v1/nowhere", &[], Vec::new())
        .await;
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!((s, v["protocol"].as_str()), (404, Some("ANP/0.1")));
    t.running.shutdown().await;
}
