//! The terms a person decides on, as a record with one canonical form and
//! one hash: what a signed ApprovalReceipt binds (its `scope.offer_hash`),
//! so that a broken promise is at least provable (§6.2).
//!
//! The record is complete at the moment of the decision, before the
//! counterparty answers: it names the message the decision answers (the
//! CFP, or the counterparty's proposal), the parties as the CFP stated
//! them, the terms (no marks; items and promises sorted), and until when
//! the terms stay in force. Its JSON is canonicalized with the workspace's
//! one RFC 8785 implementation (`jcs`) and hashed as `sha256:<hex>`.

use serde_json::{json, Map, Value};
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

use crate::conversation::Conversation;
use crate::term::{AccessItem, Terms};
use crate::text::{quote, AgentId, Id, ItemName, Promise, Text};

/// The `record` member's value: this record's kind and version.
pub const RECORD_KIND: &str = "anex-terms/1";

/// Why a terms record could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The conversation has no CFP yet, so there are no parties to name.
    #[error("the conversation has no CFP, so there are no terms to record")]
    NoCfp,
    /// `answers` is not a message of the conversation.
    #[error("message {0} is not part of the conversation")]
    UnknownMessage(String),
    /// The record's JSON breaks a rule.
    #[error("the terms record {0}")]
    Invalid(String),
}

/// The requester as its CFP stated itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// Its agent identity.
    pub identity: AgentId,
    /// Whose agent it is.
    pub owner: Text,
    /// The relation it declared.
    pub relation: Option<Text>,
}

/// The terms a decision covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermsRecord {
    /// The conversation.
    pub conversation_id: Id,
    /// The message the decision answers (the CFP or a proposal).
    pub answers: Id,
    /// Who asks.
    pub requester: Party,
    /// The agent whose owner's data is shared.
    pub responder: AgentId,
    /// The purpose the CFP stated.
    pub request_type: Text,
    /// The items shared, sorted.
    pub access: Vec<ItemName>,
    /// The promises, sorted.
    pub promise: Vec<Promise>,
    /// When the terms stop being in force (whole seconds, UTC).
    pub valid_until: OffsetDateTime,
}

fn format_utc(at: OffsetDateTime) -> String {
    let at = at.to_offset(UtcOffset::UTC);
    at.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
    ))
    .unwrap_or_default()
}

fn parse_utc(s: &str) -> Option<OffsetDateTime> {
    let fmt = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    PrimitiveDateTime::parse(s, fmt)
        .ok()
        .map(|p| p.assume_utc())
}

impl TermsRecord {
    /// The record of `terms` decided in answer to message `answers` of
    /// `conversation`, in force until `valid_until` (truncated to whole
    /// seconds).
    pub fn new(
        conversation: &Conversation,
        answers: &Id,
        terms: &Terms,
        valid_until: OffsetDateTime,
    ) -> Result<Self, RecordError> {
        let Some((_, cfp)) = conversation.cfp() else {
            return Err(RecordError::NoCfp);
        };
        if !conversation.contains(answers) {
            return Err(RecordError::UnknownMessage(answers.to_string()));
        }
        let year = valid_until.to_offset(UtcOffset::UTC).year();
        if !(1..=9999).contains(&year) {
            return Err(RecordError::Invalid(format!(
                "valid_until: year {year} is outside 1 to 9999"
            )));
        }
        let mut access: Vec<ItemName> = terms.access.iter().map(|i| i.name.clone()).collect();
        access.sort();
        let mut promise = terms.promise.clone();
        promise.sort();
        Ok(Self {
            conversation_id: conversation.id().clone(),
            answers: answers.clone(),
            requester: Party {
                identity: cfp.identity.clone(),
                owner: cfp.owner.clone(),
                relation: cfp.relation.clone(),
            },
            responder: conversation.responder().clone(),
            request_type: cfp.request_type.clone(),
            access,
            promise,
            valid_until: valid_until
                .to_offset(UtcOffset::UTC)
                .replace_nanosecond(0)
                .unwrap_or(valid_until),
        })
    }

    /// The terms recorded (no marks).
    pub fn terms(&self) -> Terms {
        Terms {
            access: self
                .access
                .iter()
                .map(|n| AccessItem::new(n.clone(), false))
                .collect(),
            promise: self.promise.clone(),
        }
    }

    /// Whether the terms are in force at `now` (strictly before `valid_until`).
    pub fn in_force(&self, now: OffsetDateTime) -> bool {
        now < self.valid_until
    }

    /// `valid_until` as written in the record (`2026-11-01T12:00:00Z`).
    pub fn valid_until_text(&self) -> String {
        format_utc(self.valid_until)
    }

    /// The record's JSON (docs/anex-binding.md, "The terms record").
    pub fn to_json(&self) -> Value {
        let mut requester = Map::new();
        requester.insert("identity".into(), json!(self.requester.identity.as_str()));
        requester.insert("owner".into(), json!(self.requester.owner.as_str()));
        if let Some(r) = &self.requester.relation {
            requester.insert("relation".into(), json!(r.as_str()));
        }
        json!({
            "record": RECORD_KIND,
            "conversation_id": self.conversation_id.as_str(),
            "answers": self.answers.as_str(),
            "requester": Value::Object(requester),
            "responder": self.responder.as_str(),
            "request_type": self.request_type.as_str(),
            "access": self.access.iter().map(ItemName::as_str).collect::<Vec<_>>(),
            "promise": self.promise.iter().map(Promise::as_str).collect::<Vec<_>>(),
            "valid_until": self.valid_until_text(),
        })
    }

    /// The RFC 8785 canonical JSON of the record: the bytes that are hashed.
    pub fn canonical(&self) -> String {
        jcs::to_string(&self.to_json())
    }

    /// `sha256:<hex>` of the canonical JSON: what an ApprovalReceipt's
    /// `scope.offer_hash` carries.
    pub fn hash(&self) -> String {
        jcs::sha256_prefixed(self.canonical().as_bytes())
    }

    /// Reads a record, strictly: every member known and valid, lists sorted
    /// and unique, `valid_until` in the one form, so that the record read
    /// is exactly the record written and its hash is the one the receipt
    /// binds.
    pub fn from_json(value: &Value) -> Result<Self, RecordError> {
        let bad = |what: String| RecordError::Invalid(what);
        let Value::Object(map) = value else {
            return Err(bad("is not an object".into()));
        };
        let known = [
            "record",
            "conversation_id",
            "answers",
            "requester",
            "responder",
            "request_type",
            "access",
            "promise",
            "valid_until",
        ];
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(bad(format!("has an unknown member {}", quote(k))));
        }
        let text = |m: &Map<String, Value>, key: &str| -> Result<String, RecordError> {
            m.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("{key}: is missing or not a string")))
        };
        let field = |key: &str, why: crate::text::TextError| bad(format!("{key}: {why}"));
        if text(map, "record")? != RECORD_KIND {
            return Err(bad(format!("record: is not {RECORD_KIND:?}")));
        }
        let Some(Value::Object(req)) = map.get("requester") else {
            return Err(bad("requester: is missing or not an object".into()));
        };
        if let Some(k) = req
            .keys()
            .find(|k| !["identity", "owner", "relation"].contains(&k.as_str()))
        {
            return Err(bad(format!(
                "requester: has an unknown member {}",
                quote(k)
            )));
        }
        let relation = match req.get("relation") {
            None => None,
            Some(Value::String(s)) => {
                Some(Text::parse(s).map_err(|w| field("requester.relation", w))?)
            }
            Some(_) => return Err(bad("requester.relation: is not a string".into())),
        };
        let list = |key: &str| -> Result<Vec<String>, RecordError> {
            match map.get(key) {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| bad(format!("{key}: holds a non-string")))
                    })
                    .collect(),
                _ => Err(bad(format!("{key}: is missing or not an array"))),
            }
        };
        let access = list("access")?
            .iter()
            .map(|s| ItemName::parse(s).map_err(|w| field("access", w)))
            .collect::<Result<Vec<_>, _>>()?;
        let promise = list("promise")?
            .iter()
            .map(|s| Promise::parse(s).map_err(|w| field("promise", w)))
            .collect::<Result<Vec<_>, _>>()?;
        if access.is_empty() {
            return Err(bad("access: is empty".into()));
        }
        if !access.windows(2).all(|w| w[0] < w[1]) || !promise.windows(2).all(|w| w[0] < w[1]) {
            return Err(bad(
                "access and promise must be sorted and free of repeats".into()
            ));
        }
        let valid_until_text = text(map, "valid_until")?;
        let valid_until = parse_utc(&valid_until_text).ok_or_else(|| {
            bad("valid_until: is not a UTC time written YYYY-MM-DDTHH:MM:SSZ".into())
        })?;
        Ok(Self {
            conversation_id: Id::parse(&text(map, "conversation_id")?)
                .map_err(|w| field("conversation_id", w))?,
            answers: Id::parse(&text(map, "answers")?).map_err(|w| field("answers", w))?,
            requester: Party {
                identity: AgentId::parse(&text(req, "identity")?)
                    .map_err(|w| field("requester.identity", w))?,
                owner: Text::parse(&text(req, "owner")?)
                    .map_err(|w| field("requester.owner", w))?,
                relation,
            },
            responder: AgentId::parse(&text(map, "responder")?)
                .map_err(|w| field("responder", w))?,
            request_type: Text::parse(&text(map, "request_type")?)
                .map_err(|w| field("request_type", w))?,
            access,
            promise,
            valid_until,
        })
    }
}
