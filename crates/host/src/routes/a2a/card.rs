//! The Agent Cards: one per organization, and the host's. Public: no
//! credential needed; an unknown or disabled handle is the same 404.

use std::net::SocketAddr;

use anex::limits::MAX_MESSAGE_BYTES;
use anex::A2A_EXTENSION_URI;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::Host;

/// Where the host's own card is.
pub const HOST_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The host's origin: the configured public URL, or else `http(s)://HOST`
/// as the caller reached us (the `Host` header, and `X-Forwarded-Proto`
/// when the peer is a trusted proxy).
pub fn base_url(host: &Host, peer: SocketAddr, headers: &HeaderMap) -> Result<String, String> {
    if let Some(origin) = &host.config().public_url {
        return Ok(origin.clone());
    }
    let name = headers
        .get("host")
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.len() <= 255
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b))
        })
        .ok_or_else(|| "the Host header is missing or not a host name".to_owned())?;
    let https = host.config().trusted_proxies.contains(&peer.ip())
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            == Some("https");
    Ok(format!("{}://{name}", if https { "https" } else { "http" }))
}

/// The organization's ANEX agent identity: its interface URL.
pub fn agent_identity(
    host: &Host,
    peer: SocketAddr,
    headers: &HeaderMap,
    org_handle: &str,
) -> Result<anex::AgentId, String> {
    let url = format!("{}/a2a/{org_handle}", base_url(host, peer, headers)?);
    anex::AgentId::parse(&url).map_err(|e| format!("the agent identity {url}: {e}"))
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
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(org): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Ok(Some(org)) = host.store().negotiations().org(&org).await else {
        return not_found();
    };
    if org.disabled {
        return not_found();
    }
    let Ok(base) = base_url(&host, peer, &headers) else {
        return not_found();
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
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let Ok(base) = base_url(&host, peer, &headers) else {
        return not_found();
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
