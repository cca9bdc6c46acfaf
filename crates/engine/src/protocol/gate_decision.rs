//! The decision wire every gate protocol shares (docs/approver-api.md): the
//! body a console POSTs for a gate session (`{decision_id, action,
//! in_response_to, receipt, …}`) and the host's answer. Concordia and OANP
//! build their own ApprovalReceipts; what carries them is written once here.

use approval_receipt::receipt::Amount as ReceiptAmount;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::DecideError;
use crate::protocol::DecisionAnswer;
use crate::views::DecideAction;

/// A decision that cannot be signed, with the sentence why.
pub(crate) fn cannot(why: impl Into<String>) -> DecideError {
    DecideError::CannotSign(why.into())
}

/// An exact amount for a receipt (`"150000.00 USD"`), refused with `what`
/// named.
pub(crate) fn receipt_amount(text: &str, what: &str) -> Result<ReceiptAmount, DecideError> {
    text.parse::<ReceiptAmount>()
        .map_err(|e| cannot(format!("{what}: {e}")))
}

/// The exact body of a gate decision: the signed receipt answering the
/// agent's request `request_id`, and the members `extra` adds (a reason,
/// counter terms).
pub(crate) fn body(
    decision_id: &str,
    action: DecideAction,
    request_id: &str,
    receipt: Value,
    extra: &Value,
) -> Result<Vec<u8>, DecideError> {
    let action = match action {
        DecideAction::Approve => "approve",
        DecideAction::Decline => "decline",
        DecideAction::Counter => "counter",
    };
    let mut body = json!({
        "decision_id": decision_id,
        "action": action,
        "in_response_to": request_id,
        "receipt": receipt,
    });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    serde_json::to_vec(&body).map_err(|e| cannot(e.to_string()))
}

#[derive(Deserialize)]
struct Answer {
    decision_id: String,
    outcome: String,
    #[serde(default)]
    detail: String,
}

/// Reads the host's answer (`{decision_id, outcome, detail, request}`). A
/// gate decision appends nothing to the record: the org's agent reads the
/// receipt and sends its own next message.
pub(crate) fn read_answer(body: &[u8]) -> Result<DecisionAnswer, DecideError> {
    let answer: Answer = serde_json::from_slice(body).map_err(|e| DecideError::Refused {
        code: "protocol".to_owned(),
        message: format!("decision answer: {e}"),
    })?;
    if !matches!(
        answer.outcome.as_str(),
        "appended" | "awaiting_approvals" | "held"
    ) {
        return Err(DecideError::Refused {
            code: "protocol".to_owned(),
            message: format!("the host answered the outcome {:?}", answer.outcome),
        });
    }
    Ok(DecisionAnswer {
        decision_id: answer.decision_id,
        outcome: answer.outcome,
        detail: answer.detail,
        appended: None,
    })
}

/// Whom a receipt is signed for, when the host says this person decides
/// as a stand-in (`approver.on_behalf_of`).
pub(crate) fn signed_stand_in(
    pending: &crate::protocol::PendingProposal,
) -> Option<approval_receipt::receipt::OnBehalfOf> {
    pending
        .chain
        .as_ref()
        .and_then(|c| c.your_stand_in.as_ref())
        .map(|s| approval_receipt::receipt::OnBehalfOf {
            person: s.for_person.clone(),
            delegation: s.delegation.clone(),
        })
}

/// The role a receipt is signed as: the one the host says this person
/// decides as, where the org's policy of authority routed the request (a
/// chain with a policy version); none under the old threshold, whose
/// receipts never named one.
pub(crate) fn signed_role(pending: &crate::protocol::PendingProposal) -> Option<String> {
    pending
        .chain
        .as_ref()
        .filter(|c| c.policy_version.is_some())
        .and_then(|c| c.your_role.clone())
}
