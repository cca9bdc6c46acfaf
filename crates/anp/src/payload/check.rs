//! The strict reader every payload parser uses: it walks a JSON value once,
//! collects every violation with its path, and hands back typed values.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::canonical::number_as_f64;
use crate::money::{json_number_to_decimal, Amount};

/// At most this many violations are kept; a hostile payload with a million
/// unknown keys gets a bounded error, and the count of the rest.
pub const MAX_REPORTED_VIOLATIONS: usize = 100;

/// Unknown keys are echoed in paths at most this long (in characters).
const MAX_KEY_ECHO: usize = 64;

/// One broken rule: where, and what the rule says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Where, like `line_items[3].unit_price`; empty for the payload itself.
    pub path: String,
    /// The rule, like `must be at most 1000000000`.
    pub rule: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "payload: {}", self.rule)
        } else {
            write!(f, "{}: {}", self.path, self.rule)
        }
    }
}

/// A payload that breaks the protocol's rules: every violation found, so a
/// sender can fix them all at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.violations, *.omitted))]
pub struct PayloadError {
    /// The violations, in document order (at most [`MAX_REPORTED_VIOLATIONS`]).
    pub violations: Vec<Violation>,
    /// How many more were found but not kept.
    pub omitted: usize,
}

impl PayloadError {
    /// True when some violation sits exactly at `path`.
    pub fn has_path(&self, path: &str) -> bool {
        self.violations.iter().any(|v| v.path == path)
    }
}

fn describe(violations: &[Violation], omitted: usize) -> String {
    let mut text = violations
        .iter()
        .map(Violation::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if omitted > 0 {
        text.push_str(&format!("; and {omitted} more"));
    }
    text
}

/// `parent.key`, or `key` at the top.
pub(crate) fn field(parent: &str, key: &str) -> String {
    let key = if key.chars().count() > MAX_KEY_ECHO {
        let cut: String = key.chars().take(MAX_KEY_ECHO).collect();
        format!("{cut}…")
    } else {
        key.to_owned()
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[index]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// Bounds of a numeric member: JSON Schema's minimum / exclusiveMinimum /
/// maximum, plus our limit on decimal places (see [`super::limits`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumberRule {
    pub min: Option<f64>,
    pub exclusive_min: Option<f64>,
    pub max: Option<f64>,
    pub max_places: u32,
}

/// Collects violations while reading a payload.
#[derive(Debug, Default)]
pub(crate) struct Checker {
    violations: Vec<Violation>,
    omitted: usize,
}

impl Checker {
    pub fn new() -> Checker {
        Checker::default()
    }

    pub fn fail(&mut self, path: &str, rule: impl Into<String>) {
        if self.violations.len() < MAX_REPORTED_VIOLATIONS {
            self.violations.push(Violation {
                path: path.to_owned(),
                rule: rule.into(),
            });
        } else {
            self.omitted += 1;
        }
    }

    /// Ok when nothing was violated.
    pub fn finish(self) -> Result<(), PayloadError> {
        if self.violations.is_empty() {
            Ok(())
        } else {
            Err(PayloadError {
                violations: self.violations,
                omitted: self.omitted,
            })
        }
    }

    /// The error for a typed value that should exist after a clean check:
    /// unreachable in practice, but an error rather than a panic.
    pub fn incomplete(path: &str) -> PayloadError {
        PayloadError {
            violations: vec![Violation {
                path: path.to_owned(),
                rule: "could not be read".to_owned(),
            }],
            omitted: 0,
        }
    }

    /// An object whose keys are all in `required` or `optional`, with every
    /// required key present. Unknown keys are violations at their own path.
    pub fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        required: &[&str],
        optional: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Value::Object(map) = value else {
            self.fail(path, "must be an object");
            return None;
        };
        for key in map.keys() {
            if !required.contains(&key.as_str()) && !optional.contains(&key.as_str()) {
                self.fail(&field(path, key), "is not allowed (unknown key)");
            }
        }
        for key in required {
            if !map.contains_key(*key) {
                self.fail(&field(path, key), "is required");
            }
        }
        Some(map)
    }

    /// A string of `min..=max` Unicode code points (as JSON Schema counts).
    pub fn string(&mut self, path: &str, value: &Value, min: usize, max: usize) -> Option<String> {
        let Value::String(text) = value else {
            self.fail(path, "must be a string");
            return None;
        };
        let length = text.chars().count();
        if length < min {
            if min == 1 {
                self.fail(path, "must not be empty");
            } else {
                self.fail(path, format!("must be at least {min} characters long"));
            }
            return None;
        }
        if length > max {
            self.fail(path, format!("must be at most {max} characters long"));
            return None;
        }
        Some(text.clone())
    }

    /// An array of `min..=max` items, each read by `item`.
    pub fn array<T>(
        &mut self,
        path: &str,
        value: &Value,
        min: usize,
        max: usize,
        mut item: impl FnMut(&mut Checker, &str, &Value) -> Option<T>,
    ) -> Option<Vec<T>> {
        let Value::Array(items) = value else {
            self.fail(path, "must be an array");
            return None;
        };
        let mut ok = true;
        if items.len() < min {
            self.fail(path, format!("must have at least {min} item(s)"));
            ok = false;
        }
        if items.len() > max {
            self.fail(path, format!("must have at most {max} items"));
            ok = false;
        }
        let mut out = Vec::with_capacity(items.len().min(max));
        for (i, element) in items.iter().enumerate() {
            match item(self, &index(path, i), element) {
                Some(v) => out.push(v),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A JSON number within `rule`, read exactly.
    pub fn number(&mut self, path: &str, value: &Value, rule: NumberRule) -> Option<Amount> {
        let Value::Number(number) = value else {
            self.fail(path, "must be a number");
            return None;
        };
        let f = number_as_f64(number);
        let before = self.violations.len() + self.omitted;
        if let Some(min) = rule.exclusive_min {
            if f <= min {
                self.fail(path, format!("must be greater than {}", show(min)));
            }
        }
        if let Some(min) = rule.min {
            if f < min {
                self.fail(path, format!("must be at least {}", show(min)));
            }
        }
        if let Some(max) = rule.max {
            if f > max {
                self.fail(path, format!("must be at most {}", show(max)));
            }
        }
        if self.violations.len() + self.omitted != before {
            return None;
        }
        let places_rule = format!("must have at most {} decimal places", rule.max_places);
        match json_number_to_decimal(number) {
            Ok(d) if d.scale() <= rule.max_places => Amount::from_json(number).ok(),
            _ => {
                self.fail(path, places_rule);
                None
            }
        }
    }

    /// A JSON number with no fractional part, `min..=max` (JSON Schema's
    /// `integer` accepts `12.0`).
    pub fn integer(&mut self, path: &str, value: &Value, min: i64, max: i64) -> Option<i64> {
        let Some(i) = value.as_number().and_then(integral) else {
            self.fail(path, "must be an integer");
            return None;
        };
        if i < min {
            self.fail(path, format!("must be at least {min}"));
            return None;
        }
        if i > max {
            self.fail(path, format!("must be at most {max}"));
            return None;
        }
        Some(i)
    }

    /// A string matching `^[A-Z]{3}$`.
    pub fn currency(&mut self, path: &str, value: &Value) -> Option<String> {
        let text = self.string(path, value, 0, usize::MAX)?;
        if text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase()) {
            Some(text)
        } else {
            self.fail(
                path,
                "must be three capital letters (ISO 4217 code, like USD)",
            );
            None
        }
    }

    /// A string matching `^[0-9a-f]{64}$` (a SHA-256 hex digest).
    pub fn hex64(&mut self, path: &str, value: &Value) -> Option<String> {
        let text = self.string(path, value, 0, usize::MAX)?;
        if text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Some(text)
        } else {
            self.fail(path, "must be 64 lowercase hex characters");
            None
        }
    }

    /// An RFC 3339 date-time string (JSON Schema `format: date-time`).
    pub fn date_time(&mut self, path: &str, value: &Value) -> Option<String> {
        let text = self.string(path, value, 0, MAX_DATE_TIME_LEN)?;
        if OffsetDateTime::parse(&text, &Rfc3339).is_ok() {
            Some(text)
        } else {
            self.fail(
                path,
                "must be an RFC 3339 date-time, like 2026-08-01T00:00:00Z",
            );
            None
        }
    }

    /// One of `choices`.
    pub fn one_of(&mut self, path: &str, value: &Value, choices: &[&str]) -> Option<String> {
        match value.as_str() {
            Some(text) if choices.contains(&text) => Some(text.to_owned()),
            _ => {
                self.fail(path, format!("must be one of {}", choices.join(", ")));
                None
            }
        }
    }
}

/// Longest date-time text considered (RFC 3339 with nanoseconds is 35).
const MAX_DATE_TIME_LEN: usize = 64;

/// The integer a JSON number denotes, if it has no fractional part; huge
/// ones saturate, so they fail the range rule rather than the type rule.
pub(crate) fn integral(number: &Number) -> Option<i64> {
    if let Some(i) = number.as_i64() {
        return Some(i);
    }
    let f = number.as_f64()?;
    (f.fract() == 0.0).then_some(f.clamp(-9.0e15, 9.0e15) as i64)
}

fn show(bound: f64) -> String {
    crate::canonical::format_f64(bound)
}
