//! What the tests share: the vendored fixtures, a test key generated per run
//! that signs a receipt exactly as the arbiter does, and session logs built
//! for a fixture so that its signed head is theirs.

use std::path::PathBuf;

use ed25519_dalek::{Signer as _, SigningKey};
use oanp::chain::SessionChain;
use oanp::{Envelope, Mode, PinnedKey, PinnedKeys, Trust, Verification};
use rand_core::OsRng;
use serde_json::{json, Value};

/// The three published fixtures.
pub const FIXTURES: [&str; 3] = ["dev-receipt", "forged-receipt", "forged-kid-receipt"];

/// The repository root.
pub fn root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// A fixture's bytes, as vendored.
pub fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = root()
        .join("vendor/oanp/fixtures")
        .join(format!("{name}.json"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fixture as JSON.
pub fn fixture(name: &str) -> Value {
    serde_json::from_slice(&fixture_bytes(name)).unwrap()
}

/// Verifies `receipt` with the published pins (and `extra` ones).
pub fn verify_with(
    receipt: &Value,
    log: Option<&[Value]>,
    allow_test: bool,
    extra: &[PinnedKey],
) -> Verification {
    let mut pins = PinnedKeys::published();
    for key in extra {
        pins.pin(key.clone()).unwrap();
    }
    oanp::verify(
        receipt.as_object().unwrap(),
        log,
        Trust {
            pins: &pins,
            allow_test,
        },
    )
}

/// Verifies `receipt` with the published pins.
pub fn verify(receipt: &Value, allow_test: bool) -> Verification {
    verify_with(receipt, None, allow_test, &[])
}

/// `[(id, ok, skipped)]` of every check, in order.
pub fn outcomes(v: &Verification) -> Vec<(&'static str, bool, bool)> {
    v.checks
        .iter()
        .map(|c| (c.id.as_str(), c.ok, c.skipped))
        .collect()
}

/// A key generated for this run, signing as the arbiter does.
pub struct TestKey {
    signing: SigningKey,
    /// The kid it signs under.
    pub kid: String,
}

impl TestKey {
    /// A fresh key under `kid`.
    pub fn generate(kid: &str) -> Self {
        Self {
            signing: SigningKey::generate(&mut OsRng),
            kid: kid.to_owned(),
        }
    }

    /// Its public key, unpadded base64url.
    pub fn x(&self) -> String {
        jcs::b64url::encode(self.signing.verifying_key().as_bytes())
    }

    /// The pin a person (and the publisher's `trusted_keys`) would hold for it.
    pub fn pin(&self, mode: Mode) -> PinnedKey {
        PinnedKey {
            kid: self.kid.clone(),
            x: self.x(),
            label: "the Countersign test arbiter".to_owned(),
            mode,
        }
    }

    /// The arbiter's header for this key.
    pub fn header(&self) -> Value {
        json!({"alg": "EdDSA", "b64": false, "crit": ["b64"], "kid": self.kid, "typ": "oanp-agreement+jws"})
    }

    /// Signs `receipt.signed_payload` under `header` and embeds this key.
    pub fn sign_with_header(&self, receipt: &mut Value, header: &Value) {
        let protected = jcs::b64url::encode(jcs::to_string(header).as_bytes());
        self.sign_protected(receipt, &protected);
    }

    /// Signs `receipt.signed_payload` with the protected header text as given.
    pub fn sign_protected(&self, receipt: &mut Value, protected: &str) {
        let payload = oanp::canonical::canonical_bytes(&receipt["signed_payload"]).unwrap();
        let mut input = protected.as_bytes().to_vec();
        input.push(b'.');
        input.extend_from_slice(&payload);
        let signature = self.signing.sign(&input);
        receipt["artifact"] = json!({"protected": protected, "signature": jcs::b64url::encode(&signature.to_bytes())});
        receipt["jwks"] = json!({"keys": [{
            "x": self.x(), "kty": "OKP", "crv": "Ed25519", "kid": self.kid, "alg": "EdDSA", "use": "sig"
        }]});
    }

    /// Signs as the arbiter does.
    pub fn sign(&self, receipt: &mut Value) {
        self.sign_with_header(receipt, &self.header());
    }
}

fn envelope(kind: &str, id: usize, role: &str, payload: Value, chain: &mut SessionChain) -> Value {
    let mut e = json!({"type": kind, "message_id": format!("msg-{id:02}"), "sender": {"role": role}, "payload": payload});
    if let Some(prev) = chain.next_prev_hash() {
        e["prev_hash"] = json!(prev);
    }
    // Every envelope built here is one the crate reads as well-formed.
    Envelope::read(&e).unwrap_or_else(|err| panic!("{kind}: {err}"));
    chain.push(&e).unwrap();
    e
}

/// A seven-envelope session log for `receipt` (built from its own parties,
/// rules, verdict and terms), and the receipt re-signed by `key` with the
/// signed head the envelope before `session.agree` and `chain` naming the log.
pub fn session_for(mut receipt: Value, key: &TestKey) -> (Value, Vec<Value>) {
    let r = receipt.clone();
    let terms = r["final_terms"].clone();
    let verdict = r["verdicts"][0].clone();
    let mut chain = SessionChain::new();
    let mut log = vec![
        envelope(
            "session.open",
            1,
            "buyer",
            json!({"object": {"sku": "DEMO-MONITOR-27"}, "declared": r["parties"]["buyer"]["declared"],
                   "commitment": r["parties"]["buyer"]["commitment"], "fairness_profile": r["fairness_profile"]}),
            &mut chain,
        ),
        envelope(
            "session.ack",
            2,
            "merchant",
            json!({"declared": r["parties"]["merchant"]["declared"], "commitment": r["parties"]["merchant"]["commitment"],
                   "list_price": r["attested"]["list_price"]}),
            &mut chain,
        ),
        envelope(
            "session.accept",
            3,
            "arbiter",
            json!({"session_rules": r["rules"], "attested": r["attested"], "arbiter_kid": key.kid,
                   "buyer_commitment": r["parties"]["buyer"]["commitment"],
                   "merchant_commitment": r["parties"]["merchant"]["commitment"]}),
            &mut chain,
        ),
        envelope(
            "offer.propose",
            4,
            "merchant",
            json!({"round": 1, "terms": terms, "expires_at": "2026-10-04T05:30:00Z"}),
            &mut chain,
        ),
        envelope(
            "arbitration.evaluate",
            5,
            "arbiter",
            json!({"verdict": verdict["verdict"], "fairness_score": verdict["fairness_score"], "w_minor": verdict["w_minor"],
                   "suggested_adjustment": {"amount_minor": verdict["t_target_minor"], "currency": verdict["currency"]}}),
            &mut chain,
        ),
        envelope("offer.accept", 6, "buyer", json!({"round": 1}), &mut chain),
    ];
    let before_agree = chain.head().unwrap().to_owned();
    receipt["signed_payload"]["session"]["chain_head"] = json!(before_agree);
    key.sign(&mut receipt);
    let agree = envelope(
        "session.agree",
        7,
        "arbiter",
        json!({"final_terms": terms, "artifact": receipt["artifact"], "next": "settlement"}),
        &mut chain,
    );
    log.push(agree);
    receipt["chain"] =
        json!({"head": chain.head().unwrap(), "length": chain.len(), "retention_days": 90});
    (receipt, log)
}
