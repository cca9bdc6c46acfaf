//! The approver API v1 (docs/approver-api.md) under `/api/console/v1`:
//! enroll, summary, log, decisions, for ANP sessions and gate sessions
//! alike. Every route but enroll is signed like an ANP request; errors are
//! in ANP's shape.

use axum::extract::{Path, State};
use axum::http::header::{ETAG, IF_NONE_MATCH, RETRY_AFTER};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use countersign_host_api::approver::{DecisionResponse, EnrollRequest, RotateKeyRequest};

use super::support::{self, after_param, json_text, Registration, Signed};
use crate::auth::{Approver, RotatingApprover, SignedAs};
use crate::body::parse_json;
use crate::domain::decisions::Received;
use crate::error::ApiError;
use crate::service::{self, approver_anex, approver_gate, SessionRef};
use crate::Host;

/// The approver API's routes, relative to `/api/console/v1`.
pub fn router() -> Router<Host> {
    Router::new()
        .route("/enroll", post(enroll))
        .route("/summary", get(summary))
        .route("/keys", get(keys))
        .route("/keys/rotate", post(rotate))
        .route("/delegations", get(delegations).post(delegate))
        .route("/delegations/{id}/revoke", post(revoke_delegation))
        .route("/sessions/{id}/log", get(log))
        .route("/sessions/{id}/approvals", get(approvals))
        .route("/sessions/{id}/decisions", post(decide))
        .route(
            "/sessions/{id}/requests/{request_id}/deadline",
            post(extend_deadline),
        )
        .method_not_allowed_fallback(super::method_not_allowed)
}

/// `POST /enroll`: unsigned, rate limited; a one-time code makes an approver.
pub async fn enroll(
    State(host): State<Host>,
    Registration(incoming): Registration,
) -> Result<impl IntoResponse, ApiError> {
    let req: EnrollRequest = parse_json(&incoming.body, "enroll")?;
    let own = incoming.own_authorities(&host);
    let response = service::enroll(&host, &req, &own, host.clock().now()).await?;
    Ok((StatusCode::CREATED, Json(response)))
}

/// `GET /summary`: every session's head and pending decisions, ANP and
/// gate sessions alike. The answer carries an `ETag`; a request whose
/// `If-None-Match` names it gets `304 Not Modified` and no body, so a
/// console polling an unchanged host parses nothing (the request is still
/// signed and spends its nonce). With `?wait=SECONDS` (1 to
/// [`MAX_WAIT_SECONDS`]) an unchanged answer is held until it changes (a
/// write announced through [`crate::changes`], or a pending request
/// reaching its expiry) and then sent at once, or `304` when the wait ends.
pub async fn summary(
    State(host): State<Host>,
    stopping: Option<axum::Extension<crate::changes::Stopping>>,
    room: Option<axum::Extension<crate::server::Room>>,
    signed: Signed<Approver>,
) -> Result<Response, ApiError> {
    // A router served without the signal (a test's) never stops waiting early.
    let mut stopping = stopping.map(|axum::Extension(s)| s);
    let room = room.map(|axum::Extension(r)| r);
    // An unreadable header matches nothing, so the full answer is sent.
    let known = signed
        .incoming
        .headers
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let wait = wait_param(&signed.incoming.uri, host.config().wait_for_changes)?;
    let until = tokio::time::Instant::now() + wait;
    let mut changes = host.changes().subscribe(&signed.principal.org_handle);
    // Once waiting, the request gives its connection up to one arriving at
    // the host's cap (answering `304` with `Retry-After`), so consoles that
    // wait never keep a vendor's append out.
    let _held = room
        .as_ref()
        .filter(|_| !wait.is_zero())
        .map(crate::server::Room::hold);
    let mut woken = false;
    loop {
        changes.mark_unchanged();
        // Woken after a wait: an approver revoked (or moved to a new key)
        // meanwhile hears nothing more on this request; the next one it
        // signs is refused, with the reason.
        if std::mem::replace(&mut woken, true)
            && host
                .store()
                .principals()
                .active_approver(&signed.principal.id)
                .await?
                .is_none()
        {
            let tag = known.clone().unwrap_or_default();
            return Ok((StatusCode::NOT_MODIFIED, [(ETAG, tag)]).into_response());
        }
        let now = host.clock().now();
        let (text, next_expiry) = summary_text(&host, &signed.principal, now).await?;
        let tag = etag_of(&text);
        if !known
            .as_deref()
            .is_some_and(|header| etag_matches(header, &tag))
        {
            if !wait.is_zero() {
                // A large organization's consoles are paced: the change is
                // told no sooner than this console's pace allows, folding
                // in whatever else changes meanwhile.
                let principal = &signed.principal;
                if let Some(at) = host
                    .changes()
                    .not_before(&principal.id, &principal.org_handle)
                {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => continue,
                        _ = interrupted(&mut stopping, room.as_ref()) => {}
                    }
                }
                host.changes().answered(&principal.id);
            }
            return Ok(([(ETAG, tag)], json_text(text)).into_response());
        }
        // Not kept while waiting: a thousand waiting consoles would each
        // hold their organization's whole summary.
        drop(text);
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return Ok((StatusCode::NOT_MODIFIED, [(ETAG, tag)]).into_response());
        }
        // A pending request that expires changes the answer with no write.
        let expiry = next_expiry
            .map(|at| std::time::Duration::try_from(at - now).unwrap_or_default())
            .map(|d| d + std::time::Duration::from_millis(5));
        let sleep = expiry.map_or(left, |d| d.min(left));
        let unchanged = (StatusCode::NOT_MODIFIED, [(ETAG, tag)]);
        tokio::select! {
            why = interrupted(&mut stopping, room.as_ref()) => {
                return Ok(match why {
                    // The server is shutting down: answer now, not at the end.
                    Interrupted::Stopping => unchanged.into_response(),
                    // A connection arriving at the cap needs this one's place.
                    Interrupted::MakeRoom => {
                        let later = MAKE_ROOM_RETRY_SECONDS.to_string();
                        (unchanged.0, unchanged.1, [(RETRY_AFTER, later)]).into_response()
                    }
                });
            }
            woken = changes.changed() => {
                if woken.is_err() {
                    return Ok(unchanged.into_response());
                }
            }
            () = tokio::time::sleep(sleep) => {
                // The wait is over with nothing announced: as it was.
                if sleep == left {
                    return Ok(unchanged.into_response());
                }
            }
        }
    }
}

/// Why a waiting request must answer now.
enum Interrupted {
    /// The server is shutting down.
    Stopping,
    /// A connection arriving at the cap needs this one's place.
    MakeRoom,
}

/// Resolves when a waiting request must answer now, saying why (never for
/// a router served without the signals, as a test's is).
async fn interrupted(
    stopping: &mut Option<crate::changes::Stopping>,
    room: Option<&crate::server::Room>,
) -> Interrupted {
    tokio::select! {
        () = async {
            match stopping.as_mut() {
                Some(s) => s.stopped().await,
                None => std::future::pending().await,
            }
        } => Interrupted::Stopping,
        () = async {
            match room {
                Some(r) => r.wanted().await,
                None => std::future::pending().await,
            }
        } => Interrupted::MakeRoom,
    }
}

/// How long a console whose waiting request made room at the connection
/// cap is asked to wait before asking again (`Retry-After`).
pub const MAKE_ROOM_RETRY_SECONDS: u64 = 10;

/// The longest `?wait=` a console may ask for: under the read timeouts of
/// common proxies once set as the README's nginx configuration sets them,
/// and long enough that an idle console asks about once a minute.
pub const MAX_WAIT_SECONDS: u64 = 90;

/// Reads `?wait=SECONDS` (absent: no wait); refused where waiting is off.
fn wait_param(uri: &axum::http::Uri, offered: bool) -> Result<std::time::Duration, ApiError> {
    let mut wait = 0;
    for pair in uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if name == "wait" {
            if !offered {
                return Err(ApiError::Invalid(
                    "wait is not offered by this host (its admin switched waiting for changes off): ask for the summary without wait.".into(),
                ));
            }
            wait = value
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=MAX_WAIT_SECONDS).contains(n))
                .ok_or_else(|| {
                    ApiError::Invalid(format!(
                        "wait must be whole seconds from 1 to {MAX_WAIT_SECONDS}, got {value:?}."
                    ))
                })?;
        }
    }
    Ok(std::time::Duration::from_secs(wait))
}

/// The summary's exact text, and the earliest expiry among its pending
/// requests still ahead of `now` (when the answer changes without a write).
async fn summary_text(
    host: &Host,
    principal: &Approver,
    now: time::OffsetDateTime,
) -> Result<(String, Option<time::OffsetDateTime>), ApiError> {
    let enrolled = service::enrolled(host, principal).await?;
    let stand_ins = service::stand_ins(host, &principal.org_handle, now).await?;
    let mut summary = service::summary(host, principal, &enrolled, &stand_ins, now).await?;
    summary
        .sessions
        .extend(approver_gate::summary(host, principal, &enrolled, &stand_ins, now).await?);
    summary
        .sessions
        .extend(approver_anex::summary(host, principal, &enrolled, &stand_ins, now).await?);
    // A pending request expiring, or a step of its chain falling due (and
    // escalating), changes the answer with no write.
    let next_expiry = summary
        .sessions
        .iter()
        .flat_map(|s| s.pending.iter())
        .flat_map(|p| {
            let due = p
                .route
                .iter()
                .flat_map(|r| r.steps.iter())
                .filter(|step| !step.escalated)
                .filter_map(|step| step.due_at.as_deref());
            std::iter::once(p.expires_at.as_str()).chain(due)
        })
        .filter_map(anp::api::parse_timestamp)
        .filter(|at| *at > now)
        .min();
    let text = serde_json::to_string(&summary).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok((text, next_expiry))
}

/// `GET /keys`: the approver's own organization's discovery document,
/// each approver key named by the email its approvals carry
/// (`approved_by`): what a console checks every approval against. Signed,
/// so an approver's email reaches no one but its organization's approvers
/// (the public `/.well-known/anp.json` names no one).
pub async fn keys(
    State(host): State<Host>,
    signed: Signed<Approver>,
) -> Result<Json<anp::api::WellKnown>, ApiError> {
    let org = signed.principal.org_handle.as_str();
    Ok(Json(
        super::anp::discovery::document(&host, Some(org), true).await?,
    ))
}

/// `POST /keys/rotate`: the approver moves to a new key, signed (version
/// 2, which names this host) with the key it retires; idempotent.
pub async fn rotate(
    State(host): State<Host>,
    signed: Signed<RotatingApprover>,
) -> Result<Json<countersign_host_api::approver::RotateKeyResponse>, ApiError> {
    let SignedAs::V2(headers) = &signed.headers else {
        return Err(ApiError::Invalid(
            "a key rotation must be signed with version 2 of the request string (x-countersign-sig: 2), which names this host.".into(),
        ));
    };
    let req: RotateKeyRequest = parse_json(&signed.incoming.body, "rotate")?;
    let answer = service::rotate_key(
        &host,
        &signed.principal.0,
        &req,
        &headers.authority,
        signed.now,
    )
    .await?;
    Ok(Json(answer))
}

/// `GET /delegations`: the stand-ins the approver gave and received.
pub async fn delegations(
    State(host): State<Host>,
    signed: Signed<Approver>,
) -> Result<Json<countersign_host_api::approver::DelegationList>, ApiError> {
    Ok(Json(
        service::delegations::list(&host, &signed.principal, signed.now).await?,
    ))
}

/// `POST /delegations`: the approver lets another act for them in some
/// roles for some days; signed (version 2, which names this host), with
/// the statement signed too. `201` when new, `200` when sent again.
pub async fn delegate(
    State(host): State<Host>,
    signed: Signed<Approver>,
) -> Result<Response, ApiError> {
    let SignedAs::V2(headers) = &signed.headers else {
        return Err(ApiError::Invalid(
            "a delegation must be signed with version 2 of the request string (x-countersign-sig: 2), which names this host.".into(),
        ));
    };
    let req: countersign_host_api::approver::DelegateRequest =
        parse_json(&signed.incoming.body, "delegation")?;
    let (answer, fresh) = service::delegations::delegate(
        &host,
        &signed.principal,
        &req,
        &headers.authority,
        signed.now,
    )
    .await?;
    let status = if fresh {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(answer)).into_response())
}

/// `POST /delegations/{id}/revoke`: either side ends a delegation now.
pub async fn revoke_delegation(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<Approver>,
) -> Result<Json<countersign_host_api::approver::Delegation>, ApiError> {
    Ok(Json(
        service::delegations::revoke(&host, &signed.principal, &id, signed.now).await?,
    ))
}

/// The entity tag of an answer: a hash of its exact bytes, so any
/// change a console could see (a head, a status, a pending approval) changes
/// it, and nothing else does.
fn etag_of(text: &str) -> String {
    let hash = anp::canonical::sha256_hex(text.as_bytes());
    format!("\"{}\"", &hash[..32])
}

/// Whether an `If-None-Match` header names `tag` (RFC 9110 §13.1.2: a list of
/// tags, weak ones compared weakly, or `*`).
pub fn etag_matches(header: &str, tag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == tag
    })
}

/// `GET /sessions/:id/log?after=N`: the record in its protocol's own form.
pub async fn log(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<Approver>,
) -> Result<Response, ApiError> {
    let after = after_param(&signed.incoming.uri)?;
    match SessionRef::parse(&id) {
        SessionRef::Anp(id) => {
            service::visible_session(&host, &signed.principal, id).await?;
            let doc = support::log_text(&host, id, after).await?;
            Ok(json_text(doc).into_response())
        }
        SessionRef::Gate(protocol, sid) => {
            let log =
                approver_gate::log(&host, &signed.principal, protocol, sid, after, signed.now)
                    .await?;
            Ok(Json(log).into_response())
        }
        SessionRef::Anex(context_id) => {
            let log = approver_anex::log(&host, &signed.principal, context_id, after).await?;
            Ok(Json(log).into_response())
        }
    }
}

/// `GET /sessions/:id/approvals`: the host's record of every approval in an
/// ANP session (who, as which role at which step, for whom, under which
/// rule); a gate or ANEX session's receipts say it themselves, in its log.
pub async fn approvals(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<Approver>,
) -> Result<Json<countersign_host_api::approver::SessionApprovals>, ApiError> {
    match SessionRef::parse(&id) {
        SessionRef::Anp(id) => Ok(Json(
            service::session_approvals(&host, &signed.principal, id).await?,
        )),
        _ => Err(ApiError::from(crate::domain::DomainError::NotFound(
            "a gate or ANEX session's approvals are its receipts, in its log; this record is for ANP sessions.".into(),
        ))),
    }
}

/// `POST /sessions/:id/requests/:request_id/deadline`: a later deadline for
/// a pending gate request (the organization's own), with a reason. ANP
/// offers and ANEX asks have none to extend: an ANP offer's expiry is the
/// vendor's.
pub async fn extend_deadline(
    State(host): State<Host>,
    Path((id, request_id)): Path<(String, String)>,
    signed: Signed<Approver>,
) -> Result<Response, ApiError> {
    match SessionRef::parse(&id) {
        SessionRef::Gate(protocol, sid) => {
            let status = approver_gate::extend_deadline(
                &host,
                &signed.principal,
                protocol,
                sid,
                &request_id,
                &signed.incoming.body,
                signed.now,
            )
            .await?;
            Ok(Json(status).into_response())
        }
        _ => Err(ApiError::Invalid(
            "only a gate request's deadline is the organization's to extend: an ANP offer's expiry is the vendor's (counter with a later expiry instead), and an ANEX ask has none.".into(),
        )),
    }
}

/// `POST /sessions/:id/decisions`: approve, decline or counter (idempotent).
pub async fn decide(
    State(host): State<Host>,
    Path(id): Path<String>,
    signed: Signed<Approver>,
) -> Result<Response, ApiError> {
    let received = Received {
        body: &signed.incoming.body,
        headers: &signed.headers,
    };
    match SessionRef::parse(&id) {
        SessionRef::Anp(id) => {
            let (decision_id, decided) =
                service::decide(&host, &signed.principal, id, received, signed.now).await?;
            let log = service::log_document(&host, id, 0).await?;
            Ok(Json(DecisionResponse {
                decision_id,
                outcome: decided.outcome,
                detail: decided.detail,
                log,
            })
            .into_response())
        }
        SessionRef::Gate(protocol, sid) => {
            let answer = approver_gate::decide(
                &host,
                &signed.principal,
                protocol,
                sid,
                received,
                signed.now,
            )
            .await?;
            Ok(Json(answer).into_response())
        }
        SessionRef::Anex(context_id) => {
            let answer = approver_anex::decide(
                &host,
                &signed.principal,
                context_id,
                &signed.incoming.body,
                signed.now,
            )
            .await?;
            Ok(Json(answer).into_response())
        }
    }
}
