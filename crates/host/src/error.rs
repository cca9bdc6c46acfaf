//! Typed errors and their mapping to each surface's error shape. Handlers
//! never build a response body by hand: they return an [`ApiError`] (ANP's
//! shape: the agent API, discovery, the approver API) or a [`GateError`]
//! (the gate's), which a [`DomainError`] becomes in exactly one place per
//! surface ([`From`] below).

use anp::api::{codes, ErrorBody};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use countersign_host_api::gate::{self as wire, GateErrorBody, GateErrorDetail, GATE_PROTOCOL};

use crate::domain::DomainError;
use crate::store::StoreError;

/// The one message of the uniform refusal (SPEC §3, §7): the same bytes for
/// every authentication failure, unknown agent, session or org handle.
pub const UNIFORM_REFUSAL_MESSAGE: &str =
    "The request is not authorized: its signature, agent, session or target was not accepted.";

/// Errors opening or migrating the host's storage and keys.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The store failed to open, migrate or answer.
    #[error("database: {0}")]
    Store(#[from] StoreError),
    /// The configuration is unusable (a bad URL, a missing key path).
    #[error("{0}")]
    Config(String),
    /// Reading or writing a file failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The platform key file could not be read.
    #[error("platform key file: {0}")]
    Key(String),
    /// An admin operation was refused.
    #[error("{0}")]
    Admin(#[from] crate::admin::AdminError),
}

/// An error answered over HTTP, in the ANP shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The uniform refusal.
    #[error("unauthorized")]
    Unauthorized,
    /// Malformed or schema-violating input; the message names what.
    #[error("{0}")]
    Invalid(String),
    /// The body exceeds the limit.
    #[error("request body larger than {0} bytes")]
    TooLarge(usize),
    /// A rate limit was hit or the limiter is unavailable.
    #[error("{0}")]
    RateLimited(String),
    /// A refusal with its own ANP code and HTTP status.
    #[error("{message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// ANP error code.
        code: &'static str,
        /// Sentence naming what was wrong.
        message: String,
    },
    /// Something broke inside the host; details go to the log, not the wire.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// A refusal with a status and code.
    pub fn refused(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::Refused {
            status,
            code,
            message: message.into(),
        }
    }

    /// The status and the body, as sent.
    pub fn parts(&self) -> (StatusCode, ErrorBody) {
        let (status, code, message) = match self {
            ApiError::Unauthorized => {
                (401, codes::UNAUTHORIZED, UNIFORM_REFUSAL_MESSAGE.to_owned())
            }
            ApiError::Invalid(m) => (400, codes::INVALID_REQUEST, m.clone()),
            ApiError::TooLarge(n) => (
                413,
                codes::PAYLOAD_TOO_LARGE,
                format!("The request body is larger than the {n} bytes this host accepts."),
            ),
            ApiError::RateLimited(m) => (429, codes::RATE_LIMITED, m.clone()),
            ApiError::Refused {
                status,
                code,
                message,
            } => (*status, *code, message.clone()),
            ApiError::Internal(_) => (
                500,
                codes::INTERNAL,
                "The host failed to process the request; nothing was stored.".to_owned(),
            ),
        };
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, ErrorBody::new(code, message))
    }
}

impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> ApiError {
        use DomainError as D;
        match e {
            D::Unauthorized => ApiError::Unauthorized,
            D::KeyRevoked(m) => {
                ApiError::refused(401, countersign_host_api::approver::KEY_REVOKED, m)
            }
            D::KeyAlreadyRotated(m) => {
                ApiError::refused(409, countersign_host_api::approver::KEY_ALREADY_ROTATED, m)
            }
            D::Invalid(m) => ApiError::Invalid(m),
            D::BadProof(m) => ApiError::refused(400, codes::BAD_PROOF, m),
            D::BadSignature(m) => ApiError::refused(400, codes::BAD_SIGNATURE, m),
            D::NotVerified(m) => ApiError::refused(403, codes::NOT_VERIFIED, m),
            D::BadEnrollmentCode(m) => ApiError::refused(403, codes::BAD_ENROLLMENT_CODE, m),
            D::SessionClosed(m) => ApiError::refused(409, codes::SESSION_CLOSED, m),
            D::NoStandingOffer(m) => ApiError::refused(409, codes::NO_STANDING_OFFER, m),
            D::NotStanding(m) => ApiError::refused(409, codes::NOT_STANDING, m),
            D::OfferExpired(m) => ApiError::refused(409, codes::OFFER_EXPIRED, m),
            D::Policy(m) => ApiError::refused(409, codes::POLICY, m),
            D::DecisionConflict(m) => ApiError::refused(409, codes::DECISION_CONFLICT, m),
            D::RateLimited(m) => ApiError::RateLimited(m),
            D::Internal(m) => ApiError::Internal(m),
            // The gate's own refusals (the approver API never plans them,
            // but a mapping is total).
            D::UnknownProtocol(m) => ApiError::refused(400, wire::codes::UNKNOWN_PROTOCOL, m),
            D::TranscriptInvalid(t) => {
                ApiError::refused(400, wire::codes::TRANSCRIPT_INVALID, t.message)
            }
            D::SessionExists { message, .. } => {
                ApiError::refused(409, wire::codes::SESSION_EXISTS, message)
            }
            D::HeadMismatch { message, .. } => {
                ApiError::refused(409, wire::codes::HEAD_MISMATCH, message)
            }
            D::AmountMismatch(m) => ApiError::refused(400, wire::codes::AMOUNT_MISMATCH, m),
            D::RequestConflict(m) => ApiError::refused(409, wire::codes::REQUEST_CONFLICT, m),
            D::NotFound(m) => ApiError::refused(404, wire::codes::NOT_FOUND, m),
        }
    }
}

/// An error answered by the gate, in its shape: the code and sentence of
/// an [`ApiError`], the session's protocol, and for a refused transcript
/// the message and the check, for a head that does not match the head held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateError {
    /// Status, code and sentence.
    pub error: ApiError,
    /// The session's protocol (`gate` before one is known).
    pub protocol: String,
    /// `transcript_invalid`: the failing message's 0-based position.
    pub index: Option<u64>,
    /// `transcript_invalid`: its id.
    pub message_id: Option<String>,
    /// `transcript_invalid`: the check it failed.
    pub check: Option<String>,
    /// `head_mismatch`, `session_exists`: the head the host holds.
    pub head: Option<wire::Head>,
}

impl GateError {
    /// The error with the protocol of the session (or agent) it concerns.
    pub fn in_protocol(mut self, protocol: &str) -> GateError {
        self.protocol = protocol.to_owned();
        self
    }
}

impl From<ApiError> for GateError {
    fn from(error: ApiError) -> GateError {
        GateError {
            error,
            protocol: GATE_PROTOCOL.to_owned(),
            index: None,
            message_id: None,
            check: None,
            head: None,
        }
    }
}

impl From<DomainError> for GateError {
    fn from(e: DomainError) -> GateError {
        let (index, message_id, check, head) = match &e {
            DomainError::TranscriptInvalid(t) => (
                Some(t.index),
                t.message_id.clone(),
                Some(t.check.clone()),
                None,
            ),
            DomainError::SessionExists { head, .. } | DomainError::HeadMismatch { head, .. } => {
                (None, None, None, Some(head.clone()))
            }
            _ => (None, None, None, None),
        };
        GateError {
            index,
            message_id,
            check,
            head,
            ..GateError::from(ApiError::from(e))
        }
    }
}

impl From<StoreError> for GateError {
    fn from(e: StoreError) -> GateError {
        GateError::from(ApiError::from(e))
    }
}

impl IntoResponse for GateError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self.error {
            tracing::error!(%detail, "internal error");
        }
        let (status, body) = self.error.parts();
        // The uniform refusal is the same bytes whatever was refused: it
        // never names the protocol of a session the caller may not see.
        let protocol = if self.error == ApiError::Unauthorized {
            GATE_PROTOCOL.to_owned()
        } else {
            self.protocol
        };
        let body = GateErrorBody {
            error: GateErrorDetail {
                code: body.error.code,
                message: body.error.message,
                index: self.index,
                message_id: self.message_id,
                check: self.check,
                head: self.head,
            },
            protocol,
        };
        (status, axum::Json(body)).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::Internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(%detail, "internal error");
        }
        let (status, body) = self.parts();
        (status, axum::Json(body)).into_response()
    }
}
