//! Counter terms a person writes against an offer (the `terms` object of a
//! basic offer, §6.1), checked term by term by the type the answered offer
//! gives each term, before anyone signs them: an amount is an exact decimal
//! with its currency and never negative, a number is a number (a quantity,
//! a term with a `unit`, more than zero), a date is a real calendar date
//! and, since an offer's dates are commitments still to be met, after
//! today; every term the answered offer names is required. Every problem is
//! reported at once, each with its term, so a person fixes them all in one
//! go. Pure: today's date is passed in.

use rust_decimal::Decimal;
use serde_json::{Map, Value};
use time::{Date, Month};

use crate::offer::{exact_decimal, Offer, OfferError, OfferKind, TermValue, Terms};

/// The most terms a counter may carry (as the host's gate allows).
pub const MAX_COUNTER_TERMS: usize = 100;

/// What is wrong with one term of a counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TermProblem {
    /// The answered offer names the term; the counter leaves it out or empty.
    #[error("Required: the offer you answer names it, so give it a value")]
    Missing,
    /// A money term whose value is not an exact decimal.
    #[error("{typed:?} is not an amount: write an exact decimal number, like 140000.00")]
    NotAnAmount {
        /// The value as typed.
        typed: String,
    },
    /// A money term below zero.
    #[error("{value} is below zero: an amount cannot be negative")]
    NegativeAmount {
        /// The amount.
        value: Decimal,
    },
    /// A currency that is not three capital letters.
    #[error("The currency is three capital letters (USD, EUR)")]
    BadCurrency,
    /// A numeric term whose value is not a number.
    #[error("{typed:?} is not a number")]
    NotANumber {
        /// The value as typed.
        typed: String,
    },
    /// A quantity (a number with a unit) that is zero or below.
    #[error("{value} is not a quantity: it must be more than zero")]
    NotPositive {
        /// The number.
        value: Decimal,
    },
    /// A number below zero.
    #[error("{value} is below zero")]
    Negative {
        /// The number.
        value: Decimal,
    },
    /// A date term whose value is not a real calendar date.
    #[error("{typed:?} is not a real date: write YYYY-MM-DD, like 2027-01-15")]
    NotADate {
        /// The value as typed.
        typed: String,
    },
    /// A date on or before today: a commitment that cannot still be met.
    #[error(
        "{date} is not in the future: a date the counter commits to must be after today ({today})"
    )]
    DatePassed {
        /// The date given.
        date: Date,
        /// Today, as the check was told.
        today: Date,
    },
}

/// One term's problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{term}: {problem}")]
pub struct TermError {
    /// The term id (`price`, `delivery`), or `terms` for the object itself.
    pub term: String,
    /// What is wrong.
    pub problem: CounterProblem,
}

/// What is wrong with a counter, at a term or as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterProblem {
    /// One term's value.
    #[error(transparent)]
    Term(#[from] TermProblem),
    /// The terms are not an object of term id → value.
    #[error("counter terms are an object of term id → value")]
    NotAnObject,
    /// No terms, or more than [`MAX_COUNTER_TERMS`].
    #[error("a counter carries 1 to {MAX_COUNTER_TERMS} terms")]
    Count,
    /// The terms do not read as a Concordia offer.
    #[error(transparent)]
    Offer(#[from] OfferError),
}

/// Every problem of a counter, each with its term, in term order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct CounterErrors(pub Vec<TermError>);

/// How a term's value is read: by the answered offer's term of that id,
/// else by what the counter's own term says of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Money,
    Quantity,
    Number,
    Date,
    Text,
}

fn is_date_text(value: &Value) -> bool {
    value.as_str().is_some_and(|s| calendar_date(s).is_some())
}

fn kind_of(term: &TermValue) -> Kind {
    let typed = term.extra.get("type").and_then(Value::as_str);
    if term.extra.contains_key("currency") {
        Kind::Money
    } else if typed == Some("date") || is_date_text(&term.value) {
        Kind::Date
    } else if term.value.is_number() || matches!(typed, Some("number" | "integer")) {
        if term.extra.contains_key("unit") {
            Kind::Quantity
        } else {
            Kind::Number
        }
    } else {
        Kind::Text
    }
}

/// `YYYY-MM-DD` (or the date of an RFC 3339 time) as a real calendar date.
fn calendar_date(text: &str) -> Option<Date> {
    let text = text.trim();
    if let Ok(at) = approval_receipt::datetime::parse(text) {
        return Some(at.date());
    }
    let mut parts = text.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(y) && all_digits(m) && all_digits(d)) {
        return None;
    }
    let month = Month::try_from(m.parse::<u8>().ok()?).ok()?;
    Date::from_calendar_date(y.parse().ok()?, month, d.parse().ok()?).ok()
}

fn typed_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// The one problem of a present, non-empty value read as `kind`, if any.
fn check_value(kind: Kind, term: &TermValue, today: Date) -> Option<TermProblem> {
    let number = || exact_decimal(&term.value);
    match kind {
        Kind::Money => {
            let currency_ok = term
                .extra
                .get("currency")
                .and_then(Value::as_str)
                .is_some_and(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()));
            match number() {
                None => Some(TermProblem::NotAnAmount {
                    typed: typed_text(&term.value),
                }),
                Some(v) if v.is_sign_negative() && !v.is_zero() => {
                    Some(TermProblem::NegativeAmount { value: v })
                }
                Some(_) if !currency_ok => Some(TermProblem::BadCurrency),
                Some(_) => None,
            }
        }
        Kind::Quantity | Kind::Number => match number() {
            None => Some(TermProblem::NotANumber {
                typed: typed_text(&term.value),
            }),
            Some(v) if kind == Kind::Quantity && v <= Decimal::ZERO => {
                Some(TermProblem::NotPositive { value: v })
            }
            Some(v) if v < Decimal::ZERO => Some(TermProblem::Negative { value: v }),
            Some(_) => None,
        },
        Kind::Date => match term.value.as_str().and_then(calendar_date) {
            None => Some(TermProblem::NotADate {
                typed: typed_text(&term.value),
            }),
            Some(date) if date <= today => Some(TermProblem::DatePassed { date, today }),
            Some(_) => None,
        },
        Kind::Text => None,
    }
}

/// The flat terms of an offer a counter answers (basic and partial offers;
/// a conditional or bundle offer has none to require).
fn answered_terms(answered: Option<&Offer>) -> Option<&Terms> {
    match &answered?.kind {
        OfferKind::Basic { terms } | OfferKind::Partial { terms, .. } => Some(terms),
        _ => None,
    }
}

/// Checks counter terms against the offer they answer (`None` when there
/// is none to compare with), with `today` the date deadlines must be after.
/// Returns the counter read as a basic offer, or every problem found.
pub fn check_counter_terms(
    terms: &Value,
    answered: Option<&Offer>,
    today: Date,
) -> Result<Offer, CounterErrors> {
    let whole = |problem: CounterProblem| {
        CounterErrors(vec![TermError {
            term: "terms".to_owned(),
            problem,
        }])
    };
    let Some(map) = terms.as_object() else {
        return Err(whole(CounterProblem::NotAnObject));
    };
    if map.is_empty() || map.len() > MAX_COUNTER_TERMS {
        return Err(whole(CounterProblem::Count));
    }
    let mut body = Map::new();
    body.insert("terms".to_owned(), terms.clone());
    body.insert("complete".to_owned(), Value::Bool(true));
    let offer = Offer::parse(&body).map_err(|e| whole(e.into()))?;
    let required = answered_terms(answered);
    let mut errors = Vec::new();
    let mut report = |term: &str, problem: TermProblem| {
        errors.push(TermError {
            term: term.to_owned(),
            problem: problem.into(),
        })
    };
    if let Some(required) = required {
        for id in required.keys().filter(|id| !map.contains_key(*id)) {
            report(id, TermProblem::Missing);
        }
    }
    for (id, raw) in map {
        let term = TermValue::parse(raw);
        let kind = required
            .and_then(|r| r.get(id))
            .map(kind_of)
            .unwrap_or_else(|| kind_of(&term));
        let problem = if is_empty(&term.value) {
            Some(TermProblem::Missing)
        } else {
            check_value(kind, &term, today)
        };
        if let Some(problem) = problem {
            report(id, problem);
        }
    }
    if errors.is_empty() {
        Ok(offer)
    } else {
        errors.sort_by(|a, b| a.term.cmp(&b.term));
        Err(CounterErrors(errors))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::date;

    use super::*;

    const TODAY: Date = date!(2026 - 12 - 04);

    /// The sandbox's offer from Contoso Industrial, as the seller sends it.
    fn answered() -> Offer {
        let body = json!({
            "terms": {
                "item": {"value": "Industrial vibration sensors, model VX-200"},
                "quantity": {"value": 2000, "unit": "units"},
                "price": {"value": 547000, "currency": "USD"},
                "delivery": {"value": "2027-01-15", "type": "date"},
                "payment_terms": {"value": "Net 30"},
                "warranty_months": {"value": 24},
            },
            "complete": true,
            "valid_until": "2026-12-07T10:29:00Z",
        });
        Offer::parse(body.as_object().unwrap()).unwrap()
    }

    /// A counter that passes every check, with `term` replaced by `value`
    /// (or removed for `None`).
    fn counter_with(term: &str, value: Option<Value>) -> Value {
        let mut terms = json!({
            "item": {"value": "Industrial vibration sensors, model VX-200"},
            "quantity": {"value": 2000, "unit": "units"},
            "price": {"value": "520000.00", "currency": "USD"},
            "delivery": {"value": "2027-01-31", "type": "date"},
            "payment_terms": {"value": "Net 45"},
            "warranty_months": {"value": 36},
        });
        let map = terms.as_object_mut().unwrap();
        match value {
            Some(v) => {
                map.insert(term.to_owned(), v);
            }
            None => {
                map.remove(term);
            }
        }
        terms
    }

    fn problems(counter: &Value) -> Vec<(String, TermProblem)> {
        let answered = answered();
        match check_counter_terms(counter, Some(&answered), TODAY) {
            Ok(_) => Vec::new(),
            Err(CounterErrors(errors)) => errors
                .into_iter()
                .map(|e| match e.problem {
                    CounterProblem::Term(p) => (e.term, p),
                    other => panic!("not a term problem: {other}"),
                })
                .collect(),
        }
    }

    #[test]
    fn a_counter_with_every_term_sound_passes_and_reads_as_a_basic_offer() {
        let answered = answered();
        let offer = check_counter_terms(&counter_with("item", None), Some(&answered), TODAY);
        assert!(offer.is_err(), "item is required");
        let offer =
            check_counter_terms(&counter_with("x", None), Some(&answered), TODAY).expect("sound");
        assert!(matches!(offer.kind, OfferKind::Basic { .. }));
    }

    #[test]
    fn an_impossible_date_is_refused_at_its_term() {
        let counter = counter_with(
            "delivery",
            Some(json!({"value": "2027-13-45", "type": "date"})),
        );
        assert_eq!(
            problems(&counter),
            vec![(
                "delivery".to_owned(),
                TermProblem::NotADate {
                    typed: "2027-13-45".to_owned()
                }
            )]
        );
        let feb30 = counter_with(
            "delivery",
            Some(json!({"value": "2027-02-30", "type": "date"})),
        );
        assert_eq!(problems(&feb30).len(), 1);
    }

    #[test]
    fn a_deadline_today_or_in_the_past_is_refused() {
        for day in ["2026-12-04", "2020-01-01"] {
            let counter = counter_with("delivery", Some(json!({"value": day, "type": "date"})));
            let found = problems(&counter);
            assert!(
                matches!(found.as_slice(), [(t, TermProblem::DatePassed { .. })] if t == "delivery"),
                "{day}: {found:?}"
            );
        }
    }

    #[test]
    fn a_negative_or_zero_quantity_is_refused() {
        for q in [json!(-5), json!(0), json!("-5")] {
            let counter = counter_with("quantity", Some(json!({"value": q, "unit": "units"})));
            let found = problems(&counter);
            assert!(
                matches!(found.as_slice(), [(t, TermProblem::NotPositive { .. })] if t == "quantity"),
                "{q}: {found:?}"
            );
        }
    }

    #[test]
    fn a_quantity_in_words_is_not_a_number() {
        let counter = counter_with(
            "quantity",
            Some(json!({"value": "two thousand", "unit": "units"})),
        );
        assert!(matches!(
            problems(&counter).as_slice(),
            [(t, TermProblem::NotANumber { .. })] if t == "quantity"
        ));
    }

    #[test]
    fn an_amount_that_is_not_an_exact_decimal_is_refused() {
        for typed in ["forty thousand", "4e5", "1,000"] {
            let counter = counter_with("price", Some(json!({"value": typed, "currency": "USD"})));
            assert_eq!(
                problems(&counter),
                vec![(
                    "price".to_owned(),
                    TermProblem::NotAnAmount {
                        typed: typed.to_owned()
                    }
                )],
                "{typed}"
            );
        }
    }

    #[test]
    fn a_negative_amount_is_refused() {
        let counter = counter_with("price", Some(json!({"value": "-1.00", "currency": "USD"})));
        assert!(matches!(
            problems(&counter).as_slice(),
            [(t, TermProblem::NegativeAmount { .. })] if t == "price"
        ));
    }

    #[test]
    fn a_required_term_left_empty_or_out_is_refused() {
        let empty = counter_with("warranty_months", Some(json!({"value": ""})));
        assert_eq!(
            problems(&empty),
            vec![("warranty_months".to_owned(), TermProblem::Missing)]
        );
        let out = counter_with("warranty_months", None);
        assert_eq!(
            problems(&out),
            vec![("warranty_months".to_owned(), TermProblem::Missing)]
        );
    }

    #[test]
    fn every_problem_is_reported_at_once_each_with_its_term() {
        let mut counter = counter_with(
            "delivery",
            Some(json!({"value": "2027-13-45", "type": "date"})),
        );
        let map = counter.as_object_mut().unwrap();
        map.insert("quantity".into(), json!({"value": -5, "unit": "units"}));
        map.insert("warranty_months".into(), json!({"value": ""}));
        map.insert(
            "price".into(),
            json!({"value": "forty thousand", "currency": "USD"}),
        );
        let terms: Vec<String> = problems(&counter).into_iter().map(|(t, _)| t).collect();
        assert_eq!(terms, ["delivery", "price", "quantity", "warranty_months"]);
    }

    #[test]
    fn terms_that_are_not_an_object_or_none_at_all_are_refused_as_a_whole() {
        let answered = answered();
        for bad in [json!([]), json!({}), json!("price")] {
            let err = check_counter_terms(&bad, Some(&answered), TODAY).unwrap_err();
            assert_eq!(err.0.len(), 1);
            assert_eq!(err.0[0].term, "terms");
        }
    }
}
