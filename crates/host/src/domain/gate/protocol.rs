//! The protocols the gate speaks, as one small table: every place the host
//! needs a protocol's rule asks [`GateProtocol`], and the only `match` on
//! the protocol is here: Concordia (`crates/concordia`), OANP
//! (`crates/oanp`) and plain terms (`crates/plain`), each in its own module.

use std::collections::BTreeMap;

use approval_receipt::receipt::Amount;
use serde_json::Value;
use time::OffsetDateTime;

use super::{concordia, oanp, plain};
use crate::domain::{DomainError, Head};

/// A protocol whose transcripts the gate mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateProtocol {
    /// Concordia (signed, hash-chained envelopes), verified by `crates/concordia`.
    Concordia,
    /// OANP (hash-chained, unsigned envelopes before an arbiter), verified by `crates/oanp`.
    Oanp,
    /// Plain terms (entries the host writes and signs), read by `crates/plain`.
    Plain,
}

/// A transcript as stored, and the batch that would extend it.
pub struct Transcript<'a> {
    /// The session id every message must carry.
    pub session_id: &'a str,
    /// Party id → base64url key.
    pub keys: &'a BTreeMap<String, String>,
    /// The messages already stored (verified when they were).
    pub stored: &'a [Value],
    /// Their head.
    pub head: &'a Head,
}

/// What a verified batch leaves behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    /// The new head.
    pub head: Head,
    /// The transcript's state after it, in the protocol's words.
    pub state: String,
    /// Each new message's hash, in order.
    pub hashes: Vec<String>,
}

/// The message a request awaits a decision on, as the protocol reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Awaited {
    /// Its message type (`negotiate.counter`).
    pub kind: String,
    /// The amount the offer names, when it names one exactly.
    pub amount: Option<Amount>,
    /// When the offer stops standing on its own terms, if it says.
    pub expires: Option<OffsetDateTime>,
    /// The SKUs its terms name (a `sku` term or member), for the policy of
    /// authority's `sku` rules.
    pub skus: Vec<String>,
    /// The categories its terms name (a `category` term or member), for
    /// the policy of authority's `category` rules.
    pub categories: Vec<String>,
}

/// The text values of a term or member (`"hardware"`, or a list of them):
/// what a `sku` or `category` names. Anything else names nothing.
pub fn named(value: Option<&serde_json::Value>) -> Vec<String> {
    match value {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_owned()],
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

impl GateProtocol {
    /// The protocol as a policy of authority names it.
    pub fn authority_protocol(self) -> ::authority::Protocol {
        match self {
            GateProtocol::Concordia => ::authority::Protocol::Concordia,
            GateProtocol::Oanp => ::authority::Protocol::Oanp,
            GateProtocol::Plain => ::authority::Protocol::Plain,
        }
    }

    /// Every protocol the gate speaks.
    pub const ALL: [GateProtocol; 3] = [
        GateProtocol::Concordia,
        GateProtocol::Oanp,
        GateProtocol::Plain,
    ];

    /// The protocol a `protocol` value names.
    pub fn parse(name: &str) -> Option<GateProtocol> {
        GateProtocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Its `protocol` value.
    pub fn name(self) -> &'static str {
        match self {
            GateProtocol::Concordia => countersign_host_api::protocol::CONCORDIA,
            GateProtocol::Oanp => countersign_host_api::protocol::OANP,
            GateProtocol::Plain => countersign_host_api::protocol::PLAIN,
        }
    }

    /// The head of an empty transcript.
    pub fn genesis(self) -> Head {
        match self {
            GateProtocol::Concordia => concordia::genesis(),
            GateProtocol::Oanp => oanp::genesis(),
            GateProtocol::Plain => plain::genesis(),
        }
    }

    /// A message's hash as the protocol chains it.
    pub fn message_hash(self, message: &Value) -> Option<String> {
        match self {
            GateProtocol::Concordia => concordia::hash(message),
            GateProtocol::Oanp => oanp::hash(message),
            GateProtocol::Plain => plain::hash(message),
        }
    }

    /// Checks the `keys` a session is created with.
    pub fn check_keys(self, keys: &BTreeMap<String, String>) -> Result<(), DomainError> {
        match self {
            GateProtocol::Concordia => concordia::check_keys(keys),
            GateProtocol::Oanp => oanp::check_keys(keys),
            GateProtocol::Plain => plain::check_keys(keys),
        }
    }

    /// Verifies `new` as the continuation of `transcript` (from genesis when
    /// nothing is stored): links, signatures, session id, state machine.
    pub fn extend(
        self,
        transcript: &Transcript<'_>,
        new: &[Value],
    ) -> Result<Extension, DomainError> {
        match self {
            GateProtocol::Concordia => concordia::extend(transcript, new),
            GateProtocol::Oanp => oanp::extend(transcript, new),
            GateProtocol::Plain => plain::extend(transcript, new),
        }
    }

    /// The message at `index` as the one a request awaits: it must be the
    /// counterparty's standing offer.
    pub fn awaited(
        self,
        messages: &[Value],
        index: usize,
        counterparty: &str,
    ) -> Result<Awaited, DomainError> {
        match self {
            GateProtocol::Concordia => concordia::awaited(messages, index, counterparty),
            GateProtocol::Oanp => oanp::awaited(messages, index, counterparty),
            GateProtocol::Plain => plain::awaited(messages, index, counterparty),
        }
    }

    /// Checks a person's counter terms in the protocol's own form.
    pub fn check_counter_terms(self, terms: &Value) -> Result<(), DomainError> {
        match self {
            GateProtocol::Concordia => concordia::check_counter_terms(terms),
            GateProtocol::Oanp => oanp::check_counter_terms(terms),
            GateProtocol::Plain => plain::check_counter_terms(terms),
        }
    }

    /// True when a session's `self` and `counterparty.id` are parties of its
    /// `keys` (the mirrored protocols); plain terms name only the host's key.
    pub fn parties_have_keys(self) -> bool {
        match self {
            GateProtocol::Concordia | GateProtocol::Oanp => true,
            GateProtocol::Plain => false,
        }
    }

    /// The `id` of the `approves` reference a receipt for this session carries.
    pub fn session_reference(self, session_id: &str) -> String {
        match self {
            GateProtocol::Concordia => format!("urn:concordia:session:{session_id}"),
            GateProtocol::Oanp => format!("urn:oanp:session:{session_id}"),
            GateProtocol::Plain => format!("urn:countersign:plain:{session_id}"),
        }
    }
}
