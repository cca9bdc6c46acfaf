//! Every receipt the tests verify: the three fixtures with and without test
//! receipts allowed, each check broken alone, chains built for each
//! fixture, and the documented differences from the publisher's verifier.
//!
//! Each case states what *we* must answer (`expect`), written by hand from
//! RECEIPTS.md: `checks.rs` asserts it without Python, `publisher.rs` asserts
//! that `valyzen.receipt.verify_receipt` answers the same (or, for a case
//! with a `difference`, exactly what the crate README says it answers).

use oanp::report::{verify_bytes, ReadError};
use oanp::{Mode, PinnedKey, PinnedKeys, Trust, Verification};
use serde_json::{json, Value};

use crate::support::{fixture, session_for, TestKey, FIXTURES};

/// One receipt to verify.
pub struct Case {
    /// A name saying what was done to it.
    pub name: String,
    /// The receipt's JSON text.
    pub receipt: String,
    /// The session log's JSON text, when given.
    pub log: Option<String>,
    /// Whether test receipts are allowed.
    pub allow_test: bool,
    /// Keys pinned beside the published ones (on both sides).
    pub pins: Vec<PinnedKey>,
    /// What we answer.
    pub expect: Expect,
    /// Where the publisher must answer otherwise (crate README, "Differences").
    pub difference: Option<Difference>,
}

impl Case {
    /// Our verification of the case, from its texts, with its pins.
    pub fn verify(&self) -> Result<Verification, ReadError> {
        let mut pins = PinnedKeys::published();
        for key in &self.pins {
            pins.pin(key.clone()).unwrap();
        }
        let trust = Trust {
            pins: &pins,
            allow_test: self.allow_test,
        };
        verify_bytes(
            self.receipt.as_bytes(),
            self.log.as_deref().map(str::as_bytes),
            trust,
        )
    }
}

/// What a verifier answers: the status (`unreadable` when the input is
/// refused before verifying), the verdict, and the seven checks in order as
/// `o` (holds), `F` (fails) or `-` (skipped): header, key, signature, signer,
/// mode, terms, chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// `valid`, `invalid`, `unverifiable`, `unsigned` or `unreadable`.
    pub status: &'static str,
    /// Proof or not.
    pub proof: bool,
    /// Seven marks.
    pub checks: &'static str,
}

/// A documented difference: the README's id for it and what the publisher answers.
#[derive(Debug, Clone, Copy)]
pub struct Difference {
    /// `D1` … in the crate README.
    pub id: &'static str,
    /// The publisher's status.
    pub status: &'static str,
    /// The publisher's verdict.
    pub proof: bool,
}

const fn expect(status: &'static str, proof: bool, checks: &'static str) -> Expect {
    Expect {
        status,
        proof,
        checks,
    }
}

/// The outcomes by shape.
const DEV_NO_TEST: Expect = expect("valid", false, "ooooFo-");
const PROOF: Expect = expect("valid", true, "oooooo-");
const UNPINNED: Expect = expect("valid", false, "oooF-o-");
const BAD_HEADER: Expect = expect("unverifiable", false, "F-F--o-");
const BAD_KEY: Expect = expect("unverifiable", false, "oFF--o-");
const BAD_SIGNATURE: Expect = expect("invalid", false, "ooFooo-");
const BAD_TERMS: Expect = expect("valid", false, "oooooF-");
const CHAIN_PROOF: Expect = expect("valid", true, "ooooooo");
const CHAIN_FAILS: Expect = expect("valid", false, "ooooooF");
const UNREADABLE: Expect = expect("unreadable", false, "-------");

fn text(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

fn b64(bytes: &[u8]) -> String {
    jcs::b64url::encode(bytes)
}

/// The keys generated for this run: one a person pins as live, one as test,
/// one for chains (live), one never pinned, one under Valyzen's live kid.
pub struct Keys {
    /// Pinned live.
    pub live: TestKey,
    /// Pinned test.
    pub test: TestKey,
    /// Pinned live, signs the chain cases.
    pub chain: TestKey,
    /// Never pinned.
    pub stranger: TestKey,
    /// Signs under the published live kid with another key.
    pub impostor: TestKey,
}

impl Keys {
    /// Fresh keys.
    pub fn generate() -> Self {
        Self {
            live: TestKey::generate("countersign-test-live"),
            test: TestKey::generate("countersign-test-sandbox"),
            chain: TestKey::generate("countersign-test-chain"),
            stranger: TestKey::generate("countersign-test-unpinned"),
            impostor: TestKey::generate("ed25519-28860223a6941457"),
        }
    }
}

/// Every case, built for this run's keys.
pub fn all(keys: &Keys) -> Vec<Case> {
    let mut cases = Vec::new();
    fixtures(&mut cases);
    header(&mut cases);
    key(&mut cases);
    signature(&mut cases, keys);
    signer_and_mode(&mut cases, keys);
    terms(&mut cases, keys);
    unsigned(&mut cases);
    chains(&mut cases, keys);
    differences(&mut cases, keys);
    cases
}

struct Add<'a>(&'a mut Vec<Case>);

impl Add<'_> {
    fn case(
        &mut self,
        name: &str,
        receipt: String,
        log: Option<String>,
        allow_test: bool,
        pins: Vec<PinnedKey>,
        expect: Expect,
    ) {
        self.0.push(Case {
            name: name.to_owned(),
            receipt,
            log,
            allow_test,
            pins,
            expect,
            difference: None,
        });
    }

    /// A mutation of the development receipt, verified with test receipts allowed
    /// (so only what was broken can fail).
    fn dev(&mut self, name: &str, expect: Expect, edit: impl FnOnce(&mut Value)) {
        let mut r = fixture("dev-receipt");
        edit(&mut r);
        self.case(name, text(&r), None, true, vec![], expect);
    }

    fn differs(&mut self, id: &'static str, status: &'static str, proof: bool) {
        let last = self.0.last_mut().unwrap();
        last.difference = Some(Difference { id, status, proof });
    }
}

fn fixtures(cases: &mut Vec<Case>) {
    let mut add = Add(cases);
    for (name, no_test, test) in [
        ("dev-receipt", DEV_NO_TEST, PROOF),
        ("forged-receipt", UNPINNED, UNPINNED),
        ("forged-kid-receipt", UNPINNED, UNPINNED),
    ] {
        let bytes = String::from_utf8(crate::support::fixture_bytes(name)).unwrap();
        add.case(
            &format!("fixture {name}"),
            bytes.clone(),
            None,
            false,
            vec![],
            no_test,
        );
        add.case(
            &format!("fixture {name}, test receipts allowed"),
            bytes,
            None,
            true,
            vec![],
            test,
        );
    }
}

fn set_header(r: &mut Value, header: Value) {
    r["artifact"]["protected"] = json!(b64(jcs::to_string(&header).as_bytes()));
}

fn dev_header() -> Value {
    json!({"alg": "EdDSA", "b64": false, "crit": ["b64"], "kid": "ed25519-2f3286feb69fb953", "typ": "oanp-agreement+jws"})
}

fn header(cases: &mut Vec<Case>) {
    let mut add = Add(cases);
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 11] = [
        ("alg HS256", |h| h["alg"] = json!("HS256")),
        ("b64 true", |h| h["b64"] = json!(true)),
        ("b64 missing", |h| {
            drop(h.as_object_mut().unwrap().remove("b64"))
        }),
        ("b64 is 0, not false", |h| h["b64"] = json!(0)),
        ("crit missing", |h| {
            drop(h.as_object_mut().unwrap().remove("crit"))
        }),
        ("crit a string", |h| h["crit"] = json!("b64")),
        ("crit with another member", |h| {
            h["crit"] = json!(["b64", "exp"])
        }),
        ("no kid", |h| drop(h.as_object_mut().unwrap().remove("kid"))),
        ("kid a number", |h| h["kid"] = json!(7)),
        ("alg missing", |h| {
            drop(h.as_object_mut().unwrap().remove("alg"))
        }),
        ("alg lowercase", |h| h["alg"] = json!("eddsa")),
    ];
    for (what, edit) in edits {
        add.dev(&format!("header: {what}"), BAD_HEADER, |r| {
            let mut h = dev_header();
            edit(&mut h);
            set_header(r, h);
        });
    }
    add.dev("header: not base64url", BAD_HEADER, |r| {
        r["artifact"]["protected"] = json!("***")
    });
    add.dev("header: not JSON", BAD_HEADER, |r| {
        r["artifact"]["protected"] = json!(b64(b"EdDSA"))
    });
    add.dev("header: a JSON array", BAD_HEADER, |r| {
        r["artifact"]["protected"] = json!(b64(b"[]"))
    });
    add.dev("header: protected missing", BAD_HEADER, |r| {
        r["artifact"].as_object_mut().unwrap().remove("protected");
    });
    add.dev("header: protected a number", BAD_HEADER, |r| {
        r["artifact"]["protected"] = json!(1)
    });
}

fn key(cases: &mut Vec<Case>) {
    let mut add = Add(cases);
    add.dev("key: none embedded", BAD_KEY, |r| {
        r["jwks"]["keys"] = json!([])
    });
    add.dev("key: two under one kid", BAD_KEY, |r| {
        let k = r["jwks"]["keys"][0].clone();
        r["jwks"]["keys"].as_array_mut().unwrap().push(k);
    });
    add.dev("key: kty EC", BAD_KEY, |r| {
        r["jwks"]["keys"][0]["kty"] = json!("EC")
    });
    add.dev("key: crv X25519", BAD_KEY, |r| {
        r["jwks"]["keys"][0]["crv"] = json!("X25519")
    });
    add.dev("key: x missing", BAD_KEY, |r| {
        r["jwks"]["keys"][0].as_object_mut().unwrap().remove("x");
    });
    add.dev("key: x a number", BAD_KEY, |r| {
        r["jwks"]["keys"][0]["x"] = json!(12)
    });
    add.dev("key: jwks missing", BAD_KEY, |r| {
        r.as_object_mut().unwrap().remove("jwks");
    });
    add.dev("key: only under another kid", BAD_KEY, |r| {
        r["jwks"]["keys"][0]["kid"] = json!("ed25519-other")
    });
    add.dev("key: jwks.keys not a list", BAD_KEY, |r| {
        r["jwks"]["keys"] = json!({"0": r["jwks"]["keys"][0].clone()})
    });
}

fn flip(signature: &str, byte: usize) -> String {
    let mut raw = jcs::b64url::decode(signature).unwrap();
    raw[byte] ^= 0x01;
    b64(&raw)
}

/// The Ed25519 group order L, little-endian.
const ORDER: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

/// The signature with S replaced by S + L: the same scalar, not canonical.
fn malleated(signature: &str) -> String {
    let mut raw = jcs::b64url::decode(signature).unwrap();
    let mut carry = 0u16;
    for (byte, l) in raw[32..].iter_mut().zip(ORDER) {
        let sum = u16::from(*byte) + u16::from(l) + carry;
        *byte = sum as u8;
        carry = sum >> 8;
    }
    assert_eq!(carry, 0, "S + L fits 256 bits");
    b64(&raw)
}

fn signature(cases: &mut Vec<Case>, keys: &Keys) {
    let mut add = Add(cases);
    add.dev(
        "signature: S + L (a malleated, non-canonical scalar)",
        BAD_SIGNATURE,
        |r| {
            r["artifact"]["signature"] =
                json!(malleated(r["artifact"]["signature"].as_str().unwrap()));
        },
    );
    add.dev(
        "signature: a small-order key (the identity) with R the identity and S zero",
        UNPINNED,
        |r| {
            let mut identity = [0u8; 32];
            identity[0] = 1;
            let mut signature = [0u8; 64];
            signature[0] = 1;
            r["jwks"]["keys"][0]["x"] = json!(b64(&identity));
            r["artifact"]["signature"] = json!(b64(&signature));
        },
    );
    add.dev("signature: one byte flipped", BAD_SIGNATURE, |r| {
        r["artifact"]["signature"] = json!(flip(r["artifact"]["signature"].as_str().unwrap(), 10));
    });
    add.dev("signature: last byte flipped", BAD_SIGNATURE, |r| {
        r["artifact"]["signature"] = json!(flip(r["artifact"]["signature"].as_str().unwrap(), 63));
    });
    add.dev(
        "signature: signed_payload edited (rounds)",
        BAD_SIGNATURE,
        |r| {
            r["signed_payload"]["session"]["rounds_completed"] = json!(2);
        },
    );
    add.dev(
        "signature: signed and stated terms both edited",
        BAD_SIGNATURE,
        |r| {
            r["signed_payload"]["final_terms"]["price"]["amount_minor"] = json!(100);
            r["final_terms"]["price"]["amount_minor"] = json!(100);
        },
    );
    add.dev("signature: truncated", BAD_SIGNATURE, |r| {
        let s = r["artifact"]["signature"].as_str().unwrap();
        r["artifact"]["signature"] = json!(s[..s.len() - 4].to_owned());
    });
    add.dev("signature: missing", BAD_SIGNATURE, |r| {
        r["artifact"].as_object_mut().unwrap().remove("signature");
    });
    add.dev(
        "signature: standard base64 with padding",
        BAD_SIGNATURE,
        |r| {
            let s = r["artifact"]["signature"]
                .as_str()
                .unwrap()
                .replace('-', "+")
                .replace('_', "/")
                + "==";
            r["artifact"]["signature"] = json!(s);
        },
    );
    add.dev(
        "signature: protected header re-encoded (same JSON, other text)",
        BAD_SIGNATURE,
        |r| {
            // The signing input is the header text as given: an equal header
            // written otherwise is another input.
            let pretty = serde_json::to_string_pretty(&dev_header()).unwrap();
            r["artifact"]["protected"] = json!(b64(pretty.as_bytes()));
        },
    );
    let x = keys.stranger.x();
    add.dev(
        "signature: another valid key under the dev kid",
        expect("invalid", false, "ooFF-o-"),
        move |r| {
            r["jwks"]["keys"][0]["x"] = json!(x);
        },
    );
    add.dev(
        "signature: x of 31 bytes",
        expect("invalid", false, "ooFF-o-"),
        |r| {
            r["jwks"]["keys"][0]["x"] = json!(b64(&[7u8; 31]));
        },
    );
    add.dev(
        "signature: unsafe integer in signed_payload",
        BAD_SIGNATURE,
        |r| {
            r["signed_payload"]["session"]["nonce"] = json!(9007199254740993u64);
        },
    );
    add.dev(
        "signature: unsafe integer in both terms",
        expect("invalid", false, "ooFooF-"),
        |r| {
            r["signed_payload"]["final_terms"]["nonce"] = json!(9007199254740993u64);
            r["final_terms"]["nonce"] = json!(9007199254740993u64);
        },
    );
}

fn signer_and_mode(cases: &mut Vec<Case>, keys: &Keys) {
    let mut add = Add(cases);
    let signed = |key: &TestKey| {
        let mut r = fixture("dev-receipt");
        key.sign(&mut r);
        text(&r)
    };
    add.case(
        "signer: unpinned kid",
        signed(&keys.stranger),
        None,
        false,
        vec![],
        UNPINNED,
    );
    add.case(
        "signer: the live kid with another key",
        signed(&keys.impostor),
        None,
        false,
        vec![],
        UNPINNED,
    );
    add.case(
        "signer: a person's pinned live key",
        signed(&keys.live),
        None,
        false,
        vec![keys.live.pin(Mode::Live)],
        PROOF,
    );
    add.case(
        "mode: a person's pinned test key, test receipts not allowed",
        signed(&keys.test),
        None,
        false,
        vec![keys.test.pin(Mode::Test)],
        DEV_NO_TEST,
    );
    add.case(
        "mode: a person's pinned test key, test receipts allowed",
        signed(&keys.test),
        None,
        true,
        vec![keys.test.pin(Mode::Test)],
        PROOF,
    );
    add.case(
        "signer: pinned as test, the receipt claims live",
        {
            let mut r = fixture("dev-receipt");
            r["mode"] = json!("live");
            keys.test.sign(&mut r);
            text(&r)
        },
        None,
        false,
        vec![keys.test.pin(Mode::Test)],
        DEV_NO_TEST,
    );
}

fn terms(cases: &mut Vec<Case>, keys: &Keys) {
    let mut add = Add(cases);
    add.dev("terms: final_terms price edited", BAD_TERMS, |r| {
        r["final_terms"]["price"]["amount_minor"] = json!(100)
    });
    add.dev("terms: an inclusion dropped", BAD_TERMS, |r| {
        r["final_terms"]["inclusions"].as_array_mut().unwrap().pop();
    });
    add.dev("terms: another session_id", BAD_TERMS, |r| {
        r["session_id"] = json!("01M42N9KCCR8TAGDXTFR3Q8TE9")
    });
    add.dev("terms: session_id missing", BAD_TERMS, |r| {
        r.as_object_mut().unwrap().remove("session_id");
    });
    add.dev("terms: final_terms missing", BAD_TERMS, |r| {
        r.as_object_mut().unwrap().remove("final_terms");
    });
    add.dev("terms: price as a float of the same value", PROOF, |r| {
        r["final_terms"]["price"]["amount_minor"] = json!(41900.0);
    });
    let pins = vec![keys.live.pin(Mode::Live)];
    let resigned = |edit: fn(&mut Value)| {
        let mut r = fixture("dev-receipt");
        edit(&mut r);
        keys.live.sign(&mut r);
        text(&r)
    };
    add.case(
        "terms: the signed session id differs",
        resigned(|r| r["signed_payload"]["session"]["session_id"] = json!("01OTHER")),
        None,
        false,
        pins.clone(),
        BAD_TERMS,
    );
    add.case(
        "terms: no signed final_terms, none stated",
        resigned(|r| {
            r["signed_payload"]
                .as_object_mut()
                .unwrap()
                .remove("final_terms");
            r.as_object_mut().unwrap().remove("final_terms");
        }),
        None,
        false,
        pins.clone(),
        PROOF,
    );
    add.case(
        "terms: session ids true and 1 (equal in Python)",
        resigned(|r| {
            r["signed_payload"]["session"]["session_id"] = json!(1);
            r["session_id"] = json!(true);
        }),
        None,
        false,
        pins.clone(),
        PROOF,
    );
    add.case(
        "terms: session ids 1 and \"1\"",
        resigned(|r| {
            r["signed_payload"]["session"]["session_id"] = json!(1);
            r["session_id"] = json!("1");
        }),
        None,
        false,
        pins,
        BAD_TERMS,
    );
    // Duplicate member names: the last one counts, on both sides.
    let dev = text(&fixture("dev-receipt"));
    let duplicated = dev.replacen(
        "{\n",
        "{\n  \"final_terms\": {\"price\": {\"amount_minor\": 1, \"currency\": \"USD\"}},\n",
        1,
    );
    add.case(
        "terms: final_terms twice, the signed ones last",
        duplicated,
        None,
        true,
        vec![],
        PROOF,
    );
}

fn unsigned(cases: &mut Vec<Case>) {
    let mut add = Add(cases);
    add.dev(
        "unsigned: closed without agreement",
        expect("unsigned", false, "-------"),
        |r| {
            r["state"] = json!("closed");
            r["artifact"] = Value::Null;
            r["signed_payload"] = Value::Null;
            r["final_terms"] = Value::Null;
            r["close"] = json!({"reason": "rounds_exhausted"});
        },
    );
    add.dev(
        "unsigned: agreed but no artifact",
        expect("unverifiable", false, "F-F----"),
        |r| {
            r["artifact"] = Value::Null;
        },
    );
    add.dev(
        "unsigned: agreed but no signed_payload",
        expect("unverifiable", false, "F-F----"),
        |r| {
            r.as_object_mut().unwrap().remove("signed_payload");
        },
    );
    add.dev(
        "unsigned: artifact a string",
        expect("unverifiable", false, "F-F----"),
        |r| {
            r["artifact"] = json!("eyJhbGciOiJFZERTQSJ9..sig");
        },
    );
    let mut closed = fixture("dev-receipt");
    closed["state"] = json!("closed");
    closed["artifact"] = Value::Null;
    closed["signed_payload"] = Value::Null;
    add.case(
        "unsigned: closed, with a log",
        text(&closed),
        Some(text(&json!([{"type": "session.open", "message_id": "1", "sender": {"role": "buyer"}, "payload": {}}]))),
        false,
        vec![],
        expect("unsigned", false, "------F"),
    );
}

fn chains(cases: &mut Vec<Case>, keys: &Keys) {
    let mut add = Add(cases);
    let pins = || vec![keys.chain.pin(Mode::Live)];
    for name in FIXTURES {
        let (receipt, log) = session_for(fixture(name), &keys.chain);
        let mut chain = |what: &str, receipt: &Value, log: &Value, expect: Expect| {
            add.case(
                &format!("chain ({name}): {what}"),
                text(receipt),
                Some(text(log)),
                false,
                pins(),
                expect,
            );
        };
        let whole = Value::Array(log.clone());
        chain("intact", &receipt, &whole, CHAIN_PROOF);

        let mut broken = log.clone();
        broken[2]["payload"]["session_rules"]["max_rounds"] = json!(9);
        chain(
            "one link broken",
            &receipt,
            &Value::Array(broken),
            CHAIN_FAILS,
        );

        let mut truncated = log.clone();
        truncated.pop();
        chain("truncated", &receipt, &Value::Array(truncated), CHAIN_FAILS);

        let mut other_head = receipt.clone();
        other_head["chain"]["head"] = json!(format!("sha256:{}", "0".repeat(64)));
        chain("head mismatch", &other_head, &whole, CHAIN_FAILS);

        let mut early = receipt.clone();
        early["signed_payload"]["session"]["chain_head"] =
            json!(oanp::canonical::commit(&log[0]).unwrap());
        keys.chain.sign(&mut early);
        chain(
            "signed head not the one before session.agree",
            &early,
            &whole,
            CHAIN_FAILS,
        );
    }

    let (receipt, log) = session_for(fixture("dev-receipt"), &keys.chain);
    let whole = Value::Array(log.clone());
    let mut chain = |what: &str, receipt: &Value, log: &Value, expect: Expect| {
        add.case(
            &format!("chain: {what}"),
            text(receipt),
            Some(text(log)),
            false,
            pins(),
            expect,
        );
    };
    let mut length = receipt.clone();
    length["chain"]["length"] = json!(8);
    chain("length mismatch", &length, &whole, CHAIN_FAILS);

    let mut float_length = receipt.clone();
    float_length["chain"]["length"] = json!(7.0);
    chain(
        "length 7.0 (equal in Python)",
        &float_length,
        &whole,
        CHAIN_PROOF,
    );

    let mut unsigned_head = receipt.clone();
    unsigned_head["signed_payload"]["session"]
        .as_object_mut()
        .unwrap()
        .remove("chain_head");
    keys.chain.sign(&mut unsigned_head);
    chain("no signed chain head", &unsigned_head, &whole, CHAIN_FAILS);

    let mut no_claim = receipt.clone();
    no_claim["chain"] = json!({});
    chain(
        "the receipt names no head or length",
        &no_claim,
        &whole,
        CHAIN_PROOF,
    );

    let mut swapped = log.clone();
    swapped.swap(3, 4);
    chain(
        "two envelopes swapped",
        &receipt,
        &Value::Array(swapped),
        CHAIN_FAILS,
    );

    let mut missing_link = log.clone();
    missing_link[4].as_object_mut().unwrap().remove("prev_hash");
    chain(
        "a prev_hash missing",
        &receipt,
        &Value::Array(missing_link),
        CHAIN_FAILS,
    );

    let mut last_edited = log.clone();
    last_edited[6]["payload"]["next"] = json!("elsewhere");
    chain(
        "the last envelope edited (only the unsigned head covers it)",
        &receipt,
        &Value::Array(last_edited),
        CHAIN_FAILS,
    );

    chain("not envelopes", &receipt, &json!([1, 2]), CHAIN_FAILS);
    chain("an empty log", &receipt, &json!([]), CHAIN_FAILS);
    chain(
        "a one-envelope log",
        &receipt,
        &json!([log[0].clone()]),
        CHAIN_FAILS,
    );

    let mut unsafe_integer = log.clone();
    unsafe_integer[0]["payload"]["nonce"] = json!(9007199254740993u64);
    chain(
        "an envelope with an unsafe integer",
        &receipt,
        &Value::Array(unsafe_integer),
        CHAIN_FAILS,
    );

    add.case(
        "chain: the genuine dev receipt with a log built for another head",
        text(&fixture("dev-receipt")),
        Some(text(&whole)),
        true,
        vec![],
        CHAIN_FAILS,
    );
}

/// `text` with four spaces in its middle.
fn spaced(text: &str) -> String {
    let (a, b) = text.split_at(text.len() / 2);
    format!("{a}    {b}")
}

fn differences(cases: &mut Vec<Case>, keys: &Keys) {
    let mut add = Add(cases);
    // D1: base64url the publisher silently repairs. It pads by the length
    // with the stray characters counted, then drops them: four keep the
    // padding right.
    add.dev("D1: four spaces inside the signature", BAD_SIGNATURE, |r| {
        r["artifact"]["signature"] = json!(spaced(r["artifact"]["signature"].as_str().unwrap()));
    });
    add.differs("D1", "valid", true);
    add.dev(
        "D1: non-canonical trailing bits in the signature",
        BAD_SIGNATURE,
        |r| {
            // 64 bytes are 86 characters with 4 unused bits: "A" → "B" sets one.
            let s = r["artifact"]["signature"].as_str().unwrap();
            let (head, last) = s.split_at(s.len() - 1);
            assert_eq!(last, "A", "the dev signature ends in A");
            r["artifact"]["signature"] = json!(format!("{head}B"));
        },
    );
    add.differs("D1", "valid", true);
    add.dev("D1: the signature inside a list", BAD_SIGNATURE, |r| {
        r["artifact"]["signature"] = json!([r["artifact"]["signature"].clone()]);
    });
    add.differs("D1", "valid", true);
    add.dev(
        "D1: four spaces inside the protected header",
        BAD_HEADER,
        |r| {
            r["artifact"]["protected"] =
                json!(spaced(r["artifact"]["protected"].as_str().unwrap()));
        },
    );
    add.differs("D1", "invalid", false);
    add.dev(
        "D1: four spaces inside the key's x",
        expect("invalid", false, "ooFF-o-"),
        |r| {
            r["jwks"]["keys"][0]["x"] = json!(spaced(r["jwks"]["keys"][0]["x"].as_str().unwrap()));
        },
    );
    add.differs("D1", "valid", false);

    // D2: integer literals wider than 64 bits.
    // A member whose value no serde_json value holds: written into the text.
    let mut marked = fixture("dev-receipt");
    marked["extension"] = json!("__RAW__");
    let marked = text(&marked);
    let raw = |literal: &str| marked.replacen("\"__RAW__\"", literal, 1);
    add.case(
        "D2: a 24-digit integer in an unsigned member",
        raw("100000000000000000000000"),
        None,
        true,
        vec![],
        UNREADABLE,
    );
    add.differs("D2", "valid", true);
    let mut signed = fixture("dev-receipt");
    keys.live.sign(&mut signed);
    signed["signed_payload"]["session"]["nonce"] = json!("__RAW__");
    let wide = text(&signed).replacen("\"__RAW__\"", "100000000000000000000001", 1);
    add.case(
        "D2: a 24-digit integer in signed_payload",
        wide,
        None,
        false,
        vec![keys.live.pin(Mode::Live)],
        UNREADABLE,
    );
    add.differs("D2", "invalid", false);

    // D3: text that is not JSON.
    add.case(
        "D3: NaN in an unsigned member",
        raw("NaN"),
        None,
        true,
        vec![],
        UNREADABLE,
    );
    add.differs("D3", "valid", true);
    add.case(
        "D3: a lone surrogate in an unsigned member",
        raw("\"\\ud800\""),
        None,
        true,
        vec![],
        UNREADABLE,
    );
    add.differs("D3", "valid", true);
    add.case(
        "D3: Infinity in an unsigned member",
        raw("Infinity"),
        None,
        true,
        vec![],
        UNREADABLE,
    );
    add.differs("D3", "valid", true);

    // D4: a protected header that is not plain UTF-8 JSON.
    let pins = vec![keys.live.pin(Mode::Live)];
    let header_json = jcs::to_string(&keys.live.header());
    let mut bom = fixture("dev-receipt");
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend_from_slice(header_json.as_bytes());
    keys.live.sign_protected(&mut bom, &b64(&bytes));
    add.case(
        "D4: a byte-order mark before the header JSON",
        text(&bom),
        None,
        false,
        pins.clone(),
        BAD_HEADER,
    );
    add.differs("D4", "valid", true);
    let mut utf16 = fixture("dev-receipt");
    let wide_header: Vec<u8> = header_json
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    keys.live.sign_protected(&mut utf16, &b64(&wide_header));
    add.case(
        "D4: the header JSON in UTF-16",
        text(&utf16),
        None,
        false,
        pins.clone(),
        BAD_HEADER,
    );
    add.differs("D4", "valid", true);

    // D3 inside the header: the header check fails, the receipt is read.
    let mut nan = fixture("dev-receipt");
    let header_nan = header_json.replacen('}', ",\"exp\":NaN}", 1);
    keys.live
        .sign_protected(&mut nan, &b64(header_nan.as_bytes()));
    add.case(
        "D3: NaN inside the protected header",
        text(&nan),
        None,
        false,
        pins.clone(),
        BAD_HEADER,
    );
    add.differs("D3", "valid", true);

    // Agreement: a duplicated header member counts once, the last.
    let mut twice = fixture("dev-receipt");
    let header_twice = header_json.replacen('{', "{\"alg\":\"HS256\",", 1);
    keys.live
        .sign_protected(&mut twice, &b64(header_twice.as_bytes()));
    add.case(
        "header: alg twice, EdDSA last",
        text(&twice),
        None,
        false,
        pins,
        PROOF,
    );
}
