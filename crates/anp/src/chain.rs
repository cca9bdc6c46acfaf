//! Log verification (SPEC §4): whole logs, and incrementally from a pinned
//! head so that verifying new events costs O(new events).

use std::collections::HashMap;

use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::event::{Actor, ChainHead, Event, EventKind, LogDocument, LogKeys};
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

impl VerifyReport {
    /// The verdict when a log contradicts the pinned head: nothing checked,
    /// the pin kept, the rewrite named (`found`: what the log holds at the
    /// pinned seq, if anything). Verifiers and clients that compare a host's
    /// answer with a pin all say it this way.
    pub fn rewritten(pin: &ChainHead, found: Option<String>, detail: String) -> VerifyReport {
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
        KeyRing::from_keys_block(&doc.keys)
    }

    /// The ring of a log document's `keys` block.
    pub fn from_keys_block(keys: &LogKeys) -> Result<KeyRing, KeyError> {
        let mut ring = KeyRing::new();
        for published in [&keys.vendor_agent, &keys.buyer].into_iter().flatten() {
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
    match after_pin(pin, events.len(), |i| {
        (events[i].seq, events[i].event_hash.as_str())
    }) {
        Ok(start) => verify_extension(session_id, pin, &events[start..], keys),
        Err(rewrite) => *rewrite,
    }
}

/// Where the events after `pin` start in a whole log of `len` events whose
/// `i`th has `at(i)` = (seq, event_hash); or the report of a log that does
/// not hold the pin.
pub(crate) fn after_pin<'a>(
    pin: &ChainHead,
    len: usize,
    at: impl Fn(usize) -> (u64, &'a str),
) -> Result<usize, Box<VerifyReport>> {
    if pin.seq == 0 {
        return Ok(0);
    }
    let index = usize::try_from(pin.seq - 1).unwrap_or(usize::MAX);
    let found = (index < len).then(|| at(index));
    match found {
        Some((seq, hash)) if seq == pin.seq && hash == pin.event_hash => Ok(index + 1),
        Some((_, hash)) => Err(Box::new(VerifyReport::rewritten(
            pin,
            Some(hash.to_owned()),
            format!(
                "the log holds event_hash {hash} at position {}, but seq {} was pinned as {}",
                pin.seq, pin.seq, pin.event_hash
            ),
        ))),
        None => Err(Box::new(VerifyReport::rewritten(
            pin,
            None,
            format!(
                "the log has {len} events, fewer than the pinned seq {}",
                pin.seq
            ),
        ))),
    }
}

/// Verifies `new_events`, which must directly follow `pin` (the head a
/// verifier trusts). Costs O(new events): nothing before the pin is read.
/// The first new event must carry `prev_hash == pin.event_hash`; if it does
/// not, and its hash linkage is otherwise intact, the log no longer extends
/// the pin and the report says so as a rewrite. Large extensions are checked
/// on every core.
pub fn verify_extension(
    session_id: &str,
    pin: &ChainHead,
    new_events: &[Event],
    keys: &KeyRing,
) -> VerifyReport {
    let threads = parallel::threads_for(new_events.len(), None);
    let fields: Vec<EventFields<'_>> = new_events.iter().map(EventFields::of).collect();
    let payloads = parallel::map_shares(new_events, threads, |share, _| {
        share
            .iter()
            .map(|e| jcs::sha256(crate::canonical::to_canonical_string(&e.payload).as_bytes()))
            .collect()
    });
    verify_fields(session_id, pin, &fields, &payloads, keys, threads)
}

/// What verification reads of one event, borrowed from wherever it was
/// parsed (an [`Event`], or a document's text for the whole-document path).
pub(crate) struct EventFields<'a> {
    pub seq: u64,
    pub actor: Actor,
    pub kind: EventKind,
    pub payload_hash: &'a str,
    pub prev_hash: &'a str,
    pub event_hash: &'a str,
    pub signature: Option<&'a str>,
    pub signer: Option<&'a str>,
    pub at: &'a str,
}

impl<'a> EventFields<'a> {
    fn of(event: &'a Event) -> EventFields<'a> {
        EventFields {
            seq: event.seq,
            actor: event.actor,
            kind: event.kind,
            payload_hash: &event.payload_hash,
            prev_hash: &event.prev_hash,
            event_hash: &event.event_hash,
            signature: event.signature.as_deref(),
            signer: event.signer.as_deref(),
            at: &event.at,
        }
    }
}

/// One event's checks before its signature is verified.
#[derive(Default)]
struct Checked {
    checks: Vec<Check>,
    details: Vec<String>,
    unproven: bool,
}

/// The one implementation of SPEC §4's rule: `events` follow `pin`, and
/// `payloads[i]` is the SHA-256 of the canonical JSON of event `i`'s payload
/// (however it was computed). Events are checked, and signatures verified in
/// batches, on `threads` threads; the report is the same for any count.
pub(crate) fn verify_fields(
    session_id: &str,
    pin: &ChainHead,
    events: &[EventFields<'_>],
    payloads: &[[u8; 32]],
    keys: &KeyRing,
    threads: usize,
) -> VerifyReport {
    // Pass 1: sequence, hashes and linkage, and the signatures to verify.
    let indexed: Vec<usize> = (0..events.len()).collect();
    let mut checked: Vec<(Checked, Option<Pending<'_>>)> =
        parallel::map_shares(&indexed, threads, |share, _| {
            share
                .iter()
                .map(|&i| check_event(session_id, pin, events, i, &payloads[i], keys))
                .collect()
        });

    // Pass 2: signatures, batched (countersign-ed25519-batch); a refused
    // batch is re-checked until every failing signature is named.
    let pending: Vec<Pending<'_>> = checked.iter_mut().filter_map(|(_, p)| p.take()).collect();
    for failed in ed25519_batch::failing(&pending, threads) {
        let (event, _) = &mut checked[pending[failed].index];
        event.checks.push(Check::Signature);
        event
            .details
            .push("authorship signature does not verify against the signer's key".to_owned());
    }

    let mut failing = Vec::new();
    let mut unproven = Vec::new();
    for (event, (mut checked, _)) in events.iter().zip(checked) {
        if checked.unproven {
            unproven.push(event.seq);
        }
        if !checked.checks.is_empty() {
            checked.checks.sort();
            failing.push(Failure {
                seq: event.seq,
                checks: checked.checks,
                details: checked.details,
            });
        }
    }

    // A first event that does not link to the pin, when the pin is not genesis,
    // is a rewrite of history rather than a damaged event.
    let rewrite = match events.first() {
        Some(first) if pin.seq > 0 && first.prev_hash != pin.event_hash => Some(Rewrite {
            pinned: pin.clone(),
            found: Some(first.prev_hash.to_owned()),
            detail: format!(
                "event {} links to {}, but the pinned head is {}",
                first.seq, first.prev_hash, pin
            ),
        }),
        _ => None,
    };

    let head = events
        .last()
        .map(|e| ChainHead {
            seq: e.seq,
            event_hash: e.event_hash.to_owned(),
        })
        .unwrap_or_else(|| pin.clone());
    VerifyReport {
        ok: failing.is_empty() && rewrite.is_none(),
        failing,
        unproven,
        rewrite,
        head,
        events_checked: events.len() as u64,
    }
}

/// Every check of event `index` but the signature itself, which it returns
/// to be verified in a batch.
fn check_event<'a>(
    session_id: &str,
    pin: &ChainHead,
    events: &[EventFields<'a>],
    index: usize,
    payload: &[u8; 32],
    keys: &'a KeyRing,
) -> (Checked, Option<Pending<'a>>) {
    let event = &events[index];
    let mut out = Checked::default();
    // Checked: a hostile pin or claimed head near u64::MAX must not overflow.
    let expected_seq = u64::try_from(index)
        .ok()
        .and_then(|i| pin.seq.checked_add(i))
        .and_then(|seq| seq.checked_add(1));
    if Some(event.seq) != expected_seq {
        out.checks.push(Check::Seq);
        out.details.push(match expected_seq {
            Some(expected) => format!("seq is {}, expected {expected}", event.seq),
            None => format!("seq is {}, but no seq can follow {}", event.seq, pin.seq),
        });
    }
    if !hex_is(payload, event.payload_hash) {
        out.checks.push(Check::PayloadHash);
        out.details.push(format!(
            "payload re-hashes to {}, not the declared {}",
            hex::encode(payload),
            event.payload_hash
        ));
    }
    let prev = match index {
        0 => pin.event_hash.as_str(),
        _ => events[index - 1].event_hash,
    };
    if event.prev_hash != prev {
        out.checks.push(Check::PrevHash);
        out.details
            .push(format!("prev_hash is {}, expected {prev}", event.prev_hash));
    }
    let recomputed = signed::event_hash_digest(
        session_id,
        event.seq,
        event.actor.as_str(),
        event.kind.as_str(),
        event.payload_hash,
        event.prev_hash,
        event.at,
    );
    if !hex_is(&recomputed, event.event_hash) {
        out.checks.push(Check::EventHash);
        out.details.push(format!(
            "event_hash recomputes to {}, not the declared {}",
            hex::encode(recomputed),
            event.event_hash
        ));
    }
    let pending = match (event.signature, event.signer) {
        (None, _) => {
            out.unproven = true;
            None
        }
        (Some(_), None) => {
            out.checks.push(Check::Signature);
            out.details
                .push("a signature without a signer cannot be attributed".to_owned());
            None
        }
        (Some(sig), Some(signer)) => match (keys.get(signer), keys::parse_signature(sig)) {
            (None, _) => {
                out.checks.push(Check::Signature);
                out.details
                    .push(format!("no known key has fingerprint {signer}"));
                None
            }
            (_, Err(e)) => {
                out.checks.push(Check::Signature);
                out.details.push(e.to_string());
                None
            }
            (Some(key), Ok(signature)) => Some(Pending {
                index,
                key,
                signature,
                kind: event.kind.as_str(),
                payload_hash: event.payload_hash,
            }),
        },
    };
    (out, pending)
}

/// One authorship signature to check (SPEC §4), over the authorship string
/// of `kind` and the declared `payload_hash`, fed to the batch verifier in
/// pieces.
struct Pending<'a> {
    /// The event's position, reported back when the signature fails.
    index: usize,
    key: &'a VerifyingKey,
    signature: Signature,
    kind: &'static str,
    payload_hash: &'a str,
}

impl ed25519_batch::Signed for Pending<'_> {
    fn key(&self) -> &VerifyingKey {
        self.key
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn message(&self, sink: &mut dyn FnMut(&[u8])) {
        for piece in signed::authorship_parts(self.kind, self.payload_hash) {
            sink(piece.as_bytes());
        }
    }
}

/// True when `declared` is the lowercase hex of `digest`.
fn hex_is(digest: &[u8; 32], declared: &str) -> bool {
    let mut text = [0u8; 64];
    // 64 bytes is exactly the hex of 32: encoding cannot fail.
    hex::encode_to_slice(digest, &mut text).is_ok() && text == declared.as_bytes()
}
