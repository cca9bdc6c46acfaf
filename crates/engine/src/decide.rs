//! Decisions: checked locally (expiry, reason, disputes, the session's
//! state), signed by the session's protocol with the approver's key, stored
//! before they are sent, and sent idempotently: a retry or a double click
//! reuses the stored decision, same `decision_id`, same bytes.

use time::OffsetDateTime;

use crate::context::Context;
use crate::edge::codes;
use crate::edge::transport::SendError;
use crate::error::{DecideError, EngineError};
use crate::inbox;
use crate::protocol::{DecisionInput, PendingProposal};
use crate::store::{AppendedRef, DecisionRecord, HostRecord, SessionRecord, Store};
use crate::views::{ChangeScope, DecideAction, DecideRequest, DecisionResult, Verification};

fn action_name(action: DecideAction) -> &'static str {
    match action {
        DecideAction::Approve => "approve",
        DecideAction::Decline => "decline",
        DecideAction::Counter => "counter",
    }
}

/// A decision made: what the host answered (or what was kept from an
/// earlier attempt), for the engine to finish once the log is fresh.
pub(crate) struct Decided {
    /// True when it was sent now (the engine then polls the host at once,
    /// so the entry it appended is verified before the result is read).
    pub sent: bool,
    host_id: String,
    session_id: String,
    decision_id: String,
    outcome: String,
    detail: String,
    appended: Option<AppendedRef>,
}

/// The result as the person reads it: the appended entry is `verified`
/// once the stored copy holds it.
pub(crate) fn result(ctx: &Context, decided: Decided) -> Result<DecisionResult, DecideError> {
    let stored = ctx.store()?.events(&decided.host_id, &decided.session_id)?;
    Ok(DecisionResult {
        decision_id: decided.decision_id,
        outcome: decided.outcome,
        detail: decided.detail,
        appended: decided
            .appended
            .map(|a| crate::decided::appended_event(&a, &stored)),
    })
}

fn kept(record: &DecisionRecord) -> Decided {
    Decided {
        sent: false,
        host_id: record.host_id.clone(),
        session_id: record.session_id.clone(),
        decision_id: record.decision_id.clone(),
        outcome: record.outcome.clone(),
        detail: record.detail.clone(),
        appended: record.appended.clone(),
    }
}

/// Checks, signs, stores and sends a decision, or finds the one already
/// made on this proposal with this action.
pub(crate) async fn decide(ctx: &Context, request: DecideRequest) -> Result<Decided, DecideError> {
    let _one_at_a_time = ctx.decide_lock.lock().await;
    let action = action_name(request.action);
    let now = ctx.now();
    let (host, session, record) = {
        let store = ctx.store()?;
        let host = store
            .host(&request.host_id)?
            .ok_or_else(|| EngineError::NotFound {
                what: "host",
                id: request.host_id.clone(),
            })?;
        let session = store
            .session(&request.host_id, &request.session_id)?
            .ok_or(DecideError::NotPending)?;
        // A decision already made on this offer, with this action, is reused.
        let existing = store
            .live_decision(
                &request.host_id,
                &request.session_id,
                &request.in_response_to,
            )?
            .filter(|d| d.action == action);
        if let Some(done) = existing.as_ref().filter(|d| d.outcome != "pending") {
            return Ok(kept(done));
        }
        let record = match existing {
            Some(pending_send) => pending_send,
            None => {
                let decision_id = uuid::Uuid::new_v4().to_string();
                let (body, proposal) =
                    new_decision(ctx, &store, &host, &request, &decision_id, now)?;
                let record = DecisionRecord {
                    decision_id,
                    host_id: request.host_id.clone(),
                    session_id: request.session_id.clone(),
                    in_response_to: request.in_response_to.clone(),
                    action: action.to_owned(),
                    body: String::from_utf8(body).map_err(|e| {
                        EngineError::Protocol(format!("the decision is not UTF-8: {e}"))
                    })?,
                    headers: None,
                    outcome: "pending".to_owned(),
                    detail: String::new(),
                    at: ctx.now_text(),
                    proposal: Some(proposal),
                    appended: None,
                    key_fingerprint: Some(ctx.key_of(&host)),
                };
                store.insert_decision(&record)?;
                record
            }
        };
        (host, session, record)
    };
    send_stored(ctx, &host, &session, record).await
}

/// Sends a stored decision, the same bytes under the same `decision_id`
/// (the host answers a repeat as it answered the first), and records what
/// the host answered. The caller holds `decide_lock`.
pub(crate) async fn send_stored(
    ctx: &Context,
    host: &HostRecord,
    session: &SessionRecord,
    record: DecisionRecord,
) -> Result<Decided, DecideError> {
    let action = record.action.as_str();
    let seam = inbox::protocol_of(session)?.seam();
    let answered = inbox::find_pending(
        &*ctx.store()?,
        &record.host_id,
        &record.session_id,
        &record.in_response_to,
    )?
    .map(|(_, p, _)| p);
    let expires_at = answered.as_ref().map(|p| p.expires_at.clone());
    let answered_seq = answered.as_ref().map_or(0, |p| p.seq);
    let decision_id = record.decision_id.clone();
    let io = ctx.host_io(host)?;
    let keep_headers = |headers: &str| {
        if let Ok(store) = ctx.store() {
            let _ = store.set_decision_headers(&decision_id, headers);
        }
    };
    let sent = seam
        .send_decision(
            &io,
            &record.session_id,
            record.body.as_bytes(),
            &keep_headers,
        )
        .await
        .map_err(|e| refusal_with_expiry(e, &host.url, expires_at.map(|t| readable_time(ctx, &t))))
        .and_then(|sent| seam.read_answer(&sent.body, action, answered_seq));
    match sent {
        Ok(answer) => {
            // The entry the decision appended, as the host's answer names it
            // (only the host's word until the poller has verified it).
            let appended = answer.appended.map(|e| AppendedRef {
                seq: e.seq,
                event_hash: e.event_hash,
                kind: e.kind,
            });
            {
                let store = ctx.store()?;
                store.update_decision(
                    &answer.decision_id,
                    None,
                    &answer.outcome,
                    &answer.detail,
                )?;
                if let Some(appended) = &appended {
                    store.set_decision_appended(&answer.decision_id, appended)?;
                }
            }
            ctx.emit(
                ChangeScope::Inbox,
                Some(&record.host_id),
                Some(&record.session_id),
            );
            Ok(Decided {
                sent: true,
                host_id: record.host_id,
                session_id: record.session_id,
                decision_id: answer.decision_id,
                outcome: answer.outcome,
                detail: answer.detail,
                appended,
            })
        }
        Err(DecideError::Unreachable(detail)) => {
            // Kept as `pending`: the next attempt resends the same decision.
            Err(DecideError::Unreachable(detail))
        }
        Err(refusal) => {
            ctx.store()?.update_decision(
                &record.decision_id,
                None,
                "refused",
                &refusal.to_string(),
            )?;
            Err(refusal)
        }
    }
}

/// The checks every protocol's decision passes before it is signed.
fn check_locally(
    ctx: &Context,
    session: &SessionRecord,
    pending: &PendingProposal,
    request: &DecideRequest,
    now: OffsetDateTime,
) -> Result<(), DecideError> {
    if session.verification == Verification::Disputed {
        return Err(DecideError::Disputed);
    }
    let seam = inbox::protocol_of(session)?.seam();
    if !seam.takes_decisions(&session.status) {
        return Err(DecideError::SessionClosed);
    }
    // The host routed it along a chain of approvals: nothing is signed that
    // the chain, as the host last told it, would refuse.
    if let Some(chain) = &pending.chain {
        if !chain.allows(request.action) {
            return Err(DecideError::NotYourTurn(chain_refusal(
                chain,
                request.action,
            )));
        }
    }
    match request.action {
        action if seam.expiry_refuses(action) && inbox::is_expired(&pending.expires_at, now) => {
            Err(DecideError::Expired {
                expires_at: readable_time(ctx, &pending.expires_at),
            })
        }
        DecideAction::Decline
            if request
                .reason
                .as_deref()
                .map(str::trim)
                .unwrap_or("")
                .is_empty() =>
        {
            Err(DecideError::ReasonRequired)
        }
        _ => Ok(()),
    }
}

/// Why the chain refuses `action` to this person, in the host's words.
fn chain_refusal(chain: &crate::views::ApprovalChain, action: DecideAction) -> String {
    let Some(n) = chain.current_step else {
        return "every step of its chain of approvals is met already".into();
    };
    let roles: Vec<&str> = chain
        .steps
        .iter()
        .filter(|s| s.number == n)
        .flat_map(|s| &s.parts)
        .filter(|p| (p.approved_by.len() as u32) < p.required)
        .map(|p| p.role.as_str())
        .collect();
    if action == DecideAction::Approve && chain.you_may_decide {
        return format!(
            "your approval already counts on this request; step {n} waits on another holder of {}",
            roles.join(" or ")
        );
    }
    format!(
        "step {n} of its chain of approvals waits on {}, and you hold none of those roles",
        roles.join(" and ")
    )
}

/// Checks a fresh decision locally and has the session's protocol build the
/// signed request; returns its exact bytes and the pending record it answers
/// (kept with the decision).
fn new_decision(
    ctx: &Context,
    store: &Store,
    host: &HostRecord,
    request: &DecideRequest,
    decision_id: &str,
    now: OffsetDateTime,
) -> Result<(Vec<u8>, String), DecideError> {
    let (record, pending, session) = inbox::find_pending(
        store,
        &request.host_id,
        &request.session_id,
        &request.in_response_to,
    )?
    .ok_or(DecideError::NotPending)?;
    check_locally(ctx, &session, &pending, request, now)?;
    let key = signing_key(
        ctx,
        store,
        &session,
        &pending,
        request,
        now,
        &ctx.key_of(host),
    )?;
    let events = store.events(&request.host_id, &request.session_id)?;
    let body = inbox::protocol_of(&session)?
        .seam()
        .build_decision(&DecisionInput {
            request,
            pending: &pending,
            events: &events,
            key: &key,
            approver_email: &host.approver_email,
            host_url: &host.url,
            decision_id,
            now,
        })?;
    Ok((body, record.body))
}

/// The key for this decision, if the vault lets it sign now: unlocked,
/// not idle, and freshly confirmed when an approval's amount is above the
/// person's limit (a decline or counter binds nothing, so it is not asked
/// again).
fn signing_key(
    ctx: &Context,
    store: &Store,
    session: &SessionRecord,
    pending: &PendingProposal,
    request: &DecideRequest,
    now: OffsetDateTime,
    fingerprint: &str,
) -> Result<ed25519_dalek::SigningKey, DecideError> {
    // The store is already locked by the caller: read the settings through it.
    let settings = crate::settings::Effective::load(store, &ctx.config)
        .unwrap_or_else(|_| crate::settings::Effective::defaults(&ctx.config));
    let above = match (request.action, settings.confirm_above()) {
        (DecideAction::Approve, Some(limit)) => inbox::pending_amount(store, session, pending)
            .filter(|(value, _)| {
                value
                    .parse::<rust_decimal::Decimal>()
                    .is_ok_and(|v| v > limit)
            })
            .map(|(value, currency)| ctx.humanizer().money(&value, &currency)),
        _ => None,
    };
    ctx.vault
        .decision_key(now, settings.idle_lock(), above.as_deref(), fingerprint)
}

/// A protocol time as the person reads it ("Tue 1 Dec, 09:53" in the
/// machine's locale and zone); text that is not a time as it is.
pub(crate) fn readable_time(ctx: &Context, text: &str) -> String {
    match text.parse::<humanize::Timestamp>() {
        Ok(at) => ctx.humanizer().absolute(at, ctx.human_now()),
        Err(_) => text.to_owned(),
    }
}

/// The host's refusal of a decision, as a typed error a person can read.
pub(crate) fn refusal_with_expiry(
    error: SendError,
    url: &str,
    expires_at: Option<String>,
) -> DecideError {
    match error {
        SendError::Refused { code, message } => match code.as_str() {
            codes::OFFER_EXPIRED => DecideError::Expired {
                expires_at: expires_at.unwrap_or(message),
            },
            codes::NOT_STANDING | codes::NO_STANDING_OFFER => DecideError::NotStanding,
            codes::POLICY => DecideError::Policy(message),
            codes::SESSION_CLOSED => DecideError::SessionClosed,
            codes::UNAUTHORIZED | codes::BAD_SIGNATURE => DecideError::Unauthorized,
            countersign_host_api::approver::KEY_REVOKED => DecideError::KeyRevoked(message),
            codes::INVALID_REQUEST if message.contains("screen") => DecideError::Screening(message),
            _ => DecideError::Refused { code, message },
        },
        SendError::Unreachable(detail) => DecideError::Unreachable(format!("{url}: {detail}")),
        SendError::Garbled(detail) => DecideError::Refused {
            code: "protocol".to_owned(),
            message: detail,
        },
    }
}

/// Moves a gate request's deadline later, with a reason: only where the
/// deadline is the organization's own (the seam says so), and only for a
/// person the request's chain lets decide now.
pub(crate) async fn extend_deadline(
    ctx: &Context,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
    expires_at: &str,
    reason: &str,
) -> Result<(), DecideError> {
    let (host, pending, session) = {
        let store = ctx.store()?;
        let host = store.host(host_id)?.ok_or_else(|| EngineError::NotFound {
            what: "host",
            id: host_id.to_owned(),
        })?;
        let (_, pending, session) = inbox::find_pending(&store, host_id, session_id, event_hash)?
            .ok_or(DecideError::NotPending)?;
        (host, pending, session)
    };
    let seam = inbox::protocol_of(&session)?.seam();
    if !seam.capabilities(&pending).deadline_is_ours {
        return Err(EngineError::InvalidInput(
            "This proposal's expiry is the counterparty's, not the organization's: counter with a later expiry to move it.".into(),
        )
        .into());
    }
    if let Some(chain) = pending.chain.as_ref().filter(|c| !c.you_may_decide) {
        return Err(DecideError::NotYourTurn(chain_refusal(
            chain,
            DecideAction::Decline,
        )));
    }
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(DecideError::ReasonRequired);
    }
    let request_id = pending.request_id.clone().ok_or(DecideError::NotPending)?;
    let io = ctx.host_io(&host)?;
    crate::edge::wire::extend_deadline(&io.client, session_id, &request_id, expires_at, reason)
        .await
        .map_err(|e| match e {
            // Not a decision the host refused: what it said of the deadline.
            SendError::Refused { code, message } if code == codes::INVALID_REQUEST => {
                DecideError::Engine(EngineError::HostRefused { code, message })
            }
            other => refusal_with_expiry(
                other,
                &host.url,
                Some(readable_time(ctx, &pending.expires_at)),
            ),
        })?;
    ctx.emit(ChangeScope::Inbox, Some(host_id), Some(session_id));
    Ok(())
}
