//! The published ANP/0.1 test vectors (`vendor/anp/test-vectors.json`),
//! every case, against this crate.

use std::path::PathBuf;

use anp::canonical::{canonical_hash, sha256_hex, to_canonical_string};
use anp::keys::{fingerprint, parse_public_key, verify_b64};
use anp::signed;
use anp::{verify_document, LogDocument};
use serde_json::Value;

fn vendored_anp() -> PathBuf {
    // The published ANP/0.1 data, vendored unchanged (vendor/anp/PROVENANCE.md).
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vendor/anp")
}

fn vectors() -> Value {
    let path = vendored_anp().join("test-vectors.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("vectors parse")
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is a string"))
}

#[test]
fn canonical_json_cases() {
    let v = vectors();
    let cases = v["canonical_json"].as_array().expect("cases");
    assert!(cases.len() >= 6);
    for case in cases {
        let canonical = to_canonical_string(&case["input"]);
        assert_eq!(canonical, s(case, "canonical"), "case {}", s(case, "name"));
        assert_eq!(sha256_hex(canonical.as_bytes()), s(case, "sha256_hex"));
        assert_eq!(canonical_hash(&case["input"]), s(case, "sha256_hex"));
    }
}

#[test]
fn signed_strings() {
    let v = vectors();
    let ss = &v["signed_strings"];
    let reg = &ss["registration_proof"];
    assert_eq!(
        signed::registration_proof_string(s(reg, "public_key")),
        s(reg, "string")
    );
    let req = &ss["canonical_request"];
    assert_eq!(
        sha256_hex(s(req, "body").as_bytes()),
        s(req, "body_sha256_hex")
    );
    assert_eq!(
        signed::canonical_request_string(
            s(req, "method"),
            s(req, "path"),
            s(req, "timestamp"),
            s(req, "nonce"),
            s(req, "body").as_bytes()
        ),
        s(req, "string")
    );
    assert_eq!(
        sha256_hex(b""),
        s(&ss["bodyless_request"], "empty_body_sha256_hex")
    );
    let auth = &ss["authorship"];
    assert_eq!(
        signed::authorship_string(s(auth, "kind"), s(auth, "payload_hash")),
        s(auth, "string")
    );
}

#[test]
fn signature_fixtures() {
    let v = vectors();
    for case in v["signatures"].as_array().expect("cases") {
        let key = parse_public_key(s(case, "public_key")).expect("key parses");
        assert_eq!(fingerprint(&key), s(case, "signer_fingerprint"));
        let valid = verify_b64(&key, s(case, "message").as_bytes(), s(case, "signature"));
        assert_eq!(valid, s(case, "expect") == "valid", "{case}");
    }
}

#[test]
fn event_hash_case() {
    let v = vectors();
    let c = &v["event_hash"];
    let e = &c["event"];
    let hash = signed::event_hash(
        s(c, "session_id"),
        e["seq"].as_u64().expect("seq"),
        s(e, "actor"),
        s(e, "kind"),
        s(e, "payload_hash"),
        s(e, "prev_hash"),
        s(e, "at"),
    );
    assert_eq!(hash, s(c, "expected_event_hash"));
}

#[test]
fn chain_verification_cases_match_exactly() {
    let v = vectors();
    let cases = v["chain_verification"].as_array().expect("cases");
    assert_eq!(cases.len(), 4);
    for case in cases {
        let doc: LogDocument = serde_json::from_value(case["log"].clone()).expect("log parses");
        let report = verify_document(&doc).expect("keys parse");
        let expect = &case["expect"];
        assert_eq!(
            report.ok,
            expect["ok"].as_bool().expect("ok"),
            "{}",
            s(case, "name")
        );
        let got: Vec<Value> = report
            .failing
            .iter()
            .map(|f| serde_json::json!({"seq": f.seq, "checks": f.checks}))
            .collect();
        assert_eq!(Value::Array(got), expect["failing"], "{}", s(case, "name"));
    }
}

#[test]
fn published_example_log_verifies() {
    let path = vendored_anp().join("examples/session-log.example.json");
    let doc: LogDocument =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("parse");
    let report = verify_document(&doc).expect("keys");
    assert!(report.ok, "{report:?}");
    assert!(report.unproven.is_empty());
    assert_eq!(report.head.event_hash, doc.session.chain_head);
}
