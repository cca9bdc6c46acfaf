//! "No input may panic", checked in CI: the two fuzz entry points
//! (`crates/anp/fuzz/entry.rs`, shared verbatim with the cargo-fuzz targets)
//! fed a few thousand generated and mutated inputs. Seeds are the published
//! example log, the vector logs and their payloads, so mutations reach deep
//! past the JSON parser into verification and the payload rules.

use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::Value;

mod entry {
    include!("../../fuzz/entry.rs");
}

fn vendored_anp() -> PathBuf {
    // The published ANP/0.1 data, vendored unchanged (vendor/anp/PROVENANCE.md).
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vendor/anp")
}

/// The seed logs: the example and every chain-verification vector.
fn seed_logs() -> Vec<Value> {
    let text = std::fs::read_to_string(vendored_anp().join("test-vectors.json")).unwrap();
    let vectors: Value = serde_json::from_str(&text).unwrap();
    let mut logs: Vec<Value> = vectors["chain_verification"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["log"].clone())
        .collect();
    let example = vendored_anp().join("examples/session-log.example.json");
    logs.push(serde_json::from_str(&std::fs::read_to_string(example).unwrap()).unwrap());
    logs
}

/// Seed payloads as `kind byte + JSON bytes`, one per event of the seed logs.
fn seed_payloads() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for log in seed_logs() {
        for event in log["events"].as_array().unwrap() {
            let kind = anp::EventKind::parse(event["kind"].as_str().unwrap()).unwrap();
            let byte = anp::EventKind::ALL.iter().position(|k| *k == kind).unwrap() as u8;
            let mut bytes = vec![byte];
            bytes.extend(serde_json::to_vec(&event["payload"]).unwrap());
            seeds.push(bytes);
        }
    }
    seeds
}

/// Any JSON value, with the strings and numbers that stress limits.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop_oneof![
            Just(1e21),
            Just(-0.0),
            Just(1e-7),
            Just(1e9 + 0.5),
            Just(1e7),
            Just(9007199254740993.0)
        ]
        .prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
        prop_oneof![
            Just("USD"),
            Just("2026-08-01T00:00:00Z"),
            Just("9999-12-31T23:59:60Z"),
            Just("0000000000000000000000000000000000000000000000000000000000000000"),
            Just("human"),
            Just("bind_with_human_approval"),
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,14}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replaces the node at a pseudo-random position (chosen by `path`) with
/// `replacement`: a structural mutation that keeps the rest of the document.
fn replace_somewhere(doc: &mut Value, path: &[usize], replacement: Value) {
    let Some((step, rest)) = path.split_first() else {
        *doc = replacement;
        return;
    };
    match doc {
        Value::Array(items) if !items.is_empty() => {
            let i = step % items.len();
            replace_somewhere(&mut items[i], rest, replacement);
        }
        Value::Object(map) if !map.is_empty() => {
            let i = step % map.len();
            if let Some((_, child)) = map.iter_mut().nth(i) {
                replace_somewhere(child, rest, replacement);
            }
        }
        _ => *doc = replacement,
    }
}

/// A byte-level mutation of `seed`, like a fuzzer's.
#[derive(Debug, Clone)]
enum ByteEdit {
    Flip(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Truncate(usize),
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    let token = prop_oneof![
        Just(b"{".to_vec()),
        Just(b"}".to_vec()),
        Just(b"[".to_vec()),
        Just(b"\"".to_vec()),
        Just(b",".to_vec()),
        Just(b"null".to_vec()),
        Just(b"-0".to_vec()),
        Just(b"1e400".to_vec()),
        Just(b"\\ud800".to_vec()),
        Just(b"18446744073709551615".to_vec()),
        prop::collection::vec(any::<u8>(), 1..6),
    ];
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| ByteEdit::Flip(i, b)),
        (any::<usize>(), 1usize..40).prop_map(|(i, n)| ByteEdit::Delete(i, n)),
        (any::<usize>(), token).prop_map(|(i, t)| ByteEdit::Insert(i, t)),
        any::<usize>().prop_map(ByteEdit::Truncate),
    ]
}

fn apply(seed: &[u8], edits: &[ByteEdit]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for edit in edits {
        let len = bytes.len().max(1);
        match edit {
            ByteEdit::Flip(i, b) => {
                if !bytes.is_empty() {
                    bytes[i % len] ^= b;
                }
            }
            ByteEdit::Delete(i, n) => {
                let start = i % len;
                let end = (start + n).min(bytes.len());
                if start < end {
                    bytes.drain(start..end);
                }
            }
            ByteEdit::Insert(i, token) => {
                let at = i % (bytes.len() + 1);
                bytes.splice(at..at, token.iter().copied());
            }
            ByteEdit::Truncate(i) => bytes.truncate(i % len),
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_payloads_never_panic(kind in any::<u8>(), value in any_json()) {
        let mut bytes = vec![kind];
        bytes.extend(serde_json::to_vec(&value).unwrap());
        let _ = entry::parse_payload(&bytes);
    }

    #[test]
    fn structurally_mutated_payloads_never_panic(
        seed in any::<prop::sample::Index>(),
        path in prop::collection::vec(any::<usize>(), 0..5),
        replacement in any_json(),
    ) {
        let seeds = seed_payloads();
        let bytes = &seeds[seed.index(seeds.len())];
        let mut value: Value = serde_json::from_slice(&bytes[1..]).unwrap();
        replace_somewhere(&mut value, &path, replacement);
        let mut mutated = vec![bytes[0]];
        mutated.extend(serde_json::to_vec(&value).unwrap());
        let _ = entry::parse_payload(&mutated);
    }

    #[test]
    fn byte_mutated_payloads_never_panic(
        seed in any::<prop::sample::Index>(),
        edits in prop::collection::vec(byte_edit(), 1..6),
    ) {
        let seeds = seed_payloads();
        let _ = entry::parse_payload(&apply(&seeds[seed.index(seeds.len())], &edits));
    }

    #[test]
    fn structurally_mutated_logs_never_panic(
        seed in any::<prop::sample::Index>(),
        path in prop::collection::vec(any::<usize>(), 0..7),
        replacement in any_json(),
    ) {
        let logs = seed_logs();
        let mut log = logs[seed.index(logs.len())].clone();
        replace_somewhere(&mut log, &path, replacement);
        let _ = entry::verify_log(&serde_json::to_vec(&log).unwrap());
    }

    #[test]
    fn byte_mutated_logs_never_panic(
        seed in any::<prop::sample::Index>(),
        edits in prop::collection::vec(byte_edit(), 1..6),
    ) {
        let logs = seed_logs();
        let bytes = serde_json::to_vec(&logs[seed.index(logs.len())]).unwrap();
        let _ = entry::verify_log(&apply(&bytes, &edits));
    }
}

/// The seeds themselves go all the way through: the entry points are not
/// trivially refusing everything, so the mutations above test real paths.
#[test]
fn seeds_reach_verification_and_parse() {
    for log in seed_logs() {
        let report = entry::verify_log(&serde_json::to_vec(&log).unwrap());
        assert!(report.is_some(), "seed log parses");
    }
    let parsed = seed_payloads()
        .iter()
        .filter(|bytes| entry::parse_payload(bytes).is_some())
        .count();
    assert!(parsed >= 4, "most seed payloads parse, got {parsed}");
}

/// Hostile numbers in a pin: a claimed head at u64::MAX must not overflow.
#[test]
fn a_claimed_head_at_the_largest_seq_does_not_panic() {
    let mut log = seed_logs().remove(0);
    log["session"]["event_count"] = Value::from(u64::MAX);
    assert!(entry::verify_log(&serde_json::to_vec(&log).unwrap()).is_some());
}
