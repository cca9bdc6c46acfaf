use super::{three_tier, with_rules, THREE_TIER};
use crate::{parse, FormatError, Holders, Need, Person, MAX_BYTES};

/// The refusal of `text`, which must be refused.
fn refused(text: &str) -> FormatError {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn check(e: &FormatError, line: usize, field: &str, reason: &str) {
    assert_eq!((e.line, e.field.as_str()), (line, field), "{e}");
    assert!(
        e.reason.contains(reason),
        "reason {:?} lacks {reason:?}",
        e.reason
    );
    assert!(
        e.to_string()
            .starts_with(&format!("line {line}, {field}: ")),
        "{e}"
    );
}

const ROLES: &str =
    "buyer = [\"ann@x.example\"]\nfinance = [\"fay@x.example\", \"Frank@X.example\"]";

/// A policy with one rule written as `rule`: `[[rule]]` is line 4, `rule`
/// starts on line 5.
fn one_rule(rule: &str) -> String {
    with_rules(ROLES, &format!("[[rule]]\n{rule}"))
}

#[test]
fn the_three_tier_example_reads_as_written() {
    let p = three_tier();
    assert_eq!(p.rules.len(), 3);
    assert_eq!(p.rules[1].chain.steps[1].respond_within_minutes, Some(480));
    assert_eq!(
        p.rules[1].chain.steps[1].escalate_to.as_deref(),
        Some("cfo")
    );
    assert_eq!(
        p.roles["cfo"],
        Holders::People(vec![Person::new("carol@fabrikam.example")])
    );
    assert!(THREE_TIER.contains("[unnamed_currency]"));
}

#[test]
fn emails_are_held_lower_case_and_counts_read_as_written() {
    let p = parse(&one_rule(
        "name = \"n\"\n[[rule.step]]\nrole = \"finance\"\ncount = 2\n[[rule.step]]\nrole = \"finance\"\ncount = \"all\"\n[[rule.step]]\nrole = \"buyer\"\ncount = \"any\"\n",
    ))
    .unwrap();
    assert_eq!(
        p.roles["finance"],
        Holders::People(vec![
            Person::new("fay@x.example"),
            Person::new("frank@x.example")
        ])
    );
    let needs: Vec<Need> = p.rules[0]
        .chain
        .steps
        .iter()
        .map(|s| s.parts[0].need)
        .collect();
    assert_eq!(needs, [Need::Count(2), Need::All, Need::One]);
}

#[test]
fn a_toml_syntax_error_names_its_line() {
    let e = refused(&one_rule(
        "name = \"unclosed\n[[rule.step]]\nrole = \"buyer\"\n",
    ));
    check(&e, 5, "rule[1].name", "");
    assert!(!e.reason.is_empty());
}

#[test]
fn an_unknown_field_is_refused_by_name() {
    let e = refused(&one_rule(
        "name = \"n\"\nammount = []\n[[rule.step]]\nrole = \"buyer\"\n",
    ));
    check(&e, 6, "rule[1].ammount", "unknown field `ammount`");
}

#[test]
fn a_missing_field_is_refused_by_name() {
    let e = refused(&one_rule("[[rule.step]]\nrole = \"buyer\"\n"));
    assert_eq!(e.field, "rule[1].name", "{e}");
    assert!(e.reason.contains("missing field `name`"), "{e}");
    let e = refused("[roles]\nbuyer = [\"a@x.example\"]\n[no_rule]\nreason = \"r\"\n[[no_rule.step]]\nrole = \"buyer\"\n");
    assert!(e.reason.contains("missing field `unnamed_currency`"), "{e}");
}

#[test]
fn an_unknown_role_in_a_step_is_refused_naming_the_roles_there_are() {
    let e = refused(&one_rule(
        "name = \"n\"\n[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"cfo\"\n",
    ));
    check(
        &e,
        9,
        "rule[1].step[2].role",
        "no role \"cfo\" in [roles] (roles: buyer, finance)",
    );
}

#[test]
fn a_float_amount_is_refused_as_inexact() {
    let e = refused(&one_rule("name = \"n\"\namount = [{ currency = \"USD\", up_to = 10000.5 }]\n[[rule.step]]\nrole = \"buyer\"\n"));
    check(&e, 6, "rule[1].amount", "TOML float");
}

#[test]
fn an_amount_string_that_is_not_plain_digits_is_refused() {
    for bad in ["-5", "1,000", "1e3", " 5", ""] {
        let e = refused(&one_rule(&format!("name = \"n\"\namount = [{{ currency = \"USD\", above = \"{bad}\" }}]\n[[rule.step]]\nrole = \"buyer\"\n")));
        check(&e, 6, "rule[1].amount", "is not an amount");
    }
}

#[test]
fn a_band_whose_edges_cross_or_are_absent_is_refused() {
    let e = refused(&one_rule("name = \"n\"\namount = [{ currency = \"USD\", above = 100, up_to = 100 }]\n[[rule.step]]\nrole = \"buyer\"\n"));
    check(
        &e,
        6,
        "rule[1].amount[1].up_to",
        "up_to (100) must be greater than above (100)",
    );
    let e = refused(&one_rule(
        "name = \"n\"\namount = [{ currency = \"USD\" }]\n[[rule.step]]\nrole = \"buyer\"\n",
    ));
    check(&e, 6, "rule[1].amount[1]", "a band needs `above`");
}

#[test]
fn a_currency_not_in_iso_form_is_refused() {
    let e = refused(&one_rule("name = \"n\"\namount = [{ currency = \"usd\", up_to = 1 }]\n[[rule.step]]\nrole = \"buyer\"\n"));
    check(&e, 6, "rule[1].amount[1].currency", "ISO 4217");
}

#[test]
fn counts_out_of_range_or_beyond_the_holders_are_refused() {
    for (count, reason) in [
        ("0", "0 is not a count"),
        ("21", "21 is not a count"),
        ("3", "needs 3 of finance, which has 2 holder(s)"),
        ("\"some\"", "\"some\" is not a count"),
    ] {
        let e = refused(&one_rule(&format!(
            "name = \"n\"\n[[rule.step]]\nrole = \"finance\"\ncount = {count}\n"
        )));
        assert_eq!(e.line, 8, "{count}: {e}");
        assert!(
            e.field.ends_with("count") || e.field.ends_with("step[1]"),
            "{count}: {e}"
        );
        assert!(e.reason.contains(reason), "{count}: {e}");
    }
}

#[test]
fn role_holders_must_be_emails_named_once_and_roles_must_have_holders() {
    let e = refused(&with_rules("buyer = [\"ann\"]", ""));
    check(&e, 2, "roles.buyer[1]", "\"ann\" is not an email");
    let e = refused(&with_rules(
        "buyer = [\"a@x.example\", \"A@x.example\"]",
        "",
    ));
    check(&e, 2, "roles.buyer[2]", "a@x.example is named twice");
    let e = refused(&with_rules("buyer = [\"a@x.example\"]\nfinance = []", ""));
    check(&e, 3, "roles.finance", "at least one holder");
    let e = refused(&with_rules(
        "buyer = [\"a@x.example\"]\n\"Chief Officer\" = [\"c@x.example\"]",
        "",
    ));
    check(&e, 3, "roles.Chief Officer", "is not a role name");
}

#[test]
fn a_rule_without_steps_or_a_step_without_a_role_is_refused() {
    let e = refused(&one_rule("name = \"n\"\n"));
    check(&e, 4, "rule[1].step", "at least one step");
    let e = refused(&one_rule("name = \"n\"\n[[rule.step]]\ncount = 2\n"));
    check(&e, 6, "rule[1].step[1].role", "a step needs a `role`");
    let e = refused(&one_rule("name = \"n\"\n[[rule.step]]\nrole = \"buyer\"\nall_of = [{ role = \"finance\" }, { role = \"buyer\" }]\n"));
    check(&e, 6, "rule[1].step[1]", "not both");
    let e = refused(&one_rule(
        "name = \"n\"\n[[rule.step]]\nall_of = [{ role = \"finance\" }]\n",
    ));
    check(&e, 6, "rule[1].step[1].all_of", "at least two parts");
}

#[test]
fn a_response_time_must_be_one_number_and_unit_and_escalation_needs_one() {
    let e = refused(&one_rule(
        "name = \"n\"\n[[rule.step]]\nrole = \"buyer\"\nrespond_within = \"4 hours\"\n",
    ));
    check(
        &e,
        8,
        "rule[1].step[1].respond_within",
        "\"4 hours\" is not a response time",
    );
    let e = refused(&one_rule(
        "name = \"n\"\n[[rule.step]]\nrole = \"buyer\"\nescalate_to = \"finance\"\n",
    ));
    check(
        &e,
        8,
        "rule[1].step[1].escalate_to",
        "needs a `respond_within`",
    );
    let e = refused(&one_rule(
        "name = \"n\"\n[[rule.step]]\nrole = \"buyer\"\nrespond_within = \"31d\"\n",
    ));
    check(&e, 8, "rule[1].step[1].respond_within", "at most 30 days");
}

#[test]
fn an_unknown_protocol_or_an_empty_list_is_refused() {
    let e = refused(&one_rule(
        "name = \"n\"\nprotocol = [\"anp\", \"http\"]\n[[rule.step]]\nrole = \"buyer\"\n",
    ));
    check(&e, 6, "rule[1].protocol[2]", "\"http\" is not a protocol");
    let e = refused(&one_rule(
        "name = \"n\"\nsku = []\n[[rule.step]]\nrole = \"buyer\"\n",
    ));
    check(&e, 6, "rule[1].sku", "an empty list matches nothing");
}

#[test]
fn the_second_rule_is_counted_in_the_field() {
    let e = refused(&one_rule("name = \"one\"\n[[rule.step]]\nrole = \"buyer\"\n[[rule]]\nname = \"\"\n[[rule.step]]\nrole = \"buyer\"\n"));
    check(&e, 9, "rule[2].name", "a rule needs a name");
}

#[test]
fn a_fallback_without_a_reason_is_refused() {
    let text = with_rules(ROLES, "").replace("reason = \"nothing matched\"", "reason = \"  \"");
    let e = refused(&text);
    assert_eq!(e.field, "no_rule.reason", "{e}");
    assert!(e.reason.contains("1 to 300 characters"), "{e}");
}

#[test]
fn an_oversized_file_is_refused_before_it_is_parsed() {
    let text = format!("{}\n#{}", three_tier_text(), "x".repeat(MAX_BYTES));
    let e = refused(&text);
    check(&e, 1, "(file)", "may be at most");
}

fn three_tier_text() -> &'static str {
    THREE_TIER
}

#[test]
fn a_missing_field_of_an_outer_table_is_named_by_that_table() {
    // `[no_rule]` misspelt: its steps still make a `no_rule` table, which
    // then lacks its reason.
    let text = with_rules(ROLES, "").replace(
        "[no_rule]\nreason = \"nothing matched\"\n",
        "[no_rules]\nreason = \"x\"\n",
    );
    let e = refused(&text);
    assert!(e.field == "no_rules" || e.field == "no_rule.reason", "{e}");
    let e = refused(&with_rules(ROLES, "").replace("reason = \"nothing matched\"\n", ""));
    check(&e, 10, "no_rule.reason", "missing field `reason`");
}
