use rust_decimal::Decimal;

use crate::{
    admit, legacy, progress, route, Action, Approval, Facts, Fired, Money, Need, Person, Protocol,
    Standing,
};

fn needs(
    policy: &crate::Policy,
    protocol: Protocol,
    amount: Option<(&str, &str)>,
) -> (Need, Fired) {
    let amount = amount.map(|(v, c)| Money {
        value: v.parse::<Decimal>().unwrap(),
        currency: c.into(),
    });
    let r = route(policy, &Facts::new(protocol, amount));
    assert_eq!(r.chain.steps.len(), 1);
    (r.chain.steps[0].parts[0].need, r.fired)
}

#[test]
fn the_old_threshold_reads_as_before_in_any_currency() {
    let p = legacy(Decimal::from(250_000), 2);
    for c in ["USD", "EUR", "JPY"] {
        assert_eq!(
            needs(&p, Protocol::Anp, Some(("250000", c))).0,
            Need::One,
            "{c}: at the edge"
        );
        assert_eq!(
            needs(&p, Protocol::Concordia, Some(("250000.01", c))).0,
            Need::Count(2),
            "{c}: above"
        );
        assert_eq!(needs(&p, Protocol::Oanp, Some(("1", c))).0, Need::One);
    }
}

#[test]
fn an_unreadable_amount_gets_the_strictest_rule_and_anex_one_approver() {
    let p = legacy(Decimal::from(1000), 3);
    assert_eq!(
        needs(&p, Protocol::Concordia, None),
        (Need::Count(3), Fired::NoRule)
    );
    assert_eq!(needs(&p, Protocol::Anex, None).0, Need::One);
    let initial = legacy(Decimal::ZERO, 1);
    assert_eq!(
        needs(&initial, Protocol::Anp, Some(("5", "USD"))).0,
        Need::One
    );
}

#[test]
fn every_enrolled_approver_holds_the_legacy_role() {
    let p = legacy(Decimal::ZERO, 2);
    let r = route(
        &p,
        &Facts::new(
            Protocol::Anp,
            Some(Money {
                value: Decimal::TEN,
                currency: "USD".into(),
            }),
        ),
    );
    let enrolled = vec![Person::new("a@x.example"), Person::new("b@x.example")];
    let first = vec![Approval {
        person: enrolled[0].clone(),
        step: 1,
        role: "approver".into(),
        at: None,
        for_person: None,
    }];
    let s = Standing {
        route: &r,
        approvals: &first,
        enrolled: &enrolled,
        owner: None,
        asked_at: None,
        now: None,
        stand_ins: &[],
    };
    assert_eq!(
        progress(&s).steps[0].parts[0].may_act,
        [enrolled[1].clone()]
    );
    assert!(
        admit(&s, &enrolled[1], Action::Approve, None)
            .unwrap()
            .completes
    );
}
