//! The answer shapes of the HTTP APIs, read as other ANP/0.1 hosts write
//! them: RFC-003's discovery document exactly as published (the vendored
//! draft's own example), the reference host's wrapped append answer beside
//! the bare log document, and its minimal status answer.

use std::path::PathBuf;

use anp::api::{LogAnswer, OpenSessionResponse, SessionStatus, WellKnown};
use anp::LogDocument;
use serde_json::{json, Value};

fn vendored(path: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../vendor/anp")
        .join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The first ```json block of the vendored RFC-003 text: its example document.
fn rfc003_example() -> Value {
    let text = vendored("proposals/003-well-known-discovery.md");
    let start = text.find("```json").expect("RFC-003 has a JSON example") + "```json".len();
    let end = start + text[start..].find("```").expect("the block ends");
    serde_json::from_str(&text[start..end]).expect("the example is JSON")
}

fn example_log() -> Value {
    serde_json::from_str(&vendored("examples/session-log.example.json")).unwrap()
}

#[test]
fn rfc003s_own_example_reads_without_our_additions() {
    let example = rfc003_example();
    assert!(
        example.get("drafts").is_none(),
        "the RFC has no drafts member"
    );
    let doc: WellKnown = serde_json::from_value(example).unwrap();
    assert_eq!(doc.protocol_versions, ["ANP/0.1"]);
    assert_eq!(doc.api_base, "/api/agent/v1");
    assert!(doc.drafts.is_empty());
    assert_eq!(doc.platform_keys[0].roles, ["events", "approval"]);
    assert_eq!(doc.platform_keys[0].approved_by, None);
    assert_eq!(doc.platform_keys[0].valid_to, None);
    // Written back, it carries no member the RFC does not have.
    let written = serde_json::to_value(&doc).unwrap();
    assert_eq!(written, rfc003_example());
}

#[test]
fn unknown_discovery_members_are_ignored() {
    let mut example = rfc003_example();
    example["webhooks"] = json!({ "supported": true });
    example["protocol_versions"] = json!(["ANP/0.1", "ANP/0.2-draft"]);
    example["platform_keys"][0]["algorithm"] = json!("Ed25519");
    let doc: WellKnown = serde_json::from_value(example).unwrap();
    assert_eq!(doc.protocol_versions.len(), 2);
    assert_eq!(doc.platform_keys.len(), 1);
}

#[test]
fn the_wrapped_and_the_bare_log_answer_read_as_the_same_document() {
    let bare = example_log();
    let expected: LogDocument = serde_json::from_value(bare.clone()).unwrap();
    let wrapped = json!({ "log": bare.clone(), "protocol": "ANP/0.1" });
    for answer in [bare, wrapped] {
        let read: LogAnswer = serde_json::from_value(answer).unwrap();
        assert_eq!(read.into_document().unwrap(), expected);
    }
}

#[test]
fn an_answer_that_is_neither_shape_is_named_as_such() {
    let mut bare = example_log();
    bare.as_object_mut().unwrap().remove("events");
    let read: LogAnswer = serde_json::from_value(bare).unwrap();
    let err = read.into_document().unwrap_err();
    assert!(err.to_string().contains("no `events`"), "{err}");
    let read: LogAnswer = serde_json::from_value(json!({ "protocol": "ANP/0.1" })).unwrap();
    assert!(read.into_document().is_err());
    // A malformed log inside the wrapper is an error about the log, not ignored.
    let mut broken = example_log();
    broken["events"][0]["seq"] = json!("one");
    let err = serde_json::from_value::<LogAnswer>(json!({ "log": broken, "protocol": "ANP/0.1" }))
        .unwrap_err();
    assert!(err.to_string().contains("invalid type"), "{err}");
}

#[test]
fn an_open_answer_without_protocol_reads_as_0_1() {
    let log = example_log();
    let open = json!({ "session_id": log["session"]["id"], "buyer_envelope": {}, "log": log });
    let read: OpenSessionResponse = serde_json::from_value(open).unwrap();
    assert_eq!(read.protocol, "ANP/0.1");
}

#[test]
fn the_reference_hosts_minimal_status_reads() {
    let status = json!({
        "session": { "id": "5f1c", "event_count": 7, "chain_head": "ab".repeat(32) },
        "protocol": "ANP/0.1"
    });
    let read: SessionStatus = serde_json::from_value(status).unwrap();
    assert_eq!(read.session.event_count, 7);
    assert_eq!(read.session.status, None);
}
