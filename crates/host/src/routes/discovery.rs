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
use rusqlite::Connection;

use crate::config::DiscoveryMode;
use crate::error::ApiError;
use crate::Host;

/// Builds the discovery document from the database.
pub fn document(host: &Host, conn: &Connection) -> Result<WellKnown, ApiError> {
    let since: String = conn.query_row(
        "SELECT value FROM meta WHERE key = 'platform_key_since'",
        [],
        |r| r.get(0),
    )?;
    let mut keys = vec![DiscoveredKey {
        public_key: host.platform_public_key().to_owned(),
        fingerprint: host.platform_fingerprint().to_owned(),
        roles: vec!["events".into()],
        valid_from: since,
        valid_to: None,
        approved_by: None,
    }];
    let mut stmt = conn.prepare(
        "SELECT public_key, fingerprint, enrolled_at, revoked_at, email FROM approvers ORDER BY enrolled_at, id",
    )?;
    let approvers = stmt.query_map([], |r| {
        Ok(DiscoveredKey {
            public_key: r.get(0)?,
            fingerprint: r.get(1)?,
            roles: vec!["approval".into()],
            valid_from: r.get(2)?,
            valid_to: r.get(3)?,
            approved_by: Some(r.get(4)?),
        })
    })?;
    for key in approvers {
        keys.push(key?);
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
) -> Result<impl IntoResponse, ApiError> {
    let mode = host.inner.config.discovery;
    if mode == DiscoveryMode::None {
        // Exactly what any path this host does not serve answers.
        return Err(super::not_found().await);
    }
    host.inner
        .limiter
        .check(crate::ratelimit::Scope::Ip, &addr.ip().to_string())?;
    let h = host.clone();
    let doc = tokio::task::spawn_blocking(move || h.with_conn(|c| document(&h, c)))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))???;
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
