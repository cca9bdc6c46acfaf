//! The ANP surface: the four ANP/0.1 endpoints of SPEC §6 (plus
//! `?after=SEQ` on the log) under `/api/agent/v1`, and discovery (RFC-003).

pub mod discovery;

use anp::api::{OpenSessionRequest, OpenSessionResponse, RegisterRequest, SessionStatus};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::support::{self, after_param, json_text, Registration, Signed, SignedUnspent};
use crate::auth::Agent;
use crate::body::parse_json;
use crate::error::ApiError;
use crate::{service, Host};

/// The agent API's routes, relative to `/api/agent/v1`.
pub fn router() -> Router<Host> {
    Router::new()
        .route("/register", post(register))
        .route("/sessions", post(open_session))
        .route("/sessions/{id}", get(status))
        .route("/sessions/{id}/log", get(log))
        .route("/sessions/{id}/events", post(submit_event))
        .method_not_allowed_fallback(super::method_not_allowed)
}

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
    signed: Signed<Agent>,
) -> Result<impl IntoResponse, ApiError> {
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
    signed: SignedUnspent<Agent>,
) -> Result<impl IntoResponse, ApiError> {
    let log = service::submit_event(
        &host,
        signed.checked,
        &id,
        &signed.incoming.body,
        signed.now,
    )
    .await?;
    let doc = service::log_json_of(&host, log)?;
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
    signed: Signed<Agent>,
) -> Result<impl IntoResponse, ApiError> {
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
    signed: Signed<Agent>,
) -> Result<impl IntoResponse, ApiError> {
    let after = after_param(&signed.incoming.uri)?;
    service::owned_session(&host, &signed.principal, &id).await?;
    let doc = support::log_text(&host, &id, after).await?;
    Ok(json_text(doc))
}
