//! A strict JSON reader: bounded size and depth, and a duplicate member is
//! an error instead of "the last one wins". Two parsers that resolve
//! `{"performative":"REFUSE","performative":"AGREE"}` differently would
//! read two different messages from one text, so this crate reads neither.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a text is not strict JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// More bytes than the caller allows.
    #[error("is {size} bytes, more than the {max} allowed")]
    TooLarge {
        /// The size.
        size: usize,
        /// The bound.
        max: usize,
    },
    /// Not JSON, a duplicate member, or nested too deep (serde_json's words,
    /// with line and column).
    #[error("is not strict JSON: {0}")]
    Syntax(String),
}

/// Reads `bytes` as one JSON value, refusing texts over `max_bytes`,
/// nesting deeper than `max_depth` and duplicate object members.
pub fn read_strict(bytes: &[u8], max_bytes: usize, max_depth: usize) -> Result<Value, JsonError> {
    if bytes.len() > max_bytes {
        return Err(JsonError::TooLarge {
            size: bytes.len(),
            max: max_bytes,
        });
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = StrictSeed {
        depth: 0,
        max_depth,
    }
    .deserialize(&mut de)
    .map_err(|e| JsonError::Syntax(e.to_string()))?;
    de.end().map_err(|e| JsonError::Syntax(e.to_string()))?;
    Ok(value)
}

/// The nesting depth of `value` (a scalar is 0, `[]` and `{}` are 1).
pub fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[derive(Clone, Copy)]
struct StrictSeed {
    depth: usize,
    max_depth: usize,
}

impl StrictSeed {
    fn deeper<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= self.max_depth {
            return Err(E::custom(format_args!(
                "nested deeper than {} levels",
                self.max_depth
            )));
        }
        Ok(Self {
            depth: self.depth + 1,
            max_depth: self.max_depth,
        })
    }
}

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.deeper()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let inner = self.deeper()?;
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the member {} appears twice",
                    crate::text::quote(&key)
                )));
            }
            let value = access.next_value_seed(inner)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_serde_json_reads() {
        let text = br#"{"a":[1,2.5,-3,"x",true,null,{"b":{}}]}"#;
        assert_eq!(
            read_strict(text, 1000, 10).unwrap(),
            serde_json::from_slice::<Value>(text).unwrap()
        );
    }

    #[test]
    fn refuses_a_duplicate_member_at_any_depth() {
        let err = read_strict(br#"{"a":1,"a":2}"#, 1000, 10).unwrap_err();
        assert!(err.to_string().contains("\"a\" appears twice"), "{err}");
        let err = read_strict(br#"{"x":[{"k":1,"k":1}]}"#, 1000, 10).unwrap_err();
        assert!(err.to_string().contains("\"k\" appears twice"), "{err}");
    }

    #[test]
    fn refuses_depth_and_size_beyond_the_bounds() {
        assert!(read_strict(b"[[[]]]", 1000, 3).is_ok());
        let err = read_strict(b"[[[[]]]]", 1000, 3).unwrap_err();
        assert!(err.to_string().contains("deeper than 3"), "{err}");
        assert_eq!(
            read_strict(b"[1, 2]", 5, 10),
            Err(JsonError::TooLarge { size: 6, max: 5 })
        );
        assert_eq!(depth(&serde_json::json!({"a": [[1]]})), 3);
    }

    #[test]
    fn refuses_trailing_text() {
        assert!(read_strict(b"{} {}", 1000, 10).is_err());
        assert!(read_strict(b"{}  \n", 1000, 10).is_ok());
    }
}
