//! The canonical writer.

use serde_json::Value;

use crate::number::{format_number, is_unsafe_integer};

/// Why [`to_string_strict`] refused a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JcsError {
    /// An integer no IEEE double reader holds exactly (RFC 8785 §3.2.2.3, I-JSON).
    #[error("{path}: the integer {value} is outside ±(2^53 − 1), which canonical JSON cannot carry exactly")]
    UnsafeInteger {
        /// Where, as a JSON pointer (`/line_items/0/quantity`).
        path: String,
        /// The integer as written.
        value: String,
    },
    /// A `-0.0`, refused by protocols whose reference SDKs refuse it.
    #[error("{path}: negative zero has no canonical form here")]
    NegativeZero {
        /// Where, as a JSON pointer.
        path: String,
    },
}

/// What to do with an integer outside ±(2^53 − 1), where the specs disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BigIntegers {
    /// Round to the double JavaScript would read (`JSON.stringify`).
    AsDouble,
    /// Refuse, naming the path (I-JSON; Python's `rfc8785`, the JavaScript SDKs).
    Refuse,
    /// Print every digit as written (Python's `str(int)`), for integers
    /// `serde_json` holds exactly (within i64/u64).
    Exact,
}

/// The edge rules a protocol chooses at its call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Integers beyond 2^53.
    pub big_integers: BigIntegers,
    /// Refuse `-0.0` instead of printing `0`.
    pub refuse_negative_zero: bool,
}

impl Rules {
    /// `JSON.stringify` with sorted keys: total, what [`to_string`] does.
    pub const JAVASCRIPT: Rules = Rules {
        big_integers: BigIntegers::AsDouble,
        refuse_negative_zero: false,
    };
}

/// The canonical JSON text of `value` under `rules`.
pub fn to_string_with(value: &Value, rules: &Rules) -> Result<String, JcsError> {
    if rules.big_integers == BigIntegers::Refuse || rules.refuse_negative_zero {
        check_edges(value, rules, &mut String::new())?;
    }
    let mut out = String::with_capacity(128);
    write_value(&mut out, value, rules.big_integers == BigIntegers::Exact);
    Ok(out)
}

/// The canonical JSON text of `value` (total: integers beyond 2^53 round as
/// JavaScript rounds them).
pub fn to_string(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value, false);
    out
}

/// The canonical JSON bytes of `value`: what every protocol hashes and signs.
pub fn to_vec(value: &Value) -> Vec<u8> {
    to_string(value).into_bytes()
}

/// The canonical JSON text of `value`, refusing integers outside
/// ±(2^53 − 1) instead of rounding them.
pub fn to_string_strict(value: &Value) -> Result<String, JcsError> {
    to_string_with(
        value,
        &Rules {
            big_integers: BigIntegers::Refuse,
            refuse_negative_zero: false,
        },
    )
}

/// The canonical text of `value` under `rules`, and, when `value` is an
/// object holding `member`, the byte span of that member (with one adjacent
/// comma): cutting the span out leaves the canonical text of the object
/// without it. One pass gives both what a message's hash covers (all of it)
/// and what its signature covers (all but `signature`).
pub fn to_string_marking(
    value: &Value,
    rules: &Rules,
    member: &str,
) -> Result<(String, Option<std::ops::Range<usize>>), JcsError> {
    if rules.big_integers == BigIntegers::Refuse || rules.refuse_negative_zero {
        check_edges(value, rules, &mut String::new())?;
    }
    let exact = rules.big_integers == BigIntegers::Exact;
    let Value::Object(map) = value else {
        return Ok((to_string_with(value, rules)?, None));
    };
    let mut out = String::with_capacity(256);
    let entries = entries(map);
    let count = entries.len();
    let mut span = None;
    out.push('{');
    for (i, (key, item)) in entries.into_iter().enumerate() {
        let start = out.len();
        if i > 0 {
            out.push(',');
        }
        write_string(&mut out, key);
        out.push(':');
        write_value(&mut out, item, exact);
        if key == member {
            // Take the leading comma, or the trailing one when first.
            span = Some(if i > 0 || count == 1 {
                start..out.len()
            } else {
                start..out.len() + 1
            });
        }
    }
    out.push('}');
    Ok((out, span))
}

fn pointer(path: &str) -> String {
    if path.is_empty() {
        "/".to_owned()
    } else {
        path.to_owned()
    }
}

fn check_edges(value: &Value, rules: &Rules, path: &mut String) -> Result<(), JcsError> {
    match value {
        Value::Number(n) if rules.big_integers == BigIntegers::Refuse && is_unsafe_integer(n) => {
            Err(JcsError::UnsafeInteger {
                path: pointer(path),
                value: n.to_string(),
            })
        }
        Value::Number(n)
            if rules.refuse_negative_zero
                && n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative())
                && !n.is_i64()
                && !n.is_u64() =>
        {
            Err(JcsError::NegativeZero {
                path: pointer(path),
            })
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                check_edges(item, rules, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Object(map) => {
            for (key, item) in map {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                check_edges(item, rules, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn write_value(out: &mut String, value: &Value, exact_integers: bool) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) if exact_integers && (n.is_i64() || n.is_u64()) => {
            out.push_str(&n.to_string())
        }
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, exact_integers);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let entries = entries(map);
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item, exact_integers);
            }
            out.push('}');
        }
    }
}

/// RFC 8785 §3.2.3 order: by UTF-16 code units. For ASCII keys that is
/// byte order, the common case, compared without re-encoding.
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.as_bytes().cmp(b.as_bytes())
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// The members in canonical order. serde_json's map is ordered by UTF-8
/// bytes (or insertion order with `preserve_order`), which differs from
/// UTF-16 order for characters above U+FFFF against U+E000..U+FFFF; an
/// already ordered map (the usual case) is not sorted again.
fn entries(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    if !entries
        .windows(2)
        .all(|w| key_order(w[0].0, w[1].0).is_lt())
    {
        entries.sort_by(|(a, _), (b, _)| key_order(a, b));
    }
    entries
}

fn write_string(out: &mut String, s: &str) {
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_print_as_javascript_does() {
        let cases = [
            (json!(1e21), "1e+21"),
            (json!(0.1), "0.1"),
            (json!(-0.0), "0"),
            (json!(1140), "1140"),
            (json!(1e-7), "1e-7"),
            (json!(123456789012345680000.0), "123456789012345680000"),
            (json!(9007199254740993u64), "9007199254740992"),
            (json!(1.5), "1.5"),
            (json!(-2), "-2"),
        ];
        for (value, expected) in cases {
            assert_eq!(to_string(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+FB01 (one UTF-16 unit 0xFB01) sorts after U+1F600 (surrogates 0xD83D..)
        // in UTF-16 but before it in UTF-8.
        let value = json!({"\u{fb01}": 1, "\u{1f600}": 2});
        assert_eq!(to_string(&value), "{\"😀\":2,\"ﬁ\":1}");
    }

    #[test]
    fn control_characters_escape_as_json_stringify() {
        let value = json!("a\u{1}b\u{7f}\u{2028}");
        assert_eq!(to_string(&value), "\"a\\u0001b\u{7f}\u{2028}\"");
    }

    #[test]
    fn strict_refuses_integers_beyond_two_to_the_53_and_names_the_path() {
        let ok = json!({"a": [9007199254740991u64, -9007199254740991i64]});
        assert_eq!(to_string_strict(&ok).unwrap(), to_string(&ok));
        let bad = json!({"a": [1, {"b/c": 9007199254740992u64}]});
        let err = to_string_strict(&bad).unwrap_err();
        assert_eq!(
            err,
            JcsError::UnsafeInteger {
                path: "/a/1/b~1c".to_owned(),
                value: "9007199254740992".to_owned()
            }
        );
        assert!(to_string_strict(&json!(-9007199254740992i64)).is_err());
        // A large number written as a float is a double, not an integer.
        assert!(to_string_strict(&json!(1e300)).is_ok());
    }

    #[test]
    fn marking_a_member_gives_both_texts() {
        for text in [
            r#"{"a":1,"signature":"s","z":[2]}"#,
            r#"{"signature":"s","z":[2]}"#,
            r#"{"a":1,"signature":"s"}"#,
            r#"{"signature":"s"}"#,
            r#"{"a":1}"#,
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            let (whole, span) = to_string_marking(&v, &Rules::JAVASCRIPT, "signature").unwrap();
            assert_eq!(whole, to_string(&v));
            let mut without = v.clone();
            without.as_object_mut().unwrap().remove("signature");
            let cut = match span {
                Some(r) => format!("{}{}", &whole[..r.start], &whole[r.end..]),
                None => whole.clone(),
            };
            assert_eq!(cut, to_string(&without), "{text}");
        }
    }

    #[test]
    fn exact_integers_and_refused_negative_zero() {
        let rules = Rules {
            big_integers: BigIntegers::Exact,
            refuse_negative_zero: true,
        };
        let v: Value =
            serde_json::from_str("[9007199254740993, -9007199254740993, 1.0, 0]").unwrap();
        assert_eq!(
            to_string_with(&v, &rules).unwrap(),
            "[9007199254740993,-9007199254740993,1,0]"
        );
        // serde_json reads the literal `-0` as the double -0.0, so it is
        // refused too (Python would read it as the integer 0).
        let v: Value = serde_json::from_str("[-0]").unwrap();
        assert!(to_string_with(&v, &rules).is_err());
        let v: Value = serde_json::from_str(r#"{"a":[-0.0]}"#).unwrap();
        assert_eq!(
            to_string_with(&v, &rules).unwrap_err(),
            JcsError::NegativeZero {
                path: "/a/0".to_owned()
            }
        );
        assert_eq!(
            to_string_with(&v, &Rules::JAVASCRIPT).unwrap(),
            r#"{"a":[0]}"#
        );
    }

    #[test]
    fn negative_zero_and_lone_surrogates() {
        let v: Value = serde_json::from_str("[-0, -0.0]").unwrap();
        assert_eq!(to_string(&v), "[0,0]");
        assert!(serde_json::from_str::<Value>("\"\\ud800\"").is_err());
        let pair: Value = serde_json::from_str("\"\\ud83d\\ude00\"").unwrap();
        assert_eq!(to_string(&pair), "\"😀\"");
    }
}
