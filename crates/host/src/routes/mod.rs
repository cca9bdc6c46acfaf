//! The HTTP surfaces, one module and one router each, nested under their
//! base paths: the ANP agent API and discovery ([`anp`]), the gate for the
//! org's own agents ([`gate`]), the approver API ([`approver`]) and ANEX
//! over A2A for counterparty agents ([`a2a`]), and MCP for any agent of
//! the org's on an LLM framework ([`mcp`]).
//! Handlers are thin: extract (the [`support::Signed`] extractor
//! authenticates any kind of caller), call the service, map a typed error
//! to the surface's shape.

mod a2a;
mod anp;
mod approver;
mod gate;
mod mcp;
mod support;

use ::anp::api::{AGENT_API_BASE, WELL_KNOWN_PATH};
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use countersign_host_api::approver::CONSOLE_API_BASE;
use countersign_host_api::gate::GATE_API_BASE;

use crate::error::ApiError;
use crate::Host;

/// Every route of the host. Serving adds the address it listens on
/// (`crate::url_authority::Listening`), which signatures may name and the A2A
/// surface names as the organizations' identity when no public URL is set.
pub fn router(host: Host) -> Router {
    Router::new()
        .route(WELL_KNOWN_PATH, get(anp::discovery::well_known))
        .nest(AGENT_API_BASE, anp::router())
        .nest(GATE_API_BASE, gate::router())
        .nest(CONSOLE_API_BASE, approver::router())
        .merge(a2a::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            host.clone(),
            announce_writes,
        ))
        .with_state(host.clone())
        // MCP: every call is a POST, most of them reads; its tools
        // announce their own writes, to their own organization.
        .merge(mcp::router(host))
}

/// Every write that succeeds, on any surface (an ANP event, a mirrored gate
/// batch, an ANEX message, a decision from another console), wakes the
/// consoles waiting for a change: those of the organizations it touched. A read never does; a refused write never
/// does. A write that changed nothing a console sees costs each waiter one
/// recomputed summary, which then goes on waiting.
async fn announce_writes(State(host): State<Host>, request: Request, next: Next) -> Response {
    let writes = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let (response, scope) = crate::changes::scoped(next.run(request)).await;
    if writes && response.status().is_success() {
        crate::changes::announce_write(&host, &scope).await;
    }
    response
}

/// A known path with the wrong method, in the ANP shape.
async fn method_not_allowed() -> ApiError {
    ApiError::refused(
        405,
        "method_not_allowed",
        "This endpoint does not accept that HTTP method.",
    )
}

/// Unknown routes answer in the ANP shape too (so does discovery when the
/// host serves none).
async fn not_found() -> ApiError {
    ApiError::refused(404, "not_found", "No such endpoint on this ANP host.")
}
