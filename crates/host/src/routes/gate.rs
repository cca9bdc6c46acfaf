//! The gate v1 (docs/gate-api.md) under `/api/gate/v1`: the org's own
//! agents enroll, mirror their transcripts and ask for a person. Every route
//! but enroll is signed like an ANP request; errors are in the gate's shape,
//! naming the session's protocol.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use countersign_host_api::gate::{
    AppendMessages, CreateSession, GateEnrollRequest, PlainOutcomeReport, PlainRequest,
    RequestDecision,
};

use super::support::{Registration, Signed};
use crate::auth::GateAgent;
use crate::body::parse_json;
use crate::error::{ApiError, GateError};
use crate::service::gate as service;
use crate::service::plain;
use crate::surface::GateShape;
use crate::Host;

/// The gate's routes, relative to `/api/gate/v1`.
pub fn router() -> Router<Host> {
    Router::new()
        .route("/enroll", post(enroll))
        .route("/sessions", post(create_session))
        .route("/sessions/{id}", get(session))
        .route("/sessions/{id}/messages", post(append))
        .route("/sessions/{id}/requests", post(request_decision))
        .route("/sessions/{id}/requests/{request_id}", get(request))
        .route("/plain", post(plain_ask))
        .route("/plain/{request_id}", get(plain_read))
        .route("/plain/{request_id}/outcome", post(plain_report))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
}

async fn not_found() -> GateError {
    ApiError::refused(404, "not_found", "No such endpoint on this host's gate.").into()
}

async fn method_not_allowed() -> GateError {
    ApiError::refused(
        405,
        "method_not_allowed",
        "This endpoint does not accept that HTTP method.",
    )
    .into()
}

/// A refusal about something of this agent's, in its protocol.
fn of(agent: &GateAgent) -> impl Fn(crate::domain::DomainError) -> GateError + '_ {
    move |e| GateError::from(e).in_protocol(&agent.protocol)
}

/// `POST /enroll`: unsigned, rate limited; a one-time code makes a gate agent.
pub async fn enroll(
    State(host): State<Host>,
    Registration(incoming): Registration<GateShape>,
) -> Result<impl IntoResponse, GateError> {
    let req: GateEnrollRequest = parse_json(&incoming.body, "enroll")?;
    let own = incoming.own_authorities(&host);
    let response = service::enroll(&host, &req, &own, host.clock().now()).await?;
    Ok((StatusCode::CREATED, Json(response)))
}

/// `POST /sessions`: a transcript from its first message, stored only once
/// it verifies.
pub async fn create_session(
    State(host): State<Host>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let req: CreateSession = parse_json(&signed.incoming.body, "session").map_err(of(agent))?;
    let head = service::create_session(&host, agent, &req, &signed.incoming.body, signed.now)
        .await
        .map_err(of(agent))?;
    Ok((StatusCode::CREATED, Json(head)))
}

/// `POST /sessions/:id/messages`: a batch that extends the stored head exactly.
pub async fn append(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let req: AppendMessages = parse_json(&signed.incoming.body, "messages").map_err(of(agent))?;
    let head = service::append(&host, agent, &id, &req, signed.now)
        .await
        .map_err(of(agent))?;
    Ok(Json(head))
}

/// `GET /sessions/:id`: the stored head and the transcript's state.
pub async fn session(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let view = service::session(&host, agent, &id)
        .await
        .map_err(of(agent))?;
    Ok(Json(view))
}

/// `POST /sessions/:id/requests`: ask for a decision (idempotent on `request_id`).
pub async fn request_decision(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let req: RequestDecision = parse_json(&signed.incoming.body, "request").map_err(of(agent))?;
    let (answer, created) =
        service::ask(&host, agent, &id, &req, &signed.incoming.body, signed.now)
            .await
            .map_err(of(agent))?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(answer)))
}

/// `GET /sessions/:id/requests/:request_id`: the decision, with its receipts.
pub async fn request(
    State(host): State<Host>,
    Path((id, request_id)): Path<(String, String)>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let status = service::request(&host, agent, &id, &request_id, signed.now)
        .await
        .map_err(of(agent))?;
    Ok(Json(status))
}

/// `POST /plain`: plain terms, read strictly, written into the thread's
/// log and asked about (idempotent on `request_id`).
pub async fn plain_ask(
    State(host): State<Host>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let req: PlainRequest = parse_json(&signed.incoming.body, "plain terms").map_err(of(agent))?;
    let (answer, created) = plain::ask(&host, agent, &req, &signed.incoming.body, signed.now)
        .await
        .map_err(of(agent))?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(answer)))
}

/// `GET /plain/:request_id`: the request as it stands, with its receipts.
pub async fn plain_read(
    State(host): State<Host>,
    Path(request_id): Path<String>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let answer = plain::read(&host, agent, &request_id, signed.now)
        .await
        .map_err(of(agent))?;
    Ok(Json(answer))
}

/// `POST /plain/:request_id/outcome`: what the agent did, with the breach
/// if it breaks the decision.
pub async fn plain_report(
    State(host): State<Host>,
    Path(request_id): Path<String>,
    signed: Signed<GateAgent>,
) -> Result<impl IntoResponse, GateError> {
    let agent = &signed.principal;
    let req: PlainOutcomeReport =
        parse_json(&signed.incoming.body, "outcome").map_err(of(agent))?;
    let answer = plain::report(&host, agent, &request_id, &req, signed.now)
        .await
        .map_err(of(agent))?;
    Ok(Json(answer))
}
