//! OANP gate sessions behind the seam: the org's own buyer (or merchant)
//! agent mirrors its session log to the host's gate and asks before its
//! `offer.accept`; this console follows the chain from its pin, pins each
//! role's agent the first time it sees it, shows the counterparty's offer
//! beside the one it answers (price, inclusions added and removed) with the
//! arbiter's latest verdict and the rounds left, and signs the person's
//! decision as an ApprovalReceipt referencing the OANP session. Every rule
//! is `crates/oanp`'s and `crates/approval-receipt`'s.
//!
//! | file | job |
//! |---|---|
//! | `log` | the approver API's gate log document |
//! | `verify` | envelopes since the pin (frame, sender role, link), roles pinned at first sight, a whole log against the stored copy |
//! | `offer` | the awaited offer and the one it answers, amounts, inclusions, verdict, rounds, counter terms, what the log shows |
//! | `decision` | the approve / deny ApprovalReceipt and the decision request; the host's answer |
//! | `record` | timeline rows, the log export, the CSV of offers |

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
    Checked, DecisionAnswer, DecisionInput, Fetched, Head, IoFuture, Lifecycle, Located, LogAnswer,
    PendingProposal, Seam, TimelineEntry, Trust,
};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{
    Capabilities, CounterCheck, CounterForm, DecideAction, GateRequest, OanpOfferView,
    ProposalDetail, ProposalKind, Side,
};

/// What a person is told about the envelopes.
const NOTICE: &str = "OANP envelopes are not signed: this is the log as your organization's agent mirrored it, chained envelope to envelope. Only the arbiter's receipt, once it verifies against this log, is evidence.";

/// OANP's session jobs.
pub(crate) struct OanpSession;

impl Seam for OanpSession {
    /// The merchant's agent id the session's roles name (the counterparty
    /// id is only its role, `merchant`).
    fn counterparty_id(&self, session: &SessionRecord) -> String {
        serde_json::from_str::<serde_json::Value>(&session.pinned_keys)
            .ok()
            .and_then(|roles| {
                roles
                    .get(&session.counterparty.id)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| session.counterparty.id.clone())
    }

    fn name(&self) -> &'static str {
        log::PROTOCOL
    }

    fn label(&self) -> &'static str {
        "OANP"
    }

    fn genesis(&self) -> Head {
        Head {
            seq: 0,
            hash: format!("sha256:{}", "0".repeat(64)),
        }
    }

    fn proposal_kind(&self) -> ProposalKind {
        ProposalKind::OanpOffer
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
            counter_form: Some(CounterForm::OanpTerms),
            signed_as: "an ApprovalReceipt signed with your key (its did:key), referencing the OANP session".to_owned(),
            decision_goes_to: crate::views::DecisionRecipient::OwnAgent,
            deadline_is_ours: true,
            expiry_note: None,
        }
    }

    fn takes_decisions(&self, status: &str) -> bool {
        // The gate reports an OANP session's state as its chain reads it:
        // `active` until `session.agree` or `session.close`.
        status == "active"
    }

    fn expiry_refuses(&self, _action: DecideAction) -> bool {
        // The host takes no decision on a request past its time, and a
        // receipt may not outlive the request it answers.
        true
    }

    fn lifecycle(&self, status: &str) -> Lifecycle {
        // The gate names the chain's state: `active` until `session.agree`
        // (`agreed`) or `session.close` (`closed`).
        match status {
            "active" => Lifecycle::Open,
            "agreed" => Lifecycle::Agreed,
            _ => Lifecycle::Closed,
        }
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
        _trust: &Trust<'_>,
    ) -> ProposalDetail {
        let stored = events.iter().find(|e| e.seq == located.proposal.seq);
        let previous_event = located
            .previous
            .as_ref()
            .and_then(|p| events.iter().find(|e| e.seq == p.seq));
        let current = stored.and_then(offer::offer_view);
        let previous = previous_event.and_then(offer::offer_view);
        let (added, removed) = match (&previous, &current) {
            (Some(old), Some(new)) => (
                offer::added(&old.terms, &new.terms),
                offer::added(&new.terms, &old.terms),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        let max_rounds = offer::max_rounds(events);
        let rounds_left = match (max_rounds, current.as_ref().and_then(|o| o.round)) {
            (Some(max), Some(round)) => Some(max.saturating_sub(round)),
            _ => None,
        };
        ProposalDetail::OanpOffer(Box::new(OanpOfferView {
            // `locate` found an offer here; an empty one stands in only if
            // the stored copy changed under it.
            offer: current.unwrap_or_else(|| crate::views::OanpOffer {
                message_type: String::new(),
                sender: String::new(),
                round: None,
                terms: crate::views::OanpTerms {
                    price: crate::views::OanpMoney {
                        amount_minor: "0".to_owned(),
                        currency: String::new(),
                        amount: None,
                    },
                    inclusions: Vec::new(),
                },
            }),
            previous,
            previous_ref: offer::previous_ref(located),
            price_change: located.change.clone(),
            inclusions_added: added,
            inclusions_removed: removed,
            envelope: stored
                .map(offer::envelope_ref)
                .unwrap_or(crate::views::OanpEnvelopeRef {
                    message_id: String::new(),
                    hash: pending.event_hash.clone(),
                    seq: pending.seq,
                }),
            verdict: offer::latest_verdict(events),
            max_rounds,
            rounds_left,
            request: pending.request_id.as_ref().map(|id| GateRequest {
                request_id: id.clone(),
                action: pending
                    .action
                    .clone()
                    .unwrap_or_else(|| "accept".to_owned()),
                amount: pending.amount.as_deref().and_then(offer::parse_amount),
                threshold: pending.threshold.as_deref().and_then(offer::parse_amount),
            }),
            notice: NOTICE.to_owned(),
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
            "offer.counter" => "OANP counter-offer from",
            _ => "OANP offer from",
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
