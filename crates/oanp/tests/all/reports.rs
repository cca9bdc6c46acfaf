//! What `countersign-verify` prints and exits with for an OANP receipt:
//! the JSON form the issue fixes, the text form, the exit codes, and a
//! sentence for every input it cannot read.

use oanp::report::{
    exit_code, read_log, read_receipt, render_json, render_text, verify_bytes, Input, ReadError,
    EXIT_NOT_PROOF, EXIT_PROOF, MAX_LOG_BYTES, MAX_RECEIPT_BYTES,
};
use oanp::{PinnedKeys, Trust, Verification};
use serde_json::{json, Value};

use crate::support::{fixture, fixture_bytes, TestKey};

fn run(bytes: &[u8], allow_test: bool) -> Verification {
    let pins = PinnedKeys::published();
    verify_bytes(
        bytes,
        None,
        Trust {
            pins: &pins,
            allow_test,
        },
    )
    .unwrap()
}

#[test]
fn the_json_report_has_exactly_the_issues_form() {
    let v = run(&fixture_bytes("dev-receipt"), false);
    let text = render_json(&v);
    assert!(text.starts_with(r#"{"protocol":"oanp","ok":false,"status":"valid","checks":[{"id":"header","ok":true,"skipped":false,"detail":"#), "{text}");
    assert!(text.ends_with("}]}\n") && text.lines().count() == 1);
    let json: Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // The parsed map's order depends on serde_json's features in the build
    // (the text's order is pinned above): compare as a set.
    keys.sort_unstable();
    assert_eq!(keys, ["checks", "ok", "protocol", "status"]);
    let checks = json["checks"].as_array().unwrap();
    let ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "header",
            "key",
            "signature",
            "signer",
            "mode",
            "terms",
            "chain"
        ]
    );
    for (check, ours) in checks.iter().zip(&v.checks) {
        assert_eq!(check.as_object().unwrap().len(), 4);
        assert_eq!(check["ok"], ours.ok);
        assert_eq!(check["skipped"], ours.skipped);
        assert_eq!(check["detail"], ours.detail.as_str());
    }
    assert_eq!(checks[4]["ok"], false);
    assert_eq!(
        checks[6],
        json!({"id": "chain", "ok": false, "skipped": true, "detail": v.checks[6].detail})
    );
    let allowed: Value =
        serde_json::from_str(&render_json(&run(&fixture_bytes("dev-receipt"), true))).unwrap();
    assert_eq!(
        (allowed["ok"].clone(), allowed["status"].clone()),
        (json!(true), json!("valid"))
    );
}

#[test]
fn the_text_report_lists_each_check_and_the_verdict() {
    let proof = render_text(&run(&fixture_bytes("dev-receipt"), true));
    let lines: Vec<&str> = proof.lines().collect();
    assert_eq!(
        lines[0],
        "OANP receipt for session 01M42N9KCCR8TAGDXTFR3Q8TE8 (as signed)"
    );
    assert!(
        lines[1].starts_with("  ok    header     EdDSA over a detached, unencoded payload"),
        "{}",
        lines[1]
    );
    assert!(
        lines[5].starts_with("  ok    mode       A test-mode (sandbox) key, accepted"),
        "{}",
        lines[5]
    );
    assert!(
        lines[7].starts_with("  skip  chain      Not checked: no session log was given"),
        "{}",
        lines[7]
    );
    assert_eq!(lines[8], "status: valid");
    assert!(
        lines[9].starts_with("Proof for testing only"),
        "{}",
        lines[9]
    );
    assert!(
        lines[9].ends_with(" The session log was not checked."),
        "{}",
        lines[9]
    );
    assert_eq!(
        lines[10],
        "signed final terms: 419.00 USD with warranty (included), cable (included)"
    );
    assert_eq!(lines.len(), 11);

    let forged = render_text(&run(&fixture_bytes("forged-kid-receipt"), true));
    assert!(
        forged.contains(
            "\n  FAIL  signer     The kid ed25519-28860223a6941457 is the Valyzen arbiter's"
        ),
        "{forged}"
    );
    assert!(forged.contains("\nNOT PROOF (signer check): "), "{forged}");
    assert!(
        forged.ends_with("Do not act on the terms this receipt carries.\n"),
        "{forged}"
    );
    assert!(!forged.contains("signed final terms"), "{forged}");
}

#[test]
fn exit_zero_only_for_proof() {
    assert_eq!(
        exit_code(&run(&fixture_bytes("dev-receipt"), true)),
        EXIT_PROOF
    );
    assert_eq!(
        exit_code(&run(&fixture_bytes("dev-receipt"), false)),
        EXIT_NOT_PROOF
    );
    for name in ["forged-receipt", "forged-kid-receipt"] {
        assert_eq!(
            exit_code(&run(&fixture_bytes(name), true)),
            EXIT_NOT_PROOF,
            "{name}"
        );
    }
    let mut closed = fixture("dev-receipt");
    closed["state"] = json!("closed");
    closed["artifact"] = Value::Null;
    let v = run(closed.to_string().as_bytes(), true);
    assert_eq!(exit_code(&v), EXIT_NOT_PROOF);
    assert_eq!(
        v.headline(),
        "Not proof: the session closed without an agreement, so nothing was signed."
    );
}

#[test]
fn every_unreadable_input_gets_a_sentence_naming_it() {
    let cases: Vec<(Result<(), ReadError>, Input, &str)> = vec![
        (read_receipt(b"").map(drop), Input::Receipt, "the receipt cannot be read: not JSON: EOF while parsing a value at line 1 column 0"),
        (read_receipt(b"{\"a\": NaN}").map(drop), Input::Receipt, "the receipt cannot be read: not JSON: expected value at line 1 column 7"),
        (
            read_receipt(b"{\"a\": 100000000000000000000001}").map(drop),
            Input::Receipt,
            "the receipt cannot be read: line 1, column 7: the integer 100000000000000000000001 is wider than 64 bits and cannot be read exactly",
        ),
        (read_receipt(b"[1]").map(drop), Input::Receipt, "the receipt is not a JSON object"),
        (read_receipt(&vec![b' '; MAX_RECEIPT_BYTES + 1]).map(drop), Input::Receipt, "the receipt is 1048577 bytes, more than the 1048576 this verifier reads"),
        (read_log(b"{}").map(drop), Input::Log, "the session log is not a JSON array of envelopes"),
        (read_log(b"[1,").map(drop), Input::Log, "the session log cannot be read: not JSON: EOF while parsing a value at line 1 column 3"),
        (read_log(&vec![b' '; MAX_LOG_BYTES + 1]).map(drop), Input::Log, "the session log is 16777217 bytes, more than the 16777216 this verifier reads"),
    ];
    for (result, input, sentence) in cases {
        let err = result.unwrap_err();
        assert_eq!((err.input(), err.to_string().as_str()), (input, sentence));
    }
    // A receipt nested beyond serde_json's depth limit is refused, not a crash.
    let deep = "[".repeat(100_000);
    assert!(matches!(
        read_receipt(deep.as_bytes()),
        Err(ReadError::NotJson { .. })
    ));
    // The log is read only after the receipt, and an unreadable log is named.
    let pins = PinnedKeys::published();
    let err = verify_bytes(
        &fixture_bytes("dev-receipt"),
        Some(b"nope"),
        Trust {
            pins: &pins,
            allow_test: true,
        },
    )
    .unwrap_err();
    assert_eq!(err.input(), Input::Log);
}

#[test]
fn counterparty_text_in_the_text_report_cannot_drive_a_terminal() {
    let key = TestKey::generate("k");
    let mut r = fixture("dev-receipt");
    r["signed_payload"]["session"]["session_id"] = json!("01M\u{1b}]0;owned\u{7}");
    r["session_id"] = r["signed_payload"]["session"]["session_id"].clone();
    r["signed_payload"]["final_terms"]["inclusions"][0]["kind"] = json!("cable\u{1b}[2J");
    r["final_terms"] = r["signed_payload"]["final_terms"].clone();
    key.sign(&mut r);
    let mut pins = PinnedKeys::published();
    pins.pin(key.pin(oanp::Mode::Live)).unwrap();
    let v = verify_bytes(
        r.to_string().as_bytes(),
        None,
        Trust {
            pins: &pins,
            allow_test: false,
        },
    )
    .unwrap();
    assert!(v.proof);
    let text = render_text(&v);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(
        text.starts_with("OANP receipt for session 01M\\u{001b}]0;owned\\u{0007} (as signed)\n"),
        "{text}"
    );
    assert!(text.contains("cable\\u{001b}[2J (included)"), "{text}");
}
