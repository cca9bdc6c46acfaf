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

use std::borrow::Cow;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::ops::Range;

use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::json::{Json, Node};
use crate::message::{self, GENESIS_HASH};
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
    run_values(&Head::genesis(), messages, keys).0
}

/// Verifies a whole transcript and, when every envelope reads, replays it
/// through the §5 state machine (the typed messages are read once, for both).
pub fn verify_and_replay(
    messages: &[Value],
    keys: &Keys,
) -> (TranscriptReport, Option<Result<Session, TransitionError>>) {
    let (report, steps) = run_values(&Head::genesis(), messages, keys);
    (report, replay(steps))
}

/// Verifies the messages after a pinned head (`new` starts at index
/// `pin.count`): O(new messages), independent of what came before.
pub fn verify_since(pin: &Head, new: &[Value], keys: &Keys) -> TranscriptReport {
    run_values(pin, new, keys).0
}

/// The replay of a run's steps, when every envelope read.
pub(crate) fn replay(steps: Vec<Option<Step>>) -> Option<Result<Session, TransitionError>> {
    let steps: Option<Vec<&Step>> = steps.iter().map(Option::as_ref).collect();
    steps.map(Session::replay_steps)
}

fn run_values(
    pin: &Head,
    messages: &[Value],
    keys: &Keys,
) -> (TranscriptReport, Vec<Option<Step>>) {
    let run = verify_run(pin, messages, None, |index, m: &Value, failures| {
        let canonical =
            jcs::to_string_marking(m, &edges::RULES, "signature").map(|(text, span)| Canonical {
                text: Cow::Owned(text),
                signature: span,
            });
        Some(prepare(index, m, canonical, keys, failures))
    });
    // A parsed message is never unreadable; were it, nothing is accepted.
    run.unwrap_or_else(|| interrupted(pin, messages.len()))
}

/// The report of a run that could not finish: nothing is accepted.
fn interrupted(pin: &Head, n: usize) -> (TranscriptReport, Vec<Option<Step>>) {
    let report = TranscriptReport {
        checked: n as u64,
        head: pin.clone(),
        failures: vec![Failure {
            index: pin.count,
            message_id: None,
            check: Check::Signature,
            detail: "verification was interrupted; nothing is accepted".into(),
        }],
    };
    (report, vec![None; n])
}

/// Verifies messages given as their JSON text (`new` starts at index
/// `pin.count`). A text that is already its canonical form, as hosts and
/// agents store what they signed, is read in place: its envelope from a tree
/// borrowed from it, its hash of the text itself, its signature over the text
/// with the `signature` member cut out; any other is parsed and canonicalized
/// as [`verify_transcript`] does. The report is [`verify_since`]'s on the
/// parsed messages. `None` when a text is not JSON (as a whole document it
/// would not read). `threads` caps the threads used (default every core).
pub(crate) fn verify_texts(
    pin: &Head,
    new: &[&RawValue],
    keys: &Keys,
    threads: Option<NonZeroUsize>,
) -> Option<(TranscriptReport, Vec<Option<Step>>)> {
    verify_run(pin, new, threads, |index, raw: &&RawValue, failures| {
        let text: &str = raw.get();
        if let Some(node) = Node::read_canonical(text) {
            let canonical = Ok(Canonical {
                text: Cow::Borrowed(text),
                signature: jcs::member_span(text, "signature"),
            });
            return Some(prepare(index, &node, canonical, keys, failures));
        }
        let value: Value = serde_json::from_str(text).ok()?;
        let canonical =
            jcs::to_string_marking(&value, &edges::RULES, "signature").map(|(text, span)| {
                Canonical {
                    text: Cow::Owned(text),
                    signature: span,
                }
            });
        Some(prepare(index, &value, canonical, keys, failures))
    })
}

/// A message's canonical text, and the span of its top-level `signature`
/// member (cut out, the rest is what the signature covers).
struct Canonical<'a> {
    text: Cow<'a, str>,
    signature: Option<Range<usize>>,
}

/// What phase 1 learns of one message (its canonical text may borrow from
/// the file; nothing borrows from the tree it was read from).
struct Prepared<'a> {
    step: Option<Step>,
    hash: Option<String>,
    canonical: Option<Canonical<'a>>,
    signature: Option<Signature>,
    key: Option<&'a VerifyingKey>,
    id: Option<String>,
    prev_hash: Option<String>,
    session_id: Option<String>,
    sender: Option<String>,
}

/// One message's checks that need no other message: envelope, canonical
/// form and hash, sender's key, signature encoding (failures in that order).
fn prepare<'c, J: Json>(
    index: u64,
    message: &J,
    canonical: Result<Canonical<'c>, jcs::JcsError>,
    keys: &'c Keys,
    failures: &mut Vec<Failure>,
) -> Prepared<'c> {
    let text = |name: &str| message.get(name).and_then(Json::as_str);
    let id = text("id");
    let fail = |failures: &mut Vec<Failure>, check, detail: String| {
        failures.push(Failure {
            index,
            message_id: id.map(str::to_owned),
            check,
            detail,
        })
    };
    let step = match message::check(message) {
        Ok(checked) => Some(Step::from_checked(&checked)),
        Err(e) => {
            fail(failures, Check::Envelope, e.to_string());
            None
        }
    };
    let (hash, canonical) = match canonical {
        Ok(c) => (Some(jcs::sha256_prefixed(c.text.as_bytes())), Some(c)),
        Err(e) => {
            fail(failures, Check::Canonical, e.to_string());
            (None, None)
        }
    };
    let sender = message
        .get("from")
        .and_then(|f| f.get("agent_id"))
        .and_then(Json::as_str);
    let key = match sender {
        Some(s) => match keys.get(s) {
            Some(k) => Some(k),
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
    let signature = match text("signature") {
        Some(t) => match keys::parse_signature(t) {
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
        canonical,
        signature,
        key,
        id: id.map(str::to_owned),
        prev_hash: text("prev_hash").map(str::to_owned),
        session_id: text("session_id").map(str::to_owned),
        sender: sender.map(str::to_owned),
    }
}

/// A message's signature for the batch verifier: over the canonical text
/// without its `signature` member, in two pieces (nothing copied).
struct Signed<'p> {
    canonical: &'p Canonical<'p>,
    signature: Signature,
    key: &'p VerifyingKey,
}

impl ed25519_batch::Signed for Signed<'_> {
    fn key(&self) -> &VerifyingKey {
        self.key
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn message(&self, sink: &mut dyn FnMut(&[u8])) {
        let text = self.canonical.text.as_bytes();
        match &self.canonical.signature {
            Some(cut) => {
                sink(&text[..cut.start]);
                sink(&text[cut.end..]);
            }
            None => sink(text),
        }
    }
}

/// One share's phase 1: every message prepared, then its signatures
/// checked in batches. `None` when a message is unreadable.
struct Share<'a> {
    prepared: Vec<Prepared<'a>>,
    failures: Vec<Failure>,
    /// Indexes (in the transcript) of the signatures that do not verify.
    bad: Vec<u64>,
}

/// The smallest piece of a transcript a core takes (pieces shrink towards
/// it at the end of a run): batches smaller than this cost more per
/// signature (`ed25519_batch::BATCH`).
const MIN_PIECE: usize = 256;

/// How a share ended: done, a message that is not JSON, or a panic (a bug:
/// nothing is accepted).
enum Outcome<'a> {
    Done(Share<'a>),
    Unreadable,
    Interrupted,
}

fn verify_run<'a, T: Sync>(
    pin: &Head,
    messages: &'a [T],
    threads: Option<NonZeroUsize>,
    prepare_one: impl Fn(u64, &'a T, &mut Vec<Failure>) -> Option<Prepared<'a>> + Sync,
) -> Option<(TranscriptReport, Vec<Option<Step>>)> {
    let n = messages.len();
    let first_check = if pin.count == 0 {
        Check::Genesis
    } else {
        Check::Pin
    };
    // Phase 1, per message and on every core: envelope, canonical text,
    // hash, key, signature; then the piece's signatures in batches. Pieces
    // are taken as cores come free, large first (see `parallel::map_guided`).
    let threads = parallel::threads_for(n, threads);
    let shares = parallel::map_guided(messages, threads, MIN_PIECE, |share, offset| {
        let base = pin.count + offset as u64;
        let work = || {
            let mut failures = Vec::new();
            let mut prepared = Vec::with_capacity(share.len());
            for (i, m) in share.iter().enumerate() {
                match prepare_one(base + i as u64, m, &mut failures) {
                    Some(p) => prepared.push(p),
                    None => return Outcome::Unreadable,
                }
            }
            let (positions, items): (Vec<u64>, Vec<Signed<'_>>) = prepared
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    Some((
                        base + i as u64,
                        Signed {
                            canonical: p.canonical.as_ref()?,
                            signature: p.signature?,
                            key: p.key?,
                        },
                    ))
                })
                .unzip();
            let bad = ed25519_batch::failing(&items, 1)
                .into_iter()
                .map(|i| positions[i])
                .collect();
            Outcome::Done(Share {
                prepared,
                failures,
                bad,
            })
        };
        vec![std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
            .unwrap_or(Outcome::Interrupted)]
    });
    let mut failures: Vec<Failure> = Vec::new();
    let mut bad_signatures: Vec<u64> = Vec::new();
    // The shares' messages are read where they lie, in order (not moved
    // into one vector: a copy of every message's facts).
    let mut done: Vec<Vec<Prepared<'a>>> = Vec::with_capacity(shares.len());
    for share in shares {
        match share {
            Outcome::Done(s) => {
                done.push(s.prepared);
                failures.extend(s.failures);
                bad_signatures.extend(s.bad);
            }
            Outcome::Unreadable => return None,
            // A share that panicked: fail closed, accepting nothing.
            Outcome::Interrupted => return Some(interrupted(pin, n)),
        }
    }
    // Phase 2, in order: links and the session.
    let mut prev: Cow<'_, str> = Cow::Borrowed(pin.hash.as_str());
    let mut all = done.iter().flatten();
    let session = done
        .iter()
        .flatten()
        .next()
        .and_then(|p| p.session_id.as_deref());
    for (i, p) in all.by_ref().enumerate() {
        let index = pin.count + i as u64;
        let id = || p.id.as_deref().map(str::to_owned);
        let link = p.prev_hash.as_deref();
        if link != Some(&*prev) {
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
                detail: format!("prev_hash is {}, not {expected}", link.unwrap_or("missing")),
            });
        }
        if i > 0 && p.session_id.as_deref() != session {
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
            failures.push(Failure {
                index,
                message_id: id(),
                check: Check::Signature,
                detail: format!(
                    "the signature does not verify under the key of {:?}",
                    p.sender.as_deref().unwrap_or("?")
                ),
            });
        }
        prev = Cow::Borrowed(p.hash.as_deref().unwrap_or_default());
    }
    failures.sort_by_key(|f| f.index);
    let report = TranscriptReport {
        checked: n as u64,
        head: Head {
            count: pin.count + n as u64,
            hash: prev.into_owned(),
        },
        failures,
    };
    let steps = done.into_iter().flatten().map(|p| p.step).collect();
    Some((report, steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading a message in place rests on this: text `jcs::is_canonical`
    /// accepts (JavaScript's rules) is its canonical text under Concordia's
    /// rules too (exact integers, `-0` refused).
    #[test]
    fn canonical_text_is_canonical_under_concordias_rules() {
        let mut texts = vec![
            "-0".to_owned(),
            "-0.0".to_owned(),
            "0".to_owned(),
            "1e+21".to_owned(),
            "1.5".to_owned(),
            "[1,-2,0.1]".to_owned(),
        ];
        for digits in 1..=22 {
            for lead in ["1", "9", "-1", "-9"] {
                let n = format!("{lead}{}", "0".repeat(digits - 1));
                let m = format!("{lead}{}", "7".repeat(digits - 1));
                texts.push(n);
                texts.push(m);
            }
        }
        texts.push("9007199254740993".into());
        texts.push("18446744073709551615".into());
        texts.push("18446744073709551616".into());
        texts.push("-9223372036854775808".into());
        let mut accepted = 0;
        for text in &texts {
            let doc = format!("{{\"n\":{text}}}");
            if jcs::is_canonical(&doc) {
                let value: Value = serde_json::from_str(&doc).unwrap();
                assert_eq!(
                    edges::canonical(&value).as_deref(),
                    Ok(doc.as_str()),
                    "{doc}"
                );
                accepted += 1;
            }
        }
        assert!(accepted > 40, "{accepted}");
    }
}
