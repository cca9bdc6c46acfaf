//! The phases of §4.1: the full flow, the iterated negotiation, and each
//! sequence rule alone (the message it names, the rule it reports, and a
//! conversation left unchanged).

use anex::conversation::{Closure, Question};
use anex::message::Query;
use anex::{Content, Conversation, Message, Phase, Protocol, Role, Rule};
use serde_json::json;

use crate::support::*;

fn text(s: &str) -> anex::Text {
    anex::Text::parse(s).unwrap()
}

fn item(s: &str) -> anex::ItemName {
    anex::ItemName::parse(s).unwrap()
}

fn intro(from_requester: bool, mid: &str, reply: Option<&str>) -> Message {
    from(
        from_requester,
        mid,
        reply,
        Protocol::Handshaking,
        Content::Introduce {
            message: text("onboarding agent [PA*]"),
            owner: None,
        },
    )
}

fn engage(mid: &str) -> Message {
    from(
        true,
        mid,
        None,
        Protocol::Handshaking,
        Content::Engage {
            request: text("supplier onboarding; ok to continue?"),
        },
    )
}

fn agree(mid: &str, reply: &str) -> Message {
    from(
        false,
        mid,
        Some(reply),
        Protocol::Handshaking,
        Content::Agree { response: None },
    )
}

fn inform(mid: &str, reply: &str, items: &[&str]) -> Message {
    from(
        false,
        mid,
        Some(reply),
        Protocol::DataExchange,
        Content::Data(items.iter().map(|s| (item(s), json!("value"))).collect()),
    )
}

fn narrowed() -> anex::Terms {
    terms(
        &["legal_name", "tax_id", "bank_details"],
        &[
            "no retention beyond 90 days",
            "no sharing with third parties",
            "no resale",
        ],
    )
}

/// CFP m1, the responder's PROPOSE h1, the requester's ACCEPT m2.
fn agreed() -> Conversation {
    let mut c = Conversation::open(&cfp()).unwrap();
    c.apply(&propose(false, "h1", "m1", narrowed())).unwrap();
    c.apply(&accept(true, "m2", "h1", narrowed())).unwrap();
    c
}

/// The rule `m` breaks in `c`; also checks `c` was left unchanged.
fn broken(c: &mut Conversation, m: &Message) -> Rule {
    let before = c.clone();
    assert_eq!(
        c.check(m).map_err(|e| e.rule),
        c.clone().apply(m).map_err(|e| e.rule)
    );
    let err = c.apply(m).expect_err("a legal step");
    assert_eq!(&err.message_id, m.message_id());
    assert_eq!(err.performative, m.performative());
    assert_eq!(*c, before, "a refused message changed the conversation");
    err.rule
}

#[test]
fn the_whole_flow_walks_every_phase() {
    let mut c = Conversation::open(&intro(true, "m0", None)).unwrap();
    assert_eq!(c.phase(), &Phase::Opening);
    assert_eq!(c.requester(), &agent(REQUESTER));
    c.apply(&intro(false, "h0", Some("m0"))).unwrap();
    c.apply(&engage("m1")).unwrap();
    assert_eq!(c.phase(), &Phase::EngagementAsked { request: id("m1") });
    c.apply(&agree("h1", "m1")).unwrap();
    assert_eq!(c.phase(), &Phase::Engaged);
    let mut cfp = cfp_json();
    cfp["message_id"] = json!("m2");
    cfp["in_reply_to"] = json!("h1");
    c.apply(&anex::parse_value(&cfp).unwrap()).unwrap();
    assert!(matches!(c.phase(), Phase::Negotiating { proposals: 0, .. }));
    c.apply(&propose(false, "h2", "m2", narrowed())).unwrap();
    c.apply(&accept(true, "m3", "h2", narrowed())).unwrap();
    assert_eq!(
        c.phase(),
        &Phase::Agreed {
            terms: narrowed(),
            proposal: id("h2"),
            acceptance: id("m3")
        }
    );
    c.apply(&data_request("m4", &["tax_id", "legal_name"]))
        .unwrap();
    assert_eq!(c.open_questions().len(), 1);
    c.apply(&inform("h4", "m4", &["legal_name", "tax_id"]))
        .unwrap();
    assert!(c.open_questions().is_empty());
    c.apply(&from(
        true,
        "m5",
        None,
        Protocol::Termination,
        Content::Terminate {
            message: text("Session terminated."),
        },
    ))
    .unwrap();
    assert_eq!(
        c.phase(),
        &Phase::Closed {
            by: Role::Requester,
            closure: Closure::Terminated,
            message: Some(id("m5"))
        }
    );
    assert_eq!(c.len(), 10);
}

#[test]
fn conditions_before_engaging_lead_back_to_a_request() {
    let mut c = Conversation::open(&engage("m1")).unwrap();
    c.apply(&from(
        false,
        "h1",
        Some("m1"),
        Protocol::Handshaking,
        Content::Conditions {
            modification: text("present a credential"),
        },
    ))
    .unwrap();
    assert_eq!(c.phase(), &Phase::ConditionsAsked { proposal: id("h1") });
    c.apply(&intro(true, "m2", Some("h1"))).unwrap();
    c.apply(&engage("m3")).unwrap();
    c.apply(&agree("h3", "m3")).unwrap();
    assert_eq!(c.phase(), &Phase::Engaged);
}

#[test]
fn an_iterated_negotiation_accepts_the_requesters_counter_without_marks() {
    let mut c = Conversation::open(&cfp()).unwrap();
    c.apply(&propose(
        false,
        "h1",
        "m1",
        terms(&["legal_name"], &["no resale"]),
    ))
    .unwrap();
    let counter = terms(&["legal_name(m)", "tax_id(m)"], &["no resale"]);
    c.apply(&propose(true, "m2", "h1", counter.clone()))
        .unwrap();
    assert_eq!(
        c.ask(),
        Some(&counter),
        "the requester's counter is its new ask"
    );
    c.apply(&accept(false, "h2", "m2", counter.unmarked()))
        .unwrap();
    assert_eq!(c.agreed(), Some(&counter.unmarked()));
}

#[test]
fn a_refused_cfp_a_rejection_a_cancel_and_a_withdrawal_close_it() {
    let mut c = Conversation::open(&cfp()).unwrap();
    c.apply(&from(
        false,
        "h1",
        Some("m1"),
        Protocol::Negotiation,
        Content::Refuse {
            response: None,
            items: vec![],
        },
    ))
    .unwrap();
    assert!(matches!(
        c.phase(),
        Phase::Closed {
            closure: Closure::Refused,
            by: Role::Responder,
            ..
        }
    ));

    let mut c = Conversation::open(&cfp()).unwrap();
    c.apply(&propose(false, "h1", "m1", narrowed())).unwrap();
    c.apply(&from(
        true,
        "m2",
        Some("h1"),
        Protocol::Negotiation,
        Content::Reject { reason: None },
    ))
    .unwrap();
    assert!(matches!(
        c.phase(),
        Phase::Closed {
            closure: Closure::Rejected,
            by: Role::Requester,
            ..
        }
    ));
    assert_eq!(
        broken(&mut c, &data_request("m3", &["tax_id"])),
        Rule::Closed {
            closure: Closure::Rejected
        }
    );

    let mut c = agreed();
    c.apply(&from(
        false,
        "h9",
        None,
        Protocol::DataExchange,
        Content::Cancel { reason: None },
    ))
    .unwrap();
    assert_eq!(c.agreed(), None, "a cancel revokes the accepted terms");

    let mut c = agreed();
    c.apply(&data_request("m3", &["tax_id"])).unwrap();
    c.withdraw(Role::Requester);
    assert!(matches!(
        c.phase(),
        Phase::Closed {
            closure: Closure::Withdrawn,
            message: None,
            ..
        }
    ));
    assert!(c.open_questions().is_empty());
}

#[test]
fn the_opener_rule() {
    let first = propose(true, "m1", "m0", narrowed());
    let err = Conversation::open(&first).unwrap_err();
    assert!(matches!(err.rule, Rule::UnknownReplyTarget { .. }), "{err}");
    let err = Conversation::open(&data_request("m1", &["tax_id"])).unwrap_err();
    assert_eq!(err.rule, Rule::Opener);
    assert_eq!(
        err.to_string(),
        "message m1 (REQUEST): a conversation opens with an introduction (INFORM), an engagement REQUEST or a CFP (§4.3, §4.4)"
    );
    let mut v = cfp_json();
    v["receiver"] = json!(REQUESTER);
    let err = Conversation::open(&anex::parse_value(&v).unwrap()).unwrap_err();
    assert_eq!(err.rule, Rule::SelfAddressed);
}

#[test]
fn the_parties_and_ids_rules() {
    let mut c = Conversation::open(&cfp()).unwrap();
    let mut v = propose(false, "h1", "m1", narrowed()).to_json();
    v["conversation_id"] = json!("conv-2");
    assert_eq!(
        broken(&mut c, &anex::parse_value(&v).unwrap()),
        Rule::WrongConversation {
            expected: id(CONVERSATION)
        }
    );
    let mut v = propose(false, "h1", "m1", narrowed()).to_json();
    v["sender"] = json!("did:web:intruder.example");
    assert_eq!(
        broken(&mut c, &anex::parse_value(&v).unwrap()),
        Rule::NotAParty {
            sender: agent("did:web:intruder.example")
        }
    );
    let mut v = propose(false, "h1", "m1", narrowed()).to_json();
    v["receiver"] = json!("did:web:someone.example");
    assert_eq!(
        broken(&mut c, &anex::parse_value(&v).unwrap()),
        Rule::WrongReceiver {
            expected: agent(REQUESTER)
        }
    );
    // "m1" is the CFP's id: reused, whatever else the message says.
    let reused = from(
        false,
        "m1",
        None,
        Protocol::Negotiation,
        Content::QueryIf {
            query: Query::TermsInForce,
        },
    );
    assert_eq!(broken(&mut c, &reused), Rule::DuplicateMessageId);
    assert_eq!(
        broken(&mut c, &propose(false, "h1", "zz", narrowed())),
        Rule::UnknownReplyTarget {
            in_reply_to: id("zz")
        }
    );
}

#[test]
fn replies_name_what_they_answer() {
    let mut c = Conversation::open(&cfp()).unwrap();
    assert_eq!(
        broken(
            &mut c,
            &from(
                false,
                "h1",
                None,
                Protocol::Negotiation,
                Content::Propose(narrowed())
            )
        ),
        Rule::ReplyRequired
    );
    // A message cannot answer its own side's message.
    c.apply(&from(
        true,
        "m2",
        None,
        Protocol::Negotiation,
        Content::QueryIf {
            query: Query::TermsInForce,
        },
    ))
    .unwrap();
    assert_eq!(
        broken(&mut c, &propose(true, "m3", "m1", narrowed())),
        Rule::UnknownReplyTarget {
            in_reply_to: id("m1")
        }
    );
    let rule = broken(&mut c, &inform("h2", "m1", &["tax_id"]));
    assert!(
        matches!(
            rule,
            Rule::CannotAnswer {
                answered: anex::Performative::Cfp,
                ..
            }
        ),
        "{rule}"
    );
    assert_eq!(
        broken(
            &mut c,
            &from(
                false,
                "h3",
                None,
                Protocol::Negotiation,
                Content::Failure { error: text("x") }
            )
        ),
        Rule::ReplyRequired
    );
    // FAILURE answers any message of the other side, and changes nothing else.
    c.apply(&from(
        false,
        "h3",
        Some("m1"),
        Protocol::Negotiation,
        Content::Failure { error: text("x") },
    ))
    .unwrap();
    assert!(c.standing().is_some_and(|s| s.id == id("m1")));
}

#[test]
fn the_sides_and_phases_rules() {
    // Only the requester sends a CFP.
    let mut c = Conversation::open(&engage("m1")).unwrap();
    c.apply(&agree("h1", "m1")).unwrap();
    let mut v = cfp_json();
    v["sender"] = json!(RESPONDER);
    v["receiver"] = json!(REQUESTER);
    v["content"]["request"]["identity"] = json!(RESPONDER);
    v["message_id"] = json!("h2");
    assert_eq!(
        broken(&mut c, &anex::parse_value(&v).unwrap()),
        Rule::WrongSide {
            may: Role::Requester
        }
    );
    // A CFP waits for the answer to the engagement request.
    let mut c = Conversation::open(&engage("m1")).unwrap();
    let mut v = cfp_json();
    v["message_id"] = json!("m2");
    assert!(matches!(
        broken(&mut c, &anex::parse_value(&v).unwrap()),
        Rule::NotNow {
            phase: "engagement asked",
            ..
        }
    ));
    // One CFP per conversation.
    let mut c = Conversation::open(&cfp()).unwrap();
    let mut v = cfp_json();
    v["message_id"] = json!("m2");
    assert!(matches!(
        broken(&mut c, &anex::parse_value(&v).unwrap()),
        Rule::NotNow {
            phase: "negotiating",
            ..
        }
    ));
    // A side does not answer its own proposal.
    c.apply(&propose(false, "h1", "m1", narrowed())).unwrap();
    let mut c2 = c.clone();
    c2.apply(&from(
        true,
        "m2",
        None,
        Protocol::Negotiation,
        Content::QueryIf {
            query: Query::TermsInForce,
        },
    ))
    .unwrap();
    assert!(matches!(
        broken(&mut c2, &accept(false, "h3", "m2", narrowed())),
        Rule::CannotAnswer { .. }
    ));
    // Introductions and engagement belong before the negotiation.
    assert!(matches!(
        broken(&mut c, &intro(true, "m9", None)),
        Rule::NotNow { .. }
    ));
    assert!(matches!(broken(&mut c, &engage("m9")), Rule::NotNow { .. }));
    // ACCEPT and REJECT answer a negotiation.
    let mut c = Conversation::open(&intro(true, "m0", None)).unwrap();
    assert!(matches!(
        broken(&mut c, &accept(false, "h1", "m0", narrowed())),
        Rule::NotNow {
            phase: "opening",
            ..
        }
    ));
}

#[test]
fn the_standing_proposal_rules() {
    let mut c = Conversation::open(&cfp()).unwrap();
    assert_eq!(
        broken(&mut c, &accept(false, "h1", "m1", narrowed())),
        Rule::CfpNotAcceptable
    );
    c.apply(&propose(false, "h1", "m1", narrowed())).unwrap();
    c.apply(&propose(true, "m2", "h1", terms(&["legal_name(m)"], &[])))
        .unwrap();
    c.apply(&propose(
        false,
        "h3",
        "m2",
        terms(&["legal_name"], &["no resale"]),
    ))
    .unwrap();
    assert_eq!(
        broken(&mut c, &accept(true, "m4", "h1", narrowed())),
        Rule::NotStanding { standing: id("h3") }
    );
    assert_eq!(
        broken(
            &mut c,
            &accept(true, "m4", "h3", terms(&["legal_name(m)"], &["no resale"]))
        ),
        Rule::MarksOutOfPlace
    );
    let rule = broken(
        &mut c,
        &accept(true, "m4", "h3", terms(&["legal_name"], &[])),
    );
    assert_eq!(
        rule,
        Rule::AcceptDiffers {
            diff: "promises removed: \"no resale\"".into()
        }
    );
    assert_eq!(
        broken(&mut c, &propose(true, "m4", "h1", narrowed())),
        Rule::NotStanding { standing: id("h3") },
    );
    assert!(matches!(
        broken(&mut c, &propose(false, "h4", "m2", narrowed())),
        Rule::NotNow {
            instead: "the other side's answer is awaited",
            ..
        }
    ));
}

#[test]
fn a_responders_proposal_carries_no_marks() {
    let mut c = Conversation::open(&cfp()).unwrap();
    assert_eq!(
        broken(
            &mut c,
            &propose(false, "h1", "m1", terms(&["legal_name(m)"], &[]))
        ),
        Rule::MarksOutOfPlace
    );
}

#[test]
fn the_proposal_limit() {
    let mut c = Conversation::open(&cfp()).unwrap();
    let mut last = "m1".to_owned();
    for n in 0..anex::limits::MAX_PROPOSALS {
        let requester = n % 2 == 1;
        let mid = format!("p{n}");
        c.apply(&propose(
            requester,
            &mid,
            &last,
            terms(&["legal_name"], &[]),
        ))
        .unwrap();
        last = mid;
    }
    let requester = anex::limits::MAX_PROPOSALS % 2 == 1;
    assert_eq!(
        broken(
            &mut c,
            &propose(requester, "p-last", &last, terms(&["legal_name"], &[]))
        ),
        Rule::ProposalLimit
    );
}

#[test]
fn data_is_shared_only_under_agreed_terms_and_exactly_as_asked() {
    let mut c = Conversation::open(&cfp()).unwrap();
    c.apply(&data_request("m2", &["tax_id"])).unwrap();
    assert_eq!(
        broken(&mut c, &inform("h2", "m2", &["tax_id"])),
        Rule::NoTerms
    );
    // Before terms the request is refused, which answers it.
    c.apply(&from(
        false,
        "h3",
        Some("m2"),
        Protocol::DataExchange,
        Content::Refuse {
            response: None,
            items: vec![item("tax_id")],
        },
    ))
    .unwrap();
    assert!(c.open_questions().is_empty());

    let mut c = agreed();
    c.apply(&data_request("m3", &["tax_id", "legal_name"]))
        .unwrap();
    c.apply(&data_request("m4", &["ap_contact"])).unwrap();
    assert_eq!(
        c.open_questions()[0].question,
        Question::Data(vec![item("tax_id"), item("legal_name")])
    );
    assert_eq!(
        broken(&mut c, &inform("h4", "m4", &["ap_contact"])),
        Rule::NotAccepted {
            items: vec![item("ap_contact")]
        }
    );
    assert_eq!(
        broken(
            &mut c,
            &inform("h3", "m3", &["tax_id", "legal_name", "bank_details"])
        ),
        Rule::NotAsked {
            items: vec![item("bank_details")]
        }
    );
    assert_eq!(
        broken(&mut c, &inform("h3", "m3", &["tax_id"])),
        Rule::Incomplete {
            items: vec![item("legal_name")]
        }
    );
    c.apply(&inform("h3", "m3", &["legal_name", "tax_id"]))
        .unwrap();
    assert!(
        matches!(
            broken(&mut c, &inform("h5", "m3", &["legal_name", "tax_id"])),
            Rule::NotNow { .. }
        ),
        "answered twice"
    );
    // The responder does not ask for data.
    let m = from(
        false,
        "h6",
        None,
        Protocol::DataExchange,
        Content::DataRequest {
            access: vec![item("tax_id")],
        },
    );
    assert_eq!(
        broken(&mut c, &m),
        Rule::WrongSide {
            may: Role::Requester
        }
    );
}

#[test]
fn questions_are_bounded_and_answered_once() {
    let mut c = agreed();
    for n in 0..anex::limits::MAX_OPEN_QUESTIONS {
        c.apply(&data_request(&format!("q{n}"), &["tax_id"]))
            .unwrap();
    }
    assert_eq!(
        broken(&mut c, &data_request("q-last", &["tax_id"])),
        Rule::QuestionLimit
    );
    // A FAILURE answers a question too.
    c.apply(&from(
        false,
        "f0",
        Some("q0"),
        Protocol::DataExchange,
        Content::Failure {
            error: text("down"),
        },
    ))
    .unwrap();
    assert_eq!(
        c.open_questions().len(),
        anex::limits::MAX_OPEN_QUESTIONS - 1
    );
    // QUERY-IF from either side, answered by the other.
    c.apply(&from(
        false,
        "hq",
        None,
        Protocol::DataExchange,
        Content::QueryIf {
            query: Query::TermsInForce,
        },
    ))
    .unwrap();
    let answer = from(
        true,
        "ma",
        Some("hq"),
        Protocol::DataExchange,
        Content::Answer {
            query: Query::TermsInForce,
            answer: true,
        },
    );
    c.apply(&answer).unwrap();
    // A NOT-UNDERSTOOD may not be answered by another.
    c.apply(&from(
        true,
        "nu",
        Some("f0"),
        Protocol::DataExchange,
        Content::NotUnderstood { reason: text("?") },
    ))
    .unwrap();
    let rule = broken(
        &mut c,
        &from(
            false,
            "nu2",
            Some("nu"),
            Protocol::DataExchange,
            Content::NotUnderstood { reason: text("?") },
        ),
    );
    assert!(matches!(
        rule,
        Rule::CannotAnswer {
            answered: anex::Performative::NotUnderstood,
            ..
        }
    ));
}

#[test]
fn the_message_limit() {
    let mut c = Conversation::open(&cfp()).unwrap();
    let mut n = 0;
    while c.len() < anex::limits::MAX_MESSAGES {
        let q = format!("q{n}");
        let a = format!("a{n}");
        c.apply(&from(
            true,
            &q,
            None,
            Protocol::Negotiation,
            Content::QueryIf {
                query: Query::TermsInForce,
            },
        ))
        .unwrap();
        if c.len() < anex::limits::MAX_MESSAGES {
            c.apply(&from(
                false,
                &a,
                Some(&q),
                Protocol::Negotiation,
                Content::Answer {
                    query: Query::TermsInForce,
                    answer: false,
                },
            ))
            .unwrap();
        }
        n += 1;
    }
    assert_eq!(
        broken(&mut c, &propose(false, "late", "m1", narrowed())),
        Rule::MessageLimit
    );
}

#[test]
fn a_conversation_rebuilt_from_its_messages_is_the_same() {
    let messages = vec![
        cfp(),
        propose(false, "h1", "m1", narrowed()),
        accept(true, "m2", "h1", narrowed()),
        data_request("m3", &["tax_id"]),
    ];
    let rebuilt = Conversation::from_messages(&messages).unwrap().unwrap();
    let mut incremental = agreed();
    incremental.apply(&messages[3]).unwrap();
    assert_eq!(rebuilt, incremental);
    assert_eq!(Conversation::from_messages(&[]).unwrap(), None);
    let mut bad = messages.clone();
    bad.push(inform("h4", "m3", &["legal_name"]));
    let err = Conversation::from_messages(&bad).unwrap_err();
    assert_eq!(err.message_id, id("h4"));
    assert_eq!(
        err.to_string(),
        "message h4 (INFORM): the request did not ask for legal_name"
    );
}
