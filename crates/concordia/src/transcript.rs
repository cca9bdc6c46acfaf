//! Transcript verification (SPEC §4.1, §9.2, §9.3): the genesis link, every
//! `prev_hash` link, and every message's Ed25519 signature against the keys
//! given with the transcript, from the start or from a pinned head.
//!
//! A message's hash is `sha256:` + hex SHA-256 of JCS of the whole message
//! (signature included); its signature covers JCS of the message without its
//! top-level `signature`. Both come from one canonical pass
//! ([`jcs::to_string_marking`]). Signatures are checked in batches (one
//! Ed25519 batch equation per chunk, with one term per distinct signer, each
//! chunk on its own core), and a batch that fails is re-checked message by
//! message with `verify_strict` so every failing message is named.
//!
//! Verifying from a pin (count, hash) costs O(new messages): only the
//! messages after the pin are read, the first of them must link to the
//! pinned hash. That is how a splice that deletes messages and re-signs the
//! rest is caught: the reference SDK's `validate_chain` checks links only,
//! and a re-signed chain links.

use std::collections::HashMap;

use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::Value;

use crate::message::{Message, GENESIS_HASH};
use crate::session::{Session, Step, TransitionError};
use approval_receipt::{edges, keys};

/// The keys of a transcript's parties: agent id → Ed25519 key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    map: HashMap<String, VerifyingKey>,
}

/// A `keys` map that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeysError {
    /// Not an object.
    #[error("keys must be an object mapping each party id to a base64url Ed25519 key")]
    NotObject,
    /// One key is unusable.
    #[error("the key of {party:?}: {why}")]
    Key {
        /// The party id.
        party: String,
        /// Why.
        why: String,
    },
}

impl Keys {
    /// No keys.
    pub fn new() -> Keys {
        Keys::default()
    }

    /// Reads `{party id: base64url key}`.
    pub fn from_json(value: &Value) -> Result<Keys, KeysError> {
        let obj = value.as_object().ok_or(KeysError::NotObject)?;
        let mut keys = Keys::new();
        for (party, key) in obj {
            let text = key.as_str().ok_or_else(|| KeysError::Key {
                party: party.clone(),
                why: "is not a string".into(),
            })?;
            let key = keys::parse_public_key(text).map_err(|e| KeysError::Key {
                party: party.clone(),
                why: e.to_string(),
            })?;
            keys.insert(party.clone(), key);
        }
        Ok(keys)
    }

    /// Adds or replaces a party's key.
    pub fn insert(&mut self, party: String, key: VerifyingKey) {
        self.map.insert(party, key);
    }

    /// The key of `party`.
    pub fn get(&self, party: &str) -> Option<&VerifyingKey> {
        self.map.get(party)
    }

    /// How many parties.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A verified head: how many messages, and the hash of the last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Messages up to and including the head.
    pub count: u64,
    /// The last message's hash (`sha256:<hex>`), genesis for none.
    pub hash: String,
}

impl Head {
    /// The head of an empty transcript.
    pub fn genesis() -> Head {
        Head {
            count: 0,
            hash: GENESIS_HASH.to_owned(),
        }
    }
}

/// Which check a message failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// The envelope is malformed (a required member missing or mistyped).
    Envelope,
    /// The message has no canonical form (`-0`, …).
    Canonical,
    /// The first message's `prev_hash` is not the genesis hash.
    Genesis,
    /// `prev_hash` is not the hash of the message before.
    Link,
    /// The first message after a pin does not link to the pinned hash.
    Pin,
    /// `session_id` differs from the transcript's.
    Session,
    /// No key is given for the sender.
    Key,
    /// The signature does not verify under the sender's key.
    Signature,
}

impl Check {
    /// A stable name for reports and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Check::Envelope => "envelope",
            Check::Canonical => "canonical",
            Check::Genesis => "genesis",
            Check::Link => "link",
            Check::Pin => "pin",
            Check::Session => "session",
            Check::Key => "key",
            Check::Signature => "signature",
        }
    }
}

/// One failing check of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The message's index in the whole transcript (0-based).
    pub index: u64,
    /// Its `id`, when it has one.
    pub message_id: Option<String>,
    /// Which check.
    pub check: Check,
    /// A sentence saying what was found.
    pub detail: String,
}

/// The outcome of verifying a transcript or an extension of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptReport {
    /// How many messages were read in this run.
    pub checked: u64,
    /// The head after the run (the pin's when nothing new), also when
    /// something failed: links are still followed through failed messages.
    pub head: Head,
    /// Every failing check, in message order.
    pub failures: Vec<Failure>,
}

impl TranscriptReport {
    /// True when every message passed every check.
    pub fn is_valid(&self) -> bool {
        self.failures.is_empty()
    }
}

/// A message's hash: `sha256:` + hex SHA-256 of JCS of the whole message.
pub fn message_hash(message: &Value) -> Result<String, jcs::JcsError> {
    edges::hash(message)
}

/// Verifies a whole transcript from genesis.
pub fn verify_transcript(messages: &[Value], keys: &Keys) -> TranscriptReport {
    verify_run(&Head::genesis(), messages, keys, Check::Genesis).0
}

/// Verifies a whole transcript and, when every envelope reads, replays it
/// through the §5 state machine (the typed messages are read once, for both).
pub fn verify_and_replay(
    messages: &[Value],
    keys: &Keys,
) -> (TranscriptReport, Option<Result<Session, TransitionError>>) {
    let (report, steps) = verify_run(&Head::genesis(), messages, keys, Check::Genesis);
    let steps: Option<Vec<Step>> = steps.into_iter().collect();
    let replay = steps.map(|s| Session::replay_steps(&s));
    (report, replay)
}

/// Verifies the messages after a pinned head (`new` starts at index
/// `pin.count`): O(new messages), independent of what came before.
pub fn verify_since(pin: &Head, new: &[Value], keys: &Keys) -> TranscriptReport {
    let first = if pin.count == 0 {
        Check::Genesis
    } else {
        Check::Pin
    };
    verify_run(pin, new, keys, first).0
}

struct Prepared {
    step: Option<Step>,
    hash: Option<String>,
    preimage: Option<Vec<u8>>,
    signature: Option<Signature>,
    key: Option<VerifyingKey>,
}

fn prepare(index: u64, message: &Value, keys: &Keys, failures: &mut Vec<Failure>) -> Prepared {
    let id = message.get("id").and_then(Value::as_str).map(str::to_owned);
    let fail = |failures: &mut Vec<Failure>, check, detail: String| {
        failures.push(Failure {
            index,
            message_id: id.clone(),
            check,
            detail,
        })
    };
    let step = match Message::from_value(message) {
        Ok(m) => Some(Step::from(&m)),
        Err(e) => {
            fail(failures, Check::Envelope, e.to_string());
            None
        }
    };
    let (hash, preimage) = match jcs::to_string_marking(message, &edges::RULES, "signature") {
        Ok((whole, span)) => {
            let hash = jcs::sha256_prefixed(whole.as_bytes());
            let preimage = match span {
                Some(r) => {
                    let mut bytes = Vec::with_capacity(whole.len() - r.len());
                    bytes.extend_from_slice(&whole.as_bytes()[..r.start]);
                    bytes.extend_from_slice(&whole.as_bytes()[r.end..]);
                    Some(bytes)
                }
                None => None,
            };
            (Some(hash), preimage)
        }
        Err(e) => {
            fail(failures, Check::Canonical, e.to_string());
            (None, None)
        }
    };
    let sender = message.pointer("/from/agent_id").and_then(Value::as_str);
    let key = match sender {
        Some(s) => match keys.get(s) {
            Some(k) => Some(*k),
            None => {
                fail(
                    failures,
                    Check::Key,
                    format!("no key is given for the sender {s:?}"),
                );
                None
            }
        },
        None => {
            fail(
                failures,
                Check::Key,
                "the message names no sender (from.agent_id)".into(),
            );
            None
        }
    };
    let signature = match message.get("signature").and_then(Value::as_str) {
        Some(text) => match keys::parse_signature(text) {
            Ok(s) => Some(s),
            Err(e) => {
                fail(failures, Check::Signature, e.to_string());
                None
            }
        },
        None => {
            fail(
                failures,
                Check::Signature,
                "the message is not signed".into(),
            );
            None
        }
    };
    Prepared {
        step,
        hash,
        preimage,
        signature,
        key,
    }
}

/// Checks the signatures of `items`, returning the indexes (into `items`)
/// that fail: countersign-ed25519-batch's batches, and `verify_strict` one
/// by one wherever a batch is refused.
fn failing_signatures(items: &[(usize, &[u8], Signature, VerifyingKey)]) -> Vec<usize> {
    let batch: Vec<ed25519_batch::Item<'_>> = items
        .iter()
        .map(|i| ed25519_batch::Item {
            message: i.1,
            signature: i.2,
            key: i.3,
        })
        .collect();
    ed25519_batch::failing(&batch, 1)
        .into_iter()
        .map(|i| items[i].0)
        .collect()
}

const PARALLEL_FROM: usize = 512;

fn verify_run(
    pin: &Head,
    messages: &[Value],
    keys: &Keys,
    first_check: Check,
) -> (TranscriptReport, Vec<Option<Step>>) {
    let n = messages.len();
    let threads = if n >= PARALLEL_FROM {
        std::thread::available_parallelism()
            .map_or(1, |p| p.get())
            .min(8)
    } else {
        1
    };
    let chunk = n.div_ceil(threads.max(1)).max(1);
    // Phase 1, per message and in parallel: envelope, canonical bytes, hash,
    // key, signature.
    let prepared: Vec<(Vec<Prepared>, Vec<Failure>, Vec<u64>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = messages
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                scope.spawn(move || {
                    let base = pin.count + (c * chunk) as u64;
                    let mut failures = Vec::new();
                    let prepared: Vec<Prepared> = part
                        .iter()
                        .enumerate()
                        .map(|(i, m)| prepare(base + i as u64, m, keys, &mut failures))
                        .collect();
                    let items: Vec<(usize, &[u8], Signature, VerifyingKey)> = prepared
                        .iter()
                        .enumerate()
                        .filter_map(|(i, p)| {
                            Some((i, p.preimage.as_deref()?, p.signature?, p.key?))
                        })
                        .collect();
                    let bad: Vec<u64> = failing_signatures(&items)
                        .into_iter()
                        .map(|i| base + i as u64)
                        .collect();
                    (prepared, failures, bad)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Vec::new(), Vec::new(), Vec::new()))
            })
            .collect()
    });
    let mut failures: Vec<Failure> = Vec::new();
    let mut bad_signatures: Vec<u64> = Vec::new();
    let mut all: Vec<Prepared> = Vec::with_capacity(n);
    for (p, f, b) in prepared {
        all.extend(p);
        failures.extend(f);
        bad_signatures.extend(b);
    }
    // A thread that panicked lost its messages: fail closed, naming the range.
    if all.len() != n {
        failures.push(Failure {
            index: pin.count,
            message_id: None,
            check: Check::Signature,
            detail: "verification was interrupted; nothing is accepted".into(),
        });
    }
    // Phase 2, in order: links and the session.
    let mut prev = pin.hash.clone();
    let session = messages
        .first()
        .and_then(|m| m.get("session_id"))
        .and_then(Value::as_str);
    for (i, (message, p)) in messages.iter().zip(&all).enumerate() {
        let index = pin.count + i as u64;
        let id = || message.get("id").and_then(Value::as_str).map(str::to_owned);
        let link = message.get("prev_hash").and_then(Value::as_str);
        if link != Some(prev.as_str()) {
            let check = if i == 0 { first_check } else { Check::Link };
            let expected = match check {
                Check::Genesis => "the genesis hash".to_owned(),
                Check::Pin => format!("the pinned head {} (message {})", prev, pin.count),
                _ => format!("the hash of message {} ({prev})", index - 1),
            };
            failures.push(Failure {
                index,
                message_id: id(),
                check,
                detail: format!(
                    "prev_hash is {}, not {expected}",
                    link.map_or("missing".to_owned(), |l| l.to_owned())
                ),
            });
        }
        if i > 0 && message.get("session_id").and_then(Value::as_str) != session {
            failures.push(Failure {
                index,
                message_id: id(),
                check: Check::Session,
                detail: format!(
                    "session_id differs from the transcript's ({})",
                    session.unwrap_or("none")
                ),
            });
        }
        if bad_signatures.binary_search(&index).is_ok() {
            let sender = message
                .pointer("/from/agent_id")
                .and_then(Value::as_str)
                .unwrap_or("?");
            failures.push(Failure {
                index,
                message_id: id(),
                check: Check::Signature,
                detail: format!("the signature does not verify under the key of {sender:?}"),
            });
        }
        prev = p.hash.clone().unwrap_or_default();
    }
    failures.sort_by_key(|f| f.index);
    let report = TranscriptReport {
        checked: n as u64,
        head: Head {
            count: pin.count + n as u64,
            hash: prev,
        },
        failures,
    };
    (report, all.into_iter().map(|p| p.step).collect())
}
