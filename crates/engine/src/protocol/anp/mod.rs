//! ANP/0.1 behind the seam: every rule comes from the `anp` crate; this
//! module only reads the console's stored rows through it.
//!
//! | file | job |
//! |---|---|
//! | `verify` | a fetched log against the pin, the pinned platform key, the vendor key the summary vouches for, and approval attestations |
//! | `offer` | the pending offer and the one it answers, totals, diff, envelopes, counter checks, what the log shows became of an offer |
//! | `decision` | the RFC-002 approval, decline and counter as the decision request; the event the answer appended |
//! | `record` | timeline rows, the verifiable log document, the CSV of offers |
//! | `io` | the log after a pin, approver keys, sending a decision |

mod decision;
mod io;
mod offer;
mod record;
mod verify;

use serde_json::Value;

use crate::edge::transport::HostIo;
use crate::error::{DecideError, EngineError};
use crate::protocol::{
    Checked, DecisionAnswer, DecisionInput, Fetched, Head, IoFuture, Located, LogAnswer,
    PendingProposal, Seam, TimelineEntry, Trust,
};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{
    Capabilities, CounterCheck, CounterForm, DecideAction, ProposalDetail, ProposalKind, Side,
};

/// ANP/0.1's jobs.
pub(crate) struct Anp;

impl Seam for Anp {
    fn name(&self) -> &'static str {
        anp::PROTOCOL
    }

    fn label(&self) -> &'static str {
        "ANP"
    }

    fn genesis(&self) -> Head {
        let genesis = anp::ChainHead::genesis();
        Head {
            seq: genesis.seq,
            hash: genesis.event_hash,
        }
    }

    fn proposal_kind(&self) -> ProposalKind {
        ProposalKind::AnpOffer
    }

    fn side(&self, _session: &SessionRecord, actor: &str) -> Side {
        match actor {
            "buyer" => Side::Ours,
            _ => Side::Counterparty,
        }
    }

    fn entry_key(&self, signer: Option<&str>) -> Option<String> {
        signer.filter(|s| !s.is_empty()).map(str::to_owned)
    }

    fn capabilities(&self, pending: &PendingProposal) -> Capabilities {
        let draft = pending.draft.is_some();
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
            counter_form: Some(CounterForm::AnpOffer),
            signed_as: if draft {
                "the buyer agent's counter-offer, sent as it stands".to_owned()
            } else {
                "an RFC-002 approval signed with your key, in an accept event".to_owned()
            },
            decision_goes_to: crate::views::DecisionRecipient::Counterparty,
            deadline_is_ours: false,
            expiry_note: Some("This offer's expiry is the vendor's, so it cannot be extended here: a counter with a later expiry keeps the negotiation open.".to_owned()),
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
        _pending: &PendingProposal,
        located: &Located,
        _trust: &Trust<'_>,
    ) -> ProposalDetail {
        offer::detail(events, located)
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

    /// An ANP counter is the buyer `offer` the decision carries.
    fn counter_in_decision(&self, body: &Value) -> Option<Value> {
        body.get("offer").filter(|o| !o.is_null()).cloned()
    }

    /// An ANP counter-offer on the log carries the buyer offer as its payload.
    fn counter_on_log(&self, event: &StoredEvent) -> Option<Value> {
        if event.kind != "counter_offer" {
            return None;
        }
        let mut body: Value = serde_json::from_str(&event.body).ok()?;
        Some(body.get_mut("payload")?.take()).filter(|p| !p.is_null())
    }

    fn read_answer(
        &self,
        body: &[u8],
        action: &str,
        after: u64,
    ) -> Result<DecisionAnswer, DecideError> {
        decision::read_answer(body, action, after)
    }

    fn answer_on_log(
        &self,
        events: &[StoredEvent],
        seq: u64,
        event_hash: &str,
        actor: &str,
    ) -> Option<LogAnswer> {
        offer::answer_on_log(events, seq, event_hash, actor)
    }

    fn notice_lead(&self, pending: &PendingProposal) -> &'static str {
        match (pending.draft.is_some(), pending.kind.as_str()) {
            (true, _) => "ANP draft counter-offer to",
            (false, "counter_offer") => "ANP counter-offer from",
            _ => "ANP offer from",
        }
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
        Box::pin(io::fetch(io, host, session_id, after))
    }
}
