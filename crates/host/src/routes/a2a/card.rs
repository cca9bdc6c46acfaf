//! The Agent Cards: one per organization, and the host's. Public: no
//! credential needed; an unknown or disabled handle is the same 404.

use anex::limits::MAX_MESSAGE_BYTES;
use anex::A2A_EXTENSION_URI;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::Host;

/// Where the host's own card is.
pub const HOST_CARD_PATH: &str = "/.well-known/agent-card.json";

pub use crate::url_authority::Listening;

/// The host's public origin, what every Agent Card and each organization's
/// ANEX identity name: the configured public URL (`serve --public-url`),
/// or else `http://` + the address the server is bound to. Configuration,
/// never the request's word: no header a caller writes (`Host`,
/// `X-Forwarded-*`) changes it. A server bound to every address
/// (`0.0.0.0`, `::`) without a public URL has no identity to give, and
/// says so.
pub fn origin(host: &Host, listening: Listening) -> Result<String, String> {
    if let Some(origin) = &host.config().public_url {
        return Ok(origin.clone());
    }
    let Listening(addr) = listening;
    if addr.ip().is_unspecified() {
        return Err(format!(
            "this host has no public identity: it listens on every address ({addr}) and was started without --public-url, so its ANEX agents have no address to be named by; its admin must start it with --public-url"
        ));
    }
    Ok(format!("http://{addr}"))
}

/// The organization's ANEX agent identity: its interface URL.
pub fn agent_identity(
    host: &Host,
    listening: Listening,
    org_handle: &str,
) -> Result<anex::AgentId, String> {
    let url = format!("{}/a2a/{org_handle}", origin(host, listening)?);
    anex::AgentId::parse(&url).map_err(|e| format!("the agent identity {url}: {e}"))
}

/// A card cannot be given: the host's identity is not configured.
fn unconfigured(why: String) -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": why}))).into_response()
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": "no such agent card"})),
    )
        .into_response()
}

fn security() -> (Value, Value) {
    (
        json!({"anexBearer": {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "a token the organization's admin issued to your agent",
        }}}),
        json!([{"schemes": {"anexBearer": {"list": []}}}]),
    )
}

fn interfaces(url: &str) -> Value {
    json!([
        {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ])
}

/// `GET /a2a/{org}/.well-known/agent-card.json`.
pub async fn org_card(
    State(host): State<Host>,
    Extension(listening): Extension<Listening>,
    Path(org): Path<String>,
) -> Response {
    let Ok(Some(org)) = host.store().negotiations().org(&org).await else {
        return not_found();
    };
    if org.disabled {
        return not_found();
    }
    let base = match origin(&host, listening) {
        Ok(base) => base,
        Err(why) => return unconfigured(why),
    };
    let url = format!("{base}/a2a/{}", org.handle);
    let (schemes, requirements) = security();
    let name = &org.name;
    Json(json!({
        "name": format!("{name}: data access (ANEX)"),
        "description": format!("Negotiates which data about {name} an agent may have, and under which promises (ANEX v0.1 over A2A). Terms beyond the owner's policy wait for a person."),
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": interfaces(&url),
        "provider": {"organization": name, "url": base},
        "capabilities": {
            "streaming": false,
            "pushNotifications": false,
            "extensions": [{
                "uri": A2A_EXTENSION_URI,
                "description": "ANEX v0.1 messages, one per data part; see docs/anex-binding.md",
                "required": true,
                "params": {
                    "anex": "0.1",
                    "binding": "1",
                    "agent": url,
                    "ontology": "ANEX-Ontology",
                    "max_message_bytes": MAX_MESSAGE_BYTES,
                },
            }],
        },
        "securitySchemes": schemes,
        "securityRequirements": requirements,
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [{
            "id": "anex-data-access",
            "name": "Data-access terms",
            "description": "Answers ANEX CFPs for data about this organization; shares only accepted items.",
            "tags": ["anex", "data-access", "negotiation"],
        }],
    }))
    .into_response()
}

/// `GET /.well-known/agent-card.json`: the host's card. Its interface
/// serves the organization the caller's credential names; each
/// organization's own card is at `params.org_card`.
pub async fn host_card(
    State(host): State<Host>,
    Extension(listening): Extension<Listening>,
) -> Response {
    let base = match origin(&host, listening) {
        Ok(base) => base,
        Err(why) => return unconfigured(why),
    };
    let url = format!("{base}/a2a");
    let (schemes, requirements) = security();
    Json(json!({
        "name": "Countersign host: data access (ANEX)",
        "description": "Negotiates data-access terms (ANEX v0.1 over A2A) for the organization your credential was issued for. Each organization has its own card at /a2a/{org}/.well-known/agent-card.json.",
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": interfaces(&url),
        "provider": {"organization": "Countersign host", "url": base},
        "capabilities": {
            "streaming": false,
            "pushNotifications": false,
            "extensions": [{
                "uri": A2A_EXTENSION_URI,
                "description": "ANEX v0.1 messages, one per data part; see docs/anex-binding.md",
                "required": true,
                "params": {
                    "anex": "0.1",
                    "binding": "1",
                    "org_card": "/a2a/{org}/.well-known/agent-card.json",
                    "ontology": "ANEX-Ontology",
                    "max_message_bytes": MAX_MESSAGE_BYTES,
                },
            }],
        },
        "securitySchemes": schemes,
        "securityRequirements": requirements,
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [{
            "id": "anex-data-access",
            "name": "Data-access terms",
            "description": "Answers ANEX CFPs for data about an organization; shares only accepted items.",
            "tags": ["anex", "data-access", "negotiation"],
        }],
    }))
    .into_response()
}
