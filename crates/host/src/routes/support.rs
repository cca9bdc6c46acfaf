//! What every handler shares: the per-IP limit, the bounded body, and
//! authenticating a signed request before the operation runs. The
//! extractors are generic over the surface (its error shape and body
//! limit, [`Surface`]) and, for signed requests, over the kind of caller
//! ([`Principal`]): one [`Signed`] extractor serves vendor agents,
//! approvers and gate agents.

use std::marker::PhantomData;
use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, OriginalUri, Request};
use axum::http::{HeaderMap, Method, Uri};
use countersign_host_api::signing;
use time::OffsetDateTime;

use crate::auth::{self, Principal};
use crate::body::read_limited;
use crate::error::ApiError;
use crate::ratelimit::Scope;
use crate::surface::{AnpShape, Surface};
use crate::{service, Host};

/// A request as received, before authentication: the per-IP limit passed
/// and the body read within the surface's size limit. As an extractor it
/// must come last in a handler's arguments (it consumes the body).
pub struct Incoming<S = AnpShape> {
    /// Method.
    pub method: Method,
    /// URI as sent, before any router nesting stripped a prefix (its path
    /// is what was signed).
    pub uri: Uri,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes (already bounded).
    pub body: Bytes,
    /// The address the server accepted it on (for the authorities this
    /// host answers to, [`crate::url_authority::own`]).
    pub listening: Option<SocketAddr>,
    shape: PhantomData<fn() -> S>,
}

impl<S> Incoming<S> {
    /// Every authority this host answers to, for this request.
    pub fn own_authorities(&self, host: &Host) -> Vec<String> {
        crate::url_authority::own(host, self.listening)
    }
}

/// An [`Incoming`] request to an unauthenticated endpoint that creates
/// something (registration, enrollment): also limited per IP in its own scope.
pub struct Registration<S = AnpShape>(pub Incoming<S>);

impl<S: Surface> FromRequest<Host> for Incoming<S> {
    type Rejection = S::Error;

    async fn from_request(request: Request, host: &Host) -> Result<Self, S::Error> {
        receive(host, request, None).await.map_err(S::Error::from)
    }
}

impl<S: Surface> FromRequest<Host> for Registration<S> {
    type Rejection = S::Error;

    async fn from_request(request: Request, host: &Host) -> Result<Self, S::Error> {
        receive(host, request, Some(Scope::Registration))
            .await
            .map(Registration)
            .map_err(S::Error::from)
    }
}

/// Applies the per-IP limit (and `extra` scope, if any) and reads the body
/// within the surface's limit.
async fn receive<S: Surface>(
    host: &Host,
    request: Request,
    extra: Option<Scope>,
) -> Result<Incoming<S>, ApiError> {
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
    let body = read_limited(&parts.headers, body, S::max_body(host)).await?;
    let listening = parts
        .extensions
        .get::<crate::url_authority::Listening>()
        .map(|l| l.0);
    let uri = parts
        .extensions
        .get::<OriginalUri>()
        .map_or(parts.uri, |original| original.0.clone());
    Ok(Incoming {
        method: parts.method,
        uri,
        headers: parts.headers,
        body,
        listening,
        shape: PhantomData,
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

/// A signed request by a `P` (a vendor agent, an approver, a gate agent),
/// authenticated: as an extractor it checks the principal, the signature,
/// the time window and the nonce, and applies the per-agent limit, before
/// the handler runs. The nonce is spent even when the operation that
/// follows refuses, so a refused request can never be replayed into
/// success later. It must come last in a handler's arguments.
pub struct Signed<P: Principal> {
    /// Who signed it.
    pub principal: P,
    /// The request.
    pub incoming: Incoming<P::Shape>,
    /// Its signed headers, as received and checked.
    pub headers: auth::SignedAs,
    /// The host's time when it was checked.
    pub now: OffsetDateTime,
}

impl<P: Principal> FromRequest<Host> for Signed<P> {
    type Rejection = <P::Shape as Surface>::Error;

    async fn from_request(request: Request, host: &Host) -> Result<Self, Self::Rejection> {
        let unspent = SignedUnspent::<P>::from_request(request, host).await?;
        let (principal, headers) = unspent
            .checked
            .spend(host)
            .await
            .map_err(|e| Self::Rejection::from(e.into()))?;
        Ok(Signed {
            principal,
            incoming: unspent.incoming,
            headers,
            now: unspent.now,
        })
    }
}

/// A signed request by a `P` checked as [`Signed`] is but for its nonce,
/// which the handler spends in the statement that reads what it acts on
/// (on PostgreSQL, one round trip fewer): [`auth::Checked`]. The handler
/// must spend it before doing anything for the request. It must come last
/// in a handler's arguments.
pub struct SignedUnspent<P: Principal> {
    /// Who signed it, and the nonce to spend.
    pub checked: auth::Checked<P>,
    /// The request.
    pub incoming: Incoming<P::Shape>,
    /// The host's time when it was checked.
    pub now: OffsetDateTime,
}

impl<P: Principal> FromRequest<Host> for SignedUnspent<P> {
    type Rejection = <P::Shape as Surface>::Error;

    async fn from_request(request: Request, host: &Host) -> Result<Self, Self::Rejection> {
        let incoming = Incoming::<P::Shape>::from_request(request, host).await?;
        let now = host.clock().now();
        let checked = check::<P>(host, &incoming, now)
            .await
            .map_err(|e| Self::Rejection::from(e.into()))?;
        if let Some(org) = checked.principal().org() {
            crate::changes::touch(org);
        }
        Ok(SignedUnspent {
            checked,
            incoming,
            now,
        })
    }
}

/// Checks a request's principal, signature and time window.
async fn check<P: Principal>(
    host: &Host,
    incoming: &Incoming<P::Shape>,
    now: OffsetDateTime,
) -> Result<auth::Checked<P>, crate::domain::DomainError> {
    let headers = auth::signed_headers(&incoming.headers);
    let own_authorities = incoming.own_authorities(host);
    let text = |name: &str| {
        incoming
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("(not text)"))
    };
    let request = auth::Signed {
        method: incoming.method.as_str(),
        path: incoming.uri.path(),
        path_and_query: incoming
            .uri
            .path_and_query()
            .map_or(incoming.uri.path(), |pq| pq.as_str()),
        body: &incoming.body,
        headers: &headers,
        version: text(signing::HEADER_SIG_VERSION),
        authority: text(signing::HEADER_AUTHORITY),
        own_authorities: &own_authorities,
    };
    auth::check(host, &request, now).await
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
