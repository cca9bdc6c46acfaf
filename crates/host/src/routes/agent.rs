//! The four ANP/0.1 endpoints of SPEC §6, plus `?after=SEQ` on the log.

use anp::api::{OpenSessionRequest, OpenSessionResponse, RegisterRequest, SessionStatus};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;

use super::support::Incoming;
use super::support::{self, after_param, json_text, Registration};
use crate::auth::Agent;
use crate::body::parse_json;
use crate::error::ApiError;
use crate::{service, Host};

/// `POST /register`: unauthenticated, rate limited per IP.
pub async fn register(
    State(host): State<Host>,
    Registration(incoming): Registration,
) -> Result<impl IntoResponse, ApiError> {
    let req: RegisterRequest = parse_json(&incoming.body, "register")?;
    let (response, created) = service::register(&host, &req, host.clock().now()).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(response)))
}

/// `POST /sessions`: opens a session (signed).
pub async fn open_session(
    State(host): State<Host>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let signed = support::signed::<Agent>(&host, incoming).await?;
    let req: OpenSessionRequest = parse_json(&signed.incoming.body, "open session")?;
    let session_id = service::open_session(&host, &signed.principal, &req, signed.now).await?;
    let log = service::log_document(&host, &session_id, 0).await?;
    let buyer_envelope = log
        .events
        .get(1)
        .map(|e| e.payload.clone())
        .unwrap_or_default();
    let response = OpenSessionResponse {
        session_id,
        buyer_envelope,
        log,
        protocol: anp::PROTOCOL.to_owned(),
    };
    Ok((StatusCode::CREATED, Json(response)))
}

/// `POST /sessions/:id/events`: appends a vendor event (signed). Answers
/// `{log, protocol}` ([`anp::api::AppendResponse`]), as the reference host does.
pub async fn submit_event(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let signed = support::signed::<Agent>(&host, incoming).await?;
    service::submit_event(
        &host,
        &signed.principal,
        &id,
        &signed.incoming.body,
        signed.now,
    )
    .await?;
    let doc = support::log_text(&host, &id, 0).await?;
    // The log is already JSON text; wrap it without parsing it again.
    Ok(json_text(format!(
        "{{\"log\":{doc},\"protocol\":\"{}\"}}",
        anp::PROTOCOL
    )))
}

/// `GET /sessions/:id`: `event_count` and `chain_head` for cheap polling
/// (plus the session's state, our addition).
pub async fn status(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let signed = support::signed::<Agent>(&host, incoming).await?;
    let session = service::owned_session(&host, &signed.principal, &id).await?;
    Ok(Json(SessionStatus {
        protocol: anp::PROTOCOL.to_owned(),
        session: service::info(&session).into(),
    }))
}

/// `GET /sessions/:id/log[?after=SEQ]`: the verifiable log document.
pub async fn log(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let after = after_param(&incoming.uri)?;
    let signed = support::signed::<Agent>(&host, incoming).await?;
    service::owned_session(&host, &signed.principal, &id).await?;
    let doc = support::log_text(&host, &id, after).await?;
    Ok(json_text(doc))
}
