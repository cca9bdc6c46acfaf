//! A policy of authority once read and checked: roles, ordered rules, the
//! chain each rule asks for, and the two fallbacks. Every value here has
//! passed [`crate::parse`], so routing and progress never meet an unknown
//! role, an empty chain or a band whose edges cross.

use std::collections::BTreeMap;
use std::fmt;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// The most approvals one step may ask of one role: the legacy
/// `approvers_required` bound, so no policy asks more than any did before.
pub const MAX_COUNT: u32 = 20;

/// A person as the host knows an enrolled approver: the email the admin
/// issued the enrollment code for, lower-cased. It is what an admin can
/// type (approver ids are random), it survives re-enrollment with a new key,
/// and it is the `approved_by` every signed approval names, so "one person
/// counts once" is decided on it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Person(String);

impl Person {
    /// The person with this email, compared without regard to ASCII case.
    pub fn new(email: &str) -> Person {
        Person(email.trim().to_ascii_lowercase())
    }

    /// The email, lower-cased.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Person {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who holds a role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Holders {
    /// The people named in the policy file.
    People(Vec<Person>),
    /// Every approver enrolled for the org: only the legacy reading of
    /// `approval.above_total` has it (a file always names its people).
    EveryApprover,
}

/// The protocols a request can arrive by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// ANP/0.1 offers from vendor agents.
    Anp,
    /// Concordia requests at the gate.
    Concordia,
    /// OANP requests at the gate.
    Oanp,
    /// ANEX asks over A2A.
    Anex,
    /// Plain terms at the gate or over MCP.
    Plain,
}

impl Protocol {
    /// Every protocol, in the order the docs name them.
    pub const ALL: [Protocol; 5] = [
        Protocol::Anp,
        Protocol::Concordia,
        Protocol::Oanp,
        Protocol::Anex,
        Protocol::Plain,
    ];

    /// The word a policy file and the wire use.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Anp => "anp",
            Protocol::Concordia => "concordia",
            Protocol::Oanp => "oanp",
            Protocol::Anex => "anex",
            Protocol::Plain => "plain",
        }
    }

    /// Reads the word a policy file uses.
    pub fn parse(text: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// Which currency a band is written in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Currency {
    /// An ISO 4217 code, upper case.
    Code(String),
    /// Whatever currency the request is in: only the legacy reading has it,
    /// because `approval.above_total` never named a currency and was always
    /// read in the offer's own. A policy file cannot say it: it would
    /// compare amounts across currencies without converting them.
    Any,
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Currency::Code(code) => f.write_str(code),
            Currency::Any => f.write_str("any currency"),
        }
    }
}

/// An amount band in one currency: above `above` (exclusive) and up to
/// `up_to` (inclusive). Written so that adjacent bands (`up_to = 10000`,
/// then `above = 10000`) meet without a gap or an overlap: exactly 10,000
/// is in the first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Band {
    /// The currency the edges are in.
    pub currency: Currency,
    /// The lower edge, exclusive; none: from zero.
    pub above: Option<Decimal>,
    /// The upper edge, inclusive; none: without limit.
    pub up_to: Option<Decimal>,
}

impl Band {
    /// True when `value` in `currency` lies in the band. Never converts:
    /// another currency is never in it.
    pub fn holds(&self, value: Decimal, currency: &str) -> bool {
        let same = match &self.currency {
            Currency::Code(code) => code == currency,
            Currency::Any => true,
        };
        same && self.above.is_none_or(|edge| value > edge)
            && self.up_to.is_none_or(|edge| value <= edge)
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.above, self.up_to) {
            (None, None) => write!(f, "any amount in {}", self.currency),
            (Some(a), None) => write!(f, "above {a} {}", self.currency),
            (None, Some(u)) => write!(f, "up to {u} {}", self.currency),
            (Some(a), Some(u)) => write!(f, "above {a} and up to {u} {}", self.currency),
        }
    }
}

/// What a rule matches on. Each list left empty matches anything; a list
/// given holds when the request names at least one of its entries; all
/// lists given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conditions {
    /// The protocols the request may arrive by.
    pub protocols: Vec<Protocol>,
    /// Counterparties, as the host names them (an ANP vendor's name, a
    /// Concordia or OANP party, an ANEX counterparty's identity).
    pub counterparties: Vec<String>,
    /// SKUs (ANP line items, Concordia and OANP terms).
    pub skus: Vec<String>,
    /// Categories (the same places as SKUs).
    pub categories: Vec<String>,
    /// ANEX data items asked for.
    pub data_items: Vec<String>,
    /// Amount bands; the amount must lie in one of them. A request without
    /// an amount (an ANEX ask) never matches a rule that names bands.
    pub amounts: Vec<Band>,
}

/// How many holders of a role one step needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// Any one of them.
    One,
    /// This many distinct people (2 to [`MAX_COUNT`]).
    Count(u32),
    /// Every holder (at least one).
    All,
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::One => f.write_str("any one"),
            Need::Count(n) => write!(f, "{n}"),
            Need::All => f.write_str("all"),
        }
    }
}

/// One role's share of a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// The role.
    pub role: String,
    /// How many of its holders.
    pub need: Need,
}

/// One step of a chain: one part, or several decided in parallel (every
/// part must be met, in any order, before the next step opens).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The parts; more than one makes a parallel group.
    pub parts: Vec<Part>,
    /// How long the step may wait before it escalates, in minutes. Recorded
    /// now; escalation itself is later work (docs/authority.md, "Not yet").
    pub respond_within_minutes: Option<u32>,
    /// The role the step is offered to once its response time has passed.
    pub escalate_to: Option<String>,
}

/// The steps a request goes through, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chain {
    /// At least one.
    pub steps: Vec<Step>,
}

impl Chain {
    /// Every role the chain names (parts and escalations), once each.
    pub fn roles(&self) -> Vec<&str> {
        let mut roles: Vec<&str> = Vec::new();
        for step in &self.steps {
            let named = step.parts.iter().map(|p| p.role.as_str());
            for role in named.chain(step.escalate_to.as_deref()) {
                if !roles.contains(&role) {
                    roles.push(role);
                }
            }
        }
        roles
    }
}

/// A rule: when it matches, the chain it asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// What a person reads ("Hardware above 50,000 USD").
    pub name: String,
    /// When it fires.
    pub when: Conditions,
    /// What it asks for.
    pub chain: Chain,
}

/// Where a request goes when no rule is for it, and the sentence that says why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fallback {
    /// The admin's reason, shown with the route.
    pub reason: String,
    /// The chain.
    pub chain: Chain,
}

/// A whole policy of authority.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Role name to its holders.
    pub roles: BTreeMap<String, Holders>,
    /// The rules, matched in order; the first that matches fires.
    pub rules: Vec<Rule>,
    /// For an amount in a currency no rule's band names (never converted).
    pub unnamed_currency: Fallback,
    /// For a request no rule matches.
    pub no_rule: Fallback,
}

impl Policy {
    /// True when some rule's band is written in `currency` (or in any).
    pub fn names_currency(&self, currency: &str) -> bool {
        self.rules
            .iter()
            .flat_map(|r| &r.when.amounts)
            .any(|b| match &b.currency {
                Currency::Code(code) => code == currency,
                Currency::Any => true,
            })
    }
}
