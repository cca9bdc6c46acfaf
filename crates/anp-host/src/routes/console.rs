//! The approver API v1 (DESIGN "The approver API"): enroll, summary, log,
//! decisions. Every route but enroll is signed like an ANP request.

use std::net::SocketAddr;

use anp::api::{DecisionResponse, EnrollRequest};
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::Json;

use super::support::{self, after_param, json_text, receive};
use crate::auth::Approver;
use crate::body::parse_json;
use crate::decisions::{self, Received};
use crate::error::ApiError;
use crate::ratelimit::Scope;
use crate::{store, Host};

/// `POST /enroll`: unsigned, rate limited; a one-time code makes an approver.
pub async fn enroll(
    State(host): State<Host>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<impl IntoResponse, ApiError> {
    let incoming = receive(
        &host,
        addr,
        method,
        uri,
        headers,
        body,
        Some(Scope::Registration),
    )
    .await?;
    let req: EnrollRequest = parse_json(&incoming.body, "enroll")?;
    let response = support::in_tx(&host, move |conn, host, now| {
        decisions::enroll(
            conn,
            &req,
            host.platform_public_key(),
            host.platform_fingerprint(),
            now,
        )
    })
    .await?;
    Ok((StatusCode::CREATED, Json(response)))
}

/// `GET /summary`: every session's head and pending decisions.
pub async fn summary(
    State(host): State<Host>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<impl IntoResponse, ApiError> {
    let incoming = receive(&host, addr, method, uri, headers, body, None).await?;
    let summary = support::signed(&host, incoming, |conn, _, approver: &Approver, _, _, _| {
        decisions::summary(conn, approver)
    })
    .await?;
    Ok(Json(summary))
}

/// `GET /sessions/:id/log?after=SEQ`.
pub async fn log(
    State(host): State<Host>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<impl IntoResponse, ApiError> {
    let after = after_param(&uri)?;
    let incoming = receive(&host, addr, method, uri, headers, body, None).await?;
    let doc = support::signed(
        &host,
        incoming,
        move |conn, host, approver: &Approver, _, _, _| {
            let session = decisions::visible_session(conn, approver, &id)?;
            store::log_json(
                conn,
                &session,
                host.platform_public_key(),
                host.platform_fingerprint(),
                after,
            )
        },
    )
    .await?;
    Ok(json_text(doc))
}

/// `POST /sessions/:id/decisions`: approve, decline or counter (idempotent).
pub async fn decide(
    State(host): State<Host>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<impl IntoResponse, ApiError> {
    let incoming = receive(&host, addr, method, uri, headers, body, None).await?;
    let response = support::signed(
        &host,
        incoming,
        move |conn, host, approver: &Approver, incoming, signed_headers, now| {
            let mut session = decisions::visible_session(conn, approver, &id)?;
            let received = Received {
                body: &incoming.body,
                headers: signed_headers,
            };
            let decided = decisions::decide(
                conn,
                &host.inner.platform_key,
                approver,
                &mut session,
                received,
                now,
            )?;
            let decision_id = parse_json::<serde_json::Value>(&incoming.body, "decision")?
                .get("decision_id")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            let log = store::log_document(
                conn,
                &session,
                host.platform_public_key(),
                host.platform_fingerprint(),
                0,
            )?;
            Ok(DecisionResponse {
                decision_id,
                outcome: decided.outcome,
                detail: decided.detail,
                log,
            })
        },
    )
    .await?;
    Ok(Json(response))
}
