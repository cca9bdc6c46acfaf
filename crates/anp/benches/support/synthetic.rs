//! A synthetic, validly signed ANP/0.1 session log: what the verification
//! bench measures and `examples/signed_log.rs` writes for whole-process
//! comparisons. One event in five an offer or counter-offer with 3 to 12
//! line items, the rest messages of a few hundred characters; vendor and
//! buyer alternate, each event signed by its actor's key.
#![allow(dead_code)]

use anp::event::{ChainClaim, LogKeys, PublishedKey, SessionInfo};
use anp::keys::{self, SigningKey};
use anp::{Actor, ChainHead, Event, EventDraft, EventKind, LogDocument};
use serde_json::{json, Value};

/// The session every synthetic log belongs to.
pub const SESSION: &str = "5f1c6f2e-9d1a-4c8b-b7e3-2a61c0de9a44";

/// A realistic offer: `items` line items with SKUs, prices and conditions.
pub fn offer(items: usize, round: usize) -> Value {
    let line_items: Vec<Value> = (0..items)
        .map(|i| {
            json!({
                "sku": format!("SKU-{i:04}"),
                "description": format!("Enterprise seat bundle {i}, annual, premier support"),
                "quantity": 10 + (i * 7) % 500,
                "unit": "seat/year",
                "unit_price": 1140.5 - (round % 50) as f64 + i as f64,
                "currency": "USD"
            })
        })
        .collect();
    json!({
        "currency": "USD",
        "term_months": 36,
        "expires_at": "2026-08-01T00:00:00Z",
        "line_items": line_items,
        "conditions": ["Net 60 payment", "Price hold through the term"],
        "notes": format!("Round {round}: includes premier support and onboarding.")
    })
}

/// The 200-line offer a counter-offer would answer it with: one line added at
/// the top, one removed, every tenth repriced, two swapped, a condition changed.
pub fn shifted_offer(items: usize) -> Value {
    let mut value = offer(items, 1);
    let lines = value["line_items"].as_array_mut().expect("line items");
    lines.pop();
    for (i, line) in lines.iter_mut().enumerate() {
        if i % 10 == 0 {
            line["unit_price"] = json!(999.25 + i as f64);
        }
    }
    lines.swap(3, 150);
    lines.insert(
        0,
        json!({"sku": "NEW-TOP", "description": "Analytics add-on", "quantity": 50,
               "unit": "seat/year", "unit_price": 120, "currency": "USD"}),
    );
    value["conditions"] = json!(["Net 30 payment", "Price hold through the term"]);
    value
}

/// A message of a few hundred characters.
pub fn message(n: usize) -> Value {
    json!({
        "subject": format!("Re: renewal, round {n}"),
        "body": "Thanks for the update. We can move on term length if the unit price reflects \
                 the volume commitment; please confirm the support tier and payment terms. "
            .repeat(1 + n % 4)
    })
}

/// The `n`th event's kind and payload: one in five an offer or counter-offer
/// (3 to 12 line items), the rest messages.
pub fn payload_for(n: usize) -> (EventKind, Value) {
    match n % 10 {
        0 => (EventKind::Offer, offer(3 + n % 10, n)),
        5 => (EventKind::CounterOffer, offer(3 + (n / 10) % 10, n)),
        _ => (EventKind::Message, message(n)),
    }
}

/// A signed log of `len` events, vendor and buyer alternating, each event
/// signed by its actor's key.
pub fn build_log(len: usize, vendor: &SigningKey, buyer: &SigningKey) -> Vec<Event> {
    let mut events = Vec::with_capacity(len);
    let mut head = ChainHead::genesis();
    for n in 0..len {
        let (kind, payload) = payload_for(n);
        let (actor, key) = if n % 2 == 0 {
            (Actor::VendorAgent, vendor)
        } else {
            (Actor::Buyer, buyer)
        };
        let event = EventDraft {
            session_id: SESSION,
            prev: &head,
            actor,
            kind,
            payload,
            at: anp::api::format_timestamp(
                time::macros::datetime!(2026-07-11 09:00 UTC) + time::Duration::seconds(n as i64),
            ),
        }
        .seal_signed(key);
        head = ChainHead {
            seq: event.seq,
            event_hash: event.event_hash.clone(),
        };
        events.push(event);
    }
    events
}

/// The log document of `events`, naming both keys, as a host serves it.
pub fn document(events: Vec<Event>, vendor: &SigningKey, buyer: &SigningKey) -> LogDocument {
    let published = |key: &SigningKey| PublishedKey {
        public_key: keys::public_key_b64(&key.verifying_key()),
        fingerprint: keys::fingerprint(&key.verifying_key()),
    };
    let head = events
        .last()
        .map_or(anp::signed::GENESIS_HASH.to_owned(), |e| {
            e.event_hash.clone()
        });
    LogDocument {
        protocol: anp::PROTOCOL.to_owned(),
        session: SessionInfo {
            id: SESSION.to_owned(),
            sandbox: true,
            status: "open".to_owned(),
            opened_at: events.first().map_or_else(String::new, |e| e.at.clone()),
            closed_at: None,
            event_count: events.len() as u64,
            chain_head: head.clone(),
        },
        chain: ChainClaim {
            verified: true,
            head,
        },
        keys: LogKeys {
            note: None,
            vendor_agent: Some(published(vendor)),
            buyer: Some(published(buyer)),
        },
        events,
    }
}
