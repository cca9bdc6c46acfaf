//! An ANP decision: the RFC-002 approval an approve carries, a decline's
//! reason, a buyer counter-offer checked by `anp::payload`, as the approver
//! API's decision request; and the event the host's answer says it appended.

use anp::{EventKind, LogDocument};
use countersign_host_api::approver::{DecisionAction, DecisionRequest, DecisionResponse};

use crate::clock::format_time;
use crate::error::DecideError;
use crate::protocol::{DecisionAnswer, DecisionInput, StoredRef};
use crate::views::{DecideAction, FieldError};

/// The exact body of the decision request.
pub(crate) fn build(input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError> {
    let request = input.request;
    let base = DecisionRequest {
        decision_id: input.decision_id.to_owned(),
        action: DecisionAction::Approve,
        in_response_to: request.in_response_to.clone(),
        reason: None,
        offer: None,
        approval: None,
    };
    let body = match request.action {
        DecideAction::Approve => DecisionRequest {
            approval: Some(anp::approval::sign_approval(
                input.key,
                &request.in_response_to,
                input.approver_email,
                &format_time(input.now),
            )),
            ..base
        },
        DecideAction::Decline => DecisionRequest {
            action: DecisionAction::Decline,
            reason: request.reason.as_deref().map(|r| r.trim().to_owned()),
            ..base
        },
        DecideAction::Counter => {
            let offer = request
                .counter
                .clone()
                .ok_or_else(|| DecideError::InvalidCounter {
                    errors: vec![FieldError {
                        path: "offer".to_owned(),
                        message: "a counter needs the offer to send".to_owned(),
                    }],
                })?;
            super::offer::validate_offer(&offer, input.now)
                .map_err(|errors| DecideError::InvalidCounter { errors })?;
            DecisionRequest {
                action: DecisionAction::Counter,
                offer: Some(offer),
                ..base
            }
        }
    };
    serde_json::to_vec(&body).map_err(|e| DecideError::Refused {
        code: "protocol".to_owned(),
        message: e.to_string(),
    })
}

/// The event a decision appended, in the log the host answered it with:
/// the last buyer event of the decision's kind after the proposal's seq.
fn appended_by(doc: &LogDocument, action: &str, after: u64) -> Option<StoredRef> {
    let kind = match action {
        "approve" => EventKind::Accept,
        "decline" => EventKind::Decline,
        "counter" => EventKind::CounterOffer,
        _ => return None,
    };
    doc.events
        .iter()
        .rev()
        .find(|e| e.seq > after && e.kind == kind && e.actor == anp::Actor::Buyer)
        .map(|e| StoredRef {
            seq: e.seq,
            kind: e.kind.as_str().to_owned(),
            event_hash: e.event_hash.clone(),
            at: e.at.clone(),
        })
}

/// Reads the host's answer to a decision.
pub(crate) fn read_answer(
    body: &[u8],
    action: &str,
    after: u64,
) -> Result<DecisionAnswer, DecideError> {
    let answer: DecisionResponse =
        serde_json::from_slice(body).map_err(|e| DecideError::Refused {
            code: "protocol".to_owned(),
            message: format!("decision answer: {e}"),
        })?;
    let outcome = serde_json::to_value(answer.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "appended".to_owned());
    let appended = (outcome == "appended")
        .then(|| appended_by(&answer.log, action, after))
        .flatten();
    Ok(DecisionAnswer {
        decision_id: answer.decision_id,
        outcome,
        detail: answer.detail,
        appended,
    })
}
