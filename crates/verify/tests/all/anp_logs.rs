//! ANP logs through `anp::verify_document_bytes` (the path `anp verify`
//! runs): every report equals the one the previous path (`anp::verify_document`
//! on a parsed `LogDocument`, kept here as the oracle) gave, on a signed log
//! damaged in every way one at a time, and through the binary.

use anp::keys::{self, SigningKey};
use anp::{Actor, ChainHead, EventDraft, EventKind};
use countersign_verify::report::{Finding, Outcome};
use serde_json::{json, Value};

use super::cli::{run, stdout};

const SESSION: &str = "ses_verify_anp";

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A signed log of `len` events (offers and messages, vendor and buyer
/// alternating), as JSON.
fn signed_log(len: usize) -> Value {
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
                                       "unit_price": 1140.5 + n as f64 / 8.0, "currency": "USD"}]}),
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

/// The report the previous path gave: the parsed document through
/// `anp::verify_document` (this module's code before the switch).
fn previous(file: &str, value: &Value) -> Outcome {
    let doc = match <anp::LogDocument as serde::Deserialize>::deserialize(value) {
        Ok(d) => d,
        Err(e) => return Outcome::unreadable(file, format!("not an ANP/0.1 log document: {e}")),
    };
    if !doc.is_anp_0_1() {
        return Outcome::unreadable(
            file,
            format!(
                "protocol is {:?}; this tool verifies ANP/0.1 logs",
                doc.protocol
            ),
        );
    }
    let report = match anp::verify_document(&doc) {
        Ok(r) => r,
        Err(e) => return Outcome::unreadable(file, format!("keys: {e}")),
    };
    let mut failures: Vec<Finding> = report
        .failing
        .iter()
        .flat_map(|f| {
            f.checks.iter().enumerate().map(move |(i, c)| Finding {
                at: format!("seq {}", f.seq),
                check: c.as_str().to_owned(),
                detail: f.details.get(i).cloned().unwrap_or_default(),
            })
        })
        .collect();
    let note = if !doc.events.is_empty()
        && doc.session.chain_head != report.head.event_hash
        && report.rewrite.is_none()
    {
        format!(
            "; note: session.chain_head claims {}, but the events end at {}",
            doc.session.chain_head, report.head
        )
    } else {
        String::new()
    };
    if !report.ok && failures.is_empty() {
        failures.push(Finding {
            at: String::new(),
            check: "chain".into(),
            detail: "the log does not verify".into(),
        });
    }
    Outcome::judged(
        file,
        "ANP/0.1 log",
        format!(
            "session {}: {} events checked, head {}{note}",
            doc.session.id, report.events_checked, report.head
        ),
        failures,
    )
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
    case("prev hash changed", &|d| {
        d["events"][9]["prev_hash"] = json!("11".repeat(32))
    });
    case("event hash changed", &|d| {
        d["events"][599]["event_hash"] = json!("22".repeat(32))
    });
    case("seq renumbered", &|d| d["events"][5]["seq"] = json!(500));
    case("event removed", &|d| {
        d["events"].as_array_mut().unwrap().remove(20);
    });
    case("signature of another event", &|d| {
        d["events"][40]["signature"] = d["events"][42]["signature"].clone()
    });
    case("signature not base64url", &|d| {
        d["events"][44]["signature"] = json!("not+base64")
    });
    case("signer unknown", &|d| {
        d["events"][46]["signer"] = json!("33".repeat(32))
    });
    case("signature without signer", &|d| {
        d["events"][49]["signer"] = json!(null)
    });
    case("unsigned", &|d| d["events"][50]["signature"] = json!(null));
    case("buyer key replaced", &|d| {
        let other = key(9).verifying_key();
        d["keys"]["buyer"] = json!({"public_key": keys::public_key_b64(&other),
                                   "fingerprint": keys::fingerprint(&other)});
    });
    case("a key that is no key", &|d| {
        d["keys"]["buyer"]["public_key"] = json!("AAAA")
    });
    case("chain head claim wrong", &|d| {
        d["session"]["chain_head"] = json!("44".repeat(32))
    });
    case("no events", &|d| d["events"] = json!([]));
    case("another protocol version", &|d| {
        d["protocol"] = json!("ANP/0.2")
    });
    case("an event that is no event", &|d| {
        d["events"][3] = json!({"seq": "three"})
    });
    case("escaped string field", &|d| {
        let at = d["events"][60]["at"]
            .as_str()
            .unwrap()
            .replace('T', "\\u0054");
        d["events"][60]["at"] = json!(at);
    });
    out
}

/// The part of an unreadable document's sentence both readers share: the
/// bytes reader's error also says where (line and column).
fn without_position(outcome: &Outcome) -> Outcome {
    let mut o = outcome.clone();
    if let Some(at) = o.summary.find(" at line ") {
        o.summary.truncate(at);
    }
    o
}

#[test]
fn every_report_is_the_one_the_previous_path_gave() {
    let base = signed_log(700);
    let mut failed = 0;
    for (name, doc) in tampered(&base) {
        // The escaped case becomes a real escape in the text (`\u0054` for T).
        let text = serde_json::to_string(&doc)
            .unwrap()
            .replace("\\\\u0054", "\\u0054");
        let bytes = text.into_bytes();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let now = countersign_verify::anp_log::verify("log.json", &bytes);
        let before = previous("log.json", &doc);
        assert_eq!(without_position(&now), without_position(&before), "{name}");
        // Unproven attribution (a null signature with a signer) and the
        // head claim are notes, not checks; an escape spells the same text.
        let verifies = matches!(
            name,
            "untouched"
                | "no events"
                | "unsigned"
                | "chain head claim wrong"
                | "escaped string field"
        );
        assert_eq!(
            now.status == "verified",
            verifies,
            "{name}: {}",
            now.to_text()
        );
        failed += usize::from(now.status == "failed");
    }
    assert!(
        failed >= 12,
        "most damage is judged, not unreadable: {failed}"
    );
}

#[test]
fn the_binary_prints_the_previous_report_for_a_long_log() {
    let dir = tempfile::tempdir().unwrap();
    for (name, doc) in tampered(&signed_log(700)) {
        if !matches!(
            name,
            "untouched" | "signature of another event" | "chain head claim wrong"
        ) {
            continue;
        }
        let path = dir.path().join("log.json");
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        let file = path.to_str().unwrap();
        let before = previous(file, &doc);
        let out = run(&[file]);
        assert_eq!(stdout(&out), before.to_text(), "{name}");
        assert_eq!(out.status.code(), Some(before.exit_code()), "{name}");
        let out = run(&[file, "--json"]);
        assert_eq!(
            stdout(&out).trim_end(),
            serde_json::to_string(&before).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_log_that_is_not_json_all_through_is_unreadable_as_before() {
    // The top level reads, but a string holds a lone surrogate.
    let dir = tempfile::tempdir().unwrap();
    let text =
        serde_json::to_string(&signed_log(3))
            .unwrap()
            .replacen("round 1", "round \\ud800", 1);
    let path = dir.path().join("log.json");
    std::fs::write(&path, &text).unwrap();
    let out = run(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unreadable: not JSON: "), "{err}");
}
