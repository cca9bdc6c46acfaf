//! Transcript verification: whole, from a pin, each check alone.

use concordia::approval_receipt::edges;
use concordia::transcript::{verify_since, verify_transcript, Check, Head};
use serde_json::json;

use super::fixtures::{deal, sign, transcript, Parties};

#[test]
fn a_signed_transcript_verifies_and_reports_its_head() {
    let p = Parties::new();
    let t = deal(&p);
    let r = verify_transcript(&t, &p.keys());
    assert!(r.is_valid(), "{:?}", r.failures);
    assert_eq!(
        r.head,
        Head {
            count: 4,
            hash: edges::hash(&t[3]).unwrap()
        }
    );
}

#[test]
fn from_a_pin_only_new_messages_are_read_and_they_must_link_to_it() {
    let p = Parties::new();
    let t = deal(&p);
    let pin = verify_transcript(&t[..2], &p.keys()).head;
    let r = verify_since(&pin, &t[2..], &p.keys());
    assert!(r.is_valid(), "{:?}", r.failures);
    assert_eq!(r.checked, 2);
    assert_eq!(r.head.count, 4);
    // The prefix is not read: garbage before the pin cannot matter, and a
    // pin to another head is a Pin failure at the first new message.
    let other = Head {
        count: 2,
        hash: format!("sha256:{}", "a".repeat(64)),
    };
    let r = verify_since(&other, &t[2..], &p.keys());
    assert_eq!(r.failures.len(), 1);
    assert_eq!((r.failures[0].index, r.failures[0].check), (2, Check::Pin));
}

#[test]
fn a_re_signed_splice_links_but_a_pin_catches_it() {
    let p = Parties::new();
    let t = deal(&p);
    // Delete accept_session (index 1) and re-sign what follows.
    let mut spliced = vec![t[0].clone()];
    let mut prev = edges::hash(&t[0]).unwrap();
    for m in &t[2..] {
        let mut m = m.clone();
        m["prev_hash"] = json!(prev);
        let who = m["from"]["agent_id"].as_str().unwrap().to_owned();
        let m = sign(m, p.key_of(&who));
        prev = edges::hash(&m).unwrap();
        spliced.push(m);
    }
    // Links and signatures alone cannot see it (what the SDK's validate_chain checks).
    assert!(verify_transcript(&spliced, &p.keys()).is_valid());
    // The state machine can: a counter before the session was accepted.
    let typed: Vec<concordia::Message> = spliced
        .iter()
        .map(|m| concordia::Message::from_value(m).unwrap())
        .collect();
    let err = concordia::Session::replay(&typed).unwrap_err();
    assert_eq!((err.index, err.id.as_str()), (1, "msg_2"));
    // And a pin taken after two messages does.
    let pin = verify_transcript(&t[..2], &p.keys()).head;
    let r = verify_since(&pin, &spliced[2..], &p.keys());
    assert_eq!(r.failures[0].check, Check::Pin);
}

#[test]
fn each_check_fails_alone_naming_the_message() {
    let p = Parties::new();
    let t = deal(&p);
    let keys = p.keys();
    let only = |t: &[serde_json::Value], keys: &concordia::Keys| {
        let r = verify_transcript(t, keys);
        r.failures
            .iter()
            .map(|f| (f.index, f.check))
            .collect::<Vec<_>>()
    };
    // Signature: the last body changed.
    let mut x = t.clone();
    x[3]["body"]["offer_id"] = json!("off_2");
    assert_eq!(only(&x, &keys), [(3, Check::Signature)]);
    // Genesis: re-signed with another prev_hash, the rest re-linked.
    let mut x = transcript(
        &p,
        &[(
            "negotiate.open",
            "seller",
            json!({"terms": {}}),
            "2026-05-10T10:00:00Z",
        )],
    );
    x[0]["prev_hash"] = json!(format!("sha256:{}", "1".repeat(64)));
    let x = vec![sign(x[0].clone(), &p.seller)];
    assert_eq!(only(&x, &keys), [(0, Check::Genesis)]);
    // Link: the last message re-signed pointing at message 1.
    let mut x = t.clone();
    x[3]["prev_hash"] = json!(edges::hash(&t[1]).unwrap());
    x[3] = sign(x[3].clone(), &p.seller);
    assert_eq!(only(&x, &keys), [(3, Check::Link)]);
    // Key: no key for the buyer.
    let mut k = concordia::Keys::new();
    k.insert("seller".into(), p.seller.verifying_key());
    assert_eq!(only(&t, &k), [(1, Check::Key), (2, Check::Key)]);
    // Session: the last message moved to another session, re-signed.
    let mut x = t.clone();
    x[3]["session_id"] = json!("ses_2");
    x[3] = sign(x[3].clone(), &p.seller);
    assert_eq!(only(&x, &keys), [(3, Check::Session)]);
    // Envelope: the last message's timestamp is naive, re-signed.
    let mut x = t.clone();
    x[3]["timestamp"] = json!("2026-05-10T10:03:00");
    x[3] = sign(x[3].clone(), &p.seller);
    assert_eq!(only(&x, &keys), [(3, Check::Envelope)]);
    // Canonical: -0.0 has no canonical form (the SDK refuses it too).
    let mut x = t.clone();
    x[3]["body"]["n"] = json!(-0.0);
    let f = only(&x, &keys);
    assert!(f.contains(&(3, Check::Canonical)), "{f:?}");
}

#[test]
fn a_long_transcript_is_checked_in_parallel_batches_and_still_names_each_bad_message() {
    let p = Parties::new();
    let mut steps = vec![
        (
            "negotiate.open",
            "seller",
            json!({"terms": {}, "timing": {"max_rounds": 100000}}),
            "2026-05-10T10:00:00Z",
        ),
        (
            "negotiate.accept_session",
            "buyer",
            json!({}),
            "2026-05-10T10:00:00Z",
        ),
    ];
    for i in 0..1200 {
        steps.push((
            "negotiate.signal",
            if i % 2 == 0 { "buyer" } else { "seller" },
            json!({"n": i}),
            "2026-05-10T10:00:01Z",
        ));
    }
    let mut t = transcript(&p, &steps);
    assert!(verify_transcript(&t, &p.keys()).is_valid());
    for i in [5usize, 700, 1201] {
        t[i]["signature"] = t[i - 1]["signature"].clone();
    }
    let r = verify_transcript(&t, &p.keys());
    let bad: Vec<(u64, Check)> = r.failures.iter().map(|f| (f.index, f.check)).collect();
    // Each copied signature fails its own message, and changes that
    // message's hash, so the next one no longer links.
    assert_eq!(
        bad,
        [
            (5, Check::Signature),
            (6, Check::Link),
            (700, Check::Signature),
            (701, Check::Link),
            (1201, Check::Signature)
        ]
    );
}
