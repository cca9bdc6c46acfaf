//! The ANEX message (§4.2): `{performative, sender, receiver, content,
//! language, ontology, protocol}`, plus the threading the draft lacks
//! (`conversation_id`, `message_id`, `in_reply_to`).
//!
//! The content is typed per performative: [`Content`] holds exactly the
//! shapes docs/anex-binding.md lists, so the performative is derived from
//! the content and a message can never claim one intent and carry another.
//! Build messages with [`Message::new`] or [`Message::reply`]; read them
//! with [`crate::parse`].

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::json::depth;
use crate::performative::{Performative, Protocol};
use crate::term::Terms;
use crate::text::{AgentId, Id, ItemName, Text};

/// The only `language` ANEX messages use (§4.2: "e.g., JSON").
pub const LANGUAGE: &str = "JSON";

/// The only `ontology` this crate speaks (§5.4's core terms). A domain
/// extension of the ontology would carry another name, which this crate
/// answers `NOT-UNDERSTOOD`.
pub const ONTOLOGY: &str = "ANEX-Ontology";

/// A proposition a `QUERY-IF` may ask about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// "Are accepted terms in force in this conversation?"
    TermsInForce,
}

impl Query {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TermsInForce => "terms_in_force",
        }
    }

    /// Reads the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        (s == "terms_in_force").then_some(Self::TermsInForce)
    }
}

/// A CFP's `request` (§4.4): who asks, for whom, in which relation, for
/// what purpose, and the terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallForProposal {
    /// The requesting agent's identifier (equals the message's `sender`).
    pub identity: AgentId,
    /// The person or entity the requesting agent represents, as it states it.
    pub owner: Text,
    /// The relationship between the owners, as the requester states it.
    pub relation: Option<Text>,
    /// The purpose of the engagement.
    pub request_type: Text,
    /// The access asked (with `(m)` marks) and the promises offered.
    pub terms: Terms,
}

/// Data shared under accepted terms: item name → value. Values are JSON
/// without numbers (see [`check_data_value`]).
pub type DataItems = BTreeMap<ItemName, Value>;

/// Deepest nesting inside one shared value.
pub const MAX_VALUE_DEPTH: usize = 4;

/// Checks that `value` may be shared as an item's value: JSON strings,
/// booleans, null, and arrays or objects of them, at most
/// [`MAX_VALUE_DEPTH`] deep. No numbers: A2A carries data parts as
/// `google.protobuf.Value`, where every number is a double, so a number
/// would not arrive as it was sent; write it as a string.
pub fn check_data_value(value: &Value) -> Result<(), String> {
    if depth(value) > MAX_VALUE_DEPTH {
        return Err(format!("is nested deeper than {MAX_VALUE_DEPTH} levels"));
    }
    fn walk(v: &Value) -> Result<(), String> {
        match v {
            Value::Number(n) => Err(format!(
                "holds the number {n}: values carry numbers as strings"
            )),
            Value::Array(items) => items.iter().try_for_each(walk),
            Value::Object(map) => map.values().try_for_each(walk),
            Value::Null | Value::Bool(_) | Value::String(_) => Ok(()),
        }
    }
    walk(value)
}

/// The content of a message, one variant per (performative, shape).
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `INFORM` / Handshaking, `{message, owner?}`: self-identification (§4.3 step 1).
    Introduce {
        /// The introduction.
        message: Text,
        /// Whose agent this is.
        owner: Option<Text>,
    },
    /// `REQUEST` / Handshaking, `{request}`: may we engage, for this purpose (§4.3 step 2)?
    Engage {
        /// The purpose.
        request: Text,
    },
    /// `AGREE` / Handshaking, `{response?}`: yes, proceed (§4.3 step 3).
    Agree {
        /// Optional words.
        response: Option<Text>,
    },
    /// `PROPOSE` / Handshaking, `{modification}`: conditions before engaging (§4.3 step 3).
    Conditions {
        /// The conditions asked.
        modification: Text,
    },
    /// `CFP` / Negotiation, `{request: {...}}` (§4.4).
    Cfp(CallForProposal),
    /// `PROPOSE` / Negotiation, `{response: {access, promise}}`: terms offered.
    Propose(Terms),
    /// `ACCEPT-PROPOSAL` / Negotiation, `{terms: {access, promise}}`.
    Accept(Terms),
    /// `REJECT-PROPOSAL` / Negotiation, `{reason?}`.
    Reject {
        /// Why.
        reason: Option<Text>,
    },
    /// `REFUSE`, `{response?, items?}`: no to an engagement, a CFP or a data request.
    Refuse {
        /// Why.
        response: Option<Text>,
        /// The items refused, when refusing a data request item by item.
        items: Vec<ItemName>,
    },
    /// `REQUEST` / Data-Exchange, `{access: [names]}`: send these accepted items.
    DataRequest {
        /// The items asked, by name (no marks).
        access: Vec<ItemName>,
    },
    /// `INFORM` / Data-Exchange, `{data: {name: value}}`: the items shared.
    Data(DataItems),
    /// `QUERY-IF`, `{query}`.
    QueryIf {
        /// The proposition.
        query: Query,
    },
    /// `INFORM`, `{query, answer}`: the answer to a `QUERY-IF`.
    Answer {
        /// The proposition answered.
        query: Query,
        /// Whether it holds.
        answer: bool,
    },
    /// `CANCEL`, `{reason?}`: the sender leaves; accepted terms are revoked.
    Cancel {
        /// Why.
        reason: Option<Text>,
    },
    /// `INFORM` / Termination, `{message}` (§4.6).
    Terminate {
        /// Closing words.
        message: Text,
    },
    /// `FAILURE`, `{error}` (§5.5).
    Failure {
        /// What failed.
        error: Text,
    },
    /// `NOT-UNDERSTOOD`, `{reason}` (§5.5).
    NotUnderstood {
        /// What could not be read, or which rule the message broke.
        reason: Text,
    },
}

impl Content {
    /// The performative this content is carried by.
    pub fn performative(&self) -> Performative {
        match self {
            Self::Introduce { .. }
            | Self::Data(_)
            | Self::Answer { .. }
            | Self::Terminate { .. } => Performative::Inform,
            Self::Engage { .. } | Self::DataRequest { .. } => Performative::Request,
            Self::Agree { .. } => Performative::Agree,
            Self::Conditions { .. } | Self::Propose(_) => Performative::Propose,
            Self::Cfp(_) => Performative::Cfp,
            Self::Accept(_) => Performative::AcceptProposal,
            Self::Reject { .. } => Performative::RejectProposal,
            Self::Refuse { .. } => Performative::Refuse,
            Self::QueryIf { .. } => Performative::QueryIf,
            Self::Cancel { .. } => Performative::Cancel,
            Self::Failure { .. } => Performative::Failure,
            Self::NotUnderstood { .. } => Performative::NotUnderstood,
        }
    }

    /// The one protocol this content belongs to, or `None` when it may
    /// appear under any (refusals, questions, answers, cancels, errors take
    /// the protocol of the message they concern).
    pub fn fixed_protocol(&self) -> Option<Protocol> {
        match self {
            Self::Introduce { .. }
            | Self::Engage { .. }
            | Self::Agree { .. }
            | Self::Conditions { .. } => Some(Protocol::Handshaking),
            Self::Cfp(_) | Self::Propose(_) | Self::Accept(_) | Self::Reject { .. } => {
                Some(Protocol::Negotiation)
            }
            Self::DataRequest { .. } | Self::Data(_) => Some(Protocol::DataExchange),
            Self::Terminate { .. } => Some(Protocol::Termination),
            Self::Refuse { .. }
            | Self::QueryIf { .. }
            | Self::Answer { .. }
            | Self::Cancel { .. }
            | Self::Failure { .. }
            | Self::NotUnderstood { .. } => None,
        }
    }

    /// The terms carried, for a CFP, a proposal or an acceptance.
    pub fn terms(&self) -> Option<&Terms> {
        match self {
            Self::Cfp(cfp) => Some(&cfp.terms),
            Self::Propose(t) | Self::Accept(t) => Some(t),
            _ => None,
        }
    }

    /// The wire form of `content`.
    pub fn to_json(&self) -> Value {
        fn opt(map: &mut Map<String, Value>, key: &str, text: &Option<Text>) {
            if let Some(t) = text {
                map.insert(key.to_owned(), Value::String(t.to_string()));
            }
        }
        match self {
            Self::Introduce { message, owner } => {
                let mut m = Map::new();
                m.insert("message".into(), json!(message.as_str()));
                opt(&mut m, "owner", owner);
                Value::Object(m)
            }
            Self::Engage { request } => json!({ "request": request.as_str() }),
            Self::Agree { response } => {
                let mut m = Map::new();
                opt(&mut m, "response", response);
                Value::Object(m)
            }
            Self::Conditions { modification } => json!({ "modification": modification.as_str() }),
            Self::Cfp(cfp) => {
                let mut r = Map::new();
                r.insert("identity".into(), json!(cfp.identity.as_str()));
                r.insert("owner".into(), json!(cfp.owner.as_str()));
                opt(&mut r, "relation", &cfp.relation);
                r.insert("request_type".into(), json!(cfp.request_type.as_str()));
                if let Value::Object(t) = cfp.terms.to_json() {
                    r.extend(t);
                }
                json!({ "request": Value::Object(r) })
            }
            Self::Propose(t) => json!({ "response": t.to_json() }),
            Self::Accept(t) => json!({ "terms": t.to_json() }),
            Self::Reject { reason } | Self::Cancel { reason } => {
                let mut m = Map::new();
                opt(&mut m, "reason", reason);
                Value::Object(m)
            }
            Self::Refuse { response, items } => {
                let mut m = Map::new();
                opt(&mut m, "response", response);
                if !items.is_empty() {
                    m.insert(
                        "items".into(),
                        json!(items.iter().map(ItemName::as_str).collect::<Vec<_>>()),
                    );
                }
                Value::Object(m)
            }
            Self::DataRequest { access } => {
                json!({ "access": access.iter().map(ItemName::as_str).collect::<Vec<_>>() })
            }
            Self::Data(items) => {
                let data: Map<String, Value> = items
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect();
                json!({ "data": Value::Object(data) })
            }
            Self::QueryIf { query } => json!({ "query": query.as_str() }),
            Self::Answer { query, answer } => json!({ "query": query.as_str(), "answer": answer }),
            Self::Terminate { message } => json!({ "message": message.as_str() }),
            Self::Failure { error } => json!({ "error": error.as_str() }),
            Self::NotUnderstood { reason } => json!({ "reason": reason.as_str() }),
        }
    }
}

/// Why a message could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The content belongs to another protocol.
    #[error("{performative} with this content belongs to {expected}, not {given}")]
    WrongProtocol {
        /// The content's performative.
        performative: Performative,
        /// The protocol the content requires.
        expected: Protocol,
        /// The protocol given.
        given: Protocol,
    },
    /// A CFP whose `identity` is not its sender.
    #[error("a CFP's request.identity ({identity}) must be its sender ({sender})")]
    IdentityNotSender {
        /// The CFP's identity.
        identity: String,
        /// The message's sender.
        sender: String,
    },
    /// A message that answers itself.
    #[error("in_reply_to names the message itself")]
    RepliesToItself,
}

/// One ANEX message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub(crate) sender: AgentId,
    pub(crate) receiver: AgentId,
    pub(crate) protocol: Protocol,
    pub(crate) conversation_id: Id,
    pub(crate) message_id: Id,
    pub(crate) in_reply_to: Option<Id>,
    pub(crate) content: Content,
}

/// The envelope fields of a message other than its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// Who sends it.
    pub sender: AgentId,
    /// Who it is for.
    pub receiver: AgentId,
    /// The protocol (phase group) it belongs to.
    pub protocol: Protocol,
    /// The conversation it belongs to.
    pub conversation_id: Id,
    /// Its own id, unique in the conversation.
    pub message_id: Id,
    /// The id of the message it answers, if any.
    pub in_reply_to: Option<Id>,
}

impl Message {
    /// A message from its envelope and content, checking that they agree:
    /// the content's protocol, a CFP's identity, no self-reply.
    pub fn new(envelope: Envelope, content: Content) -> Result<Self, BuildError> {
        if let Some(expected) = content.fixed_protocol() {
            if expected != envelope.protocol {
                return Err(BuildError::WrongProtocol {
                    performative: content.performative(),
                    expected,
                    given: envelope.protocol,
                });
            }
        }
        if let Content::Cfp(cfp) = &content {
            if cfp.identity != envelope.sender {
                return Err(BuildError::IdentityNotSender {
                    identity: cfp.identity.to_string(),
                    sender: envelope.sender.to_string(),
                });
            }
        }
        if envelope.in_reply_to.as_ref() == Some(&envelope.message_id) {
            return Err(BuildError::RepliesToItself);
        }
        let Envelope {
            sender,
            receiver,
            protocol,
            conversation_id,
            message_id,
            in_reply_to,
        } = envelope;
        Ok(Self {
            sender,
            receiver,
            protocol,
            conversation_id,
            message_id,
            in_reply_to,
            content,
        })
    }

    /// The answer to `self` carrying `content`: sender and receiver swapped,
    /// same conversation, `in_reply_to` set to `self`'s id, and the content's
    /// own protocol (or `self`'s, for content that takes the protocol of
    /// what it answers).
    pub fn reply(&self, message_id: Id, content: Content) -> Result<Self, BuildError> {
        let protocol = content.fixed_protocol().unwrap_or(self.protocol);
        Self::new(
            Envelope {
                sender: self.receiver.clone(),
                receiver: self.sender.clone(),
                protocol,
                conversation_id: self.conversation_id.clone(),
                message_id,
                in_reply_to: Some(self.message_id.clone()),
            },
            content,
        )
    }

    /// The performative, derived from the content.
    pub fn performative(&self) -> Performative {
        self.content.performative()
    }

    /// Who sends it.
    pub fn sender(&self) -> &AgentId {
        &self.sender
    }

    /// Who it is for.
    pub fn receiver(&self) -> &AgentId {
        &self.receiver
    }

    /// Its protocol (phase group).
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Its conversation.
    pub fn conversation_id(&self) -> &Id {
        &self.conversation_id
    }

    /// Its own id.
    pub fn message_id(&self) -> &Id {
        &self.message_id
    }

    /// The id of the message it answers.
    pub fn in_reply_to(&self) -> Option<&Id> {
        self.in_reply_to.as_ref()
    }

    /// Its content.
    pub fn content(&self) -> &Content {
        &self.content
    }

    /// The envelope fields.
    pub fn envelope(&self) -> Envelope {
        Envelope {
            sender: self.sender.clone(),
            receiver: self.receiver.clone(),
            protocol: self.protocol,
            conversation_id: self.conversation_id.clone(),
            message_id: self.message_id.clone(),
            in_reply_to: self.in_reply_to.clone(),
        }
    }

    /// The wire form (docs/anex-binding.md, "The message").
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("performative".into(), json!(self.performative().as_str()));
        m.insert("sender".into(), json!(self.sender.as_str()));
        m.insert("receiver".into(), json!(self.receiver.as_str()));
        m.insert("content".into(), self.content.to_json());
        m.insert("language".into(), json!(LANGUAGE));
        m.insert("ontology".into(), json!(ONTOLOGY));
        m.insert("protocol".into(), json!(self.protocol.as_str()));
        m.insert(
            "conversation_id".into(),
            json!(self.conversation_id.as_str()),
        );
        m.insert("message_id".into(), json!(self.message_id.as_str()));
        if let Some(r) = &self.in_reply_to {
            m.insert("in_reply_to".into(), json!(r.as_str()));
        }
        Value::Object(m)
    }
}
