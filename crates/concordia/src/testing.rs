//! Signed transcripts made up for benchmarks and tests (fresh keys, not a fixture).

use ed25519_dalek::SigningKey;
use serde_json::{json, Value};

use crate::message::GENESIS_HASH;
use crate::transcript::Keys;
use approval_receipt::{edges, keys};

/// A signed, hash-chained transcript of `n` messages between two parties
/// (an open, an accept_session, then offers, counters and signals with a
/// realistic body), with its keys as the gate carries them.
pub fn synthetic_transcript(n: usize) -> (Vec<Value>, Keys, Value) {
    let buyer = SigningKey::generate(&mut rand_core::OsRng);
    let seller = SigningKey::generate(&mut rand_core::OsRng);
    let mut prev = GENESIS_HASH.to_owned();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (from, to, k) = if i % 2 == 0 {
            ("seller", "buyer", &seller)
        } else {
            ("buyer", "seller", &buyer)
        };
        let (kind, body) = match i {
            0 => (
                "negotiate.open",
                json!({"terms": {"item": {"value": "CRM Enterprise seats"}, "price": {"value": 1200.00, "currency": "USD"}}, "timing": {"session_ttl": 864000, "offer_ttl": 3600, "max_rounds": 100000}}),
            ),
            1 => ("negotiate.accept_session", json!({})),
            _ if i % 3 == 0 => (
                "negotiate.signal",
                json!({"priority_ranking": ["price", "term_months"], "flexibility": {"price": "somewhat_flexible"}}),
            ),
            _ => (
                "negotiate.counter",
                json!({
                    "offer_id": format!("off_{i:06}"),
                    "terms": {
                        "price": {"value": 1000.0 + (i % 97) as f64 * 1.25, "currency": "USD"},
                        "quantity": {"value": 500, "unit": "seat/year"},
                        "term_months": {"value": 24},
                        "delivery": {"value": "2026-06-01", "type": "date"},
                    },
                    "complete": true,
                }),
            ),
        };
        let mut m = json!({
            "concordia": "0.1.0", "type": kind, "id": format!("msg_{i:06}"), "session_id": "ses_bench",
            "timestamp": "2026-05-10T10:00:00Z", "from": {"agent_id": from}, "to": [{"agent_id": to}],
            "prev_hash": prev, "body": body,
            "reasoning": "Moving a little on price in exchange for the longer term.",
        });
        let pre = edges::canonical(&m).unwrap_or_default();
        m["signature"] = json!(keys::sign(k, pre.as_bytes()));
        prev = edges::hash(&m).unwrap_or_default();
        out.push(m);
    }
    let mut ring = Keys::new();
    ring.insert("buyer".into(), buyer.verifying_key());
    ring.insert("seller".into(), seller.verifying_key());
    let keys_json = json!({"buyer": keys::public_key_text(&buyer.verifying_key()), "seller": keys::public_key_text(&seller.verifying_key())});
    (out, ring, keys_json)
}
