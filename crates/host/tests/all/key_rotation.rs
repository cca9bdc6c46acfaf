//! An approver moving to a new key (docs/approver-api.md, "Moving to a new
//! key"), on the store this suite runs on: the old key is retired at the
//! moment the host states, its approval already given still counts and
//! verifies against the old key as discovery publishes it, the new key
//! signs from then on, and every part of the statement is checked.

use crate::common;

use common::*;
use countersign_client::ApproverClient;
use countersign_host_api::signing::rotate_statement;
use serde_json::{json, Value};

fn pending_of(summary: &Value, session: &str) -> Vec<Value> {
    summary["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session)
        .map(|s| s["pending"].as_array().unwrap().clone())
        .unwrap_or_default()
}

fn client(t: &TestHost, p: &Party) -> ApproverClient {
    ApproverClient::new(&t.running.base_url(), p.key.clone(), &p.id).unwrap()
}

#[tokio::test]
async fn a_rotation_retires_the_old_key_and_keeps_what_it_signed() {
    let t = start(roomy_limits()).await;
    let vendor = t.register("Contoso").await;
    let sandbox = countersign_host::SANDBOX_HANDLE;
    let ada = t.enroll(sandbox, "Ada", "ada@fabrikam.example").await;
    let bob = t.enroll(sandbox, "Bob", "bob@fabrikam.example").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let hash = pending_of(&t.summary(&ada).await, &session)[0]["event_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let old_approval = ada.approval(&hash, &t.now());
    let (_, r) = t.decide(&ada, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": old_approval })).await;
    assert_eq!(r["outcome"], "awaiting_approvals", "{r}");

    // Ada moves to a new key.
    let new_key = anp::keys::generate_signing_key();
    let at = t.host().clock().now();
    let moved = client(&t, &ada).rotate_key(&new_key, at).await.unwrap();
    assert_ne!(moved.approver_id, ada.id);
    assert_eq!(moved.previous_approver_id, ada.id);
    assert_eq!(
        moved.fingerprint,
        anp::keys::fingerprint(&new_key.verifying_key())
    );
    // Asked again (its answer lost on the way): the same answer.
    let again = client(&t, &ada).rotate_key(&new_key, at).await.unwrap();
    assert_eq!(again, moved);

    // The old key signs nothing from now on; the new one signs as Ada.
    let (status, _) = t
        .signed(&ada, "GET", "/api/console/v1/summary", &Value::Null)
        .await;
    assert_eq!(status, 401, "the retired key still reads");
    let ada2 = Party {
        id: moved.approver_id.clone(),
        key: new_key.clone(),
        email: ada.email.clone(),
    };
    let pending = pending_of(&t.summary(&ada2).await, &session);
    let given = pending[0]["approvals"].as_array().unwrap();
    assert_eq!(given.len(), 1, "Ada's approval stands: {pending:?}");
    assert_eq!(given[0]["approved_by"], "ada@fabrikam.example");

    // One person counts once: Ada's new key cannot approve a second time.
    let (status, r) = t.decide(&ada2, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada2.approval(&hash, &t.now()) })).await;
    assert_eq!(status, 409, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already approved"),
        "{r}"
    );
    // Bob's approval completes it, with Ada's old-key approval in it.
    let (_, r) = t.decide(&bob, &session, json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": bob.approval(&hash, &t.now()) })).await;
    assert_eq!(r["outcome"], "appended", "{r}");
    let accept = r["log"]["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        accept["payload"]["approval"]["approved_by"],
        "ada@fabrikam.example"
    );

    // Discovery keeps the old key with its end, and the new one from then.
    let keys = client(&t, &bob).keys().await.unwrap();
    let old_fp = anp::keys::fingerprint(&ada.key.verifying_key());
    let old = keys
        .platform_keys
        .iter()
        .find(|k| k.fingerprint == old_fp)
        .expect("the retired key is still published");
    assert_eq!(old.valid_to.as_deref(), Some(moved.retired_at.as_str()));
    let new = keys
        .platform_keys
        .iter()
        .find(|k| k.fingerprint == moved.fingerprint)
        .expect("the new key is published");
    assert_eq!(new.valid_from, moved.retired_at);
    assert_eq!(new.valid_to, None);
    assert_eq!(new.approved_by.as_deref(), Some("ada@fabrikam.example"));
    // Ada's approval in the accept verifies with the old key as published.
    let approval: anp::payload::Approval =
        serde_json::from_value(accept["payload"]["approval"].clone()).unwrap();
    let published = anp::keys::parse_public_key(&old.public_key).unwrap();
    anp::approval::verify_approval(&approval, &hash, &published)
        .expect("the old key's approval verifies against its published key");

    // The old key cannot move Ada again, to another key: refused, and the
    // new key stays Ada's.
    let e = client(&t, &ada)
        .rotate_key(&anp::keys::generate_signing_key(), t.host().clock().now())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("retired already"), "{e}");
    assert_eq!(
        pending_of(&t.summary(&ada2).await, &session).len(),
        0,
        "the new key still reads"
    );
    // The admin's list says which key is retired.
    let listed = t.host().list_approvers().await.unwrap();
    let was = listed.iter().find(|a| a.approver_id == ada.id).unwrap();
    assert_eq!(was.retired_at.as_deref(), Some(moved.retired_at.as_str()));
    let now = listed.iter().find(|a| a.approver_id == ada2.id).unwrap();
    assert_eq!(
        (now.retired_at.as_ref(), now.revoked_at.as_ref()),
        (None, None)
    );
    t.running.shutdown().await;
}

/// A rotation body for `who`'s current key and `new`, with both
/// signatures over the statement for `authority` and `approver_id`.
fn body(
    t: &TestHost,
    who: &Party,
    new: &anp::keys::SigningKey,
    tweak: impl Fn(&mut Value),
) -> Value {
    let authority = authority_of(&t.running.base_url());
    let new_public_key = anp::keys::public_key_b64(&new.verifying_key());
    let at = t.now();
    let statement = rotate_statement(
        &authority,
        &who.id,
        &anp::keys::public_key_b64(&who.key.verifying_key()),
        &new_public_key,
        &at,
    );
    let mut body = json!({
        "new_public_key": new_public_key,
        "at": at,
        "consent": anp::keys::sign_b64(&who.key, statement.as_bytes()),
        "proof": anp::keys::sign_b64(new, statement.as_bytes()),
    });
    tweak(&mut body);
    body
}

#[tokio::test]
async fn a_rotation_is_refused_for_each_part_that_does_not_hold_and_nothing_changes() {
    let t = start(roomy_limits()).await;
    let sandbox = countersign_host::SANDBOX_HANDLE;
    let cy = t.enroll(sandbox, "Cy", "cy@fabrikam.example").await;
    let new = anp::keys::generate_signing_key();
    let stranger = anp::keys::generate_signing_key();
    let path = "/api/console/v1/keys/rotate";
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "consent signed by another key",
            body(&t, &cy, &new, |b| {
                b["consent"] = json!(anp::keys::sign_b64(&stranger, b"anything"))
            }),
            400,
            "consent is not",
        ),
        (
            "proof by another key",
            body(&t, &cy, &new, |b| {
                b["proof"] = json!(anp::keys::sign_b64(&stranger, b"anything"))
            }),
            400,
            "proof is not",
        ),
        (
            "a stale statement",
            body(&t, &cy, &new, |b| b["at"] = json!("2020-01-01T00:00:00Z")),
            400,
            "at is more than",
        ),
        (
            "the same key again",
            body(&t, &cy, &cy.key, |_| {}),
            400,
            "being retired",
        ),
        (
            "no key",
            body(&t, &cy, &new, |b| b["new_public_key"] = json!("zz")),
            400,
            "new_public_key",
        ),
        (
            "a member it does not know",
            body(&t, &cy, &new, |b| b["also"] = json!(1)),
            400,
            "rotate",
        ),
    ];
    for (what, body, status, says) in cases {
        let (got, answer) = t.signed(&cy, "POST", path, &body).await;
        let text = String::from_utf8_lossy(&answer);
        assert_eq!(got, status, "{what}: {text}");
        assert!(text.contains(says), "{what}: {text}");
        // Nothing changed: Cy's key still reads, and is no one's but Cy's.
        let (still, _) = t
            .signed(&cy, "GET", "/api/console/v1/summary", &Value::Null)
            .await;
        assert_eq!(still, 200, "{what} retired the key");
    }
    let listed = t.host().list_approvers().await.unwrap();
    assert_eq!(listed.len(), 1, "no approver was added: {listed:?}");
    t.running.shutdown().await;
}
