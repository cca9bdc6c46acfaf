//! Typed errors and their one mapping to the ANP error shape. Handlers never
//! build a response body by hand: they return an [`ApiError`], which a
//! [`DomainError`] becomes in exactly one place ([`From`] below).

use anp::api::{codes, ErrorBody};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

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
        }
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
