//! The ANEX slot's pure half on conversations written here: each check of
//! the log alone (a message that is not ANEX, another conversation's, an id
//! used twice, the wrong `after`, a rewritten or missing stored message),
//! the ask located with the standing proposal it answers, the counter
//! editor's check, and what the record shows became of an ask.

use serde_json::{json, Value};

use super::log::{message_hash, since, whole};
use super::{ask, record};
use crate::protocol::{Head, LogAnswer, PendingProposal};
use crate::store::StoredEvent;

const SESSION: &str = "anex:ctx_1";
const US: &str = "https://host.example/a2a/acme";
const THEM: &str = "did:web:supplier.example";

fn message(performative: &str, from: &str, id: &str, reply: Option<&str>, content: Value) -> Value {
    let to = if from == US { THEM } else { US };
    let mut m = json!({
        "performative": performative, "sender": from, "receiver": to, "content": content,
        "language": "JSON", "ontology": "ANEX-Ontology", "protocol": "ANEX-Negotiation",
        "conversation_id": "c1", "message_id": id,
    });
    if let Some(r) = reply {
        m["in_reply_to"] = json!(r);
    }
    m
}

fn cfp() -> Value {
    message(
        "CFP",
        THEM,
        "m1",
        None,
        json!({"request": {
            "identity": THEM, "owner": "Northwind", "request_type": "onboarding",
            "access": ["legal_name(m)", "bank_details(m)", "ap_contact"], "promise": ["no resale"],
        }}),
    )
}

fn propose(id: &str, from: &str, reply: &str, access: &[&str], promise: &[&str]) -> Value {
    message(
        "PROPOSE",
        from,
        id,
        Some(reply),
        json!({"response": {"access": access, "promise": promise}}),
    )
}

fn log(after: u64, messages: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "protocol": "anex", "session_id": SESSION, "conversation_id": "c1", "phase": "negotiating",
        "after": after, "messages": messages, "receipts": [],
    }))
    .unwrap()
}

fn genesis() -> Head {
    Head {
        seq: 0,
        hash: String::new(),
    }
}

fn stored(messages: &[Value]) -> Vec<StoredEvent> {
    since(SESSION, &genesis(), &log(0, messages))
        .unwrap()
        .events
}

fn pending(events: &[StoredEvent], seq: u64) -> PendingProposal {
    let e = &events[seq as usize - 1];
    PendingProposal {
        seq,
        event_hash: e.event_hash.clone(),
        kind: e.kind.clone(),
        actor: e.actor.clone(),
        expires_at: "2027-01-01T00:00:00Z".into(),
        approvals: Vec::new(),
        approvals_required: 1,
        draft: None,
        held_reason: None,
        request_id: None,
        action: None,
        amount: None,
        threshold: None,
        anex: None,
        chain: None,
    }
}

#[test]
fn messages_since_the_pin_are_stored_with_their_hash_and_the_head_moves() {
    let messages = [
        cfp(),
        propose(
            "h1",
            US,
            "m1",
            &["legal_name", "bank_details"],
            &["no resale"],
        ),
    ];
    let checked = since(SESSION, &genesis(), &log(0, &messages)).unwrap();
    assert!(checked.dispute.is_none());
    assert_eq!(checked.events.len(), 2);
    assert_eq!(checked.events[1].seq, 2);
    assert_eq!(checked.events[1].kind, "PROPOSE");
    assert_eq!(checked.events[1].actor, US);
    assert_eq!(
        checked.head,
        Head {
            seq: 2,
            hash: message_hash(&messages[1])
        }
    );
    assert!(message_hash(&messages[1]).starts_with("sha256:"));
}

#[test]
fn each_check_of_the_log_alone() {
    // Not an ANEX message.
    let mut bad = cfp();
    bad["performative"] = json!("PLEASE-APPROVE");
    let d = since(SESSION, &genesis(), &log(0, &[bad]))
        .unwrap()
        .dispute
        .unwrap();
    assert_eq!((d.seq, d.checks.clone()), (1, vec!["message".to_owned()]));
    assert!(d.detail.contains("not an ANEX message"), "{}", d.detail);
    // Another conversation's message.
    let mut other = cfp();
    other["conversation_id"] = json!("c2");
    let d = since(SESSION, &genesis(), &log(0, &[other]))
        .unwrap()
        .dispute
        .unwrap();
    assert!(d.detail.contains("belongs to conversation"), "{}", d.detail);
    // An id used twice.
    let twice = [
        cfp(),
        propose("m1", US, "m0", &["legal_name"], &["no resale"]),
    ];
    let d = since(SESSION, &genesis(), &log(0, &twice))
        .unwrap()
        .dispute
        .unwrap();
    assert_eq!(d.seq, 2);
    assert!(d.detail.contains("used earlier"), "{}", d.detail);
    // Another `after` than the pin: refused, nothing to store.
    assert!(since(SESSION, &genesis(), &log(1, &[cfp()])).is_err());
    // Another session's log.
    let wrong = serde_json::to_vec(
        &json!({"protocol": "anex", "session_id": "anex:other", "conversation_id": "c1",
        "phase": "x", "after": 0, "messages": [], "receipts": []}),
    )
    .unwrap();
    assert!(since(SESSION, &genesis(), &wrong).is_err());
}

#[test]
fn a_whole_conversation_is_compared_with_the_stored_copy() {
    let messages = [
        cfp(),
        propose(
            "h1",
            US,
            "m1",
            &["legal_name", "bank_details"],
            &["no resale"],
        ),
    ];
    let copy = stored(&messages);
    let pin = Head {
        seq: 2,
        hash: copy[1].event_hash.clone(),
    };
    let more = [
        messages[0].clone(),
        messages[1].clone(),
        message(
            "ACCEPT-PROPOSAL",
            THEM,
            "m2",
            Some("h1"),
            json!({"terms": {"access": ["legal_name", "bank_details"], "promise": ["no resale"]}}),
        ),
    ];
    let checked = whole(SESSION, &pin, &log(0, &more), &copy).unwrap();
    assert!(checked.dispute.is_none());
    assert_eq!(
        checked.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![3]
    );
    // The first message rewritten (the ask widened): disputed at 1.
    let mut rewritten = more.clone();
    rewritten[0]["content"]["request"]["access"] =
        json!(["legal_name(m)", "bank_details(m)", "ap_contact", "passport"]);
    let d = whole(SESSION, &pin, &log(0, &rewritten), &copy)
        .unwrap()
        .dispute
        .unwrap();
    assert_eq!((d.seq, d.checks), (1, vec!["pin".to_owned()]));
    // A stored message missing.
    let d = whole(SESSION, &pin, &log(0, &more[..1]), &copy)
        .unwrap()
        .dispute
        .unwrap();
    assert_eq!(d.seq, 2);
    assert!(d.detail.contains("missing"), "{}", d.detail);
    // A new message reusing an old id.
    let reuse = [
        more[0].clone(),
        more[1].clone(),
        propose("m1", THEM, "h1", &["legal_name"], &["no resale"]),
    ];
    let d = whole(SESSION, &pin, &log(0, &reuse), &copy)
        .unwrap()
        .dispute
        .unwrap();
    assert_eq!(d.seq, 3);
}

#[test]
fn the_ask_is_located_with_the_standing_proposal_it_answers() {
    let events = stored(&[
        cfp(),
        propose(
            "h1",
            US,
            "m1",
            &["legal_name", "bank_details"],
            &["no resale", "no sharing"],
        ),
        propose(
            "m2",
            THEM,
            "h1",
            &["legal_name(m)", "bank_details(m)"],
            &["no resale"],
        ),
    ]);
    let first = ask::locate(&events, &pending(&events, 1)).unwrap();
    assert!(first.previous.is_none());
    let second = ask::locate(&events, &pending(&events, 3)).unwrap();
    assert_eq!(second.previous.as_ref().unwrap().seq, 2);
    let view = ask::view(&events, &pending(&events, 3), &second);
    assert!(!view.policy_known);
    assert_eq!(
        view.items
            .iter()
            .map(|i| (i.item.as_str(), i.required, i.within_policy))
            .collect::<Vec<_>>(),
        vec![("legal_name", true, None), ("bank_details", true, None)]
    );
    let diff = view.diff.unwrap();
    assert_eq!(diff.promises_removed, vec!["no sharing".to_owned()]);
    assert_eq!(diff.required_changed.len(), 2);
    assert_eq!(view.requester.owner, "Northwind");
    // A message that is not an ask is not located.
    let host_propose = pending(&events, 2);
    assert!(ask::locate(&events[..1], &host_propose).is_none());
}

#[test]
fn the_counter_editor_names_each_problem() {
    let events = stored(&[cfp()]);
    let hash = &events[0].event_hash;
    let check = |counter: Value| {
        ask::check_counter(&events, hash, &counter, &crate::protocol::tests_at()).unwrap()
    };
    let ok = check(
        json!({"access": ["legal_name", "bank_details"], "promise": ["no resale", "no sharing"]}),
    );
    assert!(ok.ok, "{:?}", ok.errors);
    let pointless =
        check(json!({"access": ["legal_name", "ap_contact"], "promise": ["no resale"]}));
    assert!(!pointless.ok);
    assert!(
        pointless.errors[0].message.contains("bank_details")
            && pointless.errors[0].message.contains("pointless")
    );
    let unreadable = check(json!({"access": "legal_name"}));
    assert!(!unreadable.ok && unreadable.diff.is_none());
    assert!(ask::check_counter(
        &events,
        "sha256:nope",
        &json!({}),
        &crate::protocol::tests_at()
    )
    .is_none());
}

#[test]
fn what_became_of_an_ask_is_read_from_the_record() {
    let asked = cfp();
    let as_asked = propose(
        "h1",
        US,
        "m1",
        &["legal_name", "bank_details", "ap_contact"],
        &["no resale"],
    );
    let events = stored(&[asked.clone(), as_asked]);
    assert!(matches!(
        ask::answer_on_log(&events, 1, THEM),
        Some(LogAnswer::Accepted { .. })
    ));
    let narrower = propose(
        "h1",
        US,
        "m1",
        &["legal_name", "bank_details"],
        &["no resale"],
    );
    let events = stored(&[asked.clone(), narrower]);
    assert!(matches!(
        ask::answer_on_log(&events, 1, THEM),
        Some(LogAnswer::Answered {
            action: "counter",
            ..
        })
    ));
    let refuse = message("REFUSE", US, "h1", Some("m1"), json!({"response": "no"}));
    let events = stored(&[asked.clone(), refuse]);
    assert!(matches!(
        ask::answer_on_log(&events, 1, THEM),
        Some(LogAnswer::Answered {
            action: "decline",
            ..
        })
    ));
    assert!(ask::answer_on_log(&stored(&[asked]), 1, THEM).is_none());
}

#[test]
fn timeline_rows_write_the_terms_and_carry_them_as_data() {
    let mut asked = cfp();
    asked["content"]["request"]["promise"] = json!(["=HYPERLINK(\"x\")"]);
    let events = stored(&[asked]);
    let row = record::timeline(&events[0], THEM).unwrap();
    assert_eq!(row.summary, "Asks for legal_name (required), bank_details (required), ap_contact; promises: =HYPERLINK(\"x\") (purpose: onboarding)");
    let crate::protocol::EntryRole::Proposal(terms) = &row.role else {
        panic!("an ask proposes terms: {:?}", row.role)
    };
    assert_eq!(terms["promises"], json!(["=HYPERLINK(\"x\")"]));
    assert_eq!(terms["data"]["legal_name"], "required");
    assert_eq!(terms["data"]["ap_contact"], "optional");
}
