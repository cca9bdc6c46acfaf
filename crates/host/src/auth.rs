//! Signed-request authentication (SPEC §3) for both roles: vendor agents on
//! the agent API and approvers on the approver API. Every failure is the one
//! uniform refusal; the precise reason only goes to the host's log.

use anp::api::{self, AgentStatus, SignedHeaders, TIMESTAMP_WINDOW_SECS};
use anp::keys;
use axum::http::HeaderMap;
use rusqlite::{params, Connection, OptionalExtension};
use time::OffsetDateTime;

use crate::admin::parse_status;
use crate::error::ApiError;
use crate::Host;

/// An authenticated vendor agent.
#[derive(Debug, Clone)]
pub struct Agent {
    /// Registration id.
    pub id: String,
    /// Public key, base64url.
    pub public_key: String,
    /// Fingerprint.
    pub fingerprint: String,
    /// Display name.
    pub name: String,
    /// Sandbox or verified (never revoked: those are refused).
    pub status: AgentStatus,
}

/// An authenticated approver.
#[derive(Debug, Clone)]
pub struct Approver {
    /// Approver id.
    pub id: String,
    /// The org it decides for.
    pub org_handle: String,
    /// Its email, which must be the approval's `approved_by`.
    pub email: String,
    /// Public key, base64url.
    pub public_key: String,
}

/// The four headers as received (absent or non-text headers read as empty,
/// which the check refuses).
pub fn signed_headers(headers: &HeaderMap) -> SignedHeaders {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    SignedHeaders {
        agent: get(api::HEADER_AGENT),
        timestamp: get(api::HEADER_TIMESTAMP),
        nonce: get(api::HEADER_NONCE),
        signature: get(api::HEADER_SIGNATURE),
    }
}

/// What was signed: method, path and body bytes.
pub struct Signed<'a> {
    /// HTTP method.
    pub method: &'a str,
    /// URL path without query.
    pub path: &'a str,
    /// Exact body bytes.
    pub body: &'a [u8],
    /// The headers.
    pub headers: &'a SignedHeaders,
}

fn refuse(reason: impl std::fmt::Display) -> ApiError {
    tracing::info!(%reason, "refused signed request");
    ApiError::Unauthorized
}

/// Checks header shape, the time window and the signature against the
/// principal's key. Pure CPU, so it runs outside the database lock.
pub fn verify_request(
    req: &Signed<'_>,
    public_key: &str,
    now: OffsetDateTime,
) -> Result<(), ApiError> {
    let key = keys::parse_public_key(public_key).map_err(refuse)?;
    api::check_signed_request(req.headers, &key, req.method, req.path, req.body, now)
        .map_err(refuse)
}

/// Single use: the nonce is remembered until its timestamp leaves the window.
fn consume_nonce(conn: &Connection, headers: &SignedHeaders) -> Result<(), ApiError> {
    let expires = api::parse_timestamp(&headers.timestamp)
        .map(|t| t.unix_timestamp() + TIMESTAMP_WINDOW_SECS)
        .ok_or_else(|| refuse("timestamp"))?;
    let inserted = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO nonces (principal, nonce, expires_at) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![headers.agent, headers.nonce, expires])?;
    if inserted == 0 {
        return Err(refuse("nonce reused"));
    }
    Ok(())
}

/// The key of a non-revoked agent, to verify a request with before the
/// transaction.
pub fn agent_key(conn: &Connection, agent_id: &str) -> Result<Option<String>, ApiError> {
    Ok(conn
        .prepare_cached("SELECT public_key FROM agents WHERE id = ?1 AND status != 'revoked'")?
        .query_row([agent_id], |r| r.get(0))
        .optional()?)
}

/// Completes a vendor agent's authentication inside the transaction: the
/// agent still exists with the verified key, is not revoked, and the nonce
/// is fresh.
pub fn agent(
    conn: &Connection,
    headers: &SignedHeaders,
    verified_key: &str,
) -> Result<Agent, ApiError> {
    let found = conn
        .prepare_cached(
            "SELECT public_key, fingerprint, agent_name, status FROM agents WHERE id = ?1",
        )?
        .query_row([&headers.agent], |r| {
            Ok(Agent {
                id: headers.agent.clone(),
                public_key: r.get(0)?,
                fingerprint: r.get(1)?,
                name: r.get(2)?,
                status: parse_status(&r.get::<_, String>(3)?),
            })
        })
        .optional()?
        .ok_or_else(|| refuse("unknown agent"))?;
    if found.status == AgentStatus::Revoked || found.public_key != verified_key {
        return Err(refuse("revoked agent"));
    }
    consume_nonce(conn, headers)?;
    Ok(found)
}

const APPROVER_QUERY: &str = "SELECT a.org_handle, a.email, a.public_key FROM approvers a JOIN orgs o ON o.handle = a.org_handle
     WHERE a.id = ?1 AND a.revoked_at IS NULL AND o.disabled = 0";

/// The key of an active approver, to verify a request with before the
/// transaction.
pub fn approver_key(conn: &Connection, approver_id: &str) -> Result<Option<String>, ApiError> {
    Ok(conn
        .prepare_cached(APPROVER_QUERY)?
        .query_row([approver_id], |r| r.get(2))
        .optional()?)
}

/// Completes an approver's authentication inside the transaction.
pub fn approver(
    conn: &Connection,
    headers: &SignedHeaders,
    verified_key: &str,
) -> Result<Approver, ApiError> {
    let found = conn
        .prepare_cached(APPROVER_QUERY)?
        .query_row([&headers.agent], |r| {
            Ok(Approver {
                id: headers.agent.clone(),
                org_handle: r.get(0)?,
                email: r.get(1)?,
                public_key: r.get(2)?,
            })
        })
        .optional()?
        .ok_or_else(|| refuse("unknown or revoked approver"))?;
    if found.public_key != verified_key {
        return Err(refuse("approver key changed"));
    }
    consume_nonce(conn, headers)?;
    Ok(found)
}

/// Forgets nonces whose timestamps have left the window.
pub fn purge_nonces(conn: &Connection, now: OffsetDateTime) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM nonces WHERE expires_at < ?1",
        [now.unix_timestamp()],
    )
}

/// Purges expired nonces once a minute for as long as the server runs.
pub async fn purge_nonces_forever(host: Host) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        tick.tick().await;
        let h = host.clone();
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || h.purge_expired_nonces()).await {
            tracing::warn!(error = %e, "purging expired nonces failed");
        }
    }
}
