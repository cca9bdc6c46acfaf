//! The terms record: what it holds, its canonical bytes and hash (checked
//! against values computed outside this crate), and its strict reading.

use anex::record::RecordError;
use anex::{Conversation, TermsRecord};
use serde_json::json;
use time::macros::datetime;

use crate::support::*;

/// The canonical JSON of `record()`, written by hand, and its SHA-256 as
/// Python's hashlib computes it over those bytes.
const CANONICAL: &str = r#"{"access":["bank_details","legal_name","tax_id"],"answers":"m1","conversation_id":"conv-1","promise":["no retention beyond 90 days","no sharing with third parties"],"record":"anex-terms/1","request_type":"supplier onboarding","requester":{"identity":"did:web:supplier.example","owner":"Northwind Supplies Ltd","relation":"new supplier (introduced by procurement)"},"responder":"https://host.example/a2a/org1","valid_until":"2026-12-30T12:00:00Z"}"#;
const HASH: &str = "sha256:d3893ec4c5dbdd7da21ba58e5d2fa7ee60fd39e578777c7c3b6bdb4b9936e280";

fn decided() -> anex::Terms {
    // Written in the person's order, with the requester's marks still on.
    terms(
        &["tax_id(m)", "legal_name(m)", "bank_details(m)"],
        &[
            "no sharing with third parties",
            "no retention beyond 90 days",
        ],
    )
}

fn record() -> TermsRecord {
    let c = Conversation::open(&cfp()).unwrap();
    TermsRecord::new(
        &c,
        &id("m1"),
        &decided(),
        datetime!(2026-12-30 12:00:00.75 UTC),
    )
    .unwrap()
}

#[test]
fn the_record_names_the_parties_the_answered_message_and_sorted_terms() {
    let r = record();
    assert_eq!(r.requester.identity, agent(REQUESTER));
    assert_eq!(r.requester.owner.as_str(), "Northwind Supplies Ltd");
    assert_eq!(r.responder, agent(RESPONDER));
    assert_eq!(r.answers, id("m1"));
    assert_eq!(
        r.access.iter().map(|n| n.as_str()).collect::<Vec<_>>(),
        ["bank_details", "legal_name", "tax_id"]
    );
    assert_eq!(
        r.valid_until,
        datetime!(2026-12-30 12:00:00 UTC),
        "whole seconds"
    );
    assert!(r.terms().same_as(&decided().unmarked()));
}

#[test]
fn the_canonical_bytes_and_hash_are_the_ones_computed_independently() {
    let r = record();
    assert_eq!(r.canonical(), CANONICAL);
    assert_eq!(r.hash(), HASH);
}

#[test]
fn a_time_in_another_offset_is_recorded_in_utc() {
    let c = Conversation::open(&cfp()).unwrap();
    let r = TermsRecord::new(
        &c,
        &id("m1"),
        &decided(),
        datetime!(2026-12-30 14:00 +02:00),
    )
    .unwrap();
    assert_eq!(r.hash(), HASH);
}

#[test]
fn every_field_is_bound_by_the_hash() {
    let base = record();
    let mut changed = Vec::new();
    let mut r = base.clone();
    r.access.pop();
    changed.push(r);
    let mut r = base.clone();
    r.promise.pop();
    changed.push(r);
    let mut r = base.clone();
    r.valid_until += time::Duration::seconds(1);
    changed.push(r);
    let mut r = base.clone();
    r.answers = id("m2");
    changed.push(r);
    let mut r = base.clone();
    r.requester.relation = None;
    changed.push(r);
    let mut r = base.clone();
    r.request_type = anex::Text::parse("onboarding").unwrap();
    changed.push(r);
    for r in changed {
        assert_ne!(r.hash(), base.hash(), "{r:?}");
    }
}

#[test]
fn what_is_written_reads_back_exactly() {
    let r = record();
    let back = TermsRecord::from_json(&r.to_json()).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.hash(), HASH);
}

#[test]
fn reading_refuses_anything_but_the_one_form_each_alone() {
    let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = record().to_json();
        edit(&mut v);
        TermsRecord::from_json(&v).unwrap_err().to_string()
    };
    let cases: Vec<(String, &str)> = vec![
        (
            refused(&|v| v["access"] = json!(["tax_id", "legal_name"])),
            "must be sorted",
        ),
        (
            refused(&|v| v["promise"] = json!(["b", "b"])),
            "must be sorted and free of repeats",
        ),
        (
            refused(&|v| v["extra"] = json!(1)),
            "unknown member \"extra\"",
        ),
        (
            refused(&|v| v["requester"]["email"] = json!("x")),
            "requester: has an unknown member",
        ),
        (
            refused(&|v| v["record"] = json!("anex-terms/2")),
            "record: is not",
        ),
        (
            refused(&|v| v["valid_until"] = json!("2026-12-30T12:00:00+00:00")),
            "valid_until",
        ),
        (
            refused(&|v| v["valid_until"] = json!("2026-12-30T12:00:00.5Z")),
            "valid_until",
        ),
        (
            refused(&|v| v["requester"]["relation"] = json!(null)),
            "requester.relation: is not a string",
        ),
        (
            refused(&|v| drop(v["requester"].as_object_mut().unwrap().remove("owner"))),
            "owner: is missing",
        ),
        (refused(&|v| v["access"] = json!([])), "access: is empty"),
        (refused(&|v| v["access"] = json!(["Tax"])), "access:"),
    ];
    for (message, needle) in cases {
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }
}

#[test]
fn a_record_needs_a_cfp_and_a_message_of_the_conversation() {
    let intro = from(
        true,
        "m0",
        None,
        anex::Protocol::Handshaking,
        anex::Content::Introduce {
            message: anex::Text::parse("hello").unwrap(),
            owner: None,
        },
    );
    let c = Conversation::open(&intro).unwrap();
    assert_eq!(
        TermsRecord::new(&c, &id("m0"), &decided(), datetime!(2026-12-30 12:00 UTC)),
        Err(RecordError::NoCfp)
    );
    let c = Conversation::open(&cfp()).unwrap();
    assert_eq!(
        TermsRecord::new(&c, &id("m7"), &decided(), datetime!(2026-12-30 12:00 UTC)),
        Err(RecordError::UnknownMessage("m7".into()))
    );
}
