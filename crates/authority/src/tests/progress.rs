use rust_decimal::Decimal;

use super::with_rules;
use crate::{
    admit, parse, progress, route, Action, Approval, Facts, Money, Person, Protocol, Refusal,
    Route, Standing,
};

pub(super) fn p(email: &str) -> Person {
    Person::new(email)
}

const ROLES: &str = "buyer = [\"ann@x.example\", \"bob@x.example\"]\nfinance = [\"fay@x.example\", \"frank@x.example\", \"fred@x.example\"]\nlegal = [\"lee@x.example\"]\ncfo = [\"carol@x.example\"]";

fn enrolled() -> Vec<Person> {
    ["ann", "bob", "fay", "frank", "fred", "lee", "carol"]
        .iter()
        .map(|n| p(&format!("{n}@x.example")))
        .collect()
}

/// The route of a policy whose one rule has these steps.
pub(super) fn chain(steps: &str) -> Route {
    let policy = parse(&with_rules(
        ROLES,
        &format!("[[rule]]\nname = \"r\"\n{steps}"),
    ))
    .unwrap();
    route(
        &policy,
        &Facts::new(
            Protocol::Anp,
            Some(Money {
                value: Decimal::ONE,
                currency: "USD".into(),
            }),
        ),
    )
}

fn given(list: &[(&str, usize, &str)]) -> Vec<Approval> {
    list.iter()
        .map(|(who, step, role)| Approval {
            person: p(who),
            step: *step,
            role: (*role).into(),
            at: None,
            for_person: None,
        })
        .collect()
}

fn standing<'a>(
    route: &'a Route,
    approvals: &'a [Approval],
    enrolled: &'a [Person],
    owner: Option<&'a Person>,
) -> Standing<'a> {
    Standing {
        route,
        approvals,
        enrolled,
        owner,
        asked_at: None,
        now: None,
        stand_ins: &[],
    }
}

#[test]
fn steps_are_met_in_order_and_only_the_current_step_takes_approvals() {
    let r = chain("[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\n");
    let e = enrolled();
    let none = given(&[]);
    let s = standing(&r, &none, &e, None);
    assert_eq!(progress(&s).current, Some(1));
    let refused = admit(&s, &p("fay@x.example"), Action::Approve, None).unwrap_err();
    assert_eq!(
        refused,
        Refusal::NotAtStep {
            step: 1,
            waiting_on: vec!["buyer".into()]
        }
    );
    assert_eq!(
        refused.to_string(),
        "Step 1 waits on buyer; you hold none of those roles."
    );
    let ok = admit(&s, &p("ann@x.example"), Action::Approve, None).unwrap();
    assert_eq!(
        (ok.step, ok.role.as_str(), ok.completes),
        (1, "buyer", false)
    );

    let one = given(&[("ann@x.example", 1, "buyer")]);
    let s = standing(&r, &one, &e, None);
    let now = progress(&s);
    assert_eq!(now.current, Some(2));
    assert!(now.steps[0].met && !now.steps[1].met);
    assert_eq!(now.steps[1].parts[0].may_act.len(), 3);
    assert!(matches!(
        admit(&s, &p("bob@x.example"), Action::Approve, None),
        Err(Refusal::NotAtStep { step: 2, .. })
    ));
    let last = admit(&s, &p("fay@x.example"), Action::Approve, None).unwrap();
    assert!(last.completes);

    let two = given(&[
        ("ann@x.example", 1, "buyer"),
        ("fay@x.example", 2, "finance"),
    ]);
    let s = standing(&r, &two, &e, None);
    assert!(progress(&s).complete);
    assert_eq!(
        admit(&s, &p("frank@x.example"), Action::Approve, None),
        Err(Refusal::Complete)
    );
}

#[test]
fn n_of_a_role_needs_n_distinct_people() {
    let r = chain("[[rule.step]]\nrole = \"finance\"\ncount = 2\n");
    let e = enrolled();
    let one = given(&[("fay@x.example", 1, "finance")]);
    let s = standing(&r, &one, &e, None);
    let now = progress(&s);
    assert_eq!(now.steps[0].parts[0].required, 2);
    assert!(!now.complete);
    assert!(
        admit(&s, &p("frank@x.example"), Action::Approve, None)
            .unwrap()
            .completes
    );
    let two = given(&[
        ("fay@x.example", 1, "finance"),
        ("fred@x.example", 1, "finance"),
    ]);
    assert!(progress(&standing(&r, &two, &e, None)).complete);
}

#[test]
fn all_of_a_role_means_every_enrolled_holder() {
    let r = chain("[[rule.step]]\nrole = \"finance\"\ncount = \"all\"\n");
    let e = enrolled();
    let two = given(&[
        ("fay@x.example", 1, "finance"),
        ("fred@x.example", 1, "finance"),
    ]);
    let now = progress(&standing(&r, &two, &e, None));
    assert_eq!(now.steps[0].parts[0].required, 3);
    assert_eq!(now.steps[0].parts[0].may_act, [p("frank@x.example")]);
    // frank is not enrolled (or was revoked): all means the two who are.
    let fewer: Vec<Person> = e
        .into_iter()
        .filter(|x| x.as_str() != "frank@x.example")
        .collect();
    assert!(progress(&standing(&r, &two, &fewer, None)).complete);
}

#[test]
fn a_parallel_group_needs_every_part_in_any_order_before_the_next_step() {
    let r = chain("[[rule.step]]\nall_of = [{ role = \"finance\" }, { role = \"legal\" }]\n[[rule.step]]\nrole = \"cfo\"\n");
    let e = enrolled();
    let legal_first = given(&[("lee@x.example", 1, "legal")]);
    let s = standing(&r, &legal_first, &e, None);
    let now = progress(&s);
    assert_eq!(now.current, Some(1));
    assert!(now.steps[0].parts[1].met() && !now.steps[0].parts[0].met());
    assert_eq!(
        admit(&s, &p("carol@x.example"), Action::Approve, None)
            .unwrap_err()
            .to_string(),
        "Step 1 waits on finance; you hold none of those roles."
    );
    let ok = admit(&s, &p("fay@x.example"), Action::Approve, None).unwrap();
    assert_eq!(
        (ok.step, ok.role.as_str(), ok.completes),
        (1, "finance", false)
    );
    let both = given(&[
        ("lee@x.example", 1, "legal"),
        ("fay@x.example", 1, "finance"),
    ]);
    assert_eq!(progress(&standing(&r, &both, &e, None)).current, Some(2));
}

#[test]
fn one_person_counts_once_across_all_steps_even_holding_both_roles() {
    let roles = "buyer = [\"ann@x.example\", \"bob@x.example\"]\nfinance = [\"ann@x.example\", \"fay@x.example\"]";
    let policy = parse(&with_rules(
        roles,
        "[[rule]]\nname = \"r\"\n[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\n",
    ))
    .unwrap();
    let r = route(&policy, &Facts::new(Protocol::Anex, None));
    let e = vec![p("ann@x.example"), p("bob@x.example"), p("fay@x.example")];
    let ann = given(&[("ann@x.example", 1, "buyer")]);
    let s = standing(&r, &ann, &e, None);
    let refused = admit(&s, &p("ANN@x.example"), Action::Approve, None).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "You already approved this request at step 1 as buyer; one person counts once per request, across all its steps."
    );
    assert_eq!(progress(&s).steps[1].parts[0].may_act, [p("fay@x.example")]);
    // A store that somehow holds a second approval by ann does not count it.
    let twice = given(&[
        ("ann@x.example", 1, "buyer"),
        ("ann@x.example", 2, "finance"),
    ]);
    assert!(!progress(&standing(&r, &twice, &e, None)).complete);
}

#[test]
fn the_owner_alone_cannot_complete_a_request_but_may_approve_beside_others() {
    let one_step = chain("[[rule.step]]\nrole = \"buyer\"\n");
    let e = enrolled();
    let owner = p("ann@x.example");
    let none = given(&[]);
    let s = standing(&one_step, &none, &e, Some(&owner));
    assert_eq!(
        admit(&s, &owner, Action::Approve, None).unwrap_err().to_string(),
        "You own the agent that made this request, and an agent's owner cannot be the only approval of its request: another holder of buyer must approve it."
    );
    assert_eq!(progress(&s).steps[0].parts[0].may_act, [p("bob@x.example")]);
    assert!(
        admit(&s, &p("bob@x.example"), Action::Approve, None)
            .unwrap()
            .completes
    );
    // The owner may still decline: it sends nothing that binds.
    assert!(admit(&s, &owner, Action::Decline, None).is_ok());

    let two_steps = chain("[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\n");
    let s = standing(&two_steps, &none, &e, Some(&owner));
    assert!(
        admit(&s, &owner, Action::Approve, None).is_ok(),
        "not alone: finance follows"
    );
    let bob_first = given(&[("bob@x.example", 1, "buyer")]);
    let finance_owner = p("fay@x.example");
    let s = standing(&two_steps, &bob_first, &e, Some(&finance_owner));
    assert!(
        admit(&s, &finance_owner, Action::Approve, None)
            .unwrap()
            .completes
    );
}

#[test]
fn a_decline_or_counter_needs_a_role_at_the_current_step_but_not_a_fresh_person() {
    let r = chain("[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\n");
    let e = enrolled();
    let ann = given(&[("ann@x.example", 1, "buyer")]);
    let s = standing(&r, &ann, &e, None);
    assert!(matches!(
        admit(&s, &p("bob@x.example"), Action::Decline, None),
        Err(Refusal::NotAtStep { step: 2, .. })
    ));
    let c = admit(&s, &p("frank@x.example"), Action::Counter, None).unwrap();
    assert_eq!(
        (c.step, c.role.as_str(), c.completes),
        (2, "finance", false)
    );
}

#[test]
fn acting_as_a_role_one_does_not_hold_at_the_step_is_refused_by_name() {
    let r = chain("[[rule.step]]\nall_of = [{ role = \"finance\" }, { role = \"legal\" }]\n");
    let e = enrolled();
    let none = given(&[]);
    let s = standing(&r, &none, &e, None);
    let refused = admit(&s, &p("fay@x.example"), Action::Approve, Some("legal")).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "You cannot act as legal at step 1: it waits on finance and legal, and of those you hold finance."
    );
    let ok = admit(&s, &p("lee@x.example"), Action::Approve, Some("legal")).unwrap();
    assert_eq!(ok.role, "legal");
}

#[test]
fn a_holder_who_is_not_enrolled_cannot_act() {
    let r = chain("[[rule.step]]\nrole = \"cfo\"\n");
    let e: Vec<Person> = enrolled()
        .into_iter()
        .filter(|x| x.as_str() != "carol@x.example")
        .collect();
    let none = given(&[]);
    let s = standing(&r, &none, &e, None);
    assert!(progress(&s).steps[0].parts[0].may_act.is_empty());
    assert!(matches!(
        admit(&s, &p("carol@x.example"), Action::Approve, None),
        Err(Refusal::NotAtStep { .. })
    ));
}

/// A buyer, then finance within 4 hours (escalating to the CFO).
const ESCALATING: &str = "[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\nrespond_within = \"4h\"\nescalate_to = \"cfo\"\n";

const ASKED: i64 = 1_000_000;
const HOUR: i64 = 3600;

#[test]
fn a_step_past_its_time_is_offered_to_its_escalation_role_too_and_not_before() {
    let r = chain(ESCALATING);
    let e = enrolled();
    // Ann met step 1 an hour after the request arrived: step 2's four
    // hours run from then.
    let ann = vec![Approval {
        person: p("ann@x.example"),
        step: 1,
        role: "buyer".into(),
        at: Some(ASKED + HOUR),
        for_person: None,
    }];
    let at = |now: i64| Standing {
        asked_at: Some(ASKED),
        now: Some(now),
        ..standing(&r, &ann, &e, None)
    };
    let carol = p("carol@x.example");
    // One second before it is due: the CFO may not act yet.
    let before = at(ASKED + 5 * HOUR - 1);
    let step = &progress(&before).steps[1];
    assert_eq!(step.due_at, Some(ASKED + 5 * HOUR));
    assert!(!step.escalated);
    assert!(!step.parts[0].may_act.contains(&carol));
    let refused = admit(&before, &carol, Action::Approve, None).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Step 2 waits on finance; you hold none of those roles."
    );
    // At the moment it is due: the CFO may approve, as cfo, and it counts.
    let due = at(ASKED + 5 * HOUR);
    let step = &progress(&due).steps[1];
    assert!(step.escalated);
    assert!(step.parts[0].may_act.contains(&carol));
    assert!(
        step.parts[0].may_act.contains(&p("fay@x.example")),
        "finance still may"
    );
    let admitted = admit(&due, &carol, Action::Approve, None).unwrap();
    assert_eq!((admitted.step, admitted.role.as_str()), (2, "cfo"));
    assert!(admitted.completes);
    // Carol's approval, recorded as cfo at step 2, meets it.
    let both = vec![
        ann[0].clone(),
        Approval {
            person: carol.clone(),
            step: 2,
            role: "cfo".into(),
            at: Some(ASKED + 5 * HOUR),
            for_person: None,
        },
    ];
    let done = Standing {
        asked_at: Some(ASKED),
        now: Some(ASKED + 5 * HOUR),
        ..standing(&r, &both, &e, None)
    };
    let progress = progress(&done);
    assert!(progress.complete, "{progress:?}");
    assert_eq!(progress.steps[1].parts[0].approved_by, [carol]);
}

#[test]
fn without_the_clock_or_a_response_time_nothing_escalates() {
    let r = chain(ESCALATING);
    let e = enrolled();
    let ann = vec![Approval {
        person: p("ann@x.example"),
        step: 1,
        role: "buyer".into(),
        at: Some(ASKED),
        for_person: None,
    }];
    // No now: never escalated, however old.
    let no_clock = Standing {
        asked_at: Some(ASKED),
        now: None,
        ..standing(&r, &ann, &e, None)
    };
    assert!(!progress(&no_clock).steps[1].escalated);
    // An approval whose time is unknown: step 2's opening is unknown.
    let unknown = vec![Approval {
        at: None,
        ..ann[0].clone()
    }];
    let s = Standing {
        asked_at: Some(ASKED),
        now: Some(ASKED + 100 * HOUR),
        ..standing(&r, &unknown, &e, None)
    };
    assert!(!progress(&s).steps[1].escalated);
    // A step with no response time: never.
    let plain = chain("[[rule.step]]\nrole = \"buyer\"\n");
    let none = given(&[]);
    let s = Standing {
        asked_at: Some(ASKED),
        now: Some(ASKED + 100 * HOUR),
        ..standing(&plain, &none, &e, None)
    };
    let step = &progress(&s).steps[0];
    assert_eq!((step.due_at, step.escalated), (None, false));
}
