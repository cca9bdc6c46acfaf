//! OANP's one call site of the workspace's canonical JSON (`jcs`), stating
//! the edge rules of the publisher's canonicaliser.
//!
//! The arbiter and its SDK canonicalise with the Python `rfc8785` package
//! (0.1.4, pinned in `.ci/requirements.txt`). On valid JSON it writes RFC 8785
//! bytes, and at the edges:
//! - an integer outside ±(2^53 − 1) is refused (`IntegerDomainError`), so
//!   [`canonical_bytes`] uses [`jcs::to_string_strict`], which refuses the same;
//! - `-0` and `-0.0` print as `0`; a float with an integral value prints
//!   without a fraction (`1.0` → `1`, `9007199254740993.0` → `9007199254740992`);
//!   other numbers print as ECMAScript prints them (`1e+21`, `1e-7`);
//! - keys sort by UTF-16 code unit; only `"`, `\` and controls below U+0020
//!   are escaped (U+007F and U+2028 are written as themselves);
//! - NaN, infinities and lone surrogates are refused: `serde_json` cannot
//!   hold them, so [`read_json`] refuses the text that carries them, and
//!   integer literals wider than 64 bits, which it would round.
//!
//! The test below pins each rule; `tests/all/publisher.rs` runs the same
//! inputs through `rfc8785` itself.

use serde_json::Value;

/// A value the publisher's canonicaliser refuses: an integer outside ±(2^53 − 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not canonicalisable: {0}")]
pub struct CanonicalError(#[from] pub jcs::JcsError);

/// The RFC 8785 bytes of `value` as the publisher writes them.
pub fn canonical_bytes(value: &Value) -> Result<Vec<u8>, CanonicalError> {
    Ok(jcs::to_string_strict(value)?.into_bytes())
}

/// `sha256:<hex>` over the canonical bytes: an envelope's hash in the chain.
pub fn commit(value: &Value) -> Result<String, CanonicalError> {
    Ok(jcs::sha256_prefixed(&canonical_bytes(value)?))
}

/// Reads JSON text (a receipt, a log) without changing any number it writes.
pub fn read_json(bytes: &[u8]) -> Result<Value, jcs::ParseError> {
    jcs::parse(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each input's canonical text as `rfc8785` 0.1.4 writes it (`None`: refused).
    const EDGES: &[(&str, Option<&str>)] = &[
        ("-0", Some("0")),
        ("-0.0", Some("0")),
        ("1.0", Some("1")),
        ("1e21", Some("1e+21")),
        ("1e-7", Some("1e-7")),
        ("0.000001", Some("0.000001")),
        ("5e-324", Some("5e-324")),
        ("1.7976931348623157e308", Some("1.7976931348623157e+308")),
        ("123456789012345680000.0", Some("123456789012345680000")),
        ("9007199254740993.0", Some("9007199254740992")),
        ("1e23", Some("1e+23")),
        ("[1E2, 1e+2, 0.1, -1.5e-10]", Some("[100,100,0.1,-1.5e-10]")),
        ("9007199254740991", Some("9007199254740991")),
        ("-9007199254740991", Some("-9007199254740991")),
        ("9007199254740992", None),
        ("-9007199254740992", None),
        ("18446744073709551615", None),
        (
            r#""\u007f\u2028\u0001\u001f\b\f\n\r\t\"\\/""#,
            Some("\"\u{7f}\u{2028}\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\""),
        ),
        (
            r#"{"\ufb01":1,"\ud83d\ude00":2,"":0,"b":[],"a":{}}"#,
            Some("{\"\":0,\"a\":{},\"b\":[],\"😀\":2,\"ﬁ\":1}"),
        ),
        (r#"{"a":1,"a":2}"#, Some(r#"{"a":2}"#)),
    ];

    #[test]
    fn canonical_bytes_follow_the_publishers_edges() {
        for (input, expected) in EDGES {
            let value = read_json(input.as_bytes()).expect(input);
            let got = canonical_bytes(&value)
                .ok()
                .map(|b| String::from_utf8(b).unwrap());
            assert_eq!(got.as_deref(), *expected, "{input}");
        }
    }

    #[test]
    fn what_serde_json_cannot_hold_is_refused_when_read() {
        for input in [
            "NaN",
            "[Infinity]",
            "1e400",
            r#""\ud800""#,
            "100000000000000000000000",
        ] {
            assert!(read_json(input.as_bytes()).is_err(), "{input}");
        }
    }

    #[test]
    fn commit_is_sha256_of_the_canonical_bytes() {
        let v = read_json(br#"{"b": 1, "a": [true, null]}"#).unwrap();
        assert_eq!(
            commit(&v).unwrap(),
            jcs::sha256_prefixed(br#"{"a":[true,null],"b":1}"#)
        );
        assert!(commit(&read_json(b"[9007199254740992]").unwrap()).is_err());
    }
}
