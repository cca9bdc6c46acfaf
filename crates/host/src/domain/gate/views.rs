//! What the gate's rows look like on the wire: a request as the agent (and
//! the approver) reads it, a gate session in the approver's summary, and
//! the transcript in its own form for the approver's log.

use countersign_host_api::approver::{
    Counterparty, GateAgentIdentity, GateLog, GivenApproval, PendingDecision, RouteView,
    SessionSummary,
};
use countersign_host_api::gate::{
    DecidedBy, GateAction, GateCounterparty, GateRequestStatus, Head, RequestState,
};
use serde_json::Value;
use time::OffsetDateTime;

use super::keys_of;
use crate::domain::authority::{self, Decidable, StoredRoute};
use crate::domain::DomainError;
use crate::store::{GateReceiptRow, GateRequestRow, GateSession, GateState, GateSummaryRow};

/// A request's status at `now`: a pending request past its time reads as
/// expired even before the sweeper marks it.
pub fn status_at(row: &GateRequestRow, now: OffsetDateTime) -> RequestState {
    let status = RequestState::parse(&row.status).unwrap_or(RequestState::Expired);
    if status == RequestState::Pending && row.expires_unix <= now.unix_timestamp() {
        RequestState::Expired
    } else {
        status
    }
}

fn json_of(text: &str) -> Result<Value, DomainError> {
    serde_json::from_str(text).map_err(|e| DomainError::Internal(format!("stored JSON: {e}")))
}

/// The approvals given towards a request that still count (approvers not
/// revoked), in order.
pub fn counting_approvals<'a>(
    request_id: &'a str,
    receipts: &'a [GateReceiptRow],
) -> impl Iterator<Item = &'a GateReceiptRow> + 'a {
    receipts.iter().filter(move |r| {
        r.request_id == request_id && r.decision == "approve" && !r.approver_revoked
    })
}

/// The approvals that still count towards a request, as its chain of
/// approvals counts them (who, at which step, as which role).
pub fn counted_approvals(
    request_id: &str,
    receipts: &[GateReceiptRow],
) -> Vec<::authority::Approval> {
    counting_approvals(request_id, receipts)
        .map(|a| {
            let mut counted = authority::approval(
                &a.approver_email,
                a.step,
                a.role.as_deref(),
                Some(&a.recorded_at),
            );
            counted.for_person = serde_json::from_str(&a.receipt)
                .ok()
                .and_then(|r| authority::signed_for(&r));
            counted
        })
        .collect()
}

/// A request as it stands at `now`. `for_approver` adds what only
/// approvers see (why screening holds a counter).
pub fn request_status(
    row: &GateRequestRow,
    receipts: &[GateReceiptRow],
    now: OffsetDateTime,
    for_approver: bool,
) -> Result<GateRequestStatus, DomainError> {
    let status = status_at(row, now);
    let mine: Vec<&GateReceiptRow> = receipts
        .iter()
        .filter(|r| r.request_id == row.request_id)
        .collect();
    let parsed: Vec<Value> = mine
        .iter()
        .map(|r| json_of(&r.receipt))
        .collect::<Result<_, _>>()?;
    let deciding = match status {
        RequestState::Approved => mine
            .iter()
            .zip(&parsed)
            .rev()
            .find(|(r, _)| r.decision == "approve"),
        RequestState::Denied | RequestState::Countered => mine
            .iter()
            .zip(&parsed)
            .rev()
            .find(|(r, _)| r.decision == "deny"),
        _ => None,
    }
    .map(|(_, v)| v.clone());
    let decided_by = mine
        .iter()
        .zip(&parsed)
        .map(|(r, v)| DecidedBy {
            name: r.approver_name.clone(),
            email: r.approver_email.clone(),
            identity: v
                .pointer("/approver/identity")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            decision: r.decision.clone(),
            at: r.recorded_at.clone(),
        })
        .collect();
    let approvals = if for_approver {
        approval_records(row, &mine, &parsed)?
    } else {
        Vec::new()
    };
    Ok(GateRequestStatus {
        request_id: row.request_id.clone(),
        status,
        message_hash: row.message_hash.clone(),
        action: GateAction::Accept,
        amount: row.amount.clone(),
        threshold: row.threshold.clone(),
        expires_at: row.expires_at.clone(),
        created_at: row.created_at.clone(),
        approvals_given: counting_approvals(&row.request_id, receipts).count() as u32,
        approvals_required: row.approvals_required,
        receipt: deciding,
        receipts: parsed,
        decided_by,
        reason: row.reason.clone(),
        counter_terms: row.counter_terms.as_deref().map(json_of).transpose()?,
        held_reason: if for_approver && status == RequestState::Pending {
            row.held_reason.clone()
        } else {
            None
        },
        extensions: extensions_of(row)?,
        approvals,
    })
}

/// The host's record of a request's approvals: each approving receipt with
/// the person, the step and role it counted at and as, whom a stand-in made
/// it for, and the rule and policy version the request was routed under.
fn approval_records(
    row: &GateRequestRow,
    mine: &[&GateReceiptRow],
    parsed: &[Value],
) -> Result<Vec<countersign_host_api::approver::ApprovalRecord>, DomainError> {
    let route = StoredRoute::read(row.route.as_deref(), row.approvals_required)?;
    let routed = row.route.is_some();
    Ok(mine
        .iter()
        .zip(parsed)
        .filter(|(r, _)| r.decision == "approve")
        .map(|(r, v)| countersign_host_api::approver::ApprovalRecord {
            event_hash: row.message_hash.clone(),
            approved_by: r.approver_email.clone(),
            at: r.recorded_at.clone(),
            step: r.step,
            role: r.role.clone(),
            for_person: authority::signed_for(v).map(|p| p.to_string()),
            ..route.approval_record(routed)
        })
        .collect())
}

/// The extensions of a request's deadline, as recorded.
pub fn extensions_of(
    row: &GateRequestRow,
) -> Result<Vec<countersign_host_api::gate::DeadlineExtension>, DomainError> {
    row.extensions
        .as_deref()
        .map(|text| {
            serde_json::from_str(text).map_err(|e| {
                DomainError::Internal(format!("stored deadline extensions unreadable: {e}"))
            })
        })
        .transpose()
        .map(Option::unwrap_or_default)
}

/// `<protocol>:<session_id>`: how the approver API names a gate session.
pub fn approver_id_of(session: &GateSession) -> String {
    format!("{}:{}", session.key.protocol, session.key.session_id)
}

/// The counterparty as the approver sees it: what the agent declared, and
/// the fingerprint of the key pinned for it.
fn counterparty_of(session: &GateSession) -> Result<Counterparty, DomainError> {
    let keys = keys_of(session)?;
    let fingerprint = keys
        .get(&session.counterparty_id)
        .and_then(|k| approval_receipt::keys::parse_public_key(k).ok())
        .map(|k| anp::keys::fingerprint(&k))
        .unwrap_or_default();
    Ok(Counterparty {
        id: session.counterparty_id.clone(),
        name: session.counterparty_name.clone(),
        organization: session.counterparty_org.clone(),
        fingerprint,
        status: "declared".into(),
        verified: None,
    })
}

/// Who asks for the summary: a request's chain is shown as it stands for
/// this approver among the org's enrolled ones.
pub struct Asking<'a> {
    /// The approver's email.
    pub email: &'a str,
    /// The org's approvers enrolled and not revoked.
    pub enrolled: &'a [::authority::Person],
    /// The org's delegations in force now.
    pub stand_ins: &'a [::authority::StandIn],
}

/// A request's chain of approvals as it stands for `asking`.
fn route_view(
    r: &GateRequestRow,
    receipts: &[GateReceiptRow],
    owner: Option<&::authority::Person>,
    asking: &Asking<'_>,
    now: OffsetDateTime,
) -> Result<RouteView, DomainError> {
    let route = StoredRoute::read(r.route.as_deref(), r.approvals_required)?;
    let counted = counted_approvals(&r.request_id, receipts);
    Ok(Decidable {
        route: &route,
        approvals: &counted,
        enrolled: asking.enrolled,
        owner,
        timing: authority::Timing::new(&r.created_at, now),
        stand_ins: asking.stand_ins,
    }
    .view(asking.email))
}

/// A gate session in the approver's summary, with its requests still
/// pending at `now` as pending decisions, each with its chain as it stands
/// for `asking`; `sandbox` when it belongs to the built-in sandbox org (as
/// its ANP sessions say).
pub fn summary_session(
    row: &GateSummaryRow,
    now: OffsetDateTime,
    sandbox: bool,
    asking: &Asking<'_>,
) -> Result<SessionSummary, DomainError> {
    let s = &row.session;
    let owner = row.owner_email.as_deref().map(::authority::Person::new);
    let pending = row
        .pending
        .iter()
        .filter(|r| status_at(r, now) == RequestState::Pending)
        .map(|r| -> Result<PendingDecision, DomainError> {
            Ok(PendingDecision {
                seq: r.seq,
                event_hash: r.message_hash.clone(),
                kind: r.kind.clone(),
                actor: "counterparty".into(),
                expires_at: r.expires_at.clone(),
                approvals: counting_approvals(&r.request_id, &row.receipts)
                    .map(|a| GivenApproval {
                        approved_by: a.approver_email.clone(),
                        at: a.recorded_at.clone(),
                        step: a.step,
                        role: a.role.clone(),
                        for_person: serde_json::from_str(&a.receipt)
                            .ok()
                            .and_then(|r| authority::signed_for(&r))
                            .map(|p| p.to_string()),
                    })
                    .collect(),
                approvals_required: r.approvals_required,
                draft: None,
                held_reason: r.held_reason.clone(),
                request_id: Some(r.request_id.clone()),
                action: Some(r.action.clone()),
                amount: Some(r.amount.clone()),
                threshold: Some(r.threshold.clone()),
                anex: None,
                route: Some(route_view(r, &row.receipts, owner.as_ref(), asking, now)?),
            })
        })
        .collect::<Result<Vec<_>, DomainError>>()?;
    Ok(SessionSummary {
        id: approver_id_of(s),
        protocol: s.key.protocol.clone(),
        status: s.state.clone(),
        sandbox,
        counterparty: counterparty_of(s)?,
        vendor: None,
        agent: Some(GateAgentIdentity {
            agent_id: s.agent_id.clone(),
            name: row.agent_name.clone(),
        }),
        event_count: s.head_count,
        chain_head: s.head_hash.clone(),
        pending,
    })
}

/// The approver's log of a gate session: the messages after `after`,
/// byte for byte as mirrored, with the keys and every request.
pub fn gate_log(
    state: &GateState,
    after: u64,
    now: OffsetDateTime,
) -> Result<GateLog, DomainError> {
    let s = &state.session;
    let messages = state
        .messages
        .iter()
        .filter(|m| m.seq > after)
        .map(|m| {
            serde_json::value::RawValue::from_string(m.body.clone())
                .map_err(|e| DomainError::Internal(format!("stored message unreadable: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let requests = state
        .requests
        .iter()
        .map(|r| request_status(r, &state.receipts, now, true))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GateLog {
        protocol: s.key.protocol.clone(),
        session_id: s.key.session_id.clone(),
        after: after.min(s.head_count),
        self_party: s.self_party.clone(),
        counterparty: GateCounterparty {
            id: s.counterparty_id.clone(),
            name: s.counterparty_name.clone(),
            organization: s.counterparty_org.clone(),
        },
        keys: keys_of(s)?,
        messages,
        head: Head {
            count: s.head_count,
            hash: s.head_hash.clone(),
        },
        requests,
    })
}
