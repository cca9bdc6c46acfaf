//! The approver API's summary, read into neutral shapes: one
//! [`RemoteSession`] per session with its protocol, counterparty, head and
//! pending decisions ([`PendingProposal`]), whatever protocol it speaks.
//!
//! The wire is `countersign-host-api`'s (docs/approver-api.md): every
//! session names its protocol and its counterparty, and a gate session's
//! pending entries carry the agent's request (its id, action, amount and
//! the policy threshold). [`read_summary`] is the one place it is read.

use countersign_client::{ApproverClient, SummaryFetch};
use countersign_host_api::approver::{PendingDecision, SessionSummary, Summary};

use crate::protocol::PendingProposal;
use crate::views::{ApprovalGiven, Counterparty};

/// One session as the host's summary lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RemoteSession {
    /// How the other routes name it.
    pub id: String,
    /// Its protocol, as the host names it.
    pub protocol: String,
    /// The host's status (`open`, `closed`, `accepted`, `active`, …).
    pub status: String,
    /// True for the sandbox.
    pub sandbox: bool,
    /// Who is on the other side, as the host vouches for it.
    pub counterparty: Counterparty,
    /// Entries in the record.
    pub event_count: u64,
    /// Hash of the last one.
    pub chain_head: String,
    /// Decisions waiting.
    pub pending: Vec<PendingProposal>,
}

/// What one summary request found.
#[derive(Debug, Clone)]
pub(crate) enum SummaryAnswer {
    /// Unchanged since the tagged one.
    Unchanged,
    /// Unchanged, and the host ended a wait early to make room for other
    /// connections: wait this long before asking again.
    AskLater(std::time::Duration),
    /// A new summary.
    Changed {
        /// Every session.
        sessions: Vec<RemoteSession>,
        /// The tag to send next time.
        etag: Option<String>,
        /// Bytes of JSON it took (as re-serialized), for the poller's counts.
        bytes: u64,
    },
}

/// Why a summary could not be used.
#[derive(Debug, Clone)]
pub(crate) enum SummaryError {
    /// The host could not be reached or refused.
    Unreachable(String),
    /// It answered another protocol.
    Protocol(String),
    /// The host refused to wait for a change (`400` on `wait`: an admin
    /// switched it off); its sentence.
    WaitRefused(String),
}

fn pending_of(p: &PendingDecision) -> PendingProposal {
    PendingProposal {
        seq: p.seq,
        event_hash: p.event_hash.clone(),
        kind: p.kind.clone(),
        actor: p.actor.clone(),
        expires_at: p.expires_at.clone(),
        approvals: p
            .approvals
            .iter()
            .map(|a| ApprovalGiven {
                approved_by: a.approved_by.clone(),
                at: a.at.clone(),
            })
            .collect(),
        approvals_required: p.approvals_required,
        draft: p.draft.clone(),
        held_reason: p.held_reason.clone(),
        request_id: p.request_id.clone(),
        action: p.action.clone(),
        amount: p.amount.clone(),
        threshold: p.threshold.clone(),
        anex: p.anex.as_ref().and_then(|a| serde_json::to_value(a).ok()),
        chain: p.route.as_ref().map(chain_of),
    }
}

/// The host's record of a session's approvals (the approver API's
/// `SessionApprovals`, as stored) as History shows it; a record that does
/// not read shows nothing.
pub(crate) fn host_approvals(body: &str) -> Vec<crate::views::HostApproval> {
    serde_json::from_str::<countersign_host_api::approver::SessionApprovals>(body)
        .map(|r| r.approvals.into_iter().map(host_approval).collect())
        .unwrap_or_default()
}

/// One approval of the host's record, as History shows it.
pub(crate) fn host_approval(
    a: countersign_host_api::approver::ApprovalRecord,
) -> crate::views::HostApproval {
    crate::views::HostApproval {
        event_hash: a.event_hash,
        approved_by: a.approved_by,
        at: a.at,
        step: a.step,
        role: a.role,
        for_person: a.for_person,
        reason: a.reason,
        rule: a.rule,
        policy_version: a.policy_version,
    }
}

fn chain_of(r: &countersign_host_api::approver::RouteView) -> crate::views::ApprovalChain {
    use crate::views::{ApprovalChain, ChainPart, ChainStep};
    ApprovalChain {
        reason: r.reason.clone(),
        rule: r.rule,
        policy_version: r.policy_version,
        current_step: r.current_step,
        you_may_approve: r.you_may_act,
        you_may_decide: r.you_may_decide,
        your_role: r.your_role.clone(),
        your_stand_in: r.your_stand_in.as_ref().map(|s| crate::views::StandingIn {
            for_person: s.person.clone(),
            delegation: s.delegation.clone(),
        }),
        steps: r
            .steps
            .iter()
            .map(|s| ChainStep {
                number: s.number,
                met: s.met,
                parts: s
                    .parts
                    .iter()
                    .map(|p| ChainPart {
                        role: p.role.clone(),
                        required: p.required,
                        approved_by: p.approved_by.clone(),
                        may_act: p.may_act.clone(),
                        stood_in: p
                            .stood_in
                            .iter()
                            .map(|s| crate::views::StoodIn {
                                by: s.by.clone(),
                                for_person: s.for_person.clone(),
                            })
                            .collect(),
                    })
                    .collect(),
                respond_within_minutes: s.respond_within_minutes,
                escalate_to: s.escalate_to.clone(),
                due_at: s.due_at.clone(),
                escalated: s.escalated,
            })
            .collect(),
    }
}

fn counterparty_of(s: &SessionSummary) -> Counterparty {
    // The vendor block, where there is one, is the host's own word about a
    // registered agent; the neutral block is what every session has.
    match &s.vendor {
        Some(v) => Counterparty {
            id: v.agent_id.clone(),
            name: v.agent_name.clone(),
            organization: Some(v.vendor_name.clone()),
            fingerprint: v.fingerprint.clone(),
            status: countersign_host_api::approver::status_text(v.status).to_owned(),
            verified: s.counterparty.verified,
        },
        None => Counterparty {
            id: s.counterparty.id.clone(),
            name: s.counterparty.name.clone().unwrap_or_default(),
            organization: s.counterparty.organization.clone(),
            fingerprint: s.counterparty.fingerprint.clone(),
            status: s.counterparty.status.clone(),
            verified: s.counterparty.verified,
        },
    }
}

fn session_of(s: &SessionSummary) -> RemoteSession {
    RemoteSession {
        id: s.id.clone(),
        protocol: s.protocol.clone(),
        status: s.status.clone(),
        sandbox: s.sandbox,
        counterparty: counterparty_of(s),
        event_count: s.event_count,
        chain_head: s.chain_head.clone(),
        pending: s.pending.iter().map(pending_of).collect(),
    }
}

/// Reads the summary in neutral shapes.
pub(crate) fn read_summary(summary: &Summary) -> Result<Vec<RemoteSession>, SummaryError> {
    if summary.protocol != anp::PROTOCOL {
        return Err(SummaryError::Protocol(format!(
            "the host's summary speaks {:?}, not {}",
            summary.protocol,
            anp::PROTOCOL
        )));
    }
    Ok(summary.sessions.iter().map(session_of).collect())
}

/// Asks for the summary unless it is the one tagged `known`.
pub(crate) async fn summary(
    client: &ApproverClient,
    known: Option<&str>,
) -> Result<SummaryAnswer, SummaryError> {
    match client.summary_since(known).await {
        Ok(fetch) => answer_of(fetch),
        Err(e) => Err(unreachable(e)),
    }
}

/// As [`summary`], held by the host for up to `wait` seconds until the
/// summary tagged `known` changes (docs/approver-api.md, "Waiting for a
/// change"). A `400` naming `wait` is [`SummaryError::WaitRefused`].
pub(crate) async fn summary_waiting(
    client: &ApproverClient,
    known: &str,
    wait: u64,
) -> Result<SummaryAnswer, SummaryError> {
    match client.summary_waiting(known, wait).await {
        Err(countersign_client::ClientError::Http {
            status: 400,
            message,
            ..
        }) if message.contains("wait") => Err(SummaryError::WaitRefused(message)),
        Ok(fetch) => answer_of(fetch),
        Err(e) => Err(unreachable(e)),
    }
}

fn answer_of(fetch: SummaryFetch) -> Result<SummaryAnswer, SummaryError> {
    Ok(match fetch {
        SummaryFetch::Unchanged => SummaryAnswer::Unchanged,
        SummaryFetch::AskLater(after) => SummaryAnswer::AskLater(after),
        SummaryFetch::Changed { summary, etag } => {
            let bytes = serde_json::to_vec(&summary).map_or(0, |v| v.len() as u64);
            SummaryAnswer::Changed {
                sessions: read_summary(&summary)?,
                etag,
                bytes,
            }
        }
    })
}

/// What happened and the next step, as the Hosts screen shows it.
fn unreachable(e: countersign_client::ClientError) -> SummaryError {
    match e {
        countersign_client::ClientError::Transport { detail, .. } => {
            SummaryError::Unreachable(as_sentence(&detail))
        }
        // The host's own sentence: when the key was revoked, what to do.
        countersign_client::ClientError::Http { code, message, .. }
            if code == countersign_host_api::approver::KEY_REVOKED =>
        {
            SummaryError::Unreachable(message)
        }
        e => SummaryError::Unreachable(e.to_string()),
    }
}

/// `detail` with a capital first letter and a closing full stop.
fn as_sentence(detail: &str) -> String {
    let mut chars = detail.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// Asks the host to move a gate request's deadline to `expires_at`, with
/// `reason` (`POST …/requests/<request_id>/deadline`).
pub(crate) async fn extend_deadline(
    client: &countersign_client::ApproverClient,
    session_id: &str,
    request_id: &str,
    expires_at: &str,
    reason: &str,
) -> Result<(), crate::edge::transport::SendError> {
    let request = countersign_host_api::gate::ExtendDeadlineRequest {
        expires_at: expires_at.to_owned(),
        reason: reason.to_owned(),
    };
    client
        .extend_gate_deadline(session_id, request_id, &request)
        .await
        .map(|_| ())
        .map_err(|e| match e {
            countersign_client::ClientError::Http { code, message, .. } => {
                crate::edge::transport::SendError::Refused { code, message }
            }
            countersign_client::ClientError::Transport { detail, .. } => {
                crate::edge::transport::SendError::Unreachable(detail)
            }
            other => crate::edge::transport::SendError::Garbled(other.to_string()),
        })
}
