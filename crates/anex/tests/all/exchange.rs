//! Answering a data REQUEST: INFORM with exactly the accepted items asked,
//! REFUSE or FAILURE otherwise (each case alone), and the data set file.

use anex::exchange::{answer_data_request, DataSet, ExchangeError};
use anex::{Content, Conversation, Message, Performative, TermsRecord};
use serde_json::json;
use time::macros::datetime;
use time::OffsetDateTime;

use crate::support::*;

const DATA: &str = r#"{
  "legal_name": "Fabrikam Industries Inc.",
  "tax_id": "US-12-3456789",
  "bank_details": { "iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX" },
  "ap_contact": { "email": "ap@fabrikam.example", "phone": "+1 555 0100" }
}"#;

const NOW: OffsetDateTime = datetime!(2026-10-01 12:00 UTC);

fn data() -> DataSet {
    DataSet::parse(DATA).unwrap()
}

fn accepted() -> anex::Terms {
    terms(
        &["legal_name", "tax_id", "bank_details"],
        &["no retention beyond 90 days"],
    )
}

/// An agreed conversation and its terms record, valid for 90 days from NOW.
fn agreed() -> (Conversation, TermsRecord) {
    let mut c = Conversation::open(&cfp()).unwrap();
    c.apply(&propose(false, "h1", "m1", accepted())).unwrap();
    let record =
        TermsRecord::new(&c, &id("m1"), &accepted(), NOW + time::Duration::days(90)).unwrap();
    c.apply(&accept(true, "m2", "h1", accepted())).unwrap();
    (c, record)
}

fn refused_items(m: &Message) -> (String, Vec<String>) {
    let Content::Refuse { response, items } = m.content() else {
        panic!("not a REFUSE: {m:?}")
    };
    (
        response.as_ref().map(|t| t.to_string()).unwrap_or_default(),
        items.iter().map(|i| i.to_string()).collect(),
    )
}

#[test]
fn accepted_items_are_sent_exactly_as_asked() {
    let (mut c, record) = agreed();
    let req = data_request("m3", &["tax_id", "legal_name"]);
    c.apply(&req).unwrap();
    let answer = answer_data_request(Some(&record), &req, &data(), NOW, id("h3")).unwrap();
    assert_eq!(answer.performative(), Performative::Inform);
    assert_eq!(answer.in_reply_to(), Some(&id("m3")));
    assert_eq!(
        answer.to_json()["content"],
        json!({"data": {"legal_name": "Fabrikam Industries Inc.", "tax_id": "US-12-3456789"}})
    );
    // The state machine agrees it is a legal answer.
    c.apply(&answer).unwrap();
}

#[test]
fn without_terms_everything_asked_is_refused() {
    let mut c = Conversation::open(&cfp()).unwrap();
    let req = data_request("m2", &["legal_name", "tax_id"]);
    c.apply(&req).unwrap();
    let answer = answer_data_request(None, &req, &data(), NOW, id("h2")).unwrap();
    let (why, items) = refused_items(&answer);
    assert!(why.starts_with("no terms are accepted"), "{why}");
    assert_eq!(items, ["legal_name", "tax_id"]);
    c.apply(&answer).unwrap();
}

#[test]
fn after_the_terms_end_everything_asked_is_refused() {
    let (_, record) = agreed();
    let req = data_request("m3", &["legal_name"]);
    let at_end = NOW + time::Duration::days(90);
    let answer = answer_data_request(Some(&record), &req, &data(), at_end, id("h3")).unwrap();
    let (why, items) = refused_items(&answer);
    assert_eq!(
        why,
        "the accepted terms ended at 2026-12-30T12:00:00Z, so no data is shared"
    );
    assert_eq!(items, ["legal_name"]);
    let just_before = at_end - time::Duration::seconds(1);
    let answer = answer_data_request(Some(&record), &req, &data(), just_before, id("h3")).unwrap();
    assert_eq!(answer.performative(), Performative::Inform);
}

#[test]
fn an_item_not_accepted_refuses_the_request_and_sends_nothing() {
    let (_, record) = agreed();
    let req = data_request("m3", &["legal_name", "ap_contact"]);
    let answer = answer_data_request(Some(&record), &req, &data(), NOW, id("h3")).unwrap();
    let (why, items) = refused_items(&answer);
    assert_eq!(items, ["ap_contact"]);
    assert_eq!(
        why,
        "the accepted terms do not include ap_contact; nothing was sent"
    );
    assert!(
        !answer.to_json().to_string().contains("Fabrikam"),
        "no accepted item leaks with the refusal"
    );
}

#[test]
fn an_accepted_item_without_a_value_fails_and_sends_nothing() {
    let (_, record) = agreed();
    let req = data_request("m3", &["legal_name", "bank_details"]);
    let partial = DataSet::parse(r#"{"legal_name": "Fabrikam Industries Inc."}"#).unwrap();
    let answer = answer_data_request(Some(&record), &req, &partial, NOW, id("h3")).unwrap();
    assert_eq!(answer.performative(), Performative::Failure);
    assert_eq!(
        answer.to_json()["content"],
        json!({"error": "the owner holds no value for bank_details; nothing was sent"})
    );
}

#[test]
fn an_answer_too_large_for_one_message_fails() {
    let (_, record) = agreed();
    let big = "x".repeat(100_000);
    let set =
        DataSet::parse(&json!({"legal_name": big, "tax_id": big, "bank_details": big}).to_string())
            .unwrap();
    let req = data_request("m3", &["legal_name", "tax_id", "bank_details"]);
    let answer = answer_data_request(Some(&record), &req, &set, NOW, id("h3")).unwrap();
    assert_eq!(answer.performative(), Performative::Failure);
    let one = data_request("m4", &["legal_name"]);
    let answer = answer_data_request(Some(&record), &one, &set, NOW, id("h4")).unwrap();
    assert_eq!(answer.performative(), Performative::Inform);
}

#[test]
fn a_callers_mistake_is_an_error_not_an_answer() {
    let (_, record) = agreed();
    assert!(matches!(
        answer_data_request(Some(&record), &cfp(), &data(), NOW, id("h9")),
        Err(ExchangeError::NotADataRequest(_))
    ));
    let mut v = data_request("m3", &["legal_name"]).to_json();
    v["conversation_id"] = json!("conv-2");
    let other = anex::parse_value(&v).unwrap();
    assert!(matches!(
        answer_data_request(Some(&record), &other, &data(), NOW, id("h9")),
        Err(ExchangeError::OtherConversation { .. })
    ));
}

#[test]
fn the_data_set_is_read_strictly() {
    let d = data();
    assert_eq!(d.names().count(), 4);
    assert_eq!(
        d.get(&anex::ItemName::parse("tax_id").unwrap()),
        Some(&json!("US-12-3456789"))
    );
    let refusal = |text: &str| DataSet::parse(text).unwrap_err().to_string();
    assert!(refusal(r#"{"tax_id": 123456789}"#).contains("holds the number 123456789"));
    assert!(refusal(r#"{"Tax ID": "x"}"#).contains("names \"Tax ID\""));
    assert!(refusal(r#"["tax_id"]"#).contains("is not a JSON object"));
    assert!(refusal(r#"{"a": "x", "a": "y"}"#).contains("appears twice"));
    assert!(refusal(r#"{"a": [[[[["x"]]]]]}"#).contains("nested deeper"));
}
