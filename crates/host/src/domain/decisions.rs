//! The approver's side: the one-request summary, and decisions (approve,
//! decline, counter) with their approval policy, screening and idempotency
//! by `decision_id`. A decision is planned from what was read and applied
//! as one [`Commit`]; when two approvers decide at once (through different
//! processes, too), one commit wins and the other is planned again from
//! what the winner wrote, so approval counts stay exact.

use anp::canonical::sha256_hex;
use anp::keys::{self, SigningKey};
use anp::payload::Approval;
use anp::{Actor, Event, EventKind};
use countersign_host_api::approver::{
    Counterparty, DecisionAction, DecisionOutcome, DecisionRequest, GivenApproval, PendingDecision,
    SessionSummary, Summary, VendorIdentity,
};
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::authority::{self, Decidable, StoredRoute};
use super::negotiation::{self, append, Author};
use super::DomainError;
use crate::store::{
    ApprovalRow, ApproverRow, Commit, DecisionRow, NewApproval, NewDecision, Org, PendingChange,
    PendingRow, Session, SummaryRow,
};
use crate::validate;

fn approval_of(row: &ApprovalRow) -> Result<Approval, DomainError> {
    serde_json::from_str(&row.approval).map_err(|e| DomainError::Internal(e.to_string()))
}

fn parse_actor(text: &str) -> Actor {
    if text == "buyer" {
        Actor::Buyer
    } else {
        Actor::VendorAgent
    }
}

/// The host's record of every approval of a session (`GET
/// /sessions/:id/approvals`).
pub fn session_approvals(
    rows: &[crate::store::RecordedApproval],
) -> Result<countersign_host_api::approver::SessionApprovals, DomainError> {
    let mut approvals = Vec::with_capacity(rows.len());
    for r in rows {
        let signed = approval_of(&r.row)?;
        let route = StoredRoute::read(r.route.as_deref(), r.approvals_required)?;
        let routed = r.route.is_some();
        approvals.push(countersign_host_api::approver::ApprovalRecord {
            event_hash: r.row.reference.clone(),
            approved_by: signed.approved_by,
            at: signed.at,
            step: r.row.step,
            role: r.row.role.clone(),
            for_person: r.row.for_email.clone(),
            ..route.approval_record(routed)
        });
    }
    Ok(countersign_host_api::approver::SessionApprovals { approvals })
}

/// The approvals given towards one request, as the chain counts them.
fn counted(rows: &[ApprovalRow]) -> Result<Vec<::authority::Approval>, DomainError> {
    rows.iter()
        .map(|row| {
            approval_of(row).map(|a| {
                let mut counted =
                    authority::approval(&a.approved_by, row.step, row.role.as_deref(), Some(&a.at));
                counted.for_person = row.for_email.as_deref().map(::authority::Person::new);
                counted
            })
        })
        .collect()
}

/// `GET /summary`: every session of the approver's org with its head and
/// pending decisions, assembled from one snapshot; each offer with the
/// chain of approvals it was routed to, as it stands for `email` among the
/// org's `enrolled` approvers.
pub fn summary(
    rows: Vec<SummaryRow>,
    email: &str,
    enrolled: &[String],
    stand_ins: &[::authority::StandIn],
    now: OffsetDateTime,
) -> Result<Summary, DomainError> {
    let enrolled = authority::people(enrolled);
    let mut sessions = Vec::with_capacity(rows.len());
    for row in rows {
        let s = row.session;
        let mut pending = Vec::with_capacity(row.pending.len());
        for p in row.pending {
            let given: Vec<ApprovalRow> = row
                .approvals
                .iter()
                .filter(|a| a.reference == p.reference)
                .cloned()
                .collect();
            let approvals = given
                .iter()
                .map(|a| {
                    approval_of(a).map(|signed| GivenApproval {
                        approved_by: signed.approved_by,
                        at: signed.at,
                        step: a.step,
                        role: a.role.clone(),
                        for_person: a.for_email.clone(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let route = if p.reference.starts_with("draft:") {
                None
            } else {
                let stored = StoredRoute::read(p.route.as_deref(), p.approvals_required)?;
                let counted = counted(&given)?;
                Some(
                    Decidable {
                        route: &stored,
                        approvals: &counted,
                        enrolled: &enrolled,
                        owner: None,
                        timing: authority::Timing::new(&p.created_at, now),
                        stand_ins,
                    }
                    .view(email),
                )
            };
            let draft = if p.reference.starts_with("draft:") {
                Some(
                    serde_json::from_str::<Value>(&p.payload)
                        .map_err(|e| DomainError::Internal(e.to_string()))?,
                )
            } else {
                None
            };
            pending.push(PendingDecision {
                seq: p.seq,
                event_hash: p.reference,
                kind: EventKind::parse(&p.kind)
                    .unwrap_or(EventKind::Offer)
                    .as_str()
                    .to_owned(),
                actor: parse_actor(&p.actor).as_str().to_owned(),
                expires_at: p.expires_at,
                approvals,
                approvals_required: p.approvals_required,
                draft,
                held_reason: p.held_reason,
                request_id: None,
                action: None,
                amount: None,
                threshold: None,
                anex: None,
                route,
            });
        }
        let vendor = row.vendor;
        sessions.push(SessionSummary {
            id: s.id,
            protocol: anp::PROTOCOL.to_owned(),
            status: s.status,
            sandbox: s.sandbox,
            counterparty: Counterparty {
                id: vendor.id.clone(),
                name: Some(vendor.agent_name.clone()),
                organization: Some(vendor.vendor_name.clone()),
                fingerprint: vendor.fingerprint.clone(),
                status: crate::store::status_text(vendor.status).to_owned(),
                verified: Some(vendor.names_verified),
            },
            vendor: Some(VendorIdentity {
                agent_id: vendor.id,
                agent_name: vendor.agent_name,
                vendor_name: vendor.vendor_name,
                fingerprint: vendor.fingerprint,
                status: vendor.status,
            }),
            agent: None,
            event_count: s.event_count,
            chain_head: s.chain_head,
            pending,
        });
    }
    Ok(Summary {
        protocol: anp::PROTOCOL.to_owned(),
        sessions,
    })
}

/// The session an approver may see; anything else is the uniform refusal.
pub fn visible(session: Option<Session>, approver: &ApproverRow) -> Result<Session, DomainError> {
    match session {
        Some(s) if s.org_handle == approver.org_handle => Ok(s),
        _ => Err(DomainError::Unauthorized),
    }
}

/// A decision's result, and what to store for it (`None`: a replay).
pub struct Decided {
    /// What to apply; `None` when this repeats an earlier decision.
    pub commit: Option<Commit>,
    /// What happened.
    pub outcome: DecisionOutcome,
    /// A sentence for the console.
    pub detail: String,
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

/// What the host received, kept verbatim.
pub struct Received<'a> {
    /// Body bytes as sent.
    pub body: &'a [u8],
    /// The signed headers as sent and checked (kept beside the decision).
    pub headers: &'a crate::auth::SignedAs,
}

/// Reads a decision body; its `decision_id` must be a UUID.
pub fn parse_request(body: &[u8]) -> Result<DecisionRequest, DomainError> {
    let req: DecisionRequest = crate::body::parse_json(body, "decision")?;
    if uuid::Uuid::parse_str(&req.decision_id).is_err() {
        return Err(DomainError::Invalid("decision_id must be a UUID.".into()));
    }
    Ok(req)
}

/// The pending decision a request answers, as the caller found it. A draft
/// (`draft:<uuid>`) answers the offer named in its row.
pub fn answered_offer<'a>(reference: &'a str, pending: Option<&'a PendingRow>) -> &'a str {
    match pending {
        Some(p) if reference.starts_with("draft:") => p.answers.as_deref().unwrap_or_default(),
        _ => reference,
    }
}

/// Everything a decision is checked against, read before it is planned.
pub struct DecisionState {
    /// The session.
    pub session: Session,
    /// Its org.
    pub org: Org,
    /// The standing offer event, if any.
    pub standing: Option<Event>,
    /// The open pending decision the request answers, if there is one.
    pub pending: Option<PendingRow>,
    /// Approvals already given towards it (by approvers not revoked).
    pub approvals: Vec<ApprovalRow>,
    /// The offer event it answers, by hash, if stored (for the refusal's words).
    pub answered: Option<Event>,
    /// An earlier decision with the same id, if any.
    pub earlier: Option<DecisionRow>,
    /// The emails of the org's approvers enrolled and not revoked: who
    /// holds the roles of the request's route now.
    pub enrolled: Vec<String>,
    /// The org's delegations in force now.
    pub stand_ins: Vec<::authority::StandIn>,
}

/// `POST /sessions/:id/decisions`: plans (or replays) one decision.
pub fn decide(
    platform: &SigningKey,
    approver: &ApproverRow,
    state: DecisionState,
    req: &DecisionRequest,
    received: Received<'_>,
    now: OffsetDateTime,
) -> Result<Decided, DomainError> {
    let body_hash = sha256_hex(received.body);
    if let Some(earlier) = &state.earlier {
        if earlier.approver_id == approver.id
            && earlier.session_id == state.session.id
            && earlier.body_sha256 == body_hash
        {
            return Ok(Decided {
                commit: None,
                outcome: parse_outcome(&earlier.outcome),
                detail: earlier.detail.clone(),
            });
        }
        return Err(DomainError::DecisionConflict(format!(
            "decision_id {} was already used for a different decision.",
            req.decision_id
        )));
    }
    let headers = serde_json::to_string(received.headers)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    let (mut commit, outcome, detail) = apply(platform, approver, state, req, now)?;
    commit.decision = Some(NewDecision {
        decision_id: req.decision_id.clone(),
        approver_id: approver.id.clone(),
        body: received.body.to_vec(),
        body_sha256: body_hash,
        signed_headers: headers,
        outcome: outcome_text(outcome).to_owned(),
        detail: detail.clone(),
        received_at: anp::api::format_timestamp(now),
    });
    Ok(Decided {
        commit: Some(commit),
        outcome,
        detail,
    })
}

fn state_error(session: &Session, reference: &str, answered: Option<&Event>) -> DomainError {
    if session.status != "open" {
        return DomainError::SessionClosed(format!(
            "Session {} is {}; no decision can be applied.",
            session.id, session.status
        ));
    }
    if !reference.starts_with("draft:") {
        if let Some(e) = answered.filter(|e| e.event_hash == reference) {
            if e.kind.is_offer() {
                return DomainError::NotStanding(format!(
                    "The offer at seq {} is no longer the standing offer; a later event answered it.",
                    e.seq
                ));
            }
        }
    }
    DomainError::NoStandingOffer(format!(
        "There is no pending decision {reference} in this session."
    ))
}

fn screen_outbound(org: &Org, payload: &Value) -> Option<String> {
    match org.screen() {
        Ok(screen) => screen
            .check(payload)
            .err()
            .map(|l| format!("Held by outbound screening: {}.", l.reason)),
        Err(e) => Some(format!("Held: {e}.")),
    }
}

type Planned = (Commit, DecisionOutcome, String);

fn hold(mut commit: Commit, reference: &str, reason: String) -> Planned {
    commit.pending_changes.push(PendingChange::Held {
        reference: reference.to_owned(),
        reason: reason.clone(),
    });
    (commit, DecisionOutcome::Held, reason)
}

fn apply(
    platform: &SigningKey,
    approver: &ApproverRow,
    state: DecisionState,
    req: &DecisionRequest,
    now: OffsetDateTime,
) -> Result<Planned, DomainError> {
    let reference = req.in_response_to.as_str();
    let DecisionState {
        session,
        org,
        standing,
        pending,
        approvals,
        answered,
        earlier: _,
        enrolled,
        stand_ins,
    } = state;
    let pending = match pending {
        Some(p) if session.status == "open" => p,
        _ => return Err(state_error(&session, reference, answered.as_ref())),
    };
    let is_draft = reference.starts_with("draft:");
    let answered_hash = answered_offer(reference, Some(&pending)).to_owned();
    if standing.as_ref().map(|e| e.event_hash.as_str()) != Some(answered_hash.as_str()) {
        return Err(state_error(&session, &answered_hash, answered.as_ref()));
    }
    let payload: Value =
        serde_json::from_str(&pending.payload).map_err(|e| DomainError::Internal(e.to_string()))?;
    let route = StoredRoute::read(pending.route.as_deref(), pending.approvals_required)?;
    let enrolled = authority::people(&enrolled);
    let counted = counted(&approvals)?;
    let chain = Decidable {
        route: &route,
        approvals: &counted,
        enrolled: &enrolled,
        // ANP vendor agents are the other side's: no one here owns them.
        owner: None,
        timing: authority::Timing::new(&pending.created_at, now),
        stand_ins: &stand_ins,
    };
    // A decline or a counter decides the request: only someone who may act
    // at its current step may send one (discarding a draft sends nothing).
    match (req.action, is_draft) {
        (DecisionAction::Decline, true) => {}
        (DecisionAction::Approve, false) => {}
        (DecisionAction::Decline, false) => {
            chain.admit(&approver.email, ::authority::Action::Decline)?;
        }
        (DecisionAction::Approve, true) | (DecisionAction::Counter, _) => {
            chain.admit(&approver.email, ::authority::Action::Counter)?;
        }
    }
    let commit = Commit::on(session);
    match (req.action, is_draft) {
        (DecisionAction::Approve, false) => approve(
            platform, approver, commit, &org, &pending, &payload, approvals, &chain, req, now,
        ),
        (DecisionAction::Approve, true) => {
            send_counter(platform, commit, &org, reference, payload, now)
        }
        (DecisionAction::Decline, true) => {
            let mut commit = commit;
            commit.pending_changes.push(PendingChange::Resolved {
                reference: reference.to_owned(),
                state: "discarded".into(),
            });
            Ok((
                commit,
                DecisionOutcome::Appended,
                "The draft was discarded; nothing was sent.".into(),
            ))
        }
        (DecisionAction::Decline, false) => {
            let reason = req.reason.as_deref().map(str::trim).unwrap_or_default();
            if reason.is_empty() || reason.chars().count() > 4000 {
                return Err(DomainError::Invalid(
                    "decline needs a reason of 1 to 4000 characters.".into(),
                ));
            }
            let decline = json!({ "reason": reason });
            validate::payload(EventKind::Decline, &decline)?;
            if let Some(why) = screen_outbound(&org, &decline) {
                return Ok(hold(commit, reference, why));
            }
            let mut commit = commit;
            append(
                &mut commit,
                Actor::Buyer,
                EventKind::Decline,
                decline,
                Author::Platform(platform),
                anp::api::format_timestamp(now),
            )?;
            commit.supersede_pending = true;
            commit.session.standing_seq = None;
            Ok((
                commit,
                DecisionOutcome::Appended,
                format!("Declined the offer at seq {}.", pending.seq),
            ))
        }
        (DecisionAction::Counter, _) => {
            let offer = req
                .offer
                .clone()
                .ok_or_else(|| DomainError::Invalid("counter needs an offer.".into()))?;
            send_counter(platform, commit, &org, reference, offer, now)
        }
    }
}

fn send_counter(
    platform: &SigningKey,
    mut commit: Commit,
    org: &Org,
    reference: &str,
    offer: Value,
    now: OffsetDateTime,
) -> Result<Planned, DomainError> {
    validate::payload(EventKind::CounterOffer, &offer)?;
    negotiation::require_future_expiry(&offer, now, "counter-offer")?;
    if let Some(why) = screen_outbound(org, &offer) {
        return Ok(hold(commit, reference, why));
    }
    let event = append(
        &mut commit,
        Actor::Buyer,
        EventKind::CounterOffer,
        offer,
        Author::Platform(platform),
        anp::api::format_timestamp(now),
    )?;
    commit.supersede_pending = true;
    commit.session.standing_seq = Some(event.seq);
    commit.session.buyer_rounds += 1;
    Ok((
        commit,
        DecisionOutcome::Appended,
        format!("Sent the counter-offer as seq {}.", event.seq),
    ))
}

fn verify_approval(
    approver: &ApproverRow,
    reference: &str,
    approval: &Approval,
    now: OffsetDateTime,
) -> Result<(), DomainError> {
    if approval.approved_by != approver.email {
        return Err(DomainError::Invalid(format!(
            "approval.approved_by must be your enrolled email ({}).",
            approver.email
        )));
    }
    let Some(at) = anp::api::parse_timestamp(&approval.at) else {
        return Err(DomainError::Invalid(
            "approval.at must be an ISO 8601 time.".into(),
        ));
    };
    if at > now + time::Duration::seconds(anp::api::TIMESTAMP_WINDOW_SECS) {
        return Err(DomainError::Invalid(
            "approval.at is in the future; sign the approval at the time of the decision.".into(),
        ));
    }
    let key = keys::parse_public_key(&approver.public_key)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    anp::approval::verify_approval(approval, reference, &key).map_err(|e| match e {
        anp::approval::ApprovalError::NotHuman(_) => {
            DomainError::Invalid(format!("approval: {e}."))
        }
        _ => DomainError::BadSignature(format!(
            "approval: {e}; sign \"ANP/0.2\\napproval\\n<in_response_to>\\n<approved_by>\\n<at>\" with your enrolled key."
        )),
    })?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn approve(
    platform: &SigningKey,
    approver: &ApproverRow,
    mut commit: Commit,
    org: &Org,
    pending: &PendingRow,
    offer: &Value,
    given: Vec<ApprovalRow>,
    chain: &Decidable<'_>,
    req: &DecisionRequest,
    now: OffsetDateTime,
) -> Result<Planned, DomainError> {
    let approval = req.approval.as_ref().ok_or_else(|| {
        DomainError::Invalid("approve needs an approval signed by your key.".into())
    })?;
    negotiation::require_future_expiry(offer, now, "offer")?;
    verify_approval(approver, &pending.reference, approval, now)?;
    let mut given = given
        .iter()
        .map(|row| approval_of(row).map(|a| (row.approver_id.clone(), a)))
        .collect::<Result<Vec<_>, _>>()?;
    if given
        .iter()
        .any(|(who, a)| who == &approver.id || a.approved_by == approver.email)
    {
        return Err(DomainError::Policy(format!(
            "You have already approved this offer; the policy needs {} distinct approvers.",
            pending.approvals_required
        )));
    }
    let admitted = chain.admit(&approver.email, ::authority::Action::Approve)?;
    let stored =
        serde_json::to_string(approval).map_err(|e| DomainError::Internal(e.to_string()))?;
    commit.approvals.push(NewApproval {
        reference: pending.reference.clone(),
        approver_id: approver.id.clone(),
        approval: stored,
        recorded_at: anp::api::format_timestamp(now),
        ordinal: given.len() as u32 + 1,
        step: admitted.step as u32,
        role: admitted.role.clone(),
        for_email: admitted.for_person.as_ref().map(ToString::to_string),
    });
    given.push((approver.id.clone(), approval.clone()));
    if !admitted.completes {
        let count = given.len() as u32;
        let detail = if chain.route.policy_version.is_none() {
            let required = pending.approvals_required.max(count + 1);
            format!(
                "Approval {count} of {required} recorded; {} more distinct approver(s) needed.",
                required - count
            )
        } else {
            chain.approved_sentence(&approver.email, &admitted)
        };
        return Ok((commit, DecisionOutcome::AwaitingApprovals, detail));
    }
    let mut approvals = given.into_iter().map(|(_, a)| a);
    let first = approvals
        .next()
        .ok_or_else(|| DomainError::Internal("no approval".into()))?;
    let rest: Vec<Approval> = approvals.collect();
    let mut payload = json!({ "in_response_to": pending.reference, "approval": first });
    if !rest.is_empty() {
        payload["approvals"] =
            serde_json::to_value(&rest).map_err(|e| DomainError::Internal(e.to_string()))?;
    }
    validate::payload(EventKind::Accept, &payload)?;
    if let Some(why) = screen_outbound(org, &payload) {
        return Ok(hold(commit, &pending.reference, why));
    }
    let event = append(
        &mut commit,
        Actor::Buyer,
        EventKind::Accept,
        payload,
        Author::Platform(platform),
        anp::api::format_timestamp(now),
    )?;
    commit.supersede_pending = true;
    commit.session.standing_seq = None;
    commit.session.status = "accepted".into();
    let detail = format!(
        "Accepted the offer at seq {} (accept is seq {}).",
        pending.seq, event.seq
    );
    Ok((commit, DecisionOutcome::Appended, detail))
}
