//! "No input may panic", over generated input: arbitrary bytes, arbitrary
//! JSON, valid messages with one node replaced, random conversations, and
//! every other reader of outside input. Beyond not panicking, what is read
//! round-trips, and every NOT-UNDERSTOOD this crate writes, it can read.

use anex::message::Query;
use anex::{parse, parse_value, Content, Conversation, Message, Performative, Protocol};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::*;

/// Strings that steer generated JSON into the message's own shapes.
fn vocabulary() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("CFP"),
        Just("PROPOSE"),
        Just("INFORM"),
        Just("REQUEST"),
        Just("ACCEPT-PROPOSAL"),
        Just("NOT-UNDERSTOOD"),
        Just("ANEX-Negotiation"),
        Just("ANEX-Data-Exchange"),
        Just("ANEX-Handshaking"),
        Just("JSON"),
        Just("ANEX-Ontology"),
        Just("legal_name(m)"),
        Just("tax_id"),
        Just("no resale"),
        Just("terms_in_force"),
        Just(REQUESTER),
        Just(RESPONDER),
        Just("conv-1"),
        Just("m1"),
        Just("(m)"),
        Just("\u{202E}"),
        Just(""),
    ]
    .prop_map(str::to_owned)
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,24}".prop_map(Value::String),
        vocabulary().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        let key = prop_oneof![
            "[a-z_]{1,12}".boxed(),
            prop_oneof![
                Just("performative"),
                Just("sender"),
                Just("receiver"),
                Just("content"),
                Just("language"),
                Just("ontology"),
                Just("protocol"),
                Just("conversation_id"),
                Just("message_id"),
                Just("in_reply_to"),
                Just("request"),
                Just("response"),
                Just("terms"),
                Just("access"),
                Just("promise"),
                Just("data"),
                Just("query"),
                Just("answer"),
                Just("identity"),
                Just("owner"),
                Just("request_type"),
            ]
            .prop_map(str::to_owned)
            .boxed(),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Valid messages to mutate.
fn seeds() -> Vec<Value> {
    vec![
        cfp_json(),
        propose(
            false,
            "h1",
            "m1",
            terms(&["legal_name", "tax_id"], &["no resale"]),
        )
        .to_json(),
        accept(true, "m2", "h1", terms(&["legal_name"], &[])).to_json(),
        json!({"performative": "INFORM", "sender": RESPONDER, "receiver": REQUESTER,
               "content": {"data": {"legal_name": "Fabrikam", "ap_contact": {"email": "ap@x.example"}}},
               "language": "JSON", "ontology": "ANEX-Ontology", "protocol": "ANEX-Data-Exchange",
               "conversation_id": "conv-1", "message_id": "h3", "in_reply_to": "m3"}),
        json!({"performative": "REQUEST", "sender": REQUESTER, "receiver": RESPONDER,
               "content": {"access": ["legal_name"]}, "language": "JSON", "ontology": "ANEX-Ontology",
               "protocol": "ANEX-Data-Exchange", "conversation_id": "conv-1", "message_id": "m3"}),
    ]
}

/// Replaces the node that `path` picks with `replacement`.
fn replace_somewhere(doc: &mut Value, path: &[usize], replacement: Value) {
    let Some((step, rest)) = path.split_first() else {
        *doc = replacement;
        return;
    };
    match doc {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(step % map.len()).cloned().unwrap();
            if rest.is_empty() && step % 3 == 0 {
                map.remove(&key);
            } else {
                replace_somewhere(map.get_mut(&key).unwrap(), rest, replacement);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let n = items.len();
            replace_somewhere(&mut items[step % n], rest, replacement);
        }
        _ => *doc = replacement,
    }
}

/// What must hold of any read: a message round-trips; an unreadable one
/// has a reason and an answer that is itself a readable NOT-UNDERSTOOD.
fn check_read(result: Result<Message, anex::Unreadable>) {
    match result {
        Ok(m) => {
            let again = parse_value(&m.to_json()).expect("what was read is written readably");
            assert_eq!(again, m);
        }
        Err(e) => {
            assert!(!e.reason.is_empty());
            let answer = e.answer(
                agent(RESPONDER),
                agent(REQUESTER),
                id("h-nu"),
                id("fallback"),
            );
            let back = parse_value(&answer.to_json()).expect("our NOT-UNDERSTOOD is readable");
            assert_eq!(back.performative(), Performative::NotUnderstood);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_read(parse(&bytes));
    }

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        check_read(parse_value(&value));
        let text = serde_json::to_vec(&value).unwrap();
        check_read(parse(&text));
    }

    #[test]
    fn a_valid_message_with_one_node_replaced_never_panics(
        seed in 0usize..5,
        path in prop::collection::vec(any::<usize>(), 0..6),
        replacement in any_json(),
    ) {
        let mut doc = seeds()[seed].clone();
        replace_somewhere(&mut doc, &path, replacement);
        check_read(parse_value(&doc));
    }

    #[test]
    fn every_other_reader_of_outside_input_never_panics(value in any_json()) {
        let text = value.to_string();
        let _ = anex::Policy::parse(&text);
        let _ = anex::exchange::DataSet::parse(&text);
        let _ = anex::TermsRecord::from_json(&value);
        let _ = anex::v02::from_authorization_details(&value);
        let _ = anex::v02::from_odrl(&value);
        let _ = anex::Terms::from_wire(&[text.as_str()], &[text.as_str()]);
    }
}

/// A small alphabet of moves, so random sequences reach every phase.
fn move_message(kind: u8, requester: bool, n: usize, reply: Option<usize>) -> Option<Message> {
    let mid = format!("{}{n}", if requester { "m" } else { "h" });
    let reply = reply.map(|r| format!("{}{r}", if requester { "h" } else { "m" }));
    let t = terms(&["legal_name", "tax_id"], &["no resale"]);
    let (protocol, content) = match kind % 11 {
        0 => (Protocol::Negotiation, Content::Propose(t)),
        1 => (Protocol::Negotiation, Content::Accept(t)),
        2 => (Protocol::Negotiation, Content::Reject { reason: None }),
        3 => (
            Protocol::Negotiation,
            Content::Refuse {
                response: None,
                items: vec![],
            },
        ),
        4 => (
            Protocol::DataExchange,
            Content::DataRequest {
                access: vec![anex::ItemName::parse("tax_id").unwrap()],
            },
        ),
        5 => (
            Protocol::DataExchange,
            Content::Data([(anex::ItemName::parse("tax_id").unwrap(), json!("x"))].into()),
        ),
        6 => (
            Protocol::Negotiation,
            Content::QueryIf {
                query: Query::TermsInForce,
            },
        ),
        7 => (
            Protocol::Negotiation,
            Content::Answer {
                query: Query::TermsInForce,
                answer: true,
            },
        ),
        8 => (
            Protocol::Negotiation,
            Content::Failure {
                error: anex::Text::parse("x").unwrap(),
            },
        ),
        9 => (Protocol::Handshaking, Content::Agree { response: None }),
        _ => (Protocol::Termination, Content::Cancel { reason: None }),
    };
    let reply = reply.filter(|r| *r != mid);
    Some(from(requester, &mid, reply.as_deref(), protocol, content))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_conversations_never_panic_and_check_agrees_with_apply(
        moves in prop::collection::vec((any::<u8>(), any::<bool>(), prop::option::of(0usize..6)), 0..40)
    ) {
        let mut c = Conversation::open(&cfp()).unwrap();
        for (n, (kind, requester, reply)) in moves.into_iter().enumerate() {
            let Some(m) = move_message(kind, requester, n, reply) else { continue };
            let checked = c.check(&m);
            let before = c.clone();
            let applied = c.apply(&m);
            prop_assert_eq!(checked.is_ok(), applied.is_ok());
            if applied.is_err() {
                prop_assert_eq!(&c, &before);
            }
            if let Some(agreed) = c.agreed() {
                prop_assert!(!agreed.has_marks());
            }
        }
    }
}
