//! A Concordia decision: an ApprovalReceipt (schema v0.5,
//! `crates/approval-receipt`) signed with the approver's key, with
//! DESIGN.md's conventions: the approver is the key's `did:key`, the id
//! `urn:countersign:receipt:<uuid>`, `scope.offer_hash` the hash of the whole
//! signed message carrying the offer (it must be the awaited message's),
//! `scope.amount` and `scope.threshold_crossed` exact with their currency,
//! the `approves` reference to `urn:concordia:session:<id>`, and
//! `expires_at` the offer's `valid_until` or the request's expiry, whichever
//! is earlier. Approve is an `approve` receipt; decline a `deny` receipt and
//! its reason; counter a `deny` receipt, a reason and the counter terms
//! `crates/concordia`'s counter rules accept (checked here again, whatever
//! the interface did: nothing impossible is signed).

use approval_receipt::datetime;
use approval_receipt::receipt::{
    build_receipt, receipt_expiry, sign_receipt, Decision, ReceiptDraft,
};
use serde_json::{json, Value};

use super::log::transcript_id;
use super::offer::{check_terms, offer_in, parse_amount, price};
use crate::error::DecideError;
use crate::protocol::gate_decision::{self, cannot, receipt_amount, signed_role};
use crate::protocol::DecisionInput;
use crate::views::DecideAction;

/// The exact body of the decision request: the signed receipt and what
/// goes with it.
pub(crate) fn build(input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError> {
    let pending = input.pending;
    let request_id = pending.request_id.clone().ok_or_else(|| {
        cannot("the host names no request of the org's agent for this offer, and a Concordia decision answers that request")
    })?;
    let stored = input
        .events
        .iter()
        .find(|e| e.event_hash == pending.event_hash)
        .ok_or(DecideError::NotPending)?;
    let message: Value = serde_json::from_str(&stored.body)
        .map_err(|e| cannot(format!("the stored offer message cannot be read: {e}")))?;
    let hash = approval_receipt::edges::hash(&message)
        .map_err(|e| cannot(format!("the offer message has no canonical form: {e}")))?;
    if hash != pending.event_hash {
        return Err(cannot(format!(
            "the stored message hashes to {hash}, not to the awaited {}",
            pending.event_hash
        )));
    }
    let offer = offer_in(&message).ok_or_else(|| cannot("the awaited message carries no offer"))?;
    let amount = match pending.amount.as_deref() {
        Some(text) => receipt_amount(text, "the request's amount")?,
        None => {
            let a = price(&offer).ok_or_else(|| {
                cannot("neither the request nor the offer names one amount to approve")
            })?;
            receipt_amount(&format!("{} {}", a.value, a.currency), "the offer's price")?
        }
    };
    let threshold = pending.threshold.as_deref().ok_or_else(|| {
        cannot("the host did not name the policy threshold this amount crossed, which the receipt must carry (scope.threshold_crossed)")
    })?;
    let threshold = receipt_amount(threshold, "the policy threshold")?;
    let request_expiry = datetime::parse(&pending.expires_at)
        .map_err(|e| cannot(format!("the request's expiry: {e}")))?;
    let valid_until = offer
        .valid_until
        .as_deref()
        .and_then(|t| datetime::parse(t).ok());
    let reason = input.request.reason.as_deref().map(str::trim).unwrap_or("");
    let (decision, extra) = match input.request.action {
        DecideAction::Approve => (Decision::Approve, json!({})),
        DecideAction::Decline => (Decision::Deny, json!({ "reason": reason })),
        DecideAction::Counter => {
            if reason.is_empty() {
                return Err(DecideError::ReasonRequired);
            }
            let terms = input.request.counter.clone().unwrap_or(Value::Null);
            check_terms(&terms, Some(&offer), input.now)
                .map_err(|errors| DecideError::InvalidCounter { errors })?;
            (
                Decision::Deny,
                json!({ "reason": reason, "counter_terms": terms }),
            )
        }
    };
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: input.now,
        expires_at: receipt_expiry(valid_until, request_expiry),
        decision,
        offer_message: message,
        amount,
        threshold_crossed: threshold,
        session_id: transcript_id(&input.request.session_id).to_owned(),
        role: signed_role(pending),
        on_behalf_of: gate_decision::signed_stand_in(pending),
    };
    let receipt = build_receipt(&draft, &input.key.verifying_key())
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

/// The amount a pending record names, as the contract writes it.
pub(crate) fn request_amount(text: Option<&str>) -> Option<crate::views::Amount> {
    text.and_then(parse_amount)
}
