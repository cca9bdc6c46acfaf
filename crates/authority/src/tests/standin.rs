//! Stand-ins: honoured only inside their window, only for the roles
//! delegated, only for a holder still enrolled; both people count as used.

use super::progress::{chain, p};
use crate::{admit, progress, Action, Approval, Person, Refusal, StandIn, Standing};

const DAY: i64 = 86_400;
const START: i64 = 1_800_000_000;

fn enrolled() -> Vec<Person> {
    [
        "ann", "bob", "fay", "frank", "fred", "lee", "carol", "grace",
    ]
    .iter()
    .map(|n| p(&format!("{n}@x.example")))
    .collect()
}

fn fay_to_grace(roles: &[&str]) -> Vec<StandIn> {
    vec![StandIn {
        id: "d1".into(),
        from: p("fay@x.example"),
        to: p("grace@x.example"),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        starts_at: START,
        ends_at: START + 2 * DAY,
    }]
}

fn ann_approved() -> Vec<Approval> {
    vec![Approval {
        person: p("ann@x.example"),
        step: 1,
        role: "buyer".into(),
        at: Some(START - DAY),
        for_person: None,
    }]
}

const TWO_STEPS: &str = "[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\n";

fn at<'a>(
    r: &'a crate::Route,
    approvals: &'a [Approval],
    enrolled: &'a [Person],
    stand_ins: &'a [StandIn],
    now: i64,
    owner: Option<&'a Person>,
) -> Standing<'a> {
    Standing {
        route: r,
        approvals,
        enrolled,
        owner,
        asked_at: None,
        now: Some(now),
        stand_ins,
    }
}

#[test]
fn a_stand_in_acts_for_the_holder_only_inside_its_window() {
    let r = chain(TWO_STEPS);
    let e = enrolled();
    let d = fay_to_grace(&["finance"]);
    let a = ann_approved();
    let grace = p("grace@x.example");
    for now in [START - 1, START + 2 * DAY, START + 3 * DAY] {
        let s = at(&r, &a, &e, &d, now, None);
        assert_eq!(
            admit(&s, &grace, Action::Approve, None).unwrap_err(),
            Refusal::NotAtStep {
                step: 2,
                waiting_on: vec!["finance".into()]
            },
            "at {now}"
        );
        assert!(!progress(&s).steps[1].parts[0].may_act.contains(&grace));
    }
    for now in [START, START + DAY, START + 2 * DAY - 1] {
        let s = at(&r, &a, &e, &d, now, None);
        let admitted = admit(&s, &grace, Action::Approve, None).unwrap();
        assert_eq!(admitted.role, "finance");
        assert_eq!(admitted.step, 2);
        assert_eq!(admitted.for_person, Some(p("fay@x.example")));
        assert_eq!(admitted.stand_in.as_deref(), Some("d1"));
        assert!(admitted.completes);
        assert!(progress(&s).steps[1].parts[0].may_act.contains(&grace));
    }
    // Without a clock nothing is in force.
    let s = Standing {
        now: None,
        ..at(&r, &a, &e, &d, START, None)
    };
    assert!(admit(&s, &grace, Action::Decline, None).is_err());
}

#[test]
fn only_the_roles_delegated_and_only_for_an_enrolled_holder() {
    let r = chain(TWO_STEPS);
    let a = ann_approved();
    let grace = p("grace@x.example");
    // Fay gave Grace legal, which she does not hold, not finance.
    let e = enrolled();
    let legal = fay_to_grace(&["legal"]);
    assert!(admit(
        &at(&r, &a, &e, &legal, START, None),
        &grace,
        Action::Approve,
        None
    )
    .is_err());
    // Fay's approver was revoked: her delegation no longer lets anyone act.
    let without_fay: Vec<Person> = e
        .iter()
        .filter(|x| x.as_str() != "fay@x.example")
        .cloned()
        .collect();
    let d = fay_to_grace(&["finance"]);
    assert!(admit(
        &at(&r, &a, &without_fay, &d, START, None),
        &grace,
        Action::Approve,
        None
    )
    .is_err());
    // Grace's was: she cannot act either.
    let without_grace: Vec<Person> = e
        .iter()
        .filter(|x| x.as_str() != "grace@x.example")
        .cloned()
        .collect();
    assert!(admit(
        &at(&r, &a, &without_grace, &d, START, None),
        &grace,
        Action::Approve,
        None
    )
    .is_err());
    // A stand-in may decline for the holder too.
    let declined = admit(
        &at(&r, &a, &e, &d, START, None),
        &grace,
        Action::Decline,
        None,
    )
    .unwrap();
    assert_eq!(declined.for_person, Some(p("fay@x.example")));
}

#[test]
fn both_the_stand_in_and_the_holder_count_as_used() {
    // Step 2 needs two of finance: Grace for Fay, then Fay herself may not.
    let r =
        chain("[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\ncount = 2\n");
    let e = enrolled();
    let d = fay_to_grace(&["finance"]);
    let mut a = ann_approved();
    a.push(Approval {
        person: p("grace@x.example"),
        step: 2,
        role: "finance".into(),
        at: Some(START),
        for_person: Some(p("fay@x.example")),
    });
    let s = at(&r, &a, &e, &d, START + 10, None);
    let step = &progress(&s).steps[1];
    assert_eq!(step.parts[0].approved_by, [p("grace@x.example")]);
    assert_eq!(step.parts[0].stood_in.len(), 1);
    assert_eq!(step.parts[0].stood_in[0].for_person, p("fay@x.example"));
    assert!(!step.parts[0].may_act.contains(&p("fay@x.example")));
    assert!(!step.parts[0].may_act.contains(&p("grace@x.example")));
    assert!(step.parts[0].may_act.contains(&p("frank@x.example")));
    for who in ["fay@x.example", "grace@x.example"] {
        assert!(
            matches!(
                admit(&s, &p(who), Action::Approve, None),
                Err(Refusal::AlreadyCounted { step: 2, .. })
            ),
            "{who}"
        );
    }
    // Frank completes it.
    assert!(
        admit(&s, &p("frank@x.example"), Action::Approve, None)
            .unwrap()
            .completes
    );
}

#[test]
fn a_holder_in_their_own_right_acts_as_themselves() {
    let r = chain(TWO_STEPS);
    let e = enrolled();
    let a = ann_approved();
    // Frank holds finance and also stands in for Fay: he acts as himself.
    let d = vec![StandIn {
        to: p("frank@x.example"),
        ..fay_to_grace(&["finance"])[0].clone()
    }];
    let admitted = admit(
        &at(&r, &a, &e, &d, START, None),
        &p("frank@x.example"),
        Action::Approve,
        None,
    )
    .unwrap();
    assert_eq!(admitted.for_person, None);
    assert_eq!(admitted.stand_in, None);
}

#[test]
fn a_stand_in_for_the_owner_cannot_be_the_only_approval() {
    let r = chain("[[rule.step]]\nrole = \"finance\"\n");
    let e = enrolled();
    let d = fay_to_grace(&["finance"]);
    let none = Vec::new();
    let fay = p("fay@x.example");
    let s = at(&r, &none, &e, &d, START, Some(&fay));
    assert!(matches!(
        admit(&s, &p("grace@x.example"), Action::Approve, None),
        Err(Refusal::OwnerAlone { .. })
    ));
    assert!(!progress(&s).steps[0].parts[0]
        .may_act
        .contains(&p("grace@x.example")));
    assert!(admit(&s, &p("frank@x.example"), Action::Approve, None).is_ok());
}

#[test]
fn with_no_owner_no_one_is_refused_as_the_owner() {
    // The one-step rule's only approval, with no owner and no stand-in.
    let r = chain("[[rule.step]]\nrole = \"finance\"\n");
    let e = enrolled();
    let none = Vec::new();
    let s = at(&r, &none, &e, &[], START, None);
    assert!(
        admit(&s, &p("fay@x.example"), Action::Approve, None)
            .unwrap()
            .completes
    );
    assert!(progress(&s).steps[0].parts[0]
        .may_act
        .contains(&p("fay@x.example")));
}
