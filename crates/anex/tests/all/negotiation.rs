//! The proposal diff, the rule of §4.4, and the counter editor's check,
//! each case alone.

use anex::rules::{
    check_counter, check_owner_counter, counter_may_drop, dropped_required, CounterProblem,
};
use anex::{diff, ItemName, Promise};

use crate::support::terms;

fn names(list: &[&str]) -> Vec<ItemName> {
    list.iter().map(|s| ItemName::parse(s).unwrap()).collect()
}

fn promises(list: &[&str]) -> Vec<Promise> {
    list.iter().map(|s| Promise::parse(s).unwrap()).collect()
}

fn ask() -> anex::Terms {
    terms(
        &["legal_name(m)", "tax_id(m)", "bank_details", "ap_contact"],
        &["no retention beyond 90 days"],
    )
}

#[test]
fn the_diff_names_each_kind_of_change() {
    let old = ask();
    let new = terms(
        &["tax_id", "legal_name(m)", "ap_contact(m)", "phone"],
        &["no sharing with third parties"],
    );
    let d = diff(&old, &new);
    assert_eq!(
        d.access_added
            .iter()
            .map(|i| i.to_wire())
            .collect::<Vec<_>>(),
        ["phone"]
    );
    assert_eq!(
        d.access_removed
            .iter()
            .map(|i| i.to_wire())
            .collect::<Vec<_>>(),
        ["bank_details"]
    );
    let marks: Vec<(&str, bool)> = d
        .required_changed
        .iter()
        .map(|c| (c.name.as_str(), c.was_required))
        .collect();
    assert_eq!(marks, [("tax_id", true), ("ap_contact", false)]);
    assert_eq!(
        d.promises_added,
        promises(&["no sharing with third parties"])
    );
    assert_eq!(
        d.promises_removed,
        promises(&["no retention beyond 90 days"])
    );
    assert_eq!(
        d.to_string(),
        "access added: phone; access removed: bank_details; now required: ap_contact; no longer required: tax_id; promises added: \"no sharing with third parties\"; promises removed: \"no retention beyond 90 days\""
    );
}

#[test]
fn the_diff_of_reordered_terms_is_empty() {
    let a = ask();
    let b = terms(
        &["ap_contact", "bank_details", "tax_id(m)", "legal_name(m)"],
        &["no retention beyond 90 days"],
    );
    assert!(diff(&a, &b).is_empty());
    assert_eq!(diff(&a, &b).to_string(), "no change");
    // Each kind alone makes it non-empty.
    assert!(!diff(
        &a,
        &terms(
            &["legal_name(m)", "tax_id(m)", "bank_details"],
            &["no retention beyond 90 days"]
        )
    )
    .is_empty());
    assert!(!diff(
        &a,
        &terms(
            &["legal_name(m)", "tax_id", "bank_details", "ap_contact"],
            &["no retention beyond 90 days"]
        )
    )
    .is_empty());
    assert!(!diff(
        &a,
        &terms(
            &["legal_name(m)", "tax_id(m)", "bank_details", "ap_contact"],
            &[]
        )
    )
    .is_empty());
}

#[test]
fn section_4_4_a_counter_that_drops_a_required_item_is_rejected_saying_which() {
    let counter = terms(
        &["legal_name", "bank_details"],
        &["no retention beyond 90 days"],
    );
    assert_eq!(dropped_required(&ask(), &counter), names(&["tax_id"]));
    let rejection = check_counter(&ask(), &counter).unwrap_err();
    assert_eq!(rejection.dropped_required, names(&["tax_id"]));
    assert!(rejection.not_asked.is_empty());
    assert_eq!(
        rejection.reason().as_str(),
        "the counter drops tax_id, which the request marked required (ANEX §4.4)"
    );
}

#[test]
fn dropping_only_optional_items_and_asking_promises_is_a_fair_counter() {
    let counter = terms(
        &["legal_name", "tax_id"],
        &[
            "no retention beyond 90 days",
            "no sharing with third parties",
        ],
    );
    assert_eq!(check_counter(&ask(), &counter), Ok(()));
    assert!(dropped_required(&ask(), &counter).is_empty());
}

#[test]
fn a_counter_that_offers_what_was_not_asked_is_rejected() {
    let counter = terms(&["legal_name", "tax_id", "home_address"], &[]);
    let rejection = check_counter(&ask(), &counter).unwrap_err();
    assert_eq!(rejection.not_asked, names(&["home_address"]));
    assert!(rejection.dropped_required.is_empty());
    assert!(rejection
        .to_string()
        .contains("offers home_address, which was not asked for"));
}

#[test]
fn a_counter_may_drop_only_what_the_requester_did_not_mark_required() {
    let asked = ask();
    let may: Vec<(String, bool)> = asked
        .access
        .iter()
        .map(|i| (i.name.to_string(), counter_may_drop(i)))
        .collect();
    assert!(
        may.iter().any(|(_, m)| *m) && may.iter().any(|(_, m)| !*m),
        "{may:?}"
    );
    for item in &asked.access {
        assert_eq!(counter_may_drop(item), !item.required, "{}", item.name);
    }
}

#[test]
fn the_editor_refuses_a_counter_the_required_items_make_pointless() {
    let counter = terms(
        &["legal_name"],
        &["no retention beyond 90 days", "no resale"],
    );
    let problems = check_owner_counter(&ask(), &counter).unwrap_err();
    assert_eq!(
        problems,
        vec![CounterProblem::DropsRequired(names(&["tax_id"]))]
    );
    assert_eq!(
        problems[0].to_string(),
        "a counter without tax_id is pointless: the requester marked it required and must reject any counter that drops it (ANEX §4.4); keep it, or refuse the request"
    );
}

#[test]
fn the_editor_refuses_what_is_not_a_counter_each_alone() {
    let base_promises = ["no retention beyond 90 days"];
    let check =
        |access: &[&str], promise: &[&str]| check_owner_counter(&ask(), &terms(access, promise));
    assert_eq!(
        check(
            &["legal_name", "tax_id", "bank_details", "ap_contact"],
            &base_promises
        ),
        Err(vec![CounterProblem::SameAsAsked])
    );
    assert_eq!(
        check(
            &["legal_name", "tax_id", "ap_contact", "iban"],
            &base_promises
        ),
        Err(vec![CounterProblem::NotAsked(names(&["iban"]))])
    );
    assert_eq!(
        check(&["legal_name", "tax_id"], &[]),
        Err(vec![CounterProblem::RemovesPromises(promises(
            &base_promises
        ))])
    );
    assert_eq!(
        check(&["legal_name(m)", "tax_id"], &base_promises),
        Err(vec![CounterProblem::Marked(names(&["legal_name"]))])
    );
    // A real counter: optional items removed, a promise asked.
    assert_eq!(
        check(&["legal_name", "tax_id", "ap_contact"], &base_promises),
        Ok(())
    );
    assert_eq!(
        check(
            &["legal_name", "tax_id", "bank_details", "ap_contact"],
            &["no retention beyond 90 days", "no resale"]
        ),
        Ok(())
    );
}

#[test]
fn the_editor_reports_every_problem_at_once() {
    let problems = check_owner_counter(&ask(), &terms(&["iban(m)"], &[])).unwrap_err();
    assert_eq!(problems.len(), 4, "{problems:?}");
    assert!(matches!(problems[0], CounterProblem::DropsRequired(_)));
}
