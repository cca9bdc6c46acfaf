//! The whole-document fast path (`anp::verify_document_bytes`) against the
//! path it replaced in `anp verify`: read the document into `LogDocument`,
//! then verify it with the implementation `chain.rs` had before (kept here
//! verbatim as the oracle: one thread, payloads canonicalized from
//! `serde_json::Value`, `ed25519_dalek::verify_batch` in chunks of 64 with a
//! strict recheck). On every tampered log the reports must be equal, for
//! every thread count, and a document one refuses the other refuses too.

use anp::canonical::canonical_hash;
use anp::chain::{Check, Failure, Rewrite};
use anp::keys::{self, SigningKey};
use anp::{
    signed, verify_document_bytes, verify_document_bytes_with, Actor, ChainHead, Event, EventDraft,
    EventKind, KeyRing, LogDocument, VerifyOptions, VerifyReport,
};
use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::{json, Value};
use std::num::NonZeroUsize;

const SESSION: &str = "5f1c6f2e-9d1a-4c8b-b7e3-2a61c0de9a44";

// ---- the previous implementation, as it was -------------------------------

fn reference_from_pin(
    session_id: &str,
    pin: &ChainHead,
    events: &[Event],
    keys: &KeyRing,
) -> VerifyReport {
    if pin.seq == 0 {
        return reference_extension(session_id, pin, events, keys);
    }
    let index = usize::try_from(pin.seq - 1).unwrap_or(usize::MAX);
    match events.get(index) {
        Some(at_pin) if at_pin.seq == pin.seq && at_pin.event_hash == pin.event_hash => {
            reference_extension(session_id, pin, &events[index + 1..], keys)
        }
        found => VerifyReport {
            ok: false,
            failing: Vec::new(),
            unproven: Vec::new(),
            rewrite: Some(Rewrite {
                pinned: pin.clone(),
                found: found.map(|e| e.event_hash.clone()),
                detail: match found {
                    Some(e) => format!(
                        "the log holds event_hash {} at position {}, but seq {} was pinned as {}",
                        e.event_hash, pin.seq, pin.seq, pin.event_hash
                    ),
                    None => format!(
                        "the log has {} events, fewer than the pinned seq {}",
                        events.len(),
                        pin.seq
                    ),
                },
            }),
            head: pin.clone(),
            events_checked: 0,
        },
    }
}

fn reference_extension(
    session_id: &str,
    pin: &ChainHead,
    new_events: &[Event],
    keys: &KeyRing,
) -> VerifyReport {
    let mut failing = Vec::new();
    let mut unproven = Vec::new();
    let mut prev = pin.event_hash.as_str();
    let mut batch: Vec<(usize, &VerifyingKey, Signature)> = Vec::new();
    let mut messages: Vec<String> = Vec::new();
    let mut per_event: Vec<(Vec<Check>, Vec<String>)> = Vec::new();
    for (index, event) in new_events.iter().enumerate() {
        let mut checks = Vec::new();
        let mut details = Vec::new();
        let expected_seq = u64::try_from(index)
            .ok()
            .and_then(|i| pin.seq.checked_add(i))
            .and_then(|seq| seq.checked_add(1));
        if Some(event.seq) != expected_seq {
            checks.push(Check::Seq);
            details.push(match expected_seq {
                Some(expected) => format!("seq is {}, expected {expected}", event.seq),
                None => format!("seq is {}, but no seq can follow {}", event.seq, pin.seq),
            });
        }
        let recomputed_payload = canonical_hash(&event.payload);
        if recomputed_payload != event.payload_hash {
            checks.push(Check::PayloadHash);
            details.push(format!(
                "payload re-hashes to {recomputed_payload}, not the declared {}",
                event.payload_hash
            ));
        }
        if event.prev_hash != prev {
            checks.push(Check::PrevHash);
            details.push(format!("prev_hash is {}, expected {prev}", event.prev_hash));
        }
        let recomputed_event = signed::event_hash(
            session_id,
            event.seq,
            event.actor.as_str(),
            event.kind.as_str(),
            &event.payload_hash,
            &event.prev_hash,
            &event.at,
        );
        if recomputed_event != event.event_hash {
            checks.push(Check::EventHash);
            details.push(format!(
                "event_hash recomputes to {recomputed_event}, not the declared {}",
                event.event_hash
            ));
        }
        match (&event.signature, &event.signer) {
            (None, _) => unproven.push(event.seq),
            (Some(_), None) => {
                checks.push(Check::Signature);
                details.push("a signature without a signer cannot be attributed".to_owned());
            }
            (Some(sig), Some(signer)) => match (keys.get(signer), keys::parse_signature(sig)) {
                (None, _) => {
                    checks.push(Check::Signature);
                    details.push(format!("no known key has fingerprint {signer}"));
                }
                (_, Err(e)) => {
                    checks.push(Check::Signature);
                    details.push(e.to_string());
                }
                (Some(key), Ok(signature)) => {
                    messages.push(signed::authorship_string(
                        event.kind.as_str(),
                        &event.payload_hash,
                    ));
                    batch.push((index, key, signature));
                }
            },
        }
        per_event.push((checks, details));
        prev = &event.event_hash;
    }
    for (chunk, chunk_messages) in batch.chunks(64).zip(messages.chunks(64)) {
        let weak = chunk.iter().any(|(_, key, _)| key.is_weak());
        let msgs: Vec<&[u8]> = chunk_messages.iter().map(|m| m.as_bytes()).collect();
        let sigs: Vec<Signature> = chunk.iter().map(|(_, _, s)| *s).collect();
        let vks: Vec<VerifyingKey> = chunk.iter().map(|(_, k, _)| **k).collect();
        if !weak && ed25519_dalek::verify_batch(&msgs, &sigs, &vks).is_ok() {
            continue;
        }
        for ((index, key, signature), message) in chunk.iter().zip(chunk_messages) {
            if key.is_weak() || key.verify_strict(message.as_bytes(), signature).is_err() {
                let (checks, details) = &mut per_event[*index];
                checks.push(Check::Signature);
                details.push(
                    "authorship signature does not verify against the signer's key".to_owned(),
                );
            }
        }
    }
    for (event, (mut checks, details)) in new_events.iter().zip(per_event) {
        if !checks.is_empty() {
            checks.sort();
            failing.push(Failure {
                seq: event.seq,
                checks,
                details,
            });
        }
    }
    let rewrite = match new_events.first() {
        Some(first) if pin.seq > 0 && first.prev_hash != pin.event_hash => Some(Rewrite {
            pinned: pin.clone(),
            found: Some(first.prev_hash.clone()),
            detail: format!(
                "event {} links to {}, but the pinned head is {}",
                first.seq, first.prev_hash, pin
            ),
        }),
        _ => None,
    };
    let head = new_events
        .last()
        .map(|e| ChainHead {
            seq: e.seq,
            event_hash: e.event_hash.clone(),
        })
        .unwrap_or_else(|| pin.clone());
    VerifyReport {
        ok: failing.is_empty() && rewrite.is_none(),
        failing,
        unproven,
        rewrite,
        head,
        events_checked: new_events.len() as u64,
    }
}

/// What `anp verify` did before: read, check the protocol, take the keys,
/// verify. `Err` when it refused the document (exit 2).
fn previous(bytes: &[u8], pin: &ChainHead) -> Result<(String, VerifyReport), String> {
    let doc: LogDocument = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if !doc.is_anp_0_1() {
        return Err(format!("protocol {}", doc.protocol));
    }
    let ring = KeyRing::from_log_keys(&doc).map_err(|e| e.to_string())?;
    let report = reference_from_pin(&doc.session.id, pin, &doc.events, &ring);
    Ok((doc.session.chain_head, report))
}

// ---- logs to tamper with -------------------------------------------------

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A signed log document of `len` events (offers with line items and
/// messages, vendor and buyer alternating), as JSON.
fn signed_document(len: usize) -> Value {
    let (vendor, buyer) = (key(1), key(2));
    let mut head = ChainHead::genesis();
    let mut events = Vec::new();
    for n in 0..len {
        let (kind, payload) = if n % 5 == 0 {
            (
                EventKind::Offer,
                json!({"currency": "USD", "term_months": 12 + n % 24, "expires_at": "2027-01-01T00:00:00Z",
                       "line_items": [{"sku": format!("S-{n}"), "description": "Seats, annual",
                                       "quantity": 10 + n, "unit": "seat/year",
                                       "unit_price": 1140.5 + n as f64 / 8.0, "currency": "USD"}],
                       "notes": "Includes \"premier\" support\nand onboarding: ü, 😀."}),
            )
        } else {
            (
                EventKind::Message,
                json!({"subject": format!("round {n}"), "body": "x".repeat(n % 50 + 1)}),
            )
        };
        let (actor, signer) = if n % 2 == 0 {
            (Actor::VendorAgent, &vendor)
        } else {
            (Actor::Buyer, &buyer)
        };
        let event = EventDraft {
            session_id: SESSION,
            prev: &head,
            actor,
            kind,
            payload,
            at: format!("2026-07-11T09:{:02}:{:02}.000Z", (n / 60) % 60, n % 60),
        }
        .seal_signed(signer);
        head = ChainHead {
            seq: event.seq,
            event_hash: event.event_hash.clone(),
        };
        events.push(event);
    }
    let published = |k: &SigningKey| {
        json!({"public_key": keys::public_key_b64(&k.verifying_key()),
               "fingerprint": keys::fingerprint(&k.verifying_key())})
    };
    json!({
        "protocol": "ANP/0.1",
        "session": {"id": SESSION, "sandbox": true, "status": "open", "opened_at": events[0].at,
                    "closed_at": null, "event_count": events.len(), "chain_head": head.event_hash},
        "chain": {"verified": true, "head": head.event_hash},
        "keys": {"vendor_agent": published(&vendor), "buyer": published(&buyer)},
        "events": events,
    })
}

/// Every way a log can be damaged, one at a time.
fn tampered(base: &Value) -> Vec<(&'static str, Value)> {
    let mut out = vec![("untouched", base.clone())];
    let mut case = |name: &'static str, f: &dyn Fn(&mut Value)| {
        let mut doc = base.clone();
        f(&mut doc);
        out.push((name, doc));
    };
    case("payload changed", &|d| {
        d["events"][7]["payload"]["body"] = json!("changed")
    });
    case("payload member added", &|d| {
        d["events"][600]["payload"]["extra"] = json!(1)
    });
    case("payload hash changed", &|d| {
        d["events"][3]["payload_hash"] = json!("00".repeat(32))
    });
    case("payload hash uppercase", &|d| {
        let upper = d["events"][3]["payload_hash"]
            .as_str()
            .unwrap()
            .to_uppercase();
        d["events"][3]["payload_hash"] = json!(upper);
    });
    case("prev hash changed", &|d| {
        d["events"][9]["prev_hash"] = json!("11".repeat(32))
    });
    case("event hash changed", &|d| {
        d["events"][599]["event_hash"] = json!("22".repeat(32))
    });
    case("seq renumbered", &|d| d["events"][5]["seq"] = json!(500));
    case("at changed", &|d| {
        d["events"][11]["at"] = json!("2020-01-01T00:00:00Z")
    });
    case("actor changed", &|d| {
        d["events"][12]["actor"] = json!("buyer")
    });
    case("event removed", &|d| {
        d["events"].as_array_mut().unwrap().remove(20);
    });
    case("events swapped", &|d| {
        d["events"].as_array_mut().unwrap().swap(30, 31)
    });
    case("signature of another event", &|d| {
        d["events"][40]["signature"] = d["events"][42]["signature"].clone()
    });
    case("signature bit flipped", &|d| {
        let sig = d["events"][550]["signature"].as_str().unwrap();
        let mut bytes = keys::parse_signature(sig).unwrap().to_bytes();
        bytes[10] ^= 4;
        d["events"][550]["signature"] = json!(keys::b64url(&bytes));
    });
    case("signature not base64url", &|d| {
        d["events"][44]["signature"] = json!("not+base64")
    });
    case("signature too short", &|d| {
        d["events"][45]["signature"] = json!("AAAA")
    });
    case("signer unknown", &|d| {
        d["events"][46]["signer"] = json!("33".repeat(32))
    });
    case("signer swapped", &|d| {
        d["events"][47]["signer"] = d["events"][48]["signer"].clone()
    });
    case("signature without signer", &|d| {
        d["events"][49]["signer"] = json!(null)
    });
    case("unsigned", &|d| d["events"][50]["signature"] = json!(null));
    case("unsigned, no signer member", &|d| {
        let event = d["events"][51].as_object_mut().unwrap();
        event.remove("signature");
        event.remove("signer");
    });
    case("many damaged at once", &|d| {
        for i in (100..700).step_by(37) {
            d["events"][i]["payload"]["tampered"] = json!(i);
        }
        d["events"][650]["seq"] = json!(1);
    });
    case("buyer key replaced", &|d| {
        let other = key(9).verifying_key();
        d["keys"]["buyer"] = json!({"public_key": keys::public_key_b64(&other),
                                   "fingerprint": keys::fingerprint(&other)});
    });
    case("chain head claim wrong", &|d| {
        d["session"]["chain_head"] = json!("44".repeat(32))
    });
    case("no events", &|d| d["events"] = json!([]));
    case("escaped string field", &|d| {
        // Valid JSON the fast reader does not borrow: read the ordinary way.
        let at = d["events"][60]["at"]
            .as_str()
            .unwrap()
            .replace('T', "\\u0054");
        d["events"][60]["at"] = json!(at);
    });
    out
}

fn bytes_of(doc: &Value) -> Vec<u8> {
    serde_json::to_vec(doc).unwrap()
}

fn fast(bytes: &[u8], pin: &ChainHead, threads: usize) -> Result<(String, VerifyReport), String> {
    let options = VerifyOptions {
        pin: (pin.seq > 0 || pin.event_hash != signed::GENESIS_HASH).then(|| pin.clone()),
        threads: NonZeroUsize::new(threads),
    };
    verify_document_bytes_with(bytes, &options)
        .map(|v| (v.claimed_head, v.report))
        .map_err(|e| e.to_string())
}

fn assert_same(name: &str, bytes: &[u8], pin: &ChainHead) {
    let before = previous(bytes, pin);
    // Only a string field written with escapes sends a document the
    // ordinary way; everything else here is read in place.
    if let Ok(verdict) = verify_document_bytes(bytes) {
        assert_eq!(
            verdict.read_in_place,
            name != "escaped string field",
            "{name}"
        );
    }
    for threads in [1, 2, 3] {
        let now = fast(bytes, pin, threads);
        match (&before, &now) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}, pin {pin}, {threads} threads"),
            (Err(_), Err(_)) => {}
            _ => panic!("{name}, pin {pin}, {threads} threads: before {before:?}, now {now:?}"),
        }
    }
}

#[test]
fn every_tampered_log_gets_the_report_the_previous_path_gave() {
    let base = signed_document(700);
    let events = base["events"].as_array().unwrap();
    let pins = [
        ChainHead::genesis(),
        ChainHead {
            seq: 300,
            event_hash: events[299]["event_hash"].as_str().unwrap().to_owned(),
        },
        ChainHead {
            seq: 300,
            event_hash: "55".repeat(32),
        },
        ChainHead {
            seq: 10_000,
            event_hash: "66".repeat(32),
        },
    ];
    let mut failing_cases = 0;
    for (name, doc) in tampered(&base) {
        let bytes = bytes_of(&doc);
        for pin in &pins {
            assert_same(name, &bytes, pin);
        }
        if !previous(&bytes, &pins[0]).unwrap().1.ok {
            failing_cases += 1;
        }
    }
    assert!(failing_cases >= 20, "the cases do damage: {failing_cases}");
    // The untouched log verifies.
    let (_, report) = fast(&bytes_of(&base), &pins[0], 2).unwrap();
    assert!(report.ok && report.events_checked == 700, "{report:?}");
}

#[test]
fn documents_in_other_spellings_get_the_same_report() {
    // Pretty-printed, with payload members in another order, and with
    // numbers as another writer prints them: payloads are not canonical
    // text, so they are parsed and canonicalized. The verdict stays.
    let base = signed_document(520);
    let pretty = serde_json::to_vec_pretty(&base).unwrap();
    // Canonical text (sorted members), whatever member order serde_json's
    // features give a serialized Value in this build.
    let compact = jcs::to_string(&base);
    let reordered = compact
        .replace(r#"{"currency":"USD","description""#, r#"{"description""#)
        .replace(r#""quantity":"#, r#""currency":"USD","quantity":"#);
    assert!(reordered != compact, "the members were reordered");
    let respelled = compact.replace(r#""term_months":12}"#, r#""term_months":1.2e1}"#);
    assert!(respelled != compact, "the number was respelled");
    for (name, bytes) in [
        ("pretty", pretty),
        ("reordered", reordered.into_bytes()),
        ("respelled", respelled.into_bytes()),
    ] {
        assert_same(name, &bytes, &ChainHead::genesis());
        let (_, report) = fast(&bytes, &ChainHead::genesis(), 2).unwrap();
        assert!(report.ok, "{name}: {report:?}");
    }
    // The vendored example log, as published.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../vendor/anp/examples/session-log.example.json");
    let example = std::fs::read(path).unwrap();
    assert_same("example", &example, &ChainHead::genesis());
    assert!(verify_document_bytes(&example).unwrap().report.ok);
}

#[test]
fn documents_the_previous_path_refused_are_refused() {
    let base = signed_document(3);
    let compact = String::from_utf8(bytes_of(&base)).unwrap();
    let edit = |from: &str, to: &str| {
        let edited = compact.replacen(from, to, 1);
        assert!(edited != compact, "{from} is in the document");
        edited
    };
    let lone_surrogate = edit(r#""body":"xx""#, r#""body":"\ud800""#);
    let out_of_range = edit(r#""quantity":10"#, r#""quantity":1e400"#);
    let deep = edit(
        r#""body":"xx""#,
        &format!(r#""body":{}{}"#, "[".repeat(200), "]".repeat(200)),
    );
    let unknown_member = edit(r#""seq":1,"#, r#""seq":1,"extra":true,"#);
    let cases = [
        ("not JSON", b"{".to_vec()),
        ("lone surrogate in a payload", lone_surrogate.into_bytes()),
        (
            "number out of range in a payload",
            out_of_range.into_bytes(),
        ),
        ("nesting beyond the limit", deep.into_bytes()),
        ("unknown event member", unknown_member.into_bytes()),
        ("another protocol", edit("ANP/0.1", "ANP/0.2").into_bytes()),
        ("bad key", {
            let mut doc = base.clone();
            doc["keys"]["buyer"]["public_key"] = json!("short");
            bytes_of(&doc)
        }),
    ];
    for (name, bytes) in cases {
        assert!(previous(&bytes, &ChainHead::genesis()).is_err(), "{name}");
        assert!(verify_document_bytes(&bytes).is_err(), "{name}");
    }
    // The reader's own sentence, with line and column, as before.
    let err = verify_document_bytes(b"{\"protocol\": 7}").unwrap_err();
    let before = serde_json::from_slice::<LogDocument>(b"{\"protocol\": 7}").unwrap_err();
    assert_eq!(err.to_string(), before.to_string());
}
