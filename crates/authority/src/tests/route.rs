use rust_decimal::Decimal;

use super::{three_tier, with_rules};
use crate::{parse, route, Facts, Fired, Money, Protocol};

fn usd(v: &str) -> Option<Money> {
    money(v, "USD")
}

fn money(v: &str, c: &str) -> Option<Money> {
    Some(Money {
        value: v.parse::<Decimal>().unwrap(),
        currency: c.into(),
    })
}

fn roles_of(r: &crate::Route) -> Vec<&str> {
    r.chain
        .steps
        .iter()
        .map(|s| s.parts[0].role.as_str())
        .collect()
}

#[test]
fn each_band_edge_of_the_three_tiers_is_decided_at_below_and_above() {
    let p = three_tier();
    let cases = [
        ("0.01", 1, vec!["buyer"]),
        ("9999.99", 1, vec!["buyer"]),
        ("10000", 1, vec!["buyer"]),
        ("10000.00", 1, vec!["buyer"]),
        ("10000.01", 2, vec!["buyer", "finance"]),
        ("99999.99", 2, vec!["buyer", "finance"]),
        ("100000", 2, vec!["buyer", "finance"]),
        ("100000.01", 3, vec!["buyer", "finance", "cfo"]),
        ("5000000", 3, vec!["buyer", "finance", "cfo"]),
    ];
    for (amount, rule, chain) in cases {
        let r = route(&p, &Facts::new(Protocol::Anp, usd(amount)));
        match &r.fired {
            Fired::Rule { number, .. } => assert_eq!(*number, rule, "{amount}"),
            other => panic!("{amount}: {other:?}"),
        }
        assert_eq!(roles_of(&r), chain, "{amount}");
    }
}

#[test]
fn the_reason_names_the_rule_and_its_number_and_the_threshold_is_the_lower_edge() {
    let r = route(
        &three_tier(),
        &Facts::new(Protocol::Concordia, usd("150000")),
    );
    assert_eq!(r.reason, "Above 100,000 USD: rule 3");
    assert_eq!(r.threshold, usd("100000"));
    let low = route(&three_tier(), &Facts::new(Protocol::Concordia, usd("10")));
    assert_eq!(low.threshold, None, "a band from zero crosses no threshold");
}

#[test]
fn an_unnamed_currency_goes_to_its_fallback_and_is_never_converted() {
    let r = route(
        &three_tier(),
        &Facts::new(Protocol::Oanp, money("5", "EUR")),
    );
    assert_eq!(r.fired, Fired::UnnamedCurrency);
    assert_eq!(
        r.reason,
        "EUR is named by no rule: fallback (amounts in other currencies are never converted: finance, then the CFO, decide)"
    );
    assert_eq!(roles_of(&r), ["finance", "cfo"]);
}

#[test]
fn a_request_without_an_amount_no_rule_fits_goes_to_the_no_rule_fallback() {
    let r = route(&three_tier(), &Facts::new(Protocol::Anex, None));
    assert_eq!(r.fired, Fired::NoRule);
    assert_eq!(
        r.reason,
        "No rule matches: fallback (a request without an amount goes to a buyer)"
    );
}

#[test]
fn a_named_currency_in_a_gap_between_bands_goes_to_no_rule_not_unnamed_currency() {
    let p = parse(&with_rules(
        "buyer = [\"a@x.example\"]",
        "[[rule]]\nname = \"small\"\namount = [{ currency = \"USD\", up_to = 100 }]\n[[rule.step]]\nrole = \"buyer\"\n",
    ))
    .unwrap();
    assert_eq!(
        route(&p, &Facts::new(Protocol::Anp, usd("100.01"))).fired,
        Fired::NoRule
    );
    assert_eq!(
        route(&p, &Facts::new(Protocol::Anp, money("1", "GBP"))).fired,
        Fired::UnnamedCurrency
    );
}

fn two_rules(cond: &str) -> crate::Policy {
    parse(&with_rules(
        "buyer = [\"a@x.example\"]\ncfo = [\"c@x.example\"]",
        &format!("[[rule]]\nname = \"special\"\n{cond}\n[[rule.step]]\nrole = \"cfo\"\n\n[[rule]]\nname = \"rest\"\n[[rule.step]]\nrole = \"buyer\"\n"),
    ))
    .unwrap()
}

fn fired(p: &crate::Policy, f: &Facts) -> usize {
    match route(p, f).fired {
        Fired::Rule { number, .. } => number,
        other => panic!("{other:?}"),
    }
}

#[test]
fn rules_are_matched_in_order_on_protocol() {
    let p = two_rules("protocol = [\"anex\", \"oanp\"]");
    assert_eq!(fired(&p, &Facts::new(Protocol::Anex, None)), 1);
    assert_eq!(fired(&p, &Facts::new(Protocol::Oanp, None)), 1);
    assert_eq!(fired(&p, &Facts::new(Protocol::Anp, None)), 2);
    assert_eq!(fired(&p, &Facts::new(Protocol::Concordia, None)), 2);
}

#[test]
fn rules_match_on_counterparty() {
    let p = two_rules("counterparty = [\"Northwind Traders\"]");
    let mut f = Facts::new(Protocol::Anp, None);
    assert_eq!(fired(&p, &f), 2, "no counterparty known");
    f.counterparty = Some("Northwind Traders".into());
    assert_eq!(fired(&p, &f), 1);
    f.counterparty = Some("northwind traders".into());
    assert_eq!(fired(&p, &f), 2, "names are compared exactly");
}

#[test]
fn rules_match_on_any_sku_category_or_data_item_named() {
    for (field, set) in [("sku", 0usize), ("category", 1), ("data_item", 2)] {
        let p = two_rules(&format!("{field} = [\"hardware\", \"bank_details\"]"));
        let mut f = Facts::new(Protocol::Anp, None);
        fn lists(f: &mut Facts, set: usize) -> &mut Vec<String> {
            match set {
                0 => &mut f.skus,
                1 => &mut f.categories,
                _ => &mut f.data_items,
            }
        }
        lists(&mut f, set).push("software".into());
        assert_eq!(fired(&p, &f), 2, "{field}: none named");
        lists(&mut f, set).push("bank_details".into());
        assert_eq!(fired(&p, &f), 1, "{field}: one of two named");
    }
}

#[test]
fn a_rule_with_bands_needs_an_amount_and_all_conditions_must_hold() {
    let p = two_rules("protocol = [\"anp\"]\namount = [{ currency = \"USD\", above = 50000 }, { currency = \"EUR\", above = 45000 }]");
    assert_eq!(fired(&p, &Facts::new(Protocol::Anp, usd("50000.01"))), 1);
    assert_eq!(
        fired(&p, &Facts::new(Protocol::Anp, money("45000.01", "EUR"))),
        1
    );
    assert_eq!(
        fired(&p, &Facts::new(Protocol::Anp, money("45000", "EUR"))),
        2
    );
    assert_eq!(
        fired(&p, &Facts::new(Protocol::Concordia, usd("90000"))),
        2,
        "protocol fails"
    );
    assert_eq!(fired(&p, &Facts::new(Protocol::Anp, None)), 2, "no amount");
}

#[test]
fn the_route_carries_the_holders_of_every_role_its_chain_names() {
    let r = route(&three_tier(), &Facts::new(Protocol::Anp, usd("50000")));
    let roles: Vec<&String> = r.holders.keys().collect();
    assert_eq!(
        roles,
        ["buyer", "cfo", "finance"],
        "cfo through escalate_to"
    );
    let json = serde_json::to_string(&r).unwrap();
    let back: crate::Route = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r, "a stored route reads back whole");
}

#[test]
fn a_band_is_exclusive_above_and_inclusive_up_to_at_each_edge_alone() {
    let d = |v: &str| v.parse::<Decimal>().unwrap();
    let band = crate::Band {
        currency: crate::Currency::Code("USD".into()),
        above: Some(d("10000")),
        up_to: Some(d("100000")),
    };
    assert!(!band.holds(d("9999.99"), "USD"));
    assert!(!band.holds(d("10000"), "USD"), "above is exclusive");
    assert!(!band.holds(d("10000.000"), "USD"), "however many zeros");
    assert!(band.holds(d("10000.01"), "USD"));
    assert!(band.holds(d("99999.99"), "USD"));
    assert!(band.holds(d("100000"), "USD"), "up_to is inclusive");
    assert!(!band.holds(d("100000.01"), "USD"));
    assert!(
        !band.holds(d("50000"), "EUR"),
        "another currency is never in it"
    );
}

#[test]
fn a_rule_without_bands_takes_any_currency_before_the_fallback() {
    let p = two_rules("protocol = [\"anp\"]");
    assert_eq!(fired(&p, &Facts::new(Protocol::Anp, money("7", "CHF"))), 1);
}
