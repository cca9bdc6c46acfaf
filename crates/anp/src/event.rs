//! The event record and the log document (SPEC §4, §6.4), as they travel.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::canonical_hash;
use crate::keys::{self, SigningKey};
use crate::signed::{self, GENESIS_HASH, PROTOCOL};

/// Who appended an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The vendor's selling agent.
    VendorAgent,
    /// The buyer host and its agent (and its human approvers).
    Buyer,
}

impl Actor {
    /// The wire name, as hashed into `event_hash`.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::VendorAgent => "vendor_agent",
            Actor::Buyer => "buyer",
        }
    }

    /// The other side of the negotiation.
    pub fn other(self) -> Actor {
        match self {
            Actor::VendorAgent => Actor::Buyer,
            Actor::Buyer => Actor::VendorAgent,
        }
    }
}

/// The event kinds of SPEC §5, plus the RFC-001 draft `accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Event 1: protocol, agent identity, vendor envelope.
    SessionOpen,
    /// A mandate envelope.
    Envelope,
    /// A formal offer.
    Offer,
    /// An offer answering the latest offer.
    CounterOffer,
    /// Free text.
    Message,
    /// Declines the latest offer.
    Decline,
    /// Ends the session.
    SessionClose,
    /// RFC-001 draft: accepts one offer event by its hash.
    Accept,
}

impl EventKind {
    /// Every kind, in SPEC order.
    pub const ALL: [EventKind; 8] = [
        EventKind::SessionOpen,
        EventKind::Envelope,
        EventKind::Offer,
        EventKind::CounterOffer,
        EventKind::Message,
        EventKind::Decline,
        EventKind::SessionClose,
        EventKind::Accept,
    ];

    /// The wire name, as hashed and signed.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::SessionOpen => "session_open",
            EventKind::Envelope => "envelope",
            EventKind::Offer => "offer",
            EventKind::CounterOffer => "counter_offer",
            EventKind::Message => "message",
            EventKind::Decline => "decline",
            EventKind::SessionClose => "session_close",
            EventKind::Accept => "accept",
        }
    }

    /// Reads a wire name; `None` for anything not in the protocol.
    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// True for the kinds that carry an offer and need a decision.
    pub fn is_offer(self) -> bool {
        matches!(self, EventKind::Offer | EventKind::CounterOffer)
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a session log, exactly as on the wire (`event.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// 1-based, contiguous, assigned by the host.
    pub seq: u64,
    /// Who appended it.
    pub actor: Actor,
    /// What it is.
    pub kind: EventKind,
    /// The event body; its canonical JSON hashes to `payload_hash`.
    pub payload: Value,
    /// SHA-256 hex of the canonical JSON of `payload`.
    pub payload_hash: String,
    /// `event_hash` of the previous event, 64 zeros for seq 1.
    pub prev_hash: String,
    /// SHA-256 hex of the event hash preimage.
    pub event_hash: String,
    /// Authorship signature over `ANP/0.1\n<kind>\n<payload_hash>`, or null.
    #[serde(default)]
    pub signature: Option<String>,
    /// Fingerprint of the signing key, or null.
    #[serde(default)]
    pub signer: Option<String>,
    /// ISO 8601 time of the append.
    pub at: String,
}

/// A chain position: the event a verifier has seen last and trusts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainHead {
    /// The seq of the last verified event (0 for an empty log).
    pub seq: u64,
    /// Its `event_hash` (the genesis hash for an empty log).
    pub event_hash: String,
}

impl ChainHead {
    /// The position before the first event.
    pub fn genesis() -> ChainHead {
        ChainHead {
            seq: 0,
            event_hash: GENESIS_HASH.to_owned(),
        }
    }

    /// Reads the `SEQ:HASH` form used on command lines.
    pub fn parse_pin(text: &str) -> Option<ChainHead> {
        let (seq, hash) = text.split_once(':')?;
        let seq = seq.parse().ok()?;
        let valid = hash.len() == 64
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        valid.then(|| ChainHead {
            seq,
            event_hash: hash.to_owned(),
        })
    }
}

impl std::fmt::Display for ChainHead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.seq, self.event_hash)
    }
}

/// Builds the next event of a chain: the one way an appender computes hashes
/// and signs, so host, tests and tools agree byte for byte.
pub struct EventDraft<'a> {
    /// The session the event belongs to.
    pub session_id: &'a str,
    /// The head the event extends.
    pub prev: &'a ChainHead,
    /// Who appends it.
    pub actor: Actor,
    /// What it is.
    pub kind: EventKind,
    /// Its body.
    pub payload: Value,
    /// ISO 8601 append time.
    pub at: String,
}

impl EventDraft<'_> {
    /// Completes the event with the given authorship signature (already made
    /// by the submitter over `authorship_string`), or none.
    pub fn seal(self, signature: Option<String>, signer: Option<String>) -> Event {
        let payload_hash = canonical_hash(&self.payload);
        let seq = self.prev.seq + 1;
        let event_hash = signed::event_hash(
            self.session_id,
            seq,
            self.actor.as_str(),
            self.kind.as_str(),
            &payload_hash,
            &self.prev.event_hash,
            &self.at,
        );
        Event {
            seq,
            actor: self.actor,
            kind: self.kind,
            payload: self.payload,
            payload_hash,
            prev_hash: self.prev.event_hash.clone(),
            event_hash,
            signature,
            signer,
            at: self.at,
        }
    }

    /// Completes the event signed by `key` (the platform key, or a test's).
    pub fn seal_signed(self, key: &SigningKey) -> Event {
        let payload_hash = canonical_hash(&self.payload);
        let sig = keys::sign_b64(
            key,
            signed::authorship_string(self.kind.as_str(), &payload_hash).as_bytes(),
        );
        let fp = keys::fingerprint(&key.verifying_key());
        self.seal(Some(sig), Some(fp))
    }
}

/// A public key as a log document names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedKey {
    /// Raw Ed25519 public key, base64url.
    pub public_key: String,
    /// Its fingerprint.
    pub fingerprint: String,
}

/// The `keys` block of a log document: the keys its signatures verify with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogKeys {
    /// Free text for readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The vendor agent's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_agent: Option<PublishedKey>,
    /// The buyer host's platform key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<PublishedKey>,
}

/// The `session` block of a log document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Session id (UUID), hashed into every `event_hash`.
    pub id: String,
    /// True for sandbox sessions.
    #[serde(default)]
    pub sandbox: bool,
    /// `open`, `closed`, `accepted`.
    pub status: String,
    /// When the session opened.
    pub opened_at: String,
    /// When it closed, if it has.
    #[serde(default)]
    pub closed_at: Option<String>,
    /// Number of events in the whole log.
    pub event_count: u64,
    /// `event_hash` of the last event.
    pub chain_head: String,
}

/// The `chain` block: the host's own claim, which a verifier never trusts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainClaim {
    /// Whether the host says the chain verified.
    pub verified: bool,
    /// The head the host claims.
    pub head: String,
}

/// The verifiable log document of SPEC §6.4, as in the example session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogDocument {
    /// Always `ANP/0.1`.
    pub protocol: String,
    /// Which session and its state.
    pub session: SessionInfo,
    /// The host's verification claim.
    pub chain: ChainClaim,
    /// Keys to verify signatures with.
    #[serde(default)]
    pub keys: LogKeys,
    /// The events (all of them, or those after `?after=SEQ`).
    pub events: Vec<Event>,
}

impl LogDocument {
    /// True when the document speaks this crate's protocol version.
    pub fn is_anp_0_1(&self) -> bool {
        self.protocol == PROTOCOL
    }
}
