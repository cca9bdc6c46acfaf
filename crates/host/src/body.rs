//! Reading a request body under the size limit, answering 413 in the ANP
//! shape (axum's own rejection would not be), and parsing JSON bodies.

use axum::body::{Body, Bytes};
use axum::http::HeaderMap;

use crate::domain::DomainError;
use crate::error::ApiError;

/// The whole body, or [`ApiError::TooLarge`] when it exceeds `max` bytes
/// (checked against `content-length` first, then while reading).
pub async fn read_limited(headers: &HeaderMap, body: Body, max: usize) -> Result<Bytes, ApiError> {
    if let Some(len) = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        if len > max as u64 {
            return Err(ApiError::TooLarge(max));
        }
    }
    axum::body::to_bytes(body, max)
        .await
        .map_err(|_| ApiError::TooLarge(max))
}

/// Parses a JSON body into `T`, naming what was wrong when it does not fit.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    what: &str,
) -> Result<T, DomainError> {
    serde_json::from_slice(bytes)
        .map_err(|e| DomainError::Invalid(format!("The {what} body is not valid: {e}.")))
}
