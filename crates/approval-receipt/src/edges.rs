//! Concordia's canonical JSON edge rules, stated at one call site.
//!
//! SPEC §9.2.1 (non-normative "Number domain"): the Python reference SDK
//! prints an integer beyond 2^53 in full (`str(int)`), the JavaScript SDK
//! refuses it, and both refuse `-0.0`. Countersign matches the reference
//! (Python) SDK: integers print exactly as written for every integer
//! `serde_json` holds exactly (within i64/u64), and `-0` is refused. An
//! integer literal beyond u64 is read by `serde_json` as a double, so its
//! digits are not reproduced; no Concordia artifact in the suite carries one.
//! Lone surrogates cannot reach here: `serde_json` refuses them when parsing,
//! as the SDK refuses them when canonicalizing.

use serde_json::Value;

/// The rules: exact integers, `-0` refused.
pub const RULES: jcs::Rules = jcs::Rules {
    big_integers: jcs::BigIntegers::Exact,
    refuse_negative_zero: true,
};

/// JCS bytes of `value` under Concordia's rules.
pub fn canonical(value: &Value) -> Result<String, jcs::JcsError> {
    jcs::to_string_with(value, &RULES)
}

/// `sha256:<hex>` of the JCS bytes of `value` under Concordia's rules.
pub fn hash(value: &Value) -> Result<String, jcs::JcsError> {
    canonical(value).map(|text| jcs::sha256_prefixed(text.as_bytes()))
}

/// `value` without its top-level `signature` member: the preimage rule of
/// messages, receipts, revocation records and most other artifacts.
pub fn without_top_level(value: &Value, member: &str) -> Value {
    match value {
        Value::Object(map) => {
            let mut map = map.clone();
            map.remove(member);
            Value::Object(map)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_integers_print_exactly_and_negative_zero_is_refused() {
        let v: Value = serde_json::from_str(r#"{"n": 9007199254740993, "f": 1.50}"#).unwrap();
        assert_eq!(canonical(&v).unwrap(), r#"{"f":1.5,"n":9007199254740993}"#);
        let v: Value = serde_json::from_str(r#"{"n": -0.0}"#).unwrap();
        assert!(matches!(
            canonical(&v),
            Err(jcs::JcsError::NegativeZero { .. })
        ));
        assert!(serde_json::from_str::<Value>(r#""\udc00""#).is_err());
    }
}
