//! The v0.2 forms: RFC 9396 `authorization_details` and ODRL 2.2, one to
//! one with the v0.1 lists (round trips), and every form that would not
//! map exactly refused.

use anex::v02::{
    from_authorization_details, from_odrl, to_authorization_details, to_odrl, ACCESS_TYPE,
};
use anex::{Promise, Terms};
use serde_json::json;

use crate::support::terms;

const VOCABULARY: [&str; 5] = [
    "no data retention",
    "no retention beyond 90 days",
    "no retention beyond 1 day",
    "no sharing with third parties",
    "no resale",
];

#[test]
fn access_items_round_trip_through_authorization_details() {
    let t = terms(&["legal_name(m)", "tax_id(m)", "ap_contact"], &[]);
    let details = to_authorization_details(&t.access);
    assert_eq!(
        details,
        json!([
            {"type": ACCESS_TYPE, "actions": ["read"], "datatypes": ["legal_name"], "required": true},
            {"type": ACCESS_TYPE, "actions": ["read"], "datatypes": ["tax_id"], "required": true},
            {"type": ACCESS_TYPE, "actions": ["read"], "datatypes": ["ap_contact"]}
        ])
    );
    assert_eq!(from_authorization_details(&details).unwrap(), t.access);
    let explicit =
        json!([{"type": ACCESS_TYPE, "actions": ["read"], "datatypes": ["x"], "required": false}]);
    assert!(!from_authorization_details(&explicit).unwrap()[0].required);
}

#[test]
fn authorization_details_that_say_more_than_an_item_are_refused_each_alone() {
    let ok = json!({"type": ACCESS_TYPE, "actions": ["read"], "datatypes": ["tax_id"]});
    let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut entry = ok.clone();
        edit(&mut entry);
        from_authorization_details(&json!([entry]))
            .unwrap_err()
            .to_string()
    };
    let cases = [
        (
            refused(&|e| e["locations"] = json!(["https://rs.example"])),
            "carries only type, actions, datatypes and required",
        ),
        (
            refused(&|e| e["privileges"] = json!(["admin"])),
            "\"privileges\"",
        ),
        (
            refused(&|e| e["type"] = json!("payment_initiation")),
            ".type is not",
        ),
        (
            refused(&|e| e["actions"] = json!(["read", "write"])),
            ".actions is not [\"read\"]",
        ),
        (
            refused(&|e| e["datatypes"] = json!(["tax_id", "legal_name"])),
            "exactly one item",
        ),
        (
            refused(&|e| e["datatypes"] = json!(["Tax ID"])),
            "datatypes[0]",
        ),
        (
            refused(&|e| e["required"] = json!("yes")),
            "required is not a boolean",
        ),
    ];
    for (message, needle) in cases {
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }
    let twice = json!([ok.clone(), ok]);
    assert!(from_authorization_details(&twice)
        .unwrap_err()
        .to_string()
        .contains("a second time"));
    assert!(from_authorization_details(&json!({})).is_err());
}

fn promises(list: &[&str]) -> Vec<Promise> {
    list.iter().map(|s| Promise::parse(s).unwrap()).collect()
}

#[test]
fn vocabulary_promises_round_trip_through_odrl() {
    let policy = to_odrl(
        &promises(&VOCABULARY),
        "urn:anex:conv-1:terms",
        "urn:anex:conv-1:access",
    )
    .unwrap();
    assert_eq!(
        policy["@context"],
        json!("http://www.w3.org/ns/odrl.jsonld")
    );
    assert_eq!(
        policy["obligation"][1],
        json!({"action": "delete", "constraint": [{"leftOperand": "delayPeriod", "operator": "lteq", "rightOperand": {"@value": "P90D", "@type": "xsd:duration"}}]})
    );
    assert_eq!(
        policy["prohibition"],
        json!([{"action": "distribute"}, {"action": "sell"}])
    );
    let back = from_odrl(&policy).unwrap();
    let mut expected = promises(&VOCABULARY);
    expected.sort();
    let mut got = back.clone();
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn whole_terms_round_trip_through_both_forms() {
    let t = terms(
        &["legal_name(m)", "bank_details"],
        &["no sharing with third parties", "no data retention"],
    );
    let access = from_authorization_details(&to_authorization_details(&t.access)).unwrap();
    let promise = from_odrl(&to_odrl(&t.promise, "urn:x:1", "urn:x:2").unwrap()).unwrap();
    assert!(Terms::new(access, promise).unwrap().same_as(&t));
}

#[test]
fn a_promise_outside_the_vocabulary_has_no_odrl_form() {
    for text in [
        "no training of models",
        "no retention beyond 0 days",
        "no retention beyond 01 days",
        "no retention beyond 3651 days",
        "no retention beyond 1 days",
        "No data retention",
    ] {
        let e = to_odrl(&promises(&[text]), "urn:x:1", "urn:x:2").unwrap_err();
        assert!(e.to_string().contains("has no ODRL form"), "{text}: {e}");
    }
}

#[test]
fn odrl_that_would_not_map_exactly_is_refused_each_alone() {
    let ok = to_odrl(
        &promises(&["no data retention", "no resale"]),
        "urn:x:1",
        "urn:x:2",
    )
    .unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut p = ok.clone();
        edit(&mut p);
        from_odrl(&p).unwrap_err().to_string()
    };
    let cases = [
        (
            refused(&|p| p["permission"] = json!([{"action": "use"}])),
            "\"permission\" has no ANEX promise form",
        ),
        (
            refused(&|p| p["@context"] = json!("https://example.org/odrl")),
            "@context",
        ),
        (refused(&|p| p["@type"] = json!("Agreement")), "@type"),
        (
            refused(&|p| drop(p.as_object_mut().unwrap().remove("uid"))),
            "uid is missing",
        ),
        (
            refused(&|p| p["obligation"][0]["assignee"] = json!("urn:someone")),
            "not a delete duty",
        ),
        (
            refused(&|p| {
                p["obligation"][0]["constraint"][0]["rightOperand"]["@value"] = json!("P07D")
            }),
            "not a delete duty",
        ),
        (
            refused(&|p| p["obligation"][0]["constraint"][0]["operator"] = json!("gteq")),
            "not a delete duty",
        ),
        (
            refused(&|p| p["obligation"][0]["action"] = json!("anonymize")),
            "not a delete duty",
        ),
        (
            refused(&|p| p["prohibition"][0] = json!({"action": "use"})),
            "not a prohibition of the vocabulary",
        ),
        (
            refused(&|p| p["prohibition"] = json!([{"action": "sell"}, {"action": "sell"}])),
            "repeats",
        ),
        (
            refused(&|p| p["obligation"] = json!({})),
            "obligation is missing or not an array",
        ),
    ];
    for (message, needle) in cases {
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }
}
