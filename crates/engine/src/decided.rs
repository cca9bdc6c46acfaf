//! What became of a proposal, for the offer view once a decision was made:
//! this console's own decision (who, when, the outcome, the event it
//! appended and whether that event is verified yet), or, when it decided
//! nothing, the answer the verified log shows.

use crate::protocol::{LogAnswer, StoredRef};
use crate::store::{AppendedRef, DecisionRecord, StoredEvent};
use crate::views::{AppendedEvent, ProposalDecision};

/// `appended` as the view shows it: verified once the stored copy holds it.
pub(crate) fn appended_event(appended: &AppendedRef, stored: &[StoredEvent]) -> AppendedEvent {
    AppendedEvent {
        seq: appended.seq,
        kind: appended.kind.clone(),
        event_hash: appended.event_hash.clone(),
        verified: stored
            .iter()
            .any(|e| e.seq == appended.seq && e.event_hash == appended.event_hash),
    }
}

/// A decision this console made; `decided_by` is the email it approves as
/// on that host.
pub(crate) fn from_decision(
    record: &DecisionRecord,
    decided_by: &str,
    stored: &[StoredEvent],
) -> ProposalDecision {
    ProposalDecision {
        action: Some(record.action.clone()),
        outcome: record.outcome.clone(),
        decided_by: Some(decided_by.to_owned()),
        at: Some(record.at.clone()),
        decision_id: Some(record.decision_id.clone()),
        appended: record.appended.as_ref().map(|a| appended_event(a, stored)),
        detail: record.detail.clone(),
    }
}

fn verified(event: &StoredRef) -> AppendedEvent {
    AppendedEvent {
        seq: event.seq,
        kind: event.kind.clone(),
        event_hash: event.event_hash.clone(),
        verified: true,
    }
}

/// A proposal that left the pending set with no decision from this console:
/// what the (verified, stored) log shows.
pub(crate) fn from_log(answer: Option<LogAnswer>) -> ProposalDecision {
    match answer {
        Some(LogAnswer::Accepted { event, approved_by }) => ProposalDecision {
            action: Some("approve".to_owned()),
            outcome: "answered".to_owned(),
            decided_by: (!approved_by.is_empty()).then(|| approved_by.join(", ")),
            at: Some(event.at.clone()),
            decision_id: None,
            detail: format!("Accepted at seq {}.", event.seq),
            appended: Some(verified(&event)),
        },
        Some(LogAnswer::Answered { event, action }) => ProposalDecision {
            action: Some(action.to_owned()),
            outcome: "answered".to_owned(),
            decided_by: None,
            at: Some(event.at.clone()),
            decision_id: None,
            detail: format!(
                "Answered at seq {} ({}).",
                event.seq,
                event.kind.replace('_', "-")
            ),
            appended: Some(verified(&event)),
        },
        Some(LogAnswer::Replaced { event }) => ProposalDecision {
            action: None,
            outcome: "withdrawn".to_owned(),
            decided_by: None,
            at: Some(event.at.clone()),
            decision_id: None,
            detail: format!("A newer proposal replaced it at seq {}.", event.seq),
            appended: None,
        },
        None => ProposalDecision {
            action: None,
            outcome: "withdrawn".to_owned(),
            decided_by: None,
            at: None,
            decision_id: None,
            detail: "It no longer waits for a decision, and the log shows no answer to it yet."
                .to_owned(),
            appended: None,
        },
    }
}
