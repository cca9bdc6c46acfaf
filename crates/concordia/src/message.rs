//! The envelope of SPEC §4.1 and the fourteen message types of §4.2, typed.
//!
//! A [`Message`] is read from the JSON value it arrived as; the value itself
//! is what is hashed and signed (see [`crate::transcript`]), the typed form is
//! what the rest of the crate reasons about. Unknown members are tolerated
//! (forward compatibility) but every member the spec names must have its type.

use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::json::{Json, Object};
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

// The rules: what each member must be, checked over any JSON view, in the
// order the errors are reported. Building the owned types afterwards reads
// the same members and refuses nothing.

fn req_str<'v, O: Object + ?Sized>(
    obj: &'v O,
    name: &'static str,
) -> Result<&'v str, EnvelopeError> {
    match obj.get(name) {
        None => Err(EnvelopeError::Missing(name)),
        Some(v) => match v.as_str() {
            Some("") => Err(invalid(name, "is empty")),
            Some(s) => Ok(s),
            None => Err(invalid(name, "is not a string")),
        },
    }
}

fn opt_str<'v, O: Object + ?Sized>(
    obj: &'v O,
    name: &str,
) -> Result<Option<&'v str>, EnvelopeError> {
    match obj.get(name) {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| invalid(name, "is not a string")),
    }
}

fn opt_obj<'v, O: Object + ?Sized>(obj: &'v O, name: &str) -> Result<Option<&'v O>, EnvelopeError> {
    match obj.get(name) {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_object()
            .map(Some)
            .ok_or_else(|| invalid(&format!("body/{name}"), "is not an object")),
    }
}

/// A party, borrowed from what it was read from.
pub(crate) struct PartyRef<'v> {
    pub agent_id: &'v str,
    pub principal_id: Option<&'v str>,
}

/// A party object: `from`, or recipient `index` of `to` (the member's name
/// is only written out for an error).
fn party<'v, J: Json>(
    value: &'v J,
    member: &str,
    index: Option<usize>,
) -> Result<PartyRef<'v>, EnvelopeError> {
    let name = |field: &str| {
        let at = index.map(|i| format!("/{i}")).unwrap_or_default();
        let field = if field.is_empty() {
            String::new()
        } else {
            format!("/{field}")
        };
        format!("{member}{at}{field}")
    };
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(&name(""), "is not an object"))?;
    let agent_id = match obj.get("agent_id").and_then(Json::as_str) {
        Some(s) if !s.is_empty() => s,
        _ => {
            return Err(invalid(
                &name("agent_id"),
                "is missing or not a non-empty string",
            ))
        }
    };
    let principal_id = match obj.get("principal_id") {
        None => None,
        Some(v) if v.is_null() => None,
        Some(v) => Some(
            v.as_str()
                .ok_or_else(|| invalid(&name("principal_id"), "is not a string or null"))?,
        ),
    };
    Ok(PartyRef {
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

fn timing<O: Object + ?Sized>(body: &O) -> Result<Timing, EnvelopeError> {
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
        if let Some(v) = obj.get(name) {
            *slot = v.as_u64().ok_or_else(|| {
                invalid(
                    &format!("body/timing/{name}"),
                    "is not a non-negative integer",
                )
            })?
        }
    }
    Ok(t)
}

/// What the state machine needs of a body, once it is checked.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BodyFacts<'v> {
    /// The timing an open sets, defaults filled in.
    pub timing: Option<Timing>,
    /// An offer's `valid_until`, as sent.
    pub valid_until: Option<&'v str>,
    /// A withdraw flagged reactivatable.
    pub reactivatable: bool,
}

/// The rules of the body of a message of type `kind`.
fn check_body<O: Object + ?Sized>(
    kind: MessageType,
    body: &O,
) -> Result<BodyFacts<'_>, EnvelopeError> {
    let mut facts = BodyFacts::default();
    match kind {
        MessageType::Open => {
            opt_obj(body, "terms")?.ok_or(EnvelopeError::Missing("body/terms"))?;
            facts.timing = Some(timing(body)?);
        }
        MessageType::AcceptSession | MessageType::Signal | MessageType::Commit => {}
        MessageType::DeclineSession | MessageType::Reject => {
            opt_str(body, "reason")?;
        }
        MessageType::Offer | MessageType::Counter => {
            facts.valid_until = crate::offer::check(body)?.valid_until;
        }
        MessageType::Accept => {
            opt_str(body, "offer_id")?;
            opt_obj(body, "accepted_terms")?;
        }
        MessageType::Inquire => {
            if let Some(v) = body.get("term_ids") {
                let items = v
                    .as_array()
                    .ok_or_else(|| invalid("body/term_ids", "is not an array"))?;
                if items.iter().any(|i| i.as_str().is_none()) {
                    return Err(invalid("body/term_ids", "holds a non-string"));
                }
            }
        }
        MessageType::Constrain => {
            opt_obj(body, "constraints")?;
        }
        MessageType::Withdraw => {
            opt_str(body, "reason")?;
            if let Some(v) = body.get("reactivatable") {
                facts.reactivatable = v
                    .as_bool()
                    .ok_or_else(|| invalid("body/reactivatable", "is not a boolean"))?;
            }
        }
        MessageType::ProposeMediator => {
            opt_str(body, "mediator_id")?;
        }
        MessageType::Resolve => {
            opt_obj(body, "terms")?;
            opt_str(body, "mechanism")?;
        }
    }
    Ok(facts)
}

/// A message whose envelope passed every rule of §4.1, borrowed from what
/// it was read from: what transcript verification needs, without building
/// the typed [`Message`].
pub(crate) struct Checked<'v, O: ?Sized> {
    pub concordia: &'v str,
    pub kind: MessageType,
    pub id: &'v str,
    pub session_id: &'v str,
    pub timestamp: OffsetDateTime,
    pub from: PartyRef<'v>,
    pub to: Option<Vec<PartyRef<'v>>>,
    pub prev_hash: &'v str,
    pub body: &'v O,
    pub facts: BodyFacts<'v>,
    pub ttl: Option<u64>,
    pub in_reply_to: Option<&'v str>,
    pub thread: Option<&'v str>,
    pub reasoning: Option<&'v str>,
    pub signature: &'v str,
}

/// Checks every member §4.1 names, in order, the first failure reported.
pub(crate) fn check<J: Json>(value: &J) -> Result<Checked<'_, J::Object>, EnvelopeError> {
    let obj = value.as_object().ok_or(EnvelopeError::NotObject)?;
    let concordia = req_str(obj, "concordia")?;
    if !is_semver(concordia) {
        return Err(invalid("concordia", "is not a semver version (like 0.1.0)"));
    }
    let type_name = req_str(obj, "type")?;
    let kind = MessageType::parse(type_name)
        .ok_or_else(|| EnvelopeError::UnknownType(type_name.to_owned()))?;
    let id = req_str(obj, "id")?;
    let session_id = req_str(obj, "session_id")?;
    let timestamp = datetime::parse(req_str(obj, "timestamp")?)
        .map_err(|e| invalid("timestamp", &e.to_string()))?;
    let from = party(
        obj.get("from").ok_or(EnvelopeError::Missing("from"))?,
        "from",
        None,
    )?;
    let to = match obj.get("to") {
        None => None,
        Some(v) if v.is_null() => None,
        Some(v) => Some(
            v.as_array()
                .ok_or_else(|| invalid("to", "is not an array"))?
                .iter()
                .enumerate()
                .map(|(i, p)| party(p, "to", Some(i)))
                .collect::<Result<_, _>>()?,
        ),
    };
    let prev_hash = req_str(obj, "prev_hash")?;
    let body = match obj.get("body") {
        Some(v) => v
            .as_object()
            .ok_or_else(|| invalid("body", "is not an object"))?,
        None => return Err(EnvelopeError::Missing("body")),
    };
    let facts = check_body(kind, body)?;
    let ttl = match obj.get("ttl") {
        None => None,
        Some(v) if v.is_null() => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| invalid("ttl", "is not a non-negative integer"))?,
        ),
    };
    Ok(Checked {
        concordia,
        kind,
        id,
        session_id,
        timestamp,
        from,
        to,
        prev_hash,
        body,
        facts,
        ttl,
        in_reply_to: opt_str(obj, "in_reply_to")?,
        thread: opt_str(obj, "thread")?,
        reasoning: opt_str(obj, "reasoning")?,
        signature: req_str(obj, "signature")?,
    })
}

fn owned_str(body: &Map<String, Value>, name: &str) -> Option<String> {
    body.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn owned_obj(body: &Map<String, Value>, name: &str) -> Option<Map<String, Value>> {
    body.get(name).and_then(Value::as_object).cloned()
}

impl Body {
    /// Reads the body of a message of type `kind`.
    pub fn parse(kind: MessageType, body: &Map<String, Value>) -> Result<Body, EnvelopeError> {
        let facts = check_body(kind, body)?;
        Ok(Body::build(kind, body, &facts))
    }

    /// The typed body of one that passed [`check_body`].
    fn build(kind: MessageType, body: &Map<String, Value>, facts: &BodyFacts<'_>) -> Body {
        match kind {
            MessageType::Open => Body::Open {
                terms: owned_obj(body, "terms").unwrap_or_default(),
                timing: facts.timing.unwrap_or_default(),
            },
            MessageType::AcceptSession => Body::AcceptSession,
            MessageType::DeclineSession => Body::DeclineSession {
                reason: owned_str(body, "reason"),
            },
            MessageType::Offer => Body::Offer(Offer::build(body)),
            MessageType::Counter => Body::Counter(Offer::build(body)),
            MessageType::Accept => Body::Accept {
                offer_id: owned_str(body, "offer_id"),
                accepted_terms: owned_obj(body, "accepted_terms"),
            },
            MessageType::Reject => Body::Reject {
                reason: owned_str(body, "reason"),
            },
            MessageType::Inquire => Body::Inquire {
                term_ids: body
                    .get("term_ids")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect(),
            },
            MessageType::Constrain => Body::Constrain {
                constraints: owned_obj(body, "constraints").unwrap_or_default(),
            },
            MessageType::Signal => Body::Signal {
                signal: body.clone(),
            },
            MessageType::Withdraw => Body::Withdraw {
                reason: owned_str(body, "reason"),
                reactivatable: facts.reactivatable,
            },
            MessageType::ProposeMediator => Body::ProposeMediator {
                mediator_id: owned_str(body, "mediator_id"),
            },
            MessageType::Resolve => Body::Resolve {
                terms: owned_obj(body, "terms").unwrap_or_default(),
                mechanism: owned_str(body, "mechanism"),
            },
            MessageType::Commit => Body::Commit,
        }
    }
}

fn owned_party(p: &PartyRef<'_>) -> Party {
    Party {
        agent_id: p.agent_id.to_owned(),
        principal_id: p.principal_id.map(str::to_owned),
    }
}

impl Message {
    /// Reads a message from the JSON it arrived as, checking every member
    /// §4.1 names.
    pub fn from_value(value: &Value) -> Result<Message, EnvelopeError> {
        let c = check(value)?;
        Ok(Message {
            concordia: c.concordia.to_owned(),
            kind: c.kind,
            id: c.id.to_owned(),
            session_id: c.session_id.to_owned(),
            timestamp: c.timestamp,
            from: owned_party(&c.from),
            to: c.to.as_ref().map(|to| to.iter().map(owned_party).collect()),
            prev_hash: c.prev_hash.to_owned(),
            body: Body::build(c.kind, c.body, &c.facts),
            in_reply_to: c.in_reply_to.map(str::to_owned),
            thread: c.thread.map(str::to_owned),
            ttl: c.ttl,
            reasoning: c.reasoning.map(str::to_owned),
            signature: c.signature.to_owned(),
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
