//! Finding one top-level member in canonical text, without parsing it.

use std::ops::Range;

/// In `canonical`, an object's canonical JSON text (as [`crate::is_canonical`]
/// recognizes it), the byte span of the top-level member `name` with one
/// adjacent comma, exactly as [`crate::to_string_marking`] marks it: cutting
/// the span out leaves the canonical text of the object without that member.
/// `None` when there is no such member. On text that is not canonical the
/// answer means nothing (but it never panics).
///
/// A message's hash covers the whole text and its signature all but
/// `signature`: when the text arrived canonical, both come from the text
/// itself with this one scan.
pub fn member_span(canonical: &str, name: &str) -> Option<Range<usize>> {
    let bytes = canonical.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut at = 1;
    let mut index = 0;
    while at < bytes.len() && bytes[at] != b'}' {
        let start = at;
        // The key: canonical keys are written without escapes.
        let key_start = at + 1;
        let key_end = key_start + bytes.get(key_start..)?.iter().position(|&b| b == b'"')?;
        at = skip_value(bytes, key_end + 2)?; // past `":`
        let is_member = &bytes[key_start..key_end] == name.as_bytes();
        let comma = bytes.get(at) == Some(&b',');
        if is_member {
            return Some(if index > 0 {
                // From the comma before it (`start - 1`).
                start - 1..at
            } else if comma {
                start..at + 1
            } else {
                start..at
            });
        }
        if !comma {
            break;
        }
        at += 1;
        index += 1;
    }
    None
}

/// The end of the JSON value that starts at `at` (strings, nesting).
fn skip_value(bytes: &[u8], mut at: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *bytes.get(at)? {
            b'"' => at = skip_string(bytes, at)?,
            b'{' | b'[' => {
                depth += 1;
                at += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                at += 1;
            }
            _ => {
                // A number or literal: up to the next delimiter.
                while !matches!(bytes.get(at), None | Some(b',' | b'}' | b']')) {
                    at += 1;
                }
            }
        }
        if depth == 0 {
            return Some(at);
        }
        // Inside an array or object: separators and keys' colons.
        while let Some(b',' | b':') = bytes.get(at) {
            at += 1;
        }
    }
}

/// The index just past the string that starts (with its quote) at `at`.
fn skip_string(bytes: &[u8], mut at: usize) -> Option<usize> {
    at += 1;
    loop {
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{is_canonical, to_string, to_string_marking, Rules};
    use proptest::prelude::*;
    use serde_json::Value;

    #[test]
    fn the_span_is_the_one_the_writer_marks() {
        for text in [
            r#"{"a":1,"signature":"s","z":[2]}"#,
            r#"{"signature":"s","z":[2]}"#,
            r#"{"a":1,"signature":"s"}"#,
            r#"{"signature":"s"}"#,
            r#"{"a":1}"#,
            r#"{}"#,
            r#"{"a":{"signature":"inner"},"b":[{"signature":1}],"signature":"x\"y\\"}"#,
            r#"{"a":"},{\"signature\":","signature":null,"t":[[],{},"]"]}"#,
            r#"{"a":[1,2.5,-3e-7,true,false,null],"sig":"no","signature":{"k":[]}}"#,
        ] {
            assert!(is_canonical(text), "{text}");
            let v: Value = serde_json::from_str(text).unwrap();
            let (whole, marked) = to_string_marking(&v, &Rules::JAVASCRIPT, "signature").unwrap();
            assert_eq!(whole, text);
            assert_eq!(member_span(text, "signature"), marked, "{text}");
        }
    }

    #[test]
    fn text_that_is_not_an_object_or_is_cut_short_has_no_span() {
        for text in [
            "[]",
            "1",
            "\"signature\"",
            "",
            "{",
            "{\"a\"",
            "{\"a\":[",
            "{\"signature\":\"x",
        ] {
            let _ = member_span(text, "signature");
        }
        assert_eq!(member_span("[{\"signature\":1}]", "signature"), None);
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z\"\\\\,:{}\\[\\] \u{1}é😀]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z]{1,3}|signature", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_member_of_any_object_is_found_where_the_writer_marks_it(
            members in proptest::collection::btree_map("[a-z]{1,3}|signature", json(), 0..6),
        ) {
            let v = Value::Object(members.into_iter().collect());
            let text = to_string(&v);
            prop_assert!(is_canonical(&text));
            for name in ["signature", "a", "ab", "zzz"] {
                let (_, marked) = to_string_marking(&v, &Rules::JAVASCRIPT, name).unwrap();
                prop_assert_eq!(member_span(&text, name), marked);
            }
        }
    }
}
