//! The Concordia seam's pure half, on transcripts signed here with the
//! rules of `crates/concordia` (fresh keys): verification from a pin and
//! whole, keys pinned at first sight, the awaited offer and the one it
//! answers, conditional and bundle offers in the view shape, counter terms,
//! and receipts that `crates/approval-receipt` verifies check by check.

use approval_receipt::{edges, keys, verify_receipt};
use ed25519_dalek::SigningKey;
use serde_json::{json, Value};
use time::macros::datetime;

use super::Concordia;
use crate::protocol::{Head, PendingProposal, Seam, Trust};
use crate::store::StoredEvent;
use crate::views::{
    ChangeStatus, Counterparty, DecideAction, DecideRequest, OfferShape, ProposalDetail,
    ProposalDiff, Verification,
};

const SESSION: &str = "concordia:ses_9d4e8f01";
const BUYER: &str = "agent_buyer_42";
const SELLER: &str = "agent_seller_01";

struct Parties {
    buyer: SigningKey,
    seller: SigningKey,
}

impl Parties {
    fn new() -> Parties {
        Parties {
            buyer: SigningKey::from_bytes(&[1; 32]),
            seller: SigningKey::from_bytes(&[2; 32]),
        }
    }

    fn keys(&self) -> Value {
        json!({
            BUYER: keys::public_key_text(&self.buyer.verifying_key()),
            SELLER: keys::public_key_text(&self.seller.verifying_key()),
        })
    }

    /// A signed, chained transcript of `(from, type, body, reasoning)`.
    fn transcript(&self, steps: &[(&str, &str, Value)]) -> Vec<Value> {
        let mut prev = concordia::GENESIS_HASH.to_owned();
        steps
            .iter()
            .enumerate()
            .map(|(i, (from, kind, body))| {
                let (key, to) = if *from == BUYER {
                    (&self.buyer, SELLER)
                } else {
                    (&self.seller, BUYER)
                };
                let mut m = json!({
                    "concordia": "0.1.0", "type": kind, "id": format!("msg_{:04}", i + 1),
                    "session_id": "ses_9d4e8f01", "timestamp": format!("2026-11-29T10:{:02}:00Z", i),
                    "from": {"agent_id": from}, "to": [{"agent_id": to}], "prev_hash": prev, "body": body,
                });
                if *from == SELLER {
                    m["reasoning"] = json!("A longer term lets us go lower on price.");
                }
                let pre = edges::canonical(&m).unwrap();
                m["signature"] = json!(keys::sign(key, pre.as_bytes()));
                prev = edges::hash(&m).unwrap();
                m
            })
            .collect()
    }
}

fn open() -> (&'static str, &'static str, Value) {
    (
        SELLER,
        "negotiate.open",
        json!({"terms": {"price": {"value": 170000.00, "currency": "USD"}, "term_months": {"value": 12}},
               "timing": {"session_ttl": 864000, "offer_ttl": 86400, "max_rounds": 20}}),
    )
}

fn basic_offer() -> Value {
    json!({"offer_id": "off_1", "terms": {"price": {"value": 160000.00, "currency": "USD"},
            "quantity": {"value": 500, "unit": "seat/year"}}, "complete": true})
}

fn conditional_counter() -> Value {
    json!({"offer_id": "off_2", "valid_until": "2026-11-30T09:00:00Z", "conditions": [
        {"if": {"term_months": {"value": 24}}, "then": {"price": {"value": 150000.00, "currency": "USD"}}},
        {"if": {"term_months": {"value": 12}}, "then": {"price": {"value": 165000.00, "currency": "USD"}}}]})
}

/// open, accept_session, our basic offer, their conditional counter.
fn negotiation(p: &Parties) -> Vec<Value> {
    p.transcript(&[
        open(),
        (BUYER, "negotiate.accept_session", json!({})),
        (BUYER, "negotiate.offer", basic_offer()),
        (SELLER, "negotiate.counter", conditional_counter()),
    ])
}

fn log(p: &Parties, after: u64, messages: &[Value]) -> Vec<u8> {
    let count = after + messages.len() as u64;
    let head = messages
        .last()
        .map(|m| concordia::message_hash(m).unwrap())
        .unwrap_or_default();
    serde_json::to_vec(&json!({
        "protocol": "concordia", "session_id": "ses_9d4e8f01", "after": after, "self": BUYER,
        "counterparty": {"id": SELLER, "name": "Litware Sales Agent", "organization": "Litware"},
        "keys": p.keys(), "messages": messages, "head": {"count": count, "hash": head}, "requests": []
    }))
    .unwrap()
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
    Concordia.genesis()
}

/// The whole negotiation verified and stored, with the keys it pinned.
fn verified(p: &Parties) -> (Vec<StoredEvent>, String) {
    let checked = Concordia
        .verify_since(
            SESSION,
            &genesis(),
            &trust("{}"),
            &log(p, 0, &negotiation(p)),
        )
        .unwrap();
    assert!(checked.dispute.is_none(), "{:?}", checked.dispute);
    (checked.events, checked.pinned_keys.unwrap())
}

fn pending(events: &[StoredEvent]) -> PendingProposal {
    PendingProposal {
        seq: 4,
        event_hash: events[3].event_hash.clone(),
        kind: "negotiate.counter".to_owned(),
        actor: SELLER.to_owned(),
        expires_at: "2026-12-01T09:00:00Z".to_owned(),
        approvals: Vec::new(),
        approvals_required: 2,
        draft: None,
        held_reason: None,
        request_id: Some("req_5f0c".to_owned()),
        action: Some("accept".to_owned()),
        amount: Some("150000.00 USD".to_owned()),
        threshold: Some("100000.00 USD".to_owned()),
        anex: None,
        chain: None,
    }
}

fn session(pinned: &str) -> crate::store::SessionRecord {
    crate::store::SessionRecord {
        host_id: "h".into(),
        session_id: SESSION.into(),
        protocol: "concordia".into(),
        status: "open".into(),
        sandbox: false,
        counterparty: Counterparty {
            id: SELLER.into(),
            name: "Litware Sales Agent".into(),
            organization: Some("Litware".into()),
            fingerprint: String::new(),
            status: "declared".into(),
            verified: None,
        },
        pin_seq: 4,
        pin_hash: String::new(),
        remote_count: 4,
        remote_head: String::new(),
        verification: Verification::Verified,
        dispute_detail: None,
        failing_seq: None,
        failing_checks: Vec::new(),
        unproven: Vec::new(),
        last_total: None,
        currency: None,
        updated_at: String::new(),
        pinned_keys: pinned.into(),
    }
}

#[test]
fn a_transcript_verifies_from_genesis_and_pins_each_partys_key() {
    let p = Parties::new();
    let messages = negotiation(&p);
    let checked = Concordia
        .verify_since(SESSION, &genesis(), &trust("{}"), &log(&p, 0, &messages))
        .unwrap();
    assert!(checked.dispute.is_none(), "{:?}", checked.dispute);
    let seqs: Vec<u64> = checked.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(
        checked.events[3].event_hash,
        concordia::message_hash(&messages[3]).unwrap()
    );
    assert_eq!(checked.events[3].kind, "negotiate.counter");
    assert_eq!(checked.events[3].actor, SELLER);
    assert_eq!(checked.head.seq, 4);
    assert_eq!(checked.head.hash, checked.events[3].event_hash);
    let pinned: Value = serde_json::from_str(checked.pinned_keys.as_deref().unwrap()).unwrap();
    assert_eq!(pinned, p.keys());
    // The basic offer at seq 3 is the latest with one price (the JSON number
    // 160000.00 is the number 160000, as JCS writes it).
    assert_eq!(checked.last_amount.unwrap().value, "160000");
}

#[test]
fn from_a_pin_only_the_new_messages_are_read_and_each_failure_is_named() {
    let p = Parties::new();
    let messages = negotiation(&p);
    let (events, pinned) = {
        let checked = Concordia
            .verify_since(
                SESSION,
                &genesis(),
                &trust("{}"),
                &log(&p, 0, &messages[..2]),
            )
            .unwrap();
        (checked.events, checked.pinned_keys.unwrap())
    };
    let pin = Head {
        seq: 2,
        hash: events[1].event_hash.clone(),
    };
    let checked = Concordia
        .verify_since(SESSION, &pin, &trust(&pinned), &log(&p, 2, &messages[2..]))
        .unwrap();
    assert!(checked.dispute.is_none());
    assert_eq!(
        checked.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [3, 4]
    );
    assert!(checked.pinned_keys.is_none(), "no key is new");

    // A message changed after it was signed: disputed at its seq, by its signature.
    let mut tampered = messages[2..].to_vec();
    tampered[1]["body"]["conditions"][0]["then"]["price"]["value"] = json!(1.0);
    let checked = Concordia
        .verify_since(SESSION, &pin, &trust(&pinned), &log(&p, 2, &tampered))
        .unwrap();
    let dispute = checked.dispute.unwrap();
    assert_eq!(dispute.seq, 4);
    assert_eq!(dispute.checks, ["signature"]);
    assert!(checked.events.is_empty(), "nothing stored");
    assert!(!checked.unlinked);

    // A batch that does not extend the pin: the whole record must be read.
    let other =
        Parties::new().transcript(&[open(), (BUYER, "negotiate.accept_session", json!({}))]);
    let checked = Concordia
        .verify_since(SESSION, &pin, &trust(&pinned), &log(&p, 2, &other[1..]))
        .unwrap();
    assert!(checked.unlinked);
    assert_eq!(checked.dispute.unwrap().checks[0], "pin");
}

#[test]
fn a_party_whose_key_is_not_the_pinned_one_disputes_the_session() {
    let p = Parties::new();
    let (_, pinned) = verified(&p);
    let impostor = Parties {
        buyer: SigningKey::from_bytes(&[1; 32]),
        seller: SigningKey::from_bytes(&[9; 32]),
    };
    let messages = impostor.transcript(&[open()]);
    let checked = Concordia
        .verify_since(
            SESSION,
            &genesis(),
            &trust(&pinned),
            &log(&impostor, 0, &messages),
        )
        .unwrap();
    let dispute = checked.dispute.unwrap();
    assert_eq!(dispute.checks, ["key"]);
    assert!(dispute.detail.contains(SELLER), "{}", dispute.detail);
}

#[test]
fn the_counterparty_fingerprint_the_summary_names_must_be_the_pinned_keys() {
    let p = Parties::new();
    let messages = negotiation(&p);
    let bytes = log(&p, 0, &messages);
    let seller = jcs::sha256_hex(p.seller.verifying_key().as_bytes());
    let buyer = jcs::sha256_hex(p.buyer.verifying_key().as_bytes());
    fn named(fingerprint: &str) -> Trust<'_> {
        Trust {
            counterparty_fingerprint: fingerprint,
            ..trust("{}")
        }
    }
    // The seller's own fingerprint (either case) verifies.
    for ok in [seller.clone(), seller.to_uppercase()] {
        let checked = Concordia
            .verify_since(SESSION, &genesis(), &named(&ok), &bytes)
            .unwrap();
        assert!(checked.dispute.is_none(), "{:?}", checked.dispute);
        assert_eq!(checked.events.len(), 4);
    }
    // Our own party's fingerprint named as the counterparty's: disputed, nothing stored.
    let checked = Concordia
        .verify_since(SESSION, &genesis(), &named(&buyer), &bytes)
        .unwrap();
    let dispute = checked.dispute.expect("a fingerprint of another key");
    assert_eq!(dispute.checks, ["key"]);
    assert_eq!(dispute.seq, 1);
    assert!(
        dispute.detail.contains(&buyer) && dispute.detail.contains(&seller),
        "{}",
        dispute.detail
    );
    assert!(checked.events.is_empty());
    assert!(checked.pinned_keys.is_none());
}

#[test]
fn a_rewritten_transcript_that_re_signs_everything_is_disputed_at_its_first_changed_message() {
    let p = Parties::new();
    let (stored, pinned) = verified(&p);
    let pin = Head {
        seq: 4,
        hash: stored[3].event_hash.clone(),
    };
    // Same parties, same keys, a valid chain: only message 3's price differs.
    let mut offer = basic_offer();
    offer["terms"]["price"]["value"] = json!(190000.00);
    let rewritten = p.transcript(&[
        open(),
        (BUYER, "negotiate.accept_session", json!({})),
        (BUYER, "negotiate.offer", offer),
        (SELLER, "negotiate.counter", conditional_counter()),
    ]);
    assert!(concordia::verify_transcript(
        &rewritten,
        &concordia::Keys::from_json(&p.keys()).unwrap()
    )
    .is_valid());
    let checked = Concordia
        .verify_whole(
            SESSION,
            &pin,
            &trust(&pinned),
            &log(&p, 0, &rewritten),
            &stored,
        )
        .unwrap();
    let dispute = checked.dispute.unwrap();
    assert_eq!(
        (dispute.seq, dispute.checks.as_slice()),
        (3, ["pin".to_owned()].as_slice())
    );
    // The honest record, whole, verifies and adds nothing.
    let checked = Concordia
        .verify_whole(
            SESSION,
            &pin,
            &trust(&pinned),
            &log(&p, 0, &negotiation(&p)),
            &stored,
        )
        .unwrap();
    assert!(checked.dispute.is_none());
    assert!(checked.events.is_empty());
}

#[test]
fn the_awaited_counter_is_read_beside_the_offer_it_answers_as_the_view_shape() {
    let p = Parties::new();
    let (events, pinned) = verified(&p);
    let pending = pending(&events);
    let located = Concordia.locate(&events, &pending).unwrap();
    assert_eq!(located.proposal.seq, 4);
    assert_eq!(located.proposal.amount.as_ref().unwrap().value, "150000.00");
    let previous = located.previous.as_ref().unwrap();
    assert_eq!((previous.seq, previous.actor.as_str()), (3, BUYER));
    assert_eq!(previous.amount.as_ref().unwrap().value, "160000");
    let change = located.change.as_ref().unwrap();
    assert_eq!(
        (change.absolute.as_str(), change.percent.as_deref()),
        ("-10000", Some("-6.25"))
    );

    let s = session(&pinned);
    let ProposalDetail::ConcordiaOffer(view) =
        Concordia.detail(&events, &pending, &located, &Trust::of(&host(), &s))
    else {
        panic!("not a Concordia view");
    };
    assert_eq!(view.offer.shape, OfferShape::Conditional);
    assert_eq!(view.offer.conditions.len(), 2);
    assert_eq!(view.offer.conditions[0].when[0].name, "term_months");
    assert_eq!(view.offer.conditions[0].when[0].value, "24");
    let price = &view.offer.conditions[0].then[0];
    assert_eq!(
        (
            price.id.as_str(),
            price.amount.as_ref().unwrap().value.as_str()
        ),
        ("price", "150000")
    );
    assert!(price.attributes.is_empty(), "the currency is in the amount");
    let before = view.previous.as_ref().unwrap();
    assert_eq!(before.shape, OfferShape::Basic);
    let quantity = before.terms.iter().find(|t| t.id == "quantity").unwrap();
    assert_eq!(
        (
            quantity.value.as_str(),
            quantity.attributes[0].value.as_str()
        ),
        ("500", "seat/year")
    );
    let diff = view.diff.as_ref().unwrap();
    assert_eq!(
        diff.shape.as_ref().unwrap().new.as_deref(),
        Some("conditional")
    );
    assert!(diff.terms.iter().all(|t| t.status == ChangeStatus::Removed));
    assert_eq!(diff.conditions.len(), 2);
    assert_eq!(
        view.reasoning.as_deref(),
        Some("A longer term lets us go lower on price.")
    );
    assert_eq!(view.message.hash, pending.event_hash);
    assert_eq!(view.counterparty_key.party, SELLER);
    assert_eq!(
        view.counterparty_key.fingerprint,
        jcs::sha256_hex(p.seller.verifying_key().as_bytes())
    );
    let request = view.request.as_ref().unwrap();
    assert_eq!(request.threshold.as_ref().unwrap().value, "100000.00");
    assert_eq!(Concordia.side(&s, SELLER), crate::views::Side::Counterparty);
    assert_eq!(Concordia.side(&s, BUYER), crate::views::Side::Ours);
}

fn host() -> crate::store::HostRecord {
    crate::store::HostRecord {
        host_id: "h".into(),
        protocol: "ANP/0.1".into(),
        url: "http://127.0.0.1:1".into(),
        label: "h".into(),
        sandbox: false,
        approver_id: "a".into(),
        approver_email: "ann@fabrikam.example".into(),
        platform_key: String::new(),
        platform_fingerprint: String::new(),
        approver_keys: "[]".into(),
        reachable: true,
        last_error: None,
        last_poll_at: None,
        plain_http_allowed_at: None,
        key_fingerprint: None,
    }
}

#[test]
fn a_bundle_offer_is_laid_out_as_alternatives_and_its_diff_names_the_bundle_and_the_amount() {
    let p = Parties::new();
    let bundles = |standard: f64| {
        json!({"select": "one_of", "bundles": [
            {"bundle_id": "b1", "label": "Standard", "terms": {"price": {"value": standard, "currency": "USD"}}},
            {"bundle_id": "b2", "label": "With support", "terms": {"price": {"value": 158000.00, "currency": "USD"},
                                                                    "support": {"value": "premier"}}}]})
    };
    let messages = p.transcript(&[
        open(),
        (BUYER, "negotiate.accept_session", json!({})),
        (SELLER, "negotiate.offer", bundles(160000.0)),
        (SELLER, "negotiate.offer", bundles(150000.0)),
    ]);
    let checked = Concordia
        .verify_since(SESSION, &genesis(), &trust("{}"), &log(&p, 0, &messages))
        .unwrap();
    assert!(checked.dispute.is_none(), "{:?}", checked.dispute);
    let events = checked.events;
    let mut pending = pending(&events);
    pending.kind = "negotiate.offer".into();
    pending.amount = None;
    let located = Concordia.locate(&events, &pending).unwrap();
    assert!(
        located.proposal.amount.is_none(),
        "a bundle offer has no single amount"
    );
    let s = session(checked.pinned_keys.as_deref().unwrap());
    let ProposalDetail::ConcordiaOffer(view) =
        Concordia.detail(&events, &pending, &located, &Trust::of(&host(), &s))
    else {
        panic!()
    };
    assert_eq!(view.offer.shape, OfferShape::Bundle);
    assert_eq!(view.offer.select.as_deref(), Some("one_of"));
    let labels: Vec<_> = view
        .offer
        .bundles
        .iter()
        .map(|b| b.label.clone().unwrap())
        .collect();
    assert_eq!(labels, ["Standard", "With support"]);
    let diff = view.diff.as_ref().unwrap();
    assert_eq!(diff.bundles.len(), 1);
    assert_eq!(diff.bundles[0].bundle_id, "b1");
    let moved = diff.bundles[0].terms[0].amount.as_ref().unwrap();
    assert_eq!(moved.absolute.as_deref(), Some("-10000"));
    assert_eq!(moved.percent.as_deref(), Some("-6.25"));
}

#[test]
fn counter_terms_are_checked_as_crates_concordia_reads_an_offer() {
    let p = Parties::new();
    let (events, _) = verified(&p);
    let hash = &events[3].event_hash;
    let good =
        json!({"price": {"value": "140000.00", "currency": "USD"}, "term_months": {"value": 24}});
    let check = Concordia
        .validate_counter(&events, hash, &good, &crate::protocol::tests_at())
        .unwrap();
    assert!(check.ok, "{:?}", check.errors);
    let Some(ProposalDiff::ConcordiaOffer(diff)) = check.diff else {
        panic!("no diff")
    };
    assert_eq!(
        diff.shape.as_ref().unwrap().old.as_deref(),
        Some("conditional")
    );
    assert_eq!(diff.terms.len(), 2);

    let refused = |terms: Value| {
        Concordia
            .validate_counter(&events, hash, &terms, &crate::protocol::tests_at())
            .unwrap()
    };
    let paths = |terms: Value| -> Vec<String> {
        refused(terms).errors.into_iter().map(|e| e.path).collect()
    };
    assert_eq!(
        paths(json!({"price": {"value": "a lot", "currency": "USD"}})),
        ["terms/price/value"]
    );
    assert_eq!(
        paths(json!({"price": {"value": 1, "currency": "dollars"}})),
        ["terms/price/currency"]
    );
    assert_eq!(paths(json!({})), ["terms"]);
    assert_eq!(paths(json!(["price"])), ["terms"]);
    assert!(!refused(json!({"price": {"value": "a lot", "currency": "USD"}})).ok);
    assert!(Concordia
        .validate_counter(&events, "sha256:none", &good, &crate::protocol::tests_at())
        .is_err());
}

fn request(action: DecideAction, reason: Option<&str>, counter: Option<Value>) -> DecideRequest {
    DecideRequest {
        host_id: "h".into(),
        session_id: SESSION.into(),
        in_response_to: "unused".into(),
        action,
        reason: reason.map(str::to_owned),
        counter,
    }
}

fn build(
    events: &[StoredEvent],
    pending: &PendingProposal,
    request: &DecideRequest,
    key: &SigningKey,
) -> Result<Value, crate::error::DecideError> {
    let body = Concordia.build_decision(&crate::protocol::DecisionInput {
        request,
        pending,
        events,
        key,
        approver_email: "ann@fabrikam.example",
        host_url: "http://127.0.0.1:8480",
        decision_id: "d-1",
        now: datetime!(2026-11-29 12:00 UTC),
    })?;
    Ok(serde_json::from_slice(&body).unwrap())
}

#[test]
fn an_approval_is_an_approval_receipt_that_verifies_check_by_check() {
    let p = Parties::new();
    let (events, _) = verified(&p);
    let pending = pending(&events);
    let approver = SigningKey::from_bytes(&[7; 32]);
    let body = build(
        &events,
        &pending,
        &request(DecideAction::Approve, None, None),
        &approver,
    )
    .unwrap();
    assert_eq!(body["decision_id"], "d-1");
    assert_eq!(body["action"], "approve");
    assert_eq!(
        body["in_response_to"], "req_5f0c",
        "a gate decision answers the agent's request"
    );
    let receipt = &body["receipt"];
    let offer_message: Value = serde_json::from_str(&events[3].body).unwrap();
    let report = verify_receipt(
        receipt,
        &offer_message,
        Some(&approver.verifying_key()),
        datetime!(2026-11-29 12:00:01 UTC),
        &[],
    );
    assert!(
        report.is_valid(),
        "{:?}",
        report.failures().collect::<Vec<_>>()
    );
    assert_eq!(receipt["scope"]["decision"], "approve");
    assert_eq!(receipt["scope"]["offer_hash"], pending.event_hash);
    assert_eq!(receipt["scope"]["amount"], "150000.00 USD");
    assert_eq!(receipt["scope"]["threshold_crossed"], "100000.00 USD");
    assert_eq!(
        receipt["approver"]["identity"],
        approval_receipt::did_key::encode(&approver.verifying_key())
    );
    assert!(receipt["id"]
        .as_str()
        .unwrap()
        .starts_with("urn:countersign:receipt:"));
    assert_eq!(
        receipt["references"][0]["id"],
        "urn:concordia:session:ses_9d4e8f01"
    );
    assert_eq!(receipt["references"][0]["relationship"], "approves");
    // The offer's own valid_until is earlier than the request's expiry.
    assert_eq!(receipt["expires_at"], "2026-11-30T09:00:00Z");
    // Another offer than the one approved: the receipt does not count for it.
    let other: Value = serde_json::from_str(&events[2].body).unwrap();
    let report = verify_receipt(
        receipt,
        &other,
        None,
        datetime!(2026-11-29 12:00:01 UTC),
        &[],
    );
    assert!(report.failures().any(|f| f.check.name() == "offer_hash"));
}

#[test]
fn a_decline_and_a_counter_are_deny_receipts_with_their_reason_and_terms() {
    let p = Parties::new();
    let (events, _) = verified(&p);
    let pending = pending(&events);
    let approver = SigningKey::from_bytes(&[7; 32]);
    let decline = build(
        &events,
        &pending,
        &request(DecideAction::Decline, Some(" Over budget. "), None),
        &approver,
    )
    .unwrap();
    assert_eq!(decline["receipt"]["scope"]["decision"], "deny");
    assert_eq!(decline["reason"], "Over budget.");
    assert!(decline.get("counter_terms").is_none());

    let terms = json!({"price": {"value": "140000.00", "currency": "USD"}});
    let counter = build(
        &events,
        &pending,
        &request(
            DecideAction::Counter,
            Some("Within budget at this price."),
            Some(terms.clone()),
        ),
        &approver,
    )
    .unwrap();
    assert_eq!(counter["action"], "counter");
    assert_eq!(counter["receipt"]["scope"]["decision"], "deny");
    assert_eq!(counter["counter_terms"], terms);
    let offer_message: Value = serde_json::from_str(&events[3].body).unwrap();
    assert!(verify_receipt(
        &counter["receipt"],
        &offer_message,
        None,
        datetime!(2026-11-29 12:00:01 UTC),
        &[]
    )
    .is_valid());

    use crate::error::DecideError;
    let no_reason = build(
        &events,
        &pending,
        &request(DecideAction::Counter, None, Some(terms)),
        &approver,
    );
    assert!(matches!(no_reason, Err(DecideError::ReasonRequired)));
    let bad_terms = build(
        &events,
        &pending,
        &request(
            DecideAction::Counter,
            Some("r"),
            Some(json!({"price": {"value": "x", "currency": "USD"}})),
        ),
        &approver,
    );
    assert!(matches!(bad_terms, Err(DecideError::InvalidCounter { .. })));
}

#[test]
fn a_receipt_is_not_signed_without_what_it_must_name() {
    let p = Parties::new();
    let (events, _) = verified(&p);
    let approver = SigningKey::from_bytes(&[7; 32]);
    let approve = request(DecideAction::Approve, None, None);
    let refusal = |pending: PendingProposal| match build(&events, &pending, &approve, &approver) {
        Err(crate::error::DecideError::CannotSign(why)) => why,
        other => panic!("signed: {other:?}"),
    };
    let mut no_threshold = pending(&events);
    no_threshold.threshold = None;
    assert!(refusal(no_threshold).contains("threshold"));
    let mut no_request = pending(&events);
    no_request.request_id = None;
    assert!(refusal(no_request).contains("request"));
    // The stored copy of the awaited message no longer hashes to it.
    let mut changed = events.clone();
    changed[3].body = changed[3].body.replace("150000", "150001");
    let why = match build(&changed, &pending(&events), &approve, &approver) {
        Err(crate::error::DecideError::CannotSign(why)) => why,
        other => panic!("signed: {other:?}"),
    };
    assert!(why.contains("hashes to"), "{why}");
}

#[test]
fn what_the_transcript_shows_became_of_an_offer_and_the_hosts_answer() {
    let p = Parties::new();
    let messages = p.transcript(&[
        open(),
        (BUYER, "negotiate.accept_session", json!({})),
        (BUYER, "negotiate.offer", basic_offer()),
        (SELLER, "negotiate.counter", conditional_counter()),
        (BUYER, "negotiate.accept", json!({"offer_id": "off_2"})),
    ]);
    let events = Concordia
        .verify_since(SESSION, &genesis(), &trust("{}"), &log(&p, 0, &messages))
        .unwrap()
        .events;
    let answer = Concordia.answer_on_log(&events, 4, &events[3].event_hash, SELLER);
    assert!(
        matches!(answer, Some(crate::protocol::LogAnswer::Accepted { ref event, .. }) if event.seq == 5)
    );
    assert!(Concordia.answer_on_log(&events, 5, "", BUYER).is_none());

    let answer = Concordia
        .read_answer(br#"{"decision_id":"d-1","outcome":"awaiting_approvals","detail":"1 of 2","request":{}}"#, "approve", 4)
        .unwrap();
    assert_eq!(
        (answer.outcome.as_str(), answer.appended),
        ("awaiting_approvals", None)
    );
    assert!(Concordia
        .read_answer(br#"{"decision_id":"d","outcome":"maybe"}"#, "approve", 4)
        .is_err());
    assert!(Concordia.read_answer(b"<html>", "approve", 4).is_err());
}

#[test]
fn history_reads_the_transcript_and_exports_what_countersign_verify_reads() {
    let p = Parties::new();
    let (events, pinned) = verified(&p);
    let s = session(&pinned);
    let human = humanize::Humanizer::in_zone("en_GB.UTF-8", "UTC");
    let rows: Vec<_> = events
        .iter()
        .filter_map(|e| Concordia.timeline(&s, e, &human))
        .collect();
    let summaries: Vec<_> = rows.iter().map(|r| r.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "Session proposed",
            "Session accepted",
            "Offer: 160,000 USD",
            "Counter-offer: conditional, 2 clauses"
        ]
    );
    assert_eq!(rows[2].side, Some(crate::views::Side::Ours));
    assert_eq!(rows[3].side, Some(crate::views::Side::Counterparty));
    let doc = Concordia.export_record(None, &s, &events);
    let keys = concordia::Keys::from_json(&doc["keys"]).unwrap();
    let messages = doc["messages"].as_array().unwrap();
    assert!(concordia::verify_transcript(messages, &keys).is_valid());
    // The offers propose terms (what the agreed terms and the CSV read); the rest do not.
    let proposals: Vec<bool> = rows
        .iter()
        .map(|r| matches!(r.role, crate::protocol::EntryRole::Proposal(_)))
        .collect();
    assert_eq!(proposals, [false, false, true, true]);
}

#[test]
fn a_stored_concordia_session_reaches_the_inbox_the_proposal_view_and_history_as_neutral_rows() {
    let p = Parties::new();
    let (events, pinned) = verified(&p);
    let dir = tempfile::tempdir().unwrap();
    let mut store = crate::store::Store::open(&dir.path().join("db")).unwrap();
    store.insert_host(&host(), "2026-11-29T00:00:00Z").unwrap();
    let mut record = session(&pinned);
    record.pin_hash = events[3].event_hash.clone();
    let pending = pending(&events);
    store
        .transaction(|s| {
            s.insert_events("h", SESSION, &events)?;
            s.upsert_session(&record)?;
            s.replace_pending(
                "h",
                &[crate::store::PendingRecord {
                    host_id: "h".into(),
                    session_id: SESSION.into(),
                    event_hash: pending.event_hash.clone(),
                    body: serde_json::to_string(&pending).unwrap(),
                    expires_at: pending.expires_at.clone(),
                }],
            )
        })
        .unwrap();

    let page = crate::inbox::inbox_page(
        &store,
        &Default::default(),
        &Default::default(),
        time::OffsetDateTime::UNIX_EPOCH,
    )
    .unwrap();
    let item = &page.items[0];
    assert_eq!(
        (item.protocol.as_str(), item.proposal_kind),
        ("concordia", crate::views::ProposalKind::ConcordiaOffer)
    );
    assert_eq!(item.amount.as_ref().unwrap().value, "150000.00");
    assert_eq!(item.previous_amount.as_ref().unwrap().value, "160000");
    assert_eq!(item.side, crate::views::Side::Counterparty);
    assert_eq!((item.approvals_given, item.approvals_required), (0, 2));

    let view = crate::inbox::proposal_view(
        &store,
        "h",
        SESSION,
        &pending.event_hash,
        &crate::config::ApproverProfile::default(),
        datetime!(2026-11-29 12:00 UTC),
    )
    .unwrap();
    assert!(!view.expired && view.pending);
    assert_eq!(
        view.capabilities.counter_form,
        Some(crate::views::CounterForm::ConcordiaTerms)
    );
    assert!(matches!(view.detail, ProposalDetail::ConcordiaOffer(_)));
    let expired = crate::inbox::proposal_view(
        &store,
        "h",
        SESSION,
        &pending.event_hash,
        &crate::config::ApproverProfile::default(),
        datetime!(2026-12-02 00:00 UTC),
    )
    .unwrap();
    assert!(expired.expired, "the request's expiry, by the clock given");

    let human = humanize::Humanizer::in_zone("en_GB.UTF-8", "UTC");
    let detail = crate::history::session_detail(&store, &human, "h", SESSION).unwrap();
    assert_eq!(detail.row.protocol, "concordia");
    assert_eq!(detail.timeline.len(), 4);
    let ours: Vec<_> = detail
        .series
        .ours
        .iter()
        .map(|p| p.total.as_str())
        .collect();
    assert_eq!(ours, ["160000"]);
    assert!(
        detail.series.counterparty.is_empty(),
        "a conditional counter has no single amount"
    );
}
