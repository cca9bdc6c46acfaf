//! A decision on plain terms: a Concordia ApprovalReceipt
//! (`crates/approval-receipt`) signed with the approver's key, whose
//! `scope.offer_hash` is the hash of the host's signed entry of the terms,
//! `scope.amount` their exact total, the `approves` reference
//! `urn:countersign:plain:<thread>`, expiring with the request. Approve is
//! an `approve` receipt; decline a `deny` receipt and its reason; counter a
//! `deny` receipt, a reason and plain terms read as strictly as the host
//! reads the agent's.

use approval_receipt::datetime;
use approval_receipt::receipt::{build_receipt_referencing, sign_receipt, Decision, ReceiptDraft};
use serde_json::{json, Value};

use super::log::session_id;
use super::terms::{check_terms, entry, terms_of};
use crate::error::DecideError;
use crate::protocol::gate_decision::{self, cannot, receipt_amount, signed_role};
use crate::protocol::DecisionInput;
use crate::views::DecideAction;

/// The exact body of the decision request: the signed receipt and what goes with it.
pub(crate) fn build(input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError> {
    let pending = input.pending;
    let request_id = pending.request_id.clone().ok_or_else(|| {
        cannot("the host names no request of the org's agent for these terms, and a decision answers that request")
    })?;
    let stored = input
        .events
        .iter()
        .find(|e| e.event_hash == pending.event_hash)
        .ok_or(DecideError::NotPending)?;
    let value = entry(stored).ok_or_else(|| cannot("the stored terms entry cannot be read"))?;
    if plain::hash(&value) != pending.event_hash {
        return Err(cannot(format!(
            "the stored entry hashes to {}, not to the awaited {}",
            plain::hash(&value),
            pending.event_hash
        )));
    }
    let terms = terms_of(stored).ok_or_else(|| cannot("the awaited entry carries no terms"))?;
    let amount = receipt_amount(&terms.amount_text(), "the terms' total")?;
    if let Some(asked) = pending.amount.as_deref() {
        let asked = receipt_amount(asked, "the request's amount")?;
        if asked != amount {
            return Err(cannot(format!(
                "the host says the request is for {}, but its terms total {}",
                asked, amount
            )));
        }
    }
    let threshold = pending.threshold.as_deref().ok_or_else(|| {
        cannot("the host did not name the policy threshold this amount crossed, which the receipt must carry (scope.threshold_crossed)")
    })?;
    let threshold = receipt_amount(threshold, "the policy threshold")?;
    let expires_at = datetime::parse(&pending.expires_at)
        .map_err(|e| cannot(format!("the request's expiry: {e}")))?;
    let reason = input.request.reason.as_deref().map(str::trim).unwrap_or("");
    let (decision, extra) = match input.request.action {
        DecideAction::Approve => (Decision::Approve, json!({})),
        DecideAction::Decline => (Decision::Deny, json!({ "reason": reason })),
        DecideAction::Counter => {
            if reason.is_empty() {
                return Err(DecideError::ReasonRequired);
            }
            let counter = input.request.counter.clone().unwrap_or(Value::Null);
            let read =
                check_terms(&counter).map_err(|errors| DecideError::InvalidCounter { errors })?;
            (
                Decision::Deny,
                json!({ "reason": reason, "counter_terms": read.value }),
            )
        }
    };
    let session = session_id(&input.request.session_id).to_owned();
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: input.now,
        expires_at,
        decision,
        offer_message: value,
        amount,
        threshold_crossed: threshold,
        session_id: session.clone(),
        role: signed_role(pending),
        on_behalf_of: gate_decision::signed_stand_in(pending),
    };
    let reference = format!("urn:countersign:plain:{session}");
    let receipt = build_receipt_referencing(&draft, &input.key.verifying_key(), &reference)
        .and_then(|r| sign_receipt(r, input.key))
        .map_err(|e| cannot(e.to_string()))?;
    gate_decision::body(
        input.decision_id,
        input.request.action,
        &request_id,
        receipt,
        &extra,
    )
}
