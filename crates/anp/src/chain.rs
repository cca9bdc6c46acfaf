//! Log verification (SPEC §4): whole logs, and incrementally from a pinned
//! head so that verifying new events costs O(new events).

use std::collections::HashMap;

use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::canonical::canonical_hash;
use crate::event::{ChainHead, Event, LogDocument};
use crate::keys::{self, KeyError};
use crate::signed;

/// One check of SPEC §4's verification rule, named as the test vectors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// `seq` is not the next number.
    Seq,
    /// `payload` does not re-hash to `payload_hash`.
    PayloadHash,
    /// `prev_hash` is not the previous `event_hash`.
    PrevHash,
    /// `event_hash` does not recompute.
    EventHash,
    /// The authorship signature does not verify against its declared signer,
    /// or a signature has no signer, or the signer's key is unknown.
    Signature,
}

impl Check {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Seq => "seq",
            Check::PayloadHash => "payload_hash",
            Check::PrevHash => "prev_hash",
            Check::EventHash => "event_hash",
            Check::Signature => "signature",
        }
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every check one event failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The event's declared seq.
    pub seq: u64,
    /// The checks it failed, in SPEC order.
    pub checks: Vec<Check>,
    /// A sentence per failed check, for people.
    pub details: Vec<String>,
}

/// The pinned head a log was supposed to extend, and what it had instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewrite {
    /// The pin.
    pub pinned: ChainHead,
    /// What the log holds at that seq (`None`: the log is shorter than the pin,
    /// or the new events do not start right after it).
    pub found: Option<String>,
    /// Why this counts as a rewrite.
    pub detail: String,
}

/// The verdict on a log or on an extension of a pinned head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// True when every check passed and no pin was broken.
    pub ok: bool,
    /// Every failing event with every check it failed.
    pub failing: Vec<Failure>,
    /// Events whose `signer` is declared but that carry no signature: they
    /// pass, but their attribution is unproven.
    pub unproven: Vec<u64>,
    /// Set when the log does not extend the pinned head: history was rewritten.
    pub rewrite: Option<Rewrite>,
    /// The head after the verified events (the last event's seq and hash).
    pub head: ChainHead,
    /// How many events were checked (not counting a trusted pinned prefix).
    pub events_checked: u64,
}

/// The public keys signatures may verify against, by fingerprint.
#[derive(Debug, Clone, Default)]
pub struct KeyRing {
    keys: HashMap<String, VerifyingKey>,
}

impl KeyRing {
    /// An empty ring: every signature will fail as "unknown signer".
    pub fn new() -> KeyRing {
        KeyRing::default()
    }

    /// Adds a key; its fingerprint is computed, never trusted from input.
    pub fn add(&mut self, key: VerifyingKey) {
        self.keys.insert(keys::fingerprint(&key), key);
    }

    /// Adds a wire-form public key.
    pub fn add_b64(&mut self, public_key: &str) -> Result<(), KeyError> {
        self.add(keys::parse_public_key(public_key)?);
        Ok(())
    }

    /// The ring a log document names in its own `keys` block. Such keys are
    /// the host's claim: a console cross-checks the buyer key against the key
    /// it pinned from discovery.
    pub fn from_log_keys(doc: &LogDocument) -> Result<KeyRing, KeyError> {
        let mut ring = KeyRing::new();
        for published in [&doc.keys.vendor_agent, &doc.keys.buyer]
            .into_iter()
            .flatten()
        {
            ring.add_b64(&published.public_key)?;
        }
        Ok(ring)
    }

    /// The key with this fingerprint, if known.
    pub fn get(&self, fingerprint: &str) -> Option<&VerifyingKey> {
        self.keys.get(fingerprint)
    }

    /// True when the ring knows this fingerprint.
    pub fn contains(&self, fingerprint: &str) -> bool {
        self.keys.contains_key(fingerprint)
    }
}

/// Verifies a whole log from seq 1.
pub fn verify_log(session_id: &str, events: &[Event], keys: &KeyRing) -> VerifyReport {
    verify_extension(session_id, &ChainHead::genesis(), events, keys)
}

/// Verifies a log document with the keys it names itself.
pub fn verify_document(doc: &LogDocument) -> Result<VerifyReport, KeyError> {
    let ring = KeyRing::from_log_keys(doc)?;
    Ok(verify_log(&doc.session.id, &doc.events, &ring))
}

/// Verifies a full log against a pin: the log must hold the pinned hash at the
/// pinned seq; only the events after it are checked (the prefix is trusted
/// because it was verified when it was pinned, and is not touched).
pub fn verify_log_from_pin(
    session_id: &str,
    pin: &ChainHead,
    events: &[Event],
    keys: &KeyRing,
) -> VerifyReport {
    if pin.seq == 0 {
        return verify_extension(session_id, pin, events, keys);
    }
    let index = usize::try_from(pin.seq - 1).unwrap_or(usize::MAX);
    match events.get(index) {
        Some(at_pin) if at_pin.seq == pin.seq && at_pin.event_hash == pin.event_hash => {
            verify_extension(session_id, pin, &events[index + 1..], keys)
        }
        found => rewrite_report(
            pin,
            found.map(|e| e.event_hash.clone()),
            match found {
                Some(e) => format!(
                    "the log holds event_hash {} at position {}, but seq {} was pinned as {}",
                    e.event_hash, pin.seq, pin.seq, pin.event_hash
                ),
                None => format!(
                    "the log has {} events, fewer than the pinned seq {}",
                    events.len(),
                    pin.seq
                ),
            },
        ),
    }
}

fn rewrite_report(pin: &ChainHead, found: Option<String>, detail: String) -> VerifyReport {
    VerifyReport {
        ok: false,
        failing: Vec::new(),
        unproven: Vec::new(),
        rewrite: Some(Rewrite {
            pinned: pin.clone(),
            found,
            detail,
        }),
        head: pin.clone(),
        events_checked: 0,
    }
}

/// Verifies `new_events`, which must directly follow `pin` (the head a
/// verifier trusts). Costs O(new events): nothing before the pin is read.
/// The first new event must carry `prev_hash == pin.event_hash`; if it does
/// not, and its hash linkage is otherwise intact, the log no longer extends
/// the pin and the report says so as a rewrite.
pub fn verify_extension(
    session_id: &str,
    pin: &ChainHead,
    new_events: &[Event],
    keys: &KeyRing,
) -> VerifyReport {
    let mut failing = Vec::new();
    let mut unproven = Vec::new();
    let mut prev = pin.event_hash.as_str();
    let mut batch: Vec<PendingSignature<'_>> = Vec::with_capacity(new_events.len());
    let mut messages: Vec<String> = Vec::with_capacity(new_events.len());

    // Pass 1: hashes, linkage, sequence; collect signatures for one batch.
    let mut per_event: Vec<(Vec<Check>, Vec<String>)> = Vec::with_capacity(new_events.len());
    for (index, event) in new_events.iter().enumerate() {
        let mut checks = Vec::new();
        let mut details = Vec::new();
        // Checked: a hostile pin or claimed head near u64::MAX must not overflow.
        let expected_seq = u64::try_from(index)
            .ok()
            .and_then(|i| pin.seq.checked_add(i))
            .and_then(|seq| seq.checked_add(1));
        if Some(event.seq) != expected_seq {
            checks.push(Check::Seq);
            details.push(match expected_seq {
                Some(expected) => format!("seq is {}, expected {expected}", event.seq),
                None => format!("seq is {}, but no seq can follow {}", event.seq, pin.seq),
            });
        }
        let recomputed_payload = canonical_hash(&event.payload);
        if recomputed_payload != event.payload_hash {
            checks.push(Check::PayloadHash);
            details.push(format!(
                "payload re-hashes to {recomputed_payload}, not the declared {}",
                event.payload_hash
            ));
        }
        if event.prev_hash != prev {
            checks.push(Check::PrevHash);
            details.push(format!("prev_hash is {}, expected {prev}", event.prev_hash));
        }
        let recomputed_event = signed::event_hash(
            session_id,
            event.seq,
            event.actor.as_str(),
            event.kind.as_str(),
            &event.payload_hash,
            &event.prev_hash,
            &event.at,
        );
        if recomputed_event != event.event_hash {
            checks.push(Check::EventHash);
            details.push(format!(
                "event_hash recomputes to {recomputed_event}, not the declared {}",
                event.event_hash
            ));
        }
        match (&event.signature, &event.signer) {
            (None, Some(_)) => unproven.push(event.seq),
            (None, None) => unproven.push(event.seq),
            (Some(_), None) => {
                checks.push(Check::Signature);
                details.push("a signature without a signer cannot be attributed".to_owned());
            }
            (Some(sig), Some(signer)) => match (keys.get(signer), keys::parse_signature(sig)) {
                (None, _) => {
                    checks.push(Check::Signature);
                    details.push(format!("no known key has fingerprint {signer}"));
                }
                (_, Err(e)) => {
                    checks.push(Check::Signature);
                    details.push(e.to_string());
                }
                (Some(key), Ok(signature)) => {
                    messages.push(signed::authorship_string(
                        event.kind.as_str(),
                        &event.payload_hash,
                    ));
                    batch.push(PendingSignature {
                        index,
                        key,
                        signature,
                    });
                }
            },
        }
        per_event.push((checks, details));
        prev = &event.event_hash;
    }

    // Pass 2: signatures, batched; on a batch failure find the culprits one by one.
    for failed in failing_signatures(&batch, &messages) {
        let (checks, details) = &mut per_event[failed];
        checks.push(Check::Signature);
        details.push("authorship signature does not verify against the signer's key".to_owned());
    }

    for (event, (mut checks, details)) in new_events.iter().zip(per_event) {
        if !checks.is_empty() {
            checks.sort();
            failing.push(Failure {
                seq: event.seq,
                checks,
                details,
            });
        }
    }

    // A first event that does not link to the pin, when the pin is not genesis,
    // is a rewrite of history rather than a damaged event.
    let rewrite = match new_events.first() {
        Some(first) if pin.seq > 0 && first.prev_hash != pin.event_hash => Some(Rewrite {
            pinned: pin.clone(),
            found: Some(first.prev_hash.clone()),
            detail: format!(
                "event {} links to {}, but the pinned head is {}",
                first.seq, first.prev_hash, pin
            ),
        }),
        _ => None,
    };

    let head = new_events
        .last()
        .map(|e| ChainHead {
            seq: e.seq,
            event_hash: e.event_hash.clone(),
        })
        .unwrap_or_else(|| pin.clone());
    VerifyReport {
        ok: failing.is_empty() && rewrite.is_none(),
        failing,
        unproven,
        rewrite,
        head,
        events_checked: new_events.len() as u64,
    }
}

struct PendingSignature<'a> {
    index: usize,
    key: &'a VerifyingKey,
    signature: Signature,
}

/// Indices (into the event slice) of signatures that do not verify.
///
/// Batch verification is about twice as fast per signature; when a batch
/// fails, each signature is checked on its own with strict verification so
/// the report names exactly the bad ones. Small-order (weak) keys are refused
/// outright, which closes the gap between batch and strict verification for
/// honest-looking keys.
fn failing_signatures(batch: &[PendingSignature<'_>], messages: &[String]) -> Vec<usize> {
    const CHUNK: usize = 64;
    let mut failed = Vec::new();
    for (chunk, chunk_messages) in batch.chunks(CHUNK).zip(messages.chunks(CHUNK)) {
        let weak = chunk.iter().any(|p| p.key.is_weak());
        let msgs: Vec<&[u8]> = chunk_messages.iter().map(|m| m.as_bytes()).collect();
        let sigs: Vec<Signature> = chunk.iter().map(|p| p.signature).collect();
        let vks: Vec<VerifyingKey> = chunk.iter().map(|p| *p.key).collect();
        if !weak && ed25519_dalek::verify_batch(&msgs, &sigs, &vks).is_ok() {
            continue;
        }
        for (pending, message) in chunk.iter().zip(chunk_messages) {
            if pending.key.is_weak()
                || pending
                    .key
                    .verify_strict(message.as_bytes(), &pending.signature)
                    .is_err()
            {
                failed.push(pending.index);
            }
        }
    }
    failed
}
