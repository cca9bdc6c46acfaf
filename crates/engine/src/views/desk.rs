//! The vendor manager's desk: counterparties across protocols, what was won
//! against opening asks, how long offers waited, and the audit pack. Money
//! stays exact decimal text and is never summed across currencies; waits
//! are whole seconds.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Money, MoneyText, SessionRef, SessionRow, SessionState};

/// Which sessions the desk reads: a date range (days, `YYYY-MM-DD`, both
/// inclusive, on the session's first entry) and an optional protocol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct DeskQuery {
    /// First day, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Last day, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Only this protocol (`ANP/0.1`, `concordia`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

/// Agreed money in one currency, and what was won against opening asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CurrencyFigures {
    /// The currency code.
    pub currency: String,
    /// Sessions with an amount in this currency.
    pub sessions: u32,
    /// Sessions agreed in it.
    pub agreed_sessions: u32,
    /// The agreed totals, summed (this currency only).
    #[ts(as = "MoneyText")]
    pub agreed_total: Money,
    /// The counterparties' opening asks of those agreed sessions, summed.
    #[ts(as = "MoneyText")]
    pub opening_total: Money,
    /// Opening minus agreed: what the organization, as the buyer, won.
    #[ts(as = "MoneyText")]
    pub won: Money,
    /// `won` as a percentage of `opening_total`, two places; none from zero.
    pub won_percent: Option<String>,
}

/// How long offers waited for a decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct WaitFigures {
    /// Decisions measured.
    pub decisions: u32,
    /// Median wait, seconds.
    pub median_seconds: Option<u64>,
    /// 90th percentile (nearest rank), seconds.
    pub p90_seconds: Option<u64>,
    /// Decisions made after their step's response time.
    pub past_response_time: u32,
}

/// One wait: an offer arriving, and the decision on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct WaitRow {
    /// The session.
    pub session: SessionRef,
    /// Its protocol.
    pub protocol: String,
    /// The counterparty's name.
    pub counterparty: String,
    /// When the offer arrived (RFC 3339).
    pub offer_at: String,
    /// When it was decided.
    pub decided_at: String,
    /// Seconds between.
    pub seconds: u64,
    /// The step's response time, when the policy set one.
    pub respond_within_minutes: Option<u32>,
    /// When the step was due (RFC 3339), counted from the moment the step
    /// opened, as the host said when the decision was made.
    pub due_at: Option<String>,
    /// True when it was decided after its step was due.
    pub past_response_time: bool,
    /// Who decided (an email).
    pub person: String,
    /// As which role, when routed.
    pub role: Option<String>,
    /// `approve`, `decline` or `counter`.
    pub action: String,
}

/// Decisions made by one person in one role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PersonFigures {
    /// An email.
    pub person: String,
    /// The role, when routed.
    pub role: Option<String>,
    /// Approvals.
    pub approvals: u32,
    /// Declines.
    pub declines: u32,
    /// Counters.
    pub counters: u32,
}

/// One point of the desk's chart: a month's agreed money in one currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct MonthFigures {
    /// `YYYY-MM`.
    pub month: String,
    /// The currency.
    pub currency: String,
    /// Agreed that month (sessions agreed whose first entry is in it).
    #[ts(as = "MoneyText")]
    pub agreed_total: Money,
    /// Won against opening asks that month.
    #[ts(as = "MoneyText")]
    pub won: Money,
}

/// One counterparty in the desk's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CounterpartyRow {
    /// Stable while its identities stay the same (`cp_` and hex).
    pub id: String,
    /// The name a person knows it by (counterparty text).
    pub name: String,
    /// The protocols it used.
    pub protocols: Vec<String>,
    /// Sessions in range.
    pub sessions: u32,
    /// Agreed money and wins, per currency.
    pub money: Vec<CurrencyFigures>,
    /// Waits for our decisions.
    pub waits: WaitFigures,
    /// Our declines.
    pub declines: u32,
    /// Our counters.
    pub counters: u32,
    /// Its agents' breaches of a decision.
    pub breaches: u32,
    /// Sessions whose record is disputed.
    pub disputes: u32,
    /// Keys that took over from another key of the counterparty, between
    /// sessions or within one.
    pub key_changes: u32,
    /// Other counterparties that may be the same organization (same
    /// declared name, different identities, not linked): their ids.
    pub maybe_same_as: Vec<String>,
}

/// The desk for a date range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DeskOverview {
    /// The range read.
    pub query: DeskQuery,
    /// Sessions in it.
    pub sessions: u32,
    /// Per currency.
    pub money: Vec<CurrencyFigures>,
    /// Per month and currency, oldest first (the chart).
    pub months: Vec<MonthFigures>,
    /// Waits.
    pub waits: WaitFigures,
    /// The slowest waits, slowest first (at most ten).
    pub slowest: Vec<WaitRow>,
    /// Decisions by person and role.
    pub people: Vec<PersonFigures>,
    /// Breaches.
    pub breaches: u32,
    /// Disputed sessions.
    pub disputes: u32,
    /// Counterparties with sessions in range, most sessions first.
    pub counterparties: Vec<CounterpartyRow>,
}

/// One identity a counterparty is known by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IdentityView {
    /// The identity as matched (`key:…`, `did:…`, or `<protocol> <id> at
    /// <host id>`): what a link names.
    pub identity: String,
    /// The same as a person reads it: a protocol id with its host's label.
    pub label: String,
    /// `key`, `did` or `id`.
    pub kind: String,
    /// Its first entry's time.
    pub first_seen: String,
    /// Its last entry's time.
    pub last_seen: String,
    /// Sessions it appears in.
    pub sessions: u32,
    /// True when this key took over from another within a session.
    pub changed_mid_session: bool,
    /// The key this one took over from: the counterparty's key used
    /// before it under the same protocol id (an agent that changed keys
    /// between sessions, or within one).
    pub replaces: Option<String>,
}

/// A person's link between two identities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LinkView {
    /// Its id.
    pub link_id: i64,
    /// One identity.
    pub a: String,
    /// The other.
    pub b: String,
    /// Who linked them (an email).
    pub linked_by: String,
    /// When.
    pub linked_at: String,
}

/// One session of a counterparty, with what was won in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionWin {
    /// The session.
    pub session: SessionRef,
    /// Its protocol.
    pub protocol: String,
    /// Open, agreed or closed.
    pub state: SessionState,
    /// Its first entry.
    pub opened_at: String,
    /// The currency, when there is money.
    pub currency: Option<String>,
    /// The counterparty's opening ask.
    #[ts(as = "Option<MoneyText>")]
    pub opening: Option<Money>,
    /// The agreed total, when agreed.
    #[ts(as = "Option<MoneyText>")]
    pub agreed: Option<Money>,
    /// Opening minus agreed.
    #[ts(as = "Option<MoneyText>")]
    pub won: Option<Money>,
    /// Of the opening ask, two places.
    pub won_percent: Option<String>,
}

/// Sessions counted by protocol and state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct StateCount {
    /// The protocol.
    pub protocol: String,
    /// The state.
    pub state: SessionState,
    /// How many.
    pub count: u32,
}

/// A counterparty's page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CounterpartyPage {
    /// Its row.
    pub row: CounterpartyRow,
    /// Every identity it is known by.
    pub identities: Vec<IdentityView>,
    /// The person's links among them.
    pub links: Vec<LinkView>,
    /// Sessions by protocol and state.
    pub by_state: Vec<StateCount>,
    /// Its sessions, oldest first, with what was won.
    pub sessions: Vec<SessionWin>,
    /// Its waits, slowest first.
    pub waits: Vec<WaitRow>,
}

/// A figure on the desk whose sessions a person opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "figure", rename_all = "snake_case")]
pub enum DeskFigure {
    /// Every session in range.
    All,
    /// Sessions with money in this currency.
    Currency {
        /// The currency.
        currency: String,
    },
    /// Agreed sessions in this currency (the won figure).
    Agreed {
        /// The currency.
        currency: String,
    },
    /// Sessions with a decision past its step's response time.
    PastResponseTime,
    /// Sessions decided by this person in this role.
    Person {
        /// An email.
        person: String,
        /// The role.
        role: Option<String>,
    },
    /// Sessions with a breach.
    Breaches,
    /// Disputed sessions.
    Disputes,
    /// One counterparty's sessions.
    Counterparty {
        /// Its id.
        id: String,
    },
}

/// A list on the desk, as CSV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "list", rename_all = "snake_case")]
pub enum DeskList {
    /// The counterparties.
    Counterparties,
    /// The sessions behind a figure.
    Sessions {
        /// Which.
        figure: DeskFigure,
    },
    /// Every wait, slowest first.
    Waits,
    /// Decisions by person and role.
    People,
    /// One counterparty's sessions with what was won.
    CounterpartySessions {
        /// Its id.
        id: String,
    },
}

/// The sessions behind a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DeskSessions {
    /// The figure.
    pub figure: DeskFigure,
    /// Its sessions, as History lists them.
    pub rows: Vec<SessionRow>,
}

/// Which decisions go into an audit pack.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct AuditPackQuery {
    /// Decisions made on or after this day (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Decisions made on or before this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Only `approve`, `decline` or `counter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Only offers of at least this amount (exact decimal)…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<MoneyText>")]
    pub min_total: Option<Money>,
    /// …in this currency (required with `min_total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Only this protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Only this counterparty (its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterparty: Option<String>,
}

/// An audit pack written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AuditPackResult {
    /// The folder.
    pub path: String,
    /// Sessions in it.
    pub sessions: u32,
    /// Decisions in it.
    pub decisions: u32,
}
