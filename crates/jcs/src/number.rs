//! Numbers as ECMAScript prints them.

use serde_json::Number;

/// 2^53 − 1: the largest integer every IEEE double reader holds exactly.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Formats a JSON number the way ECMAScript's `Number.prototype.toString` does
/// for the IEEE double it denotes (`1e+21`, `0.1`, `-0` → `0`).
pub fn format_number(n: &Number) -> String {
    format_f64(number_as_f64(n))
}

/// The IEEE double a JSON number denotes, as JavaScript would read it.
pub fn number_as_f64(n: &Number) -> f64 {
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

/// True when `n` is an integer whose magnitude exceeds 2^53 − 1.
pub(crate) fn is_unsafe_integer(n: &Number) -> bool {
    if let Some(i) = n.as_i64() {
        i.unsigned_abs() > MAX_SAFE_INTEGER
    } else if let Some(u) = n.as_u64() {
        u > MAX_SAFE_INTEGER
    } else {
        false
    }
}
