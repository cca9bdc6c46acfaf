//! The OANP session seam's pure half on logs built here, chained as
//! `crates/oanp` chains them: the chain followed from a pin, each failure at
//! its envelope and check, a role's agent pinned and held, a rewritten log
//! caught against the stored copy, and the offer read beside the one it
//! answers.

use serde_json::{json, Value};

use super::{offer, record, verify};
use crate::protocol::{Head, PendingProposal, Trust};

fn chain(specs: &[(&str, &str, Value)]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (i, (kind, role, payload)) in specs.iter().enumerate() {
        let mut e = json!({"type": kind, "message_id": format!("m{}", i + 1), "sender": {"role": role}, "payload": payload});
        if let Some(last) = out.last() {
            e["prev_hash"] = json!(oanp::canonical::commit(last).unwrap());
        }
        out.push(e);
    }
    out
}

fn envelopes() -> Vec<Value> {
    let terms =
        |minor: i64| json!({"price": {"amount_minor": minor, "currency": "USD"}, "inclusions": []});
    chain(&[
        ("session.open", "buyer", json!({})),
        ("session.ack", "merchant", json!({})),
        (
            "offer.propose",
            "buyer",
            json!({"round": 1, "terms": terms(39900)}),
        ),
        (
            "offer.counter",
            "merchant",
            json!({"round": 1, "terms": terms(41900)}),
        ),
    ])
}

fn doc(after: u64, messages: &[Value], all: &[Value], roles: Value) -> Vec<u8> {
    let head = all.len() as u64;
    let hash = all
        .last()
        .map(|e| oanp::canonical::commit(e).unwrap())
        .unwrap_or_default();
    serde_json::to_vec(&json!({
        "protocol": "oanp", "session_id": "s1", "after": after, "self": "buyer",
        "counterparty": {"id": "merchant"}, "keys": roles, "messages": messages,
        "head": {"count": head, "hash": hash},
    }))
    .unwrap()
}

fn roles() -> Value {
    json!({"buyer": "b-1", "merchant": "m-1"})
}

fn trust(pinned: &str) -> Trust<'_> {
    Trust {
        host_url: "http://127.0.0.1:8480",
        platform_key: "",
        approver_keys: "[]",
        counterparty_fingerprint: "",
        pinned_keys: pinned,
    }
}

fn genesis() -> Head {
    Head {
        seq: 0,
        hash: format!("sha256:{}", "0".repeat(64)),
    }
}

#[test]
fn a_log_is_followed_from_its_start_and_then_from_the_pin() {
    let all = envelopes();
    let first = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(0, &all[..2], &all[..2], roles()),
    )
    .unwrap();
    assert!(first.dispute.is_none(), "{:?}", first.dispute);
    assert_eq!(first.head.seq, 2);
    assert_eq!(first.events[1].actor, "merchant");
    assert_eq!(first.events[1].signature_state, "unsigned");
    assert_eq!(
        first.unproven,
        [1, 2],
        "unsigned envelopes are chained, not attributed"
    );
    let pinned = first.pinned_keys.unwrap();
    let then = verify::since(
        "oanp:s1",
        &first.head,
        &trust(&pinned),
        &doc(2, &all[2..], &all, roles()),
    )
    .unwrap();
    assert!(then.dispute.is_none(), "{:?}", then.dispute);
    assert_eq!(then.head.seq, 4);
    assert_eq!(then.head.hash, oanp::canonical::commit(&all[3]).unwrap());
    assert_eq!(then.last_amount.unwrap().value, "419.00");
    assert!(then.pinned_keys.is_none(), "nothing new to pin");
}

#[test]
fn each_failure_is_disputed_at_its_envelope_and_check() {
    let all = envelopes();
    let mut broken = all.clone();
    broken[2]["prev_hash"] = json!(format!("sha256:{}", "a".repeat(64)));
    let c = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(0, &broken, &all, roles()),
    )
    .unwrap();
    let d = c.dispute.unwrap();
    assert_eq!(
        (d.seq, d.checks.as_slice()),
        (3, ["link".to_owned()].as_slice()),
        "{}",
        d.detail
    );
    assert!(c.events.is_empty(), "nothing stored");

    let mut wrong = all.clone();
    wrong[1]["sender"]["role"] = json!("buyer");
    let d = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(0, &wrong, &all, roles()),
    )
    .unwrap()
    .dispute
    .unwrap();
    assert_eq!(
        (d.seq, d.checks[0].as_str()),
        (2, "envelope"),
        "{}",
        d.detail
    );

    // A batch that does not link to the pin: unlinked, so the whole log is fetched.
    let pin = Head {
        seq: 2,
        hash: oanp::canonical::commit(&all[1]).unwrap(),
    };
    let c = verify::since(
        "oanp:s1",
        &pin,
        &trust("{}"),
        &doc(2, &all[3..], &all, roles()),
    )
    .unwrap();
    assert!(c.unlinked);
    assert_eq!(c.dispute.unwrap().checks, ["pin"]);

    // Another agent for a pinned role.
    let c = verify::since(
        "oanp:s1",
        &genesis(),
        &trust(r#"{"merchant": "m-0"}"#),
        &doc(0, &all, &all, roles()),
    )
    .unwrap();
    assert_eq!(c.dispute.unwrap().checks, ["key"]);
}

#[test]
fn a_rewritten_log_is_caught_against_the_stored_copy() {
    let all = envelopes();
    let first = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(0, &all, &all, roles()),
    )
    .unwrap();
    let stored = first.events.clone();
    // The host rewrites the buyer's offer and re-chains everything after it.
    let terms =
        |minor: i64| json!({"price": {"amount_minor": minor, "currency": "USD"}, "inclusions": []});
    let rewritten = chain(&[
        ("session.open", "buyer", json!({})),
        ("session.ack", "merchant", json!({})),
        (
            "offer.propose",
            "buyer",
            json!({"round": 1, "terms": terms(10000)}),
        ),
        (
            "offer.counter",
            "merchant",
            json!({"round": 1, "terms": terms(41900)}),
        ),
    ]);
    let c = verify::whole(
        "oanp:s1",
        &first.head,
        &trust("{}"),
        &doc(0, &rewritten, &rewritten, roles()),
        &stored,
    )
    .unwrap();
    let d = c.dispute.unwrap();
    assert_eq!((d.seq, d.checks[0].as_str()), (3, "pin"), "{}", d.detail);
    let same = verify::whole(
        "oanp:s1",
        &first.head,
        &trust("{}"),
        &doc(0, &all, &all, roles()),
        &stored,
    )
    .unwrap();
    assert!(same.dispute.is_none() && same.events.is_empty());
}

#[test]
fn the_awaited_offer_is_read_beside_the_one_it_answers() {
    let all = envelopes();
    let events = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(0, &all, &all, roles()),
    )
    .unwrap()
    .events;
    let pending = PendingProposal {
        seq: 4,
        event_hash: events[3].event_hash.clone(),
        kind: "offer.counter".into(),
        actor: "merchant".into(),
        expires_at: "2099-01-01T00:00:00Z".into(),
        approvals: Vec::new(),
        approvals_required: 1,
        draft: None,
        held_reason: None,
        request_id: Some("r1".into()),
        action: Some("accept".into()),
        amount: None,
        threshold: Some("250000 USD".into()),
        anex: None,
        chain: None,
    };
    let located = offer::locate(&events, &pending).unwrap();
    assert_eq!(located.proposal.amount.unwrap().value, "419.00");
    assert_eq!(located.previous.as_ref().unwrap().seq, 3);
    let change = located.change.unwrap();
    assert_eq!(
        (change.absolute.as_str(), change.percent.as_deref()),
        ("20", Some("5.01"))
    );
    // An envelope that is not an offer is no proposal.
    let mut not_offer = pending.clone();
    not_offer.event_hash = events[1].event_hash.clone();
    assert!(offer::locate(&events, &not_offer).is_none());
    // What the log shows: the buyer's accept answers the merchant's counter.
    let accepted = chain(&[
        ("session.open", "buyer", json!({})),
        ("session.ack", "merchant", json!({})),
        (
            "offer.propose",
            "buyer",
            json!({"round": 1, "terms": {"price": {"amount_minor": 39900, "currency": "USD"}, "inclusions": []}}),
        ),
        (
            "offer.counter",
            "merchant",
            json!({"round": 1, "terms": {"price": {"amount_minor": 41900, "currency": "USD"}, "inclusions": []}}),
        ),
        ("offer.accept", "buyer", json!({"round": 1})),
    ]);
    let events = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(0, &accepted, &accepted, roles()),
    )
    .unwrap()
    .events;
    assert!(matches!(
        offer::answer_on_log(&events, 4, "merchant"),
        Some(crate::protocol::LogAnswer::Accepted { .. })
    ));
}

#[test]
fn every_envelope_of_the_timeline_is_summarised_in_words_never_as_its_type() {
    let specs: Vec<(&str, &str, Value)> = vec![
        ("session.open", "buyer", json!({})),
        ("session.ack", "merchant", json!({})),
        ("session.accept", "arbiter", json!({})),
    ];
    let all = chain(&specs);
    let read = verify::since(
        "oanp:s1",
        &genesis(),
        &trust("{}"),
        &doc(
            0,
            &all,
            &all,
            json!({"buyer": "b-1", "merchant": "m-1", "arbiter": "a-1"}),
        ),
    )
    .unwrap();
    let human = humanize::Humanizer::in_zone("en_GB.UTF-8", "UTC");
    let summaries: Vec<String> = read
        .events
        .iter()
        .map(|e| record::timeline(e, "merchant", &human).unwrap().summary)
        .collect();
    assert_eq!(
        summaries,
        [
            "Session opened by the buyer",
            "Joined by the merchant",
            "The arbiter accepted the session and fixed its rules",
        ]
    );
}
