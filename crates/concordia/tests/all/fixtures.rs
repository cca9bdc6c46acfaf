//! Signed transcripts built here, with fresh keys.

use concordia::approval_receipt::{edges, keys};
use concordia::transcript::Keys;
use concordia::GENESIS_HASH;
use ed25519_dalek::SigningKey;
use serde_json::{json, Value};

pub struct Parties {
    pub buyer: SigningKey,
    pub seller: SigningKey,
}

impl Parties {
    pub fn new() -> Parties {
        Parties {
            buyer: SigningKey::generate(&mut rand_core::OsRng),
            seller: SigningKey::generate(&mut rand_core::OsRng),
        }
    }

    pub fn keys(&self) -> Keys {
        let mut k = Keys::new();
        k.insert("buyer".into(), self.buyer.verifying_key());
        k.insert("seller".into(), self.seller.verifying_key());
        k
    }

    pub fn key_of(&self, who: &str) -> &SigningKey {
        if who == "buyer" {
            &self.buyer
        } else {
            &self.seller
        }
    }
}

pub fn sign(mut m: Value, k: &SigningKey) -> Value {
    let pre = edges::canonical(&edges::without_top_level(&m, "signature")).expect("canonical");
    m["signature"] = json!(keys::sign(k, pre.as_bytes()));
    m
}

/// `(type, from, body, timestamp)` steps, chained and signed.
pub fn transcript(p: &Parties, steps: &[(&str, &str, Value, &str)]) -> Vec<Value> {
    let mut prev = GENESIS_HASH.to_owned();
    let mut out = Vec::new();
    for (i, (kind, from, body, at)) in steps.iter().enumerate() {
        let to = if *from == "buyer" { "seller" } else { "buyer" };
        let m = json!({
            "concordia": "0.1.0", "type": kind, "id": format!("msg_{i}"), "session_id": "ses_1",
            "timestamp": at, "from": {"agent_id": from}, "to": [{"agent_id": to}],
            "prev_hash": prev, "body": body,
        });
        let m = sign(m, p.key_of(from));
        prev = edges::hash(&m).expect("hash");
        out.push(m);
    }
    out
}

pub fn offer_body(price: Value) -> Value {
    json!({"offer_id": "off_1", "terms": {"price": {"value": price, "currency": "USD"}}, "complete": true})
}

/// open (seller), accept_session (buyer), counter (buyer), accept (seller).
pub fn deal(p: &Parties) -> Vec<Value> {
    transcript(
        p,
        &[
            (
                "negotiate.open",
                "seller",
                json!({"terms": {"price": {"value": 100, "currency": "USD"}}}),
                "2026-05-10T10:00:00Z",
            ),
            (
                "negotiate.accept_session",
                "buyer",
                json!({}),
                "2026-05-10T10:01:00Z",
            ),
            (
                "negotiate.counter",
                "buyer",
                offer_body(json!(80.5)),
                "2026-05-10T10:02:00Z",
            ),
            (
                "negotiate.accept",
                "seller",
                json!({"offer_id": "off_1"}),
                "2026-05-10T10:03:00Z",
            ),
        ],
    )
}
