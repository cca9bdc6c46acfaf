//! What every handler shares: the per-IP limit, the bounded body, and
//! running authentication plus the domain call in one transaction on a
//! blocking thread.

use std::net::SocketAddr;

use anp::api::SignedHeaders;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, Request};
use axum::http::{HeaderMap, Method, Uri};
use rusqlite::{Connection, TransactionBehavior};
use time::OffsetDateTime;

use crate::auth::{self, Signed};
use crate::body::read_limited;
use crate::error::ApiError;
use crate::ratelimit::Scope;
use crate::{store, Host};

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
    let ip = addr.ip().to_string();
    host.inner.limiter.check(Scope::Ip, &ip)?;
    if let Some(scope) = extra {
        host.inner.limiter.check(scope, &ip)?;
    }
    let (parts, body) = request.into_parts();
    let body = read_limited(
        &parts.headers,
        body,
        host.inner.config.limits.max_body_bytes,
    )
    .await?;
    Ok(Incoming {
        method: parts.method,
        uri: parts.uri,
        headers: parts.headers,
        body,
    })
}

/// A session's log document as JSON text, from seq `after` on: what both
/// the vendor's and the approver's log endpoints answer.
pub fn log_text(
    conn: &Connection,
    host: &Host,
    session: &store::Session,
    after: u64,
) -> Result<String, ApiError> {
    store::log_json(
        conn,
        session,
        host.platform_public_key(),
        host.platform_fingerprint(),
        after,
    )
}

/// Runs `f` in one IMMEDIATE transaction on a blocking thread; commits on
/// success, rolls back on error.
pub async fn in_tx<T: Send + 'static>(
    host: &Host,
    f: impl FnOnce(&Connection, &Host, OffsetDateTime) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let host = host.clone();
    tokio::task::spawn_blocking(move || {
        let now = host.clock().now();
        host.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx, &host, now)?;
            tx.commit()?;
            Ok(value)
        })?
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
}

/// The principal of a signed request.
pub trait Principal: Sized {
    /// The key to verify its requests with (`None`: unknown or revoked).
    fn key(conn: &Connection, id: &str) -> Result<Option<String>, ApiError>;
    /// Completes authentication in the transaction (and consumes the nonce).
    fn authenticate(
        conn: &Connection,
        headers: &SignedHeaders,
        verified_key: &str,
    ) -> Result<Self, ApiError>;
    /// Its id, for the per-agent limit.
    fn id(&self) -> &str;
}

impl Principal for auth::Agent {
    fn key(conn: &Connection, id: &str) -> Result<Option<String>, ApiError> {
        auth::agent_key(conn, id)
    }
    fn authenticate(
        conn: &Connection,
        headers: &SignedHeaders,
        verified_key: &str,
    ) -> Result<Self, ApiError> {
        auth::agent(conn, headers, verified_key)
    }
    fn id(&self) -> &str {
        &self.id
    }
}

impl Principal for auth::Approver {
    fn key(conn: &Connection, id: &str) -> Result<Option<String>, ApiError> {
        auth::approver_key(conn, id)
    }
    fn authenticate(
        conn: &Connection,
        headers: &SignedHeaders,
        verified_key: &str,
    ) -> Result<Self, ApiError> {
        auth::approver(conn, headers, verified_key)
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// Authenticates a signed request and runs `f` for its principal. The
/// signature is checked outside the database lock (it is pure CPU); the
/// principal's status and the nonce are then rechecked and consumed in the
/// same transaction as `f`. The nonce is consumed even when `f` refuses (so
/// a refused request can never be replayed into success later); nothing
/// else `f` did survives its error.
pub async fn signed<P: Principal + Send + 'static, T: Send + 'static>(
    host: &Host,
    incoming: Incoming,
    f: impl FnOnce(
            &Connection,
            &Host,
            &P,
            &Incoming,
            &SignedHeaders,
            OffsetDateTime,
        ) -> Result<T, ApiError>
        + Send
        + 'static,
) -> Result<T, ApiError> {
    let host2 = host.clone();
    tokio::task::spawn_blocking(move || {
        let now = host2.clock().now();
        let headers = auth::signed_headers(&incoming.headers);
        let request = Signed {
            method: incoming.method.as_str(),
            path: incoming.uri.path(),
            body: &incoming.body,
            headers: &headers,
        };
        let key = host2
            .with_conn(|conn| P::key(conn, &headers.agent))??
            .ok_or(ApiError::Unauthorized)?;
        auth::verify_request(&request, &key, now)?;
        host2.with_conn(|conn| {
            let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let principal = P::authenticate(&tx, &headers, &key)?;
            let limited = host2.inner.limiter.check(Scope::Agent, principal.id());
            let result = match limited {
                Err(e) => Err(e),
                Ok(()) => {
                    let sp = tx.savepoint()?;
                    let result = f(&sp, &host2, &principal, &incoming, &headers, now);
                    if result.is_ok() {
                        sp.commit()?;
                    }
                    result
                }
            };
            tx.commit()?;
            result
        })?
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
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
