//! Concordia behind the seam: the org's own agent mirrors its transcript to
//! the host's gate and asks before it accepts; this console verifies the
//! transcript from its pin, pins each party's key the first time it sees
//! it, shows the awaited offer beside the one it answers, and signs the
//! person's decision as an ApprovalReceipt. Every rule is
//! `crates/concordia`'s and `crates/approval-receipt`'s.
//!
//! | file | job |
//! |---|---|
//! | `log` | the approver API's gate log document (docs/approver-api.md) |
//! | `verify` | messages since the pin, keys pinned at first sight, a whole transcript against the stored copy |
//! | `offer` | the awaited offer and the one it answers, amounts, the diff, the view shape, counter terms, what the transcript shows |
//! | `decision` | the approve / deny ApprovalReceipt and the decision request; the host's answer |
//! | `record` | timeline rows, the transcript export with its keys, the CSV of offers |

mod decision;
mod log;
mod offer;
mod record;
mod verify;

#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::edge::transport::HostIo;
use crate::error::{DecideError, EngineError};
use crate::protocol::{
    Checked, DecisionAnswer, DecisionInput, ExportParts, Fetched, Head, IoFuture, Lifecycle,
    Located, LogAnswer, PendingProposal, Seam, TimelineEntry, Trust,
};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{
    Capabilities, ConcordiaMessage, ConcordiaOfferView, CounterCheck, CounterForm, DecideAction,
    GateRequest, PartyKey, ProposalDetail, ProposalKind, Side,
};

/// Concordia's jobs.
pub(crate) struct Concordia;

impl Seam for Concordia {
    fn name(&self) -> &'static str {
        log::PROTOCOL
    }

    fn label(&self) -> &'static str {
        "Concordia"
    }

    fn genesis(&self) -> Head {
        Head {
            seq: 0,
            hash: concordia::GENESIS_HASH.to_owned(),
        }
    }

    fn proposal_kind(&self) -> ProposalKind {
        ProposalKind::ConcordiaOffer
    }

    fn side(&self, session: &SessionRecord, actor: &str) -> Side {
        if actor == session.counterparty.id {
            Side::Counterparty
        } else {
            Side::Ours
        }
    }

    fn capabilities(&self, _pending: &PendingProposal) -> Capabilities {
        Capabilities {
            actions: vec![
                DecideAction::Approve,
                DecideAction::Decline,
                DecideAction::Counter,
            ],
            // Filled by the inbox from `expiry_refuses`.
            after_expiry: Vec::new(),
            decline_needs_reason: true,
            decline_label: "Decline offer".to_owned(),
            decline_reasons: crate::protocol::PURCHASE_DECLINE_REASONS
                .iter()
                .map(|r| (*r).to_owned())
                .collect(),
            counter_form: Some(CounterForm::ConcordiaTerms),
            signed_as: "an ApprovalReceipt signed with your key (its did:key)".to_owned(),
            decision_goes_to: crate::views::DecisionRecipient::OwnAgent,
            deadline_is_ours: true,
            expiry_note: None,
        }
    }

    fn takes_decisions(&self, status: &str) -> bool {
        // The transcript's §5 state: only an active negotiation has an
        // offer standing (proposed, agreed, rejected, expired, dormant: none).
        status == "active"
    }

    fn expiry_refuses(&self, _action: DecideAction) -> bool {
        // The host takes no decision on a request past its time, and a
        // receipt may not outlive the request it answers.
        true
    }

    fn verify_since(
        &self,
        session_id: &str,
        pin: &Head,
        trust: &Trust<'_>,
        fetched: &[u8],
    ) -> Result<Checked, EngineError> {
        verify::since(session_id, pin, trust, fetched)
    }

    fn verify_whole(
        &self,
        session_id: &str,
        pin: &Head,
        trust: &Trust<'_>,
        fetched: &[u8],
        stored: &[StoredEvent],
    ) -> Result<Checked, EngineError> {
        verify::whole(session_id, pin, trust, fetched, stored)
    }

    fn locate(&self, events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
        offer::locate(events, pending)
    }

    fn former(&self, events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
        offer::former(events, event_hash)
    }

    fn detail(
        &self,
        events: &[StoredEvent],
        pending: &PendingProposal,
        located: &Located,
        trust: &Trust<'_>,
    ) -> ProposalDetail {
        let current = offer::offer_in(&located.proposal.value);
        let previous = located
            .previous
            .as_ref()
            .and_then(|p| offer::offer_in(&p.value));
        let diff = match (&previous, &current) {
            (Some(old), Some(new)) => Some(offer::diff_view(old, new)),
            _ => None,
        };
        let text = |pointer: &str| {
            located
                .proposal
                .value
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let from = text("/from/agent_id");
        let key = offer::pinned(trust.pinned_keys)
            .get(&from)
            .cloned()
            .unwrap_or_default();
        let fingerprint = approval_receipt::keys::parse_public_key(&key)
            .map(|k| jcs::sha256_hex(k.as_bytes()))
            .unwrap_or_default();
        let hash = events
            .iter()
            .find(|e| e.seq == located.proposal.seq)
            .map(|e| e.event_hash.clone())
            .unwrap_or_default();
        ProposalDetail::ConcordiaOffer(Box::new(ConcordiaOfferView {
            // `locate` found an offer in this message; an empty one stands in
            // only if the stored copy changed under it.
            offer: current
                .as_ref()
                .map(offer::offer_view)
                .unwrap_or_else(offer::empty_view),
            previous: previous.as_ref().map(offer::offer_view),
            previous_ref: offer::previous_ref(located),
            diff,
            message: ConcordiaMessage {
                id: text("/id"),
                message_type: text("/type"),
                timestamp: text("/timestamp"),
                from: from.clone(),
                hash,
            },
            reasoning: located
                .proposal
                .value
                .get("reasoning")
                .and_then(Value::as_str)
                .map(str::to_owned),
            counterparty_key: PartyKey {
                party: from,
                fingerprint,
                public_key: key,
            },
            request: pending.request_id.as_ref().map(|id| GateRequest {
                request_id: id.clone(),
                action: pending
                    .action
                    .clone()
                    .unwrap_or_else(|| "accept".to_owned()),
                amount: decision::request_amount(pending.amount.as_deref()),
                threshold: decision::request_amount(pending.threshold.as_deref()),
            }),
        }))
    }

    fn validate_counter(
        &self,
        events: &[StoredEvent],
        event_hash: &str,
        counter: &Value,
        at: &crate::protocol::CounterAt<'_>,
    ) -> Result<CounterCheck, EngineError> {
        offer::check_counter(events, event_hash, counter, at).ok_or_else(|| EngineError::NotFound {
            what: "offer",
            id: event_hash.to_owned(),
        })
    }

    fn build_decision(&self, input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError> {
        decision::build(input)
    }

    fn read_answer(
        &self,
        body: &[u8],
        _action: &str,
        _after: u64,
    ) -> Result<DecisionAnswer, DecideError> {
        crate::protocol::gate_decision::read_answer(body)
    }

    fn answer_on_log(
        &self,
        events: &[StoredEvent],
        seq: u64,
        _event_hash: &str,
        actor: &str,
    ) -> Option<LogAnswer> {
        offer::answer_on_log(events, seq, actor)
    }

    fn host_keeps_requests(&self) -> bool {
        true
    }

    fn host_requests(
        &self,
        session_id: &str,
        fetched: &[u8],
    ) -> Result<Option<Vec<crate::protocol::HostRequest>>, EngineError> {
        crate::protocol::gate_request::read(fetched, session_id).map(Some)
    }

    fn notice_lead(&self, pending: &PendingProposal) -> &'static str {
        match pending.kind.as_str() {
            "negotiate.counter" => "Concordia counter-offer from",
            _ => "Concordia offer from",
        }
    }

    fn lifecycle(&self, status: &str) -> Lifecycle {
        // The gate names the session's §5 state as `crates/concordia` reads it.
        match status {
            "proposed" | "active" => Lifecycle::Open,
            "agreed" => Lifecycle::Agreed,
            _ => Lifecycle::Closed,
        }
    }

    fn timeline(
        &self,
        session: &SessionRecord,
        event: &StoredEvent,
        human: &humanize::Humanizer,
    ) -> Option<TimelineEntry> {
        record::timeline(event, &session.counterparty.id, human)
    }

    fn export_record(
        &self,
        host: Option<&HostRecord>,
        session: &SessionRecord,
        events: &[StoredEvent],
    ) -> Value {
        record::document(host, session, events)
    }

    fn export_document(&self, record: Value, export: ExportParts) -> Value {
        record::export_document(record, export)
    }

    fn fetch_since<'a>(
        &'a self,
        io: &'a HostIo,
        host: &'a HostRecord,
        session_id: &'a str,
        after: Option<u64>,
    ) -> IoFuture<'a, Result<Fetched, EngineError>> {
        Box::pin(crate::protocol::gate_io::fetch(io, host, session_id, after))
    }
}
