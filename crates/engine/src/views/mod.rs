//! The JSON shapes of `docs/console-contract.md`, exactly: the Tauri shell
//! returns these unchanged and the UI reads them, as the TypeScript types
//! generated from these ones (`ui/src/lib/backend/contract.ts`, see
//! [`contract`]). The shapes are protocol-neutral (a proposal, a
//! counterparty, exact money where there is money, the protocol of every
//! row); what only one kind of proposal has is in its own view shape,
//! tagged by [`ProposalKind`] ([`anp`], [`concordia`]). Money is always a
//! decimal string so nothing downstream does float arithmetic on prices.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

mod anex;
mod anp;
mod concordia;
pub mod contract;
mod desk;
mod oanp;
mod plain;
mod receipts;
mod stand_ins;

pub use self::anex::*;
pub use self::anp::*;
pub use self::concordia::*;
pub use self::desk::*;
pub use self::oanp::*;
pub use self::plain::*;
pub use self::receipts::*;
pub use self::stand_ins::*;

/// An exact decimal amount as a string (`"570000"`, `"1140.50"`).
pub type Money = String;

/// An exact amount of money with its currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Amount {
    /// Exact decimal text.
    #[ts(as = "MoneyText")]
    pub value: Money,
    /// The currency code (`USD`).
    pub currency: String,
}

/// An exact decimal amount as text (`"570000"`, `"1140.50"`): only ever
/// regrouped for display, never turned into a float.
#[derive(TS)]
#[ts(rename = "Money", type = "string")]
pub struct MoneyText;

/// How far the console trusts a session's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// Every entry verified against the pinned keys and chain.
    Verified,
    /// The chain holds, but some entry's authorship is not proven by a signature.
    Unproven,
    /// The record failed verification or no longer extends the pinned head.
    Disputed,
}

impl Verification {
    /// The wire name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Verification::Verified => "verified",
            Verification::Unproven => "unproven",
            Verification::Disputed => "disputed",
        }
    }

    /// Reads a stored name; anything unknown is treated as disputed (fail closed).
    pub fn parse(text: &str) -> Verification {
        match text {
            "verified" => Verification::Verified,
            "unproven" => Verification::Unproven,
            _ => Verification::Disputed,
        }
    }
}

/// Everything the first screen needs in one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AppState {
    /// True when the only host is the embedded sandbox.
    pub sandbox: bool,
    /// Pending decisions not yet opened.
    pub unread: u32,
    /// Pending decisions waiting on this person (see [`InboxPage::waiting`]):
    /// the count the tray and the window title show.
    pub waiting: u32,
    /// Every connected host.
    pub hosts: Vec<HostInfo>,
    /// Where all state lives (shown so a person can find exports).
    pub data_dir: String,
    /// The configured name and email, offered as defaults when connecting
    /// to a host (the host enrolls only the email its code was issued for).
    pub approver: crate::config::ApproverProfile,
    /// The machine's locale as a BCP 47 tag (`en-GB`): the interface writes
    /// numbers and dates with it, as notifications do.
    pub locale: String,
    /// The machine's time zone (`Europe/Berlin`), when it has a name.
    pub time_zone: Option<String>,
    /// False while the approver key is kept nowhere (no desktop secret
    /// store answered and no passphrase was chosen yet): nothing can be
    /// enrolled, the sandbox included, until a passphrase keeps it.
    pub key_kept: bool,
    /// False while the key is sealed and not opened since the console
    /// started: no host is asked for news and nothing is signed until the
    /// person types the passphrase once.
    pub key_loaded: bool,
}

/// A connected host and how the poller last found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HostInfo {
    /// Local id of the host (UUID).
    pub host_id: String,
    /// Base URL, e.g. `http://127.0.0.1:4100`.
    pub url: String,
    /// A short name for people.
    pub label: String,
    /// True for the embedded sandbox host.
    pub sandbox: bool,
    /// False after a failed poll, until one succeeds.
    pub reachable: bool,
    /// The last poll error, in words.
    pub last_error: Option<String>,
    /// RFC 3339 time of the last successful poll.
    pub last_poll_at: Option<String>,
    /// Fingerprint of the platform key pinned at enrollment.
    pub platform_fingerprint: String,
    /// The email this console approves as on that host.
    pub approver_email: String,
    /// False for a sandbox host this process no longer runs (a real host
    /// was connected since): its history stays readable, nothing is polled,
    /// and `reachable` is only how it was last found.
    pub polled: bool,
    /// True when this console reaches the host over plain HTTP off this
    /// machine (a lab host the person allowed, or one connected before
    /// plain HTTP was refused): what it exchanges can be read on the way.
    pub plain_http: bool,
    /// RFC 3339 time the person allowed plain HTTP to this host at connect
    /// (the lab override), when they did.
    pub plain_http_allowed_at: Option<String>,
    /// How this console hears of the host's changes now: at once (a request
    /// held open until something changes) or on its poll timer, and why.
    pub updates: HostUpdates,
}

/// How the console hears of one host's changes (the Hosts screen says it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HostUpdates {
    /// Waiting (the host answers the moment something changes) or polling.
    pub mode: UpdateMode,
    /// In words, for the Hosts screen: what the mode means, and for
    /// polling, why (the host does not offer waiting, a proxy cuts it).
    pub detail: String,
}

/// The two ways the console hears of a host's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum UpdateMode {
    /// One request held open at the host, answered the moment anything
    /// this console sees changes (`GET /summary?wait=`).
    Waiting,
    /// A summary request every poll interval.
    Polling,
}

/// Who is on the other side of a session, as the host vouches for it (an
/// ANP vendor agent; a Concordia party the org's own agent negotiates with).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Counterparty {
    /// The counterparty's id (an ANP agent id, a Concordia party id).
    pub id: String,
    /// Its declared name (counterparty text).
    pub name: String,
    /// The organization it acts for, when declared (counterparty text).
    pub organization: Option<String>,
    /// Fingerprint of its key: the identity people compare.
    pub fingerprint: String,
    /// `sandbox`, `verified` or `revoked` (an ANP agent the host vetted), or
    /// `declared` (named by the org's own agent; its key pinned here).
    pub status: String,
    /// ANP: whether the host's admin verified `name` and `organization`;
    /// false means they are only what a registration declared (shown as
    /// "unverified" beside the name). Null where it does not apply, or
    /// when the host does not say.
    #[serde(default)]
    pub verified: Option<bool>,
}

impl Counterparty {
    /// The name a person knows it by: its organization, else its own name.
    pub fn display_name(&self) -> &str {
        self.organization
            .as_deref()
            .filter(|o| !o.is_empty())
            .unwrap_or(&self.name)
    }
}

/// The kinds of proposal the console decides, one view shape each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalKind {
    /// An ANP/0.1 `offer` or `counter_offer` (or a buyer-agent draft).
    AnpOffer,
    /// A Concordia `negotiate.offer` or `negotiate.counter` the org's own
    /// agent asks a person about before it accepts.
    ConcordiaOffer,
    /// An OANP `offer.propose` or `offer.counter` the org's own agent asks
    /// a person about before its `offer.accept`.
    OanpOffer,
    /// An ANEX ask for data about the owner beyond the owner's policy.
    AnexAsk,
    /// Plain terms an org's own agent asks about, with no negotiation
    /// protocol behind them (docs/gate-api.md, "Plain terms").
    PlainTerms,
}

/// Which side of a session an entry is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The counterparty.
    Counterparty,
    /// The organization (its host, or its own agent).
    Ours,
}

/// One pending decision, as listed in the inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InboxItem {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The session's protocol, as the host names it (`ANP/0.1`, `concordia`).
    pub protocol: String,
    /// Which view shape this proposal has.
    pub proposal_kind: ProposalKind,
    /// The position of the entry carrying the proposal.
    pub seq: u64,
    /// The hash of that entry (an ANP event hash, a Concordia message
    /// hash), or the host's reference to a draft: what a decision answers.
    pub event_hash: String,
    /// The entry's own kind (`offer`, `counter_offer`, `negotiate.offer`,
    /// `negotiate.counter`).
    pub kind: String,
    /// Whose proposal it is.
    pub side: Side,
    /// Whose, in the protocol's words (`vendor_agent`, `buyer`, a party id).
    pub actor: String,
    /// True for a draft of the org's own agent, waiting to be sent.
    pub is_draft: bool,
    /// Who is on the other side.
    pub counterparty: Counterparty,
    /// The proposal's exact amount, when it has one.
    pub amount: Option<Amount>,
    /// The amount of the proposal it is compared with, when both have one:
    /// the same side's previous proposal (what the counterparty moved since
    /// it last offered), else the one it answers.
    pub previous_amount: Option<Amount>,
    /// From `previous_amount` to `amount`.
    pub change: Option<Change>,
    /// How far a counterparty's proposal stands from our side's latest
    /// earlier one (our last counter), when that is not already what
    /// `change` compares with.
    pub gap: Option<Gap>,
    /// When the proposal stops being decidable (RFC 3339).
    pub expires_at: String,
    /// The session's verification state.
    pub verification: Verification,
    /// Approvals already given.
    pub approvals_given: u32,
    /// Approvals the org's policy needs.
    pub approvals_required: u32,
    /// True until the person opened it.
    pub unread: bool,
    /// Why the host holds it (screening), if it does.
    pub held_reason: Option<String>,
    /// The chain of approvals the host routed it to under the org's policy
    /// of authority, and where it stands (hosts that route only).
    pub chain: Option<ApprovalChain>,
    /// True while it waits on this person; the inbox lists these first,
    /// then those waiting on others (a later step's role, or other holders
    /// once this person's approval counts).
    pub waits_on_you: bool,
}

/// Where a decision stands on the chain of approvals its organization's
/// policy of authority gave it (the host's `route`, docs/authority.md): why
/// it went there, each step with who approved and who may still act, and
/// whether this person may act now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApprovalChain {
    /// Why ("Above 10,000 USD: rule 2"); counterparty-free text of the
    /// organization's own policy.
    pub reason: String,
    /// The rule that fired, from 1; none for a fallback.
    pub rule: Option<u32>,
    /// The policy version it was routed under; none for the old threshold.
    pub policy_version: Option<u64>,
    /// The step waiting now, from 1; none once every step is met.
    pub current_step: Option<u32>,
    /// True when this person may approve now.
    pub you_may_approve: bool,
    /// True when this person may decline or counter now (holds an open
    /// role of the current step).
    pub you_may_decide: bool,
    /// The role this person decides as at the current step; a Concordia or
    /// OANP receipt of a chain routed by a policy names it (`approver.role`).
    pub your_role: Option<String>,
    /// When this person decides as someone's stand-in: for whom, and the
    /// delegation a Concordia, OANP or ANEX receipt names
    /// (`approver.on_behalf_of`).
    #[serde(default)]
    pub your_stand_in: Option<StandingIn>,
    /// Every step, in order.
    pub steps: Vec<ChainStep>,
}

/// Acting for another approver under a delegation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct StandingIn {
    /// The holder the decision is made for (an email).
    pub for_person: String,
    /// The delegation (`urn:countersign:delegation:<id>`).
    pub delegation: String,
}

impl ApprovalChain {
    /// Whether this person may take `action` now: approve when their
    /// approval would count, decline or counter when they hold an open role
    /// of the current step.
    pub fn allows(&self, action: DecideAction) -> bool {
        match action {
            DecideAction::Approve => self.you_may_approve,
            DecideAction::Decline | DecideAction::Counter => self.you_may_decide,
        }
    }
}

/// One step of an [`ApprovalChain`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChainStep {
    /// From 1.
    pub number: u32,
    /// True once every part is met.
    pub met: bool,
    /// One role, or several decided in parallel.
    pub parts: Vec<ChainPart>,
    /// How long it may wait, in minutes, when the policy says.
    pub respond_within_minutes: Option<u32>,
    /// Who it is offered to once that time has passed.
    pub escalate_to: Option<String>,
    /// For the current step with a response time: when it is due (RFC
    /// 3339), from the moment it opened.
    pub due_at: Option<String>,
    /// True once the current step is past its time and offered to its
    /// escalation role too.
    pub escalated: bool,
}

/// One role's share of a [`ChainStep`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChainPart {
    /// The role.
    pub role: String,
    /// How many of its holders must approve.
    pub required: u32,
    /// Who approved as it, in order (emails).
    pub approved_by: Vec<String>,
    /// Who may still approve it now (emails), stand-ins among them.
    pub may_act: Vec<String>,
    /// Those of `approved_by` who approved as someone's stand-in.
    #[serde(default)]
    pub stood_in: Vec<StoodIn>,
}

/// An approval a stand-in made: who, for whom (emails).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct StoodIn {
    /// Who approved.
    pub by: String,
    /// For whom.
    pub for_person: String,
}

/// Which part of the inbox to build. The UI shows a page at a time, so the
/// engine builds (and the webview holds) only the rows a person can see, not
/// every pending decision on every host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct InboxQuery {
    /// The first `limit` pending decisions, soonest expiry first (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Extends the page down to this proposal when it lies further, so a
    /// selection made elsewhere (a notification) stays in the list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<ProposalRef>,
}

/// The first rows of the inbox and the counts of all of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InboxPage {
    /// The rows asked for, soonest expiry first.
    pub items: Vec<InboxItem>,
    /// Pending decisions in the whole inbox.
    pub total: u32,
    /// Of those, the ones the person has not opened yet.
    pub unread: u32,
    /// Of those, the ones waiting on this person: all but those they
    /// already approved that wait only on other approvers. What "waits on
    /// you" counts (the tray, the window title), across hosts and protocols.
    pub waiting: u32,
    /// Proposals that expired undecided and were not dismissed, soonest
    /// first: their own section (Dismiss, and Decline where the protocol
    /// still takes one), never counted in `total` or `unread`.
    pub expired: Vec<InboxItem>,
}

/// A change between two amounts in one currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Change {
    /// New minus old.
    #[ts(as = "MoneyText")]
    pub absolute: Money,
    /// Two-place percentage, or null when the old value is zero.
    pub percent: Option<String>,
    /// Better or worse for the buyer, by the protocol crate's direction
    /// rule; null when the change has no direction (or none moved).
    pub effect: Option<Effect>,
}

/// What a change means, always read from the buyer's side (the side a
/// price that goes down is good for); a protocol crate's diff decides it,
/// one rule per term, so the interface never guesses from a field's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// The buyer is better off.
    Better,
    /// The buyer is worse off.
    Worse,
}

/// A counterparty's proposal beside our side's latest earlier one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Gap {
    /// Our side's proposal's seq.
    pub seq: u64,
    /// Its amount.
    pub ours: Amount,
    /// From ours to theirs (a distance, so no better or worse).
    pub change: Change,
}

/// The proposal it answers, by position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PreviousRef {
    /// Seq of the previous proposal.
    pub seq: u64,
    /// Its actor, in the protocol's words.
    pub actor: String,
}

/// An old and a new value, as text; null where a side has none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct Scalar {
    /// Before.
    pub old: Option<String>,
    /// After.
    pub new: Option<String>,
}

/// A session's verification state with the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct VerificationView {
    /// The state.
    pub state: Verification,
    /// What went wrong, in words, when disputed; or which entries are unproven.
    pub detail: Option<String>,
    /// The exact seq that failed, when disputed.
    pub failing_seq: Option<u64>,
    /// The checks that failed (`seq`, `payload_hash`, `prev_hash`,
    /// `event_hash`, `signature`, `link`, `pin`, …).
    pub checks: Vec<String>,
}

/// An approval already given, for multi-approver policies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApprovalGiven {
    /// The approver's email.
    pub approved_by: String,
    /// When.
    pub at: String,
}

/// The counter editor a protocol's counter is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CounterForm {
    /// A whole ANP offer payload (line items, term, expiry, conditions).
    AnpOffer,
    /// The `terms` object of a Concordia offer body.
    ConcordiaTerms,
    /// OANP terms: a price in minor units and inclusions.
    OanpTerms,
    /// ANEX terms `{access, promise}`: optional items removed, promises added.
    AnexTerms,
    /// Plain terms: counterparty, currency, line items, term, conditions.
    PlainTerms,
}

/// What a decision panel may offer for a proposal, as data: the interface
/// draws the buttons and forms these name and nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Capabilities {
    /// The decisions a person may make now (once the proposal expired,
    /// exactly `after_expiry`).
    pub actions: Vec<DecideAction>,
    /// The decisions the protocol still takes once the proposal expired
    /// (ANP/0.1: a late decline still tells the vendor; a gate request
    /// takes none): what the panel offers when it expires on screen.
    pub after_expiry: Vec<DecideAction>,
    /// A decline must carry a reason the counterparty reads.
    pub decline_needs_reason: bool,
    /// What a decline is called in this protocol ("Decline offer", "Refuse
    /// the request"): the decline button's words.
    pub decline_label: String,
    /// Reasons a person may pick for a decline, in this protocol's words
    /// (a data request is refused for reasons about data, not price); the
    /// person may always write their own.
    pub decline_reasons: Vec<String>,
    /// The editor a counter is written in, when a counter is offered.
    pub counter_form: Option<CounterForm>,
    /// What the person's decision becomes, in words ("an RFC-002 approval in
    /// an accept event", "an ApprovalReceipt signed with your key").
    pub signed_as: String,
    /// Who receives the decision: the counterparty itself (ANP's log, ANEX's
    /// answer), or the organization's own agent, which then acts on it
    /// (Concordia, OANP): the words after a decision say which.
    pub decision_goes_to: DecisionRecipient,
    /// The proposal's deadline is the organization's own (a gate request's,
    /// which its agent asked for), so a person who may decide it may extend
    /// it; otherwise it is the counterparty's (an ANP offer's expiry).
    pub deadline_is_ours: bool,
    /// Where the expiry is the counterparty's and a counter can move it:
    /// the sentence saying so beside the decision (ANP's offers).
    pub expiry_note: Option<String>,
}

/// Who a decision is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DecisionRecipient {
    /// The counterparty reads it (on the shared log, or as the answer).
    Counterparty,
    /// The organization's own agent gets it and acts on it.
    OwnAgent,
}

/// One proposal with everything needed to decide it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProposalView {
    /// The inbox row.
    pub item: InboxItem,
    /// What this kind of proposal shows: its own view shape.
    pub detail: ProposalDetail,
    /// The session's verification state.
    pub verification: VerificationView,
    /// Approvals given so far.
    pub approvals: Vec<ApprovalGiven>,
    /// True when `expires_at` has passed.
    pub expired: bool,
    /// True while the proposal waits for a decision (it is in the pending
    /// set); false once it was decided, here or elsewhere, or withdrawn.
    pub pending: bool,
    /// What was decided, when something was: by this console (also while
    /// it waits for more approvals), or as the record shows it.
    pub decision: Option<ProposalDecision>,
    /// What the decision panel may offer.
    pub capabilities: Capabilities,
}

/// A proposal kind's own view, tagged by `proposal_kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "proposal_kind", rename_all = "snake_case")]
pub enum ProposalDetail {
    /// An ANP offer.
    AnpOffer(Box<AnpOfferView>),
    /// A Concordia offer.
    ConcordiaOffer(Box<ConcordiaOfferView>),
    /// An OANP offer.
    OanpOffer(Box<OanpOfferView>),
    /// An ANEX ask.
    AnexAsk(Box<AnexAskView>),
    /// Plain terms.
    PlainTerms(Box<PlainTermsView>),
}

/// What became of a proposal: a decision this console made, or the answer
/// the record shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProposalDecision {
    /// `approve`, `decline` or `counter`; null when the proposal left the
    /// pending set without an answer on the record.
    #[ts(type = "\"approve\" | \"decline\" | \"counter\" | null")]
    pub action: Option<String>,
    /// `pending` (kept, the host has not confirmed it yet), `appended`,
    /// `awaiting_approvals`, `held`, `refused` (by the host: nothing was
    /// sent), `answered` (the record shows an answer this console did not
    /// send), `decided` (the host says its gate request was decided, by the
    /// approvers named, at another console or completing this one's
    /// approval), `expired` (the host says nobody decided in time), or
    /// `withdrawn` (no longer pending, no answer on the record).
    #[ts(
        type = "\"pending\" | \"appended\" | \"awaiting_approvals\" | \"held\" | \"refused\" | \"answered\" | \"decided\" | \"expired\" | \"withdrawn\""
    )]
    pub outcome: String,
    /// Who decided: the email this console approves as, the approvers the
    /// host names for a gate request, each "Name (email)" as enrolled
    /// (every approver, for an approval), or the emails the record names.
    pub decided_by: Option<String>,
    /// When (RFC 3339).
    pub at: Option<String>,
    /// This console's decision id, when it decided.
    pub decision_id: Option<String>,
    /// The entry the decision appended to the record.
    pub appended: Option<AppendedEvent>,
    /// The host's words, or what the record shows.
    pub detail: String,
    /// Why it was declined, as the approver who declined wrote it (a gate
    /// request decided at another console): text, never markup.
    pub reason: Option<String>,
    /// The org's own agent accepted although the host recorded that it
    /// must not (a decline, a counter, or nobody deciding in time): one
    /// sentence naming the accept. What a person must act on at once.
    pub breach: Option<String>,
    /// A counter's terms offered instead, against the proposal they answer,
    /// as the counter editor showed them: this console's counter as it was
    /// sent, the terms the host recorded for a counter made at another
    /// console, or the counter on the log when only the log shows it (an
    /// ANP counter-offer). Null for any other decision, and for terms that
    /// no longer read as the protocol's counter.
    pub countered: Option<ProposalDiff>,
}

/// An entry a decision appended to the session's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AppendedEvent {
    /// Its seq.
    pub seq: u64,
    /// Its kind (`accept`, `decline`, `counter_offer`, …).
    pub kind: String,
    /// Its hash.
    pub event_hash: String,
    /// True once this console has verified it and stored it; false while it
    /// is only the host's word.
    pub verified: bool,
}

/// What a person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DecideAction {
    /// Go ahead with the proposal (signed by the approver's key).
    Approve,
    /// Decline it, with a reason.
    Decline,
    /// Answer with other terms.
    Counter,
}

/// A decision, as the UI sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DecideRequest {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The proposal's `event_hash`.
    pub in_response_to: String,
    /// What to do.
    pub action: DecideAction,
    /// Required for decline and counter (the counterparty reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Required for counter: the counter in the protocol's own form (ANP:
    /// the offer payload; Concordia: the `terms` object of an offer body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "Record<string, unknown>")]
    pub counter: Option<Value>,
}

/// What the host did with a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DecisionResult {
    /// The idempotency key; the same one on every retry.
    pub decision_id: String,
    /// `appended`, `awaiting_approvals` or `held`.
    #[ts(type = "\"appended\" | \"awaiting_approvals\" | \"held\"")]
    pub outcome: String,
    /// The host's words.
    pub detail: String,
    /// The entry the decision appended, when it appended one.
    pub appended: Option<AppendedEvent>,
}

/// One problem with an edited counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FieldError {
    /// JSON path, e.g. `line_items[0].quantity`, `terms/price/value`.
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
}

/// The verdict on an edited counter before it is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CounterCheck {
    /// True when it would pass the protocol's rules.
    pub ok: bool,
    /// Every problem found.
    pub errors: Vec<FieldError>,
    /// Its diff against the proposal it answers, when it parses.
    pub diff: Option<ProposalDiff>,
}

/// A structured diff of two proposals of one kind, tagged by `proposal_kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "proposal_kind", rename_all = "snake_case")]
pub enum ProposalDiff {
    /// Two ANP offers.
    AnpOffer(Box<AnpOfferDiff>),
    /// Two Concordia offers.
    ConcordiaOffer(Box<ConcordiaOfferDiff>),
    /// Two sets of ANEX terms.
    AnexAsk(Box<AnexTermsDiff>),
    /// Two sets of OANP terms.
    OanpOffer(Box<OanpTermsDiff>),
    /// Two sets of plain terms.
    PlainTerms(Box<PlainTermsDiff>),
}

/// Session states the history can filter on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StateFilter {
    /// Still negotiating.
    Open,
    /// Ended without acceptance.
    Closed,
    /// Ended with an agreement (the rows' word too).
    Agreed,
    /// Record failed verification.
    Disputed,
    /// Has a pending decision.
    Pending,
}

/// Search and filter of the history list; every member optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct HistoryFilter {
    /// Matches the counterparty's names or the session id (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Matches the counterparty's names or fingerprint (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterparty: Option<String>,
    /// Only sessions of this protocol (`ANP/0.1`, `concordia`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Session state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateFilter>,
    /// Last amount at least this (exact decimal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<MoneyText>")]
    pub min_total: Option<Money>,
    /// Last amount at most this (exact decimal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<MoneyText>")]
    pub max_total: Option<Money>,
}

/// One session in the history list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionRow {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// Its protocol (`ANP/0.1`, `concordia`).
    pub protocol: String,
    /// The counterparty.
    pub counterparty: Counterparty,
    /// The host's status (`open`, `closed`, `accepted`, `active`, …).
    pub status: String,
    /// Where it stands in the console's one vocabulary, whatever the
    /// protocol calls it: what the row shows and the State filter offers.
    pub state: SessionState,
    /// True for sandbox sessions.
    pub sandbox: bool,
    /// Verification state.
    pub verification: Verification,
    /// Entries stored locally.
    pub event_count: u64,
    /// The latest proposal's amount, if it has one.
    pub last_amount: Option<Amount>,
    /// Pending decisions.
    pub pending: u32,
    /// Proposals the org's own agent accepted against the person's
    /// decision (declined, countered, or expired undecided): each offer
    /// view says which and at what seq.
    pub breaches: u32,
    /// Time of the latest entry (RFC 3339).
    pub updated_at: String,
}

/// Where a session stands, in one vocabulary for every protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Still negotiating.
    Open,
    /// Ended with an agreement.
    Agreed,
    /// Ended without one.
    Closed,
}

/// One term of a proposal, flattened: `line_items[0].unit_price` = `1140`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TermRow {
    /// Its path in the proposal, as the wire names it (the UI labels it).
    pub name: String,
    /// Its value as the wire carries it (counterparty text: data).
    pub value: String,
}

/// The terms a session agreed, whole, and where they were agreed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgreedTerms {
    /// The proposal that was accepted (null when the acceptance restates
    /// terms no stored proposal carries).
    pub proposal_seq: Option<u64>,
    /// The entry that accepted it.
    pub accept_seq: u64,
    /// When it was accepted (RFC 3339).
    pub accepted_at: String,
    /// Which side accepted, when the protocol says.
    pub accepted_by: Option<Side>,
    /// The accepted proposal's one-line summary.
    pub summary: String,
    /// Every term, in the order the proposal carries them.
    pub terms: Vec<TermRow>,
}

/// One entry in a session timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TimelineEvent {
    /// Position.
    pub seq: u64,
    /// Which side it is from, when the protocol says.
    pub side: Option<Side>,
    /// Who, in the protocol's words (`vendor_agent`, `buyer`, a party id).
    pub actor: String,
    /// The entry's kind.
    pub kind: String,
    /// When.
    pub at: String,
    /// Plain text, numbers as people write them: "Offer: 570,000 USD, 36 months".
    pub summary: String,
    /// The entry's content, as the record carries it.
    #[ts(type = "Record<string, unknown>")]
    pub payload: Value,
    /// Signer fingerprint or id.
    pub signer: Option<String>,
    /// `verified`, `unproven` or `failed`.
    #[ts(type = "\"verified\" | \"unproven\" | \"failed\"")]
    pub signature: String,
}

/// One point of a per-side proposal series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SeriesPoint {
    /// 1-based round of that side.
    pub round: u32,
    /// Entry seq.
    pub seq: u64,
    /// Exact amount.
    #[ts(as = "MoneyText")]
    pub total: Money,
}

/// Proposal amounts by round, per side, for a chart (sides without an
/// amount have no points).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Series {
    /// The counterparty's proposals.
    pub counterparty: Vec<SeriesPoint>,
    /// Ours.
    pub ours: Vec<SeriesPoint>,
}

/// A decision this console made, as listed in the session detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DecisionRow {
    /// Idempotency key.
    pub decision_id: String,
    /// `approve`, `decline`, `counter`.
    pub action: String,
    /// The proposal answered.
    pub in_response_to: String,
    /// `pending` (not yet confirmed), `appended`, `awaiting_approvals`,
    /// `held`, or `refused`.
    pub outcome: String,
    /// When it was made.
    pub at: String,
    /// The signed ApprovalReceipt the decision carried (Concordia, ANEX:
    /// for ANEX its `scope.terms` is the terms record decided), exactly as
    /// sent; null for a protocol whose decisions carry none.
    #[ts(type = "Record<string, unknown> | null")]
    pub receipt: Option<Value>,
    /// The fingerprint of the approver key that signed it (a console that
    /// moved to a new key shows which signed each decision).
    pub signed_with: Option<String>,
    /// The chain of approvals it was made on, where the host routed the
    /// request along one (as the host said when it was made).
    pub chain: Option<DecisionChain>,
}

/// The chain of approvals a decision made here was part of: why the
/// request was routed, under which rule and policy version, the step and
/// role this decision was made at and as, and each step as it stood then
/// (who had approved, as which role).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DecisionChain {
    /// Why ("Above 10,000 USD: rule 2").
    pub reason: String,
    /// The rule that fired, from 1; none for a fallback.
    pub rule: Option<u32>,
    /// The policy version it was routed under; none for the old threshold.
    pub policy_version: Option<u64>,
    /// The step this decision was made at.
    pub step: Option<u32>,
    /// The role it was made as.
    pub role: Option<String>,
    /// When it was made as a stand-in: for whom (an email), and under which
    /// delegation.
    #[serde(default)]
    pub stand_in: Option<StandingIn>,
    /// Every step as it stood when the decision was made.
    pub steps: Vec<ChainStep>,
}

/// One approval as the organization's host recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HostApproval {
    /// The offer it approved (its event hash).
    pub event_hash: String,
    /// Who (an email).
    pub approved_by: String,
    /// When, as the signed approval says (RFC 3339).
    pub at: String,
    /// The step it counted at, from 1; none from before routing.
    pub step: Option<u32>,
    /// The role it counted as; none from before routing.
    pub role: Option<String>,
    /// Whom it was made for, when a stand-in made it (an email).
    pub for_person: Option<String>,
    /// Why the request went where it did ("Above 10,000 USD: rule 2").
    pub reason: Option<String>,
    /// The rule that fired, from 1; none for a fallback.
    pub rule: Option<u32>,
    /// The policy version; none under the old threshold.
    pub policy_version: Option<u64>,
}

/// A session in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionDetail {
    /// The list row.
    pub row: SessionRow,
    /// Every stored entry.
    pub timeline: Vec<TimelineEvent>,
    /// Amounts by round, per side.
    pub series: Series,
    /// Decisions made from this console.
    pub decisions: Vec<DecisionRow>,
    /// The host's record of every approval in the session, made here or at
    /// another console: who, as which role at which step, for whom, under
    /// which rule (ANP sessions with an accept; a gate or ANEX session's
    /// receipts say it themselves). Empty until read.
    #[serde(default)]
    pub host_approvals: Vec<HostApproval>,
    /// Verification state with evidence.
    pub verification: VerificationView,
    /// The agreed terms, whole, when the session ended in an agreement.
    pub agreed: Option<AgreedTerms>,
    /// When disputed: where, what, the evidence kept and the person's note.
    pub dispute: Option<DisputeView>,
}

/// A disputed session at a glance, and what a person can do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DisputeView {
    /// Which host (local id).
    pub host_id: String,
    /// Its name for people.
    pub host_label: String,
    /// Its URL.
    pub host_url: String,
    /// Which session.
    pub session_id: String,
    /// Its protocol.
    pub protocol: String,
    /// Who is on the other side (counterparty text).
    pub counterparty: String,
    /// When this console found it (RFC 3339); null for a dispute found
    /// before this was recorded.
    pub detected_at: Option<String>,
    /// The exact seq that failed.
    pub failing_seq: u64,
    /// The failed checks.
    pub checks: Vec<String>,
    /// In words.
    pub detail: String,
    /// The request the host answered with the conflicting record.
    pub request: Option<String>,
    /// True when the host's conflicting answer was kept byte for byte (the
    /// evidence export holds it beside the stored copy).
    pub host_answer_kept: bool,
    /// The person's acknowledgement, once given.
    pub acknowledged: Option<AcknowledgementView>,
}

/// A person's acknowledgement of a dispute: noted, and still disputed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AcknowledgementView {
    /// The note (the person's words).
    pub note: String,
    /// When (RFC 3339).
    pub at: String,
    /// Who (the email this console approves as on that host).
    pub by: String,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// The verifiable record plus the signed decisions.
    Json,
    /// One row per proposal.
    Csv,
}

/// Where an export was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ExportResult {
    /// The file path.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What changed, so the UI reloads only that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChangeScope {
    /// Pending decisions changed.
    Inbox,
    /// Session data changed.
    Sessions,
    /// A host's state changed.
    Hosts,
    /// The approver key locked, unlocked or moved (Settings' key card).
    Key,
}

/// The payload of `engine://changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct EngineEvent {
    /// What changed.
    pub what: ChangeScope,
    /// On which host, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// In which session, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Names one proposal: the argument of `proposal_view`, `mark_seen` and
/// `validate_counter` (`engine://open-proposal` carries a
/// [`ProposalOpening`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProposalRef {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// Which proposal (its `event_hash`).
    pub event_hash: String,
}

/// What a notification asks the app to open: the payload of
/// `engine://open-proposal`. `decide` names the decision form to open
/// with its confirmation (or reason field) focused ("Approve…",
/// "Decline…" on the notification), so one more key finishes it; the app
/// still signs nothing until that key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProposalOpening {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// Which proposal (its `event_hash`).
    pub event_hash: String,
    /// The decision form to open at (`approve`, `decline`), or none: just
    /// the proposal (a click, "Open").
    pub decide: Option<DecideAction>,
}

impl ProposalOpening {
    /// Opens `proposal`, at the decision form `decide` names if any.
    pub fn of(proposal: &ProposalRef, decide: Option<DecideAction>) -> ProposalOpening {
        ProposalOpening {
            host_id: proposal.host_id.clone(),
            session_id: proposal.session_id.clone(),
            event_hash: proposal.event_hash.clone(),
            decide,
        }
    }
}

/// Names one session: the payload of `engine://open-session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionRef {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
}
