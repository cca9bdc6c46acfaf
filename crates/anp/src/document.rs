//! Whole-document verification from the bytes of a log document, as fast
//! as the machine allows: what `anp verify` (and any other verifier CLI)
//! calls.
//!
//! The document is parsed without building what verification does not
//! need: events borrow their strings from the text, and each payload stays
//! the text it was (`RawValue`). A payload already in canonical form, which
//! is what hosts store, is hashed as it stands; any other is parsed and
//! canonicalized as [`crate::canonical`] does. Payload hashes, event checks
//! and signature batches are spread over every core.
//!
//! The verdict is exactly [`crate::verify_log_from_pin`]'s on the parsed
//! [`LogDocument`] (the same checks, in the same order, with the same
//! sentences, through the same code in `chain.rs`). Anything the fast reader
//! does not take, for example a string field written with escapes, is read
//! the ordinary way instead, and a document that is not one is refused with
//! the ordinary reader's error.

use std::num::NonZeroUsize;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::chain::{after_pin, verify_fields, EventFields, KeyRing, VerifyReport};
use crate::event::{Actor, ChainClaim, ChainHead, EventKind, LogDocument, LogKeys, SessionInfo};
use crate::keys::KeyError;
use crate::signed::PROTOCOL;

/// How to verify a document.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Check only the events after this head, which the log must hold.
    pub pin: Option<ChainHead>,
    /// Use at most this many threads (default: every core).
    pub threads: Option<NonZeroUsize>,
}

/// The verdict on one log document, with what a report shows beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentVerdict {
    /// The session the log belongs to.
    pub session_id: String,
    /// The head the document's `session.chain_head` claims.
    pub claimed_head: String,
    /// How many events the document holds.
    pub event_count: usize,
    /// The verdict.
    pub report: VerifyReport,
    /// True when the events were read in place from the text; false when
    /// the document was read into [`LogDocument`] instead (a string field
    /// written with escapes, for example). The verdict is the same.
    pub read_in_place: bool,
}

/// Why a document could not be verified at all (as opposed to failing).
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The bytes are not a log document; the error is the ordinary reader's
    /// (`serde_json` into [`LogDocument`]), with line and column.
    #[error(transparent)]
    Parse(#[from] serde_json::Error),
    /// The document speaks another protocol.
    #[error("protocol is {0:?}; this verifies ANP/0.1 logs")]
    Protocol(String),
    /// A key in the document's `keys` block is not a valid Ed25519 key.
    #[error("keys: {0}")]
    Keys(#[from] KeyError),
}

/// Verifies the log document in `bytes` with the keys it names, on every
/// core.
pub fn verify_document_bytes(bytes: &[u8]) -> Result<DocumentVerdict, DocumentError> {
    verify_document_bytes_with(bytes, &VerifyOptions::default())
}

/// [`verify_document_bytes`] with a pin and a thread limit.
pub fn verify_document_bytes_with(
    bytes: &[u8],
    options: &VerifyOptions,
) -> Result<DocumentVerdict, DocumentError> {
    let Ok(doc) = serde_json::from_slice::<BorrowedDocument<'_>>(bytes) else {
        return ordinary(bytes, options);
    };
    if doc.protocol != PROTOCOL {
        return Err(DocumentError::Protocol(doc.protocol));
    }
    let ring = KeyRing::from_keys_block(&doc.keys)?;
    let genesis = ChainHead::genesis();
    let pin = options.pin.as_ref().unwrap_or(&genesis);
    let verdict = |report| DocumentVerdict {
        session_id: doc.session.id.clone(),
        claimed_head: doc.session.chain_head.clone(),
        event_count: doc.events.len(),
        report,
        read_in_place: true,
    };
    let start = match after_pin(pin, doc.events.len(), |i| {
        (doc.events[i].seq, doc.events[i].event_hash)
    }) {
        Ok(start) => start,
        Err(rewrite) => return Ok(verdict(*rewrite)),
    };
    let (before, events) = doc.events.split_at(start);
    // The trusted prefix is not hashed, but the ordinary reader would refuse
    // the whole document for a payload it cannot read, so must this.
    let threads = parallel::threads_for(doc.events.len(), options.threads);
    let readable = parallel::map_shares(before, threads, |share, _| {
        vec![share.iter().all(|e| readable(e.payload))]
    });
    let payloads: Vec<Option<[u8; 32]>> = parallel::map_shares(events, threads, |share, _| {
        share.iter().map(|e| payload_digest(e.payload)).collect()
    });
    let payloads = payloads.into_iter().collect::<Option<Vec<_>>>();
    let (true, Some(payloads)) = (readable.iter().all(|ok| *ok), payloads) else {
        // A payload the ordinary reader refuses: so is the document.
        return ordinary(bytes, options);
    };
    let fields: Vec<EventFields<'_>> = events.iter().map(BorrowedEvent::fields).collect();
    let report = verify_fields(&doc.session.id, pin, &fields, &payloads, &ring, threads);
    Ok(verdict(report))
}

/// The ordinary path: the whole document into [`LogDocument`], its error if
/// it is not one, and [`crate::verify_log_from_pin`] if it is.
fn ordinary(bytes: &[u8], options: &VerifyOptions) -> Result<DocumentVerdict, DocumentError> {
    let doc: LogDocument = serde_json::from_slice(bytes)?;
    if !doc.is_anp_0_1() {
        return Err(DocumentError::Protocol(doc.protocol));
    }
    let ring = KeyRing::from_log_keys(&doc)?;
    let genesis = ChainHead::genesis();
    let pin = options.pin.as_ref().unwrap_or(&genesis);
    let report = crate::verify_log_from_pin(&doc.session.id, pin, &doc.events, &ring);
    Ok(DocumentVerdict {
        session_id: doc.session.id,
        claimed_head: doc.session.chain_head,
        event_count: doc.events.len(),
        report,
        read_in_place: false,
    })
}

/// SHA-256 of the canonical JSON of a payload: of its text when that is
/// canonical already, else of the canonical form of the value it parses to
/// (`None` when it does not parse, as the ordinary reader would refuse it).
fn payload_digest(payload: &RawValue) -> Option<[u8; 32]> {
    let text = payload.get();
    if jcs::is_canonical(text) {
        return Some(jcs::sha256(text.as_bytes()));
    }
    let value: Value = serde_json::from_str(text).ok()?;
    Some(jcs::sha256(jcs::to_string(&value).as_bytes()))
}

/// True when the ordinary reader reads this payload.
fn readable(payload: &RawValue) -> bool {
    let text = payload.get();
    jcs::is_canonical(text) || serde_json::from_str::<Value>(text).is_ok()
}

/// [`LogDocument`] with the events borrowed from the text.
#[derive(Deserialize)]
struct BorrowedDocument<'a> {
    protocol: String,
    session: SessionInfo,
    #[allow(dead_code)]
    chain: ChainClaim,
    #[serde(default)]
    keys: LogKeys,
    #[serde(borrow)]
    events: Vec<BorrowedEvent<'a>>,
}

/// [`crate::Event`], reading the same members with the same rules, its
/// strings borrowed (a string with escapes is not taken: the document is
/// then read the ordinary way) and its payload left as text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BorrowedEvent<'a> {
    seq: u64,
    actor: Actor,
    kind: EventKind,
    #[serde(borrow)]
    payload: &'a RawValue,
    payload_hash: &'a str,
    prev_hash: &'a str,
    event_hash: &'a str,
    #[serde(default, borrow)]
    signature: Option<&'a str>,
    #[serde(default, borrow)]
    signer: Option<&'a str>,
    at: &'a str,
}

impl<'a> BorrowedEvent<'a> {
    fn fields(&self) -> EventFields<'a> {
        EventFields {
            seq: self.seq,
            actor: self.actor,
            kind: self.kind,
            payload_hash: self.payload_hash,
            prev_hash: self.prev_hash,
            event_hash: self.event_hash,
            signature: self.signature,
            signer: self.signer,
            at: self.at,
        }
    }
}
