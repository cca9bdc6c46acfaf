//! Reading a message: strict, bounded, and never a guess. A message this
//! crate cannot read is an [`Unreadable`] with the reason (naming the field
//! and what was wrong), from which [`Unreadable::answer`] builds the
//! `NOT-UNDERSTOOD` the sender gets back.
//!
//! Unknown members are refused, not ignored: the ontology is extended under
//! another ontology name (§5.4), and a field this crate does not know may
//! change what the message means.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::json::{depth, read_strict};
use crate::limits::{MAX_ACCESS_ITEMS, MAX_DEPTH, MAX_MESSAGE_BYTES, MAX_PROMISES};
use crate::message::{
    check_data_value, CallForProposal, Content, DataItems, Envelope, Message, Query, LANGUAGE,
    ONTOLOGY,
};
use crate::performative::{Performative, Protocol};
use crate::term::Terms;
use crate::text::{quote, AgentId, Id, ItemName, Text, TextError};

/// A message this crate could not read: why, and what of its envelope could
/// be read (each field only if it passed its own rule), so that the answer
/// can be threaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unreadable {
    /// What was wrong, naming the field (`content.request.access[1]: ...`).
    pub reason: String,
    /// The performative, when it could be read.
    pub performative: Option<Performative>,
    /// The sender, when it could be read.
    pub sender: Option<AgentId>,
    /// The protocol, when it could be read.
    pub protocol: Option<Protocol>,
    /// The conversation, when it could be read.
    pub conversation_id: Option<Id>,
    /// The message's own id, when it could be read.
    pub message_id: Option<Id>,
}

impl Unreadable {
    fn bare(reason: String) -> Self {
        Self {
            reason,
            performative: None,
            sender: None,
            protocol: None,
            conversation_id: None,
            message_id: None,
        }
    }

    fn salvage(reason: String, value: &Value) -> Self {
        let mut out = Self::bare(reason);
        if let Value::Object(map) = value {
            let text = |key: &str| map.get(key).and_then(Value::as_str);
            out.performative = text("performative").and_then(Performative::parse);
            out.sender = text("sender").and_then(|s| AgentId::parse(s).ok());
            out.protocol = text("protocol").and_then(Protocol::parse);
            out.conversation_id = text("conversation_id").and_then(|s| Id::parse(s).ok());
            out.message_id = text("message_id").and_then(|s| Id::parse(s).ok());
        }
        out
    }

    /// Whether to answer at all: an unreadable `NOT-UNDERSTOOD` is not
    /// answered, so two agents cannot bounce errors at each other forever.
    pub fn should_answer(&self) -> bool {
        self.performative != Some(Performative::NotUnderstood)
    }

    /// The `NOT-UNDERSTOOD` answer, from `me` to `to` (the authenticated
    /// counterparty, whatever the unreadable message claimed), in the
    /// message's conversation if it could be read, else in `fallback`
    /// (a new conversation id the caller chose), replying to its id if
    /// that could be read.
    pub fn answer(&self, me: AgentId, to: AgentId, message_id: Id, fallback: Id) -> Message {
        let in_reply_to = self
            .message_id
            .clone()
            .filter(|id| *id != message_id && self.conversation_id.is_some());
        // Built directly: NOT-UNDERSTOOD takes any protocol and
        // `in_reply_to` was filtered above, so no rule of `Message::new`
        // can refuse it.
        Message {
            sender: me,
            receiver: to,
            protocol: self.protocol.unwrap_or(Protocol::Handshaking),
            conversation_id: self.conversation_id.clone().unwrap_or(fallback),
            message_id,
            in_reply_to,
            content: Content::NotUnderstood {
                reason: Text::lossy(&self.reason),
            },
        }
    }
}

/// Reads one message from its JSON text (at most
/// [`MAX_MESSAGE_BYTES`], nested at most [`MAX_DEPTH`], no duplicate members).
pub fn parse(bytes: &[u8]) -> Result<Message, Unreadable> {
    let value = read_strict(bytes, MAX_MESSAGE_BYTES, MAX_DEPTH)
        .map_err(|e| Unreadable::bare(format!("the message {e}")))?;
    parse_value(&value)
}

/// Reads one message from a JSON value another layer already parsed (an
/// A2A data part). The size and depth bounds still apply; duplicate
/// members can only be refused if that layer read the text with
/// [`crate::json::read_strict`].
pub fn parse_value(value: &Value) -> Result<Message, Unreadable> {
    let size = serde_json::to_string(value).map(|s| s.len()).unwrap_or(0);
    if size > MAX_MESSAGE_BYTES {
        return Err(Unreadable::bare(format!(
            "the message is {size} bytes, more than the {MAX_MESSAGE_BYTES} allowed"
        )));
    }
    if depth(value) > MAX_DEPTH {
        return Err(Unreadable::bare(format!(
            "the message is nested deeper than {MAX_DEPTH} levels"
        )));
    }
    read_message(value).map_err(|reason| Unreadable::salvage(reason, value))
}

const ENVELOPE_FIELDS: [&str; 10] = [
    "performative",
    "sender",
    "receiver",
    "content",
    "language",
    "ontology",
    "protocol",
    "conversation_id",
    "message_id",
    "in_reply_to",
];

fn read_message(value: &Value) -> Result<Message, String> {
    let top = Obj::new(value, "the message")?;
    top.only(&ENVELOPE_FIELDS)?;
    let performative_text = top.str("performative")?;
    let performative = Performative::parse(performative_text).ok_or_else(|| {
        format!(
            "performative: {} is not an ANEX performative (ACCEPT-PROPOSAL, AGREE, CANCEL, CFP, FAILURE, INFORM, NOT-UNDERSTOOD, PROPOSE, QUERY-IF, REFUSE, REJECT-PROPOSAL, REQUEST)",
            quote(performative_text)
        )
    })?;
    let language = top.str("language")?;
    if language != LANGUAGE {
        return Err(format!(
            "language: {} is not one this agent reads (only \"{LANGUAGE}\")",
            quote(language)
        ));
    }
    let ontology = top.str("ontology")?;
    if ontology != ONTOLOGY {
        return Err(format!(
            "ontology: {} is not one this agent speaks (only \"{ONTOLOGY}\")",
            quote(ontology)
        ));
    }
    let protocol_text = top.str("protocol")?;
    let protocol = Protocol::parse(protocol_text).ok_or_else(|| {
        format!(
            "protocol: {} is not an ANEX protocol (ANEX-Handshaking, ANEX-Negotiation, ANEX-Data-Exchange, ANEX-Termination)",
            quote(protocol_text)
        )
    })?;
    let envelope = Envelope {
        sender: top.parsed("sender", AgentId::parse)?,
        receiver: top.parsed("receiver", AgentId::parse)?,
        protocol,
        conversation_id: top.parsed("conversation_id", Id::parse)?,
        message_id: top.parsed("message_id", Id::parse)?,
        in_reply_to: top.opt_parsed("in_reply_to", Id::parse)?,
    };
    let content = top.obj("content")?;
    let content = read_content(performative, protocol, &content)?;
    Message::new(envelope, content).map_err(|e| e.to_string())
}

fn read_content(
    performative: Performative,
    protocol: Protocol,
    c: &Obj<'_>,
) -> Result<Content, String> {
    use Performative as P;
    use Protocol as Pr;
    let misplaced = || {
        Err(format!(
            "{performative} is not used in {protocol} (docs/anex-binding.md lists where each performative belongs)"
        ))
    };
    Ok(match performative {
        P::Inform if c.has("query") => {
            c.only(&["query", "answer"])?;
            Content::Answer {
                query: read_query(c)?,
                answer: c.bool("answer")?,
            }
        }
        P::Inform => match protocol {
            Pr::Handshaking => {
                c.only(&["message", "owner"])?;
                Content::Introduce {
                    message: c.parsed("message", Text::parse)?,
                    owner: c.opt_parsed("owner", Text::parse)?,
                }
            }
            Pr::Termination => {
                c.only(&["message"])?;
                Content::Terminate {
                    message: c.parsed("message", Text::parse)?,
                }
            }
            Pr::DataExchange => {
                c.only(&["data"])?;
                Content::Data(read_data(&c.obj("data")?)?)
            }
            Pr::Negotiation => return misplaced(),
        },
        P::Request => match protocol {
            Pr::Handshaking => {
                c.only(&["request"])?;
                Content::Engage {
                    request: c.parsed("request", Text::parse)?,
                }
            }
            Pr::DataExchange => {
                c.only(&["access"])?;
                let access = read_names(c, "access")?;
                if access.is_empty() {
                    return Err(format!("{}: names no item", c.at("access")));
                }
                Content::DataRequest { access }
            }
            _ => return misplaced(),
        },
        P::Agree if protocol == Pr::Handshaking => {
            c.only(&["response"])?;
            Content::Agree {
                response: c.opt_parsed("response", Text::parse)?,
            }
        }
        P::Propose if protocol == Pr::Handshaking => {
            c.only(&["modification"])?;
            Content::Conditions {
                modification: c.parsed("modification", Text::parse)?,
            }
        }
        P::Propose if protocol == Pr::Negotiation => {
            c.only(&["response"])?;
            let r = c.obj("response")?;
            r.only(&["access", "promise"])?;
            Content::Propose(read_terms(&r)?)
        }
        P::Cfp if protocol == Pr::Negotiation => {
            c.only(&["request"])?;
            let r = c.obj("request")?;
            r.only(&[
                "identity",
                "owner",
                "relation",
                "request_type",
                "access",
                "promise",
            ])?;
            Content::Cfp(CallForProposal {
                identity: r.parsed("identity", AgentId::parse)?,
                owner: r.parsed("owner", Text::parse)?,
                relation: r.opt_parsed("relation", Text::parse)?,
                request_type: r.parsed("request_type", Text::parse)?,
                terms: read_terms(&r)?,
            })
        }
        P::AcceptProposal if protocol == Pr::Negotiation => {
            c.only(&["terms"])?;
            let t = c.obj("terms")?;
            t.only(&["access", "promise"])?;
            Content::Accept(read_terms(&t)?)
        }
        P::RejectProposal if protocol == Pr::Negotiation => {
            c.only(&["reason"])?;
            Content::Reject {
                reason: c.opt_parsed("reason", Text::parse)?,
            }
        }
        P::Refuse => {
            c.only(&["response", "items"])?;
            let items = if c.has("items") {
                let items = read_names(c, "items")?;
                if items.is_empty() {
                    return Err(format!(
                        "{}: is empty (leave it out instead)",
                        c.at("items")
                    ));
                }
                items
            } else {
                Vec::new()
            };
            Content::Refuse {
                response: c.opt_parsed("response", Text::parse)?,
                items,
            }
        }
        P::QueryIf => {
            c.only(&["query"])?;
            Content::QueryIf {
                query: read_query(c)?,
            }
        }
        P::Cancel => {
            c.only(&["reason"])?;
            Content::Cancel {
                reason: c.opt_parsed("reason", Text::parse)?,
            }
        }
        P::Failure => {
            c.only(&["error"])?;
            Content::Failure {
                error: c.parsed("error", Text::parse)?,
            }
        }
        P::NotUnderstood => {
            c.only(&["reason"])?;
            Content::NotUnderstood {
                reason: c.parsed("reason", Text::parse)?,
            }
        }
        P::Agree | P::Propose | P::Cfp | P::AcceptProposal | P::RejectProposal => {
            return misplaced()
        }
    })
}

fn read_query(c: &Obj<'_>) -> Result<Query, String> {
    let q = c.str("query")?;
    Query::parse(q).ok_or_else(|| {
        format!(
            "{}: {} is not a proposition this agent answers (only \"terms_in_force\")",
            c.at("query"),
            quote(q)
        )
    })
}

fn read_terms(o: &Obj<'_>) -> Result<Terms, String> {
    let access = o.str_list("access", MAX_ACCESS_ITEMS)?;
    let promise = o.str_list("promise", MAX_PROMISES)?;
    Terms::from_wire(&access, &promise).map_err(|e| format!("{}: {e}", o.path))
}

fn read_names(o: &Obj<'_>, key: &str) -> Result<Vec<ItemName>, String> {
    let list = o.str_list(key, MAX_ACCESS_ITEMS)?;
    let mut seen = BTreeSet::new();
    let mut names = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let name = ItemName::parse(s).map_err(|why| {
            format!(
                "{}[{i}]: {} is not an item name (data requests and refusals name items without marks): it {why}",
                o.at(key),
                quote(s)
            )
        })?;
        if !seen.insert(name.clone()) {
            return Err(format!(
                "{}[{i}]: {} appears more than once",
                o.at(key),
                quote(s)
            ));
        }
        names.push(name);
    }
    Ok(names)
}

fn read_data(o: &Obj<'_>) -> Result<DataItems, String> {
    if o.map.is_empty() {
        return Err(format!("{}: shares no item", o.path));
    }
    if o.map.len() > MAX_ACCESS_ITEMS {
        return Err(format!(
            "{}: has more than {MAX_ACCESS_ITEMS} items",
            o.path
        ));
    }
    let mut items = DataItems::new();
    for (key, value) in o.map {
        let name = ItemName::parse(key)
            .map_err(|why| format!("{}: {} is not an item name: it {why}", o.path, quote(key)))?;
        check_data_value(value).map_err(|why| format!("{}: {why}", o.at(key)))?;
        items.insert(name, value.clone());
    }
    Ok(items)
}

/// A JSON object being read, with the path used in reasons.
struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Obj<'a> {
    fn new(v: &'a Value, path: &str) -> Result<Self, String> {
        match v {
            Value::Object(map) => Ok(Self {
                path: path.to_owned(),
                map,
            }),
            other => Err(format!("{path}: is {}, not an object", kind(other))),
        }
    }

    fn at(&self, key: &str) -> String {
        if self.path == "the message" {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(format!(
                "{}: the member {} is not part of this message (known: {})",
                self.path,
                quote(k),
                allowed.join(", ")
            )),
            None => Ok(()),
        }
    }

    fn get(&self, key: &str) -> Result<&'a Value, String> {
        self.map
            .get(key)
            .ok_or_else(|| format!("{}: is missing", self.at(key)))
    }

    fn str(&self, key: &str) -> Result<&'a str, String> {
        match self.get(key)? {
            Value::String(s) => Ok(s),
            other => Err(format!(
                "{}: is {}, not a string",
                self.at(key),
                kind(other)
            )),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, String> {
        match self.get(key)? {
            Value::Bool(b) => Ok(*b),
            other => Err(format!(
                "{}: is {}, not a boolean",
                self.at(key),
                kind(other)
            )),
        }
    }

    fn obj(&self, key: &str) -> Result<Obj<'a>, String> {
        Obj::new(self.get(key)?, &self.at(key))
    }

    fn parsed<T>(&self, key: &str, f: fn(&str) -> Result<T, TextError>) -> Result<T, String> {
        let s = self.str(key)?;
        f(s).map_err(|why| format!("{}: {} {why}", self.at(key), quote(s)))
    }

    fn opt_parsed<T>(
        &self,
        key: &str,
        f: fn(&str) -> Result<T, TextError>,
    ) -> Result<Option<T>, String> {
        if self.has(key) {
            self.parsed(key, f).map(Some)
        } else {
            Ok(None)
        }
    }

    fn str_list(&self, key: &str, max: usize) -> Result<Vec<&'a str>, String> {
        let items = match self.get(key)? {
            Value::Array(items) => items,
            other => {
                return Err(format!(
                    "{}: is {}, not an array",
                    self.at(key),
                    kind(other)
                ))
            }
        };
        if items.len() > max {
            return Err(format!("{}: has more than {max} entries", self.at(key)));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.as_str()),
                other => Err(format!(
                    "{}[{i}]: is {}, not a string",
                    self.at(key),
                    kind(other)
                )),
            })
            .collect()
    }
}
