//! A read-only view of JSON that a parsed [`serde_json::Value`] and a tree
//! borrowed from a message's text ([`Node`]) both answer, so the envelope's
//! rules ([`crate::message`], [`crate::offer`]) are written once and read
//! either: a message parsed by the caller, or the text of a transcript file
//! read in place (strings borrowed, no `BTreeMap` per object).

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// One JSON value, as the envelope's rules read it.
pub(crate) trait Json: Sized {
    /// Its objects.
    type Object: Object<Item = Self> + ?Sized;
    /// The string, when it is one.
    fn as_str(&self) -> Option<&str>;
    /// The members, when it is an object.
    fn as_object(&self) -> Option<&Self::Object>;
    /// The items, when it is an array.
    fn as_array(&self) -> Option<&[Self]>;
    /// The number, when it is a non-negative integer within u64.
    fn as_u64(&self) -> Option<u64>;
    /// The boolean, when it is one.
    fn as_bool(&self) -> Option<bool>;
    /// True for `null`.
    fn is_null(&self) -> bool;
    /// `self[key]` when `self` is an object holding `key`.
    fn get(&self, key: &str) -> Option<&Self> {
        self.as_object()?.get(key)
    }
}

/// A JSON object's members, as the envelope's rules read them.
pub(crate) trait Object {
    /// Its values.
    type Item: Json<Object = Self>;
    /// The value of `key` (the last, when a key repeats, as `serde_json` reads it).
    fn get(&self, key: &str) -> Option<&Self::Item>;
    /// True when `key` is a member.
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

impl Json for Value {
    type Object = Map<String, Value>;
    fn as_str(&self) -> Option<&str> {
        Value::as_str(self)
    }
    fn as_object(&self) -> Option<&Map<String, Value>> {
        Value::as_object(self)
    }
    fn as_array(&self) -> Option<&[Value]> {
        Value::as_array(self).map(Vec::as_slice)
    }
    fn as_u64(&self) -> Option<u64> {
        Value::as_u64(self)
    }
    fn as_bool(&self) -> Option<bool> {
        Value::as_bool(self)
    }
    fn is_null(&self) -> bool {
        Value::is_null(self)
    }
}

impl Object for Map<String, Value> {
    type Item = Value;
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
}

/// A JSON value read from text, its strings borrowed from the text unless
/// they hold escapes, its numbers as `serde_json` reads them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Members<'a>),
}

/// An object's members in the order written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Members<'a>(Vec<(Cow<'a, str>, Node<'a>)>);

impl<'a> Json for Node<'a> {
    type Object = Members<'a>;
    fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }
    fn as_object(&self) -> Option<&Members<'a>> {
        match self {
            Node::Object(m) => Some(m),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }
    fn as_u64(&self) -> Option<u64> {
        match self {
            Node::Number(n) => n.as_u64(),
            _ => None,
        }
    }
    fn as_bool(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }
}

impl<'a> Object for Members<'a> {
    type Item = Node<'a>;
    fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'a> Node<'a> {
    /// The tree of `text` when it is canonical JSON, read in the pass that
    /// recognizes it ([`jcs::read_canonical`]): every string without an
    /// escape borrowed from the text, numbers as `serde_json` reads them.
    /// The tree is the one `serde_json` reads from the same text (a test
    /// holds them together); `None` when the text is not canonical (the
    /// caller then parses it the ordinary way).
    pub(crate) fn read_canonical(text: &'a str) -> Option<Node<'a>> {
        jcs::read_canonical(text, &mut Tree)
    }
}

/// Builds a [`Node`] from canonical text (see [`Node::read_canonical`]).
struct Tree;

impl<'a> jcs::Build<'a> for Tree {
    type Value = Node<'a>;
    type Array = Vec<Node<'a>>;
    type Object = Vec<(Cow<'a, str>, Node<'a>)>;

    fn null(&mut self) -> Node<'a> {
        Node::Null
    }
    fn bool(&mut self, value: bool) -> Node<'a> {
        Node::Bool(value)
    }
    /// An integer token as u64 (or i64 when negative) when it fits,
    /// anything else as a double, as `serde_json` reads numbers.
    fn number(&mut self, token: &'a str) -> Option<Node<'a>> {
        if !token.contains(['.', 'e', 'E']) {
            if let Ok(n) = token.parse::<u64>() {
                return Some(Node::Number(n.into()));
            }
            if let Ok(n) = token.parse::<i64>() {
                return Some(Node::Number(n.into()));
            }
        }
        let f: f64 = token.parse().ok()?;
        Some(Number::from_f64(f).map_or(Node::Null, Node::Number))
    }
    fn string(&mut self, raw: &'a str) -> Option<Node<'a>> {
        if !raw.contains('\\') {
            return Some(Node::String(Cow::Borrowed(raw)));
        }
        unescape(raw).map(|s| Node::String(Cow::Owned(s)))
    }
    fn array(&mut self) -> Vec<Node<'a>> {
        Vec::new()
    }
    fn push(&mut self, array: &mut Vec<Node<'a>>, item: Node<'a>) {
        array.push(item);
    }
    fn end_array(&mut self, array: Vec<Node<'a>>) -> Node<'a> {
        Node::Array(array)
    }
    fn object(&mut self, depth: usize) -> Self::Object {
        // A message's envelope has a dozen members, the objects in it a few.
        Vec::with_capacity(if depth == 1 { 16 } else { 4 })
    }
    fn member(&mut self, object: &mut Self::Object, key: &'a str, value: Node<'a>) {
        object.push((Cow::Borrowed(key), value));
    }
    fn end_object(&mut self, object: Self::Object) -> Node<'a> {
        Node::Object(Members(object))
    }
}

/// The contents of a canonical string with its escapes decoded (canonical
/// text writes only `\" \\ \b \f \n \r \t` and `\u00xx` for other controls).
fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at + 1..)?;
        let (decoded, width) = match escape.as_bytes().first()? {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let code = u32::from_str_radix(escape.get(1..5)?, 16).ok()?;
                (char::from_u32(code)?, 6)
            }
            _ => return None,
        };
        out.push(decoded);
        rest = rest.get(at + width..)?;
    }
    out.push_str(rest);
    Some(out)
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Node<'de>, E> {
        // As serde_json's own Value reads a double.
        Ok(Number::from_f64(f).map_or(Node::Null, Node::Number))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        Deserialize::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(Key(key)) = map.next_key()? {
            members.push((key, map.next_value()?));
        }
        Ok(Node::Object(Members(members)))
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The view answers the same of a text's tree as of its parsed Value.
    fn same<J1: Json, J2: Json>(a: &J1, b: &J2) {
        assert_eq!(a.as_str(), b.as_str());
        assert_eq!(a.as_u64(), b.as_u64());
        assert_eq!(a.as_bool(), b.as_bool());
        assert_eq!(a.is_null(), b.is_null());
        assert_eq!(a.as_object().is_some(), b.as_object().is_some());
        match (a.as_array(), b.as_array()) {
            (Some(x), Some(y)) => {
                assert_eq!(x.len(), y.len());
                x.iter().zip(y).for_each(|(x, y)| same(x, y));
            }
            (x, y) => assert_eq!(x.is_some(), y.is_some()),
        }
        for key in ["a", "b", "é", "\u{1}", "dup"] {
            match (a.get(key), b.get(key)) {
                (Some(x), Some(y)) => same(x, y),
                (x, y) => assert_eq!(x.is_some(), y.is_some(), "{key}"),
            }
        }
    }

    #[test]
    fn the_canonical_reader_reads_what_serde_json_reads() {
        let texts = [
            r#"{"a":"x","b":[1,-2,3.5,1e+21,true,null,"é\u0001"],"c":{}}"#,
            r#"{"a":"\"esc\"\\\n\t\b\f\r","b":{"a":[[],{}]},"é":9007199254740991}"#,
            r#"[{"a":0},{"b":-9007199254740991},{"c":100000000000000000000},1.5e-7]"#,
            r#"{"price":{"currency":"USD","value":1001.25},"to":[{"agent_id":"b"}]}"#,
            "\"\\u001f\"",
            "[]",
            "12345",
            "-1",
        ];
        for text in texts {
            assert!(jcs::is_canonical(text), "{text} is canonical");
            let serde: Node<'_> = serde_json::from_str(text).unwrap();
            let ours = Node::read_canonical(text).expect(text);
            assert_eq!(ours, serde, "{text}");
            same(&ours, &serde_json::from_str::<Value>(text).unwrap());
        }
        // Strings without escapes are borrowed from the text.
        let node = Node::read_canonical(r#"{"a":"borrowed"}"#).unwrap();
        assert!(matches!(
            node.get("a"),
            Some(Node::String(Cow::Borrowed("borrowed")))
        ));
        // Not canonical: refused, never misread.
        for text in [
            "{\"b\":1,\"a\":2}",
            "{\"a\": 1}",
            "1.0",
            "-0",
            "{\"a\":1",
            "[1,]",
            "{\"a\" 1}",
            "tru",
            "[1]x",
            "\"\\x\"",
            "\"\\u0041\"",
            "",
        ] {
            assert!(Node::read_canonical(text).is_none(), "{text}");
        }
    }

    #[test]
    fn the_canonical_reader_agrees_on_generated_messages() {
        let (messages, _, _) = crate::testing::synthetic_transcript(60);
        for m in &messages {
            let text = jcs::to_string(m);
            let serde: Node<'_> = serde_json::from_str(&text).unwrap();
            assert_eq!(Node::read_canonical(&text), Some(serde), "{text}");
        }
    }

    #[test]
    fn a_borrowed_tree_reads_as_the_value_does() {
        for text in [
            r#"{"a":"x","b":[1,-2,3.5,1e400,true,null,"é\u0001"],"dup":1,"dup":{"a":2}}"#,
            r#"{"\u0061":"\"esc\"","b":{"a":[[]]},"é":18446744073709551616}"#,
            r#"[{"a":0},{"b":-0},{"a":0.0},"dup"]"#,
            "\"\\ud83d\\ude00\"",
            "12345678901234567890",
        ] {
            let value: Result<Value, _> = serde_json::from_str(text);
            let node: Result<Node<'_>, _> = serde_json::from_str(text);
            match (value, node) {
                (Ok(v), Ok(n)) => same(&v, &n),
                (v, n) => assert_eq!(v.is_ok(), n.is_ok(), "{text}"),
            }
        }
        let node: Node<'_> = serde_json::from_str(r#"{"a":"borrowed"}"#).unwrap();
        assert!(matches!(
            node.get("a"),
            Some(Node::String(Cow::Borrowed("borrowed")))
        ));
        for text in ["{\"a\":\"\\ud800\"}", "[1,]", "{\"a\" 1}"] {
            assert!(serde_json::from_str::<Node<'_>>(text).is_err(), "{text}");
        }
    }
}
