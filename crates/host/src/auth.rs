//! Signed-request authentication for every kind of caller: vendor agents on
//! the agent API (ANP/0.1's string, SPEC §3), approvers on the approver API
//! and the org's own agents on the gate (version 2 of our own string,
//! `countersign_host_api::signing`, and version 1 during the transition).
//! Every failure is the one uniform refusal; the precise reason only goes
//! to the host's log.
//!
//! The order keeps the expensive and the shared parts apart: the principal
//! and its key are read (a read connection), the signature is checked (pure
//! CPU, no lock held), then the nonce is spent with one insert under its
//! primary key, which never waits for an append.

use anp::api::{self, AgentStatus, SignedHeaders};
use anp::keys;
use async_trait::async_trait;
use axum::http::HeaderMap;
use countersign_host_api::signing::{self, RequestV2};
use time::OffsetDateTime;

use crate::domain::DomainError;
use crate::ratelimit::Scope;
use crate::store::{
    AgentRow, ApproverRow, GateAgentRow, NonceSpent, SharedWindow, Storage, StoreError,
};
use crate::surface::{AnpShape, GateShape, Surface};
use crate::Host;

/// An authenticated vendor agent (never a revoked one).
pub type Agent = AgentRow;
/// An authenticated approver (never a revoked one, nor of a disabled org).
pub type Approver = ApproverRow;
/// An authenticated gate agent (never a revoked one, nor of a disabled org).
pub type GateAgent = GateAgentRow;

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

/// A request as the host received it, with what each request string needs.
pub struct Signed<'a> {
    /// HTTP method.
    pub method: &'a str,
    /// URL path without query (what ANP/0.1's string covers).
    pub path: &'a str,
    /// Path and query exactly as received (what version 2 covers).
    pub path_and_query: &'a str,
    /// Exact body bytes.
    pub body: &'a [u8],
    /// The four `x-anp-*` headers.
    pub headers: &'a SignedHeaders,
    /// `x-countersign-sig`, if sent.
    pub version: Option<&'a str>,
    /// `x-countersign-authority`, if sent.
    pub authority: Option<&'a str>,
    /// The authorities this host answers to ([`crate::url_authority::own`]).
    pub own_authorities: &'a [String],
}

/// The signed headers of an authenticated request, in the version its
/// signature was checked in: what the host keeps beside a decision, so
/// anyone with the approver's key can recheck it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum SignedAs {
    /// ANP/0.1's four headers (vendor agents; version 1 in the transition).
    V1(SignedHeaders),
    /// Version 2: the four, the version and the authority.
    V2(signing::SignedHeadersV2),
}

/// Which request string a kind of caller signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// ANP/0.1's, and only it: vendor agents on the agent API (ANP's wire,
    /// kept as published; version headers are ignored).
    Anp,
    /// Version 2 of the host's own APIs (approvers, gate agents); version 1
    /// (ANP/0.1's string) while `accept_v1_signatures` is on.
    Countersign,
}

fn refuse(reason: impl std::fmt::Display) -> DomainError {
    tracing::info!(%reason, "refused signed request");
    DomainError::Unauthorized
}

/// Checks header shape, the time window and the signature against the
/// principal's key, with the request string `wire` takes. Pure CPU.
pub fn verify_request(
    req: &Signed<'_>,
    public_key: &str,
    wire: Wire,
    accept_v1: bool,
    now: OffsetDateTime,
) -> Result<SignedAs, DomainError> {
    let key = keys::parse_public_key(public_key).map_err(refuse)?;
    let v1 = || {
        api::check_signed_request(req.headers, &key, req.method, req.path, req.body, now)
            .map(|()| SignedAs::V1(req.headers.clone()))
            .map_err(refuse)
    };
    match (wire, req.version) {
        (Wire::Anp, _) => v1(),
        (Wire::Countersign, Some(signing::SIG_VERSION_2)) => {
            let authority = req
                .authority
                .filter(|a| !a.is_empty())
                .ok_or_else(|| refuse(format!("missing header {}", signing::HEADER_AUTHORITY)))?;
            if !req.own_authorities.iter().any(|own| own == authority) {
                return Err(refuse(format!(
                    "signed for host {authority:?}; this host answers to {:?}",
                    req.own_authorities
                )));
            }
            let request = RequestV2 {
                method: req.method,
                authority,
                path_and_query: req.path_and_query,
                body: req.body,
            };
            signing::check_request_v2(req.headers, &key, &request, now).map_err(refuse)?;
            Ok(SignedAs::V2(signing::SignedHeadersV2 {
                anp: req.headers.clone(),
                sig_version: signing::SIG_VERSION_2.to_owned(),
                authority: authority.to_owned(),
            }))
        }
        (Wire::Countersign, Some(other)) => Err(refuse(format!(
            "unknown signature version {other:?} (this host signs 2)"
        ))),
        (Wire::Countersign, None) if accept_v1 => {
            let kept = v1()?;
            tracing::warn!(
                caller = %req.headers.agent,
                path = %req.path,
                "accepted a version 1 signature (transition; --accept-v1-signatures false refuses it)"
            );
            Ok(kept)
        }
        (Wire::Countersign, None) => Err(refuse(
            "version 1 signature refused (--accept-v1-signatures false); sign version 2",
        )),
    }
}

/// The principal of a signed request.
#[async_trait]
pub trait Principal: Sized + Clone + Send + Sync + 'static {
    /// The surface it calls (how its refusals are shaped).
    type Shape: Surface;
    /// The request string it signs.
    const WIRE: Wire;
    /// The principal with this id, if it may sign requests at all.
    async fn load(store: &dyn Storage, id: &str) -> Result<Option<Self>, StoreError>;
    /// The key its requests are signed with.
    fn public_key(&self) -> &str;
    /// Its id, for the per-agent limit.
    fn id(&self) -> &str;
    /// The organization whose records every request it signs touches (a
    /// vendor agent has none: its session's organization is its target's).
    fn org(&self) -> Option<&str>;
    /// A revoked principal's key and when it was revoked, where its holder
    /// is told so ([`countersign_host_api::approver::KEY_REVOKED`]); `None`
    /// keeps the uniform refusal.
    async fn revoked(
        _store: &dyn Storage,
        _id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        Ok(None)
    }
    /// A copy the store kept from an earlier request, to be checked by the
    /// statement that spends the nonce ([`Principal::spend_remembered`]);
    /// `None` (the default): [`Principal::load`] it.
    fn remembered(_store: &dyn Storage, _id: &str) -> Option<Self> {
        None
    }
    /// Keeps the principal, just loaded, for [`Principal::remembered`].
    fn remember(&self, _store: &dyn Storage) {}
    /// Spends a remembered principal's nonce and reads it again in the same
    /// statement: answers it as it is now, `None` (nothing spent) when it
    /// may no longer sign with the key the request was checked against.
    /// Only called for what [`Principal::remembered`] answered.
    async fn spend_remembered(
        &self,
        store: &dyn Storage,
        nonce: &str,
        expires_at: i64,
        counting: Option<&SharedWindow>,
    ) -> Result<(NonceSpent, Option<Self>), StoreError> {
        let spent = store
            .principals()
            .spend_nonce(self.id(), nonce, expires_at, counting)
            .await?;
        Ok((spent, Some(self.clone())))
    }
}

#[async_trait]
impl Principal for AgentRow {
    type Shape = AnpShape;
    const WIRE: Wire = Wire::Anp;
    async fn load(store: &dyn Storage, id: &str) -> Result<Option<Self>, StoreError> {
        Ok(store
            .principals()
            .agent(id)
            .await?
            .filter(|a| a.status != AgentStatus::Revoked))
    }
    fn public_key(&self) -> &str {
        &self.public_key
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn org(&self) -> Option<&str> {
        None
    }
    fn remembered(store: &dyn Storage, id: &str) -> Option<Self> {
        store.principals().remembered_agent(id)
    }
    fn remember(&self, store: &dyn Storage) {
        store.principals().remember_agent(self);
    }
    async fn spend_remembered(
        &self,
        store: &dyn Storage,
        nonce: &str,
        expires_at: i64,
        counting: Option<&SharedWindow>,
    ) -> Result<(NonceSpent, Option<Self>), StoreError> {
        store
            .principals()
            .spend_agent_nonce(self, nonce, expires_at, counting)
            .await
    }
}

#[async_trait]
impl Principal for ApproverRow {
    type Shape = AnpShape;
    const WIRE: Wire = Wire::Countersign;
    async fn load(store: &dyn Storage, id: &str) -> Result<Option<Self>, StoreError> {
        store.principals().active_approver(id).await
    }
    async fn revoked(
        store: &dyn Storage,
        id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        store.principals().revoked_approver(id).await
    }
    fn public_key(&self) -> &str {
        &self.public_key
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn org(&self) -> Option<&str> {
        Some(&self.org_handle)
    }
}

/// An approver asking to move to a new key: signs as an [`Approver`], and
/// is also admitted once retired by a rotation, so the same rotation asked
/// again (its answer lost) is answered the same; never a revoked one.
#[derive(Debug, Clone)]
pub struct RotatingApprover(pub ApproverRow);

#[async_trait]
impl Principal for RotatingApprover {
    type Shape = AnpShape;
    const WIRE: Wire = Wire::Countersign;
    async fn load(store: &dyn Storage, id: &str) -> Result<Option<Self>, StoreError> {
        Ok(store
            .principals()
            .rotatable_approver(id)
            .await?
            .map(RotatingApprover))
    }
    async fn revoked(
        store: &dyn Storage,
        id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        store.principals().revoked_approver(id).await
    }
    fn public_key(&self) -> &str {
        &self.0.public_key
    }
    fn id(&self) -> &str {
        &self.0.id
    }
    fn org(&self) -> Option<&str> {
        Some(&self.0.org_handle)
    }
}

#[async_trait]
impl Principal for GateAgentRow {
    type Shape = GateShape;
    const WIRE: Wire = Wire::Countersign;
    async fn load(store: &dyn Storage, id: &str) -> Result<Option<Self>, StoreError> {
        store.gate().active_gate_agent(id).await
    }
    fn public_key(&self) -> &str {
        &self.public_key
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn org(&self) -> Option<&str> {
        Some(&self.org_handle)
    }
}

/// A signed request whose principal may sign and whose signature and time
/// window hold, its nonce not yet spent. Authentication is two steps:
/// [`check`] finds the principal (it exists and may sign) and checks the
/// signature and time window, then [`Checked::spend`] spends the nonce
/// (spent even when what follows refuses, so a refused request can never
/// be replayed into success) and applies the per-principal rate limit. A
/// route may instead spend the nonce in the statement that reads what it
/// acts on ([`crate::service::submit_event`]); nothing may be done for the
/// request before one of them succeeds.
#[must_use = "a checked request counts for nothing until its nonce is spent"]
pub struct Checked<P> {
    principal: P,
    signed_as: SignedAs,
    nonce: String,
    expires_at: i64,
    /// The principal is the store's copy ([`Principal::remembered`]), to
    /// be read again by the statement that spends the nonce.
    remembered: bool,
}

/// Checks everything of a signed request but its nonce.
pub async fn check<P: Principal>(
    host: &Host,
    request: &Signed<'_>,
    now: OffsetDateTime,
) -> Result<Checked<P>, DomainError> {
    let headers = request.headers;
    let accept_v1 = host.config().accept_v1_signatures;
    let expires_at = || {
        api::parse_timestamp(&headers.timestamp)
            .map(nonce_expiry)
            .ok_or_else(|| refuse("timestamp"))
    };
    if let Some(copy) = P::remembered(host.store().as_ref(), &headers.agent) {
        // A copy that no longer holds is found out where the nonce is
        // spent; one whose key does not verify is read again here.
        if let Ok(signed_as) = verify_request(request, copy.public_key(), P::WIRE, accept_v1, now) {
            return Ok(Checked {
                principal: copy,
                signed_as,
                nonce: headers.nonce.clone(),
                expires_at: expires_at()?,
                remembered: true,
            });
        }
    }
    let Some(principal) = P::load(host.store().as_ref(), &headers.agent).await? else {
        // Whoever still holds a revoked key is told so, and when; anyone
        // else learns nothing (the signature must verify against it).
        if let Some((key, at)) = P::revoked(host.store().as_ref(), &headers.agent).await? {
            if verify_request(request, &key, P::WIRE, accept_v1, now).is_ok() {
                return Err(key_revoked(&at));
            }
        }
        return Err(refuse("unknown or revoked principal"));
    };
    let signed_as = verify_request(request, principal.public_key(), P::WIRE, accept_v1, now)?;
    Ok(Checked {
        principal,
        signed_as,
        nonce: headers.nonce.clone(),
        expires_at: expires_at()?,
        remembered: false,
    })
}

/// What the holder of a key revoked at `at` is told.
fn key_revoked(at: &str) -> DomainError {
    DomainError::KeyRevoked(format!(
        "This approver key was revoked by the host's admin at {at} (as for a lost laptop): the host refuses everything signed with it, and nothing was stored. Ask the admin for a new enrollment code and connect this console to the host again."
    ))
}

impl<P: Principal> Checked<P> {
    /// Who signed, as checked (a copy may be older than the store's row).
    pub fn principal(&self) -> &P {
        &self.principal
    }

    /// Whether the principal is the store's copy, to be read again where
    /// the nonce is spent.
    pub fn remembered(&self) -> bool {
        self.remembered
    }

    /// The nonce to spend, and until when it is kept.
    pub fn nonce(&self) -> (&str, i64) {
        (&self.nonce, self.expires_at)
    }

    /// Spends the nonce (with shared limits, counting the per-principal
    /// window in the same statement, only when it was fresh) and applies
    /// the per-principal limit. Answers the principal as the store has it
    /// now, and the headers as checked.
    pub async fn spend(self, host: &Host) -> Result<(P, SignedAs), DomainError> {
        let window = host
            .limiter()
            .shared_window(Scope::Agent, self.principal.id());
        let store = host.store().as_ref();
        let (spent, principal) = if self.remembered {
            let (spent, now) = self
                .principal
                .spend_remembered(store, &self.nonce, self.expires_at, window.as_ref())
                .await?;
            match now {
                Some(principal) => (spent, principal),
                None => return Err(self.gone(host).await),
            }
        } else {
            let spent = store
                .principals()
                .spend_nonce(
                    self.principal.id(),
                    &self.nonce,
                    self.expires_at,
                    window.as_ref(),
                )
                .await?;
            (spent, self.principal)
        };
        Checked::<P>::judge(host, &principal, spent).await?;
        principal.remember(store);
        Ok((principal, self.signed_as))
    }

    /// Refuses a reused nonce and applies the per-principal limit to a
    /// fresh one (`spent.counted`: the count made with it, if any).
    pub async fn judge(host: &Host, principal: &P, spent: NonceSpent) -> Result<(), DomainError> {
        if !spent.fresh {
            return Err(refuse("nonce reused"));
        }
        host.limiter()
            .check_counted(Scope::Agent, principal.id(), spent.counted)
            .await
    }

    /// The refusal of a request checked against a copy that no longer
    /// holds (its principal gone, revoked or holding another key; nothing
    /// was spent): what the request would have met had the principal
    /// been read first.
    pub async fn gone(&self, host: &Host) -> DomainError {
        let id = self.principal.id();
        match P::revoked(host.store().as_ref(), id).await {
            Ok(Some((key, at))) if key == self.principal.public_key() => key_revoked(&at),
            Ok(_) => refuse("unknown or revoked principal"),
            Err(e) => e.into(),
        }
    }
}

/// Seconds a spent nonce is kept beyond the last instant its request could
/// be accepted: room for clocks of several host processes that disagree a
/// little, and for a purge that runs a little early.
pub const NONCE_MARGIN_SECS: i64 = 60;

/// When a nonce spent with a request stamped `at` may be forgotten (unix
/// seconds, compared by the purge as `expires_at < now`): never before the
/// request is refused as outside the window ([`api::refused_from`], rounded
/// up to the next whole second), plus [`NONCE_MARGIN_SECS`]. A nonce kept
/// any shorter could be purged while its request is still accepted, and the
/// request replayed once more.
pub fn nonce_expiry(at: OffsetDateTime) -> i64 {
    let refused = api::refused_from(at);
    let ceil = refused.unix_timestamp() + i64::from(refused.nanosecond() > 0);
    ceil + NONCE_MARGIN_SECS
}

/// Purges expired nonces once a minute for as long as the server runs.
pub async fn purge_nonces_forever(host: Host) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        tick.tick().await;
        if let Err(e) = host.purge_expired_nonces().await {
            tracing::warn!(error = %e, "purging expired nonces failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn a_nonce_is_kept_past_the_last_instant_its_request_is_accepted() {
        let key = keys::generate_signing_key();
        let vk = key.verifying_key();
        for ts in [
            datetime!(2026-12-04 12:00:00.000 UTC),
            datetime!(2026-12-04 12:00:00.550 UTC),
            datetime!(2026-12-04 12:00:00.999 UTC),
        ] {
            let stamp = api::format_timestamp(ts);
            let h = api::sign_request(&key, "agt", "GET", "/p", b"", &stamp, "n");
            let last_past = ts + time::Duration::milliseconds(300_999);
            let last_future = ts - time::Duration::milliseconds(300_999);
            for now in [last_past, last_future] {
                assert!(api::check_signed_request(&h, &vk, "GET", "/p", b"", now).is_ok());
            }
            for now in [
                ts + time::Duration::seconds(301),
                ts - time::Duration::seconds(301),
            ] {
                assert!(api::check_signed_request(&h, &vk, "GET", "/p", b"", now).is_err());
            }
            // The purge deletes `expires_at < floor(now)`: at the last
            // accepted instant, and a margin after it, the nonce is kept.
            let expiry = nonce_expiry(ts);
            assert!(
                expiry >= last_past.unix_timestamp() + NONCE_MARGIN_SECS,
                "{stamp}: expires {expiry}"
            );
        }
    }
}
