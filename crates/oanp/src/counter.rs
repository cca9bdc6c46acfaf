//! Counter terms a person writes for the org's OANP agent to send instead:
//! a price in a positive whole number of minor units of a currency whose
//! exponent is known, and at most [`MAX_INCLUSIONS`] inclusions, each with
//! a kind on one line. Every problem is reported at once, each at the path
//! of its field, before anyone signs the counter.

use serde_json::Value;

use crate::money::{major_units, MinorUnits};
use crate::receipt::Terms;

/// The most inclusions a counter carries (as the host's gate allows).
pub const MAX_INCLUSIONS: usize = 50;

/// What is wrong with one field of a counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterProblem {
    /// The terms are not an object with a `price`.
    #[error("the counter must be OANP terms: a price {{amount_minor, currency}} and inclusions")]
    NotTerms,
    /// `price.amount_minor` is not a whole number.
    #[error("the price is a whole number of minor units (cents for USD)")]
    NotWhole,
    /// `price.amount_minor` is zero or below.
    #[error("the price must be more than zero")]
    NotPositive,
    /// A currency whose minor units are not known.
    #[error("{0:?} is not a currency whose minor units are known")]
    UnknownCurrency(String),
    /// More than [`MAX_INCLUSIONS`].
    #[error("at most {MAX_INCLUSIONS} inclusions")]
    TooManyInclusions,
    /// `inclusions` is not a list.
    #[error("inclusions are a list of {{kind, value}}")]
    NotAList,
    /// An inclusion without a kind, or with one of several lines.
    #[error("each inclusion needs a kind, one line of text")]
    NoKind,
}

/// One field's problem: where (`price/amount_minor`, `inclusions/2/kind`)
/// and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct FieldProblem {
    /// A JSON-pointer-like path without the leading slash (empty for the whole).
    pub path: String,
    /// What is wrong.
    pub problem: CounterProblem,
}

/// Every problem of a counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct CounterErrors(pub Vec<FieldProblem>);

/// Checks counter terms field by field; the terms read, or every problem.
pub fn check_counter_terms(terms: &Value) -> Result<Terms, CounterErrors> {
    let mut errors = Vec::new();
    let mut report = |path: &str, problem: CounterProblem| {
        errors.push(FieldProblem {
            path: path.to_owned(),
            problem,
        })
    };
    let Some(price) = terms.get("price").filter(|p| p.is_object()) else {
        return Err(CounterErrors(vec![FieldProblem {
            path: String::new(),
            problem: CounterProblem::NotTerms,
        }]));
    };
    let currency = price.get("currency").and_then(Value::as_str).unwrap_or("");
    match price
        .get("amount_minor")
        .and_then(Value::as_i64)
        .and_then(MinorUnits::new)
    {
        None => report("price/amount_minor", CounterProblem::NotWhole),
        Some(m) if m.get() <= 0 => report("price/amount_minor", CounterProblem::NotPositive),
        Some(_) => {}
    }
    if MinorUnits::new(1)
        .and_then(|one| major_units(one, currency))
        .is_none()
    {
        report(
            "price/currency",
            CounterProblem::UnknownCurrency(currency.to_owned()),
        );
    }
    match terms.get("inclusions") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            if items.len() > MAX_INCLUSIONS {
                report("inclusions", CounterProblem::TooManyInclusions);
            }
            for (i, item) in items.iter().enumerate() {
                let kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
                if kind.trim().is_empty() || kind.chars().any(char::is_control) {
                    report(&format!("inclusions/{i}/kind"), CounterProblem::NoKind);
                }
            }
        }
        Some(_) => report("inclusions", CounterProblem::NotAList),
    }
    if !errors.is_empty() {
        return Err(CounterErrors(errors));
    }
    serde_json::from_value(terms.clone()).map_err(|_| {
        CounterErrors(vec![FieldProblem {
            path: String::new(),
            problem: CounterProblem::NotTerms,
        }])
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(terms: Value) -> Vec<(String, CounterProblem)> {
        check_counter_terms(&terms).map_or_else(
            |e| e.0.into_iter().map(|p| (p.path, p.problem)).collect(),
            |_| Vec::new(),
        )
    }

    #[test]
    fn sound_terms_pass() {
        let terms =
            check_counter_terms(&json!({"price": {"amount_minor": 40000, "currency": "USD"},
            "inclusions": [{"kind": "warranty", "value": "included"}]}))
            .unwrap();
        assert_eq!(terms.price.amount_minor.get(), 40000);
    }

    #[test]
    fn a_negative_or_zero_price_is_refused() {
        for m in [-5, 0] {
            assert_eq!(
                paths(json!({"price": {"amount_minor": m, "currency": "USD"}})),
                [("price/amount_minor".to_owned(), CounterProblem::NotPositive)]
            );
        }
    }

    #[test]
    fn a_price_that_is_not_a_whole_number_is_refused() {
        for m in [json!("forty thousand"), json!(400.5), json!(null)] {
            assert_eq!(
                paths(json!({"price": {"amount_minor": m, "currency": "USD"}})),
                [("price/amount_minor".to_owned(), CounterProblem::NotWhole)]
            );
        }
    }

    #[test]
    fn an_unknown_currency_is_refused() {
        assert_eq!(
            paths(json!({"price": {"amount_minor": 1, "currency": "dollars"}})),
            [(
                "price/currency".to_owned(),
                CounterProblem::UnknownCurrency("dollars".into())
            )]
        );
    }

    #[test]
    fn a_missing_price_is_refused() {
        assert_eq!(
            paths(json!({"inclusions": []})),
            [(String::new(), CounterProblem::NotTerms)]
        );
    }

    #[test]
    fn an_inclusion_without_a_kind_is_refused_and_every_problem_reported_at_once() {
        let found = paths(json!({"price": {"amount_minor": -1, "currency": "XXX"},
            "inclusions": [{"kind": "meal"}, {"kind": " "}, {"kind": "a\nb"}]}));
        let at: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            at,
            [
                "price/amount_minor",
                "price/currency",
                "inclusions/1/kind",
                "inclusions/2/kind"
            ]
        );
    }

    #[test]
    fn too_many_inclusions_are_refused() {
        let many: Vec<Value> = (0..51).map(|i| json!({"kind": format!("k{i}")})).collect();
        assert_eq!(
            paths(json!({"price": {"amount_minor": 1, "currency": "USD"}, "inclusions": many})),
            [("inclusions".to_owned(), CounterProblem::TooManyInclusions)]
        );
    }
}
