//! Hostile input never panics: arbitrary JSON through every entry point.

use concordia::approval_receipt::{datetime, receipt::verify_receipt};
use concordia::conformance::judge_value;
use concordia::transcript::{verify_since, verify_transcript, Head, Keys};
use concordia::{Message, Offer, Session};
use proptest::prelude::*;
use serde_json::{json, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-z:_./0-9 -]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("negotiate.offer"),
            Just("negotiate.open"),
            Just("sha256:00"),
            Just("2026-05-10T10:00:00Z"),
            Just("Ed25519"),
            Just("approves")
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type".to_owned()),
                    Just("body".to_owned()),
                    Just("terms".to_owned()),
                    Just("from".to_owned()),
                    Just("agent_id".to_owned()),
                    Just("signature".to_owned()),
                    Just("prev_hash".to_owned()),
                    Just("messages".to_owned()),
                    Just("input".to_owned()),
                    Just("context".to_owned()),
                    Just("conditions".to_owned()),
                    Just("bundles".to_owned()),
                    Just("value".to_owned()),
                    "[a-z_]{1,8}"
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn nothing_panics(v in json_value(), w in json_value()) {
        let _ = Message::from_value(&v);
        if let Some(obj) = v.as_object() {
            let _ = Offer::parse(obj);
        }
        let messages = vec![v.clone(), w.clone()];
        let _ = verify_transcript(&messages, &Keys::new());
        let _ = verify_since(&Head { count: 3, hash: "sha256:x".into() }, &messages, &Keys::new());
        let _ = Keys::from_json(&v);
        let typed: Vec<Message> = messages.iter().filter_map(|m| Message::from_value(m).ok()).collect();
        let _ = Session::replay(&typed);
        let now = datetime::parse("2026-05-10T10:00:00Z").unwrap();
        let _ = verify_receipt(&v, &w, None, now, std::slice::from_ref(&w));
        for profile in concordia::conformance::PROFILES {
            let vector = json!({
                "schema_version": "concordia-conformance-vector/v1-draft", "id": "x", "title": "x",
                "source_fixture": "x", "record_type": "approval_receipt", "verification_profile": profile,
                "input": if v.is_object() { v.clone() } else { json!({"messages": [v.clone()]}) },
                "context": if w.is_object() { w.clone() } else { json!({}) },
                "expected": "reject",
            });
            let _ = judge_value(&vector);
        }
    }
}
