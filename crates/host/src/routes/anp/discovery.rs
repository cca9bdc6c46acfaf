//! `GET /.well-known/anp.json` (RFC-003): protocol versions, drafts, the
//! platform key and every approver key with its validity window. What is
//! served depends on the host's [`DiscoveryMode`]: nothing (404), exactly
//! RFC-003's members, or those plus our additions.

use anp::api::{DiscoveredKey, WellKnown, AGENT_API_BASE, IMPLEMENTED_DRAFTS};
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;

use crate::config::DiscoveryMode;
use crate::error::ApiError;
use crate::Host;

/// Builds the discovery document from the store.
pub async fn document(host: &Host) -> Result<WellKnown, ApiError> {
    let since = host
        .store()
        .admin()
        .meta("platform_key_since")
        .await?
        .unwrap_or_default();
    let mut keys = vec![DiscoveredKey {
        public_key: host.platform_public_key().to_owned(),
        fingerprint: host.platform_fingerprint().to_owned(),
        roles: vec!["events".into()],
        valid_from: since,
        valid_to: None,
        approved_by: None,
    }];
    for a in host.store().principals().approver_keys().await? {
        keys.push(DiscoveredKey {
            public_key: a.public_key,
            fingerprint: a.fingerprint,
            roles: vec!["approval".into()],
            valid_from: a.enrolled_at,
            valid_to: a.revoked_at,
            approved_by: Some(a.email),
        });
    }
    Ok(WellKnown {
        protocol_versions: vec![anp::PROTOCOL.to_owned()],
        api_base: AGENT_API_BASE.to_owned(),
        drafts: IMPLEMENTED_DRAFTS.iter().map(|d| (*d).to_owned()).collect(),
        platform_keys: keys,
    })
}

/// Keeps only RFC-003's members: no `drafts`, no `approved_by`.
fn rfc003_only(mut doc: WellKnown) -> WellKnown {
    doc.drafts.clear();
    for key in &mut doc.platform_keys {
        key.approved_by = None;
    }
    doc
}

/// The handler: public, cacheable, readable from any origin.
pub async fn well_known(
    State(host): State<Host>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: axum::http::HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    let mode = host.config().discovery;
    if mode == DiscoveryMode::None {
        // Exactly what any path this host does not serve answers.
        return Err(super::super::not_found().await);
    }
    let ip = super::super::support::client_ip(&host, addr, &headers);
    host.limiter()
        .check(crate::ratelimit::Scope::Ip, &ip.to_string())
        .await?;
    let doc = document(&host).await?;
    let doc = match mode {
        DiscoveryMode::Rfc003 => rfc003_only(doc),
        _ => doc,
    };
    Ok((
        [
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        Json(doc),
    ))
}
