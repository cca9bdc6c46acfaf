//! An ANEX decision (docs/approver-api.md, "ANEX"): the terms record of the
//! decided terms (`crates/anex`'s `TermsRecord`, built as the host expects
//! it by `countersign_client::anex_record`), an ApprovalReceipt over it
//! signed with the approver's key (`scope.offer_hash` the record's hash,
//! `scope.terms` the record, `0 XXX` for the amounts, the `approves`
//! reference to `urn:anex:conversation:<id>`, expiring with the terms),
//! and the decision request. Nothing is signed for a responder other than
//! the enrolled host's own agent (`responder`). Approve proposes the ask as asked; decline
//! refuses it with a reason (a `deny` receipt); counter proposes narrower
//! terms, checked first by the counter editor's rule.

use approval_receipt::receipt::Decision;
use countersign_host_api::anex::{AnexDecisionRequest, AnexDecisionResponse, AnexTerms};
use countersign_host_api::approver::DecisionAction;
use serde_json::Value;

use super::ask::{ask_at, check, pending_anex};
use crate::error::DecideError;
use crate::protocol::{DecisionAnswer, DecisionInput};
use crate::views::DecideAction;

fn cannot(why: impl Into<String>) -> DecideError {
    DecideError::CannotSign(why.into())
}

/// The exact body of the decision request.
pub(crate) fn build(input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError> {
    let pending = pending_anex(input.pending).ok_or_else(|| {
        cannot("the host's pending record names no ANEX ask (who asks, which items, which promises), which the terms record is built from")
    })?;
    // Whom the receipt binds the person to: only the enrolled host's own agent.
    super::responder::check(input.host_url, &pending.responder).map_err(cannot)?;
    let (event, message, asked) =
        ask_at(input.events, &input.pending.event_hash).ok_or(DecideError::NotPending)?;
    if message.receiver().as_str() != pending.responder {
        return Err(cannot(format!(
            "the host says the terms' responder is {:?}, but the stored message {} was sent to {:?}",
            pending.responder,
            event.event_hash,
            message.receiver().as_str()
        )));
    }
    if message.message_id().as_str() != pending.answers {
        return Err(cannot(format!(
            "the host says the ask awaiting you is message {:?}, but the stored message {} is {:?}",
            pending.answers,
            event.event_hash,
            message.message_id().as_str()
        )));
    }
    // What is signed is what the verified record asks, not only the host's word.
    let host_terms = anex::Terms::from_wire(
        &pending
            .items
            .iter()
            .map(|i| {
                if i.required {
                    format!("{}(m)", i.item)
                } else {
                    i.item.clone()
                }
            })
            .collect::<Vec<_>>(),
        &pending.promise,
    )
    .map_err(|e| cannot(format!("the host's pending ask: {e}")))?;
    if !host_terms.same_as(&asked) {
        return Err(cannot(
            "the host's pending ask lists other items, marks or promises than the message it names",
        ));
    }
    let as_asked = AnexTerms {
        access: asked
            .access
            .iter()
            .map(|a| a.name.as_str().to_owned())
            .collect(),
        promise: asked
            .promise
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect(),
    };
    let reason = input.request.reason.as_deref().map(str::trim).unwrap_or("");
    let (action, decision, terms, counter_terms, reason) = match input.request.action {
        DecideAction::Approve => (
            DecisionAction::Approve,
            Decision::Approve,
            as_asked,
            None,
            None,
        ),
        DecideAction::Decline => {
            if reason.is_empty() {
                return Err(DecideError::ReasonRequired);
            }
            anex::Text::parse(reason).map_err(|e| {
                cannot(format!(
                    "the reason is sent to the requester and must be one line: {e}"
                ))
            })?;
            (
                DecisionAction::Decline,
                Decision::Deny,
                as_asked,
                None,
                Some(reason.to_owned()),
            )
        }
        DecideAction::Counter => {
            let counter = input.request.counter.clone().unwrap_or(Value::Null);
            let (lists, _) =
                check(&asked, &counter).map_err(|errors| DecideError::InvalidCounter { errors })?;
            let lists = AnexTerms {
                access: lists.access,
                promise: lists.promise,
            };
            (
                DecisionAction::Counter,
                Decision::Approve,
                lists.clone(),
                Some(lists),
                None,
            )
        }
    };
    let record = countersign_client::anex_record(&pending, &terms, input.now)
        .map_err(|e| cannot(e.to_string()))?;
    let role = crate::protocol::gate_decision::signed_role(input.pending);
    let receipt = countersign_client::sign_anex_receipt(
        decision,
        &record,
        input.key,
        input.now,
        role.as_deref(),
        crate::protocol::gate_decision::signed_stand_in(input.pending),
    )
    .map_err(|e| cannot(e.to_string()))?;
    let body = AnexDecisionRequest {
        decision_id: input.decision_id.to_owned(),
        action,
        in_response_to: pending.answers,
        receipt,
        reason,
        counter_terms,
    };
    serde_json::to_vec(&body).map_err(|e| cannot(e.to_string()))
}

/// Reads the host's answer (`{decision_id, outcome, detail, answer}`): the
/// ANEX message it sent the requester is in the conversation the next poll
/// fetches.
pub(crate) fn read_answer(body: &[u8]) -> Result<DecisionAnswer, DecideError> {
    let answer: AnexDecisionResponse =
        serde_json::from_slice(body).map_err(|e| DecideError::Refused {
            code: "protocol".to_owned(),
            message: format!("decision answer: {e}"),
        })?;
    let outcome = serde_json::to_value(answer.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    if !matches!(outcome.as_str(), "appended" | "awaiting_approvals" | "held") {
        return Err(DecideError::Refused {
            code: "protocol".to_owned(),
            message: format!("the host answered the outcome {outcome:?}"),
        });
    }
    Ok(DecisionAnswer {
        decision_id: answer.decision_id,
        outcome,
        detail: answer.detail,
        appended: None,
    })
}
