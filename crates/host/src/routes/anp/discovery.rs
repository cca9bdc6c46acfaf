//! `GET /.well-known/anp.json` (RFC-003): protocol versions, drafts, the
//! platform key, and with `?org=<handle>` that one organization's approver
//! keys with their validity windows. Public, so it carries only what
//! verifying needs: RFC-003's members, never an approver's email (a console
//! reads who holds each key through the signed approver API). What is
//! served depends on the host's [`DiscoveryMode`]: nothing (404), exactly
//! RFC-003's members, or those plus `drafts`.

use anp::api::{DiscoveredKey, WellKnown, AGENT_API_BASE, IMPLEMENTED_DRAFTS};
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;

use crate::config::DiscoveryMode;
use crate::error::ApiError;
use crate::Host;

/// Builds the discovery document from the store: the platform key, and
/// the approver keys of `org` (an org handle) when one is named, each
/// with `approved_by` only when `named` (the signed approver API's copy
/// for the org's own approvers; the public document never names them).
/// An unknown or disabled org has no approver keys, like one with none.
pub async fn document(host: &Host, org: Option<&str>, named: bool) -> Result<WellKnown, ApiError> {
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
    let org = match org {
        Some(handle) => host
            .store()
            .negotiations()
            .org(handle)
            .await?
            .filter(|o| !o.disabled),
        None => None,
    };
    if let Some(org) = org {
        for a in host.store().principals().approver_keys().await? {
            if a.org_handle != org.handle {
                continue;
            }
            keys.push(DiscoveredKey {
                public_key: a.public_key,
                fingerprint: a.fingerprint,
                roles: vec!["approval".into()],
                valid_from: a.enrolled_at,
                // Retired by a rotation or revoked, whichever came first.
                valid_to: match (a.retired_at, a.revoked_at) {
                    (Some(r), Some(v)) => Some(r.min(v)),
                    (r, v) => r.or(v),
                },
                approved_by: named.then_some(a.email),
            });
        }
    }
    Ok(WellKnown {
        protocol_versions: vec![anp::PROTOCOL.to_owned()],
        api_base: AGENT_API_BASE.to_owned(),
        drafts: IMPLEMENTED_DRAFTS.iter().map(|d| (*d).to_owned()).collect(),
        platform_keys: keys,
    })
}

/// `?org=<handle>`: whose approver keys to publish.
#[derive(Debug, serde::Deserialize)]
pub struct Which {
    /// An org handle (`sandbox` for the sandbox).
    #[serde(default)]
    org: Option<String>,
}

/// Keeps only RFC-003's members: no `drafts`.
fn rfc003_only(mut doc: WellKnown) -> WellKnown {
    doc.drafts.clear();
    doc
}

/// The handler: public, cacheable, readable from any origin (RFC-003), so
/// it names no person.
pub async fn well_known(
    State(host): State<Host>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    which: Result<Query<Which>, axum::extract::rejection::QueryRejection>,
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
    let Query(which) = which.map_err(|e| {
        ApiError::refused(
            400,
            "invalid_request",
            format!("the query names at most one org: ?org=<handle> ({e})"),
        )
    })?;
    let doc = document(&host, which.org.as_deref(), false).await?;
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
