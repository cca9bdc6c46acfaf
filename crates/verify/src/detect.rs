//! What a file is, decided in one table. A later protocol adds one row.
//!
//! The table reads a document's top-level members through [`Members`],
//! which a parsed [`Value`] and a [`TopLevel`] both answer: a `TopLevel`
//! reads only the top level of the file's text and leaves every member as
//! text, so a 10 MB log is recognized without building a tree of it, and
//! handed to its protocol as bytes.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

/// The artifacts this tool verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An ANP/0.1 log document (`protocol: "ANP/0.1"`, `events`).
    AnpLog,
    /// A Countersign console's JSON export of an ANP session: the log
    /// document under `log`, beside the decisions as they were sent.
    AnpExport,
    /// A Concordia transcript as the gate carries it: `{"messages": [...], "keys": {...}}`.
    ConcordiaTranscript,
    /// A Concordia ApprovalReceipt, bare or `{"receipt", "offer", …}`.
    ConcordiaReceipt,
    /// A Concordia reputation attestation with its parties' keys: `{"attestation", "keys"}`.
    ConcordiaAttestation,
    /// A Concordia mandate with its issuer's key: `{"mandate", "issuer_public_key"}`.
    ConcordiaMandate,
    /// An OANP arbitrated receipt: `{artifact, signed_payload, jwks, …}`, or
    /// a closed session's unsigned one (`{session_id, state, arbiter, …}`).
    OanpReceipt,
}

impl Kind {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AnpLog => "ANP/0.1 log",
            Kind::AnpExport => "ANP session export",
            Kind::ConcordiaTranscript => "Concordia transcript",
            Kind::ConcordiaReceipt => "Concordia ApprovalReceipt",
            Kind::ConcordiaAttestation => "Concordia attestation",
            Kind::ConcordiaMandate => "Concordia mandate",
            Kind::OanpReceipt => "OANP receipt",
        }
    }
}

/// What the table asks of a document's top level.
pub trait Members {
    /// True when the top level has `member`.
    fn has(&self, member: &str) -> bool;
    /// The string `member` holds, when it is a string.
    fn string(&self, member: &str) -> Option<Cow<'_, str>>;
    /// True when `member` is an array.
    fn is_array(&self, member: &str) -> bool;
    /// True when `member` is an object.
    fn is_object(&self, member: &str) -> bool;
    /// The string at `outer.inner`, when `outer` is an object and it is one.
    fn nested_string(&self, outer: &str, inner: &str) -> Option<String>;
}

impl Members for Value {
    fn has(&self, member: &str) -> bool {
        self.get(member).is_some()
    }
    fn string(&self, member: &str) -> Option<Cow<'_, str>> {
        self.get(member).and_then(Value::as_str).map(Cow::Borrowed)
    }
    fn is_array(&self, member: &str) -> bool {
        self.get(member).is_some_and(Value::is_array)
    }
    fn is_object(&self, member: &str) -> bool {
        self.get(member).is_some_and(Value::is_object)
    }
    fn nested_string(&self, outer: &str, inner: &str) -> Option<String> {
        self.get(outer)?.get(inner)?.as_str().map(str::to_owned)
    }
}

/// The top level of a JSON object's text: each member's name and its value
/// left as text. Reading it checks the whole text's syntax without building
/// anything below the top level; it does not decode the strings inside the
/// members, so a lone surrogate escape there (`"\ud800"`, which `serde_json`
/// refuses when decoding) is only found by whoever reads that member.
pub struct TopLevel<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> TopLevel<'a> {
    /// Reads `bytes`, which must be one JSON object.
    pub fn parse(bytes: &'a [u8]) -> Result<TopLevel<'a>, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The text of `member`; when a name repeats, the last, as `serde_json`
    /// reads it into a [`Value`].
    pub fn get(&self, member: &str) -> Option<&'a RawValue> {
        self.members
            .iter()
            .rev()
            .find(|(name, _)| name == member)
            .map(|(_, raw)| *raw)
    }

    fn starts(&self, member: &str, byte: u8) -> bool {
        self.get(member)
            .is_some_and(|raw| raw.get().trim_start().as_bytes().first() == Some(&byte))
    }
}

impl Members for TopLevel<'_> {
    fn has(&self, member: &str) -> bool {
        self.get(member).is_some()
    }
    fn string(&self, member: &str) -> Option<Cow<'_, str>> {
        let raw = self.get(member)?;
        serde_json::from_str::<Name<'_>>(raw.get())
            .ok()
            .map(|n| n.0)
    }
    fn is_array(&self, member: &str) -> bool {
        self.starts(member, b'[')
    }
    fn is_object(&self, member: &str) -> bool {
        self.starts(member, b'{')
    }
    fn nested_string(&self, outer: &str, inner: &str) -> Option<String> {
        let raw = self.get(outer)?;
        let nested = TopLevel::parse(raw.get().as_bytes()).ok()?;
        nested.string(inner).map(Cow::into_owned)
    }
}

/// A JSON string, borrowed from the text when it has no escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for TopLevel<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TopLevel<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
                    members.push((name, map.next_value::<&'de RawValue>()?));
                }
                Ok(TopLevel { members })
            }
        }
        d.deserialize_map(V)
    }
}

/// A row's test.
type Test = fn(&dyn Members) -> bool;

/// The table: the first row whose test holds names the kind (an attestation
/// may carry its transcript, so it comes before the transcript row).
const TABLE: &[(Kind, Test)] = &[
    (Kind::AnpLog, |v| {
        v.string("protocol").is_some_and(|p| p.starts_with("ANP/")) && v.has("events")
    }),
    (Kind::AnpExport, |v| {
        v.has("decisions")
            && v.nested_string("log", "protocol")
                .is_some_and(|p| p.starts_with("ANP/"))
    }),
    (Kind::ConcordiaAttestation, |v| {
        v.has("attestation") && v.has("keys")
    }),
    (Kind::ConcordiaTranscript, |v| {
        v.is_array("messages") && v.is_object("keys")
    }),
    (Kind::ConcordiaReceipt, |v| {
        v.string("artifact_type").as_deref() == Some("ApprovalReceipt")
            || v.nested_string("receipt", "artifact_type").as_deref() == Some("ApprovalReceipt")
    }),
    (Kind::ConcordiaMandate, |v| {
        v.has("mandate") && v.has("issuer_public_key")
    }),
    // The two forms `crates/oanp` recognizes as a receipt.
    (Kind::OanpReceipt, |v| {
        oanp::receipt::form::SIGNED_FORM.iter().all(|m| v.has(m))
            || oanp::receipt::form::CLOSED_FORM.iter().all(|m| v.has(m))
    }),
];

/// What `doc` is, or `None`.
pub fn detect(doc: &dyn Members) -> Option<Kind> {
    TABLE.iter().find(|(_, test)| test(doc)).map(|(k, _)| *k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table says the same of a document's text as of its parsed value.
    #[test]
    fn text_and_value_are_detected_alike() {
        let cases = [
            (r#"{"protocol":"ANP/0.1","events":[]}"#, Some(Kind::AnpLog)),
            (r#"{"protocol":"ANP\/0.1","events":[]}"#, Some(Kind::AnpLog)),
            (r#"{"protocol":"OTHER","events":[]}"#, None),
            (r#"{"protocol":"ANP/0.1"}"#, None),
            (
                r#"{"log":{"protocol":"ANP/0.1","events":[]},"decisions":[]}"#,
                Some(Kind::AnpExport),
            ),
            (r#"{"log":{"protocol":"ANP/0.1","events":[]}}"#, None),
            (r#"{"log":{"protocol":"X"},"decisions":[]}"#, None),
            (
                r#"{"messages": [], "keys": {}}"#,
                Some(Kind::ConcordiaTranscript),
            ),
            (r#"{"messages": {}, "keys": {}}"#, None),
            (r#"{"messages": [], "keys": []}"#, None),
            (
                r#"{"messages": [], "keys": {}, "attestation": 1}"#,
                Some(Kind::ConcordiaAttestation),
            ),
            (
                r#"{"messages": 1, "messages": [], "keys": {}}"#,
                Some(Kind::ConcordiaTranscript),
            ),
            (r#"{"messages": [], "messages": 1, "keys": {}}"#, None),
            (
                r#"{"artifact_type":"ApprovalReceipt"}"#,
                Some(Kind::ConcordiaReceipt),
            ),
            (
                r#"{"receipt":{"artifact_type":"ApprovalReceipt"}}"#,
                Some(Kind::ConcordiaReceipt),
            ),
            (r#"{"receipt":{"artifact_type":"Other"}}"#, None),
            (
                r#"{"mandate":{},"issuer_public_key":"x"}"#,
                Some(Kind::ConcordiaMandate),
            ),
            (
                r#"{"artifact":1,"signed_payload":2,"jwks":3}"#,
                Some(Kind::OanpReceipt),
            ),
            (
                r#"{"session_id":1,"state":2,"arbiter":3}"#,
                Some(Kind::OanpReceipt),
            ),
            (r#"{"hello":1}"#, None),
        ];
        for (text, kind) in cases {
            let value: Value = serde_json::from_str(text).unwrap();
            let top = TopLevel::parse(text.as_bytes()).unwrap();
            assert_eq!(detect(&value), kind, "{text}");
            assert_eq!(detect(&top), kind, "{text}");
        }
    }

    #[test]
    fn text_that_is_not_one_json_object_is_refused() {
        for text in ["[1]", "1", "{\"a\":1} x", "{\"a\":}", "{\"a\":\"\\x\"}", ""] {
            assert!(TopLevel::parse(text.as_bytes()).is_err(), "{text}");
        }
        // A lone surrogate inside a member is left as text, which serde_json
        // only refuses when it decodes the string: callers that decode check.
        let lone = r#"{"a":"\ud800"}"#;
        assert!(TopLevel::parse(lone.as_bytes()).is_ok());
        assert!(serde_json::from_str::<Value>(lone).is_err());
    }
}
