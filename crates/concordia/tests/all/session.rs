//! The §5 state machine: each rule alone, errors naming the message and rule.

use concordia::session::{Rule, Session, State};
use concordia::Message;
use serde_json::json;

use super::fixtures::{deal, offer_body, transcript, Parties};

fn replay(
    p: &Parties,
    steps: &[(&str, &str, serde_json::Value, &str)],
) -> Result<Session, concordia::TransitionError> {
    let t = transcript(p, steps);
    let typed: Vec<Message> = t
        .iter()
        .map(|m| Message::from_value(m).expect("typed"))
        .collect();
    Session::replay(&typed)
}

const T0: &str = "2026-05-10T10:00:00Z";

fn open() -> (&'static str, &'static str, serde_json::Value, &'static str) {
    (
        "negotiate.open",
        "seller",
        json!({"terms": {"price": {"value": 100, "currency": "USD"}}, "timing": {"session_ttl": 3600, "offer_ttl": 600, "max_rounds": 2}}),
        T0,
    )
}

#[test]
fn a_deal_reaches_agreed_and_nothing_follows_it() {
    let p = Parties::new();
    let t = deal(&p);
    let typed: Vec<Message> = t.iter().map(|m| Message::from_value(m).unwrap()).collect();
    let mut s = Session::replay(&typed).unwrap();
    assert_eq!(s.state(), State::Agreed);
    let more = transcript(
        &p,
        &[
            open(),
            ("negotiate.accept_session", "buyer", json!({}), T0),
            ("negotiate.offer", "buyer", offer_body(json!(1)), T0),
        ],
    );
    let mut m = Message::from_value(&more[2]).unwrap();
    m.id = "msg_late".into();
    let e = s.apply(&m).unwrap_err();
    assert_eq!(
        (e.index, e.id.as_str(), e.rule.clone()),
        (4, "msg_late", Rule::Terminal("agreed"))
    );
}

#[test]
fn defaults_are_the_spec_s() {
    let t = concordia::Timing::default();
    assert_eq!(
        (t.session_ttl, t.offer_ttl, t.max_rounds),
        (86_400, 3_600, 20)
    );
}

#[test]
fn each_rule_alone() {
    let p = Parties::new();
    let acc = (
        "negotiate.accept_session",
        "buyer",
        json!({}),
        "2026-05-10T10:01:00Z",
    );
    // The first message must be an open.
    let e = replay(&p, std::slice::from_ref(&acc)).unwrap_err();
    assert_eq!((e.index, e.rule), (0, Rule::OpenFirst));
    // Only the responder answers the open.
    let e = replay(
        &p,
        &[
            open(),
            ("negotiate.accept_session", "seller", json!({}), T0),
        ],
    )
    .unwrap_err();
    assert_eq!(
        (e.index, e.id.as_str(), e.rule),
        (1, "msg_1", Rule::ResponderOnly("seller".into()))
    );
    // No offers before the session is accepted.
    let e = replay(
        &p,
        &[
            open(),
            ("negotiate.offer", "buyer", offer_body(json!(1)), T0),
        ],
    )
    .unwrap_err();
    assert_eq!(
        e.rule,
        Rule::NoTransition {
            kind: "negotiate.offer",
            state: "proposed"
        }
    );
    // max_rounds (2 here).
    let o = |who, at| ("negotiate.counter", who, offer_body(json!(90)), at);
    let e = replay(
        &p,
        &[
            open(),
            acc.clone(),
            o("buyer", "2026-05-10T10:02:00Z"),
            o("seller", "2026-05-10T10:03:00Z"),
            o("buyer", "2026-05-10T10:04:00Z"),
        ],
    )
    .unwrap_err();
    assert_eq!((e.index, e.rule), (4, Rule::MaxRounds(2)));
    // Accepting one's own offer.
    let a = |who, at| ("negotiate.accept", who, json!({}), at);
    let e = replay(
        &p,
        &[
            open(),
            acc.clone(),
            o("buyer", "2026-05-10T10:02:00Z"),
            a("buyer", "2026-05-10T10:03:00Z"),
        ],
    )
    .unwrap_err();
    assert!(matches!(e.rule, Rule::NothingToAccept(_)));
    // offer_ttl (600 s here): accepting 601 s later is refused, 600 s later is not.
    let e = replay(
        &p,
        &[
            open(),
            acc.clone(),
            o("buyer", "2026-05-10T10:02:00Z"),
            a("seller", "2026-05-10T10:12:01Z"),
        ],
    )
    .unwrap_err();
    assert!(matches!(e.rule, Rule::OfferExpired(_)), "{e}");
    assert_eq!(
        replay(
            &p,
            &[
                open(),
                acc.clone(),
                o("buyer", "2026-05-10T10:02:00Z"),
                a("seller", "2026-05-10T10:12:00Z")
            ]
        )
        .unwrap()
        .state(),
        State::Agreed
    );
    // An offer's own valid_until.
    let mut short = offer_body(json!(90));
    short["valid_until"] = json!("2026-05-10T10:05:00Z");
    let e = replay(
        &p,
        &[
            open(),
            acc.clone(),
            ("negotiate.counter", "buyer", short, "2026-05-10T10:02:00Z"),
            a("seller", "2026-05-10T10:05:01Z"),
        ],
    )
    .unwrap_err();
    assert!(
        e.rule
            .to_string()
            .contains("valid until 2026-05-10T10:05:00Z"),
        "{e}"
    );
    // session_ttl (3600 s here).
    let e = replay(
        &p,
        &[
            open(),
            (
                "negotiate.accept_session",
                "buyer",
                json!({}),
                "2026-05-10T11:00:00Z",
            ),
        ],
    )
    .unwrap_err();
    assert!(matches!(e.rule, Rule::SessionExpired { ttl: 3600, .. }));
    // Time does not run backwards.
    let e = replay(
        &p,
        &[
            open(),
            (
                "negotiate.accept_session",
                "buyer",
                json!({}),
                "2026-05-10T09:59:59Z",
            ),
        ],
    )
    .unwrap_err();
    assert_eq!(e.rule, Rule::TimeBackwards);
}

#[test]
fn withdraw_reject_decline_dormant_and_reactivation() {
    let p = Parties::new();
    let acc = ("negotiate.accept_session", "buyer", json!({}), T0);
    assert_eq!(
        replay(
            &p,
            &[
                open(),
                (
                    "negotiate.decline_session",
                    "buyer",
                    json!({"reason": "no"}),
                    T0
                )
            ]
        )
        .unwrap()
        .state(),
        State::Rejected
    );
    assert_eq!(
        replay(
            &p,
            &[
                open(),
                acc.clone(),
                ("negotiate.reject", "buyer", json!({}), T0)
            ]
        )
        .unwrap()
        .state(),
        State::Rejected
    );
    let s = replay(
        &p,
        &[
            open(),
            acc.clone(),
            (
                "negotiate.withdraw",
                "buyer",
                json!({"reactivatable": true}),
                T0,
            ),
            ("negotiate.offer", "buyer", offer_body(json!(1)), T0),
        ],
    )
    .unwrap();
    assert_eq!(
        s.state(),
        State::Active,
        "a dormant session is reactivated by an offer"
    );
    let mut s = replay(&p, &[open()]).unwrap();
    assert_eq!(
        s.tick(concordia::approval_receipt::datetime::parse("2026-05-10T11:00:00Z").unwrap()),
        State::Expired
    );
    assert_eq!(s.make_dormant(), Ok(State::Dormant));
}
