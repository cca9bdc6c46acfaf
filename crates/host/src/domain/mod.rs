//! The rules of the host, pure of HTTP and of storage: each function takes
//! what was read and returns either a [`Commit`](crate::store::Commit) for
//! the store to apply or a [`DomainError`] naming what was refused. Each
//! surface maps a `DomainError` to its own response shape (the ANP error
//! body for the agent and approver APIs).

pub mod anex;
pub mod authority;
pub mod decisions;
pub mod delegation;
pub mod enrollment;
pub mod gate;
pub mod negotiation;
pub mod rotation;

pub use countersign_host_api::gate::Head;

use crate::store::StoreError;

/// Which message of a mirrored transcript failed which check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptRefusal {
    /// Its 0-based position in the whole transcript.
    pub index: u64,
    /// Its `id`, when it has one.
    pub message_id: Option<String>,
    /// The check (`signature`, `link`, `genesis`, `session`, `state`, …).
    pub check: String,
    /// `message <index> (<id>): <what was found>`.
    pub message: String,
}

impl TranscriptRefusal {
    /// A refusal of message `index` for `check`, with what was found.
    pub fn new(index: u64, message_id: Option<String>, check: &str, detail: &str) -> Self {
        let message = match &message_id {
            Some(id) => format!("message {index} ({id}): {detail}"),
            None => format!("message {index}: {detail}"),
        };
        TranscriptRefusal {
            index,
            message_id,
            check: check.to_owned(),
            message,
        }
    }
}

/// Why the host refused or failed a request, in the domain's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// The uniform refusal: an authentication failure, an unknown or revoked
    /// principal, an unknown or foreign session, an unknown or disabled org.
    #[error("not authorized")]
    Unauthorized,
    /// A request signed by a revoked approver key (told only to its holder).
    #[error("{0}")]
    KeyRevoked(String),
    /// A key rotation whose old key was retired in favour of another key,
    /// or revoked: nothing changed.
    #[error("{0}")]
    KeyAlreadyRotated(String),
    /// Malformed or rule-breaking input; the sentence names what.
    #[error("{0}")]
    Invalid(String),
    /// A proof of possession does not verify.
    #[error("{0}")]
    BadProof(String),
    /// An authorship or approval signature does not verify.
    #[error("{0}")]
    BadSignature(String),
    /// A live target needs an agent verified by a person.
    #[error("{0}")]
    NotVerified(String),
    /// An enrollment code is unknown, spent or expired.
    #[error("{0}")]
    BadEnrollmentCode(String),
    /// The session is closed or accepted.
    #[error("{0}")]
    SessionClosed(String),
    /// There is no standing offer (or pending decision) to answer.
    #[error("{0}")]
    NoStandingOffer(String),
    /// The offer answered is no longer the standing one.
    #[error("{0}")]
    NotStanding(String),
    /// The offer's `expires_at` has passed.
    #[error("{0}")]
    OfferExpired(String),
    /// The approval policy refuses it (the same approver twice).
    #[error("{0}")]
    Policy(String),
    /// A decision id was used for a different decision.
    #[error("{0}")]
    DecisionConflict(String),
    /// A rate limit was hit, or the limiter cannot decide (fails closed).
    #[error("{0}")]
    RateLimited(String),
    /// Gate: a protocol the host does not speak, or not the agent's.
    #[error("{0}")]
    UnknownProtocol(String),
    /// Gate: a mirrored message fails verification; nothing was stored.
    #[error("{}", .0.message)]
    TranscriptInvalid(TranscriptRefusal),
    /// Gate: the session exists already (with the head the host holds).
    #[error("{message}")]
    SessionExists {
        /// The sentence.
        message: String,
        /// The stored head.
        head: Head,
    },
    /// Gate: a batch does not extend the stored head.
    #[error("{message}")]
    HeadMismatch {
        /// The sentence.
        message: String,
        /// The stored head.
        head: Head,
    },
    /// Gate: the stated amount differs from the offer's.
    #[error("{0}")]
    AmountMismatch(String),
    /// Gate: a request id reused with another body, or a second open
    /// request for one message.
    #[error("{0}")]
    RequestConflict(String),
    /// Gate: no such request in a session of this agent.
    #[error("{0}")]
    NotFound(String),
    /// Something broke inside the host; details go to the log.
    #[error("internal: {0}")]
    Internal(String),
}

impl From<StoreError> for DomainError {
    fn from(e: StoreError) -> DomainError {
        DomainError::Internal(e.to_string())
    }
}

/// Reads a stored event's JSON text.
pub fn parse_event(text: &str) -> Result<anp::Event, DomainError> {
    serde_json::from_str(text)
        .map_err(|e| DomainError::Internal(format!("stored event unreadable: {e}")))
}

/// Serializes an event as it is stored and answered.
pub fn stored(event: &anp::Event) -> Result<crate::store::StoredEvent, DomainError> {
    Ok(crate::store::StoredEvent {
        seq: event.seq,
        event_hash: event.event_hash.clone(),
        body: serde_json::to_string(event).map_err(|e| DomainError::Internal(e.to_string()))?,
    })
}
