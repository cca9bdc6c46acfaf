//! The four ANP/0.1 endpoints of SPEC §6, plus `?after=SEQ` on the log.

use anp::api::{
    OpenSessionRequest, OpenSessionResponse, RegisterRequest, SessionStatus, SubmitEventRequest,
};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;

use super::support::{self, after_param, json_text, Incoming, Registration};
use crate::auth::Agent;
use crate::body::parse_json;
use crate::error::ApiError;
use crate::ratelimit::Scope;
use crate::{domain, store, Host};

/// `POST /register`: unauthenticated, rate limited per IP.
pub async fn register(
    State(host): State<Host>,
    Registration(incoming): Registration,
) -> Result<impl IntoResponse, ApiError> {
    let req: RegisterRequest = parse_json(&incoming.body, "register")?;
    let (response, created) =
        support::in_tx(&host, move |conn, _, now| domain::register(conn, &req, now)).await?;
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
    let response = support::signed(
        &host,
        incoming,
        |conn, host, agent: &Agent, incoming, _, now| {
            let req: OpenSessionRequest = parse_json(&incoming.body, "open session")?;
            let session = domain::open_session(conn, &host.inner.platform_key, agent, &req, now)?;
            let log = store::log_document(
                conn,
                &session,
                host.platform_public_key(),
                host.platform_fingerprint(),
                0,
            )?;
            let buyer_envelope = log
                .events
                .get(1)
                .map(|e| e.payload.clone())
                .unwrap_or_default();
            Ok(OpenSessionResponse {
                session_id: session.id,
                buyer_envelope,
                log,
                protocol: anp::PROTOCOL.to_owned(),
            })
        },
    )
    .await?;
    Ok((StatusCode::CREATED, Json(response)))
}

/// `POST /sessions/:id/events`: appends a vendor event (signed). Answers
/// `{log, protocol}` ([`anp::api::AppendResponse`]), as the reference host does.
pub async fn submit_event(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let doc = support::signed(
        &host,
        incoming,
        move |conn, host, agent: &Agent, incoming, _, now| {
            let mut session = domain::owned_session(conn, &agent.id, &id)?;
            host.inner.limiter.check(Scope::Session, &session.id)?;
            let req: SubmitEventRequest = parse_json(&incoming.body, "event")?;
            domain::submit_event(conn, agent, &mut session, &req, now)?;
            support::log_text(conn, host, &session, 0)
        },
    )
    .await?;
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
    let status = support::signed(&host, incoming, move |conn, _, agent: &Agent, _, _, _| {
        let session = domain::owned_session(conn, &agent.id, &id)?;
        Ok(SessionStatus {
            protocol: anp::PROTOCOL.to_owned(),
            session: store::info(&session).into(),
        })
    })
    .await?;
    Ok(Json(status))
}

/// `GET /sessions/:id/log[?after=SEQ]`: the verifiable log document.
pub async fn log(
    State(host): State<Host>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Result<impl IntoResponse, ApiError> {
    let after = after_param(&incoming.uri)?;
    let doc = support::signed(
        &host,
        incoming,
        move |conn, host, agent: &Agent, _, _, _| {
            let session = domain::owned_session(conn, &agent.id, &id)?;
            support::log_text(conn, host, &session, after)
        },
    )
    .await?;
    Ok(json_text(doc))
}
