//! §6 offers read exactly, and their structured diff.

use concordia::diff::{diff_offers, BundleChange, ConditionChange, Effect, TermChange};
use concordia::offer::{Offer, OfferKind};
use rust_decimal::Decimal;
use serde_json::{json, Value};

fn offer(v: Value) -> Offer {
    Offer::parse(v.as_object().unwrap()).unwrap()
}

fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

#[test]
fn the_four_shapes_parse_with_exact_money() {
    let basic = offer(
        json!({"offer_id": "a", "terms": {"price": {"value": 150.10, "currency": "USD"}, "condition": {"value": "good", "enum": ["good", "fair"]}}, "complete": true}),
    );
    let OfferKind::Basic { terms } = &basic.kind else {
        panic!()
    };
    assert_eq!(terms["price"].money.as_ref().unwrap().value, dec("150.1"));
    assert_eq!(terms["condition"].extra["enum"], json!(["good", "fair"]));
    let partial = offer(
        json!({"terms": {"price": {"value": 140, "currency": "USD"}}, "open_terms": ["delivery"], "complete": false}),
    );
    assert!(
        matches!(&partial.kind, OfferKind::Partial { open_terms, .. } if open_terms == &["delivery".to_owned()])
    );
    let cond = offer(
        json!({"conditions": [{"if": {"delivery": "pickup"}, "then": {"price": {"value": 130, "currency": "USD"}}}]}),
    );
    assert!(matches!(&cond.kind, OfferKind::Conditional { conditions } if conditions.len() == 1));
    let bundle = offer(
        json!({"bundles": [{"bundle_id": "b1", "label": "Camera", "terms": {"price": {"value": 2200, "currency": "USD"}}}], "select": "one_of"}),
    );
    assert!(
        matches!(&bundle.kind, OfferKind::Bundle { bundles, select } if bundles.len() == 1 && select.as_deref() == Some("one_of"))
    );
    assert!(Offer::parse(json!({"complete": true}).as_object().unwrap()).is_err());
    assert!(Offer::parse(json!({"terms": []}).as_object().unwrap()).is_err());
    // 0.1 + 0.2 in floating point is not 0.3; read exactly, 0.3 is 0.3.
    let o = offer(json!({"terms": {"p": {"value": 0.3, "currency": "USD"}}}));
    let OfferKind::Basic { terms } = &o.kind else {
        panic!()
    };
    assert_eq!(
        terms["p"].money.as_ref().unwrap().value,
        dec("0.1") + dec("0.2")
    );
}

#[test]
fn a_diff_names_each_term_with_absolute_and_percent_change_in_its_currency() {
    let old = offer(
        json!({"terms": {"price": {"value": 2200, "currency": "USD"}, "delivery": {"value": "pickup"}, "warranty": {"value": true}}}),
    );
    let new = offer(
        json!({"terms": {"price": {"value": 1900.5, "currency": "USD"}, "delivery": {"value": "shipping"}, "insurance": {"value": "full"}}}),
    );
    let d = diff_offers(&old, &new);
    let names: Vec<&str> = d.terms.iter().map(|t| t.term.as_str()).collect();
    assert_eq!(names, ["delivery", "insurance", "price", "warranty"]);
    match &d.terms[2].change {
        TermChange::Changed {
            amount: Some(a), ..
        } => {
            assert_eq!(a.delta, Some(dec("-299.5")));
            assert_eq!(a.percent, Some(dec("-13.61")));
            assert_eq!(
                (a.old.currency.as_str(), a.new.currency.as_str()),
                ("USD", "USD")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(d.terms[1].change, TermChange::Added(_)));
    assert!(matches!(d.terms[3].change, TermChange::Removed(_)));
    // 150 and 150.00 are the same amount; a currency change has no delta.
    let a = offer(json!({"terms": {"price": {"value": 150, "currency": "USD"}}}));
    let b = offer(json!({"terms": {"price": {"value": 150.00, "currency": "USD"}}}));
    assert!(diff_offers(&a, &b).is_empty());
    let c = offer(json!({"terms": {"price": {"value": 150, "currency": "EUR"}}}));
    match &diff_offers(&a, &c).terms[0].change {
        TermChange::Changed {
            amount: Some(x), ..
        } => assert_eq!((x.delta, x.percent), (None, None)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn conditions_and_bundles_are_compared_plainly() {
    let c1 = offer(
        json!({"conditions": [{"if": {"d": "pickup"}, "then": {"price": {"value": 130, "currency": "USD"}}}]}),
    );
    let c2 = offer(
        json!({"conditions": [{"if": {"d": "pickup"}, "then": {"price": {"value": 125, "currency": "USD"}}}, {"if": {"d": "ship"}, "then": {"price": {"value": 145, "currency": "USD"}}}]}),
    );
    let d = diff_offers(&c1, &c2);
    assert!(
        matches!(&d.conditions[0], ConditionChange::Changed { index: 0, when_changed: false, then } if then.len() == 1)
    );
    assert!(matches!(&d.conditions[1], ConditionChange::Added(1, _)));
    let b1 = offer(
        json!({"bundles": [{"bundle_id": "x", "label": "A", "terms": {}}, {"bundle_id": "y", "terms": {}}]}),
    );
    let b2 = offer(
        json!({"bundles": [{"bundle_id": "x", "label": "B", "terms": {}}, {"bundle_id": "z", "terms": {}}]}),
    );
    let d = diff_offers(&b1, &b2);
    assert!(
        matches!(&d.bundles[0], BundleChange::Changed { bundle_id, label: Some(_), .. } if bundle_id == "x")
    );
    assert!(matches!(&d.bundles[1], BundleChange::Removed(b) if b.bundle_id == "y"));
    assert!(matches!(&d.bundles[2], BundleChange::Added(b) if b.bundle_id == "z"));
    assert_eq!(diff_offers(&c1, &b1).kind, Some(("conditional", "bundle")));
}

#[test]
fn a_validity_moved_by_milliseconds_is_no_change() {
    let at = |t: &str| {
        offer(json!({"terms": {"price": {"value": 100, "currency": "USD"}}, "valid_until": t}))
    };
    let d = diff_offers(
        &at("2026-12-04T10:29:35.068Z"),
        &at("2026-12-04T10:29:35.073Z"),
    );
    assert!(d.valid_until.is_none(), "5 ms is no change: {d:?}");
    assert!(d.is_empty());
    let d = diff_offers(
        &at("2026-12-04T10:29:35.068Z"),
        &at("2026-12-04T10:29:36.068Z"),
    );
    assert_eq!(
        d.valid_until,
        Some((
            Some("2026-12-04T10:29:35.068Z".to_owned()),
            Some("2026-12-04T10:29:36.068Z".to_owned())
        ))
    );
}

fn term_change(term: &str, old: Value, new: Value) -> Option<Effect> {
    let d = diff_offers(
        &offer(json!({"terms": {term: old}})),
        &offer(json!({"terms": {term: new}})),
    );
    match &d.terms[0].change {
        TermChange::Changed { effect, .. } => *effect,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_lower_price_is_better_for_the_buyer_a_higher_worse() {
    let price = |v: i64| json!({"value": v, "currency": "USD"});
    assert_eq!(
        term_change("price", price(547_000), price(536_000)),
        Some(Effect::Better)
    );
    assert_eq!(
        term_change("price", price(500_000), price(536_000)),
        Some(Effect::Worse)
    );
    // Across currencies nothing can be said.
    assert_eq!(
        term_change("price", price(100), json!({"value": 90, "currency": "EUR"})),
        None
    );
}

#[test]
fn a_shorter_warranty_is_worse_for_the_buyer_a_longer_better() {
    assert_eq!(
        term_change(
            "warranty_months",
            json!({"value": 36}),
            json!({"value": 24})
        ),
        Some(Effect::Worse)
    );
    assert_eq!(
        term_change(
            "warranty_months",
            json!({"value": 24}),
            json!({"value": 36})
        ),
        Some(Effect::Better)
    );
}

#[test]
fn fewer_days_to_pay_is_worse_for_the_buyer_more_better() {
    assert_eq!(
        term_change(
            "payment_terms",
            json!({"value": "Net 45"}),
            json!({"value": "Net 30"})
        ),
        Some(Effect::Worse)
    );
    assert_eq!(
        term_change(
            "payment_terms",
            json!({"value": "Net 30"}),
            json!({"value": "net 60"})
        ),
        Some(Effect::Better)
    );
    // Words that are not `Net N` have no direction.
    assert_eq!(
        term_change(
            "payment_terms",
            json!({"value": "Net 30"}),
            json!({"value": "on delivery"})
        ),
        None
    );
}

#[test]
fn an_earlier_delivery_is_better_for_the_buyer_a_later_worse() {
    let date = |d: &str| json!({"value": d, "type": "date"});
    assert_eq!(
        term_change("delivery", date("2027-01-31"), date("2027-01-17")),
        Some(Effect::Better)
    );
    assert_eq!(
        term_change("ship_by", date("2027-01-17"), date("2027-02-01")),
        Some(Effect::Worse)
    );
}

#[test]
fn a_term_without_a_direction_gets_none() {
    assert_eq!(
        term_change("quantity", json!({"value": 2000}), json!({"value": 1500})),
        None
    );
    assert_eq!(
        term_change(
            "item",
            json!({"value": "VX-200"}),
            json!({"value": "VX-300"})
        ),
        None
    );
}
