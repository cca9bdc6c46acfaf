//! The HTTP surface: the agent API (SPEC §6), discovery (RFC-003) and the
//! approver API v1. Handlers are thin: extract, call the domain inside one
//! transaction off the async runtime, map a typed error to the ANP shape.

mod agent;
mod console;
mod discovery;
mod support;

use anp::api::{AGENT_API_BASE, CONSOLE_API_BASE, WELL_KNOWN_PATH};
use axum::routing::{get, post};
use axum::Router;

use crate::error::ApiError;
use crate::Host;

/// Every route of the host.
pub fn router(host: Host) -> Router {
    Router::new()
        .route(WELL_KNOWN_PATH, get(discovery::well_known))
        .route(&format!("{AGENT_API_BASE}/register"), post(agent::register))
        .route(
            &format!("{AGENT_API_BASE}/sessions"),
            post(agent::open_session),
        )
        .route(
            &format!("{AGENT_API_BASE}/sessions/{{id}}"),
            get(agent::status),
        )
        .route(
            &format!("{AGENT_API_BASE}/sessions/{{id}}/log"),
            get(agent::log),
        )
        .route(
            &format!("{AGENT_API_BASE}/sessions/{{id}}/events"),
            post(agent::submit_event),
        )
        .route(&format!("{CONSOLE_API_BASE}/enroll"), post(console::enroll))
        .route(
            &format!("{CONSOLE_API_BASE}/summary"),
            get(console::summary),
        )
        .route(
            &format!("{CONSOLE_API_BASE}/sessions/{{id}}/log"),
            get(console::log),
        )
        .route(
            &format!("{CONSOLE_API_BASE}/sessions/{{id}}/decisions"),
            post(console::decide),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(host)
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
