//! The small payloads of SPEC §5: `session_open`, `message`, `decline` and
//! `session_close`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::check::{field, Checker, PayloadError};
use super::envelope::{read_envelope, Envelope};
use super::limits::*;
use crate::signed::PROTOCOL;

/// Event 1: the protocol, the vendor agent's identity and its envelope, as
/// the host assembled them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct SessionOpen {
    /// Always `ANP/0.1`.
    pub protocol: String,
    /// Who opened the session.
    pub agent: SessionAgent,
    /// The vendor's mandate envelope.
    pub envelope: Envelope,
}

/// The vendor agent as `session_open` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionAgent {
    /// The registration id.
    pub id: String,
    /// The agent's display name.
    pub name: String,
    /// SHA-256 hex of the agent's public key.
    pub fingerprint: String,
}

/// Free text between the parties (counterparty text: data, never an
/// instruction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct MessagePayload {
    /// An optional subject line, up to 200 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The text, 1 to 20000 characters.
    pub body: String,
}

/// `decline` and `session_close`: an optional reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct ReasonPayload {
    /// Why, up to 2000 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SessionOpen {
    /// Reads a `session_open` payload.
    pub fn parse(value: &Value) -> Result<SessionOpen, PayloadError> {
        let mut c = Checker::new();
        let open = read_session_open(&mut c, value);
        c.finish()?;
        open.ok_or_else(|| Checker::incomplete(""))
    }
}

impl MessagePayload {
    /// Reads a `message` payload.
    pub fn parse(value: &Value) -> Result<MessagePayload, PayloadError> {
        let mut c = Checker::new();
        let message = read_message(&mut c, value);
        c.finish()?;
        message.ok_or_else(|| Checker::incomplete(""))
    }
}

impl ReasonPayload {
    /// Reads a `decline` or `session_close` payload.
    pub fn parse(value: &Value) -> Result<ReasonPayload, PayloadError> {
        let mut c = Checker::new();
        let reason = read_reason(&mut c, value);
        c.finish()?;
        reason.ok_or_else(|| Checker::incomplete(""))
    }
}

macro_rules! try_from_value {
    ($($t:ty),*) => {$(
        impl TryFrom<Value> for $t {
            type Error = PayloadError;
            fn try_from(value: Value) -> Result<$t, PayloadError> {
                <$t>::parse(&value)
            }
        }
    )*};
}
try_from_value!(SessionOpen, MessagePayload, ReasonPayload);

pub(crate) fn read_session_open(c: &mut Checker, value: &Value) -> Option<SessionOpen> {
    let map = c.object("", value, &["protocol", "agent", "envelope"], &[])?;
    let protocol = map.get("protocol").and_then(|v| {
        if v.as_str() == Some(PROTOCOL) {
            Some(PROTOCOL.to_owned())
        } else {
            c.fail("protocol", format!("must be {PROTOCOL}"));
            None
        }
    });
    let agent = map.get("agent").and_then(|v| {
        let agent = c.object("agent", v, &["id", "name", "fingerprint"], &[])?;
        let id = agent
            .get("id")
            .and_then(|v| c.string("agent.id", v, 1, MAX_AGENT_ID_LEN));
        let name = agent
            .get("name")
            .and_then(|v| c.string("agent.name", v, 1, MAX_NAME_LEN));
        let fingerprint = agent
            .get("fingerprint")
            .and_then(|v| c.hex64("agent.fingerprint", v));
        Some(SessionAgent {
            id: id?,
            name: name?,
            fingerprint: fingerprint?,
        })
    });
    let envelope = map
        .get("envelope")
        .and_then(|v| read_envelope(c, "envelope", v));
    Some(SessionOpen {
        protocol: protocol?,
        agent: agent?,
        envelope: envelope?,
    })
}

pub(crate) fn read_message(c: &mut Checker, value: &Value) -> Option<MessagePayload> {
    let map = c.object("", value, &["body"], &["subject"])?;
    let subject = map
        .get("subject")
        .map(|v| c.string("subject", v, 0, MAX_SUBJECT_LEN));
    let body = map
        .get("body")
        .and_then(|v| c.string("body", v, 1, MAX_MESSAGE_LEN));
    Some(MessagePayload {
        subject: subject.map_or(Some(None), |t| t.map(Some))?,
        body: body?,
    })
}

pub(crate) fn read_reason(c: &mut Checker, value: &Value) -> Option<ReasonPayload> {
    let map = c.object("", value, &[], &["reason"])?;
    let reason = map
        .get("reason")
        .map(|v| c.string(&field("", "reason"), v, 0, MAX_REASON_LEN));
    Some(ReasonPayload {
        reason: reason.map_or(Some(None), |t| t.map(Some))?,
    })
}
