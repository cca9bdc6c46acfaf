//! The approver API on ANEX conversations (docs/approver-api.md, "ANEX"):
//! their place in the summary (an ask beyond the owner's policy is a
//! pending decision, item by item with the policy's verdict), their
//! messages, and the person's decision as an ApprovalReceipt over the terms
//! record (docs/anex-binding.md, "The terms record"). An approver sees the
//! conversations of its own org; anything else is the uniform refusal.

use std::collections::BTreeMap;

use anex::rules::check_owner_counter;
use anex::{Counterparty, Id, Policy, Terms, TermsRecord, Text};
use approval_receipt::receipt::{verify_receipt, ReceiptCheck};
use countersign_host_api::anex::{
    AnexDecisionRequest, AnexDecisionResponse, AnexItem, AnexLog, AnexPending, AnexRequester,
    AnexTerms, NO_AMOUNT,
};
use countersign_host_api::approver::{
    Counterparty as SummaryCounterparty, DecisionAction, DecisionOutcome, GivenApproval,
    PendingDecision, SessionSummary,
};
use countersign_host_api::protocol;
use serde_json::Value;
use time::OffsetDateTime;

use super::anex::files;
use super::{busy, ATTEMPTS};
use crate::auth::Approver;
use crate::domain::anex::{self as domain, phase_name, replay, Doc, OwnerAnswer, Signed};
use crate::domain::authority::{self, Decidable, StoredRoute};
use crate::domain::DomainError;
use crate::store::{AnexCommit, AnexConversationRow, AnexDecisionRow, CommitError};
use crate::Host;

/// The summary's and the log's name for a conversation.
pub fn session_id(context_id: &str) -> String {
    format!("{}:{context_id}", protocol::ANEX)
}

fn doc_of(row: &AnexConversationRow) -> Result<Doc, DomainError> {
    serde_json::from_str(&row.doc)
        .map_err(|e| DomainError::Internal(format!("stored ANEX conversation unreadable: {e}")))
}

fn message_hash(m: &Value) -> String {
    jcs::value_hash_prefixed(m)
}

/// Every ANEX conversation of the approver's org, as the summary lists them.
pub async fn summary(
    host: &Host,
    approver: &Approver,
    enrolled: &[String],
    stand_ins: &[::authority::StandIn],
    now: OffsetDateTime,
) -> Result<Vec<SessionSummary>, DomainError> {
    let enrolled = authority::people(enrolled);
    let rows = host
        .store()
        .anex()
        .anex_conversations(&approver.org_handle)
        .await?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let counterparties: BTreeMap<String, _> = host
        .store()
        .anex()
        .anex_counterparties()
        .await?
        .into_iter()
        .map(|c| (c.id.clone(), c))
        .collect();
    let (policy, _) = files(host, &approver.org_handle).await?;
    let mut out = Vec::new();
    for row in rows {
        let doc = doc_of(&row)?;
        let conversation = replay(&doc).map_err(DomainError::Internal)?;
        let cp = counterparties.get(&row.counterparty_id);
        let mut pending = Vec::new();
        if let Some(p) = &doc.pending {
            if let Some(mut found) =
                pending_decision(&doc, &conversation, p, cp, policy.as_ref(), now)
            {
                let chain = Chain::of(p)?;
                found.route = Some(
                    chain
                        .decidable(&enrolled, stand_ins, now)
                        .view(&approver.email),
                );
                found.approvals_required = chain.route.approvals_required();
                found.approvals = p
                    .approvals
                    .iter()
                    .map(|a| GivenApproval {
                        approved_by: a.approved_by.clone(),
                        at: a.at.clone(),
                        step: Some(a.step),
                        role: Some(a.role.clone()),
                        for_person: a.for_person.clone(),
                    })
                    .collect();
                pending.push(found);
            }
        }
        out.push(SessionSummary {
            id: session_id(&row.context_id),
            protocol: protocol::ANEX.to_owned(),
            status: phase_name(conversation.phase()).to_owned(),
            sandbox: false,
            counterparty: SummaryCounterparty {
                id: conversation.requester().as_str().to_owned(),
                name: cp.map(|c| c.name.clone()),
                organization: conversation.cfp().map(|(_, c)| c.owner.as_str().to_owned()),
                fingerprint: String::new(),
                status: match cp {
                    Some(c) if c.revoked_at.is_none() => "registered".into(),
                    _ => "revoked".into(),
                },
                verified: None,
            },
            vendor: None,
            agent: None,
            event_count: doc.messages.len() as u64,
            chain_head: doc.messages.last().map(message_hash).unwrap_or_default(),
            pending,
        });
    }
    Ok(out)
}

fn pending_decision(
    doc: &Doc,
    conversation: &anex::Conversation,
    p: &domain::PendingAsk,
    cp: Option<&crate::store::AnexCounterpartyRow>,
    policy: Option<&Policy>,
    now: OffsetDateTime,
) -> Option<PendingDecision> {
    let (_, cfp) = conversation.cfp()?;
    let asked = conversation.ask()?;
    let (index, message) =
        doc.messages.iter().enumerate().find(|(_, m)| {
            m.get("message_id").and_then(Value::as_str) == Some(p.answers.as_str())
        })?;
    let who = Counterparty {
        identity: conversation.requester().clone(),
        relation: cp.and_then(|c| c.relation.as_deref()).map(Text::lossy),
    };
    let items: Vec<AnexItem> = match policy {
        Some(policy) => policy
            .evaluate_request(&who, asked)
            .items
            .into_iter()
            .map(|v| AnexItem {
                within_policy: v.within_policy(),
                item: v.item.name.as_str().to_owned(),
                required: v.item.required,
                rule: v.rule.map(|r| r + 1),
                adds: v.adds.iter().map(|a| a.as_str().to_owned()).collect(),
                reason: v.reason,
            })
            .collect(),
        None => asked
            .access
            .iter()
            .map(|i| AnexItem {
                item: i.name.as_str().to_owned(),
                required: i.required,
                within_policy: false,
                rule: None,
                adds: Vec::new(),
                reason:
                    "no ANEX policy is loaded for this organization, so every item needs the owner"
                        .into(),
            })
            .collect(),
    };
    // Every promise the rules covering the asked items require, offered or
    // not (the console shows them beside the offered ones and marks those
    // missing); with no policy, none.
    let mut policy_promises: Vec<String> = match policy {
        Some(policy) => items
            .iter()
            .filter_map(|i| i.rule)
            .filter_map(|r| policy.rules.get(r.checked_sub(1)?))
            .flat_map(|rule| rule.promises.iter().map(|p| p.as_str().to_owned()))
            .collect(),
        None => Vec::new(),
    };
    policy_promises.sort();
    policy_promises.dedup();
    let days = policy.map_or(90, |p| p.terms_valid_days);
    let previous = doc
        .proposed
        .as_ref()
        .and_then(|v| TermsRecord::from_json(v).ok())
        .map(|r| AnexTerms {
            access: r.access.iter().map(|a| a.as_str().to_owned()).collect(),
            promise: r.promise.iter().map(|a| a.as_str().to_owned()).collect(),
        });
    // The ask waits for the owner until its decision deadline: a moment
    // fixed by the ask (its arrival and the policy's `decide_within_hours`),
    // so the summary (and its ETag) does not move with the clock.
    let since = anp::api::parse_timestamp(&p.since).unwrap_or(now);
    let valid_until = anex::decision_deadline(policy, since);
    Some(PendingDecision {
        seq: index as u64 + 1,
        event_hash: message_hash(message),
        kind: message
            .get("performative")
            .and_then(Value::as_str)
            .unwrap_or("CFP")
            .to_owned(),
        actor: "counterparty".into(),
        expires_at: anp::api::format_timestamp(valid_until),
        approvals: Vec::new(),
        approvals_required: 1,
        draft: None,
        held_reason: None,
        request_id: Some(p.answers.clone()),
        action: Some("propose".into()),
        amount: None,
        threshold: None,
        anex: Some(AnexPending {
            conversation_id: conversation.id().as_str().to_owned(),
            answers: p.answers.clone(),
            requester: AnexRequester {
                identity: cfp.identity.as_str().to_owned(),
                owner: cfp.owner.as_str().to_owned(),
                relation: cfp.relation.as_ref().map(|r| r.as_str().to_owned()),
            },
            responder: conversation.responder().as_str().to_owned(),
            request_type: cfp.request_type.as_str().to_owned(),
            items,
            promise: asked
                .promise
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect(),
            policy_promises,
            previous,
            terms_valid_days: days,
        }),
        route: None,
    })
}

/// An ask's chain of approvals: the route it was given when it arrived
/// (one approver for an ask from before routing) and the approvals given.
struct Chain {
    route: StoredRoute,
    counted: Vec<::authority::Approval>,
    since: String,
}

impl Chain {
    fn of(p: &domain::PendingAsk) -> Result<Chain, DomainError> {
        Ok(Chain {
            since: p.since.clone(),
            route: StoredRoute::read(p.route.as_deref(), 1)?,
            counted: p
                .approvals
                .iter()
                .map(|a| {
                    let mut counted = authority::approval(
                        &a.approved_by,
                        Some(a.step),
                        Some(&a.role),
                        Some(&a.at),
                    );
                    counted.for_person = a.for_person.as_deref().map(::authority::Person::new);
                    counted
                })
                .collect(),
        })
    }

    /// The chain as it stands at `now` among the org's `enrolled`
    /// approvers (no one in the organization owns a counterparty's agent).
    fn decidable<'a>(
        &'a self,
        enrolled: &'a [::authority::Person],
        stand_ins: &'a [::authority::StandIn],
        now: OffsetDateTime,
    ) -> Decidable<'a> {
        Decidable {
            route: &self.route,
            approvals: &self.counted,
            enrolled,
            owner: None,
            timing: authority::Timing::new(&self.since, now),
            stand_ins,
        }
    }
}

/// A conversation of the approver's org.
async fn visible(
    host: &Host,
    approver: &Approver,
    context_id: &str,
) -> Result<AnexConversationRow, DomainError> {
    host.store()
        .anex()
        .anex_conversation(context_id)
        .await?
        .filter(|row| row.org_handle == approver.org_handle)
        .ok_or(DomainError::Unauthorized)
}

/// `GET /sessions/anex:<context_id>/log?after=N`.
pub async fn log(
    host: &Host,
    approver: &Approver,
    context_id: &str,
    after: u64,
) -> Result<AnexLog, DomainError> {
    let row = visible(host, approver, context_id).await?;
    let doc = doc_of(&row)?;
    let conversation = replay(&doc).map_err(DomainError::Internal)?;
    let skip = usize::try_from(after).unwrap_or(usize::MAX);
    Ok(AnexLog {
        protocol: protocol::ANEX.to_owned(),
        session_id: session_id(context_id),
        conversation_id: row.conversation_id.clone(),
        phase: phase_name(conversation.phase()).to_owned(),
        after,
        messages: doc.messages.iter().skip(skip).cloned().collect(),
        agreed: doc.agreed.clone(),
        receipts: doc.receipts.iter().map(|s| s.receipt.clone()).collect(),
        approvals: doc.approvals.clone(),
    })
}

/// The org's outbound screening over a decline's reason, which the
/// requester's agent reads: a reason that mentions what the org will not
/// disclose, or names one of its confidential values, is refused before
/// anything is sent or recorded, so the person can reword it.
fn screen_reason(org: &crate::store::Org, reason: &str) -> Result<(), DomainError> {
    let screen = org
        .screen()
        .map_err(|e| invalid(format!("the reason cannot be sent: {e}")))?;
    screen
        .check_terms(&serde_json::json!({ "reason": reason }))
        .map_err(|leak| {
            invalid(format!(
                "the reason was not sent: the org's outbound screening found that {}; reword it",
                leak.reason
            ))
        })
}

fn invalid(what: impl std::fmt::Display) -> DomainError {
    DomainError::Invalid(format!("{what}; nothing was recorded."))
}

fn terms_of(t: &AnexTerms) -> Result<Terms, DomainError> {
    let terms = Terms::from_wire(&t.access, &t.promise)
        .map_err(|e| invalid(format!("counter_terms: {e}")))?;
    if terms.has_marks() {
        return Err(invalid(
            "counter_terms: items carry no (m) marks in a counter (marks are the requester's)",
        ));
    }
    Ok(terms)
}

/// `POST /sessions/anex:<context_id>/decisions`.
pub async fn decide(
    host: &Host,
    approver: &Approver,
    context_id: &str,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<AnexDecisionResponse, DomainError> {
    let req: AnexDecisionRequest = crate::body::parse_json(body, "decision")?;
    if uuid::Uuid::parse_str(&req.decision_id).is_err() {
        return Err(DomainError::Invalid("decision_id must be a UUID.".into()));
    }
    let body_sha256 = jcs::sha256_hex(body);
    let (policy, _) = files(host, &approver.org_handle).await?;
    let org = super::org_of(host, &approver.org_handle).await?;
    let enrolled = super::enrolled(host, approver).await?;
    for _ in 0..ATTEMPTS {
        let row = visible(host, approver, context_id).await?;
        let mut doc = doc_of(&row)?;
        if let Some(earlier) = host.store().anex().anex_decision(&req.decision_id).await? {
            return replayed(&earlier, &doc, &body_sha256, &req);
        }
        let used = host
            .store()
            .negotiations()
            .decision(&req.decision_id)
            .await?
            .is_some()
            || host
                .store()
                .gate()
                .gate_decision(&req.decision_id)
                .await?
                .is_some();
        if used {
            return Err(DomainError::DecisionConflict(format!(
                "decision_id {} was already used for a decision on another session.",
                req.decision_id
            )));
        }
        // Past its deadline the ask is refused for the owner (the requester
        // is told), and no decision is taken on it.
        if let Some(deadline) =
            domain::expire_if_due(&mut doc, policy.as_ref(), now).map_err(DomainError::Internal)?
        {
            let expired = AnexCommit {
                conversation: AnexConversationRow {
                    doc: crate::service::anex::doc_text(&doc)?,
                    version: row.version + 1,
                    updated_at: anp::api::format_timestamp(now),
                    ..row.clone()
                },
                expected_version: Some(row.version),
                decision: None,
            };
            match host.store().anex().anex_commit(&expired).await {
                Ok(()) => {}
                Err(CommitError::Conflict) => continue,
                Err(CommitError::Store(e)) => return Err(e.into()),
            }
            crate::changes::touch(&approver.org_handle);
            return Err(DomainError::OfferExpired(format!(
                "This ask's decision deadline passed at {}; nothing was signed, and the requester was told no one decided in time.",
                anp::api::format_timestamp(deadline)
            )));
        }
        let Some((conversation, pending)) = domain::awaiting_owner(&doc) else {
            return Err(DomainError::NoStandingOffer(
                "nothing in this conversation awaits the owner's decision.".into(),
            ));
        };
        if pending.answers != req.in_response_to {
            return Err(DomainError::NotStanding(format!(
                "the decision answers {:?}, but the ask awaiting the owner is message {:?}.",
                req.in_response_to, pending.answers
            )));
        }
        let asked = conversation
            .ask()
            .ok_or_else(|| DomainError::Internal("an awaited ask without terms".into()))?
            .clone();
        let terms = match req.action {
            DecisionAction::Approve | DecisionAction::Decline => asked.unmarked(),
            DecisionAction::Counter => {
                let counter = terms_of(req.counter_terms.as_ref().ok_or_else(|| {
                    invalid(
                        "a counter needs counter_terms: the access items and promises to propose",
                    )
                })?)?;
                if let Err(problems) = check_owner_counter(&asked, &counter) {
                    let sentences: Vec<String> = problems.iter().map(ToString::to_string).collect();
                    return Err(invalid(format!("counter_terms: {}", sentences.join("; "))));
                }
                counter
            }
        };
        let reason = match req.action {
            DecisionAction::Decline => {
                let reason = req.reason.as_deref().map(str::trim).unwrap_or_default();
                Text::parse(reason).map_err(|e| {
                    invalid(format!(
                        "a decline needs a reason of one line, 1 to 1000 characters: {e}"
                    ))
                })?;
                screen_reason(&org, reason)?;
                Some(reason.to_owned())
            }
            _ => None,
        };
        let answers = Id::parse(&pending.answers)
            .map_err(|e| DomainError::Internal(format!("stored message id: {e}")))?;
        // The chain the ask was routed to: who may act now, as which role.
        let chain = Chain::of(pending)?;
        let people = authority::people(&enrolled);
        let stand_ins = super::stand_ins(host, &approver.org_handle, now).await?;
        let decidable = chain.decidable(&people, &stand_ins, now);
        let asked_hash = doc
            .messages
            .iter()
            .find(|m| m.get("message_id").and_then(Value::as_str) == Some(pending.answers.as_str()))
            .map(message_hash)
            .unwrap_or_default();
        if matches!(req.action, DecisionAction::Approve)
            && pending
                .approvals
                .iter()
                .any(|a| a.approver_id == approver.id)
        {
            return Err(DomainError::Policy(
                "You already approved this ask; the policy needs distinct approvers.".into(),
            ));
        }
        let admitted = decidable.admit(
            &approver.email,
            match req.action {
                DecisionAction::Approve => ::authority::Action::Approve,
                DecisionAction::Decline => ::authority::Action::Decline,
                DecisionAction::Counter => ::authority::Action::Counter,
            },
        )?;
        if chain.route.policy_version.is_some() {
            let signed_as = req
                .receipt
                .pointer("/approver/role")
                .and_then(Value::as_str);
            if signed_as != Some(admitted.role.as_str()) {
                return Err(invalid(format!(
                    "receipt: approver.role is {}, but you decide at step {} as {}: sign the receipt as {}",
                    signed_as.map_or("absent".to_owned(), |r| format!("{r:?}")),
                    admitted.step,
                    admitted.role,
                    admitted.role
                )));
            }
        }
        authority::check_on_behalf_of(&req.receipt, &admitted)
            .map_err(|m| invalid(format!("receipt: {m}")))?;
        let days = policy.as_ref().map_or(90, |p| p.terms_valid_days);
        let record = check_receipt(approver, &req, &conversation, &answers, &terms, days, now)?;
        let received_at = anp::api::format_timestamp(now);
        if matches!(req.action, DecisionAction::Approve) {
            // The reason and rule of a policy's route; the old threshold's
            // reading names neither.
            let routed = chain.route.policy_version.is_some();
            doc.approvals
                .push(countersign_host_api::approver::ApprovalRecord {
                    event_hash: asked_hash.clone(),
                    approved_by: approver.email.clone(),
                    at: received_at.clone(),
                    step: Some(admitted.step as u32),
                    role: Some(admitted.role.clone()),
                    for_person: admitted.for_person.as_ref().map(ToString::to_string),
                    ..chain.route.approval_record(routed)
                });
        }
        if matches!(req.action, DecisionAction::Approve) && !admitted.completes {
            // A step of the chain is met, or part of one: recorded with the
            // receipt; the requester hears nothing until the last step.
            let detail = decidable.approved_sentence(&approver.email, &admitted);
            let given = domain::AskApproval {
                decision_id: req.decision_id.clone(),
                approver_id: approver.id.clone(),
                approved_by: approver.email.clone(),
                at: received_at.clone(),
                step: admitted.step as u32,
                role: admitted.role.clone(),
                for_person: admitted.for_person.as_ref().map(ToString::to_string),
            };
            if let Some(p) = doc.pending.as_mut() {
                p.approvals.push(given);
            }
            doc.receipts.push(Signed {
                decision_id: req.decision_id.clone(),
                receipt: req.receipt.clone(),
            });
            let commit = commit_of(
                &row,
                &doc,
                &req,
                approver,
                context_id,
                &body_sha256,
                "awaiting_approvals",
                &detail,
                &received_at,
            )?;
            match host.store().anex().anex_commit(&commit).await {
                Ok(()) => {
                    return Ok(AnexDecisionResponse {
                        decision_id: req.decision_id.clone(),
                        outcome: DecisionOutcome::AwaitingApprovals,
                        detail,
                        answer: Value::Null,
                    });
                }
                Err(CommitError::Conflict) => {
                    tokio::task::yield_now().await;
                    continue;
                }
                Err(CommitError::Store(e)) => return Err(e.into()),
            }
        }
        let answer = match &reason {
            Some(reason) => domain::owner_answers(&mut doc, OwnerAnswer::Refuse { reason }, now),
            None => domain::owner_answers(
                &mut doc,
                OwnerAnswer::Propose {
                    terms: &terms,
                    record: &record,
                },
                now,
            ),
        }
        .map_err(DomainError::Internal)?;
        doc.receipts.push(Signed {
            decision_id: req.decision_id.clone(),
            receipt: req.receipt.clone(),
        });
        let detail = match req.action {
            DecisionAction::Decline => "refused: the requester was sent a REFUSE with your reason",
            DecisionAction::Approve => "proposed as asked: the requester was sent a PROPOSE",
            DecisionAction::Counter => "countered: the requester was sent a PROPOSE of your terms",
        };
        let commit = commit_of(
            &row,
            &doc,
            &req,
            approver,
            context_id,
            &body_sha256,
            "appended",
            detail,
            &received_at,
        )?;
        match host.store().anex().anex_commit(&commit).await {
            Ok(()) => {
                return Ok(AnexDecisionResponse {
                    decision_id: req.decision_id.clone(),
                    outcome: DecisionOutcome::Appended,
                    detail: detail.into(),
                    answer: answer.to_json(),
                })
            }
            Err(CommitError::Conflict) => tokio::task::yield_now().await,
            Err(CommitError::Store(e)) => return Err(e.into()),
        }
    }
    Err(busy())
}

/// The conversation as `doc` now stands and the decision's record, written
/// together (only if no one else wrote the conversation meanwhile).
#[allow(clippy::too_many_arguments)]
fn commit_of(
    row: &AnexConversationRow,
    doc: &Doc,
    req: &AnexDecisionRequest,
    approver: &Approver,
    context_id: &str,
    body_sha256: &str,
    outcome: &str,
    detail: &str,
    received_at: &str,
) -> Result<AnexCommit, DomainError> {
    let text = serde_json::to_string(doc).map_err(|e| DomainError::Internal(e.to_string()))?;
    Ok(AnexCommit {
        conversation: AnexConversationRow {
            doc: text,
            version: row.version + 1,
            updated_at: received_at.to_owned(),
            ..row.clone()
        },
        expected_version: Some(row.version),
        decision: Some(AnexDecisionRow {
            decision_id: req.decision_id.clone(),
            approver_id: approver.id.clone(),
            context_id: context_id.to_owned(),
            body_sha256: body_sha256.to_owned(),
            outcome: outcome.into(),
            detail: detail.into(),
            received_at: received_at.to_owned(),
        }),
    })
}

/// A decision id seen before: the same body answers what it answered then.
fn replayed(
    earlier: &AnexDecisionRow,
    doc: &Doc,
    body_sha256: &str,
    req: &AnexDecisionRequest,
) -> Result<AnexDecisionResponse, DomainError> {
    if earlier.body_sha256 != body_sha256 {
        return Err(DomainError::DecisionConflict(format!(
            "decision_id {} was already used for a different decision.",
            req.decision_id
        )));
    }
    let answer = doc
        .messages
        .iter()
        .rev()
        .find(|m| m.get("in_reply_to").and_then(Value::as_str) == Some(req.in_response_to.as_str()))
        .cloned()
        .unwrap_or(Value::Null);
    if earlier.outcome == "awaiting_approvals" {
        return Ok(AnexDecisionResponse {
            decision_id: req.decision_id.clone(),
            outcome: DecisionOutcome::AwaitingApprovals,
            detail: earlier.detail.clone(),
            answer: Value::Null,
        });
    }
    Ok(AnexDecisionResponse {
        decision_id: req.decision_id.clone(),
        outcome: DecisionOutcome::Appended,
        detail: earlier.detail.clone(),
        answer,
    })
}

/// Checks the receipt before it counts: every check of
/// `crates/approval-receipt` over the record in `scope.terms` (schema,
/// the approver's `did:key`, signature, not expired, `offer_hash` = the
/// record's hash), then the ANEX conventions: the decision, the
/// conversation it approves, `0 XXX`, `expires_at` = `valid_until`, and the
/// record being exactly the record of this decision (these terms, in
/// answer to this message, in force for the policy's days from now).
#[allow(clippy::too_many_arguments)]
fn check_receipt(
    approver: &Approver,
    req: &AnexDecisionRequest,
    conversation: &anex::Conversation,
    answers: &Id,
    terms: &Terms,
    days: u32,
    now: OffsetDateTime,
) -> Result<TermsRecord, DomainError> {
    let receipt = &req.receipt;
    let record_json = receipt
        .pointer("/scope/terms")
        .ok_or_else(|| invalid("receipt: scope.terms (the terms record) is missing"))?;
    let record = TermsRecord::from_json(record_json)
        .map_err(|e| invalid(format!("receipt: scope.terms: {e}")))?;
    let key = anp::keys::parse_public_key(&approver.public_key)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    let report = verify_receipt(receipt, &record.to_json(), Some(&key), now, &[]);
    if let Some(failed) = report.failures().next() {
        let sentence = format!(
            "receipt: the {} check fails: {}",
            failed.check.name(),
            failed.detail
        );
        return Err(match failed.check {
            ReceiptCheck::Identity | ReceiptCheck::Signature | ReceiptCheck::Algorithm => {
                DomainError::BadSignature(format!(
                    "{sentence}; sign it with your enrolled key; nothing was recorded."
                ))
            }
            _ => invalid(sentence),
        });
    }
    let expected_decision = match req.action {
        DecisionAction::Decline => "deny",
        _ => "approve",
    };
    let decision = receipt.pointer("/scope/decision").and_then(Value::as_str);
    if decision != Some(expected_decision) {
        return Err(invalid(format!(
            "receipt: scope.decision is {decision:?}, but this decision needs {expected_decision:?}"
        )));
    }
    let reference = format!("urn:anex:conversation:{}", conversation.id().as_str());
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
        return Err(invalid(format!(
            "receipt: no references[] entry approves {reference}"
        )));
    }
    for member in ["amount", "threshold_crossed"] {
        let value = receipt
            .pointer(&format!("/scope/{member}"))
            .and_then(Value::as_str);
        if value != Some(NO_AMOUNT) {
            return Err(invalid(format!(
                "receipt: scope.{member} is {value:?}; ANEX terms carry no money, so it is {NO_AMOUNT:?}"
            )));
        }
    }
    let expires = receipt.get("expires_at").and_then(Value::as_str);
    if expires != Some(record.valid_until_text().as_str()) {
        return Err(invalid(format!(
            "receipt: expires_at is {expires:?}, not the record's valid_until {}",
            record.valid_until_text()
        )));
    }
    let expected = TermsRecord::new(conversation, answers, terms, record.valid_until)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    if expected != record {
        return Err(invalid(format!(
            "receipt: scope.terms is not the record of this decision (expected the record of {} with access [{}] and promises [{}])",
            answers.as_str(),
            expected.access.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "),
            expected.promise.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "),
        )));
    }
    let target = now + time::Duration::days(i64::from(days));
    let slack = time::Duration::minutes(10);
    if record.valid_until < target - slack || record.valid_until > target + slack {
        return Err(invalid(format!(
            "receipt: scope.terms.valid_until {} is not the decision time plus the policy's {days} days",
            record.valid_until_text()
        )));
    }
    Ok(record)
}
