//! Canonical JSON (SPEC §4, DESIGN "The ANP/0.1 wire").
//!
//! Both sides must hash identical bytes for identical payloads, so this is
//! byte-identical to ECMAScript `JSON.stringify` of the value with object keys
//! sorted by UTF-16 code unit at every depth: RFC 8785 for valid JSON.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical JSON text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value);
    out
}

/// The canonical JSON bytes of `value`, as hashed by `payload_hash`.
pub fn to_canonical_bytes(value: &Value) -> Vec<u8> {
    to_canonical_string(value).into_bytes()
}

/// SHA-256 of the canonical JSON of `value`, lowercase hex: a `payload_hash`.
pub fn canonical_hash(value: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(to_canonical_string(value).as_bytes());
    hex::encode(hasher.finalize())
}

/// SHA-256 of arbitrary bytes, lowercase hex. The one hash of the protocol.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Formats a JSON number the way ECMAScript's `Number.prototype.toString` does
/// for the IEEE double it denotes (`1e+21`, `0.1`, `-0` → `0`).
pub fn format_number(n: &serde_json::Number) -> String {
    let f = number_as_f64(n);
    format_f64(f)
}

/// The IEEE double a JSON number denotes, as JavaScript would read it.
pub fn number_as_f64(n: &serde_json::Number) -> f64 {
    // serde_json keeps integers exactly; JavaScript reads every number as a
    // double, so do the same (rounding integers beyond 2^53 exactly as JS does).
    if let Some(i) = n.as_i64() {
        i as f64
    } else if let Some(u) = n.as_u64() {
        u as f64
    } else {
        n.as_f64().unwrap_or(f64::NAN)
    }
}

/// ECMAScript number-to-string for a finite double; `-0` prints as `0`.
pub fn format_f64(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    if !f.is_finite() {
        // JSON.stringify prints non-finite numbers as null; serde_json never
        // produces them from parsed text, but be total.
        return "null".to_owned();
    }
    let mut buf = ryu_js::Buffer::new();
    buf.format_finite(f).to_owned()
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // serde_json's map is ordered by UTF-8 bytes (or insertion order with
            // `preserve_order`); RFC 8785 orders by UTF-16 code units, which
            // differs for characters above U+FFFF against U+E000..U+FFFF.
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
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
            assert_eq!(to_canonical_string(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+FB01 (one UTF-16 unit 0xFB01) sorts after U+1F600 (surrogates 0xD83D..)
        // in UTF-16 but before it in UTF-8.
        let value = json!({"\u{fb01}": 1, "\u{1f600}": 2});
        assert_eq!(to_canonical_string(&value), "{\"😀\":2,\"ﬁ\":1}");
    }

    #[test]
    fn control_characters_escape_as_json_stringify() {
        let value = json!("a\u{1}b\u{7f}\u{2028}");
        assert_eq!(to_canonical_string(&value), "\"a\\u0001b\u{7f}\u{2028}\"");
    }
}
