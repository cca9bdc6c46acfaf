//! Strict, typed payloads for every event kind (SPEC §5, the schemas, and the
//! RFC-001/002 draft `accept`).
//!
//! Every parser reads the whole value, rejects unknown keys at every depth,
//! enforces every limit, and reports *every* violation with its path
//! (`line_items[3].unit_price: must be at most 1000000000`). Typed values
//! serialize back to the JSON they were read from, so the canonical hash of a
//! payload survives a parse and re-serialization.
//!
//! Where SPEC and the schemas are silent, this module decides (see
//! [`limits`]): the length of reasons, subjects, agent ids and approval
//! fields; how many decimal places quantities and prices may carry (so money
//! stays exact in 28 digits); a ceiling on `total_annual`; and one currency per
//! offer. `accept` may carry `approvals`, our one documented addition for
//! multi-approver policies.

mod accept;
mod check;
mod envelope;
mod offer;
mod session;

use serde::Serialize;
use serde_json::Value;

pub use accept::{AcceptPayload, Approval, METHOD_HUMAN};
pub use check::{PayloadError, Violation, MAX_REPORTED_VIOLATIONS};
pub use envelope::{Envelope, EnvelopeAgent, OfferAuthority};
pub use offer::{LineItem, Offer};
pub use session::{MessagePayload, ReasonPayload, SessionAgent, SessionOpen};

use crate::event::EventKind;

/// The limits every payload is held to: SPEC §5 and the schemas, plus the
/// ones this implementation picks where they are silent (marked "ours").
pub mod limits {
    /// Line items per offer (schema).
    pub const MAX_LINE_ITEMS: usize = 200;
    /// Largest quantity (schema); quantities must also be greater than 0.
    pub const MAX_QUANTITY: f64 = 10_000_000.0;
    /// Largest unit price (schema); prices must also be at least 0.
    pub const MAX_UNIT_PRICE: f64 = 1_000_000_000.0;
    /// Ours: largest `total_annual`, the most 200 lines can add up to
    /// (200 × 10^7 × 10^9). The schema has no ceiling; exact money needs one.
    pub const MAX_TOTAL: f64 = 2_000_000_000_000_000_000.0;
    /// Ours: decimal places of a quantity (`1.5` TB, not `1.00000001`).
    pub const MAX_QUANTITY_PLACES: u32 = 4;
    /// Ours: decimal places of a unit price (`0.000016` per GB-second).
    pub const MAX_UNIT_PRICE_PLACES: u32 = 6;
    /// Ours: decimal places of `total_annual` (a sum of the products above).
    pub const MAX_TOTAL_PLACES: u32 = 10;
    /// Longest term, in months (schema; the shortest is 1).
    pub const MAX_TERM_MONTHS: i64 = 120;
    /// Conditions per offer (schema).
    pub const MAX_CONDITIONS: usize = 20;
    /// Longest condition, in characters (schema).
    pub const MAX_CONDITION_LEN: usize = 500;
    /// Longest `notes` of an offer or `note` of an accept (schema, RFC-001).
    pub const MAX_NOTES_LEN: usize = 4000;
    /// Longest SKU (schema).
    pub const MAX_SKU_LEN: usize = 80;
    /// Longest line description (schema).
    pub const MAX_DESCRIPTION_LEN: usize = 300;
    /// Longest unit (schema).
    pub const MAX_UNIT_LEN: usize = 40;
    /// Longest party or agent name (schema).
    pub const MAX_NAME_LEN: usize = 160;
    /// Topics per envelope list (schema).
    pub const MAX_TOPICS: usize = 20;
    /// Longest topic (schema).
    pub const MAX_TOPIC_LEN: usize = 120;
    /// Longest `human_contact` (schema), and ours for `approved_by`.
    pub const MAX_CONTACT_LEN: usize = 320;
    /// Longest message body (SPEC §5).
    pub const MAX_MESSAGE_LEN: usize = 20_000;
    /// Ours: longest message subject.
    pub const MAX_SUBJECT_LEN: usize = 200;
    /// Ours: longest `reason` of a decline or a close.
    pub const MAX_REASON_LEN: usize = 2000;
    /// Ours: longest agent id in `session_open` (a UUID is 36).
    pub const MAX_AGENT_ID_LEN: usize = 64;
    /// Longest signature text (the event schema's limit).
    pub const MAX_SIGNATURE_LEN: usize = 120;
    /// Ours: further approvals in an `accept`'s `approvals`.
    pub const MAX_EXTRA_APPROVALS: usize = 10;
}

/// A payload read according to its event kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Payload {
    /// `session_open`.
    SessionOpen(SessionOpen),
    /// `envelope`.
    Envelope(Envelope),
    /// `offer`.
    Offer(Offer),
    /// `counter_offer`.
    CounterOffer(Offer),
    /// `message`.
    Message(MessagePayload),
    /// `decline`.
    Decline(ReasonPayload),
    /// `session_close`.
    SessionClose(ReasonPayload),
    /// `accept` (RFC-001 draft).
    Accept(AcceptPayload),
}

impl Payload {
    /// The event kind this payload belongs to.
    pub fn kind(&self) -> EventKind {
        match self {
            Payload::SessionOpen(_) => EventKind::SessionOpen,
            Payload::Envelope(_) => EventKind::Envelope,
            Payload::Offer(_) => EventKind::Offer,
            Payload::CounterOffer(_) => EventKind::CounterOffer,
            Payload::Message(_) => EventKind::Message,
            Payload::Decline(_) => EventKind::Decline,
            Payload::SessionClose(_) => EventKind::SessionClose,
            Payload::Accept(_) => EventKind::Accept,
        }
    }

    /// The offer, for `offer` and `counter_offer`.
    pub fn as_offer(&self) -> Option<&Offer> {
        match self {
            Payload::Offer(offer) | Payload::CounterOffer(offer) => Some(offer),
            _ => None,
        }
    }

    /// The payload as the JSON it travels as (same canonical hash as the
    /// value it was parsed from).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Reads `value` as the payload of an event of `kind`, enforcing every rule;
/// the error lists every violation found.
pub fn parse_payload(kind: EventKind, value: &Value) -> Result<Payload, PayloadError> {
    Ok(match kind {
        EventKind::SessionOpen => Payload::SessionOpen(SessionOpen::parse(value)?),
        EventKind::Envelope => Payload::Envelope(Envelope::parse(value)?),
        EventKind::Offer => Payload::Offer(Offer::parse(value)?),
        EventKind::CounterOffer => Payload::CounterOffer(Offer::parse(value)?),
        EventKind::Message => Payload::Message(MessagePayload::parse(value)?),
        EventKind::Decline => Payload::Decline(ReasonPayload::parse(value)?),
        EventKind::SessionClose => Payload::SessionClose(ReasonPayload::parse(value)?),
        EventKind::Accept => Payload::Accept(AcceptPayload::parse(value)?),
    })
}

#[cfg(test)]
mod tests;
