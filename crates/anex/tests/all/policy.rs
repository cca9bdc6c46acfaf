//! The owner's policy: the file format (each refusal alone) and its
//! verdicts, item by item, in both directions.

use anex::policy::{Audience, PolicyError, ProposalVerdict};
use anex::{Counterparty, Policy};
use time::macros::datetime;

use crate::support::{agent, terms};

pub const POLICY: &str = r#"{
  "anex_policy": 1,
  "terms_valid_days": 90,
  "note": "what Fabrikam's host shares without asking",
  "rules": [
    { "items": ["legal_name", "ap_contact"], "anyone": true },
    { "items": ["tax_id"], "relations": ["supplier"], "promises": ["no sharing with third parties"] },
    { "items": ["tax_id"], "identities": ["did:web:auditor.example"], "note": "our auditor" },
    { "items": ["security_report"], "anyone": true,
      "promises": ["no sharing with third parties", "no retention beyond 30 days"] }
  ],
  "may_promise": ["no sharing with third parties", "no retention beyond 90 days"]
}"#;

fn policy() -> Policy {
    Policy::parse(POLICY).unwrap()
}

fn who(identity: &str, relation: Option<&str>) -> Counterparty {
    Counterparty {
        identity: agent(identity),
        relation: relation.map(|r| anex::Text::parse(r).unwrap()),
    }
}

fn supplier() -> Counterparty {
    who("did:web:supplier.example", Some("supplier"))
}

#[test]
fn the_example_reads_as_written() {
    let p = policy();
    assert_eq!(p.terms_valid_days, 90);
    assert_eq!(p.rules.len(), 4);
    assert_eq!(p.rules[0].audience, Audience::Anyone);
    assert!(
        matches!(&p.rules[1].audience, Audience::Only { relations, identities } if relations.len() == 1 && identities.is_empty())
    );
    assert_eq!(p.rules[3].promises.len(), 2);
    assert_eq!(p.may_promise.len(), 2);
    assert_eq!(
        p.terms_valid_until(datetime!(2026-10-01 12:00 UTC)),
        datetime!(2026-12-30 12:00 UTC)
    );
}

fn refusal(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(POLICY).unwrap();
    edit(&mut v);
    Policy::parse(&v.to_string()).unwrap_err().to_string()
}

#[test]
fn the_file_is_refused_naming_what_is_wrong_each_alone() {
    use serde_json::json;
    let cases: Vec<(String, &str)> = vec![
        (
            refusal(|v| v["max_share"] = json!(3)),
            "unknown field `max_share`",
        ),
        (
            refusal(|v| v["rules"][0]["share_with"] = json!([])),
            "unknown field `share_with`",
        ),
        (
            refusal(|v| v["anex_policy"] = json!(2)),
            "anex_policy: version 2 is not one this host reads",
        ),
        (
            refusal(|v| v["terms_valid_days"] = json!(0)),
            "terms_valid_days: must be 1 to 3650",
        ),
        (
            refusal(|v| v["terms_valid_days"] = json!(3651)),
            "terms_valid_days: must be 1 to 3650",
        ),
        (
            refusal(|v| v["decide_within_hours"] = json!(0)),
            "decide_within_hours: must be 1 to 720",
        ),
        (
            refusal(|v| v["decide_within_hours"] = json!(721)),
            "decide_within_hours: must be 1 to 720",
        ),
        (
            refusal(|v| drop(v.as_object_mut().unwrap().remove("terms_valid_days"))),
            "missing field `terms_valid_days`",
        ),
        (
            refusal(|v| v["rules"][1]["relations"] = json!([])),
            "rules[1]: names no one",
        ),
        (
            refusal(|v| v["rules"][0]["relations"] = json!(["supplier"])),
            "rules[0]: says anyone and also names relations or identities",
        ),
        (
            refusal(|v| v["rules"][0]["items"] = json!(["Legal Name"])),
            "rules[0].items[0]: \"Legal Name\"",
        ),
        (
            refusal(|v| v["rules"][0]["items"] = json!([])),
            "rules[0].items: names no item",
        ),
        (
            refusal(|v| v["rules"][0]["items"] = json!(["a", "a"])),
            "rules[0].items[1]: appears twice",
        ),
        (
            refusal(|v| v["rules"][1]["promises"] = json!(["no  sharing"])),
            "rules[1].promises[0]",
        ),
        (
            refusal(|v| v["rules"][2]["identities"] = json!(["did web"])),
            "rules[2].identities[0]",
        ),
        (
            refusal(|v| v["may_promise"] = json!(["x", "x"])),
            "may_promise[1]: appears twice",
        ),
        (
            refusal(|v| {
                v["rules"] = json!((0..257)
                    .map(|_| json!({"items": ["a"], "anyone": true}))
                    .collect::<Vec<_>>())
            }),
            "more than 256 rules",
        ),
    ];
    for (message, needle) in cases {
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }
    let dup = r#"{"anex_policy": 1, "anex_policy": 1, "terms_valid_days": 1, "rules": []}"#;
    assert!(matches!(Policy::parse(dup), Err(PolicyError::Json(m)) if m.contains("appears twice")));
    assert!(matches!(
        Policy::parse("rules: []"),
        Err(PolicyError::Json(_))
    ));
}

#[test]
fn a_request_inside_the_policy_is_answered_as_asked() {
    let asked = terms(
        &["legal_name(m)", "tax_id(m)", "ap_contact"],
        &["no sharing with third parties"],
    );
    let e = policy().evaluate_request(&supplier(), &asked);
    assert!(e.within_policy());
    assert_eq!(
        e.items.iter().map(|v| v.rule).collect::<Vec<_>>(),
        [Some(0), Some(1), Some(0)]
    );
    assert_eq!(e.items[0].reason, "rule 1 shares legal_name with anyone");
    assert_eq!(
        e.items[1].reason,
        "rule 2 shares tax_id with relation \"supplier\" under \"no sharing with third parties\""
    );
    let proposal = e.proposal(&asked).unwrap();
    assert!(proposal.same_as(&asked.unmarked()));
}

#[test]
fn a_promise_a_rule_needs_is_asked_for_in_the_answer() {
    let asked = terms(&["tax_id(m)"], &["no retention beyond 90 days"]);
    let e = policy().evaluate_request(&supplier(), &asked);
    assert!(e.within_policy());
    assert_eq!(e.items[0].adds.len(), 1);
    assert!(e.items[0].reason.ends_with(
        "; the request does not offer \"no sharing with third parties\", so the answer asks for it"
    ));
    let proposal = e.proposal(&asked).unwrap();
    assert!(proposal.same_as(&terms(
        &["tax_id"],
        &[
            "no retention beyond 90 days",
            "no sharing with third parties"
        ]
    )));
}

#[test]
fn an_item_no_rule_names_needs_the_owner() {
    let asked = terms(&["legal_name(m)", "bank_details(m)"], &[]);
    let e = policy().evaluate_request(&supplier(), &asked);
    assert!(!e.within_policy());
    assert_eq!(e.proposal(&asked), None);
    let owner: Vec<_> = e.needs_owner().collect();
    assert_eq!(owner.len(), 1);
    assert_eq!(owner[0].item.name.as_str(), "bank_details");
    assert_eq!(owner[0].reason, "no rule of the policy shares bank_details");
}

#[test]
fn an_item_shared_with_others_only_needs_the_owner_saying_with_whom() {
    let asked = terms(&["tax_id(m)"], &["no sharing with third parties"]);
    let e = policy().evaluate_request(
        &who("did:web:stranger.example", Some("acquaintance")),
        &asked,
    );
    assert!(!e.within_policy());
    assert_eq!(
        e.items[0].reason,
        "tax_id is shared only by rule 2 with relation \"supplier\", rule 3 with did:web:auditor.example; this counterparty is did:web:stranger.example (relation \"acquaintance\")"
    );
    // The relation is the one registered for the counterparty: without one,
    // whatever its CFP claims, a relation rule does not apply.
    let e = policy().evaluate_request(&who("did:web:supplier.example", None), &asked);
    assert!(!e.within_policy());
    assert!(e.items[0].reason.ends_with("(no relation registered)"));
}

#[test]
fn an_identity_rule_applies_and_the_rule_needing_fewest_promises_wins() {
    let asked = terms(&["tax_id"], &[]);
    let auditor = who("did:web:auditor.example", Some("supplier"));
    let e = policy().evaluate_request(&auditor, &asked);
    assert_eq!(
        e.items[0].rule,
        Some(2),
        "rule 3 needs no promise, rule 2 one"
    );
    assert!(e.items[0].adds.is_empty());
    assert_eq!(
        e.items[0].reason,
        "rule 3 shares tax_id with did:web:auditor.example"
    );
}

#[test]
fn an_answer_that_would_carry_too_many_promises_needs_the_owner() {
    let many: Vec<String> = (0..anex::limits::MAX_PROMISES)
        .map(|i| format!("promise {i}"))
        .collect();
    let asked = anex::Terms::from_wire(&["tax_id"], &many).unwrap();
    let e = policy().evaluate_request(&supplier(), &asked);
    assert!(!e.within_policy());
    assert!(
        e.items[0].reason.contains("more than 32 promises"),
        "{}",
        e.items[0].reason
    );
}

#[test]
fn a_proposal_to_the_owners_agent_within_policy_is_accepted() {
    let our_ask = terms(
        &["security_report(m)", "soc2_letter"],
        &["no sharing with third parties"],
    );
    let back = terms(
        &["security_report"],
        &[
            "no sharing with third parties",
            "no retention beyond 90 days",
        ],
    );
    assert_eq!(
        policy().evaluate_proposal(&our_ask, &back),
        ProposalVerdict::Accept
    );
}

#[test]
fn a_proposal_that_drops_our_required_item_is_rejected_without_the_owner() {
    let our_ask = terms(&["security_report(m)", "soc2_letter"], &[]);
    let back = terms(&["soc2_letter"], &[]);
    let ProposalVerdict::Reject(r) = policy().evaluate_proposal(&our_ask, &back) else {
        panic!("not rejected")
    };
    assert_eq!(r.dropped_required[0].as_str(), "security_report");
}

#[test]
fn a_proposal_asking_promises_beyond_may_promise_needs_the_owner() {
    let our_ask = terms(&["security_report(m)"], &[]);
    let back = terms(
        &["security_report"],
        &[
            "no retention beyond 7 days",
            "no sharing with third parties",
        ],
    );
    let ProposalVerdict::NeedsOwner { promises } = policy().evaluate_proposal(&our_ask, &back)
    else {
        panic!("not for the owner")
    };
    assert_eq!(promises.len(), 1);
    assert_eq!(promises[0].0.as_str(), "no retention beyond 7 days");
    assert!(promises[0].1.contains("may_promise does not list"));
}

#[test]
fn an_ask_waits_for_the_owner_as_long_as_the_policy_says_or_three_days() {
    let asked = time::macros::datetime!(2026-12-07 10:00 UTC);
    assert_eq!(
        anex::decision_deadline(None, asked),
        time::macros::datetime!(2026-12-10 10:00 UTC)
    );
    assert_eq!(policy().decide_within_hours, 72);
    let mut v: serde_json::Value = serde_json::from_str(POLICY).unwrap();
    v["decide_within_hours"] = serde_json::json!(24);
    let policy = anex::Policy::parse(&v.to_string()).unwrap();
    assert_eq!(
        policy.decision_deadline(asked),
        time::macros::datetime!(2026-12-08 10:00 UTC)
    );
}
