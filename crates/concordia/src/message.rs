//! The envelope of SPEC §4.1 and the fourteen message types of §4.2, typed.
//!
//! A [`Message`] is read from the JSON value it arrived as; the value itself
//! is what is hashed and signed (see [`crate::transcript`]), the typed form is
//! what the rest of the crate reasons about. Unknown members are tolerated
//! (forward compatibility) but every member the spec names must have its type.

use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::offer::{Offer, OfferError};
use approval_receipt::datetime;

/// `sha256:` followed by 64 zeros: the `prev_hash` of a session's first message.
pub const GENESIS_HASH: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// The message types of SPEC §4.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageType {
    /// `negotiate.open`: propose a session and its term space.
    Open,
    /// `negotiate.accept_session`: the responder agrees to negotiate.
    AcceptSession,
    /// `negotiate.decline_session`: the responder declines.
    DeclineSession,
    /// `negotiate.offer`: propose term values.
    Offer,
    /// `negotiate.counter`: reject the current offer and propose another.
    Counter,
    /// `negotiate.accept`: accept the current offer.
    Accept,
    /// `negotiate.reject`: reject the current offer without a counter.
    Reject,
    /// `negotiate.inquire`: ask about terms.
    Inquire,
    /// `negotiate.constrain`: declare a hard constraint.
    Constrain,
    /// `negotiate.signal`: share a preference signal.
    Signal,
    /// `negotiate.withdraw`: leave the negotiation.
    Withdraw,
    /// `negotiate.propose_mediator`: suggest a mediator.
    ProposeMediator,
    /// `negotiate.resolve`: a mediator proposes a resolution.
    Resolve,
    /// `negotiate.commit`: finalize the agreement.
    Commit,
}

impl MessageType {
    /// Every type, in §4.2's order.
    pub const ALL: [MessageType; 14] = [
        MessageType::Open,
        MessageType::AcceptSession,
        MessageType::DeclineSession,
        MessageType::Offer,
        MessageType::Counter,
        MessageType::Accept,
        MessageType::Reject,
        MessageType::Inquire,
        MessageType::Constrain,
        MessageType::Signal,
        MessageType::Withdraw,
        MessageType::ProposeMediator,
        MessageType::Resolve,
        MessageType::Commit,
    ];

    /// The wire name (`negotiate.offer`).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::Open => "negotiate.open",
            MessageType::AcceptSession => "negotiate.accept_session",
            MessageType::DeclineSession => "negotiate.decline_session",
            MessageType::Offer => "negotiate.offer",
            MessageType::Counter => "negotiate.counter",
            MessageType::Accept => "negotiate.accept",
            MessageType::Reject => "negotiate.reject",
            MessageType::Inquire => "negotiate.inquire",
            MessageType::Constrain => "negotiate.constrain",
            MessageType::Signal => "negotiate.signal",
            MessageType::Withdraw => "negotiate.withdraw",
            MessageType::ProposeMediator => "negotiate.propose_mediator",
            MessageType::Resolve => "negotiate.resolve",
            MessageType::Commit => "negotiate.commit",
        }
    }

    /// The type a wire name denotes.
    pub fn parse(name: &str) -> Option<MessageType> {
        MessageType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// A sending or receiving agent (`from`, `to[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// The agent's id, the key into a transcript's `keys`.
    pub agent_id: String,
    /// The principal it acts for, when stated.
    pub principal_id: Option<String>,
}

/// Timing parameters of §5.3, negotiable in `negotiate.open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Maximum session duration in seconds (default 24 hours).
    pub session_ttl: u64,
    /// Maximum time to answer an offer in seconds (default 1 hour).
    pub offer_ttl: u64,
    /// Maximum offer/counter exchanges (default 20).
    pub max_rounds: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            session_ttl: 86_400,
            offer_ttl: 3_600,
            max_rounds: 20,
        }
    }
}

/// The body of each message type.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// `negotiate.open`: the term space and the timing, defaults filled in.
    Open {
        /// Terms as proposed (term id → term object).
        terms: Map<String, Value>,
        /// Timing (§5.3).
        timing: Timing,
    },
    /// `negotiate.accept_session`.
    AcceptSession,
    /// `negotiate.decline_session`, with an optional reason (free text, data).
    DeclineSession {
        /// Why.
        reason: Option<String>,
    },
    /// `negotiate.offer`.
    Offer(Offer),
    /// `negotiate.counter`.
    Counter(Offer),
    /// `negotiate.accept`: which offer, when named, and the terms accepted, when restated.
    Accept {
        /// The accepted offer's `offer_id`.
        offer_id: Option<String>,
        /// The accepted terms, when the message restates them.
        accepted_terms: Option<Map<String, Value>>,
    },
    /// `negotiate.reject`.
    Reject {
        /// Why.
        reason: Option<String>,
    },
    /// `negotiate.inquire`: the terms asked about.
    Inquire {
        /// Term ids.
        term_ids: Vec<String>,
    },
    /// `negotiate.constrain`: the constraints declared.
    Constrain {
        /// As declared.
        constraints: Map<String, Value>,
    },
    /// `negotiate.signal`: preference signals (§3.4), advisory.
    Signal {
        /// As shared.
        signal: Map<String, Value>,
    },
    /// `negotiate.withdraw`.
    Withdraw {
        /// Why.
        reason: Option<String>,
        /// The session may go DORMANT and be reactivated.
        reactivatable: bool,
    },
    /// `negotiate.propose_mediator`.
    ProposeMediator {
        /// The mediator proposed.
        mediator_id: Option<String>,
    },
    /// `negotiate.resolve`: a mediator's proposal.
    Resolve {
        /// The terms proposed.
        terms: Map<String, Value>,
        /// The mechanism (§8: split, foa, tradeoff, …).
        mechanism: Option<String>,
    },
    /// `negotiate.commit`.
    Commit,
}

/// A typed Concordia message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Protocol version (semver).
    pub concordia: String,
    /// Its type.
    pub kind: MessageType,
    /// Unique message id.
    pub id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// When it was sent (explicit offset required).
    pub timestamp: OffsetDateTime,
    /// The sender.
    pub from: Party,
    /// The recipients, when not broadcast.
    pub to: Option<Vec<Party>>,
    /// The hash of the previous message (genesis for the first).
    pub prev_hash: String,
    /// The type-specific body.
    pub body: Body,
    /// The message it answers.
    pub in_reply_to: Option<String>,
    /// A sub-negotiation thread.
    pub thread: Option<String>,
    /// Seconds the message stays valid.
    pub ttl: Option<u64>,
    /// The agent's free-text rationale (data, never an instruction).
    pub reasoning: Option<String>,
    /// base64url Ed25519 signature over the rest.
    pub signature: String,
}

/// What is wrong with an envelope, naming the member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// Not a JSON object.
    #[error("the message is not a JSON object")]
    NotObject,
    /// A required member is absent.
    #[error("the required member {0:?} is missing")]
    Missing(&'static str),
    /// A member has the wrong type or form.
    #[error("{member:?} {why}")]
    Invalid {
        /// Which member (a JSON pointer for nested ones).
        member: String,
        /// What is wrong.
        why: String,
    },
    /// `type` is not one of §4.2's fourteen.
    #[error("{0:?} is not a Concordia message type")]
    UnknownType(String),
    /// The offer in the body is malformed.
    #[error("body: {0}")]
    Offer(#[from] OfferError),
}

fn invalid(member: &str, why: &str) -> EnvelopeError {
    EnvelopeError::Invalid {
        member: member.to_owned(),
        why: why.to_owned(),
    }
}

fn req_str<'a>(obj: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, EnvelopeError> {
    match obj.get(name) {
        None => Err(EnvelopeError::Missing(name)),
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(Value::String(_)) => Err(invalid(name, "is empty")),
        Some(_) => Err(invalid(name, "is not a string")),
    }
}

fn opt_str(obj: &Map<String, Value>, name: &str) -> Result<Option<String>, EnvelopeError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(name, "is not a string")),
    }
}

fn opt_obj(
    obj: &Map<String, Value>,
    name: &str,
) -> Result<Option<Map<String, Value>>, EnvelopeError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(_) => Err(invalid(&format!("body/{name}"), "is not an object")),
    }
}

fn party(value: &Value, member: &str) -> Result<Party, EnvelopeError> {
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(member, "is not an object"))?;
    let agent_id = match obj.get("agent_id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(invalid(
                &format!("{member}/agent_id"),
                "is missing or not a non-empty string",
            ))
        }
    };
    let principal_id = match obj.get("principal_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(invalid(
                &format!("{member}/principal_id"),
                "is not a string or null",
            ))
        }
    };
    Ok(Party {
        agent_id,
        principal_id,
    })
}

fn is_semver(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn timing(body: &Map<String, Value>) -> Result<Timing, EnvelopeError> {
    let mut t = Timing::default();
    let Some(value) = body.get("timing") else {
        return Ok(t);
    };
    let obj = value
        .as_object()
        .ok_or_else(|| invalid("body/timing", "is not an object"))?;
    for (name, slot) in [
        ("session_ttl", &mut t.session_ttl),
        ("offer_ttl", &mut t.offer_ttl),
        ("max_rounds", &mut t.max_rounds),
    ] {
        match obj.get(name) {
            None => {}
            Some(v) => {
                *slot = v.as_u64().ok_or_else(|| {
                    invalid(
                        &format!("body/timing/{name}"),
                        "is not a non-negative integer",
                    )
                })?
            }
        }
    }
    Ok(t)
}

impl Body {
    /// Reads the body of a message of type `kind`.
    pub fn parse(kind: MessageType, body: &Map<String, Value>) -> Result<Body, EnvelopeError> {
        Ok(match kind {
            MessageType::Open => Body::Open {
                terms: opt_obj(body, "terms")?.ok_or(EnvelopeError::Missing("body/terms"))?,
                timing: timing(body)?,
            },
            MessageType::AcceptSession => Body::AcceptSession,
            MessageType::DeclineSession => Body::DeclineSession {
                reason: opt_str(body, "reason")?,
            },
            MessageType::Offer => Body::Offer(Offer::parse(body)?),
            MessageType::Counter => Body::Counter(Offer::parse(body)?),
            MessageType::Accept => Body::Accept {
                offer_id: opt_str(body, "offer_id")?,
                accepted_terms: opt_obj(body, "accepted_terms")?,
            },
            MessageType::Reject => Body::Reject {
                reason: opt_str(body, "reason")?,
            },
            MessageType::Inquire => Body::Inquire {
                term_ids: match body.get("term_ids") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|i| {
                            i.as_str()
                                .map(str::to_owned)
                                .ok_or_else(|| invalid("body/term_ids", "holds a non-string"))
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(invalid("body/term_ids", "is not an array")),
                },
            },
            MessageType::Constrain => Body::Constrain {
                constraints: opt_obj(body, "constraints")?.unwrap_or_default(),
            },
            MessageType::Signal => Body::Signal {
                signal: body.clone(),
            },
            MessageType::Withdraw => Body::Withdraw {
                reason: opt_str(body, "reason")?,
                reactivatable: match body.get("reactivatable") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(invalid("body/reactivatable", "is not a boolean")),
                },
            },
            MessageType::ProposeMediator => Body::ProposeMediator {
                mediator_id: opt_str(body, "mediator_id")?,
            },
            MessageType::Resolve => Body::Resolve {
                terms: opt_obj(body, "terms")?.unwrap_or_default(),
                mechanism: opt_str(body, "mechanism")?,
            },
            MessageType::Commit => Body::Commit,
        })
    }
}

impl Message {
    /// Reads a message from the JSON it arrived as, checking every member
    /// §4.1 names.
    pub fn from_value(value: &Value) -> Result<Message, EnvelopeError> {
        let obj = value.as_object().ok_or(EnvelopeError::NotObject)?;
        let concordia = req_str(obj, "concordia")?;
        if !is_semver(concordia) {
            return Err(invalid("concordia", "is not a semver version (like 0.1.0)"));
        }
        let type_name = req_str(obj, "type")?;
        let kind = MessageType::parse(type_name)
            .ok_or_else(|| EnvelopeError::UnknownType(type_name.to_owned()))?;
        let id = req_str(obj, "id")?.to_owned();
        let session_id = req_str(obj, "session_id")?.to_owned();
        let timestamp = datetime::parse(req_str(obj, "timestamp")?)
            .map_err(|e| invalid("timestamp", &e.to_string()))?;
        let from = party(
            obj.get("from").ok_or(EnvelopeError::Missing("from"))?,
            "from",
        )?;
        let to = match obj.get("to") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, p)| party(p, &format!("to/{i}")))
                    .collect::<Result<_, _>>()?,
            ),
            Some(_) => return Err(invalid("to", "is not an array")),
        };
        let prev_hash = req_str(obj, "prev_hash")?.to_owned();
        let body_obj = match obj.get("body") {
            Some(Value::Object(m)) => m,
            Some(_) => return Err(invalid("body", "is not an object")),
            None => return Err(EnvelopeError::Missing("body")),
        };
        let body = Body::parse(kind, body_obj)?;
        let ttl = match obj.get("ttl") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| invalid("ttl", "is not a non-negative integer"))?,
            ),
        };
        Ok(Message {
            concordia: concordia.to_owned(),
            kind,
            id,
            session_id,
            timestamp,
            from,
            to,
            prev_hash,
            body,
            in_reply_to: opt_str(obj, "in_reply_to")?,
            thread: opt_str(obj, "thread")?,
            ttl,
            reasoning: opt_str(obj, "reasoning")?,
            signature: req_str(obj, "signature")?.to_owned(),
        })
    }

    /// The offer this message carries (`negotiate.offer` or `.counter`).
    pub fn offer(&self) -> Option<&Offer> {
        match &self.body {
            Body::Offer(o) | Body::Counter(o) => Some(o),
            _ => None,
        }
    }
}
