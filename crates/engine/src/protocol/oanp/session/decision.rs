//! An OANP decision: an ApprovalReceipt (`crates/approval-receipt`) signed
//! with the approver's key, with DESIGN.md's conventions: the approver is
//! the key's `did:key`, `scope.offer_hash` the hash of the whole envelope
//! carrying the offer (the awaited one), `scope.amount` and
//! `scope.threshold_crossed` exact with their currency, the `approves`
//! reference to `urn:oanp:session:<id>`, expiring with the request (OANP
//! offers carry no expiry of their own). Approve is an `approve` receipt;
//! decline a `deny` receipt and its reason; counter a `deny` receipt, a
//! reason and OANP counter terms (a price in minor units and inclusions).

use approval_receipt::datetime;
use approval_receipt::receipt::{build_receipt_referencing, sign_receipt, Decision, ReceiptDraft};
use serde_json::{json, Value};

use super::log::session_id;
use super::offer::{amount_of, check_terms, offer_of};
use crate::error::DecideError;
use crate::protocol::gate_decision::{self, cannot, receipt_amount, signed_role};
use crate::protocol::DecisionInput;
use crate::views::DecideAction;

/// The exact body of the decision request: the signed receipt and what goes with it.
pub(crate) fn build(input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError> {
    let pending = input.pending;
    let request_id = pending.request_id.clone().ok_or_else(|| {
        cannot("the host names no request of the org's agent for this offer, and an OANP decision answers that request")
    })?;
    let stored = input
        .events
        .iter()
        .find(|e| e.event_hash == pending.event_hash)
        .ok_or(DecideError::NotPending)?;
    let envelope: Value = serde_json::from_str(&stored.body)
        .map_err(|e| cannot(format!("the stored offer envelope cannot be read: {e}")))?;
    let hash = approval_receipt::edges::hash(&envelope)
        .map_err(|e| cannot(format!("the offer envelope has no canonical form: {e}")))?;
    if hash != pending.event_hash {
        return Err(cannot(format!(
            "the stored envelope hashes to {hash}, not to the awaited {}",
            pending.event_hash
        )));
    }
    let (_, _, terms) =
        offer_of(stored).ok_or_else(|| cannot("the awaited envelope carries no offer"))?;
    let amount = match pending.amount.as_deref() {
        Some(text) => receipt_amount(text, "the request's amount")?,
        None => {
            let a = amount_of(&terms)
                .ok_or_else(|| cannot("neither the request nor the offer names an exact amount"))?;
            receipt_amount(&format!("{} {}", a.value, a.currency), "the offer's price")?
        }
    };
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
            let terms = input.request.counter.clone().unwrap_or(Value::Null);
            check_terms(&terms).map_err(|errors| DecideError::InvalidCounter { errors })?;
            (
                Decision::Deny,
                json!({ "reason": reason, "counter_terms": terms }),
            )
        }
    };
    let session = session_id(&input.request.session_id).to_owned();
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: input.now,
        expires_at,
        decision,
        offer_message: envelope,
        amount,
        threshold_crossed: threshold,
        session_id: session.clone(),
        role: signed_role(pending),
        on_behalf_of: gate_decision::signed_stand_in(pending),
    };
    let reference = format!("urn:oanp:session:{session}");
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
