//! Build and sign a receipt for a person; verify it, each check alone.

use approval_receipt::receipt::{
    build_receipt, sign_receipt, verify_receipt, Amount, BuildError, Decision, ReceiptCheck,
    ReceiptDraft,
};
use approval_receipt::{datetime, did_key, edges};
use ed25519_dalek::SigningKey;
use serde_json::{json, Value};
use time::OffsetDateTime;

fn offer() -> Value {
    json!({"type": "negotiate.offer", "id": "msg_1", "session_id": "ses_1", "body": {"terms": {"price": {"value": 150000.0, "currency": "USD"}}}, "signature": "c2ln"})
}

fn at(s: &str) -> OffsetDateTime {
    datetime::parse(s).unwrap()
}

fn draft(decision: Decision) -> ReceiptDraft {
    ReceiptDraft {
        receipt_uuid: uuid::Uuid::nil(),
        issued_at: at("2026-05-10T14:22:08Z"),
        expires_at: at("2026-05-10T15:22:08Z"),
        decision,
        offer_message: offer(),
        amount: "150000.00 USD".parse().unwrap(),
        threshold_crossed: "100000.00 USD".parse().unwrap(),
        session_id: "ses_1".into(),
        role: None,
        on_behalf_of: None,
    }
}

fn signed(key: &SigningKey, decision: Decision) -> Value {
    sign_receipt(
        build_receipt(&draft(decision), &key.verifying_key()).unwrap(),
        key,
    )
    .unwrap()
}

fn failed(
    r: &Value,
    offer: &Value,
    issuer: Option<&ed25519_dalek::VerifyingKey>,
    now: &str,
    revocations: &[Value],
) -> Vec<ReceiptCheck> {
    verify_receipt(r, offer, issuer, at(now), revocations)
        .failures()
        .map(|f| f.check)
        .collect()
}

#[test]
fn a_built_receipt_has_countersign_s_conventions() {
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let r = signed(&key, Decision::Approve);
    assert_eq!(
        r["id"],
        "urn:countersign:receipt:00000000-0000-0000-0000-000000000000"
    );
    assert_eq!(
        did_key::decode(r["approver"]["identity"].as_str().unwrap()).unwrap(),
        key.verifying_key()
    );
    assert_eq!(
        r["scope"]["offer_hash"],
        json!(edges::hash(&offer()).unwrap())
    );
    assert_eq!(r["scope"]["amount"], "150000.00 USD");
    assert_eq!(r["scope"]["threshold_crossed"], "100000.00 USD");
    assert_eq!(
        r["references"],
        json!([{"type": "negotiation_session", "id": "urn:concordia:session:ses_1", "relationship": "approves"}])
    );
    assert_eq!(r["expires_at"], "2026-05-10T15:22:08Z");
    assert!(
        r["signature"]["value"].as_str().unwrap().ends_with("=="),
        "padded, as the SDK verifies"
    );
    let report = verify_receipt(&r, &offer(), None, at("2026-05-10T14:30:00Z"), &[]);
    assert!(report.is_valid(), "{:?}", report.checks);
    assert_eq!(report.decision, Some(Decision::Approve));
    let deny = signed(&key, Decision::Deny);
    assert_eq!(deny["scope"]["decision"], "deny");
}

#[test]
fn a_receipt_expires_with_the_offer_or_the_policy_window_whichever_is_first() {
    use approval_receipt::receipt::receipt_expiry;
    let (early, late) = (at("2026-05-10T15:00:00Z"), at("2026-05-10T16:00:00Z"));
    assert_eq!(receipt_expiry(Some(early), late), early);
    assert_eq!(receipt_expiry(Some(late), early), early);
    assert_eq!(receipt_expiry(None, late), late);
}

#[test]
fn building_refuses_what_would_be_wrong() {
    let key = SigningKey::generate(&mut rand_core::OsRng).verifying_key();
    let mut d = draft(Decision::Approve);
    d.expires_at = d.issued_at;
    assert!(matches!(
        build_receipt(&d, &key),
        Err(BuildError::ExpiresBeforeIssued { .. })
    ));
    let mut d = draft(Decision::Approve);
    d.threshold_crossed = "100000.00 EUR".parse().unwrap();
    assert!(matches!(
        build_receipt(&d, &key),
        Err(BuildError::CurrencyMismatch { .. })
    ));
    for bad in [
        "150000.00",
        "150000.00 usd",
        "1e5 USD",
        "150,000.00 USD",
        " USD",
    ] {
        assert!(bad.parse::<Amount>().is_err(), "{bad}");
    }
    assert_eq!(
        "0.10 USD".parse::<Amount>().unwrap().to_string(),
        "0.10 USD"
    );
}

#[test]
fn each_check_fails_alone() {
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let r = signed(&key, Decision::Approve);
    let now = "2026-05-10T14:30:00Z";
    let o = offer();
    // Expiry: equal to now passes, one second later fails.
    assert_eq!(failed(&r, &o, None, "2026-05-10T15:22:08Z", &[]), []);
    assert_eq!(
        failed(&r, &o, None, "2026-05-10T15:22:09Z", &[]),
        [ReceiptCheck::NotExpired]
    );
    // The offer one cent off.
    let mut cent = o.clone();
    cent["body"]["terms"]["price"]["value"] = json!(150000.01);
    assert_eq!(failed(&r, &cent, None, now, &[]), [ReceiptCheck::OfferHash]);
    // Signature: anything changed after signing.
    let mut x = r.clone();
    x["scope"]["decision"] = json!("deny");
    assert_eq!(failed(&x, &o, None, now, &[]), [ReceiptCheck::Signature]);
    // Identity: the did:key names another key than the one given.
    let other = SigningKey::generate(&mut rand_core::OsRng).verifying_key();
    assert_eq!(
        failed(&r, &o, Some(&other), now, &[]),
        [ReceiptCheck::Identity, ReceiptCheck::Signature]
    );
    // A did:web approver with no key given cannot be verified.
    let mut x = r.clone();
    x["approver"]["identity"] = json!("did:web:acme.example");
    let x = sign_receipt(x, &key).unwrap();
    assert_eq!(
        failed(&x, &o, None, now, &[]),
        [ReceiptCheck::Identity, ReceiptCheck::Signature]
    );
    assert_eq!(failed(&x, &o, Some(&key.verifying_key()), now, &[]), []);
    // Algorithm (the schema's enum too).
    let mut x = r.clone();
    x["signature"]["alg"] = json!("EdDSA");
    assert_eq!(
        failed(&x, &o, None, now, &[]),
        [ReceiptCheck::Schema, ReceiptCheck::Algorithm]
    );
    // No approves reference (the schema's contains too).
    let mut x = r.clone();
    x["references"][0]["relationship"] = json!("references");
    let x = sign_receipt(x, &key).unwrap();
    assert_eq!(
        failed(&x, &o, None, now, &[]),
        [ReceiptCheck::Schema, ReceiptCheck::ApprovesReference]
    );
    // A naive expires_at: the schema refuses it and no instant is guessed.
    let mut x = r.clone();
    x["expires_at"] = json!("2026-05-10T15:22:08");
    let x = sign_receipt(x, &key).unwrap();
    assert_eq!(
        failed(&x, &o, None, now, &[]),
        [ReceiptCheck::Schema, ReceiptCheck::NotExpired]
    );
}

#[test]
fn a_revocation_record_in_force_revokes_the_receipt() {
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let r = signed(&key, Decision::Approve);
    let rev = |target: &str, at: &str| json!({"revocation_id": "urn:concordia:revocation:1", "revoked_artifact_id": target, "effective_at": at});
    let id = r["id"].as_str().unwrap().to_owned();
    let now = "2026-05-10T14:30:00Z";
    assert_eq!(
        failed(&r, &offer(), None, now, &[rev(&id, "2026-05-10T14:29:59Z")]),
        [ReceiptCheck::NotRevoked]
    );
    assert_eq!(
        failed(
            &r,
            &offer(),
            None,
            now,
            &[rev("urn:concordia:session:ses_1", now)]
        ),
        [ReceiptCheck::NotRevoked]
    );
    assert_eq!(
        failed(&r, &offer(), None, now, &[rev(&id, "2026-05-10T14:30:01Z")]),
        [],
        "not yet in force"
    );
    assert_eq!(
        failed(&r, &offer(), None, now, &[rev("urn:other", now)]),
        []
    );
    let report = verify_receipt(&r, &offer(), None, at(now), &[rev(&id, now)]);
    assert!(report
        .failures()
        .any(|f| f.detail == "revoked by urn:concordia:revocation:1"));
}

#[test]
fn the_signature_covers_the_receipt_without_its_signature_member() {
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let r = signed(&key, Decision::Approve);
    let pre = edges::canonical(&edges::without_top_level(&r, "signature")).unwrap();
    assert!(approval_receipt::keys::verify(
        &key.verifying_key(),
        pre.as_bytes(),
        r["signature"]["value"].as_str().unwrap()
    ));
}
