//! A stored ANP log as history shows and exports it: one timeline row per
//! event, the verifiable log document (`anp verify`, `countersign-verify`)
//! and the offers as CSV.

use anp::event::{ChainClaim, LogDocument, SessionInfo};
use anp::Event;
use serde_json::Value;

use crate::protocol::{EntryRole, TimelineEntry};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::Side;
use crate::views::Verification;

use super::offer::{parse_event, read_offer, summarize};

/// One event as a timeline row.
pub(crate) fn timeline(stored: &StoredEvent, human: &humanize::Humanizer) -> Option<TimelineEntry> {
    let event = parse_event(stored)?;
    let amount = event
        .kind
        .is_offer()
        .then(|| read_offer(&event.payload))
        .flatten()
        .map(|offer| offer.amount());
    let role = if event.kind.is_offer() {
        EntryRole::Proposal(event.payload.clone())
    } else if event.kind == anp::EventKind::Accept {
        EntryRole::Acceptance(None)
    } else {
        EntryRole::Other
    };
    Some(TimelineEntry {
        summary: summarize(&stored.kind, &event.payload, human),
        payload: event.payload,
        signer: event.signer,
        side: Some(side(event.actor)),
        amount,
        role,
    })
}

/// Which side an ANP actor is on.
pub(crate) fn side(actor: anp::Actor) -> Side {
    match actor {
        anp::Actor::VendorAgent => Side::Counterparty,
        anp::Actor::Buyer => Side::Ours,
    }
}

/// The verifiable document of the stored copy: the log with the platform
/// key this console pinned at enrollment as the buyer key.
pub(crate) fn document(
    host: Option<&HostRecord>,
    s: &SessionRecord,
    stored: &[StoredEvent],
) -> Value {
    let events: Vec<Event> = stored
        .iter()
        .filter_map(|e| serde_json::from_str(&e.body).ok())
        .collect();
    let opened_at = events.first().map(|e| e.at.clone()).unwrap_or_default();
    let doc = LogDocument {
        protocol: anp::PROTOCOL.to_owned(),
        session: SessionInfo {
            id: s.session_id.clone(),
            sandbox: s.sandbox,
            status: s.status.clone(),
            opened_at,
            closed_at: None,
            event_count: events.len() as u64,
            chain_head: s.pin_hash.clone(),
        },
        chain: ChainClaim {
            verified: s.verification != Verification::Disputed,
            head: s.pin_hash.clone(),
        },
        keys: anp::event::LogKeys {
            note: Some(
                "buyer: the platform key pinned by this console at enrollment; vendor_agent: the key the host's log carried, whose fingerprint the host vouched for"
                    .to_owned(),
            ),
            vendor_agent: pinned_vendor_key(&s.pinned_keys),
            buyer: host.map(|h| anp::event::PublishedKey {
                public_key: h.platform_key.clone(),
                fingerprint: h.platform_fingerprint.clone(),
            }),
        },
        events,
    };
    serde_json::to_value(doc).unwrap_or(Value::Null)
}

/// The vendor's key this console pinned from the host's log, if any.
fn pinned_vendor_key(pinned: &str) -> Option<anp::event::PublishedKey> {
    let keys: Value = serde_json::from_str(pinned).ok()?;
    serde_json::from_value(keys.get("vendor_agent")?.clone()).ok()
}
