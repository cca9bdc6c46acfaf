//! A transcript document as the gate carries it, `{"messages": [...],
//! "keys": {party id: base64url key}}`, verified from its bytes: what
//! `countersign-verify` (and any other verifier of files) calls.
//!
//! The document is read without a tree of it: each message stays the text
//! it was, and a message already in canonical form (what agents sign and
//! hosts store) is checked in place ([`crate::transcript`]); any other is
//! parsed and canonicalized. Messages are read and their signatures
//! checked on every core.
//!
//! The verdict is exactly that of [`crate::verify_and_replay`] (or, from a
//! pin, [`crate::verify_since`]) on the parsed document. A document the
//! in-place reader does not take (a member named twice, say) is read the
//! ordinary way, and one that is not JSON is refused with the ordinary
//! reader's error.

use std::num::NonZeroUsize;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::session::{Session, TransitionError};
use crate::transcript::{self, Head, Keys, KeysError, TranscriptReport};

/// How to verify a document.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Check only the messages after this head (count, hash); without it,
    /// the whole transcript, replayed through the §5 state machine.
    pub pin: Option<Head>,
    /// Use at most this many threads (default: every core).
    pub threads: Option<NonZeroUsize>,
}

/// The verdict on one transcript document.
#[derive(Debug)]
pub struct DocumentVerdict {
    /// Links and signatures, every failing message and check.
    pub report: TranscriptReport,
    /// Without a pin, when every envelope reads: the state machine's replay.
    pub replay: Option<Result<Session, TransitionError>>,
    /// How many messages the document holds.
    pub messages: usize,
    /// True when the messages were read from the text in place; false when
    /// the document was parsed whole instead. The verdict is the same.
    pub read_in_place: bool,
}

/// Why a document could not be verified at all (as opposed to failing).
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The bytes are not JSON (`serde_json`'s error, with line and column).
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// `messages` is not an array.
    #[error("messages must be an array of Concordia messages")]
    Messages,
    /// The `keys` map cannot be used.
    #[error(transparent)]
    Keys(#[from] KeysError),
    /// The pin counts more messages than the document holds.
    #[error("the transcript holds {messages} messages, fewer than the {pinned} pinned: history was truncated")]
    Truncated {
        /// Messages in the document.
        messages: usize,
        /// Messages the pin counts.
        pinned: u64,
    },
}

/// A transcript document read with its messages left as text (each one
/// borrowed from the bytes), the first step of [`verify_document_bytes`].
/// Reading is independent of everything else a caller does with the bytes,
/// so a caller that is still finding out what a file is can have it read
/// on another core meanwhile ([`DocumentParts::read`], then
/// [`verify_document_parts`]).
#[derive(Deserialize)]
pub struct DocumentParts<'a> {
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
    keys: Value,
}

impl<'a> DocumentParts<'a> {
    /// Reads `bytes` as `{"messages": [...], "keys": {...}}`; `None` when
    /// they do not read so (verifying the bytes then says why).
    pub fn read(bytes: &'a [u8]) -> Option<DocumentParts<'a>> {
        serde_json::from_slice(bytes).ok()
    }
}

/// Verifies the transcript document in `bytes`.
pub fn verify_document_bytes(
    bytes: &[u8],
    options: &VerifyOptions,
) -> Result<DocumentVerdict, DocumentError> {
    match DocumentParts::read(bytes) {
        Some(parts) => verify_document_parts(bytes, &parts, options),
        None => ordinary(bytes, options),
    }
}

/// [`verify_document_bytes`] for `bytes` already read into `parts`
/// ([`DocumentParts::read`] of the same bytes): the same verdict.
pub fn verify_document_parts(
    bytes: &[u8],
    parts: &DocumentParts<'_>,
    options: &VerifyOptions,
) -> Result<DocumentVerdict, DocumentError> {
    verify_borrowed(bytes, &parts.messages, &parts.keys, options)
}

/// The in-place path over the document's messages, left as text.
fn verify_borrowed(
    bytes: &[u8],
    messages: &[&RawValue],
    keys: &Value,
    options: &VerifyOptions,
) -> Result<DocumentVerdict, DocumentError> {
    let keys = Keys::from_json(keys)?;
    let start = pinned_start(options, messages.len())?;
    let (before, new) = messages.split_at(start);
    // The trusted prefix is not verified, but a whole-document reader would
    // refuse a message there that is not JSON, so must this.
    if !before.iter().all(|m| readable(m.get())) {
        return ordinary(bytes, options);
    }
    let pin = options.pin.clone().unwrap_or_else(Head::genesis);
    let Some((report, steps)) = transcript::verify_texts(&pin, new, &keys, options.threads) else {
        return ordinary(bytes, options);
    };
    Ok(DocumentVerdict {
        report,
        replay: options
            .pin
            .is_none()
            .then(|| transcript::replay(steps))
            .flatten(),
        messages: messages.len(),
        read_in_place: true,
    })
}

/// Where verification starts: after the pin, which must be within the document.
fn pinned_start(options: &VerifyOptions, messages: usize) -> Result<usize, DocumentError> {
    match &options.pin {
        None => Ok(0),
        Some(pin) => usize::try_from(pin.count)
            .ok()
            .filter(|&n| n <= messages)
            .ok_or(DocumentError::Truncated {
                messages,
                pinned: pin.count,
            }),
    }
}

/// True when a whole-document reader reads this message's text.
fn readable(text: &str) -> bool {
    jcs::is_canonical(text) || serde_json::from_str::<Value>(text).is_ok()
}

/// The ordinary path: the whole document parsed, then the messages as values.
fn ordinary(bytes: &[u8], options: &VerifyOptions) -> Result<DocumentVerdict, DocumentError> {
    let doc: Value = serde_json::from_slice(bytes)?;
    let keys = Keys::from_json(&doc["keys"])?;
    let messages = doc["messages"].as_array().ok_or(DocumentError::Messages)?;
    let start = pinned_start(options, messages.len())?;
    let (report, replay) = match &options.pin {
        None => transcript::verify_and_replay(messages, &keys),
        Some(pin) => (
            transcript::verify_since(pin, &messages[start..], &keys),
            None,
        ),
    };
    Ok(DocumentVerdict {
        report,
        replay,
        messages: messages.len(),
        read_in_place: false,
    })
}
