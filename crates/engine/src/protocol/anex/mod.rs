//! ANEX over A2A behind the seam: a counterparty's agent asks the
//! organization's host for data about it (access items, `(m)` for
//! required) under promises; what the owner's policy does not cover waits
//! for a person. This console follows the conversation, shows the ask item
//! by item with the policy's verdicts, the promises offered beside those
//! the policy requires and the diff from the previous proposal, and signs
//! the person's decision as an ApprovalReceipt over the terms record.
//! Every rule is `crates/anex`'s and `crates/approval-receipt`'s.
//!
//! | file | job |
//! |---|---|
//! | `log` | the approver API's ANEX log: messages read as ANEX, ids once, the stored copy never rewritten |
//! | `ask` | the ask awaiting the owner, the proposal it answers, the view shape, the counter editor's check, what the record shows |
//! | `decision` | the terms record, the receipt over it, the decision request; the host's answer |
//! | `responder` | the one agent terms may name as responder: the enrolled host's own |
//! | `record` | timeline rows, the conversation export, the CSV of terms |
//! | `io` | the conversation after a pin |

mod ask;
mod decision;
mod io;
mod log;
mod record;
mod responder;

#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::edge::transport::HostIo;
use crate::error::{DecideError, EngineError};
use crate::protocol::{
    Checked, DecisionAnswer, DecisionInput, Fetched, Head, IoFuture, Lifecycle, Located, LogAnswer,
    PendingProposal, Seam, TimelineEntry, Trust,
};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{
    Capabilities, CounterCheck, CounterForm, DecideAction, ProposalDetail, ProposalKind, Side,
};

/// ANEX's jobs.
pub(crate) struct Anex;

impl Seam for Anex {
    fn name(&self) -> &'static str {
        log::PROTOCOL
    }

    fn label(&self) -> &'static str {
        "ANEX"
    }

    fn takes_decisions(&self, status: &str) -> bool {
        // The conversation's phase: an ask awaits the owner while terms
        // are negotiated.
        status == "negotiating"
    }

    fn lifecycle(&self, status: &str) -> Lifecycle {
        // The conversation's phase as the host names it: everything before
        // agreement is still a negotiation; `closed` ended without one (or
        // ended accepted terms by CANCEL).
        match status {
            "agreed" => Lifecycle::Agreed,
            "closed" => Lifecycle::Closed,
            _ => Lifecycle::Open,
        }
    }

    fn genesis(&self) -> Head {
        Head {
            seq: 0,
            hash: String::new(),
        }
    }

    fn proposal_kind(&self) -> ProposalKind {
        ProposalKind::AnexAsk
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
            decline_label: "Refuse the request".to_owned(),
            decline_reasons: [
                "We do not share this data with this requester",
                "The purpose is not one we agree to",
                "The use or retention asked for goes too far",
                "We do not know this requester",
            ]
            .iter()
            .map(|r| (*r).to_owned())
            .collect(),
            counter_form: Some(CounterForm::AnexTerms),
            signed_as:
                "an ApprovalReceipt over the terms record, signed with your key (its did:key)"
                    .to_owned(),
            decision_goes_to: crate::views::DecisionRecipient::Counterparty,
            deadline_is_ours: false,
            expiry_note: Some("This ask waits for a decision until the organization's deadline (the ANEX policy's decide_within_hours, three days unless it says); past it the requester is told no one decided in time.".to_owned()),
        }
    }

    fn verify_since(
        &self,
        session_id: &str,
        pin: &Head,
        _trust: &Trust<'_>,
        fetched: &[u8],
    ) -> Result<Checked, EngineError> {
        log::since(session_id, pin, fetched)
    }

    fn verify_whole(
        &self,
        session_id: &str,
        pin: &Head,
        _trust: &Trust<'_>,
        fetched: &[u8],
        stored: &[StoredEvent],
    ) -> Result<Checked, EngineError> {
        log::whole(session_id, pin, fetched, stored)
    }

    fn locate(&self, events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
        ask::locate(events, pending)
    }

    fn former(&self, events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
        ask::former(events, event_hash)
    }

    fn detail(
        &self,
        events: &[StoredEvent],
        pending: &PendingProposal,
        located: &Located,
        trust: &Trust<'_>,
    ) -> ProposalDetail {
        let mut view = ask::view(events, pending, located);
        view.host = trust.host_url.to_owned();
        if !view.responder.is_empty() {
            view.responder_refused = responder::check(trust.host_url, &view.responder).err();
        }
        ProposalDetail::AnexAsk(Box::new(view))
    }

    fn validate_counter(
        &self,
        events: &[StoredEvent],
        event_hash: &str,
        counter: &Value,
        at: &crate::protocol::CounterAt<'_>,
    ) -> Result<CounterCheck, EngineError> {
        ask::check_counter(events, event_hash, counter, at).ok_or_else(|| EngineError::NotFound {
            what: "ANEX ask",
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
        decision::read_answer(body)
    }

    fn answer_on_log(
        &self,
        events: &[StoredEvent],
        seq: u64,
        _event_hash: &str,
        actor: &str,
    ) -> Option<LogAnswer> {
        ask::answer_on_log(events, seq, actor)
    }

    fn notice_lead(&self, pending: &PendingProposal) -> &'static str {
        match pending.kind.as_str() {
            "PROPOSE" => "ANEX counter-proposal from",
            _ => "ANEX data request from",
        }
    }

    fn timeline(
        &self,
        session: &SessionRecord,
        event: &StoredEvent,
        _human: &humanize::Humanizer,
    ) -> Option<TimelineEntry> {
        record::timeline(event, &session.counterparty.id)
    }

    fn export_record(
        &self,
        host: Option<&HostRecord>,
        session: &SessionRecord,
        events: &[StoredEvent],
    ) -> Value {
        record::document(host, session, events)
    }

    fn fetch_since<'a>(
        &'a self,
        io: &'a HostIo,
        host: &'a HostRecord,
        session_id: &'a str,
        after: Option<u64>,
    ) -> IoFuture<'a, Result<Fetched, EngineError>> {
        Box::pin(io::fetch(io, host, session_id, after))
    }
}
