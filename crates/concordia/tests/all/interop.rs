//! Interop with the reference SDK (`concordia-protocol` 0.10.0, installed in
//! .venv/ by `bash .ci/setup`): its transcripts and attestations verify here
//! and every single-field tamper of them does not; its own
//! `verify_approval_receipt` accepts the receipts we build.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use concordia::approval_receipt::receipt::{
    build_receipt, sign_receipt, verify_receipt, Amount, Decision, ReceiptDraft,
};
use concordia::transcript::{verify_transcript, Check, Keys};
use concordia::{Message, Session, State};
use ed25519_dalek::SigningKey;
use serde_json::{json, Value};
use time::{Duration, OffsetDateTime};

use super::suite::repo_root;

/// The interop Python: `COUNTERSIGN_PYTHON`, else the repository's .venv.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("COUNTERSIGN_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = repo_root().join(".venv/bin/python");
    assert!(
        venv.is_file(),
        "the interop tests need the reference SDK: run `bash .ci/setup` to build .venv/ (missing {})",
        venv.display()
    );
    venv
}

/// Runs an interop script with `stdin`, returning its JSON output.
pub fn script(name: &str, args: &[&str], stdin: &str) -> Value {
    let path = repo_root().join("crates/concordia/interop").join(name);
    let mut child = Command::new(python())
        .arg(&path)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the interop Python starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("the script ends");
    assert!(
        out.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name} printed no JSON: {e}"))
}

fn negotiation() -> Value {
    script("negotiate.py", &[], "")
}

/// Every leaf of `value`, as a JSON pointer.
fn leaves(value: &Value, path: String, out: &mut Vec<String>) {
    match value {
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            leaves(
                v,
                format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| leaves(v, format!("{path}/{i}"), out)),
        _ => out.push(path),
    }
}

/// Changes one leaf: strings gain a character (a signature is altered in
/// place so it stays base64url), numbers grow by one, booleans flip, null
/// becomes a string.
fn tamper(value: &mut Value, pointer: &str) {
    let leaf = value.pointer_mut(pointer).expect("leaf");
    *leaf = match leaf.take() {
        Value::String(s)
            if pointer.ends_with("signature") || pointer.contains("/countersignatures/") =>
        {
            let mut chars: Vec<char> = s.chars().collect();
            chars[0] = if chars[0] == 'A' { 'B' } else { 'A' };
            Value::String(chars.into_iter().collect())
        }
        Value::String(s) => Value::String(format!("{s}x")),
        Value::Number(n) if n.is_u64() => json!(n.as_u64().unwrap_or(0) + 1),
        Value::Number(n) => json!(n.as_f64().unwrap_or(0.0) + 1.0),
        Value::Bool(b) => Value::Bool(!b),
        _ => Value::String("x".into()),
    };
}

#[test]
fn the_sdk_transcript_verifies_with_signatures_and_replays_to_agreed() {
    let n = negotiation();
    let messages = n["messages"].as_array().expect("messages").clone();
    let keys = Keys::from_json(&n["keys"]).expect("keys");
    let report = verify_transcript(&messages, &keys);
    assert!(report.is_valid(), "{:?}", report.failures);
    assert_eq!(report.head.count, 4);
    assert_eq!(
        Some(report.head.hash.as_str()),
        n.pointer("/attestation/chain_head").and_then(Value::as_str)
    );
    let typed: Vec<Message> = messages
        .iter()
        .map(|m| Message::from_value(m).expect("typed"))
        .collect();
    let kinds: Vec<&str> = typed.iter().map(|m| m.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "negotiate.open",
            "negotiate.accept_session",
            "negotiate.counter",
            "negotiate.accept"
        ]
    );
    let session = Session::replay(&typed).expect("the SDK's transitions are legal here");
    assert_eq!(session.state(), State::Agreed);
    assert_eq!(n["state"], "agreed");
    // The counter's price is exact.
    let offer = typed[2].offer().expect("an offer");
    match &offer.kind {
        concordia::OfferKind::Basic { terms } => {
            let price = terms["price"].money.as_ref().expect("money");
            assert_eq!(price.value.to_string(), "1900");
            assert_eq!(price.currency, "USD");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_single_field_tamper_of_the_sdk_transcript_fails_at_its_message() {
    let n = negotiation();
    let messages = n["messages"].as_array().expect("messages").clone();
    let keys = Keys::from_json(&n["keys"]).expect("keys");
    let mut tampers = 0;
    for i in 0..messages.len() {
        let mut paths = Vec::new();
        leaves(&messages[i], String::new(), &mut paths);
        for p in paths {
            let mut copy = messages.clone();
            tamper(&mut copy[i], &p);
            let report = verify_transcript(&copy, &keys);
            let first = report
                .failures
                .first()
                .unwrap_or_else(|| panic!("message {i} {p}: the tamper was not caught"));
            assert_eq!(
                first.index, i as u64,
                "message {i} {p}: the first failure is at {}",
                first.index
            );
            assert_eq!(
                first.message_id.as_deref(),
                copy[i]["id"].as_str(),
                "message {i} {p}"
            );
            let own: Vec<Check> = report
                .failures
                .iter()
                .filter(|f| f.index == i as u64)
                .map(|f| f.check)
                .collect();
            assert!(
                own.iter().any(|c| matches!(
                    c,
                    Check::Signature | Check::Key | Check::Genesis | Check::Link
                )),
                "message {i} {p}: {own:?}"
            );
            tampers += 1;
        }
    }
    assert!(tampers > 40, "{tampers} tampers");
}

#[test]
fn a_swapped_sender_fails_the_signature_check() {
    let n = negotiation();
    let mut messages = n["messages"].as_array().expect("messages").clone();
    let keys = Keys::from_json(&n["keys"]).expect("keys");
    messages[2]["from"]["agent_id"] = json!("seller");
    let report = verify_transcript(&messages, &keys);
    assert_eq!(report.failures[0].index, 2);
    assert_eq!(report.failures[0].check, Check::Signature);
}

fn receipt_over(
    offer_message: &Value,
    decision: Decision,
    issued: OffsetDateTime,
    key: &SigningKey,
) -> Value {
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: issued,
        expires_at: issued + Duration::hours(1),
        decision,
        offer_message: offer_message.clone(),
        amount: "1900.00 USD".parse::<Amount>().expect("amount"),
        threshold_crossed: "1000.00 USD".parse::<Amount>().expect("amount"),
        session_id: offer_message["session_id"]
            .as_str()
            .expect("session")
            .to_owned(),
        role: Some("procurement_authority".into()),
        on_behalf_of: None,
    };
    sign_receipt(
        build_receipt(&draft, &key.verifying_key()).expect("built"),
        key,
    )
    .expect("signed")
}

#[test]
fn the_sdk_accepts_our_receipts_approve_and_deny_and_refuses_an_offer_one_cent_off() {
    let n = negotiation();
    let offer = n["messages"][2].clone();
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let issued = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("whole seconds");
    let now = concordia::approval_receipt::datetime::format_utc(issued + Duration::minutes(5));
    for decision in [Decision::Approve, Decision::Deny] {
        let receipt = receipt_over(&offer, decision, issued, &key);
        assert!(receipt["approver"]["identity"]
            .as_str()
            .expect("did")
            .starts_with("did:key:z6Mk"));
        assert!(receipt["id"]
            .as_str()
            .expect("id")
            .starts_with("urn:countersign:receipt:"));
        assert_eq!(receipt["references"][0]["relationship"], "approves");
        let sdk = script(
            "verify_receipt.py",
            &[],
            &json!({"receipt": receipt, "offer": offer, "now": now}).to_string(),
        );
        assert_eq!(sdk["valid"], true, "{sdk}");
        assert_eq!(sdk["decision"], decision.as_str());
        let ours = verify_receipt(&receipt, &offer, None, issued + Duration::minutes(5), &[]);
        assert!(ours.is_valid(), "{:?}", ours.checks);

        let mut cent_off = offer.clone();
        cent_off["body"]["terms"]["price"]["value"] = json!(1900.01);
        let sdk = script(
            "verify_receipt.py",
            &[],
            &json!({"receipt": receipt, "offer": cent_off, "now": now}).to_string(),
        );
        assert_eq!(sdk["valid"], false, "{sdk}");
        assert_eq!(sdk["failure_reason"], "offer_hash_mismatch");
        let ours = verify_receipt(
            &receipt,
            &cent_off,
            None,
            issued + Duration::minutes(5),
            &[],
        );
        let failed: Vec<&str> = ours.failures().map(|f| f.check.name()).collect();
        assert_eq!(failed, ["offer_hash"]);
    }
}

#[test]
fn the_sdk_refuses_our_receipt_once_expired_as_we_do() {
    let n = negotiation();
    let offer = n["messages"][2].clone();
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let issued = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("whole seconds");
    let receipt = receipt_over(&offer, Decision::Approve, issued, &key);
    let later = issued + Duration::hours(1) + Duration::seconds(1);
    let sdk = script(
        "verify_receipt.py",
        &[],
        &json!({"receipt": receipt, "offer": offer, "now": concordia::approval_receipt::datetime::format_utc(later)}).to_string(),
    );
    assert_eq!(sdk["failure_reason"], "expired", "{sdk}");
    let ours = verify_receipt(&receipt, &offer, None, later, &[]);
    assert_eq!(
        ours.failures().map(|f| f.check.name()).collect::<Vec<_>>(),
        ["not_expired"]
    );
}

#[test]
fn the_sdk_attestation_verifies_and_every_tamper_of_it_does_not() {
    let n = negotiation();
    let att = n["attestation"].clone();
    let failures = concordia::artifacts::verify_attestation(&att, &n["keys"], Some(&n["messages"]));
    assert!(failures.is_empty(), "{failures:?}");
    let mut paths = Vec::new();
    leaves(&att, String::new(), &mut paths);
    assert!(paths.len() > 30);
    for p in &paths {
        let mut copy = att.clone();
        tamper(&mut copy, p);
        let failures =
            concordia::artifacts::verify_attestation(&copy, &n["keys"], Some(&n["messages"]));
        assert!(!failures.is_empty(), "the tamper at {p} was accepted");
    }
    // Bound to its transcript: one message fewer is refused.
    let mut fewer = n["messages"].clone();
    fewer.as_array_mut().expect("array").pop();
    assert!(!concordia::artifacts::verify_attestation(&att, &n["keys"], Some(&fewer)).is_empty());
}

#[test]
fn our_canonical_bytes_are_the_sdk_s_including_its_edges() {
    let texts = [
        r#"{"b": 1, "a": {"d": [3, 2, 1], "c": null}}"#,
        "1e21",
        "1e-7",
        "0.1",
        "100.0",
        "123456789012345680000",
        "9007199254740993",
        "-9007199254740993",
        r#""line\u2028sep \u0001 \"q\" \\ é 😀""#,
        r#"{"\ufb01": 1, "\ud83d\ude00": 2, "a": 3, "Z": 4}"#,
        "[1.5, -2, 1e300, 5e-324, true, false, null]",
        "-0.0",
        "[0.30000000000000004, 2.5e-8, 1234.5678]",
    ];
    let sdk = script("canonical.py", &[], &texts.join("\n"));
    let sdk = sdk.as_array().expect("a list");
    assert_eq!(sdk.len(), texts.len());
    for (text, theirs) in texts.iter().zip(sdk) {
        let value: Value = serde_json::from_str(text).expect("JSON");
        let ours = concordia::approval_receipt::edges::canonical(&value).ok();
        assert_eq!(ours.as_deref(), theirs.as_str(), "{text}");
    }
}

/// The one known divergence, pinned so a fix is noticed: an integer literal
/// beyond u64 is read by serde_json as a double, so its digits are not the
/// SDK's (`str(int)`). No Concordia artifact in the suite carries one.
#[test]
fn integers_beyond_u64_are_the_known_divergence() {
    let text = "100000000000000000001";
    let sdk = script("canonical.py", &[], text);
    assert_eq!(sdk[0], "100000000000000000001");
    let ours =
        concordia::approval_receipt::edges::canonical(&serde_json::from_str(text).expect("JSON"))
            .expect("canonical");
    assert_eq!(ours, "100000000000000000000");
}

#[test]
fn the_sdk_judges_our_receipt_vectors_as_we_do() {
    let vectors = super::suite::load_suite(&repo_root().join("crates/concordia/vectors"));
    let mut judged = 0;
    for (path, v) in &vectors {
        if v["verification_profile"] != "receipt-v1" {
            continue;
        }
        let request = json!({
            "receipt": v["input"],
            "offer": v["context"]["offer"],
            "now": v["context"]["now"],
            "issuer_public_key_b64url": v["context"]["public_keys_b64url"]["issuer"],
        });
        let sdk = script("verify_receipt.py", &[], &request.to_string());
        assert_eq!(
            sdk["valid"] == true,
            v["expected"] == "accept",
            "{path}: the SDK says {sdk}"
        );
        judged += 1;
    }
    assert!(judged >= 9, "{judged}");
}

#[test]
fn the_sdk_judges_our_mandate_vectors_as_we_do() {
    let vectors = super::suite::load_suite(&repo_root().join("crates/concordia/vectors"));
    let mut judged = 0;
    for (path, v) in &vectors {
        if !matches!(
            v["verification_profile"].as_str(),
            Some("mandate-v1" | "delegation-chain-v1")
        ) {
            continue;
        }
        let c = &v["context"];
        let request = json!({
            "mandate": v["input"],
            "issuer_public_key_b64url": c["issuer_public_key_b64url"],
            "now": c["now"],
            "action": c["action"],
            "delegation_public_keys_b64url": c.get("delegation_public_keys_b64url"),
        });
        let sdk = script("verify_mandate.py", &[], &request.to_string());
        assert_eq!(
            sdk["valid"] == true,
            v["expected"] == "accept",
            "{path}: the SDK says {sdk}"
        );
        judged += 1;
    }
    assert!(judged >= 10, "{judged}");
}

#[test]
fn the_sdk_judges_our_attestation_vectors_as_we_do() {
    let vectors = super::suite::load_suite(&repo_root().join("crates/concordia/vectors"));
    let mut judged = 0;
    for (path, v) in &vectors {
        let profile = v["verification_profile"].as_str().unwrap_or("");
        if !matches!(profile, "attestation-v1" | "attestation-countersign-v1") {
            continue;
        }
        let request = json!({
            "attestation": v["input"],
            "public_keys_b64url": v["context"]["public_keys_b64url"],
            "countersigners": v["context"].get("countersigners"),
        });
        let sdk = script("verify_attestation.py", &[], &request.to_string());
        assert_eq!(
            sdk["valid"] == true,
            v["expected"] == "accept",
            "{path}: the SDK says {sdk}"
        );
        judged += 1;
    }
    assert!(judged >= 6, "{judged}");
}
