//! The offer diff on the hard cases, asserted on what the console receives:
//! the JSON of `OfferDiff` (docs/console-contract.md).

use anp::diff::{diff_offers, Effect, LineStatus, OfferDiff};
use anp::money::offer_total;
use anp::payload::Offer;
use serde_json::{json, Value};

fn line(sku: Option<&str>, description: &str, quantity: f64, unit_price: f64) -> Value {
    let mut item = json!({"description": description, "quantity": quantity, "unit": "seat/year",
        "unit_price": unit_price, "currency": "USD"});
    if let Some(sku) = sku {
        item["sku"] = json!(sku);
    }
    item
}

fn offer(lines: Vec<Value>) -> Value {
    json!({"currency": "USD", "term_months": 12, "expires_at": "2026-08-01T00:00:00Z",
        "line_items": lines})
}

fn parse(value: &Value) -> Offer {
    Offer::parse(value).unwrap_or_else(|e| panic!("{e}"))
}

fn diff(old: &Value, new: &Value) -> OfferDiff {
    diff_offers(&parse(old), &parse(new))
}

/// (status, moved, key, old_index, new_index): one row as the UI lists it.
type Row = (LineStatus, bool, String, Option<usize>, Option<usize>);

fn rows(d: &OfferDiff) -> Vec<Row> {
    d.line_items
        .iter()
        .map(|r| (r.status, r.moved, r.key.clone(), r.old_index, r.new_index))
        .collect()
}

use LineStatus::{Added, Changed, Removed, Unchanged};

fn row(status: LineStatus, moved: bool, key: &str, old: Option<usize>, new: Option<usize>) -> Row {
    (status, moved, key.to_owned(), old, new)
}

fn abc() -> Vec<Value> {
    vec![
        line(Some("A"), "Alpha", 10.0, 100.0),
        line(Some("B"), "Beta", 20.0, 50.0),
        line(Some("C"), "Gamma", 5.0, 10.0),
    ]
}

#[test]
fn the_example_counter_offer_serializes_as_the_contract_says() {
    let old = json!({"currency": "USD", "term_months": 12, "expires_at": "2026-08-01T00:00:00Z",
        "line_items": [{"description": "CRM Enterprise seats", "quantity": 500, "unit": "seat/year",
            "unit_price": 1200, "currency": "USD"}], "conditions": ["Net 30 payment"]});
    let new = json!({"currency": "USD", "term_months": 24, "expires_at": "2026-08-01T00:00:00.000Z",
        "line_items": [{"description": "CRM Enterprise seats", "quantity": 500, "unit": "seat/year",
            "unit_price": 1056, "currency": "USD"}],
        "conditions": ["Price hold through the full term", "Annual uplift capped at 3%"],
        "notes": "Counter at 12% below."});
    let got = serde_json::to_value(diff(&old, &new)).unwrap();
    let expected = json!({
        "currency": null,
        "term_months": {"old": "12", "new": "24"},
        "expires_at": null,
        "notes": {"old": null, "new": "Counter at 12% below."},
        "conditions": {"added": ["Price hold through the full term", "Annual uplift capped at 3%"],
            "removed": ["Net 30 payment"], "unchanged": []},
        "line_items": [{
            "status": "changed", "moved": false, "key": "CRM Enterprise seats",
            "old_index": 0, "new_index": 0,
            "old": old["line_items"][0], "new": new["line_items"][0],
            "fields": [
                {"field": "unit_price", "old": "1200", "new": "1056", "absolute": "-144", "percent": "-12.00", "effect": "better"}
            ]
        }],
        "total": {
            "old": {"amount": "600000", "computed": "600000", "stated": null, "mismatch": false},
            "new": {"amount": "528000", "computed": "528000", "stated": null, "mismatch": false},
            "absolute": "-72000", "percent": "-12.00", "currency_changed": false, "effect": "better"
        }
    });
    assert_eq!(got, expected);
}

#[test]
fn an_item_inserted_at_the_top_moves_nothing() {
    let old = offer(abc());
    let mut lines = abc();
    lines.insert(0, line(Some("X"), "New thing", 1.0, 1.0));
    let d = diff(&old, &offer(lines));
    assert_eq!(
        rows(&d),
        vec![
            row(Added, false, "X", None, Some(0)),
            row(Unchanged, false, "A", Some(0), Some(1)),
            row(Unchanged, false, "B", Some(1), Some(2)),
            row(Unchanged, false, "C", Some(2), Some(3)),
        ]
    );
    assert_eq!(d.total.absolute.to_string(), "1");
}

#[test]
fn reordering_marks_only_the_minimal_set_as_moved() {
    let old = offer(abc());
    let l = abc();
    // C moved to the top: only C moved.
    let d = diff(&old, &offer(vec![l[2].clone(), l[0].clone(), l[1].clone()]));
    assert_eq!(
        rows(&d),
        vec![
            row(Unchanged, true, "C", Some(2), Some(0)),
            row(Unchanged, false, "A", Some(0), Some(1)),
            row(Unchanged, false, "B", Some(1), Some(2)),
        ]
    );
    // A swap of two moves exactly one.
    let d = diff(&old, &offer(vec![l[1].clone(), l[0].clone(), l[2].clone()]));
    assert_eq!(d.line_items.iter().filter(|r| r.moved).count(), 1);
    // Full reversal of three keeps one in place.
    let d = diff(&old, &offer(vec![l[2].clone(), l[1].clone(), l[0].clone()]));
    assert_eq!(d.line_items.iter().filter(|r| r.moved).count(), 2);
    assert_eq!(d.total.percent.as_deref(), Some("0.00"));
}

#[test]
fn duplicate_skus_pair_in_order_of_occurrence() {
    let old = offer(vec![
        line(Some("A"), "Seats", 1.0, 10.0),
        line(Some("A"), "Seats", 2.0, 10.0),
        line(Some("A"), "Seats", 3.0, 10.0),
    ]);
    let new = offer(vec![
        line(Some("A"), "Seats", 1.0, 10.0),
        line(Some("A"), "Seats", 5.0, 10.0),
    ]);
    let d = diff(&old, &new);
    assert_eq!(
        rows(&d),
        vec![
            row(Unchanged, false, "A", Some(0), Some(0)),
            row(Changed, false, "A", Some(1), Some(1)),
            row(Removed, false, "A", Some(2), None),
        ]
    );
    let quantity = &d.line_items[1].fields[0];
    assert_eq!(quantity.field, "quantity");
    assert_eq!(
        (quantity.old.as_deref(), quantity.new.as_deref()),
        (Some("2"), Some("5"))
    );
    assert_eq!(
        quantity.absolute.map(|m| m.to_string()).as_deref(),
        Some("3")
    );
    assert_eq!(quantity.percent.as_deref(), Some("150.00"));
}

#[test]
fn a_currency_change_is_flagged_and_has_no_percentage() {
    let old = offer(abc());
    let mut new = offer(abc());
    new["currency"] = json!("EUR");
    for item in new["line_items"].as_array_mut().unwrap() {
        item["currency"] = json!("EUR");
    }
    let d = diff(&old, &new);
    assert_eq!(
        serde_json::to_value(&d.currency).unwrap(),
        json!({"old": "USD", "new": "EUR"})
    );
    assert!(d.total.currency_changed);
    assert_eq!(d.total.percent, None);
    assert_eq!(d.total.absolute.to_string(), "0");
    for r in &d.line_items {
        assert_eq!(r.status, Changed);
        assert_eq!(r.fields.len(), 1);
        assert_eq!(r.fields[0].field, "currency");
    }
}

#[test]
fn conditions_are_multisets_and_an_empty_list_is_no_list() {
    let mut old = offer(abc());
    let mut new = offer(abc());
    new["conditions"] = json!([]);
    let d = diff(&old, &new);
    assert_eq!(
        serde_json::to_value(&d.conditions).unwrap(),
        json!({"added": [], "removed": [], "unchanged": []})
    );
    assert!(d.line_items.iter().all(|r| r.status == Unchanged));

    old["conditions"] = json!(["Net 30", "Net 30", "Price hold"]);
    new["conditions"] = json!(["Price hold", "Net 30", "Uplift cap"]);
    let d = diff(&old, &new);
    assert_eq!(
        serde_json::to_value(&d.conditions).unwrap(),
        json!({"added": ["Uplift cap"], "removed": ["Net 30"], "unchanged": ["Price hold", "Net 30"]})
    );

    new["conditions"] = json!([]);
    let d = diff(&old, &new);
    assert_eq!(d.conditions.removed, vec!["Net 30", "Net 30", "Price hold"]);
}

#[test]
fn a_removed_item_sits_after_its_old_neighbour_and_moves_nothing() {
    let old = offer(abc());
    let l = abc();
    let d = diff(&old, &offer(vec![l[0].clone(), l[2].clone()]));
    assert_eq!(
        rows(&d),
        vec![
            row(Unchanged, false, "A", Some(0), Some(0)),
            row(Removed, false, "B", Some(1), None),
            row(Unchanged, false, "C", Some(2), Some(1)),
        ]
    );
    assert_eq!(d.total.absolute.to_string(), "-1000");
    assert_eq!(d.total.percent.as_deref(), Some("-48.78"));
    let d = diff(&old, &offer(vec![l[1].clone(), l[2].clone()]));
    assert_eq!(rows(&d)[0], row(Removed, false, "A", Some(0), None));
}

#[test]
fn items_without_sku_match_by_description_and_never_match_a_sku() {
    let old = offer(vec![
        line(None, "Premier support", 1.0, 5000.0),
        line(None, "Onboarding", 1.0, 1000.0),
    ]);
    let new = offer(vec![
        line(None, "Onboarding", 1.0, 1000.0),
        line(None, "Premier support", 1.0, 4500.5),
        line(Some("Onboarding"), "Something else", 1.0, 1.0),
    ]);
    let d = diff(&old, &new);
    // The two matched lines swapped places: exactly one of them moved.
    let without_moves: Vec<_> = rows(&d)
        .into_iter()
        .map(|(status, _, key, o, n)| (status, key, o, n))
        .collect();
    assert_eq!(
        without_moves,
        vec![
            (Unchanged, "Onboarding".to_owned(), Some(1), Some(0)),
            (Changed, "Premier support".to_owned(), Some(0), Some(1)),
            (Added, "Onboarding".to_owned(), None, Some(2)),
        ]
    );
    assert_eq!(d.line_items.iter().filter(|r| r.moved).count(), 1);
    let fields = serde_json::to_value(&d.line_items[1].fields).unwrap();
    assert_eq!(
        fields,
        json!([
            {"field": "unit_price", "old": "5000", "new": "4500.5", "absolute": "-499.5", "percent": "-9.99", "effect": "better"}
        ])
    );
}

#[test]
fn a_stated_total_that_disagrees_is_reported_not_trusted() {
    let mut old = offer(abc());
    old["total_annual"] = json!(2050);
    let mut new = offer(abc());
    new["total_annual"] = json!(1999.99);
    let total = offer_total(&parse(&new));
    assert_eq!(
        serde_json::to_value(&total).unwrap(),
        json!({"amount": "1999.99", "computed": "2050", "stated": "1999.99", "mismatch": true})
    );
    let d = diff(&old, &new);
    assert!(!d.total.old.mismatch);
    assert!(d.total.new.mismatch);
    assert_eq!(d.total.absolute.to_string(), "-50.01");
    assert_eq!(d.total.percent.as_deref(), Some("-2.44"));
}

#[test]
fn percent_is_null_when_the_old_value_is_zero() {
    let old = offer(vec![line(Some("A"), "Free tier", 10.0, 0.0)]);
    let new = offer(vec![line(Some("A"), "Free tier", 10.0, 100.0)]);
    let d = diff(&old, &new);
    let fields = serde_json::to_value(&d.line_items[0].fields).unwrap();
    assert_eq!(
        fields,
        json!([
            {"field": "unit_price", "old": "0", "new": "100", "absolute": "100", "percent": null, "effect": "worse"}
        ])
    );
    assert_eq!(d.total.percent, None);
    assert_eq!(d.total.absolute.to_string(), "1000");
}

#[test]
fn identical_offers_differ_in_nothing() {
    let d = diff(&offer(abc()), &offer(abc()));
    assert!(d.currency.is_none() && d.term_months.is_none() && d.expires_at.is_none());
    assert!(d.notes.is_none());
    assert!(d
        .line_items
        .iter()
        .all(|r| r.status == Unchanged && !r.moved && r.fields.is_empty()));
}

#[test]
fn money_in_the_diff_is_exact_where_floats_are_not() {
    // 0.1 + 0.2 in floating point is 0.30000000000000004.
    let old = offer(vec![
        line(Some("A"), "a", 1.0, 0.1),
        line(Some("B"), "b", 1.0, 0.2),
    ]);
    let new = offer(vec![
        line(Some("A"), "a", 3.0, 0.1),
        line(Some("B"), "b", 1.0, 0.2),
    ]);
    let d = diff(&old, &new);
    assert_eq!(d.total.old.amount.to_string(), "0.3");
    assert_eq!(d.total.new.amount.to_string(), "0.5");
    assert_eq!(d.total.absolute.to_string(), "0.2");
    assert_eq!(d.total.percent.as_deref(), Some("66.67"));
}

#[test]
fn an_expiry_moved_by_milliseconds_is_no_change() {
    let mut old = offer(abc());
    old["expires_at"] = json!("2026-12-04T10:29:35.068Z");
    let mut new = offer(abc());
    new["expires_at"] = json!("2026-12-04T10:29:35.073Z");
    assert_eq!(diff(&old, &new).expires_at, None);
    // A whole second is a change a person acts on.
    new["expires_at"] = json!("2026-12-04T10:29:36.068Z");
    let moved = diff(&old, &new)
        .expires_at
        .expect("a second later is a change");
    assert_eq!(moved.new.as_deref(), Some("2026-12-04T10:29:36.068Z"));
}

#[test]
fn a_line_total_is_derived_not_a_changed_field() {
    // The price changed; the line's total follows from it and is not counted as a second field.
    let old = offer(vec![line(Some("A"), "Alpha", 10.0, 100.0)]);
    let new = offer(vec![line(Some("A"), "Alpha", 10.0, 90.0)]);
    let d = diff(&old, &new);
    let fields: Vec<&str> = d.line_items[0]
        .fields
        .iter()
        .map(|f| f.field.as_str())
        .collect();
    assert_eq!(fields, vec!["unit_price"]);
    // The total still moves by the line's change.
    assert_eq!(d.total.absolute.to_string(), "-100");
}

#[test]
fn notes_alone_change_no_term() {
    let old = offer(abc());
    let mut new = offer(abc());
    new["notes"] = json!("Happy to discuss volume tiers.");
    let d = diff(&old, &new);
    assert_eq!(
        d.notes.as_ref().and_then(|n| n.new.as_deref()),
        Some("Happy to discuss volume tiers.")
    );
    assert!(d.currency.is_none() && d.term_months.is_none() && d.expires_at.is_none());
    assert!(d.conditions.added.is_empty() && d.conditions.removed.is_empty());
    assert!(d.line_items.iter().all(|r| r.status == Unchanged));
}

#[test]
fn a_lower_unit_price_or_total_is_better_for_the_buyer_a_higher_worse() {
    let at = |price: f64| offer(vec![line(Some("A"), "Alpha", 10.0, price)]);
    let cut = diff(&at(547.0), &at(536.0));
    assert_eq!(cut.line_items[0].fields[0].effect, Some(Effect::Better));
    assert_eq!(cut.total.effect, Some(Effect::Better));
    let raised = diff(&at(500.0), &at(536.0));
    assert_eq!(raised.line_items[0].fields[0].effect, Some(Effect::Worse));
    assert_eq!(raised.total.effect, Some(Effect::Worse));
    let same = diff(&at(500.0), &at(500.0));
    assert_eq!(same.total.effect, None);
}

#[test]
fn quantity_and_term_have_no_direction() {
    let old = offer(vec![line(Some("A"), "Alpha", 10.0, 100.0)]);
    let mut new = offer(vec![line(Some("A"), "Alpha", 20.0, 100.0)]);
    new["term_months"] = json!(24);
    let d = diff(&old, &new);
    let quantity = &d.line_items[0].fields[0];
    assert_eq!(
        (quantity.field.as_str(), quantity.effect),
        ("quantity", None)
    );
    // The total still moved, and a higher total is worse for the buyer.
    assert_eq!(d.total.effect, Some(Effect::Worse));
}

#[test]
fn a_total_across_currencies_has_no_direction() {
    let old = offer(vec![line(Some("A"), "Alpha", 10.0, 100.0)]);
    let mut new = old.clone();
    new["currency"] = json!("EUR");
    new["line_items"][0]["currency"] = json!("EUR");
    new["line_items"][0]["unit_price"] = json!(50);
    let d = diff(&old, &new);
    assert!(d.total.currency_changed);
    assert_eq!(d.total.effect, None);
}
