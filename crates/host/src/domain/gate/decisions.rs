//! A person's decision on a gate request (docs/approver-api.md): an
//! ApprovalReceipt signed with the approver's enrolled key, checked by
//! `crates/approval-receipt` and against the request (offer hash, the
//! session it approves, amount, threshold, expiry), under the org's policy
//! exactly as for ANP offers: N distinct approvers above the threshold, and
//! outbound screening of what a decline or counter sends back. Idempotent on
//! `decision_id`.

use approval_receipt::receipt::{verify_receipt, Amount, ReceiptCheck};
use approval_receipt::{datetime, did_key};
use countersign_host_api::approver::{DecisionAction, DecisionOutcome, GateDecisionRequest};
use countersign_host_api::gate::RequestState;
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::views::{counted_approvals, counting_approvals, status_at};
use super::{parse_stored, GateProtocol};
use crate::domain::authority::{self, Decidable, StoredRoute};
use crate::domain::decisions::Received;
use crate::domain::DomainError;
use crate::store::{
    ApproverRow, GateCommit, GateDecisionRow, GateRequestRow, GateState, NewGateDecision,
    NewGateReceipt, Org, RequestChange,
};

/// Longest reason a person may write.
const MAX_REASON_CHARS: usize = 4000;

/// Everything a decision is checked against, read before it is planned.
pub struct GateDecisionState {
    /// The session with its messages, requests and receipts.
    pub state: GateState,
    /// Its org.
    pub org: Org,
    /// An earlier decision with the same id, if any (on a gate session).
    pub earlier: Option<GateDecisionRow>,
    /// True when the id was used for a decision on an ANP session.
    pub used_for_anp: bool,
    /// The emails of the org's approvers enrolled and not revoked: who
    /// holds the roles of the request's route now.
    pub enrolled: Vec<String>,
    /// The approver named as the owner of the agent that asked, if any: it
    /// is never the only approval of its agent's request.
    pub owner: Option<String>,
    /// The org's delegations in force now.
    pub stand_ins: Vec<::authority::StandIn>,
}

/// A decision's result, and what to store for it (`None`: a replay).
pub struct GateDecided {
    /// What to apply; `None` when this repeats an earlier decision.
    pub commit: Option<GateCommit>,
    /// What happened.
    pub outcome: DecisionOutcome,
    /// A sentence for the console.
    pub detail: String,
    /// The request it answers.
    pub request_id: String,
    /// The request's final status, when this decision settled it (the
    /// agent gets a hint).
    pub settled: Option<RequestState>,
}

fn outcome_text(o: DecisionOutcome) -> &'static str {
    match o {
        DecisionOutcome::Appended => "appended",
        DecisionOutcome::AwaitingApprovals => "awaiting_approvals",
        DecisionOutcome::Held => "held",
    }
}

fn parse_outcome(text: &str) -> DecisionOutcome {
    match text {
        "appended" => DecisionOutcome::Appended,
        "awaiting_approvals" => DecisionOutcome::AwaitingApprovals,
        _ => DecisionOutcome::Held,
    }
}

/// Reads a gate decision body; its `decision_id` must be a UUID.
pub fn parse_request(body: &[u8]) -> Result<GateDecisionRequest, DomainError> {
    let req: GateDecisionRequest = crate::body::parse_json(body, "decision")?;
    if uuid::Uuid::parse_str(&req.decision_id).is_err() {
        return Err(DomainError::Invalid("decision_id must be a UUID.".into()));
    }
    Ok(req)
}

fn invalid_receipt(what: String) -> DomainError {
    DomainError::Invalid(format!("receipt: {what}; nothing was recorded."))
}

fn amount_at(receipt: &Value, pointer: &str) -> Result<Amount, DomainError> {
    let text = receipt
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default();
    text.parse::<Amount>()
        .map_err(|e| invalid_receipt(format!("{pointer}: {e}")))
}

fn same_amount(a: &Amount, b: &Amount) -> bool {
    a.value == b.value && a.currency == b.currency
}

/// Checks a receipt before it counts: every check of `crates/approval-receipt`
/// (schema, `approves` reference, algorithm, the approver's `did:key`,
/// signature, not expired, `offer_hash` = the awaited message's hash), then
/// against the request: the decision, the session it approves, the amount,
/// the threshold and an expiry no later than the request's.
#[allow(clippy::too_many_arguments)]
fn check_receipt(
    protocol: GateProtocol,
    session_id: &str,
    approver: &ApproverRow,
    request: &GateRequestRow,
    offer_message: &Value,
    receipt: &Value,
    expected: &str,
    now: OffsetDateTime,
) -> Result<(), DomainError> {
    let key = anp::keys::parse_public_key(&approver.public_key)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    let report = verify_receipt(receipt, offer_message, Some(&key), now, &[]);
    if let Some(failed) = report.failures().next() {
        let sentence = format!("the {} check fails: {}", failed.check.name(), failed.detail);
        return Err(match failed.check {
            ReceiptCheck::Identity | ReceiptCheck::Signature | ReceiptCheck::Algorithm => {
                DomainError::BadSignature(format!(
                    "receipt: {sentence}; sign it with your enrolled key (approver.identity {}); nothing was recorded.",
                    did_key::encode(&key)
                ))
            }
            _ => invalid_receipt(sentence),
        });
    }
    let decision = receipt
        .pointer("/scope/decision")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if decision != expected {
        return Err(invalid_receipt(format!(
            "scope.decision is {decision:?}, but this decision needs a {expected:?} receipt"
        )));
    }
    let reference = protocol.session_reference(session_id);
    let approves = receipt
        .get("references")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("relationship").and_then(Value::as_str) == Some("approves")
                    && r.get("id").and_then(Value::as_str) == Some(reference.as_str())
            })
        });
    if !approves {
        return Err(invalid_receipt(format!(
            "no references[] entry approves {reference}"
        )));
    }
    let requested: Amount = request
        .amount
        .parse()
        .map_err(|e| DomainError::Internal(format!("stored amount: {e}")))?;
    let amount = amount_at(receipt, "/scope/amount")?;
    if !same_amount(&amount, &requested) {
        return Err(invalid_receipt(format!(
            "scope.amount is {amount}, not the request's {}",
            request.amount
        )));
    }
    let threshold: Amount = request
        .threshold
        .parse()
        .map_err(|e| DomainError::Internal(format!("stored threshold: {e}")))?;
    let crossed = amount_at(receipt, "/scope/threshold_crossed")?;
    if !same_amount(&crossed, &threshold) {
        return Err(invalid_receipt(format!(
            "scope.threshold_crossed is {crossed}, not the policy's {}",
            request.threshold
        )));
    }
    let expires = receipt
        .get("expires_at")
        .and_then(Value::as_str)
        .and_then(|t| datetime::parse(t).ok());
    let until = anp::api::parse_timestamp(&request.expires_at)
        .ok_or_else(|| DomainError::Internal("stored request expiry unreadable".into()))?;
    if expires.is_none_or(|e| e > until) {
        return Err(invalid_receipt(format!(
            "expires_at must not be after the request's expiry ({})",
            request.expires_at
        )));
    }
    Ok(())
}

fn reason_of(req: &GateDecisionRequest) -> Result<String, DomainError> {
    let reason = req.reason.as_deref().map(str::trim).unwrap_or_default();
    if reason.is_empty() || reason.chars().count() > MAX_REASON_CHARS {
        return Err(DomainError::Invalid(format!(
            "a decline or counter needs a reason of 1 to {MAX_REASON_CHARS} characters."
        )));
    }
    Ok(reason.to_owned())
}

fn screen(org: &Org, outbound: &Value) -> Option<String> {
    match org.screen() {
        Ok(screen) => screen
            .check_terms(outbound)
            .err()
            .map(|l| format!("Held by outbound screening: {}.", l.reason)),
        Err(e) => Some(format!("Held: {e}.")),
    }
}

/// Plans (or replays) one decision on a gate request.
pub fn decide(
    protocol: GateProtocol,
    approver: &ApproverRow,
    st: GateDecisionState,
    req: &GateDecisionRequest,
    received: Received<'_>,
    now: OffsetDateTime,
) -> Result<GateDecided, DomainError> {
    let body_hash = anp::canonical::sha256_hex(received.body);
    let key = st.state.session.key.clone();
    if let Some(earlier) = &st.earlier {
        if earlier.approver_id == approver.id
            && earlier.key == key
            && earlier.body_sha256 == body_hash
        {
            return Ok(GateDecided {
                commit: None,
                outcome: parse_outcome(&earlier.outcome),
                detail: earlier.detail.clone(),
                request_id: earlier.request_id.clone(),
                settled: None,
            });
        }
    }
    if st.earlier.is_some() || st.used_for_anp {
        return Err(DomainError::DecisionConflict(format!(
            "decision_id {} was already used for a different decision.",
            req.decision_id
        )));
    }
    let GateDecisionState {
        state,
        org,
        enrolled,
        owner,
        stand_ins,
        ..
    } = st;
    let Some(request) = state
        .requests
        .iter()
        .find(|r| r.request_id == req.in_response_to)
    else {
        return Err(DomainError::NoStandingOffer(format!(
            "There is no request {} in this session.",
            req.in_response_to
        )));
    };
    match status_at(request, now) {
        RequestState::Pending => {}
        RequestState::Expired => {
            return Err(DomainError::OfferExpired(format!(
                "Request {} expired at {}; the agent must not accept.",
                request.request_id, request.expires_at
            )))
        }
        RequestState::Superseded => {
            return Err(DomainError::NotStanding(format!(
                "Request {} is superseded: a later message answered the offer it awaits.",
                request.request_id
            )))
        }
        done => {
            return Err(DomainError::NoStandingOffer(format!(
                "Request {} is already {}.",
                request.request_id,
                done.as_str()
            )))
        }
    }
    let expected = match req.action {
        DecisionAction::Approve => "approve",
        DecisionAction::Decline | DecisionAction::Counter => "deny",
    };
    match req.action {
        DecisionAction::Approve if req.reason.is_some() || req.counter_terms.is_some() => {
            return Err(DomainError::Invalid(
                "approve carries a receipt only: no reason, no counter_terms.".into(),
            ))
        }
        DecisionAction::Decline if req.counter_terms.is_some() => {
            return Err(DomainError::Invalid(
                "decline carries no counter_terms; send a counter instead.".into(),
            ))
        }
        _ => {}
    }
    let offer_message = state
        .messages
        .iter()
        .find(|m| m.hash == request.message_hash)
        .map(parse_stored)
        .transpose()?
        .ok_or_else(|| DomainError::Internal("the awaited message vanished".into()))?;
    let session_id = key.session_id.clone();
    check_receipt(
        protocol,
        &session_id,
        approver,
        request,
        &offer_message,
        &req.receipt,
        expected,
        now,
    )?;
    // The chain of approvals the request was routed to: who may act now,
    // as which role; a receipt of a routed request names that role.
    let route = StoredRoute::read(request.route.as_deref(), request.approvals_required)?;
    let counted = counted_approvals(&request.request_id, &state.receipts);
    let enrolled = authority::people(&enrolled);
    let owner = owner.as_deref().map(::authority::Person::new);
    let chain = Decidable {
        route: &route,
        approvals: &counted,
        enrolled: &enrolled,
        owner: owner.as_ref(),
        timing: authority::Timing::new(&request.created_at, now),
        stand_ins: &stand_ins,
    };
    if matches!(req.action, DecisionAction::Approve)
        && counting_approvals(&request.request_id, &state.receipts)
            .any(|r| r.approver_id == approver.id)
    {
        return Err(DomainError::Policy(format!(
            "You already approved request {}; the policy needs distinct approvers.",
            request.request_id
        )));
    }
    let admitted = chain.admit(
        &approver.email,
        match req.action {
            DecisionAction::Approve => ::authority::Action::Approve,
            DecisionAction::Decline => ::authority::Action::Decline,
            DecisionAction::Counter => ::authority::Action::Counter,
        },
    )?;
    if route.policy_version.is_some() {
        let signed_as = req
            .receipt
            .pointer("/approver/role")
            .and_then(Value::as_str);
        if signed_as != Some(admitted.role.as_str()) {
            return Err(invalid_receipt(format!(
                "approver.role is {}, but you decide at step {} as {}: sign the receipt as {}",
                signed_as.map_or("absent".to_owned(), |r| format!("{r:?}")),
                admitted.step,
                admitted.role,
                admitted.role
            )));
        }
    }
    authority::check_on_behalf_of(&req.receipt, &admitted).map_err(invalid_receipt)?;
    let mine = state
        .receipts
        .iter()
        .filter(|r| r.request_id == request.request_id)
        .count();
    let at = anp::api::format_timestamp(now);
    let receipt_text =
        serde_json::to_string(&req.receipt).map_err(|e| DomainError::Internal(e.to_string()))?;
    let new_receipt = NewGateReceipt {
        request_id: request.request_id.clone(),
        approver_id: approver.id.clone(),
        decision: expected.to_owned(),
        receipt: receipt_text,
        recorded_at: at.clone(),
        ordinal: mine as u32 + 1,
        step: Some(admitted.step as u32),
        role: Some(admitted.role.clone()),
    };
    let mut next = state.session.clone();
    next.updated_at = at.clone();
    let mut commit = GateCommit::on(next);
    let rid = request.request_id.clone();
    let (outcome, detail, settled) = match req.action {
        DecisionAction::Approve => {
            let count = counted.len() as u32 + 1;
            let routed = route.policy_version.is_some();
            commit.receipts.push(new_receipt);
            if admitted.completes {
                commit.request_changes.push(RequestChange::Settle {
                    request_id: rid.clone(),
                    status: RequestState::Approved.as_str().to_owned(),
                    at: at.clone(),
                    reason: None,
                    counter_terms: None,
                });
                let detail = if routed {
                    format!(
                        "Approved at step {} as {}{}: every step of the chain is met; the agent may accept.",
                        admitted.step, admitted.role, authority::for_whom(&admitted)
                    )
                } else {
                    format!(
                        "Approved ({count} of {} approvals): the agent may accept.",
                        request.approvals_required
                    )
                };
                (
                    DecisionOutcome::Appended,
                    detail,
                    Some(RequestState::Approved),
                )
            } else {
                commit.request_changes.push(RequestChange::StillPending {
                    request_id: rid.clone(),
                });
                let detail = if routed {
                    chain.approved_sentence(&approver.email, &admitted)
                } else {
                    let required = request.approvals_required.max(count + 1);
                    format!(
                        "Recorded approval {count} of {required}; {} more needed.",
                        required - count
                    )
                };
                (DecisionOutcome::AwaitingApprovals, detail, None)
            }
        }
        DecisionAction::Decline => {
            let reason = reason_of(req)?;
            if let Some(why) = screen(&org, &json!({ "reason": reason })) {
                commit.request_changes.push(RequestChange::Held {
                    request_id: rid.clone(),
                    reason: why.clone(),
                });
                (DecisionOutcome::Held, why, None)
            } else {
                commit.receipts.push(new_receipt);
                commit.request_changes.push(RequestChange::Settle {
                    request_id: rid.clone(),
                    status: RequestState::Denied.as_str().to_owned(),
                    at: at.clone(),
                    reason: Some(reason),
                    counter_terms: None,
                });
                (
                    DecisionOutcome::Appended,
                    "Denied: the agent must not accept.".to_owned(),
                    Some(RequestState::Denied),
                )
            }
        }
        DecisionAction::Counter => {
            let reason = reason_of(req)?;
            let terms = req
                .counter_terms
                .clone()
                .ok_or_else(|| DomainError::Invalid("counter needs counter_terms.".into()))?;
            protocol.check_counter_terms(&terms)?;
            if let Some(why) = screen(&org, &json!({ "reason": reason, "counter_terms": terms })) {
                commit.request_changes.push(RequestChange::Held {
                    request_id: rid.clone(),
                    reason: why.clone(),
                });
                (DecisionOutcome::Held, why, None)
            } else {
                commit.receipts.push(new_receipt);
                commit.request_changes.push(RequestChange::Settle {
                    request_id: rid.clone(),
                    status: RequestState::Countered.as_str().to_owned(),
                    at: at.clone(),
                    reason: Some(reason),
                    counter_terms: Some(terms.to_string()),
                });
                (
                    DecisionOutcome::Appended,
                    "Countered: the agent should offer the counter terms instead.".to_owned(),
                    Some(RequestState::Countered),
                )
            }
        }
    };
    let headers = serde_json::to_string(received.headers)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    commit.decision = Some(NewGateDecision {
        decision_id: req.decision_id.clone(),
        approver_id: approver.id.clone(),
        request_id: rid.clone(),
        body: received.body.to_vec(),
        body_sha256: body_hash,
        signed_headers: headers,
        outcome: outcome_text(outcome).to_owned(),
        detail: detail.clone(),
        received_at: at,
    });
    Ok(GateDecided {
        commit: Some(commit),
        outcome,
        detail,
        request_id: rid,
        settled,
    })
}
