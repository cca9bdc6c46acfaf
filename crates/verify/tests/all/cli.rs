//! The binary's contract: what it prints and how it exits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_countersign-verify"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_vendored_suite_prints_1546_passed_0_failed() {
    let out = run(&["vectors", "vendor/concordia/conformance/vectors"]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"1546 passed, 0 failed"),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
    assert_eq!(lines.len(), 1547);
    assert!(lines.contains(&"pos-1404-approval-receipt expected=accept got=accept ok"));
    assert!(lines.contains(&"canary-chain-splice expected=reject got=reject ok"));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_anp_log_verifies_and_a_tampered_one_fails_naming_the_seq() {
    let out = run(&["vendor/anp/examples/session-log.example.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("ANP/0.1 log: verified"));

    let text = std::fs::read_to_string(root().join("vendor/anp/examples/session-log.example.json"))
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = doc["events"].as_array_mut().unwrap();
    let last = events.last_mut().unwrap();
    last["payload"]["term_months"] = serde_json::json!(36);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = run(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("seq 4"), "{}", stdout(&out));
}

#[test]
fn unreadable_input_exits_2_with_a_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.json");
    std::fs::write(&path, "{not json").unwrap();
    let out = run(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));
    std::fs::write(&path, "{\"hello\": 1}").unwrap();
    let out = run(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an artifact this tool knows"));
    let out = run(&["/nonexistent/file.json"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["vectors", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn our_single_check_vectors_run_through_the_same_runner() {
    let out = run(&["vectors", "crates/concordia/vectors"]);
    let text = stdout(&out);
    let last = text.lines().last().unwrap_or("");
    let n = text.lines().count() - 1;
    assert_eq!(last, format!("{n} passed, 0 failed"), "{text}");
    assert!(n >= 30);
    assert!(text.contains("cs-receipt-expired-by-one-second expected=reject got=reject ok"));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_mismatch_is_printed_and_exits_1() {
    // A copy of one of our vectors with its expectation flipped.
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("crates/concordia/vectors/mutation/cs-receipt-offer-one-cent-off.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    v["expected"] = serde_json::json!("accept");
    v["expected_reason_class"] = serde_json::Value::Null;
    std::fs::create_dir_all(dir.path().join("mutation")).unwrap();
    std::fs::write(dir.path().join("mutation/x.json"), v.to_string()).unwrap();
    std::fs::write(
        dir.path().join("manifest.json"),
        serde_json::json!({"counts": {"mutation": 1}, "files": {"mutation": ["mutation/x.json"]}})
            .to_string(),
    )
    .unwrap();
    let out = run(&["vectors", dir.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert!(
        text.contains("cs-receipt-offer-one-cent-off expected=accept got=reject MISMATCH"),
        "{text}"
    );
    assert!(text.contains("offer_hash"), "{text}");
    assert_eq!(text.lines().last(), Some("0 passed, 1 failed"));
    assert_eq!(out.status.code(), Some(1));
}
