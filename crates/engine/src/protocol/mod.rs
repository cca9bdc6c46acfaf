//! The protocol seam. A row's protocol is parsed once into [`Protocol`];
//! each `protocol/<name>/` module implements [`Seam`], the same jobs for
//! every protocol, and [`Protocol::seam`] is the only `match` on the
//! protocol in the engine. Everything else (poller, store, inbox, history,
//! export, notifications, `decide`) calls the seam and otherwise speaks the
//! neutral shapes below. A protocol crate (`anp`, `concordia`) is used only
//! inside its own module here.
//!
//! The pure half takes bytes and stored rows and returns verdicts and views
//! (no IO, no clock: time is passed in); the IO half fetches a record since
//! a pin and sends a signed decision, and returns what it got for the pure
//! half and the caller to apply.

use std::future::Future;
use std::pin::Pin as PinBox;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::edge::transport::{HostIo, SendError, Sent};
use crate::error::{DecideError, EngineError};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{
    ApprovalGiven, Capabilities, Change, CounterCheck, DecideAction, DecideRequest, ProposalDetail,
    ProposalKind, Side,
};

pub(crate) mod anex;
pub(crate) mod anp;
pub(crate) mod concordia;
pub(crate) mod gate_decision;
pub(crate) mod gate_io;
pub(crate) mod gate_request;
pub(crate) mod oanp;
pub(crate) mod plain;

pub(crate) use gate_request::HostRequest;

/// Reasons to decline a commercial offer (ANP, Concordia, OANP): about price,
/// terms, scope and the seller, never about data.
pub(crate) const PURCHASE_DECLINE_REASONS: [&str; 4] = [
    "Price is above our budget",
    "Terms are not acceptable",
    "Scope does not match what we asked for",
    "Vendor is not approved for this purchase",
];

/// A future of the IO half (boxed: the seam is a trait object).
pub(crate) type IoFuture<'a, T> = PinBox<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a session's JSON export carries beside its record.
pub(crate) struct ExportParts {
    /// Who this console signs as on the session's host (or null).
    pub approver: Value,
    /// Each decision sent, with its exact body (`request_body`, text).
    pub decisions: Vec<Value>,
    /// The session's verification as the console reads it.
    pub verification: Value,
    /// The host's record of every approval in the session (ANP), as read.
    pub host_approvals: Value,
}

/// New minus old, exact, with its percentage half-even to two places; none
/// across currencies (never converted) and no percentage from zero.
/// `effect_of` is the protocol's own direction rule on the difference.
pub(crate) fn amount_change(
    old: &Amount,
    new: &Amount,
    effect_of: impl Fn(rust_decimal::Decimal) -> Option<crate::views::Effect>,
) -> Option<Change> {
    use rust_decimal::{Decimal, RoundingStrategy};
    if old.currency != new.currency {
        return None;
    }
    let (o, n) = (
        old.value.parse::<Decimal>().ok()?,
        new.value.parse::<Decimal>().ok()?,
    );
    let delta = n - o;
    let percent = (!o.is_zero()).then(|| {
        (delta / o * Decimal::ONE_HUNDRED)
            .round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven)
    });
    Some(Change {
        absolute: delta.normalize().to_string(),
        percent: percent.map(|p| format!("{p:.2}")),
        effect: effect_of(delta),
    })
}

/// The first entry this console stored that a whole record fetched again
/// no longer holds as it was, rewritten or missing, as the dispute at its
/// seq. `now` answers the hash of the fetched record's entry at a 0-based
/// position (none past its end); `entry` names an entry in the protocol's
/// words ("envelope", "message").
pub(crate) fn rewritten_at(
    stored: &[StoredEvent],
    entry: &str,
    now: impl Fn(usize) -> Option<String>,
) -> Option<Dispute> {
    stored.iter().find_map(|old| {
        let held = now((old.seq as usize).saturating_sub(1));
        if held.as_deref() == Some(old.event_hash.as_str()) {
            return None;
        }
        let detail = match held {
            Some(_) => format!(
                "{entry} {} differs from the copy this console stored earlier: the host's record was rewritten",
                old.seq
            ),
            None => format!(
                "{entry} {} is missing from the host's record, but this console stored it earlier",
                old.seq
            ),
        };
        Some(Dispute {
            seq: old.seq,
            checks: vec!["pin".to_owned()],
            detail,
        })
    })
}

/// Where a session stands, whatever its protocol calls the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// Still negotiating: decisions can be made.
    Open,
    /// Agreed (accepted).
    Agreed,
    /// Over without an agreement (closed, rejected, expired, withdrawn).
    Closed,
}

/// The protocols this engine reads, parsed once from a row's `protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Protocol {
    /// ANP/0.1: vendor agents at the host's ANP endpoints.
    Anp,
    /// Concordia: the org's own agents mirror their transcripts to the gate.
    Concordia,
    /// OANP: the org's own agents mirror their session logs to the gate.
    Oanp,
    /// ANEX over A2A: counterparty agents ask for data about the org.
    Anex,
    /// Plain terms: the org's own agents ask about terms in no protocol.
    Plain,
}

impl Protocol {
    /// Every protocol, in the order they are offered.
    pub(crate) const ALL: [Protocol; 5] = [
        Protocol::Anp,
        Protocol::Concordia,
        Protocol::Oanp,
        Protocol::Anex,
        Protocol::Plain,
    ];

    /// Reads the name a host or a stored row gives.
    pub(crate) fn parse(name: &str) -> Result<Protocol, EngineError> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.seam().name() == name)
            .ok_or_else(|| {
                EngineError::Protocol(format!(
                    "{name:?} is not a protocol this console reads (it reads {})",
                    Protocol::ALL.map(|p| p.seam().name()).join(", ")
                ))
            })
    }

    /// The implementation of this protocol's jobs: the one place the
    /// engine matches on the protocol.
    pub(crate) fn seam(self) -> &'static dyn Seam {
        match self {
            Protocol::Anp => &self::anp::Anp,
            Protocol::Concordia => &self::concordia::Concordia,
            Protocol::Oanp => &self::oanp::session::OanpSession,
            Protocol::Anex => &self::anex::Anex,
            Protocol::Plain => &self::plain::Plain,
        }
    }
}

/// A pinned head: how many record entries this console verified, and the
/// hash of the last (the protocol's genesis hash for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    /// Entries up to and including the head (the last entry's seq).
    pub seq: u64,
    /// The last entry's hash.
    pub hash: String,
}

/// What a session's record is checked against: what this console pinned
/// at enrollment and at first sight, and what the host vouches for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Trust<'a> {
    /// The URL this console enrolled with the host at (whose own agents
    /// are the only ones it signs ANEX terms for).
    pub host_url: &'a str,
    /// The host's platform key, pinned at enrollment (base64url).
    pub platform_key: &'a str,
    /// The approver keys the host publishes (JSON, as the host record keeps them).
    pub approver_keys: &'a str,
    /// The counterparty's key fingerprint, as the host's summary names it.
    pub counterparty_fingerprint: &'a str,
    /// The parties' keys this console pinned the first time it saw them
    /// (JSON object, party → key; `{}` for none yet).
    pub pinned_keys: &'a str,
}

impl<'a> Trust<'a> {
    /// The trust a stored session has on its host.
    pub(crate) fn of(host: &'a HostRecord, session: &'a SessionRecord) -> Trust<'a> {
        Trust {
            host_url: &host.url,
            platform_key: &host.platform_key,
            approver_keys: &host.approver_keys,
            counterparty_fingerprint: &session.counterparty.fingerprint,
            pinned_keys: &session.pinned_keys,
        }
    }
}

/// Why a session is disputed: the exact seq, the checks, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dispute {
    /// The first entry that failed.
    pub seq: u64,
    /// The checks it failed (`signature`, `prev_hash`, `pin`, …).
    pub checks: Vec<String>,
    /// In words.
    pub detail: String,
}

/// The verdict on what was fetched since a pin (or on a whole record).
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    /// Entries that verified, ready to store (empty when disputed).
    pub events: Vec<StoredEvent>,
    /// The new pin (the old one when disputed or nothing is new).
    pub head: Head,
    /// Seqs whose authorship is unproven (declared but not signed).
    pub unproven: Vec<u64>,
    /// Set when the record fails.
    pub dispute: Option<Dispute>,
    /// True when the new entries do not link to the pin: the whole record
    /// must be fetched and compared to find the exact seq.
    pub unlinked: bool,
    /// Keys seen for the first time, to pin (JSON object), when any.
    pub pinned_keys: Option<String>,
    /// The latest proposal's amount among the new entries (for history).
    pub last_amount: Option<Amount>,
}

impl Checked {
    /// Nothing stored, the pin kept, the session disputed for `dispute`.
    pub(crate) fn disputed(pin: &Head, dispute: Dispute) -> Checked {
        Checked {
            events: Vec::new(),
            head: pin.clone(),
            unproven: Vec::new(),
            dispute: Some(dispute),
            unlinked: false,
            pinned_keys: None,
            last_amount: None,
        }
    }
}

pub(crate) use crate::views::Amount;

/// A pending decision as the host lists it, for every protocol (the
/// approver API's pending record; stored as JSON in `pending.body` and
/// `decisions.proposal`, with the same member names as the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PendingProposal {
    /// Position of the entry awaiting the decision (0 for a draft not yet sent).
    pub seq: u64,
    /// Hash of that entry (or the host's reference to a draft): what a
    /// decision answers.
    pub event_hash: String,
    /// The entry's own kind (`offer`, `counter_offer`, `negotiate.counter`).
    pub kind: String,
    /// Whose it is, in the protocol's words (`vendor_agent`, `buyer`, a party id).
    pub actor: String,
    /// When it stops being decidable.
    pub expires_at: String,
    /// Approvals already given.
    #[serde(default)]
    pub approvals: Vec<ApprovalGiven>,
    /// Approvals the org's policy needs.
    pub approvals_required: u32,
    /// A proposal the org's own agent drafted (it carries its payload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<Value>,
    /// Why the host holds it (screening), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_reason: Option<String>,
    /// A gate agent's request id (what a decision answers there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// What the agent asks to do (`accept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The amount the request is for (`"150000.00 USD"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// The policy threshold the amount crossed (`"100000.00 USD"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<String>,
    /// ANEX: who asks for which data under which promises, item by item
    /// with the policy's verdict (the host's `anex` member, kept as JSON;
    /// read by `protocol/anex/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anex: Option<Value>,
    /// The chain of approvals the host routed it to, as it stands for this
    /// console's approver (the host's `route`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<crate::views::ApprovalChain>,
}

/// A proposal read from the stored record.
#[derive(Debug, Clone)]
pub(crate) struct Proposal {
    /// Its seq.
    pub seq: u64,
    /// Whose, in the protocol's words.
    pub actor: String,
    /// The proposal as the record carries it (payload or message).
    pub value: Value,
    /// Its exact amount, when it has one.
    pub amount: Option<Amount>,
}

/// A pending proposal and the one it answers.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    /// The pending one.
    pub proposal: Proposal,
    /// The one it is compared with, when there is one: for a
    /// counterparty's proposal their own previous one (else the one it
    /// answers); for our side's draft the counterparty's it answers.
    pub previous: Option<Proposal>,
    /// From the previous amount to this one, when both have one.
    pub change: Option<Change>,
    /// Our side's latest earlier proposal and the distance to it, when
    /// `previous` is not already that one.
    pub gap: Option<crate::views::Gap>,
}

/// What the record shows became of a proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogAnswer {
    /// Accepted, with the approvers the record names.
    Accepted {
        /// The accepting entry.
        event: StoredRef,
        /// Who approved.
        approved_by: Vec<String>,
    },
    /// The other side declined or countered it.
    Answered {
        /// The answering entry.
        event: StoredRef,
        /// `decline` or `counter`.
        action: &'static str,
    },
    /// The same side made a newer proposal.
    Replaced {
        /// The newer one.
        event: StoredRef,
    },
}

/// An entry of the record, by position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredRef {
    /// Its seq.
    pub seq: u64,
    /// Its kind.
    pub kind: String,
    /// Its hash.
    pub event_hash: String,
    /// Its time.
    pub at: String,
}

impl StoredRef {
    /// The reference to a stored entry.
    pub(crate) fn of(e: &StoredEvent) -> StoredRef {
        StoredRef {
            seq: e.seq,
            kind: e.kind.clone(),
            event_hash: e.event_hash.clone(),
            at: e.at.clone(),
        }
    }
}

/// One entry of a session's timeline, as the protocol reads it.
#[derive(Debug, Clone)]
pub(crate) struct TimelineEntry {
    /// Plain text, numbers as people write them.
    pub summary: String,
    /// The entry's content (payload or message body).
    pub payload: Value,
    /// Who signed it, when the entry names a signer.
    pub signer: Option<String>,
    /// Which side it is from.
    pub side: Option<Side>,
    /// When the entry is a proposal with an amount: the amount.
    pub amount: Option<Amount>,
    /// Whether it proposes terms, accepts them, or neither: what the
    /// session's agreed terms are read from.
    pub role: EntryRole,
}

/// What a timeline entry does to the terms on the table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EntryRole {
    /// Proposes these terms (an offer, a counter, an ask).
    Proposal(Value),
    /// Accepts the other side's latest proposal; `Some` when the entry
    /// restates the terms it accepts (those are then the agreed terms).
    Acceptance(Option<Value>),
    /// Anything else (a verdict, a rejection, a note).
    Other,
}

/// When a counter is checked: the moment its deadlines must be later than,
/// and when the proposal it answers stops being decidable, as the host's
/// pending record says (what a counter's own expiry can follow), when known.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CounterAt<'a> {
    /// Now, from the engine's clock.
    pub now: OffsetDateTime,
    /// The pending record's `expires_at`, when the proposal is still pending.
    pub request_expires_at: Option<&'a str>,
}

/// A counter checked on 2026-12-04 at noon UTC, the proposal's expiry not known (unit tests).
#[cfg(test)]
pub(crate) fn tests_at() -> CounterAt<'static> {
    CounterAt {
        now: time::macros::datetime!(2026-12-04 12:00 UTC),
        request_expires_at: None,
    }
}

/// Everything a protocol needs to sign a decision.
pub(crate) struct DecisionInput<'a> {
    /// What the person decided.
    pub request: &'a DecideRequest,
    /// The pending record it answers.
    pub pending: &'a PendingProposal,
    /// The session's stored record.
    pub events: &'a [StoredEvent],
    /// The approver's key.
    pub key: &'a ed25519_dalek::SigningKey,
    /// The email this console approves as on that host.
    pub approver_email: &'a str,
    /// The URL this console enrolled with that host at.
    pub host_url: &'a str,
    /// The decision's idempotency key.
    pub decision_id: &'a str,
    /// The moment of the decision.
    pub now: OffsetDateTime,
}

/// What the host answered to a decision, read by the protocol.
#[derive(Debug, Clone)]
pub(crate) struct DecisionAnswer {
    /// As sent.
    pub decision_id: String,
    /// `appended`, `awaiting_approvals` or `held`.
    pub outcome: String,
    /// The host's words.
    pub detail: String,
    /// The entry the decision appended, as the host's answer names it.
    pub appended: Option<StoredRef>,
}

/// What was fetched since a pin: the answer byte for byte (evidence, should
/// it contradict the stored copy) and what else the fetch learned.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    /// The request answered (`GET …/log?after=3`).
    pub request: String,
    /// Its body, byte for byte.
    pub bytes: Vec<u8>,
    /// Requests it took (for the poller's counts).
    pub requests: u64,
    /// The host's approver keys, when the fetch refreshed them (JSON).
    pub approver_keys: Option<String>,
    /// The host's record of the session's approvals, when the fetch read it
    /// (JSON; ANP sessions whose log carries an accept).
    pub approval_records: Option<String>,
}

/// Each protocol's jobs. Implemented once per `protocol/<name>/` module.
pub(crate) trait Seam: Send + Sync {
    /// The protocol's name as hosts and stored rows write it.
    fn name(&self) -> &'static str;

    /// The protocol's name for people (`ANP`, `Concordia`).
    fn label(&self) -> &'static str;

    /// The head of a record with nothing verified yet.
    fn genesis(&self) -> Head;

    /// The view shape of this protocol's proposals.
    fn proposal_kind(&self) -> ProposalKind;

    /// Which side an actor (in the protocol's words) of `session` is on.
    fn side(&self, session: &SessionRecord, actor: &str) -> Side;

    /// What a decision panel may offer on `pending`.
    fn capabilities(&self, pending: &PendingProposal) -> Capabilities;

    /// True while a session in the host's `status` can still take a
    /// decision (ANP/0.1: `open`; each protocol names its own word).
    fn takes_decisions(&self, status: &str) -> bool {
        status == "open"
    }

    /// True when the proposal's expiry refuses `action` too, not only an
    /// approval (ANP/0.1: only an approval; a late decline still tells the
    /// vendor).
    fn expiry_refuses(&self, action: DecideAction) -> bool {
        action == DecideAction::Approve
    }

    // ---- the pure half ----

    /// Verifies the entries fetched after `pin` (the answer's bytes).
    fn verify_since(
        &self,
        session_id: &str,
        pin: &Head,
        trust: &Trust<'_>,
        fetched: &[u8],
    ) -> Result<Checked, EngineError>;

    /// Verifies a whole record and compares it with the stored copy, so a
    /// rewrite that recomputed every hash is still caught at its first seq.
    fn verify_whole(
        &self,
        session_id: &str,
        pin: &Head,
        trust: &Trust<'_>,
        fetched: &[u8],
        stored: &[StoredEvent],
    ) -> Result<Checked, EngineError>;

    /// The pending proposal and the one it answers, from the stored record;
    /// `None` when it cannot be read as a valid proposal.
    fn locate(&self, events: &[StoredEvent], pending: &PendingProposal) -> Option<Located>;

    /// A proposal that has left the pending set, as a pending record, from
    /// the stored record.
    fn former(&self, events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal>;

    /// The protocol's view of a located proposal: the proposal, the one it
    /// answers, their structured diff, and what else this kind shows.
    fn detail(
        &self,
        events: &[StoredEvent],
        pending: &PendingProposal,
        located: &Located,
        trust: &Trust<'_>,
    ) -> ProposalDetail;

    /// Checks a counter in the protocol's own form against the proposal it
    /// answers (the entry `event_hash`) by the protocol crate's counter
    /// rules, every problem with its field, as of `at`; with the diff
    /// whenever it reads as the protocol's counter (a counter sent earlier
    /// is still shown once its dates have passed).
    fn validate_counter(
        &self,
        events: &[StoredEvent],
        event_hash: &str,
        counter: &Value,
        at: &CounterAt<'_>,
    ) -> Result<CounterCheck, EngineError>;

    /// Builds the signed decision: the exact body to send.
    fn build_decision(&self, input: &DecisionInput<'_>) -> Result<Vec<u8>, DecideError>;

    /// The terms a counter decision's body (as sent) offers instead, in the
    /// counter form [`Seam::validate_counter`] reads: the approver API's
    /// `counter_terms` (gate sessions, ANEX), unless the protocol's decision
    /// names them otherwise.
    fn counter_in_decision(&self, body: &Value) -> Option<Value> {
        body.get("counter_terms").filter(|t| !t.is_null()).cloned()
    }

    /// The reason a decision this console sent carried (the approver API's
    /// `reason`), as the counterparty reads it.
    fn reason_in_decision(&self, body: &Value) -> Option<String> {
        body.get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
    }

    /// The terms an answer on the log (a counter nobody decided here)
    /// offered instead, in the same counter form; `None` where the
    /// protocol's counter on the record is not in that form.
    fn counter_on_log(&self, _event: &StoredEvent) -> Option<Value> {
        None
    }

    /// Reads the host's answer to a decision, naming the entry it appended
    /// (after the proposal at `after`).
    fn read_answer(
        &self,
        body: &[u8],
        action: &str,
        after: u64,
    ) -> Result<DecisionAnswer, DecideError>;

    /// What the stored record shows became of the proposal `event_hash` at
    /// `seq` by `actor`.
    fn answer_on_log(
        &self,
        events: &[StoredEvent],
        seq: u64,
        event_hash: &str,
        actor: &str,
    ) -> Option<LogAnswer>;

    /// The title of the notice that the org's agent broke a decision on a
    /// proposal from (or with) `counterparty`.
    fn breach_title(&self, counterparty: &str) -> String {
        format!("Your agent accepted an offer from {counterparty} without your approval")
    }

    /// Why the agent's own report on the record breaks the decision on the
    /// proposal at `seq` whatever it was (plain terms executed on other
    /// terms than those asked about); `None` where the protocol has no such
    /// report.
    fn breach_on_log(&self, _events: &[StoredEvent], _seq: u64) -> Option<String> {
        None
    }

    /// The fingerprint of the key that signed one of the counterparty's
    /// entries, when each entry names its own (ANP/0.1 names the signer of
    /// every event, so a key changed mid-session shows); `None` where the
    /// key pinned for the session signs them all.
    fn entry_key(&self, _signer: Option<&str>) -> Option<String> {
        None
    }

    /// The counterparty's own id in this protocol, as the desk matches it
    /// (meaningful at the host that issued it, or global for a DID): by
    /// default the session's counterparty id.
    fn counterparty_id(&self, session: &SessionRecord) -> String {
        session.counterparty.id.clone()
    }

    /// True when the host keeps a word of its own on each proposal beside
    /// the record (a gate session's requests: decided at another console,
    /// expired), so a proposal leaving the pending set while the record
    /// stands still is worth one more fetch of the record after the pin.
    fn host_keeps_requests(&self) -> bool {
        false
    }

    /// What the host says about each request of the session, from a fetched
    /// record's bytes; `None` for a protocol whose record carries none.
    fn host_requests(
        &self,
        _session_id: &str,
        _fetched: &[u8],
    ) -> Result<Option<Vec<HostRequest>>, EngineError> {
        Ok(None)
    }

    /// How a notification of `pending` begins, naming the protocol ("ANP
    /// counter-offer from"); the counterparty's name follows.
    fn notice_lead(&self, pending: &PendingProposal) -> &'static str;

    /// Where a session whose host status is `status` stands in its life:
    /// still negotiating, agreed, or over. Each protocol names its states
    /// its own way (ANP `open` / `accepted`; Concordia `active` / `agreed`).
    fn lifecycle(&self, status: &str) -> Lifecycle {
        match status {
            "open" => Lifecycle::Open,
            "accepted" => Lifecycle::Agreed,
            _ => Lifecycle::Closed,
        }
    }

    /// One stored entry of `session` as a timeline row.
    fn timeline(
        &self,
        session: &SessionRecord,
        event: &StoredEvent,
        human: &humanize::Humanizer,
    ) -> Option<TimelineEntry>;

    /// The session's stored record as a document anyone can verify with the
    /// protocol's own verifier (`countersign-verify`).
    fn export_record(
        &self,
        host: Option<&HostRecord>,
        session: &SessionRecord,
        events: &[StoredEvent],
    ) -> Value;

    /// The session's JSON export around its verifiable `record`: the
    /// decisions this console sent (each body as sent), the approver and
    /// the verification. By default the record sits under `log` beside them.
    fn export_document(&self, record: Value, export: ExportParts) -> Value {
        serde_json::json!({
            "log": record,
            "approver": export.approver,
            "decisions": export.decisions,
            "verification": export.verification,
            "host_approvals": export.host_approvals,
        })
    }

    // ---- the IO half ----

    /// Fetches the record after `after` (all of it for `None`).
    fn fetch_since<'a>(
        &'a self,
        io: &'a HostIo,
        host: &'a HostRecord,
        session_id: &'a str,
        after: Option<u64>,
    ) -> IoFuture<'a, Result<Fetched, EngineError>>;

    /// Sends a decision's exact body; `on_signed` sees each attempt's signed
    /// headers before it leaves, so they are stored first. Every protocol
    /// today POSTs it to the approver API's decisions route.
    fn send_decision<'a>(
        &'a self,
        io: &'a HostIo,
        session_id: &'a str,
        body: &'a [u8],
        on_signed: &'a (dyn Fn(&str) + Send + Sync),
    ) -> IoFuture<'a, Result<Sent, SendError>> {
        Box::pin(io.post_decision(session_id, body, on_signed))
    }
}

/// Settings the protocols declare, shown beside the engine's on the same
/// screen (see `crate::settings`). ANP/0.1 needs none. OANP adds its "test-
/// mode receipts count" here, as one `SettingDef` (a toggle, default off)
/// that its receipt check then reads: no screen or command of its own.
pub(crate) fn settings() -> Vec<crate::settings::SettingDef> {
    RECEIPTS.iter().flat_map(|r| r.settings()).collect()
}

/// A receipt as its protocol read and verified it.
#[derive(Debug, Clone)]
pub(crate) struct ReadReceipt {
    /// Proof under the settings in effect.
    pub proof: bool,
    /// What the signature says.
    pub status: String,
    /// One sentence.
    pub headline: String,
    /// The signed session id, when there is one.
    pub session_id: Option<String>,
    /// Signed by a pinned test-mode key.
    pub test_mode: bool,
    /// The protocol's view.
    pub detail: crate::views::ReceiptDetail,
}

/// The jobs of a protocol whose sessions end in a receipt a person files
/// (OANP's arbiter receipt): read and verify its bytes, and declare the
/// settings that verification reads. Pure: bytes and settings in, a view out.
pub(crate) trait ReceiptSeam: Send + Sync {
    /// The protocol's wire name (`oanp`).
    fn name(&self) -> &'static str;

    /// The settings its verification reads.
    fn settings(&self) -> Vec<crate::settings::SettingDef>;

    /// Whether the bytes are a receipt of this protocol at all, before one
    /// is filed: refuses bytes that are not JSON, and JSON that is not one
    /// of its receipts, with a sentence naming what is wrong (which member
    /// is missing). What is filed is then verified, never refused, by `read`.
    fn admit(&self, receipt: &[u8]) -> Result<(), EngineError>;

    /// A sentence while a setting in effect loosens what counts as proof
    /// (OANP's test-mode receipts), for every receipt view to show.
    fn relaxed(&self, _settings: &crate::settings::Effective) -> Option<String> {
        None
    }

    /// Reads and verifies a receipt (and its log); refuses bytes that are
    /// not one, with a sentence naming the file that is wrong.
    fn read(
        &self,
        receipt: &[u8],
        log: Option<&[u8]>,
        settings: &crate::settings::Effective,
    ) -> Result<ReadReceipt, EngineError>;

    /// The id this console's store gives the session a receipt signs
    /// (`signed_session_id` as the receipt names it), when the protocol's
    /// sessions also reach the console (OANP through the gate): the session
    /// whose mirrored log the receipt is then checked against.
    fn held_session(&self, _signed_session_id: &str) -> Option<String> {
        None
    }

    /// A stored session's entries as the session log `read` takes.
    fn held_log(&self, _events: &[crate::store::StoredEvent]) -> Option<Vec<u8>> {
        None
    }

    /// The file names an export writes the receipt and its log under.
    fn export_names(&self, receipt_id: &str) -> (String, String) {
        (
            format!("{receipt_id}.receipt.json"),
            format!("{receipt_id}.log.json"),
        )
    }
}

/// Every protocol that files receipts.
const RECEIPTS: [&dyn ReceiptSeam; 1] = [&self::oanp::Oanp];

/// Every protocol that files receipts.
pub(crate) fn receipt_seams() -> impl Iterator<Item = &'static dyn ReceiptSeam> {
    RECEIPTS.into_iter()
}

/// The receipt jobs of the protocol named `name`.
pub(crate) fn receipt_seam(name: &str) -> Result<&'static dyn ReceiptSeam, EngineError> {
    RECEIPTS
        .into_iter()
        .find(|r| r.name() == name)
        .ok_or_else(|| {
            EngineError::InvalidInput(format!(
                "{name:?} is not a protocol whose receipts this console reads (it reads {})",
                RECEIPTS.map(|r| r.name()).join(", ")
            ))
        })
}

/// The proposal a proposal at `seq` by `actor` answers: the latest earlier
/// proposal (an entry `is_proposal` says is one) of the other side, or else
/// the same side's previous one.
pub(crate) fn answered_entry<'a>(
    events: &'a [StoredEvent],
    seq: u64,
    actor: &str,
    is_proposal: fn(&str) -> bool,
) -> Option<&'a StoredEvent> {
    let earlier = || {
        events
            .iter()
            .rev()
            .filter(move |e| e.seq < seq && is_proposal(&e.kind))
    };
    earlier()
        .find(|e| e.actor != actor)
        .or_else(|| earlier().find(|e| e.actor == actor))
}

/// The proposals one at `seq` by `actor` is read against.
pub(crate) struct Compared<'a> {
    /// The same side's latest earlier proposal: what they moved since.
    pub own_previous: Option<&'a StoredEvent>,
    /// The other side's latest earlier proposal: what it answers.
    pub other_latest: Option<&'a StoredEvent>,
}

impl<'a> Compared<'a> {
    /// What a counterparty's proposal is compared with (their own previous
    /// one, else the one it answers) and, separately, our side's latest
    /// one when that is not already it.
    pub(crate) fn for_counterparty(&self) -> (Option<&'a StoredEvent>, Option<&'a StoredEvent>) {
        match self.own_previous {
            Some(own) => (Some(own), self.other_latest),
            None => (self.other_latest, None),
        }
    }
}

/// Both earlier proposals a proposal at `seq` by `actor` may be read
/// against (see [`Compared`]).
pub(crate) fn compared_entries<'a>(
    events: &'a [StoredEvent],
    seq: u64,
    actor: &str,
    is_proposal: fn(&str) -> bool,
) -> Compared<'a> {
    let earlier = || {
        events
            .iter()
            .rev()
            .filter(move |e| e.seq < seq && is_proposal(&e.kind))
    };
    Compared {
        own_previous: earlier().find(|e| e.actor == actor),
        other_latest: earlier().find(|e| e.actor != actor),
    }
}

/// The gap from our side's proposal `ours` to theirs (`amount`), when both
/// have an amount in one currency; a distance, so it has no direction.
pub(crate) fn gap_to(
    ours: &Proposal,
    amount: Option<&Amount>,
    change: impl Fn(&Amount, &Amount) -> Option<Change>,
) -> Option<crate::views::Gap> {
    let (mine, theirs) = (ours.amount.as_ref()?, amount?);
    let mut moved = change(mine, theirs)?;
    moved.effect = None;
    Some(crate::views::Gap {
        seq: ours.seq,
        ours: mine.clone(),
        change: moved,
    })
}

/// One CSV field: quoted, and a spreadsheet formula in counterparty text
/// neutralized (a leading `=`, `+`, `-` or `@` that is not a number).
pub(crate) fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@'])
        && text.parse::<rust_decimal::Decimal>().is_err()
    {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    format!("\"{}\"", text.replace('"', "\"\""))
}
