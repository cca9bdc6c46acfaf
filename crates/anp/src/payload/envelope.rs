//! The mandate envelope (SPEC §5.1, `schemas/envelope.schema.json`) and the
//! `session_open` payload that carries the vendor's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::check::{field, Checker, PayloadError};
use super::limits::*;

/// What an agent may do, declared by each side at session open. A
/// declaration, not an enforcement: it makes overreach provable from the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct Envelope {
    /// The organization the agent speaks for.
    pub party: String,
    /// The agent, declared as AI.
    pub agent: EnvelopeAgent,
    /// Topics the agent may discuss (1 to 20).
    pub may_discuss: Vec<String>,
    /// What the agent may disclose (up to 20).
    pub may_disclose: Vec<String>,
    /// What the agent will not disclose (up to 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub will_not_disclose: Option<Vec<String>>,
    /// The authority the agent carries.
    pub offer_authority: OfferAuthority,
    /// A person to reach (up to 320 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_contact: Option<String>,
}

/// The agent block of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeAgent {
    /// The agent's display name.
    pub name: String,
    /// Always true: ANP has no undeclared bots.
    pub declared_ai: bool,
}

/// SPEC §5.1: how far an agent's word binds. v0.1 has no level that binds
/// without a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OfferAuthority {
    /// May not make offers.
    None,
    /// May propose; nothing binds.
    ProposeOnly,
    /// Binds only once a human approves: every formal offer stops for a person.
    BindWithHumanApproval,
}

impl OfferAuthority {
    /// The wire names, in schema order.
    pub const NAMES: [&'static str; 3] = ["none", "propose_only", "bind_with_human_approval"];

    fn from_name(name: &str) -> Option<OfferAuthority> {
        match name {
            "none" => Some(OfferAuthority::None),
            "propose_only" => Some(OfferAuthority::ProposeOnly),
            "bind_with_human_approval" => Some(OfferAuthority::BindWithHumanApproval),
            _ => None,
        }
    }
}

impl Envelope {
    /// Reads an envelope, enforcing every rule of the schema.
    pub fn parse(value: &Value) -> Result<Envelope, PayloadError> {
        let mut c = Checker::new();
        let envelope = read_envelope(&mut c, "", value);
        c.finish()?;
        envelope.ok_or_else(|| Checker::incomplete(""))
    }

    /// The envelope as the JSON it travels as.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl TryFrom<Value> for Envelope {
    type Error = PayloadError;

    fn try_from(value: Value) -> Result<Envelope, PayloadError> {
        Envelope::parse(&value)
    }
}

fn topics(c: &mut Checker, path: &str, value: &Value, min: usize) -> Option<Vec<String>> {
    c.array(path, value, min, MAX_TOPICS, |c, p, item| {
        c.string(p, item, 1, MAX_TOPIC_LEN)
    })
}

pub(crate) fn read_envelope(c: &mut Checker, path: &str, value: &Value) -> Option<Envelope> {
    let map = c.object(
        path,
        value,
        &[
            "party",
            "agent",
            "may_discuss",
            "may_disclose",
            "offer_authority",
        ],
        &["will_not_disclose", "human_contact"],
    )?;
    let at = |key: &str| field(path, key);
    let party = map
        .get("party")
        .and_then(|v| c.string(&at("party"), v, 1, MAX_NAME_LEN));
    let agent = map.get("agent").and_then(|v| {
        let agent_path = at("agent");
        let agent = c.object(&agent_path, v, &["name", "declared_ai"], &[])?;
        let name = agent
            .get("name")
            .and_then(|v| c.string(&field(&agent_path, "name"), v, 1, MAX_NAME_LEN));
        let declared_ai = agent.get("declared_ai").and_then(|v| {
            if v == &Value::Bool(true) {
                Some(true)
            } else {
                c.fail(
                    &field(&agent_path, "declared_ai"),
                    "must be true (ANP has no undeclared bots)",
                );
                None
            }
        });
        Some(EnvelopeAgent {
            name: name?,
            declared_ai: declared_ai?,
        })
    });
    let may_discuss = map
        .get("may_discuss")
        .and_then(|v| topics(c, &at("may_discuss"), v, 1));
    let may_disclose = map
        .get("may_disclose")
        .and_then(|v| topics(c, &at("may_disclose"), v, 0));
    let will_not_disclose = map
        .get("will_not_disclose")
        .map(|v| topics(c, &at("will_not_disclose"), v, 0));
    let offer_authority = map
        .get("offer_authority")
        .and_then(|v| c.one_of(&at("offer_authority"), v, &OfferAuthority::NAMES))
        .and_then(|name| OfferAuthority::from_name(&name));
    let human_contact = map
        .get("human_contact")
        .map(|v| c.string(&at("human_contact"), v, 0, MAX_CONTACT_LEN));
    Some(Envelope {
        party: party?,
        agent: agent?,
        may_discuss: may_discuss?,
        may_disclose: may_disclose?,
        will_not_disclose: will_not_disclose.map_or(Some(None), |t| t.map(Some))?,
        offer_authority: offer_authority?,
        human_contact: human_contact.map_or(Some(None), |t| t.map(Some))?,
    })
}
