//! Concordia artifacts through the binary: transcripts (whole, pinned,
//! tampered), receipts (with and without their offer), --json.

use concordia::approval_receipt::receipt::{
    build_receipt, sign_receipt, Amount, Decision, ReceiptDraft,
};
use concordia::testing::synthetic_transcript;
use serde_json::{json, Value};

use super::cli::{run, stdout};

fn write(dir: &tempfile::TempDir, name: &str, v: &Value) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p.to_str().unwrap().to_owned()
}

/// Files of a megabyte and more are mapped rather than read (main.rs,
/// `file_bytes`): the same verdicts, and text that is not JSON is still
/// unreadable, with the reader's position.
#[test]
fn a_large_file_is_judged_as_a_small_one_is() {
    let dir = tempfile::tempdir().unwrap();
    let (messages, _, keys) = synthetic_transcript(2_500);
    let good = write(
        &dir,
        "large.json",
        &json!({"messages": messages, "keys": keys}),
    );
    assert!(
        std::fs::metadata(&good).unwrap().len() > 1 << 20,
        "the file is mapped"
    );
    let out = run(&[&good]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("2500 messages checked"),
        "{}",
        stdout(&out)
    );

    let mut bad = messages.clone();
    bad[2_222]["body"]["terms"]["price"]["value"] = json!(1.0);
    let bad_path = write(
        &dir,
        "large-bad.json",
        &json!({"messages": bad, "keys": keys}),
    );
    let out = run(&[&bad_path]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("message 2222 (msg_002222): signature:"),
        "{}",
        stdout(&out)
    );

    let mut text = std::fs::read_to_string(&good).unwrap();
    text.truncate(text.len() - 10);
    let cut = dir.path().join("large-cut.json");
    std::fs::write(&cut, text).unwrap();
    let out = run(&[cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not JSON") && err.contains("line 1"), "{err}");
}

#[test]
fn a_transcript_verifies_a_tampered_one_names_the_message_and_a_pin_must_hold() {
    let dir = tempfile::tempdir().unwrap();
    let (messages, _, keys) = synthetic_transcript(6);
    let good = write(&dir, "t.json", &json!({"messages": messages, "keys": keys}));
    let out = run(&[&good]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Concordia transcript: verified: 6 messages checked"),
        "{}",
        stdout(&out)
    );

    let mut bad = messages.clone();
    bad[5]["reasoning"] = json!("changed");
    let bad_path = write(&dir, "bad.json", &json!({"messages": bad, "keys": keys}));
    let out = run(&[&bad_path]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("message 5 (msg_000005): signature:"),
        "{}",
        stdout(&out)
    );

    // --json: one object per file.
    let out = run(&[&good, &bad_path, "--json"]);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["status"], "verified");
    assert_eq!(lines[1]["status"], "failed");
    assert_eq!(lines[1]["failures"][0]["check"], "signature");
    assert_eq!(out.status.code(), Some(1));

    // A pin at message 3 with the right hash verifies only what follows; a wrong one fails.
    let head =
        concordia::verify_transcript(&messages[..3], &concordia::Keys::from_json(&keys).unwrap())
            .head;
    let out = run(&[&good, "--pin", &format!("3:{}", head.hash)]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("3 messages checked, head 6:"),
        "{}",
        stdout(&out)
    );
    let out = run(&[&good, "--pin", &format!("3:sha256:{}", "0".repeat(64))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("pin"), "{}", stdout(&out));
    let out = run(&[&good, "--pin", "9:sha256:0"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a malformed pin is a usage error"
    );
}

#[test]
fn a_receipt_verifies_against_its_offer_at_now_and_not_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let (messages, _, _) = synthetic_transcript(3);
    let offer = messages[2].clone();
    let key = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
    let issued = concordia::approval_receipt::datetime::parse("2026-05-10T10:00:00Z").unwrap();
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: issued,
        expires_at: issued + time::Duration::hours(1),
        decision: Decision::Approve,
        offer_message: offer.clone(),
        amount: "1000.00 USD".parse::<Amount>().unwrap(),
        threshold_crossed: "500.00 USD".parse::<Amount>().unwrap(),
        session_id: "ses_bench".into(),
        role: None,
        on_behalf_of: None,
    };
    let receipt = sign_receipt(build_receipt(&draft, &key.verifying_key()).unwrap(), &key).unwrap();
    let both = write(&dir, "r.json", &json!({"receipt": receipt, "offer": offer}));
    let out = run(&[&both, "--now", "2026-05-10T10:30:00Z"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&[&both, "--now", "2026-05-10T11:00:01Z"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("not_expired: expired at 2026-05-10T11:00:00Z"),
        "{}",
        stdout(&out)
    );
    let bare = write(&dir, "bare.json", &receipt);
    let out = run(&[&bare, "--now", "2026-05-10T10:30:00Z"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("--offer"), "{}", stdout(&out));
    let offer_path = write(&dir, "offer.json", &offer);
    let out = run(&[
        &bare,
        "--offer",
        &offer_path,
        "--now",
        "2026-05-10T10:30:00Z",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&[&bare, "--now", "2026-05-10T10:30:00"]);
    assert_eq!(out.status.code(), Some(2), "a naive --now is refused");
}

#[test]
fn a_transcript_with_its_receipts_checks_each_against_the_message_it_approves() {
    let dir = tempfile::tempdir().unwrap();
    let (messages, _, keys) = synthetic_transcript(6);
    let key = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
    let issued = concordia::approval_receipt::datetime::parse("2026-05-10T10:00:00Z").unwrap();
    let receipt_at = |offer: &Value, decision: Decision, issued: time::OffsetDateTime| {
        let draft = ReceiptDraft {
            receipt_uuid: uuid::Uuid::new_v4(),
            issued_at: issued,
            expires_at: issued + time::Duration::hours(1),
            decision,
            offer_message: offer.clone(),
            amount: "1000.00 USD".parse::<Amount>().unwrap(),
            threshold_crossed: "500.00 USD".parse::<Amount>().unwrap(),
            session_id: "ses_bench".into(),
            role: None,
            on_behalf_of: None,
        };
        sign_receipt(build_receipt(&draft, &key.verifying_key()).unwrap(), &key).unwrap()
    };
    let receipt_for = |offer: &Value, decision: Decision| receipt_at(offer, decision, issued);
    // Every message of the synthetic transcript is stamped 10:00:00Z: the
    // first two receipts were acted on (messages 3 and 5 answer them) at
    // 10:00, inside their hour; the third, for the last message, was not
    // acted on yet.
    let receipts = vec![
        receipt_for(&messages[2], Decision::Deny),
        receipt_for(&messages[4], Decision::Approve),
        receipt_for(&messages[5], Decision::Approve),
    ];
    let doc = json!({"messages": messages, "keys": keys, "receipts": receipts, "decisions": []});
    let good = write(&dir, "export.json", &doc);
    let now = ["--now", "2026-05-10T10:30:00Z"];
    let out = run(&[&good, now[0], now[1]]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("6 messages checked") && stdout(&out).contains("3 receipts checked"),
        "{}",
        stdout(&out)
    );
    // Each check alone: an edited receipt, one approving a message the
    // transcript does not hold, one checked after it expired, and
    // receipts that are not a list.
    let mut edited = doc.clone();
    edited["receipts"][1]["scope"]["amount"] = json!("1.00 USD");
    let out = run(&[&write(&dir, "edited.json", &edited), now[0], now[1]]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("receipt 1 ("), "{}", stdout(&out));
    assert!(stdout(&out).contains("signature:"), "{}", stdout(&out));
    let mut stray = doc.clone();
    stray["receipts"][0]["scope"]["offer_hash"] = json!(format!("sha256:{}", "0".repeat(64)));
    let out = run(&[&write(&dir, "stray.json", &stray), now[0], now[1]]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("offer_hash: no message of the transcript has the hash it approves"),
        "{}",
        stdout(&out)
    );
    // Audited after the hour: the receipts acted on in time still pass;
    // the one nobody acted on is judged now, and has expired.
    let out = run(&[&good, "--now", "2026-05-10T11:00:01Z"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("receipt 2 (") && stdout(&out).contains("not_expired"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("receipt 0 ("), "{}", stdout(&out));
    assert!(!stdout(&out).contains("receipt 1 ("), "{}", stdout(&out));
    let acted =
        json!({"messages": messages, "keys": keys, "receipts": receipts[..2], "decisions": []});
    let out = run(&[
        &write(&dir, "acted.json", &acted),
        "--now",
        "2027-05-10T00:00:00Z",
    ]);
    assert_eq!(out.status.code(), Some(0), "a year later: {}", stdout(&out));
    // One the agent acted on after it had expired fails at any --now.
    let early = issued - time::Duration::hours(2);
    let mut late = acted.clone();
    late["receipts"][1] = receipt_at(&messages[4], Decision::Approve, early);
    let out = run(&[
        &write(&dir, "late.json", &late),
        "--now",
        "2026-05-10T08:30:00Z",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("receipt 1 (") && stdout(&out).contains("not_expired"),
        "{}",
        stdout(&out)
    );
    let mut garbled = doc.clone();
    garbled["receipts"] = json!({"not": "a list"});
    let out = run(&[&write(&dir, "garbled.json", &garbled), now[0], now[1]]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("receipts: not an array"), "{said}");
}

#[test]
fn a_bare_attestation_or_mandate_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let att = write(
        &dir,
        "a.json",
        &json!({"concordia_attestation": "0.3.0", "parties": []}),
    );
    let out = run(&[&att]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"keys\""));
    let m = write(
        &dir,
        "m.json",
        &json!({"mandate_id": "urn:concordia:mandate:x", "validity": {}}),
    );
    let out = run(&[&m]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("issuer_public_key"));
}
