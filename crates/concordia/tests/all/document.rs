//! Transcript documents verified from their bytes (`concordia::document`,
//! messages read in place): every verdict equals the one the previous path
//! gave (`previous` below: every message parsed, typed with the previous
//! `Message::from_value` (`previous_envelope`, kept as it was),
//! canonicalized with `to_string_marking`, each signature checked with
//! `verify_strict`, as `verify_run` did before), on a
//! long transcript damaged in every way one at a time, in several spellings,
//! whole and from pins, on one and two threads.

use std::num::NonZeroUsize;

use concordia::approval_receipt::{edges, keys};
use concordia::document::{verify_document_bytes, DocumentError, VerifyOptions};
use concordia::session::{Session, Step, TransitionError};
use concordia::testing::synthetic_transcript;
use concordia::transcript::{Check, Failure, Head, Keys, TranscriptReport};
use serde_json::{json, Value};

/// The previous path, whole: what `verify_and_replay` / `verify_since`
/// computed before messages were read in place.
fn previous(
    pin: &Head,
    messages: &[Value],
    keys: &Keys,
) -> (TranscriptReport, Option<Result<Session, TransitionError>>) {
    let mut failures = Vec::new();
    let mut hashes = Vec::new();
    let mut steps = Vec::new();
    let mut bad = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let index = pin.count + i as u64;
        let id = m.get("id").and_then(Value::as_str).map(str::to_owned);
        let mut fail = |check, detail: String| {
            failures.push(Failure {
                index,
                message_id: id.clone(),
                check,
                detail,
            })
        };
        steps.push(match super::previous_envelope::from_value(m) {
            Ok(typed) => Some(Step::from(&typed)),
            Err(e) => {
                fail(Check::Envelope, e.to_string());
                None
            }
        });
        let (hash, preimage) = match jcs::to_string_marking(m, &edges::RULES, "signature") {
            Ok((whole, span)) => {
                let pre = match span {
                    Some(r) => format!("{}{}", &whole[..r.start], &whole[r.end..]),
                    None => whole.clone(),
                };
                (Some(jcs::sha256_prefixed(whole.as_bytes())), Some(pre))
            }
            Err(e) => {
                fail(Check::Canonical, e.to_string());
                (None, None)
            }
        };
        hashes.push(hash);
        let key = match m.pointer("/from/agent_id").and_then(Value::as_str) {
            Some(s) => match keys.get(s) {
                Some(k) => Some(*k),
                None => {
                    fail(Check::Key, format!("no key is given for the sender {s:?}"));
                    None
                }
            },
            None => {
                fail(
                    Check::Key,
                    "the message names no sender (from.agent_id)".into(),
                );
                None
            }
        };
        let signature = match m.get("signature").and_then(Value::as_str) {
            Some(t) => match keys::parse_signature(t) {
                Ok(s) => Some(s),
                Err(e) => {
                    fail(Check::Signature, e.to_string());
                    None
                }
            },
            None => {
                fail(Check::Signature, "the message is not signed".into());
                None
            }
        };
        if let (Some(pre), Some(s), Some(k)) = (preimage, signature, key) {
            if !keys::verify_parsed(&k, pre.as_bytes(), &s) {
                bad.push(index);
            }
        }
    }
    let first_check = if pin.count == 0 {
        Check::Genesis
    } else {
        Check::Pin
    };
    let mut prev = pin.hash.clone();
    let session = messages
        .first()
        .and_then(|m| m.get("session_id"))
        .and_then(Value::as_str);
    for (i, m) in messages.iter().enumerate() {
        let index = pin.count + i as u64;
        let id = || m.get("id").and_then(Value::as_str).map(str::to_owned);
        let link = m.get("prev_hash").and_then(Value::as_str);
        if link != Some(prev.as_str()) {
            let check = if i == 0 { first_check } else { Check::Link };
            let expected = match check {
                Check::Genesis => "the genesis hash".to_owned(),
                Check::Pin => format!("the pinned head {} (message {})", prev, pin.count),
                _ => format!("the hash of message {} ({prev})", index - 1),
            };
            failures.push(Failure {
                index,
                message_id: id(),
                check,
                detail: format!(
                    "prev_hash is {}, not {expected}",
                    link.map_or("missing".to_owned(), |l| l.to_owned())
                ),
            });
        }
        if i > 0 && m.get("session_id").and_then(Value::as_str) != session {
            failures.push(Failure {
                index,
                message_id: id(),
                check: Check::Session,
                detail: format!(
                    "session_id differs from the transcript's ({})",
                    session.unwrap_or("none")
                ),
            });
        }
        if bad.contains(&index) {
            let sender = m
                .pointer("/from/agent_id")
                .and_then(Value::as_str)
                .unwrap_or("?");
            failures.push(Failure {
                index,
                message_id: id(),
                check: Check::Signature,
                detail: format!("the signature does not verify under the key of {sender:?}"),
            });
        }
        prev = hashes[i].clone().unwrap_or_default();
    }
    failures.sort_by_key(|f| f.index);
    let report = TranscriptReport {
        checked: messages.len() as u64,
        head: Head {
            count: pin.count + messages.len() as u64,
            hash: prev,
        },
        failures,
    };
    let replay = if pin.count == 0 && pin.hash == Head::genesis().hash {
        let steps: Option<Vec<Step>> = steps.into_iter().collect();
        steps.map(|s| Session::replay_steps(&s))
    } else {
        None
    };
    (report, replay)
}

/// A message's own canonical text, or its ordinary text when it has none.
fn jcs_text(m: &Value) -> String {
    edges::canonical(m).unwrap_or_else(|_| m.to_string())
}

/// The document in one spelling.
fn spelled(messages: &[Value], keys: &Value, spelling: &str) -> Vec<u8> {
    let doc = json!({"messages": messages, "keys": keys});
    match spelling {
        "serde" => serde_json::to_vec(&doc).unwrap(),
        "pretty" => serde_json::to_vec_pretty(&doc).unwrap(),
        // Every message in its canonical form, as agents sign and hosts store.
        "jcs" => {
            let texts: Vec<String> = messages.iter().map(jcs_text).collect();
            format!("{{\"keys\":{keys},\"messages\":[{}]}}", texts.join(",")).into_bytes()
        }
        // Canonical but for an escape the canonical form does not use.
        "escaped" => {
            let texts: Vec<String> = messages
                .iter()
                .map(|m| jcs_text(m).replacen("Moving", "\\u004doving", 1))
                .collect();
            format!("{{\"messages\":[{}],\"keys\":{keys}}}", texts.join(",")).into_bytes()
        }
        _ => unreachable!("{spelling}"),
    }
}

/// Every way a transcript can be damaged, one at a time.
fn tampered(base: &[Value]) -> Vec<(&'static str, Vec<Value>)> {
    let mut out = vec![("untouched", base.to_vec())];
    let mut case = |name: &'static str, f: &dyn Fn(&mut Vec<Value>)| {
        let mut t = base.to_vec();
        f(&mut t);
        out.push((name, t));
    };
    case("reasoning changed", &|t| {
        t[5]["reasoning"] = json!("changed")
    });
    case("price changed", &|t| {
        t[400]["body"]["terms"]["price"]["value"] = json!(1.5)
    });
    case("prev_hash changed", &|t| {
        t[9]["prev_hash"] = json!(format!("sha256:{}", "1".repeat(64)))
    });
    case("session changed", &|t| {
        t[300]["session_id"] = json!("ses_other")
    });
    case("unknown sender", &|t| {
        t[12]["from"]["agent_id"] = json!("mallory")
    });
    case("no sender", &|t| {
        t[13].as_object_mut().unwrap().remove("from");
    });
    case("signature swapped", &|t| {
        t[40]["signature"] = t[42]["signature"].clone()
    });
    case("signature not base64url", &|t| {
        t[44]["signature"] = json!("not+base64")
    });
    case("signature missing", &|t| {
        t[45].as_object_mut().unwrap().remove("signature");
    });
    case("unknown type", &|t| {
        t[46]["type"] = json!("negotiate.haggle")
    });
    case("bad timestamp", &|t| {
        t[47]["timestamp"] = json!("yesterday")
    });
    case("body missing", &|t| {
        t[48].as_object_mut().unwrap().remove("body");
    });
    case("offer terms not an object", &|t| {
        t[50]["body"]["terms"] = json!([1])
    });
    case("timing not a number", &|t| {
        t[0]["body"]["timing"]["max_rounds"] = json!("many")
    });
    case("negative zero", &|t| t[52]["body"]["extra"] = json!(-0.0));
    case("big integer", &|t| {
        t[53]["body"]["n"] = json!(9007199254740993u64)
    });
    case("a number instead of a message", &|t| t[54] = json!(5));
    case("message removed", &|t| {
        t.remove(20);
    });
    case("messages swapped", &|t| t.swap(30, 31));
    case("duplicate open", &|t| {
        t[3]["type"] = json!("negotiate.open")
    });
    case("many at once", &|t| {
        for i in (100..590).step_by(37) {
            t[i]["reasoning"] = json!(i);
        }
        t[580]["prev_hash"] = json!("sha256:x");
    });
    out
}

fn verdict(bytes: &[u8], options: &VerifyOptions) -> (TranscriptReport, String) {
    let v = verify_document_bytes(bytes, options).expect("the document reads");
    (v.report, format!("{:?}", v.replay))
}

#[test]
fn every_verdict_is_the_one_the_previous_path_gave() {
    let (base, keys, keys_json) = synthetic_transcript(600);
    let mut in_place = 0;
    for (name, messages) in tampered(&base) {
        let (report, replay) = previous(&Head::genesis(), &messages, &keys);
        assert_eq!(report.is_valid(), name == "untouched", "{name}");
        let expected = (report, format!("{replay:?}"));
        for spelling in ["serde", "pretty", "jcs", "escaped"] {
            let bytes = spelled(&messages, &keys_json, spelling);
            for threads in [None, NonZeroUsize::new(1), NonZeroUsize::new(2)] {
                let options = VerifyOptions { pin: None, threads };
                assert_eq!(
                    verdict(&bytes, &options),
                    expected,
                    "{name}, {spelling}, {threads:?}"
                );
            }
            in_place += usize::from(
                verify_document_bytes(&bytes, &VerifyOptions::default())
                    .unwrap()
                    .read_in_place,
            );
        }
    }
    assert!(
        in_place > 60,
        "most documents are read in place: {in_place}"
    );
}

#[test]
fn from_a_pin_the_verdict_is_the_previous_one_too() {
    let (base, keys, keys_json) = synthetic_transcript(600);
    let at = |n: usize| {
        let (r, _) = previous(&Head::genesis(), &base[..n], &keys);
        r.head
    };
    let pins = [
        at(300),
        at(599),
        at(600),
        Head {
            count: 300,
            hash: format!("sha256:{}", "a".repeat(64)),
        },
        Head::genesis(),
    ];
    for (name, messages) in tampered(&base) {
        for pin in &pins {
            if pin.count as usize > messages.len() {
                continue;
            }
            let (report, _) = previous(pin, &messages[pin.count as usize..], &keys);
            // From a pin there is no replay, as before.
            let expected = (report, "None".to_owned());
            for spelling in ["serde", "jcs"] {
                let bytes = spelled(&messages, &keys_json, spelling);
                let options = VerifyOptions {
                    pin: Some(pin.clone()),
                    threads: None,
                };
                assert_eq!(
                    verdict(&bytes, &options),
                    expected,
                    "{name}, {spelling}, {pin:?}"
                );
            }
        }
    }
}

#[test]
fn documents_that_do_not_read_are_refused_as_before() {
    let (base, _, keys_json) = synthetic_transcript(40);
    let text = String::from_utf8(spelled(&base, &keys_json, "jcs")).unwrap();
    // A lone surrogate in a message (after a pin too): not JSON, as the
    // whole-document reader says.
    let lone = text.replacen("Moving", "\\ud800oving", 1);
    for pin in [
        None,
        Some(Head {
            count: 30,
            hash: "sha256:x".into(),
        }),
    ] {
        let options = VerifyOptions { pin, threads: None };
        let err = verify_document_bytes(lone.as_bytes(), &options).unwrap_err();
        let whole = serde_json::from_slice::<Value>(lone.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), format!("not JSON: {whole}"));
    }
    // A pin beyond the end, a key that is no key, messages that are no array.
    let options = VerifyOptions {
        pin: Some(Head {
            count: 41,
            hash: "sha256:x".into(),
        }),
        threads: None,
    };
    assert!(matches!(
        verify_document_bytes(text.as_bytes(), &options),
        Err(DocumentError::Truncated {
            messages: 40,
            pinned: 41
        })
    ));
    let bad_key = text.replacen("\"buyer\":\"", "\"buyer\":\"!", 1);
    assert!(matches!(
        verify_document_bytes(bad_key.as_bytes(), &VerifyOptions::default()),
        Err(DocumentError::Keys(_))
    ));
    let doc = br#"{"messages": {}, "keys": {}}"#;
    assert!(matches!(
        verify_document_bytes(doc, &VerifyOptions::default()),
        Err(DocumentError::Messages)
    ));
    // A member named twice is read the ordinary way (the last wins), with
    // the same verdict.
    let twice = format!("{{\"messages\":[],{}", &text[1..]);
    let v = verify_document_bytes(twice.as_bytes(), &VerifyOptions::default()).unwrap();
    assert!(!v.read_in_place);
    assert!(v.report.is_valid());
    assert_eq!(v.messages, 40);
}

/// A message of every type, each body member the rules read present.
fn every_type(p: &super::fixtures::Parties) -> Vec<Value> {
    let steps: Vec<(&str, &str, Value, &str)> = vec![
        (
            "negotiate.open",
            "seller",
            json!({"terms": {"price": {"value": 100, "currency": "USD"}}, "timing": {"session_ttl": 86400, "offer_ttl": 3600, "max_rounds": 9}}),
            "2026-05-10T10:00:00Z",
        ),
        (
            "negotiate.accept_session",
            "buyer",
            json!({}),
            "2026-05-10T10:01:00Z",
        ),
        (
            "negotiate.inquire",
            "buyer",
            json!({"term_ids": ["price"]}),
            "2026-05-10T10:02:00Z",
        ),
        (
            "negotiate.constrain",
            "seller",
            json!({"constraints": {"price": {"min": 1}}}),
            "2026-05-10T10:03:00Z",
        ),
        (
            "negotiate.signal",
            "buyer",
            json!({"flexibility": {"price": "low"}}),
            "2026-05-10T10:04:00Z",
        ),
        (
            "negotiate.offer",
            "seller",
            json!({"offer_id": "o1", "terms": {"price": {"value": 90, "currency": "USD"}}, "open_terms": ["delivery"], "valid_until": "2026-05-11T00:00:00Z", "complete": false}),
            "2026-05-10T10:05:00Z",
        ),
        (
            "negotiate.counter",
            "buyer",
            json!({"offer_id": "o2", "bundles": [{"bundle_id": "b1", "label": "x", "terms": {"price": {"value": 80, "currency": "USD"}}}], "select": "one_of"}),
            "2026-05-10T10:06:00Z",
        ),
        (
            "negotiate.counter",
            "seller",
            json!({"offer_id": "o3", "conditions": [{"if": {"term_months": 24}, "then": {"price": {"value": 85, "currency": "USD"}}}]}),
            "2026-05-10T10:07:00Z",
        ),
        (
            "negotiate.reject",
            "buyer",
            json!({"reason": "no"}),
            "2026-05-10T10:08:00Z",
        ),
        (
            "negotiate.propose_mediator",
            "buyer",
            json!({"mediator_id": "m"}),
            "2026-05-10T10:09:00Z",
        ),
        (
            "negotiate.resolve",
            "seller",
            json!({"terms": {"price": {"value": 84}}, "mechanism": "split"}),
            "2026-05-10T10:10:00Z",
        ),
        (
            "negotiate.offer",
            "buyer",
            json!({"offer_id": "o4", "terms": {"price": {"value": 84, "currency": "USD"}}}),
            "2026-05-10T10:11:00Z",
        ),
        (
            "negotiate.accept",
            "seller",
            json!({"offer_id": "o4", "accepted_terms": {"price": {"value": 84}}}),
            "2026-05-10T10:12:00Z",
        ),
        (
            "negotiate.withdraw",
            "buyer",
            json!({"reason": "later", "reactivatable": true}),
            "2026-05-10T10:13:00Z",
        ),
        (
            "negotiate.decline_session",
            "seller",
            json!({"reason": "no"}),
            "2026-05-10T10:14:00Z",
        ),
        (
            "negotiate.commit",
            "seller",
            json!({}),
            "2026-05-10T10:15:00Z",
        ),
    ];
    // With every optional envelope member too, re-signed and re-linked.
    let mut prev = concordia::GENESIS_HASH.to_owned();
    super::fixtures::transcript(p, &steps)
        .into_iter()
        .map(|mut m| {
            m["ttl"] = json!(60);
            m["thread"] = json!("t");
            m["in_reply_to"] = json!("msg_0");
            m["reasoning"] = json!("r");
            m["from"]["principal_id"] = json!("org");
            m["prev_hash"] = json!(prev);
            let who = m["from"]["agent_id"].as_str().unwrap().to_owned();
            let m = super::fixtures::sign(m, p.key_of(&who));
            prev = edges::hash(&m).unwrap();
            m
        })
        .collect()
}

/// Every member path of `value` (objects only), as JSON pointers.
fn paths(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{k}");
                out.push(p.clone());
                paths(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                paths(v, p, out);
            }
        }
        _ => {}
    }
}

#[test]
fn any_member_of_any_type_of_message_replaced_by_any_kind_of_value_is_judged_as_before() {
    let p = super::fixtures::Parties::new();
    let base = every_type(&p);
    let keys = p.keys();
    let (untouched, _) = previous(&Head::genesis(), &base, &keys);
    assert!(untouched.is_valid(), "{:?}", untouched.failures);
    let keys_json = json!({
        "buyer": keys::public_key_text(&p.buyer.verifying_key()),
        "seller": keys::public_key_text(&p.seller.verifying_key()),
    });
    let kinds = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(""),
        json!("x"),
        json!([]),
        json!(["x"]),
        json!([1]),
        json!({}),
        json!({"agent_id": "buyer"}),
    ];
    let mut cases = 0;
    for i in 0..base.len() {
        let mut members = Vec::new();
        paths(&base[i], String::new(), &mut members);
        for path in members {
            for kind in &kinds {
                let mut t = base.clone();
                if let Some(slot) = t[i].pointer_mut(&path) {
                    *slot = kind.clone();
                }
                let (report, replay) = previous(&Head::genesis(), &t, &keys);
                let expected = (report, format!("{replay:?}"));
                for spelling in ["jcs", "serde"] {
                    let bytes = spelled(&t, &keys_json, spelling);
                    assert_eq!(
                        verdict(&bytes, &VerifyOptions::default()),
                        expected,
                        "message {i}, {path} = {kind}, {spelling}"
                    );
                }
                cases += 1;
            }
        }
    }
    assert!(cases > 2_000, "{cases}");
}
