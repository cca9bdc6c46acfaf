//! Reading JSON text so that its canonical bytes denote what the text says.
//!
//! `serde_json` (without `arbitrary_precision`) holds integers that fit 64
//! bits exactly, but turns a wider integer literal such as
//! `100000000000000000000001` into the nearest double, `1e+23`, silently. The
//! canonical bytes of the parsed value would then denote another integer than
//! the text, and a signature over them would seem to cover a number the text
//! never wrote. [`parse`] refuses such a literal, naming where it is; floats
//! (`1e23`, `0.1`) are read as the doubles they are, as everywhere in JCS.

use serde_json::Value;

/// Why [`parse`] refused a text.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON text (RFC 8259), as `serde_json` reports it.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// An integer literal wider than 64 bits, which no parsed value holds exactly.
    #[error("line {line}, column {column}: the integer {literal} is wider than 64 bits and cannot be read exactly")]
    WideInteger {
        /// 1-based line of the literal.
        line: usize,
        /// 1-based column (in bytes) of the literal.
        column: usize,
        /// The literal, shortened to 40 characters when longer.
        literal: String,
    },
}

/// Parses JSON text, refusing integer literals wider than 64 bits (which
/// `serde_json` would round to a double) instead of changing their value.
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    let value: Value = serde_json::from_slice(bytes)?;
    // Only a wide integer literal (or a float literal of the same magnitude)
    // becomes an integral double beyond the 64-bit range: scan the text only
    // when the value holds one.
    if holds_wide_integral_double(&value) {
        if let Some(error) = find_wide_integer(bytes) {
            return Err(error);
        }
    }
    Ok(value)
}

fn holds_wide_integral_double(value: &Value) -> bool {
    match value {
        // 2^63: below it every integral double is the value of an i64 literal.
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9_223_372_036_854_775_808.0),
        Value::Array(items) => items.iter().any(holds_wide_integral_double),
        Value::Object(map) => map.values().any(holds_wide_integral_double),
        _ => false,
    }
}

/// Scans text `serde_json` accepted for an integer literal that fits neither
/// `i64` nor `u64`. Outside strings, a maximal run of number characters is
/// one number token (the text is valid JSON).
fn find_wide_integer(bytes: &[u8]) -> Option<ParseError> {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let token = &bytes[start..i];
                let integer = !token.iter().any(|b| matches!(b, b'.' | b'e' | b'E'));
                let text = String::from_utf8_lossy(token);
                if integer && text.parse::<i64>().is_err() && text.parse::<u64>().is_err() {
                    let before = &bytes[..start];
                    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                    let column = start
                        - before
                            .iter()
                            .rposition(|&b| b == b'\n')
                            .map_or(0, |p| p + 1)
                        + 1;
                    let literal = if text.len() > 40 {
                        format!("{}…", &text[..40])
                    } else {
                        text.into_owned()
                    };
                    return Some(ParseError::WideInteger {
                        line,
                        column,
                        literal,
                    });
                }
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_that_fit_64_bits_and_floats_are_read() {
        let v = parse(
            br#"{"a": 18446744073709551615, "b": -9223372036854775808, "c": 1e23, "d": 1.5}"#,
        )
        .unwrap();
        assert_eq!(v["a"].as_u64(), Some(u64::MAX));
        assert_eq!(v["b"].as_i64(), Some(i64::MIN));
        assert_eq!(crate::to_string(&v["c"]), "1e+23");
    }

    #[test]
    fn a_wide_integer_literal_is_refused_with_its_place() {
        let err = parse(b"{\n  \"x\": [1, 100000000000000000000001]\n}").unwrap_err();
        match err {
            ParseError::WideInteger {
                line,
                column,
                literal,
            } => {
                assert_eq!((line, column), (2, 12));
                assert_eq!(literal, "100000000000000000000001");
            }
            other => panic!("{other}"),
        }
        assert!(matches!(
            parse(b"-9223372036854775809"),
            Err(ParseError::WideInteger { .. })
        ));
        assert!(matches!(
            parse(b"18446744073709551616"),
            Err(ParseError::WideInteger { .. })
        ));
    }

    #[test]
    fn digits_inside_strings_are_not_numbers() {
        // The value holds a wide float literal (so the text is scanned), and a
        // string full of digits with an escaped quote must not be mistaken.
        let v = parse(br#"{"s": "\" 100000000000000000000001", "f": 1e20}"#).unwrap();
        assert_eq!(v["s"], "\" 100000000000000000000001");
        let long = "9".repeat(60);
        let err = parse(format!("[{long}]").as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{}…", "9".repeat(40))),
            "{err}"
        );
    }

    #[test]
    fn not_json_is_refused() {
        assert!(matches!(parse(b"[NaN]"), Err(ParseError::Json(_))));
        assert!(matches!(parse(b"1e400"), Err(ParseError::Json(_))));
    }
}
