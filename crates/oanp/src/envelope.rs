//! Envelopes: `{type, message_id, sender {role}, payload, prev_hash}`, the
//! same on every transport (HTTPS, MCP tool calls, server-sent events).
//!
//! The developer page's table names ten message types (its text says nine);
//! each has the roles that may send it. [`Envelope::read`] is strict about the
//! frame (a known type, a sender allowed to send it, a message id, an object
//! payload, a `sha256:` link) and keeps fields it does not know. Payloads are
//! read on demand ([`Envelope::offer`], [`Envelope::evaluation`], …) into the
//! shapes the SDK reads; what the publisher leaves unsaid stays in `extra`.
//!
//! An envelope's hash is over the JSON as received ([`crate::chain`]), never
//! over this typed form.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::money::{Fraction, MinorUnits, Money};
use crate::receipt::{Attested, Rules, Terms};

/// Who sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The buyer's agent.
    Buyer,
    /// The merchant's agent.
    Merchant,
    /// The arbiter: never bids, scores every offer, signs the record.
    Arbiter,
}

impl Role {
    /// `buyer`, `merchant` or `arbiter`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Buyer => "buyer",
            Role::Merchant => "merchant",
            Role::Arbiter => "arbiter",
        }
    }
}

/// The message types of the developer page, in session order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MessageType {
    /// Buyer: opens the session (what is bought, open constraints, a hash of its ceiling).
    #[serde(rename = "session.open")]
    SessionOpen,
    /// Merchant: joins (a hash of its floor, its list price and inclusions).
    #[serde(rename = "session.ack")]
    SessionAck,
    /// Arbiter: fixes the rules and names its signing key.
    #[serde(rename = "session.accept")]
    SessionAccept,
    /// Buyer or merchant: an offer for a round.
    #[serde(rename = "offer.propose")]
    OfferPropose,
    /// The other party: an offer answering one, shaped like it.
    #[serde(rename = "offer.counter")]
    OfferCounter,
    /// Either party: takes the offer standing in a round.
    #[serde(rename = "offer.accept")]
    OfferAccept,
    /// Arbiter: its verdict and score on an offer, with a suggested price.
    #[serde(rename = "arbitration.evaluate")]
    ArbitrationEvaluate,
    /// Arbiter: refuses an offer, naming the broken invariant and a price to retry at.
    #[serde(rename = "arbitration.reject")]
    ArbitrationReject,
    /// Arbiter: the agreed terms with its signed artifact.
    #[serde(rename = "session.agree")]
    SessionAgree,
    /// Arbiter: ends the session without a deal, with the reason.
    #[serde(rename = "session.close")]
    SessionClose,
}

impl MessageType {
    /// Every type, in session order.
    pub const ALL: [MessageType; 10] = [
        MessageType::SessionOpen,
        MessageType::SessionAck,
        MessageType::SessionAccept,
        MessageType::OfferPropose,
        MessageType::OfferCounter,
        MessageType::OfferAccept,
        MessageType::ArbitrationEvaluate,
        MessageType::ArbitrationReject,
        MessageType::SessionAgree,
        MessageType::SessionClose,
    ];

    /// The type as written on the wire (`offer.propose`).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::SessionOpen => "session.open",
            MessageType::SessionAck => "session.ack",
            MessageType::SessionAccept => "session.accept",
            MessageType::OfferPropose => "offer.propose",
            MessageType::OfferCounter => "offer.counter",
            MessageType::OfferAccept => "offer.accept",
            MessageType::ArbitrationEvaluate => "arbitration.evaluate",
            MessageType::ArbitrationReject => "arbitration.reject",
            MessageType::SessionAgree => "session.agree",
            MessageType::SessionClose => "session.close",
        }
    }

    /// The type written `text`, when it is one of the page's.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// Who may send it, as the page's table says.
    pub fn senders(self) -> &'static [Role] {
        match self {
            MessageType::SessionOpen => &[Role::Buyer],
            MessageType::SessionAck => &[Role::Merchant],
            MessageType::OfferPropose | MessageType::OfferCounter | MessageType::OfferAccept => {
                &[Role::Buyer, Role::Merchant]
            }
            MessageType::SessionAccept
            | MessageType::ArbitrationEvaluate
            | MessageType::ArbitrationReject
            | MessageType::SessionAgree
            | MessageType::SessionClose => &[Role::Arbiter],
        }
    }
}

/// Fields not known here, kept as written.
pub type Extra = BTreeMap<String, Value>;

/// The sender of an envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sender {
    /// Its role.
    pub role: Role,
    /// Fields not known here (an agent id, say).
    #[serde(flatten)]
    pub extra: Extra,
}

/// One envelope, its frame checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    /// The message type.
    #[serde(rename = "type")]
    pub kind: MessageType,
    /// Its id: a duplicate is processed once; a retry reuses the id.
    pub message_id: String,
    /// Who sent it.
    pub sender: Sender,
    /// What it carries (read with the typed accessors).
    pub payload: Map<String, Value>,
    /// The hash of the envelope before it (`sha256:<hex>`), absent on the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev_hash: Option<String>,
    /// Fields not known here (a session id, a timestamp).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Why an envelope's frame or payload cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// Not a JSON object.
    #[error("an envelope is a JSON object")]
    NotAnObject,
    /// `type` is missing or not one of the page's message types.
    #[error("the envelope's type {0} is not an OANP message type")]
    UnknownType(String),
    /// `message_id` is missing, empty or not a string.
    #[error("the envelope has no message_id (a non-empty string)")]
    NoMessageId,
    /// `sender.role` is missing or not buyer, merchant or arbiter.
    #[error("the envelope's sender has no role (buyer, merchant or arbiter)")]
    NoSender,
    /// The role may not send this type.
    #[error("{kind} comes from {allowed}, not from the {role}")]
    WrongSender {
        /// The type.
        kind: &'static str,
        /// Who may send it (`the buyer or the merchant`).
        allowed: String,
        /// The role that sent it.
        role: &'static str,
    },
    /// `payload` is missing or not an object.
    #[error("the envelope's payload is not an object")]
    NoPayload,
    /// `prev_hash` is present but not `sha256:` and 64 lowercase hex digits.
    #[error("the envelope's prev_hash {0} is not sha256: and 64 lowercase hex digits")]
    BadPrevHash(String),
    /// The payload does not have the shape its type carries.
    #[error("the {kind} payload cannot be read: {reason}")]
    Payload {
        /// The type.
        kind: &'static str,
        /// Why, as the reader says.
        reason: String,
    },
    /// A payload accessor was asked of another type.
    #[error("a {found} envelope does not carry that payload")]
    OtherType {
        /// The envelope's type.
        found: &'static str,
    },
}

/// True for `sha256:` and 64 lowercase hex digits.
pub fn is_hash(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

const FRAME: [&str; 5] = ["type", "message_id", "sender", "payload", "prev_hash"];

impl Envelope {
    /// Reads an envelope's frame, strictly; the payload stays as received.
    pub fn read(raw: &Value) -> Result<Self, EnvelopeError> {
        let e = raw.as_object().ok_or(EnvelopeError::NotAnObject)?;
        let kind = match e.get("type") {
            Some(Value::String(t)) => {
                MessageType::parse(t).ok_or_else(|| EnvelopeError::UnknownType(format!("{t:?}")))
            }
            Some(other) => Err(EnvelopeError::UnknownType(other.to_string())),
            None => Err(EnvelopeError::UnknownType("(none)".to_owned())),
        }?;
        let message_id = e
            .get("message_id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .ok_or(EnvelopeError::NoMessageId)?
            .to_owned();
        let sender: Sender = e
            .get("sender")
            .and_then(|s| Sender::deserialize(s).ok())
            .ok_or(EnvelopeError::NoSender)?;
        if !kind.senders().contains(&sender.role) {
            let allowed: Vec<String> = kind
                .senders()
                .iter()
                .map(|r| format!("the {}", r.as_str()))
                .collect();
            return Err(EnvelopeError::WrongSender {
                kind: kind.as_str(),
                allowed: allowed.join(" or "),
                role: sender.role.as_str(),
            });
        }
        let payload = e
            .get("payload")
            .and_then(Value::as_object)
            .ok_or(EnvelopeError::NoPayload)?
            .clone();
        let prev_hash = match e.get("prev_hash") {
            None | Some(Value::Null) => None,
            Some(Value::String(h)) if is_hash(h) => Some(h.clone()),
            Some(other) => return Err(EnvelopeError::BadPrevHash(other.to_string())),
        };
        let extra = e
            .iter()
            .filter(|(k, _)| !FRAME.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Self {
            kind,
            message_id,
            sender,
            payload,
            prev_hash,
            extra,
        })
    }

    /// The envelope as JSON, to hash and send (no `prev_hash` on the first).
    pub fn to_value(&self) -> Value {
        // Every part is plain JSON with string keys: serialising cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn payload_as<T: DeserializeOwned>(&self, kinds: &[MessageType]) -> Result<T, EnvelopeError> {
        if !kinds.contains(&self.kind) {
            return Err(EnvelopeError::OtherType {
                found: self.kind.as_str(),
            });
        }
        T::deserialize(Value::Object(self.payload.clone())).map_err(|e| EnvelopeError::Payload {
            kind: self.kind.as_str(),
            reason: e.to_string(),
        })
    }

    /// The offer of an `offer.propose` or `offer.counter`.
    pub fn offer(&self) -> Result<OfferPayload, EnvelopeError> {
        self.payload_as(&[MessageType::OfferPropose, MessageType::OfferCounter])
    }

    /// What an `offer.accept` accepts.
    pub fn acceptance(&self) -> Result<AcceptPayload, EnvelopeError> {
        self.payload_as(&[MessageType::OfferAccept])
    }

    /// The arbiter's score of an offer (`arbitration.evaluate`) or its refusal
    /// (`arbitration.reject`).
    pub fn evaluation(&self) -> Result<EvaluationPayload, EnvelopeError> {
        self.payload_as(&[
            MessageType::ArbitrationEvaluate,
            MessageType::ArbitrationReject,
        ])
    }

    /// The rules of a `session.accept`.
    pub fn session_rules(&self) -> Result<SessionAcceptPayload, EnvelopeError> {
        self.payload_as(&[MessageType::SessionAccept])
    }

    /// The final terms of a `session.agree`.
    pub fn agreement(&self) -> Result<AgreePayload, EnvelopeError> {
        self.payload_as(&[MessageType::SessionAgree])
    }

    /// Why a `session.close` closed.
    pub fn closing(&self) -> Result<ClosePayload, EnvelopeError> {
        self.payload_as(&[MessageType::SessionClose])
    }
}

/// An offer (`offer.propose`, `offer.counter`): round, terms, expiry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferPayload {
    /// The round.
    #[serde(default)]
    pub round: Option<u32>,
    /// The price and inclusions offered.
    pub terms: Terms,
    /// Fields not known here (the expiry, a justification).
    #[serde(flatten)]
    pub extra: Extra,
}

/// An acceptance (`offer.accept`): the round accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceptPayload {
    /// The round being accepted.
    #[serde(default)]
    pub round: Option<u32>,
    /// The terms, when repeated (they must equal the offer accepted).
    #[serde(default)]
    pub terms: Option<Terms>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The arbiter's score (`arbitration.evaluate`) or refusal (`arbitration.reject`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationPayload {
    /// `fair`, `unfair_to_buyer` or `unfair_to_merchant`.
    #[serde(default)]
    pub verdict: Option<String>,
    /// The fairness score.
    #[serde(default)]
    pub fairness_score: Option<Fraction>,
    /// The perceived value of the offer's inclusions.
    #[serde(default)]
    pub w_minor: Option<MinorUnits>,
    /// The price at which the scored cost meets the target.
    #[serde(default)]
    pub suggested_adjustment: Option<Money>,
    /// Why an offer was refused (`arbitration.reject`).
    #[serde(default)]
    pub reason: Option<String>,
    /// The invariant it broke (`arbitration.reject`).
    #[serde(default)]
    pub invariant: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The session rules (`session.accept`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionAcceptPayload {
    /// The rules.
    #[serde(default)]
    pub session_rules: Option<Rules>,
    /// The reference inputs.
    #[serde(default)]
    pub attested: Option<Attested>,
    /// Fields not known here (both commitments, the arbiter's key id).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The agreement (`session.agree`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreePayload {
    /// The final terms.
    #[serde(default)]
    pub final_terms: Option<Terms>,
    /// Fields not known here (the artifact, the settlement step).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Why a session closed (`session.close`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosePayload {
    /// The reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// More detail.
    #[serde(default)]
    pub detail: Option<String>,
    /// Fields not known here.
    #[serde(flatten)]
    pub extra: Extra,
}
