//! The approver API v1 (DESIGN "The approver API"): enroll, summary, log,
//! decisions. Every route but enroll is signed like an ANP request.

use anp::api::{DecisionResponse, EnrollRequest};
use axum::extract::{Path, State};
use axum::http::header::{ETAG, IF_NONE_MATCH};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::support::{self, after_param, json_text, Incoming, Registration};
use crate::auth::Approver;
use crate::body::parse_json;
use crate::domain::decisions::Received;
use crate::error::ApiError;
use crate::{service, Host};

/// `POST /enroll`: unsigned, rate limited; a one-time code makes an approver.
pub async fn enroll(
    State(host): State<Host>,
    Registration(incoming): Registration,
) -> Result<impl IntoResponse, ApiError> {
    let req: EnrollRequest = parse_json(&incoming.body, "enroll")?;
    let response = service::enroll(&host, &req, host.clock().now()).await?;
    Ok((StatusCode::CREATED, Json(response)))
}

/// `GET /summary`: every session's head and pending decisions. The answer
/// carries an `ETag`; a request whose `If-None-Match` names it gets `304 Not
/// Modified` and no body, so a console polling an unchanged host parses
/// nothing (the request is still signed and spends its nonce).
pub async fn summary(State(host): State<Host>, incoming: Incoming) -> Result<Response, ApiError> {
    // An unreadable header matches nothing, so the full answer is sent.
    let known = incoming
        .headers
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let signed = support::signed::<Approver>(&host, incoming).await?;
    let summary = service::summary(&host, &signed.principal).await?;
    let text = serde_json::to_string(&summary).map_err(|e| ApiError::Internal(e.to_string()))?;
    let tag = etag_of(&text);
    if known.is_some_and(|header| etag_matches(&header, &tag)) {
        return Ok((StatusCode::NOT_MODIFIED, [(ETAG, tag)]).into_response());
    }
    Ok(([(ETAG, tag)], json_text(text)).into_response())
}

/// The entity tag of an answer: a hash of its exact bytes, so any
/// change a console could see (a head, a status, a pending approval) changes
/// it, and nothing else does.
fn etag_of(text: &str) -> String {
    let hash = anp::canonical::sha256_hex(text.as_bytes());
    format!("\"{}\"", &hash[..32])
}

/// Whether an `If-None-Match` header names `tag` (RFC 9110 §13.1.2: a list of
/// tags, weak ones compared weakly, or `*`).
pub fn etag_matches(header: &str, tag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == tag
    })
}

/// `GET /sessions/:id/log?after=SEQ`.
pub async fn log(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let after = after_param(&incoming.uri)?;
    let signed = support::signed::<Approver>(&host, incoming).await?;
    service::visible_session(&host, &signed.principal, &id).await?;
    let doc = support::log_text(&host, &id, after).await?;
    Ok(json_text(doc))
}

/// `POST /sessions/:id/decisions`: approve, decline or counter (idempotent).
pub async fn decide(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let signed = support::signed::<Approver>(&host, incoming).await?;
    let received = Received {
        body: &signed.incoming.body,
        headers: &signed.headers,
    };
    let (decision_id, decided) =
        service::decide(&host, &signed.principal, &id, received, signed.now).await?;
    let log = service::log_document(&host, &id, 0).await?;
    Ok(Json(DecisionResponse {
        decision_id,
        outcome: decided.outcome,
        detail: decided.detail,
        log,
    }))
}
