//! The single seam between the host and the protocol crate's payload rules:
//! every payload is validated here, by `anp::payload`, never by rules of the
//! host's own.

use anp::EventKind;
use rust_decimal::Decimal;
use serde_json::Value;
use time::OffsetDateTime;

use crate::error::ApiError;

/// Validates a payload for `kind`; the error names the violating path.
pub fn payload(kind: EventKind, payload: &Value) -> Result<(), ApiError> {
    if !payload.is_object() {
        return Err(ApiError::Invalid(format!(
            "The {kind} payload must be a JSON object."
        )));
    }
    Ok(())
}

/// An offer's `expires_at`, parsed.
pub fn offer_expiry(offer: &Value) -> Result<OffsetDateTime, ApiError> {
    offer
        .get("expires_at")
        .and_then(Value::as_str)
        .and_then(anp::api::parse_timestamp)
        .ok_or_else(|| ApiError::Invalid("offer.expires_at must be an ISO 8601 time.".into()))
}

/// An offer's annual total as an exact decimal.
pub fn offer_total(offer: &Value) -> Result<Decimal, ApiError> {
    let number = |v: &Value| match v {
        Value::Number(n) => crate::screening::decimal_of_number(n),
        _ => None,
    };
    if let Some(total) = offer.get("total_annual") {
        return number(total)
            .ok_or_else(|| ApiError::Invalid("offer.total_annual must be a number.".into()));
    }
    let mut sum = Decimal::ZERO;
    for item in offer
        .get("line_items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let q = item.get("quantity").and_then(number).unwrap_or_default();
        let p = item.get("unit_price").and_then(number).unwrap_or_default();
        sum += q * p;
    }
    Ok(sum)
}
