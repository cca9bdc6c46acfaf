//! Typed errors, each with a stable `code` for programs and a sentence a
//! person can read, so the shell forwards them without interpreting them.

use serde::{Deserialize, Serialize};

use crate::views::FieldError;

/// What failed in any engine call other than a decision.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The data directory could not be found or created.
    #[error("The data directory {path} cannot be used: {detail}.")]
    DataDir {
        /// The directory.
        path: String,
        /// Why.
        detail: String,
    },
    /// The local database failed.
    #[error("The local database failed: {0}.")]
    Store(#[from] rusqlite::Error),
    /// A file could not be read or written.
    #[error("A local file could not be read or written: {0}.")]
    Io(#[from] std::io::Error),
    /// The approver key file is unreadable or damaged.
    #[error("The approver key file is damaged: {0}.")]
    KeyFile(String),
    /// The desktop's secret store, or the passphrase, did not give the key.
    #[error("{0}.")]
    KeyStore(String),
    /// The key is locked: nothing is signed until it is unlocked.
    #[error("{0}")]
    Locked(String),
    /// The key is kept nowhere yet (no secret store answered and no
    /// passphrase was chosen): nothing is enrolled with it, since the
    /// enrollment would be lost with the key when the console closes.
    #[error("Choose a passphrase for your approver key first (Settings \u{2192} Approver key): no desktop secret store answered, and a key kept nowhere is lost when the console closes, and every enrollment with it.")]
    KeyNotKept,
    /// Something asked for does not exist locally.
    #[error("No {what} {id} is known to this console.")]
    NotFound {
        /// `host`, `session`, `offer`.
        what: &'static str,
        /// Its id.
        id: String,
    },
    /// An argument from the UI is malformed.
    #[error("{0}")]
    InvalidInput(String),
    /// The host could not be reached.
    #[error("The host at {url} cannot be reached: {detail}.")]
    Unreachable {
        /// The host.
        url: String,
        /// Why.
        detail: String,
    },
    /// The host answered with an ANP error.
    #[error("The host refused: {message} ({code}).")]
    HostRefused {
        /// The ANP error code.
        code: String,
        /// The host's message.
        message: String,
    },
    /// The host answered something that is not the protocol.
    #[error("The host answered something that is not its protocol: {0}.")]
    Protocol(String),
    /// Plain HTTP to a host off this machine, without the person's lab
    /// override: the enrollment code and the first pin of the platform key
    /// would cross the network in the clear. Nothing was sent.
    #[error(
        "{url} is plain HTTP to another machine: the enrollment code and the host's key would cross the network unencrypted, where anyone on the way could read the code or swap the key. Use the host's https:// address; for a lab host on a network you trust, tick \u{201c}Allow plain HTTP to this host (lab only)\u{201d}."
    )]
    PlainHttp {
        /// The address refused.
        url: String,
    },
    /// The host is already connected.
    #[error("This console is already connected to {0}.")]
    AlreadyConnected(String),
}

impl EngineError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::DataDir { .. } => "data_dir",
            EngineError::Store(_) => "store",
            EngineError::Io(_) => "io",
            EngineError::KeyFile(_) => "key_file",
            EngineError::KeyStore(_) => "key_store",
            EngineError::Locked(_) => "locked",
            EngineError::KeyNotKept => "key_not_kept",
            EngineError::NotFound { .. } => "not_found",
            EngineError::InvalidInput(_) => "invalid_input",
            EngineError::Unreachable { .. } => "unreachable",
            EngineError::HostRefused { .. } => "host_refused",
            EngineError::Protocol(_) => "protocol",
            EngineError::PlainHttp { .. } => "plain_http",
            EngineError::AlreadyConnected(_) => "already_connected",
        }
    }
}

/// Why a decision was not made.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// The offer's expiry passed.
    #[error("This offer expired at {expires_at}; it can no longer be approved.")]
    Expired {
        /// When it expired, as the person reads it ("Tue 1 Dec, 09:53").
        expires_at: String,
    },
    /// A decline without a reason.
    #[error("A decline needs a reason the counterparty will read.")]
    ReasonRequired,
    /// A counter without an offer, or with an invalid one.
    #[error("The counter-offer is not valid: {}.", summarize(.errors))]
    InvalidCounter {
        /// Every problem.
        errors: Vec<FieldError>,
    },
    /// The offer is not (or no longer) waiting for a decision.
    #[error("This offer is no longer waiting for a decision.")]
    NotPending,
    /// A newer offer replaced it (host's `not_standing`).
    #[error("A newer offer replaced this one; decide on the latest offer instead.")]
    NotStanding,
    /// The session log failed verification: nothing is signed on it.
    #[error(
        "This session's log failed verification; decisions on it are refused until it is resolved."
    )]
    Disputed,
    /// The host's screening blocked outbound content.
    #[error("The host's confidentiality screening blocked this: {0}")]
    Screening(String),
    /// The host's approval policy refused.
    #[error("The host's approval policy refused this: {0}")]
    Policy(String),
    /// The session is closed or accepted.
    #[error("This session is closed; nothing more can be decided in it.")]
    SessionClosed,
    /// The organization's chain of approvals does not let this person take
    /// this decision now (as the host last said); nothing was signed.
    #[error("Not yours to decide now: {0}. Nothing was signed or sent.")]
    NotYourTurn(String),
    /// The host's admin revoked this console's approver key (a lost
    /// laptop); the host's sentence says when, and how to enroll again.
    #[error("{0}")]
    KeyRevoked(String),
    /// This approver's key was refused.
    #[error("The host refuses this console's approver key, so it accepts no decision from it: its admin may have revoked the key (as for a lost laptop). Ask the admin for a new enrollment code and connect to the host again.")]
    Unauthorized,
    /// The key is locked (never unlocked, locked by hand, or idle too
    /// long): unlock, then the same decision carries on.
    #[error(
        "The approver key is locked. Unlock it to sign this decision; nothing was signed or sent."
    )]
    Locked,
    /// The amount is above the person's own limit: it asks to unlock again.
    #[error("This decision is for {amount}, above your limit for signing without confirming: unlock again to sign it. Nothing was signed or sent.")]
    ConfirmAgain {
        /// The proposal's amount, with its currency.
        amount: String,
    },
    /// The host could not be reached; the decision may be retried safely.
    #[error("The host cannot be reached: {0}. The decision was kept and can be retried safely.")]
    Unreachable(String),
    /// The decision cannot be signed from what the host and the record say
    /// (for example the policy threshold a receipt must name is missing).
    #[error("This decision cannot be signed: {0}")]
    CannotSign(String),
    /// Any other host refusal.
    #[error("The host refused the decision: {message} ({code}).")]
    Refused {
        /// ANP code.
        code: String,
        /// Host's words.
        message: String,
    },
    /// A local failure.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

fn summarize(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}

impl DecideError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            DecideError::Expired { .. } => "offer_expired",
            DecideError::ReasonRequired => "reason_required",
            DecideError::InvalidCounter { .. } => "invalid_counter",
            DecideError::NotPending => "not_pending",
            DecideError::NotStanding => "not_standing",
            DecideError::Disputed => "disputed",
            DecideError::Screening(_) => "screening",
            DecideError::Policy(_) => "policy",
            DecideError::SessionClosed => "session_closed",
            DecideError::NotYourTurn(_) => "not_your_turn",
            DecideError::Unauthorized => "unauthorized",
            DecideError::KeyRevoked(_) => "key_revoked",
            DecideError::Locked => "locked",
            DecideError::ConfirmAgain { .. } => "confirm_again",
            DecideError::Unreachable(_) => "unreachable",
            DecideError::CannotSign(_) => "cannot_sign",
            DecideError::Refused { .. } => "refused",
            DecideError::Engine(e) => e.code(),
        }
    }
}

/// The `CommandError { code, message }` the shell rejects a command with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct CommandError {
    /// Machine-readable code.
    pub code: String,
    /// A sentence a person can read.
    pub message: String,
}

impl From<&EngineError> for CommandError {
    fn from(e: &EngineError) -> Self {
        CommandError {
            code: e.code().to_owned(),
            message: e.to_string(),
        }
    }
}

impl From<EngineError> for CommandError {
    fn from(e: EngineError) -> Self {
        CommandError::from(&e)
    }
}

impl From<&DecideError> for CommandError {
    fn from(e: &DecideError) -> Self {
        CommandError {
            code: e.code().to_owned(),
            message: e.to_string(),
        }
    }
}

impl From<DecideError> for CommandError {
    fn from(e: DecideError) -> Self {
        CommandError::from(&e)
    }
}

impl From<rusqlite::Error> for DecideError {
    fn from(e: rusqlite::Error) -> Self {
        DecideError::Engine(EngineError::Store(e))
    }
}
