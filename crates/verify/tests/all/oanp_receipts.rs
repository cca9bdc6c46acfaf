//! OANP receipts through the shared verifier: the JSON form, exit 0
//! only for proof, `--allow-test`, `--log`, and unreadable input.

use serde_json::Value;

use crate::cli::{run, stdout};

const DEV: &str = "vendor/oanp/fixtures/dev-receipt.json";
const FORGED: &str = "vendor/oanp/fixtures/forged-receipt.json";
const FORGED_KID: &str = "vendor/oanp/fixtures/forged-kid-receipt.json";

fn json_of(args: &[&str]) -> (Value, Option<i32>) {
    let out = run(args);
    let text = stdout(&out);
    let value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    (value, out.status.code())
}

fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} in {report}"))
}

#[test]
fn the_development_receipt_is_proof_only_when_test_receipts_are_allowed() {
    let (report, code) = json_of(&["--json", DEV]);
    assert_eq!(report["protocol"], "oanp");
    assert_eq!(report["ok"], false);
    assert_eq!(report["status"], "valid");
    assert_eq!(check(&report, "mode")["ok"], false);
    assert_eq!(code, Some(1));
    let ids: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
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
    for c in report["checks"].as_array().unwrap() {
        let mut keys: Vec<&String> = c.as_object().unwrap().keys().collect();
        keys.sort_unstable();
        assert_eq!(keys, ["detail", "id", "ok", "skipped"], "{c}");
    }

    let (allowed, code) = json_of(&["--json", "--allow-test", DEV]);
    assert_eq!(allowed["ok"], true);
    assert_eq!(check(&allowed, "mode")["ok"], true);
    assert_eq!(check(&allowed, "chain")["skipped"], true);
    assert_eq!(code, Some(0));
}

#[test]
fn both_forgeries_are_not_proof_and_the_text_says_which_check() {
    for forged in [FORGED, FORGED_KID] {
        let (report, code) = json_of(&["--json", "--allow-test", forged]);
        assert_eq!(report["ok"], false, "{forged}");
        assert_eq!(check(&report, "signature")["ok"], true, "{forged}");
        assert_eq!(check(&report, "signer")["ok"], false, "{forged}");
        assert_eq!(code, Some(1));
        let out = run(&[forged]);
        let text = stdout(&out);
        assert!(text.contains("NOT PROOF (signer check)"), "{text}");
        assert!(text.contains("FAIL  signer"), "{text}");
        assert_eq!(out.status.code(), Some(1));
    }
}

#[test]
fn a_session_log_that_does_not_lead_to_the_signed_head_fails_the_chain_check() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.json");
    let envelopes = serde_json::json!([
        {"type": "session.open", "message_id": "m1", "sender": {"role": "buyer"}, "payload": {}, "prev_hash": null},
        {"type": "session.agree", "message_id": "m2", "sender": {"role": "arbiter"}, "payload": {}, "prev_hash": "sha256:00"}
    ]);
    std::fs::write(&log, envelopes.to_string()).unwrap();
    let log = log.to_str().unwrap();
    let (report, code) = json_of(&["--json", "--allow-test", "--log", log, DEV]);
    assert_eq!(check(&report, "chain")["skipped"], false);
    assert_eq!(check(&report, "chain")["ok"], false);
    assert_eq!(report["ok"], false);
    assert_eq!(code, Some(1));
}

#[test]
fn unreadable_receipts_and_logs_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad_log = dir.path().join("log.json");
    std::fs::write(&bad_log, b"{\"not\": \"an array\"}").unwrap();
    let out = run(&["--log", bad_log.to_str().unwrap(), DEV]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("log.json"), "{stderr}");
    assert!(stderr.contains("session log"), "{stderr}");

    // A receipt with an integer literal no double holds exactly is refused
    // by OANP's strict reader rather than rounded.
    let receipt = std::fs::read_to_string(crate::cli::root().join(DEV)).unwrap();
    let huge = receipt.replacen('{', "{\"zz_extra\": 123456789012345678901234567890, ", 1);
    let path = dir.path().join("huge.json");
    std::fs::write(&path, huge).unwrap();
    let out = run(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));

    let out = run(&[
        "--log",
        bad_log.to_str().unwrap(),
        "vendor/anp/examples/session-log.example.json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no file given is one"));
}
