//! Decisions: checked locally (expiry, reason, counter rules, disputes),
//! signed with the approver's key, stored before they are sent, and sent
//! idempotently: a retry or a double click reuses the stored decision, same
//! `decision_id`, same bytes.

use crate::send::{send_decision, SendError};
use countersign_host_api::approver::{DecisionAction, DecisionRequest, DecisionResponse};

use crate::engine::{now_text, Engine};
use crate::error::{DecideError, EngineError};
use crate::inbox;
use crate::protocol::anp as proto;
use crate::store::{AppendedRef, DecisionRecord, StoredEvent};
use crate::views::{ChangeScope, DecideAction, DecideRequest, DecisionResult, Verification};

fn action_name(action: DecideAction) -> &'static str {
    match action {
        DecideAction::Approve => "approve",
        DecideAction::Decline => "decline",
        DecideAction::Counter => "counter",
    }
}

fn result_of(record: &DecisionRecord, stored: &[StoredEvent]) -> DecisionResult {
    DecisionResult {
        decision_id: record.decision_id.clone(),
        outcome: record.outcome.clone(),
        detail: record.detail.clone(),
        appended: record
            .appended
            .as_ref()
            .map(|a| crate::decided::appended_event(a, stored)),
    }
}

pub(crate) async fn decide(
    engine: &Engine,
    request: DecideRequest,
) -> Result<DecisionResult, DecideError> {
    let _one_at_a_time = engine.inner.decide_lock.lock().await;
    let action = action_name(request.action);
    let (host, record) = {
        let store = engine.store()?;
        let host = store
            .host(&request.host_id)?
            .ok_or_else(|| EngineError::NotFound {
                what: "host",
                id: request.host_id.clone(),
            })?;
        // A decision already made on this offer, with this action, is reused.
        let existing = store
            .live_decision(
                &request.host_id,
                &request.session_id,
                &request.in_response_to,
            )?
            .filter(|d| d.action == action);
        if let Some(done) = existing.as_ref().filter(|d| d.outcome != "pending") {
            let stored = store.events(&request.host_id, &request.session_id)?;
            return Ok(result_of(done, &stored));
        }
        let record = match existing {
            Some(pending_send) => pending_send,
            None => {
                let (body, proposal) =
                    new_decision(engine, &store, &host.approver_email, &request)?;
                let record = DecisionRecord {
                    decision_id: body.decision_id.clone(),
                    host_id: request.host_id.clone(),
                    session_id: request.session_id.clone(),
                    in_response_to: request.in_response_to.clone(),
                    action: action.to_owned(),
                    body: serde_json::to_string(&body)
                        .map_err(|e| EngineError::Protocol(e.to_string()))?,
                    headers: None,
                    outcome: "pending".to_owned(),
                    detail: String::new(),
                    at: now_text(),
                    proposal: Some(proposal),
                    appended: None,
                };
                store.insert_decision(&record)?;
                record
            }
        };
        (host, record)
    };
    let answered = inbox::find_pending(
        &*engine.store()?,
        &request.host_id,
        &request.session_id,
        &request.in_response_to,
    )?
    .map(|(_, p, _)| p);
    let expires_at = answered.as_ref().map(|p| p.expires_at.clone());
    let answered_seq = answered.as_ref().map_or(0, |p| p.seq);
    let decision_id = record.decision_id.clone();
    let sent = send_decision(
        &host.url,
        &engine.inner.key,
        &host.approver_id,
        &request.session_id,
        record.body.as_bytes(),
        |headers| {
            let text = serde_json::to_string(headers).unwrap_or_default();
            if let Ok(store) = engine.store() {
                let _ = store.set_decision_headers(&decision_id, &text);
            }
        },
    )
    .await;
    let outcome =
        sent.map_err(|e| map_refusal(e, &host.url, expires_at.map(|t| readable_time(engine, &t))));
    match outcome {
        Ok(DecisionResponse {
            decision_id,
            outcome,
            detail,
            log,
        }) => {
            let outcome = serde_json::to_value(outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "appended".to_owned());
            // The event the decision appended, as the host's answer names it
            // (only the host's word until the poller has verified it).
            let appended = (outcome == "appended")
                .then(|| proto::appended_by(&log, action, answered_seq))
                .flatten()
                .map(|e| AppendedRef {
                    seq: e.seq,
                    event_hash: e.event_hash,
                    kind: e.kind,
                });
            {
                let store = engine.store()?;
                store.update_decision(&decision_id, None, &outcome, &detail)?;
                if let Some(appended) = &appended {
                    store.set_decision_appended(&decision_id, appended)?;
                }
            }
            engine.emit(
                ChangeScope::Inbox,
                Some(&request.host_id),
                Some(&request.session_id),
            );
            // Bring the inbox and the log up to date now, not at the next tick.
            let _ = engine.refresh().await;
            let stored = engine
                .store()?
                .events(&request.host_id, &request.session_id)?;
            Ok(DecisionResult {
                decision_id,
                outcome,
                detail,
                appended: appended.map(|a| crate::decided::appended_event(&a, &stored)),
            })
        }
        Err(DecideError::Unreachable(detail)) => {
            // Kept as `pending`: the next attempt resends the same decision.
            Err(DecideError::Unreachable(detail))
        }
        Err(refusal) => {
            engine.store()?.update_decision(
                &record.decision_id,
                None,
                "refused",
                &refusal.to_string(),
            )?;
            Err(refusal)
        }
    }
}

/// Checks a fresh decision locally and builds the signed request, with the
/// pending record it answers (kept with the decision).
fn new_decision(
    engine: &Engine,
    store: &crate::store::Store,
    approver_email: &str,
    request: &DecideRequest,
) -> Result<(DecisionRequest, String), DecideError> {
    let (record, pending, session) = inbox::find_pending(
        store,
        &request.host_id,
        &request.session_id,
        &request.in_response_to,
    )?
    .ok_or(DecideError::NotPending)?;
    if session.verification == Verification::Disputed {
        return Err(DecideError::Disputed);
    }
    if session.status != "open" {
        return Err(DecideError::SessionClosed);
    }
    let expired = inbox::is_expired(&pending.expires_at);
    let decision_id = uuid::Uuid::new_v4().to_string();
    let base = DecisionRequest {
        decision_id,
        action: DecisionAction::Approve,
        in_response_to: request.in_response_to.clone(),
        reason: None,
        offer: None,
        approval: None,
    };
    let signed = match request.action {
        DecideAction::Approve => {
            if expired {
                return Err(DecideError::Expired {
                    expires_at: readable_time(engine, &pending.expires_at),
                });
            }
            let approval = anp::approval::sign_approval(
                &engine.inner.key,
                &request.in_response_to,
                approver_email,
                &now_text(),
            );
            DecisionRequest {
                approval: Some(approval),
                ..base
            }
        }
        DecideAction::Decline => {
            let reason = request.reason.as_deref().map(str::trim).unwrap_or("");
            if reason.is_empty() {
                return Err(DecideError::ReasonRequired);
            }
            DecisionRequest {
                action: DecisionAction::Decline,
                reason: Some(reason.to_owned()),
                ..base
            }
        }
        DecideAction::Counter => {
            let offer = request
                .offer
                .clone()
                .ok_or_else(|| DecideError::InvalidCounter {
                    errors: vec![crate::views::FieldError {
                        path: "offer".to_owned(),
                        message: "a counter needs the offer to send".to_owned(),
                    }],
                })?;
            proto::validate_offer(&offer)
                .map_err(|errors| DecideError::InvalidCounter { errors })?;
            DecisionRequest {
                action: DecisionAction::Counter,
                offer: Some(offer),
                ..base
            }
        }
    };
    Ok((signed, record.body))
}

/// A protocol time as the person reads it ("Tue 1 Dec, 09:53" in the
/// machine's locale and zone); text that is not a time as it is.
fn readable_time(engine: &Engine, text: &str) -> String {
    match text.parse::<humanize::Timestamp>() {
        Ok(at) => engine.humanizer().absolute(at, humanize::Timestamp::now()),
        Err(_) => text.to_owned(),
    }
}

/// The host's refusal, as a typed error a person can read.
fn map_refusal(error: SendError, url: &str, expires_at: Option<String>) -> DecideError {
    use anp::api::codes;
    match error {
        SendError::Refused { code, message } => match code.as_str() {
            codes::OFFER_EXPIRED => DecideError::Expired {
                expires_at: expires_at.unwrap_or(message),
            },
            codes::NOT_STANDING | codes::NO_STANDING_OFFER => DecideError::NotStanding,
            codes::POLICY => DecideError::Policy(message),
            codes::SESSION_CLOSED => DecideError::SessionClosed,
            codes::UNAUTHORIZED | codes::BAD_SIGNATURE => DecideError::Unauthorized,
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
