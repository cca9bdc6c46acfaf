//! What every handler shares: the per-IP limit, the bounded body, and
//! authenticating a signed request before the operation runs.

use std::net::SocketAddr;

use anp::api::SignedHeaders;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, Request};
use axum::http::{HeaderMap, Method, Uri};
use time::OffsetDateTime;

use crate::auth::{self, Principal, Signed};
use crate::body::read_limited;
use crate::error::ApiError;
use crate::ratelimit::Scope;
use crate::{service, Host};

/// A request as received, before authentication: the per-IP limit passed
/// and the body read within the size limit. As an extractor it must come
/// last in a handler's arguments (it consumes the body).
pub struct Incoming {
    /// Method.
    pub method: Method,
    /// URI (its path is what was signed).
    pub uri: Uri,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes (already bounded).
    pub body: Bytes,
}

/// An [`Incoming`] request to an unauthenticated endpoint that creates
/// something (registration, enrollment): also limited per IP in its own scope.
pub struct Registration(pub Incoming);

impl FromRequest<Host> for Incoming {
    type Rejection = ApiError;

    async fn from_request(request: Request, host: &Host) -> Result<Self, ApiError> {
        receive(host, request, None).await
    }
}

impl FromRequest<Host> for Registration {
    type Rejection = ApiError;

    async fn from_request(request: Request, host: &Host) -> Result<Self, ApiError> {
        receive(host, request, Some(Scope::Registration))
            .await
            .map(Registration)
    }
}

/// Applies the per-IP limit (and `extra` scope, if any) and reads the body.
async fn receive(
    host: &Host,
    request: Request,
    extra: Option<Scope>,
) -> Result<Incoming, ApiError> {
    let addr = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0)
        .ok_or_else(|| {
            ApiError::Internal("the server was started without peer addresses".into())
        })?;
    let ip = client_ip(host, addr, request.headers()).to_string();
    host.limiter().check(Scope::Ip, &ip).await?;
    if let Some(scope) = extra {
        host.limiter().check(scope, &ip).await?;
    }
    let (parts, body) = request.into_parts();
    let body = read_limited(&parts.headers, body, host.config().limits.max_body_bytes).await?;
    Ok(Incoming {
        method: parts.method,
        uri: parts.uri,
        headers: parts.headers,
        body,
    })
}

/// The client a request counts against: the peer, or, when the peer is a
/// trusted proxy, the last address in `X-Forwarded-For` that is not one.
pub fn client_ip(host: &Host, peer: SocketAddr, headers: &HeaderMap) -> std::net::IpAddr {
    let trusted = &host.config().trusted_proxies;
    if !trusted.contains(&peer.ip()) {
        return peer.ip();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse::<std::net::IpAddr>().ok())
        .rfind(|a| !trusted.contains(a))
        .unwrap_or(peer.ip())
}

/// A session's log document as JSON text, from seq `after` on: what both
/// the vendor's and the approver's log endpoints answer. Read after the
/// request's commit, on a read connection.
pub async fn log_text(host: &Host, session_id: &str, after: u64) -> Result<String, ApiError> {
    Ok(service::log_json(host, session_id, after).await?)
}

/// A signed request, authenticated.
pub struct Authenticated<P> {
    /// Who signed it.
    pub principal: P,
    /// The request.
    pub incoming: Incoming,
    /// Its four signed headers, as received.
    pub headers: SignedHeaders,
    /// The host's time when it was checked.
    pub now: OffsetDateTime,
}

/// Authenticates a signed request (principal, signature, window, nonce) and
/// applies the per-agent limit. The nonce is spent even when the operation
/// that follows refuses, so a refused request can never be replayed into
/// success later.
pub async fn signed<P: Principal>(
    host: &Host,
    incoming: Incoming,
) -> Result<Authenticated<P>, ApiError> {
    let now = host.clock().now();
    let headers = auth::signed_headers(&incoming.headers);
    let request = Signed {
        method: incoming.method.as_str(),
        path: incoming.uri.path(),
        body: &incoming.body,
        headers: &headers,
    };
    let principal: P = auth::authenticate(host, &request, now).await?;
    host.limiter().check(Scope::Agent, principal.id()).await?;
    Ok(Authenticated {
        principal,
        incoming,
        headers,
        now,
    })
}

/// Reads `?after=SEQ` (absent: 0).
pub fn after_param(uri: &Uri) -> Result<u64, ApiError> {
    let Some(query) = uri.query() else {
        return Ok(0);
    };
    let mut after = 0;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if name == "after" {
            after = value
                .parse::<u64>()
                .ok()
                .filter(|n| i64::try_from(*n).is_ok())
                .ok_or_else(|| {
                    ApiError::Invalid(format!(
                        "after must be a non-negative integer seq, got {value:?}."
                    ))
                })?;
        }
    }
    Ok(after)
}

/// A JSON body already serialized.
pub fn json_text(text: String) -> impl axum::response::IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        text,
    )
}
