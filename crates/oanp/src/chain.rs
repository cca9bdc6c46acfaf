//! The session chain: every envelope's `prev_hash` is `sha256:` + hex
//! SHA-256 of the canonical bytes of the whole envelope before it.
//!
//! [`verify_log`] checks a whole log against a receipt as the publisher's
//! verifier does (RECEIPTS.md, check 7); [`SessionChain`] builds or follows a
//! chain one envelope at a time, from its start or from a pinned head.
//!
//! What the chain proves: only the signed `chain_head` ties the log to the
//! arbiter's signature, and it names the envelope *before* the last (the
//! one before `session.agree`). The receipt's `chain {head, length}` is not
//! signed, so the last envelope is covered by nothing the arbiter signed.

use serde_json::{Map, Value};

use crate::canonical::{commit, CanonicalError};
use crate::equality::same;
use crate::text::shown;

/// Why a log does not hold against a receipt, in the publisher's order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainFailure {
    /// The log is empty or holds something other than objects.
    #[error("the log holds no envelopes, or something other than envelope objects")]
    NotEnvelopes,
    /// An envelope's `prev_hash` is not the hash of the one before it.
    #[error("envelope {index} ({kind}) carries a prev_hash that is not the hash of the envelope before it")]
    Unlinked {
        /// Its 0-based position.
        index: usize,
        /// Its `type`, as written and made safe to show (or `no type`).
        kind: String,
    },
    /// An envelope holds a number canonical JSON cannot carry.
    #[error("envelope {index} cannot be canonicalised (an integer beyond ±(2^53 − 1)), so it has no hash")]
    NotCanonical {
        /// Its 0-based position.
        index: usize,
    },
    /// Every link holds, but the last envelope is not the head the receipt names.
    #[error("the links hold, but the last envelope's hash is not the head the receipt names")]
    HeadMismatch,
    /// The receipt names another length.
    #[error("the log holds {actual} envelopes where the receipt names {claimed}")]
    LengthMismatch {
        /// What the receipt says, as written and made safe to show.
        claimed: String,
        /// How many the log holds.
        actual: usize,
    },
    /// The signed payload carries no chain head, so nothing ties the log to the signature.
    #[error("the signed payload names no chain head, so nothing ties the log to the signature")]
    NoSignedHead,
    /// The signed head is not the hash of the envelope before the last.
    #[error("the signed chain head is not the hash of the envelope before the last one (the one before session.agree)")]
    SignedHeadNotBeforeAgree,
}

/// Checks `log` as RECEIPTS.md's chain check does: every envelope links to
/// the one before it; when the receipt names a non-empty `chain`, the last
/// envelope is its `head` and the log holds `length` envelopes; and the
/// signed `chain_head` (required) is the hash of the envelope before the
/// last, the one before `session.agree`. Returns the number of envelopes.
///
/// `claim` is the receipt's `chain` object, `signed_session` the
/// `signed_payload.session` object, as received.
pub fn verify_log(
    log: &[Value],
    claim: Option<&Map<String, Value>>,
    signed_session: Option<&Map<String, Value>>,
) -> Result<usize, ChainFailure> {
    if log.is_empty() || !log.iter().all(Value::is_object) {
        return Err(ChainFailure::NotEnvelopes);
    }
    let hash = |index: usize| commit(&log[index]).map_err(|_| ChainFailure::NotCanonical { index });
    for (index, envelope) in log.iter().enumerate().skip(1) {
        let expected = hash(index - 1)?;
        if !same(envelope.get("prev_hash"), Some(&Value::String(expected))) {
            let kind = match envelope.get("type") {
                Some(Value::String(kind)) => shown(kind),
                Some(other) => shown(&other.to_string()),
                None => "no type".to_owned(),
            };
            return Err(ChainFailure::Unlinked { index, kind });
        }
    }
    let head = hash(log.len() - 1)?;
    let before_agree = if log.len() >= 2 {
        Some(hash(log.len() - 2)?)
    } else {
        None
    };
    // As the publisher reads it: an empty `chain` object names nothing.
    if let Some(claim) = claim.filter(|c| !c.is_empty()) {
        if !same(claim.get("head"), Some(&Value::String(head))) {
            return Err(ChainFailure::HeadMismatch);
        }
        if !same(claim.get("length"), Some(&Value::from(log.len()))) {
            return Err(ChainFailure::LengthMismatch {
                claimed: claim
                    .get("length")
                    .map_or("no".to_owned(), |v| shown(&v.to_string())),
                actual: log.len(),
            });
        }
    }
    let signed_head = signed_session
        .and_then(|s| s.get("chain_head"))
        .and_then(Value::as_str);
    let Some(signed_head) = signed_head else {
        return Err(ChainFailure::NoSignedHead);
    };
    if before_agree.as_deref() != Some(signed_head) {
        return Err(ChainFailure::SignedHeadNotBeforeAgree);
    }
    Ok(log.len())
}

/// Why an envelope cannot join a [`SessionChain`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Not a JSON object.
    #[error("an envelope is a JSON object")]
    NotAnObject,
    /// Its `prev_hash` is not the chain's head.
    #[error("its prev_hash {found} is not the chain's head {head}")]
    Unlinked {
        /// The head it should name.
        head: String,
        /// What it names, as written (or `nothing`).
        found: String,
    },
    /// It cannot be canonicalised, so it has no hash.
    #[error("it cannot be canonicalised: {0}")]
    NotCanonical(#[from] CanonicalError),
}

/// A session chain followed one envelope at a time: from its first envelope
/// (whose `prev_hash`, like the publisher, it does not check), or from a
/// pinned head when only the envelopes after it are at hand.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionChain {
    head: Option<String>,
    length: u64,
}

impl SessionChain {
    /// An empty chain.
    pub fn new() -> Self {
        Self::default()
    }

    /// A chain known up to `head` after `length` envelopes (a pin).
    pub fn from_pin(head: String, length: u64) -> Self {
        Self {
            head: Some(head),
            length,
        }
    }

    /// The hash of the last envelope, once there is one.
    pub fn head(&self) -> Option<&str> {
        self.head.as_deref()
    }

    /// How many envelopes the chain holds.
    pub fn len(&self) -> u64 {
        self.length
    }

    /// True before the first envelope.
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The `prev_hash` the next envelope must carry (`None` for the first).
    pub fn next_prev_hash(&self) -> Option<&str> {
        self.head()
    }

    /// Appends `envelope` when it links to the head; returns its hash.
    pub fn push(&mut self, envelope: &Value) -> Result<&str, LinkError> {
        if !envelope.is_object() {
            return Err(LinkError::NotAnObject);
        }
        if let Some(head) = &self.head {
            let found = envelope.get("prev_hash");
            if found.and_then(Value::as_str) != Some(head.as_str()) {
                return Err(LinkError::Unlinked {
                    head: head.clone(),
                    found: found.map_or("nothing".to_owned(), Value::to_string),
                });
            }
        }
        let hash = commit(envelope)?;
        self.length += 1;
        Ok(self.head.insert(hash))
    }
}
