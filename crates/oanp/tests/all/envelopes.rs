//! Envelopes and the session chain: the frame read strictly, each type's
//! senders, payloads read into their shapes, and a chain followed one
//! envelope at a time from its start or from a pinned head.

use oanp::canonical::commit;
use oanp::chain::{verify_log, ChainFailure, LinkError, SessionChain};
use oanp::envelope::{is_hash, EnvelopeError};
use oanp::{Envelope, MessageType, Role};
use serde_json::{json, Value};

use crate::support::{fixture, session_for, TestKey};

fn offer(prev: Option<&str>) -> Value {
    let mut e = json!({
        "type": "offer.propose",
        "message_id": "m-1",
        "sender": {"role": "merchant", "agent_id": "ten_sandbox.merchant"},
        "payload": {"round": 1, "terms": {"price": {"amount_minor": 41900, "currency": "USD"},
                    "inclusions": [{"kind": "warranty", "value": "included"}]}, "expires_at": "2026-10-04T05:30:00Z"},
        "session_id": "01M42N9KCCR8TAGDXTFR3Q8TE8",
    });
    if let Some(prev) = prev {
        e["prev_hash"] = json!(prev);
    }
    e
}

#[test]
fn the_page_names_ten_types_each_with_its_senders() {
    assert_eq!(MessageType::ALL.len(), 10);
    for t in MessageType::ALL {
        assert_eq!(MessageType::parse(t.as_str()), Some(t));
        assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
    }
    assert_eq!(MessageType::parse("offer.withdraw"), None);
    assert_eq!(MessageType::SessionOpen.senders(), &[Role::Buyer]);
    assert_eq!(MessageType::SessionAck.senders(), &[Role::Merchant]);
    assert_eq!(
        MessageType::OfferAccept.senders(),
        &[Role::Buyer, Role::Merchant]
    );
    assert_eq!(MessageType::SessionAgree.senders(), &[Role::Arbiter]);
}

#[test]
fn an_envelope_is_read_with_its_unknown_fields_kept() {
    let prev = format!("sha256:{}", "ab".repeat(32));
    let raw = offer(Some(&prev));
    let e = Envelope::read(&raw).unwrap();
    assert_eq!(e.kind, MessageType::OfferPropose);
    assert_eq!(e.message_id, "m-1");
    assert_eq!(e.sender.role, Role::Merchant);
    assert_eq!(e.sender.extra["agent_id"], "ten_sandbox.merchant");
    assert_eq!(e.prev_hash.as_deref(), Some(prev.as_str()));
    assert_eq!(e.extra["session_id"], "01M42N9KCCR8TAGDXTFR3Q8TE8");
    // Written back, it is the same JSON, so it hashes the same.
    assert_eq!(e.to_value(), raw);
    assert_eq!(commit(&e.to_value()).unwrap(), commit(&raw).unwrap());

    let o = e.offer().unwrap();
    assert_eq!(o.round, Some(1));
    assert_eq!(o.terms.price.amount_minor.get(), 41900);
    assert_eq!(o.terms.inclusions[0].kind, "warranty");
    assert_eq!(o.extra["expires_at"], "2026-10-04T05:30:00Z");
    assert_eq!(
        e.evaluation().unwrap_err(),
        EnvelopeError::OtherType {
            found: "offer.propose"
        }
    );
}

#[test]
fn a_malformed_frame_is_refused_with_its_reason() {
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, &str)> = vec![
        (
            |e| e["type"] = json!("offer.withdraw"),
            "the envelope's type \"offer.withdraw\" is not an OANP message type",
        ),
        (
            |e| drop(e.as_object_mut().unwrap().remove("type")),
            "the envelope's type (none) is not an OANP message type",
        ),
        (
            |e| e["message_id"] = json!(""),
            "the envelope has no message_id (a non-empty string)",
        ),
        (
            |e| e["message_id"] = json!(7),
            "the envelope has no message_id (a non-empty string)",
        ),
        (
            |e| e["sender"] = json!({"role": "auditor"}),
            "the envelope's sender has no role (buyer, merchant or arbiter)",
        ),
        (
            |e| drop(e.as_object_mut().unwrap().remove("sender")),
            "the envelope's sender has no role (buyer, merchant or arbiter)",
        ),
        (
            |e| e["sender"]["role"] = json!("arbiter"),
            "offer.propose comes from the buyer or the merchant, not from the arbiter",
        ),
        (
            |e| e["payload"] = json!([1]),
            "the envelope's payload is not an object",
        ),
        (
            |e| e["prev_hash"] = json!("sha256:ABC"),
            "the envelope's prev_hash \"sha256:ABC\" is not sha256: and 64 lowercase hex digits",
        ),
        (
            |e| e["prev_hash"] = json!(5),
            "the envelope's prev_hash 5 is not sha256: and 64 lowercase hex digits",
        ),
    ];
    for (edit, sentence) in cases {
        let mut e = offer(None);
        edit(&mut e);
        assert_eq!(Envelope::read(&e).unwrap_err().to_string(), sentence);
    }
    assert_eq!(
        Envelope::read(&json!([])).unwrap_err(),
        EnvelopeError::NotAnObject
    );
}

#[test]
fn payloads_read_into_their_shapes_or_say_why_not() {
    let evaluate = Envelope::read(&json!({
        "type": "arbitration.evaluate", "message_id": "m-5", "sender": {"role": "arbiter"},
        "payload": {"verdict": "unfair_to_merchant", "fairness_score": "1.1504", "w_minor": 28000,
                    "suggested_adjustment": {"amount_minor": 548000, "currency": "INR"}}
    }))
    .unwrap();
    let v = evaluate.evaluation().unwrap();
    assert_eq!(v.verdict.as_deref(), Some("unfair_to_merchant"));
    assert_eq!(v.fairness_score.unwrap().as_str(), "1.1504");
    assert_eq!(v.suggested_adjustment.unwrap().display(), "5480.00 INR");

    let float_price = Envelope::read(&json!({
        "type": "offer.counter", "message_id": "m-6", "sender": {"role": "buyer"},
        "payload": {"round": 2, "terms": {"price": {"amount_minor": 419.5, "currency": "USD"}}}
    }))
    .unwrap();
    let err = float_price.offer().unwrap_err().to_string();
    assert!(
        err.starts_with("the offer.counter payload cannot be read:")
            && err.contains("written as a float"),
        "{err}"
    );

    let close = Envelope::read(&json!({
        "type": "session.close", "message_id": "m-9", "sender": {"role": "arbiter"},
        "payload": {"reason": "rounds_exhausted", "detail": "5 of 5 rounds used"}
    }))
    .unwrap();
    assert_eq!(
        close.closing().unwrap().reason.as_deref(),
        Some("rounds_exhausted")
    );
}

#[test]
fn a_chain_is_followed_one_envelope_at_a_time() {
    let mut chain = SessionChain::new();
    assert!(chain.is_empty() && chain.next_prev_hash().is_none());
    let first = offer(None);
    let head = chain.push(&first).unwrap().to_owned();
    assert_eq!(head, commit(&first).unwrap());
    assert!(is_hash(&head));

    let unlinked = offer(Some(&format!("sha256:{}", "0".repeat(64))));
    let err = chain.push(&unlinked).unwrap_err();
    assert!(matches!(err, LinkError::Unlinked { .. }), "{err}");
    assert_eq!(chain.len(), 1, "a refused envelope is not appended");
    assert!(
        matches!(chain.push(&offer(None)), Err(LinkError::Unlinked { .. })),
        "the second needs a prev_hash"
    );

    let second = offer(Some(&head));
    chain.push(&second).unwrap();
    assert_eq!(
        (chain.len(), chain.head()),
        (2, Some(commit(&second).unwrap().as_str()))
    );

    // Resumed from a pin, it takes exactly the envelope after the head.
    let mut resumed = SessionChain::from_pin(head.clone(), 1);
    resumed.push(&second).unwrap();
    assert_eq!(resumed, chain);
    let mut wide = offer(Some(chain.head().unwrap()));
    wide["payload"]["nonce"] = json!(9007199254740993u64);
    assert!(matches!(chain.push(&wide), Err(LinkError::NotCanonical(_))));
    assert_eq!(chain.push(&json!("x")).unwrap_err(), LinkError::NotAnObject);
}

#[test]
fn a_whole_log_is_checked_in_the_publishers_order() {
    let (receipt, log) = session_for(fixture("dev-receipt"), &TestKey::generate("k"));
    let claim = receipt["chain"].as_object();
    let session = receipt["signed_payload"]["session"].as_object();
    assert_eq!(verify_log(&log, claim, session), Ok(7));
    // Every envelope the helper built reads as an OANP envelope.
    let kinds: Vec<&str> = log
        .iter()
        .map(|e| Envelope::read(e).unwrap().kind.as_str())
        .collect();
    assert_eq!(kinds.first(), Some(&"session.open"));
    assert_eq!(kinds.last(), Some(&"session.agree"));

    let mut broken = log.clone();
    broken[3]["payload"]["round"] = json!(2);
    assert_eq!(
        verify_log(&broken, claim, session),
        Err(ChainFailure::Unlinked {
            index: 4,
            kind: "arbitration.evaluate".to_owned()
        })
    );
    assert_eq!(
        verify_log(&log[..6], claim, session),
        Err(ChainFailure::HeadMismatch)
    );
    let mut length = claim.unwrap().clone();
    length["length"] = json!(70);
    assert_eq!(
        verify_log(&log, Some(&length), session)
            .unwrap_err()
            .to_string(),
        "the log holds 7 envelopes where the receipt names 70"
    );
    assert_eq!(
        verify_log(&log, claim, None),
        Err(ChainFailure::NoSignedHead)
    );
    assert_eq!(
        verify_log(&log, None, session),
        Ok(7),
        "no claim: only the links and the signed head"
    );
    let mut reversed = log.clone();
    reversed.reverse();
    assert!(matches!(
        verify_log(&reversed, claim, session),
        Err(ChainFailure::Unlinked { index: 1, .. })
    ));
    assert_eq!(
        verify_log(&[], claim, session),
        Err(ChainFailure::NotEnvelopes)
    );
}
