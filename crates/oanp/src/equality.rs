//! JSON value equality as the publisher's verifier compares values.
//!
//! `valyzen.receipt.verify_receipt` compares parsed JSON with Python's `==`
//! (the signed and the receipt's `session_id`, a key's `kid` and `x`, the
//! chain's `head` and `length`). Absent members read as `None`, like `null`;
//! numbers compare by exact value across integers and floats (`1 == 1.0`,
//! but `9007199254740993 != 9007199254740992.0`); and a boolean is the
//! integer 0 or 1 (`true == 1`). Matching that here keeps our verdict equal to
//! the publisher's on every input, including odd ones.

use serde_json::{Number, Value};

/// `a == b` as Python compares the two parsed values (`None` for absent).
pub fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    same_value(a.unwrap_or(&Value::Null), b.unwrap_or(&Value::Null))
}

/// `a == b` as Python compares two parsed JSON values.
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => match (numeric(a), numeric(b)) {
            (Some(x), Some(y)) => numbers_equal(x, y),
            _ => false,
        },
    }
}

/// A number (or a boolean, which Python treats as 0 or 1), exactly.
#[derive(Debug, Clone, Copy)]
enum Numeric {
    Integer(i128),
    Float(f64),
}

/// Python compares an integer and a float exactly, never by rounding the
/// integer to a double.
fn numbers_equal(x: Numeric, y: Numeric) -> bool {
    match (x, y) {
        (Numeric::Integer(i), Numeric::Integer(j)) => i == j,
        (Numeric::Float(f), Numeric::Float(g)) => f == g,
        (Numeric::Integer(i), Numeric::Float(f)) | (Numeric::Float(f), Numeric::Integer(i)) => {
            // Every integral double below 2^100 converts to i128 exactly; the
            // integers here fit 64 bits, so a larger double never equals one.
            f.is_finite() && f.fract() == 0.0 && f.abs() < 1e30 && f as i128 == i
        }
    }
}

fn numeric(value: &Value) -> Option<Numeric> {
    match value {
        Value::Bool(b) => Some(Numeric::Integer(i128::from(*b))),
        Value::Number(n) => Some(of_number(n)),
        _ => None,
    }
}

fn of_number(n: &Number) -> Numeric {
    if let Some(i) = n.as_i64() {
        Numeric::Integer(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Numeric::Integer(i128::from(u))
    } else {
        Numeric::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn python_equality_of_parsed_json() {
        let equal = [
            ("1", "1.0"),
            ("true", "1"),
            ("false", "0.0"),
            ("null", "null"),
            (r#"{"a": [1, "x"]}"#, r#"{"a": [1.0, "x"]}"#),
            ("9007199254740992", "9007199254740992.0"),
        ];
        for (a, b) in equal {
            assert!(same_value(&v(a), &v(b)), "{a} == {b}");
        }
        let different = [
            ("1", "\"1\""),
            ("9007199254740993", "9007199254740992.0"),
            ("[1]", "[1, 1]"),
            (r#"{"a": 1}"#, r#"{"b": 1}"#),
            ("null", "false"),
            ("0", "null"),
            ("\"a\"", "\"A\""),
        ];
        for (a, b) in different {
            assert!(!same_value(&v(a), &v(b)), "{a} != {b}");
        }
    }

    #[test]
    fn absent_reads_as_null() {
        assert!(same(None, Some(&Value::Null)));
        assert!(same(None, None));
        assert!(!same(None, Some(&json!(""))));
    }
}
