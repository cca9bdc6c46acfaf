//! Hostile receipts never panic: every node of each fixture replaced by
//! hostile values, and the text corrupted at every byte, go through reading,
//! verifying, the view and both reports. Each outcome is also sane: a
//! mutated receipt is never proof unless the mutation left the signed bytes
//! and every check intact.

use oanp::report::{render_json, render_text, verify_bytes};
use oanp::{PinnedKeys, ReceiptView, Trust};
use serde_json::{json, Value};

use crate::support::{fixture, fixture_bytes, FIXTURES};

const HOSTILE: [&str; 12] = [
    "null",
    "0",
    "-1",
    "\"\"",
    "[]",
    "{}",
    "true",
    "1e300",
    "9007199254740993",
    "\"\\u0000\\u001b[2J\\u202e\"",
    "[[[[[[[[[[]]]]]]]]]]",
    "{\"kid\": {\"kid\": []}}",
];

/// Every path (as pointers) to a node of `value`.
fn paths(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                paths(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                paths(
                    item,
                    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Reads, verifies, views and renders `bytes`; returns whether it was proof.
fn exercise(bytes: &[u8], allow_test: bool) -> Option<bool> {
    let pins = PinnedKeys::published();
    let v = verify_bytes(
        bytes,
        None,
        Trust {
            pins: &pins,
            allow_test,
        },
    )
    .ok()?;
    assert_eq!(v.checks.len(), 7);
    let receipt: Value = serde_json::from_slice(bytes).ok()?;
    let view = ReceiptView::build(&receipt, &v).unwrap();
    assert_eq!(view.proof, v.proof);
    assert!(view.arbiter_report.invariants.len() >= 7);
    serde_json::to_string(&view).unwrap();
    let text = render_text(&v);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    let json: Value = serde_json::from_str(&render_json(&v)).unwrap();
    assert_eq!(json["ok"], v.proof);
    Some(v.proof)
}

#[test]
fn every_node_replaced_by_a_hostile_value() {
    let mut runs = 0;
    for name in FIXTURES {
        let original = fixture(name);
        let mut all = Vec::new();
        paths(&original, String::new(), &mut all);
        // Each node gets three of the hostile values, in turn, so every
        // value meets every kind of node while the test stays quick.
        for (n, path) in all.iter().enumerate().skip(1) {
            for hostile in (0..3).map(|k| HOSTILE[(n + 4 * k) % HOSTILE.len()]) {
                let mut r = original.clone();
                *r.pointer_mut(path).unwrap() = serde_json::from_str(hostile).unwrap();
                let proof = exercise(r.to_string().as_bytes(), true);
                runs += 1;
                // Only the dev receipt can be proof, and only when the
                // mutation touched nothing verification reads.
                if proof == Some(true) {
                    assert_eq!(name, "dev-receipt", "{path} = {hostile}");
                    let read = [
                        "/artifact",
                        "/signed_payload",
                        "/jwks",
                        "/final_terms",
                        "/session_id",
                    ];
                    assert!(
                        !read.iter().any(|p| path.starts_with(p))
                            || path.starts_with("/jwks/keys/0/alg")
                            || path.starts_with("/jwks/keys/0/use"),
                        "{path} = {hostile} left the receipt proof"
                    );
                }
            }
        }
    }
    assert!(runs > 1500, "{runs}");
}

#[test]
fn the_text_corrupted_byte_by_byte() {
    for name in FIXTURES {
        let original = fixture_bytes(name);
        for at in 0..original.len() {
            let mut bytes = original.clone();
            bytes[at] = [b'"', b'0', b'}', 0xff][at % 4];
            exercise(&bytes, true);
        }
    }
}

#[test]
fn hostile_logs_beside_a_genuine_receipt() {
    let receipt = fixture_bytes("dev-receipt");
    let pins = PinnedKeys::published();
    let logs = [
        json!([]),
        json!([null]),
        json!([{}]),
        json!([{}, {}]),
        json!([{"prev_hash": 1}, {"prev_hash": {"x": []}}]),
        json!([[{"type": "session.agree"}]]),
        json!([{"type": "\u{1b}[2J", "payload": {}}, {"type": "\u{202e}", "prev_hash": "sha256:"}]),
    ];
    for log in logs {
        let v = verify_bytes(
            &receipt,
            Some(log.to_string().as_bytes()),
            Trust {
                pins: &pins,
                allow_test: true,
            },
        )
        .unwrap();
        let chain = v.check(oanp::CheckId::Chain).unwrap();
        assert!(!chain.ok && !chain.skipped, "{log}: {chain:?}");
        assert!(!v.proof);
        assert!(!render_text(&v).chars().any(|c| c.is_control() && c != '\n'));
    }
}
