//! The single seam between the host and the protocol crate's payload rules:
//! every payload is validated here, by `anp::payload::parse_payload`, and
//! every total computed by `anp::money`, never by rules of the host's own.

use anp::payload::{parse_payload, Offer, Payload};
use anp::EventKind;
use serde_json::Value;
use time::OffsetDateTime;

use crate::domain::DomainError;

/// Validates a payload for `kind`; the error names every violating path.
pub fn payload(kind: EventKind, payload: &Value) -> Result<Payload, DomainError> {
    parse_payload(kind, payload)
        .map_err(|e| DomainError::Invalid(format!("The {kind} payload is invalid: {e}")))
}

/// Reads an offer (for `offer` and `counter_offer` payloads).
pub fn offer(value: &Value) -> Result<Offer, DomainError> {
    Offer::parse(value).map_err(|e| DomainError::Invalid(format!("The offer is invalid: {e}")))
}

/// An offer's `expires_at`, parsed.
pub fn offer_expiry(value: &Value) -> Result<OffsetDateTime, DomainError> {
    offer(value)?
        .expires_at_utc()
        .ok_or_else(|| DomainError::Invalid("offer.expires_at must be an ISO 8601 time.".into()))
}
