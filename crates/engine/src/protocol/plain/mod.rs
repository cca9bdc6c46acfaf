//! Plain terms behind the seam: an organization's own agent that speaks no
//! negotiation protocol asks about terms it would commit to (at the gate or
//! over MCP); the host reads them strictly and writes them, signed with its
//! platform key, into the thread's chained log. This console verifies the
//! thread against the platform key it pinned at enrollment, shows the terms
//! beside the terms they revise, and signs the person's decision as an
//! ApprovalReceipt over the entry's hash. Every rule is `crates/plain`'s
//! and `crates/approval-receipt`'s.
//!
//! | file | job |
//! |---|---|
//! | `log` | the approver API's gate log document of a thread |
//! | `verify` | entries since the pin (frame, link, the host's signature, terms), a whole thread against the stored copy |
//! | `terms` | the awaited terms and the ones they revise, totals, the diff, counter terms, what the agent reported |
//! | `decision` | the approve / deny ApprovalReceipt and the decision request |
//! | `record` | timeline rows and the thread's export |

mod decision;
mod log;
mod record;
mod terms;
mod verify;

use serde_json::Value;

use crate::edge::transport::HostIo;
use crate::error::{DecideError, EngineError};
use crate::protocol::{
    Checked, DecisionAnswer, DecisionInput, Fetched, Head, IoFuture, Lifecycle, Located, LogAnswer,
    PendingProposal, Seam, TimelineEntry, Trust,
};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{
    Capabilities, CounterCheck, CounterForm, DecideAction, GateRequest, PlainAgent, PlainEntryRef,
    PlainTermsView, ProposalDetail, ProposalKind, Side,
};

/// What a person is told about where the terms come from.
const NOTICE: &str = "Your organization's agent stated these terms; it negotiates them in no protocol this console can check. The host wrote them down and signed them, so what you approve is exactly these terms. The agent's reasons are its own words.";

/// Plain terms' jobs.
pub(crate) struct Plain;

impl Seam for Plain {
    fn name(&self) -> &'static str {
        log::PROTOCOL
    }

    fn label(&self) -> &'static str {
        "Plain terms"
    }

    fn genesis(&self) -> Head {
        Head {
            seq: 0,
            hash: plain::GENESIS_HASH.to_owned(),
        }
    }

    fn proposal_kind(&self) -> ProposalKind {
        ProposalKind::PlainTerms
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
            after_expiry: Vec::new(),
            decline_needs_reason: true,
            decline_label: "Decline terms".to_owned(),
            decline_reasons: crate::protocol::PURCHASE_DECLINE_REASONS
                .iter()
                .map(|r| (*r).to_owned())
                .collect(),
            counter_form: Some(CounterForm::PlainTerms),
            signed_as: "an ApprovalReceipt signed with your key (its did:key), over the host's signed entry of these terms".to_owned(),
            decision_goes_to: crate::views::DecisionRecipient::OwnAgent,
            deadline_is_ours: true,
            expiry_note: None,
        }
    }

    fn takes_decisions(&self, status: &str) -> bool {
        // Open until the agent reports what it did.
        status == "open"
    }

    fn expiry_refuses(&self, _action: DecideAction) -> bool {
        true
    }

    fn lifecycle(&self, status: &str) -> Lifecycle {
        match status {
            "open" => Lifecycle::Open,
            "executed" => Lifecycle::Agreed,
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
        terms::locate(events, pending)
    }

    fn former(&self, events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
        terms::former(events, event_hash)
    }

    fn detail(
        &self,
        events: &[StoredEvent],
        pending: &PendingProposal,
        located: &Located,
        _trust: &Trust<'_>,
    ) -> ProposalDetail {
        let stored = events.iter().find(|e| e.seq == located.proposal.seq);
        let current = stored.and_then(terms::terms_of);
        let previous = stored
            .and_then(|s| terms::revised(events, s))
            .and_then(terms::terms_of);
        let value = &located.proposal.value;
        let text = |p: &str| value.pointer(p).and_then(Value::as_str).map(str::to_owned);
        ProposalDetail::PlainTerms(Box::new(PlainTermsView {
            terms: match &current {
                Some(t) => terms::view(t),
                // `locate` read terms here; empty ones stand in only if the
                // stored copy changed under it.
                None => crate::views::PlainTerms {
                    counterparty: crate::views::PlainCounterparty {
                        name: String::new(),
                        id: String::new(),
                    },
                    currency: String::new(),
                    line_items: Vec::new(),
                    term: None,
                    conditions: Vec::new(),
                    total: "0.00".to_owned(),
                },
            },
            diff: match (&previous, &current) {
                (Some(old), Some(new)) => Some(terms::diff(old, new)),
                _ => None,
            },
            previous: previous.as_ref().map(terms::view),
            previous_ref: terms::previous_ref(located),
            rationale: text("/rationale"),
            agent: PlainAgent {
                id: text("/agent/id").unwrap_or_default(),
                name: text("/agent/name").unwrap_or_default(),
            },
            entry: PlainEntryRef {
                seq: located.proposal.seq,
                hash: pending.event_hash.clone(),
                at: text("/at").unwrap_or_default(),
                request_id: text("/request_id").unwrap_or_default(),
                revises: text("/revises"),
            },
            request: pending.request_id.as_ref().map(|id| GateRequest {
                request_id: id.clone(),
                action: pending
                    .action
                    .clone()
                    .unwrap_or_else(|| "accept".to_owned()),
                amount: pending.amount.as_deref().and_then(terms::parse_amount),
                threshold: pending.threshold.as_deref().and_then(terms::parse_amount),
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
        terms::check_counter(events, event_hash, counter, at).ok_or_else(|| EngineError::NotFound {
            what: "terms",
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
        _actor: &str,
    ) -> Option<LogAnswer> {
        terms::answer_on_log(events, seq)
    }

    fn breach_on_log(&self, events: &[StoredEvent], seq: u64) -> Option<String> {
        terms::executed_otherwise(events, seq)
    }

    fn breach_title(&self, counterparty: &str) -> String {
        format!("Your agent executed terms with {counterparty} that you did not approve")
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

    fn notice_lead(&self, _pending: &PendingProposal) -> &'static str {
        // "A purchase with Contoso Ltd waits for you".
        "A purchase with"
    }

    fn timeline(
        &self,
        _session: &SessionRecord,
        event: &StoredEvent,
        human: &humanize::Humanizer,
    ) -> Option<TimelineEntry> {
        record::timeline(event, human)
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
