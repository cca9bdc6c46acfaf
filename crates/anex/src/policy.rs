//! The owner's pre-set policy (§6.1: "require owner confirmation for terms
//! beyond the owner's pre-set policy"): which access items may be shared,
//! with whom, under which promises, and which promises the owner's own
//! agent may make. A JSON file the admin loads; its format is documented in
//! the crate README and docs/anex-binding.md.
//!
//! [`Policy::evaluate_request`] judges what a counterparty asks (a CFP, or
//! its own counter) item by item: within policy (and under which rule), or
//! needs the owner (and why). [`Policy::evaluate_proposal`] judges what
//! comes back when the owner's agent is the one asking.

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use time::{Duration, OffsetDateTime};

use crate::json::read_strict;
use crate::limits::{MAX_POLICY_BYTES, MAX_POLICY_RULES, MAX_PROMISES, MAX_TERMS_VALID_DAYS};

/// How long an ask waits for the owner when the policy does not say (or
/// no policy is loaded): three days.
pub const DEFAULT_DECIDE_WITHIN_HOURS: u32 = 72;
/// The longest an ask may wait for the owner: thirty days.
pub const MAX_DECIDE_WITHIN_HOURS: u32 = 720;

/// When an ask that arrived at `asked_at` stops waiting for the owner,
/// under `policy` (or the default, with none loaded).
pub fn decision_deadline(policy: Option<&Policy>, asked_at: OffsetDateTime) -> OffsetDateTime {
    let hours = policy.map_or(DEFAULT_DECIDE_WITHIN_HOURS, |p| p.decide_within_hours);
    asked_at + Duration::hours(i64::from(hours))
}
use crate::rules::{check_counter, Rejection};
use crate::term::{AccessItem, Terms};
use crate::text::{join_promises, quote, AgentId, ItemName, Promise, Text};

/// The value of `anex_policy` this crate reads.
pub const POLICY_VERSION: u32 = 1;

/// Why a policy file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Not JSON of the policy's shape (serde's words, with line and column).
    #[error("the ANEX policy is not readable: {0}")]
    Json(String),
    /// JSON of the right shape with a value that breaks a rule.
    #[error("the ANEX policy is not valid: {0}")]
    Invalid(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    anex_policy: u32,
    terms_valid_days: u32,
    #[serde(default)]
    decide_within_hours: Option<u32>,
    rules: Vec<RawRule>,
    #[serde(default)]
    may_promise: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    items: Vec<String>,
    #[serde(default)]
    anyone: bool,
    #[serde(default)]
    relations: Vec<String>,
    #[serde(default)]
    identities: Vec<String>,
    #[serde(default)]
    promises: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

/// Whom a rule shares with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Audience {
    /// Any authenticated counterparty.
    Anyone,
    /// Counterparties with one of these relations or identities.
    Only {
        /// Relations (as the admin registered them for the counterparty).
        relations: Vec<Text>,
        /// Agent identities.
        identities: Vec<AgentId>,
    },
}

impl fmt::Display for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Anyone => f.write_str("anyone"),
            Self::Only {
                relations,
                identities,
            } => {
                let mut who: Vec<String> = relations
                    .iter()
                    .map(|r| format!("relation {:?}", r.as_str()))
                    .collect();
                who.extend(identities.iter().map(|i| i.to_string()));
                f.write_str(&who.join(" or "))
            }
        }
    }
}

/// One rule: these items, to this audience, under these promises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRule {
    /// The items it shares.
    pub items: Vec<ItemName>,
    /// With whom.
    pub audience: Audience,
    /// The promises the terms must contain for the rule to apply.
    pub promises: Vec<Promise>,
}

/// The owner's policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// How long accepted terms stay in force, in days from the decision.
    pub terms_valid_days: u32,
    /// How long an ask waits for the owner's decision, in hours from its
    /// arrival; past it the requester is refused ("no one decided in time").
    pub decide_within_hours: u32,
    /// The rules, in file order (numbered from 1 in reasons).
    pub rules: Vec<PolicyRule>,
    /// Promises the owner's own agent may make without asking the owner.
    pub may_promise: Vec<Promise>,
}

/// The counterparty as the host knows it: its authenticated identity and
/// the relation the admin registered for it. The relation a CFP declares is
/// the counterparty's own claim: it is shown to the owner, and never widens
/// what the policy shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterparty {
    /// The authenticated agent identity.
    pub identity: AgentId,
    /// The relation registered for it, if any.
    pub relation: Option<Text>,
}

/// The policy's verdict on one access item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemVerdict {
    /// The item as asked (with its mark).
    pub item: AccessItem,
    /// The rule (index into [`Policy::rules`]) that covers it, if any.
    pub rule: Option<usize>,
    /// Promises that rule needs which the terms do not contain; the policy's
    /// own proposal asks for them.
    pub adds: Vec<Promise>,
    /// Why, in one sentence, for the owner.
    pub reason: String,
}

impl ItemVerdict {
    /// Whether the policy covers the item (possibly by asking promises).
    pub fn within_policy(&self) -> bool {
        self.rule.is_some()
    }
}

/// The policy's verdict on a set of asked terms, item by item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    /// One verdict per asked item, in the asked order.
    pub items: Vec<ItemVerdict>,
}

impl Evaluation {
    /// Whether every item is within policy: then the host answers on its
    /// own with [`Self::proposal`]; otherwise the owner decides.
    pub fn within_policy(&self) -> bool {
        self.items.iter().all(ItemVerdict::within_policy)
    }

    /// The items that need the owner.
    pub fn needs_owner(&self) -> impl Iterator<Item = &ItemVerdict> {
        self.items.iter().filter(|v| !v.within_policy())
    }

    /// The proposal the policy makes when everything is within it: every
    /// asked item (unmarked), and the asked promises plus those the rules
    /// need. `None` when an item needs the owner.
    pub fn proposal(&self, asked: &Terms) -> Option<Terms> {
        if !self.within_policy() {
            return None;
        }
        let mut promise = asked.promise.clone();
        for add in self.items.iter().flat_map(|v| &v.adds) {
            if !promise.contains(add) {
                promise.push(add.clone());
            }
        }
        Some(Terms {
            access: asked.unmarked().access,
            promise,
        })
    }
}

/// The policy's verdict on a proposal made to the owner's own agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProposalVerdict {
    /// Within policy: answer `ACCEPT-PROPOSAL`.
    Accept,
    /// The rules of §4.4 reject it: answer `REJECT-PROPOSAL` with the reason.
    Reject(Rejection),
    /// It asks promises the owner's agent may not make alone: the owner decides.
    NeedsOwner {
        /// Each such promise, with why.
        promises: Vec<(Promise, String)>,
    },
}

fn invalid(path: String, what: impl fmt::Display) -> PolicyError {
    PolicyError::Invalid(format!("{path}: {what}"))
}

impl Policy {
    /// Reads a policy file (JSON, at most [`MAX_POLICY_BYTES`], no unknown
    /// or duplicate members).
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        read_strict(text.as_bytes(), MAX_POLICY_BYTES, 8)
            .map_err(|e| PolicyError::Json(format!("the file {e}")))?;
        let raw: RawPolicy =
            serde_json::from_str(text).map_err(|e| PolicyError::Json(e.to_string()))?;
        if raw.anex_policy != POLICY_VERSION {
            return Err(invalid(
                "anex_policy".into(),
                format!(
                    "version {} is not one this host reads (only {POLICY_VERSION})",
                    raw.anex_policy
                ),
            ));
        }
        if raw.terms_valid_days == 0 || raw.terms_valid_days > MAX_TERMS_VALID_DAYS {
            return Err(invalid(
                "terms_valid_days".into(),
                format!("must be 1 to {MAX_TERMS_VALID_DAYS}"),
            ));
        }
        let decide_within_hours = raw
            .decide_within_hours
            .unwrap_or(DEFAULT_DECIDE_WITHIN_HOURS);
        if decide_within_hours == 0 || decide_within_hours > MAX_DECIDE_WITHIN_HOURS {
            return Err(invalid(
                "decide_within_hours".into(),
                format!("must be 1 to {MAX_DECIDE_WITHIN_HOURS}"),
            ));
        }
        if raw.rules.len() > MAX_POLICY_RULES {
            return Err(invalid(
                "rules".into(),
                format!("more than {MAX_POLICY_RULES} rules"),
            ));
        }
        let promise_list = |path: String, list: &[String]| -> Result<Vec<Promise>, PolicyError> {
            if list.len() > MAX_PROMISES {
                return Err(invalid(path, format!("more than {MAX_PROMISES} promises")));
            }
            let mut out: Vec<Promise> = Vec::new();
            for (i, p) in list.iter().enumerate() {
                let promise = Promise::parse(p).map_err(|why| {
                    invalid(format!("{path}[{i}]"), format!("{} {why}", quote(p)))
                })?;
                if out.contains(&promise) {
                    return Err(invalid(format!("{path}[{i}]"), "appears twice"));
                }
                out.push(promise);
            }
            Ok(out)
        };
        let mut rules = Vec::with_capacity(raw.rules.len());
        for (n, r) in raw.rules.iter().enumerate() {
            let path = format!("rules[{n}]");
            if r.items.is_empty() {
                return Err(invalid(format!("{path}.items"), "names no item"));
            }
            let mut items = Vec::new();
            for (i, s) in r.items.iter().enumerate() {
                let name = ItemName::parse(s).map_err(|why| {
                    invalid(format!("{path}.items[{i}]"), format!("{} {why}", quote(s)))
                })?;
                if items.contains(&name) {
                    return Err(invalid(format!("{path}.items[{i}]"), "appears twice"));
                }
                items.push(name);
            }
            let relations = r
                .relations
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    Text::parse(s).map_err(|why| {
                        invalid(
                            format!("{path}.relations[{i}]"),
                            format!("{} {why}", quote(s)),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let identities = r
                .identities
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    AgentId::parse(s).map_err(|why| {
                        invalid(
                            format!("{path}.identities[{i}]"),
                            format!("{} {why}", quote(s)),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let audience = match (r.anyone, relations.is_empty() && identities.is_empty()) {
                (true, true) => Audience::Anyone,
                (true, false) => {
                    return Err(invalid(
                        path,
                        "says anyone and also names relations or identities; choose one",
                    ))
                }
                (false, true) => {
                    return Err(invalid(
                        path,
                        "names no one: set \"anyone\": true, or list relations or identities",
                    ))
                }
                (false, false) => Audience::Only {
                    relations,
                    identities,
                },
            };
            rules.push(PolicyRule {
                items,
                audience,
                promises: promise_list(format!("{path}.promises"), &r.promises)?,
            });
        }
        Ok(Self {
            terms_valid_days: raw.terms_valid_days,
            decide_within_hours,
            rules,
            may_promise: promise_list("may_promise".into(), &raw.may_promise)?,
        })
    }

    /// When an ask that arrived at `asked_at` stops waiting for the owner.
    pub fn decision_deadline(&self, asked_at: OffsetDateTime) -> OffsetDateTime {
        decision_deadline(Some(self), asked_at)
    }

    /// Until when terms decided at `decided_at` stay in force.
    pub fn terms_valid_until(&self, decided_at: OffsetDateTime) -> OffsetDateTime {
        decided_at + Duration::days(i64::from(self.terms_valid_days))
    }

    fn serves(audience: &Audience, who: &Counterparty) -> bool {
        match audience {
            Audience::Anyone => true,
            Audience::Only {
                relations,
                identities,
            } => {
                identities.contains(&who.identity)
                    || who.relation.as_ref().is_some_and(|r| relations.contains(r))
            }
        }
    }

    /// Judges the terms `who` asks for, item by item. An item is within
    /// policy when a rule names it, serves `who`, and its promises are in
    /// `asked` or can be asked for; among several such rules the one that
    /// needs the fewest added promises wins (the first, on a tie).
    pub fn evaluate_request(&self, who: &Counterparty, asked: &Terms) -> Evaluation {
        let mut items: Vec<ItemVerdict> = asked
            .access
            .iter()
            .map(|item| self.evaluate_item(who, asked, item))
            .collect();
        let adds: BTreeSet<&Promise> = items.iter().flat_map(|v| &v.adds).collect();
        if asked.promise.len() + adds.len() > MAX_PROMISES {
            // The policy's own proposal could not carry every promise its
            // rules need: nothing that needs one is within policy then.
            for v in items.iter_mut().filter(|v| !v.adds.is_empty()) {
                v.rule = None;
                v.reason = format!(
                    "{}, but the answer would then carry more than {MAX_PROMISES} promises",
                    v.reason
                );
                v.adds.clear();
            }
        }
        Evaluation { items }
    }

    fn evaluate_item(&self, who: &Counterparty, asked: &Terms, item: &AccessItem) -> ItemVerdict {
        let naming: Vec<(usize, &PolicyRule)> = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.items.contains(&item.name))
            .collect();
        let best = naming
            .iter()
            .filter(|(_, r)| Self::serves(&r.audience, who))
            .map(|(n, r)| {
                let adds: Vec<Promise> = r
                    .promises
                    .iter()
                    .filter(|p| !asked.has_promise(p))
                    .cloned()
                    .collect();
                (*n, *r, adds)
            })
            .min_by_key(|(n, _, adds)| (adds.len(), *n));
        match best {
            Some((n, rule, adds)) => {
                let mut reason =
                    format!("rule {} shares {} with {}", n + 1, item.name, rule.audience);
                if !rule.promises.is_empty() {
                    reason.push_str(&format!(" under {}", join_promises(&rule.promises)));
                }
                if !adds.is_empty() {
                    reason.push_str(&format!(
                        "; the request does not offer {}, so the answer asks for it",
                        join_promises(&adds)
                    ));
                }
                ItemVerdict {
                    item: item.clone(),
                    rule: Some(n),
                    adds,
                    reason,
                }
            }
            None if naming.is_empty() => ItemVerdict {
                item: item.clone(),
                rule: None,
                adds: Vec::new(),
                reason: format!("no rule of the policy shares {}", item.name),
            },
            None => {
                let audiences: Vec<String> = naming
                    .iter()
                    .map(|(n, r)| format!("rule {} with {}", n + 1, r.audience))
                    .collect();
                let relation = who
                    .relation
                    .as_ref()
                    .map(|r| format!("relation {:?}", r.as_str()))
                    .unwrap_or_else(|| "no relation registered".into());
                ItemVerdict {
                    item: item.clone(),
                    rule: None,
                    adds: Vec::new(),
                    reason: format!(
                        "{} is shared only by {}; this counterparty is {} ({relation})",
                        item.name,
                        audiences.join(", "),
                        who.identity
                    ),
                }
            }
        }
    }

    /// Judges a `proposal` made to the owner's own agent, which asked
    /// `our_ask` (with marks): rejected by §4.4's rules, accepted when every
    /// promise it asks is one the agent offered or [`Self::may_promise`]
    /// lists, and otherwise left to the owner.
    pub fn evaluate_proposal(&self, our_ask: &Terms, proposal: &Terms) -> ProposalVerdict {
        if let Err(rejection) = check_counter(our_ask, proposal) {
            return ProposalVerdict::Reject(rejection);
        }
        let allowed: BTreeSet<&Promise> = our_ask.promise.iter().chain(&self.may_promise).collect();
        let promises: Vec<(Promise, String)> = proposal
            .promise
            .iter()
            .filter(|p| !allowed.contains(p))
            .map(|p| {
                (
                    p.clone(),
                    format!(
                        "the proposal asks the owner's agent to promise {:?}, which the request did not offer and the policy's may_promise does not list",
                        p.as_str()
                    ),
                )
            })
            .collect();
        if promises.is_empty() {
            ProposalVerdict::Accept
        } else {
            ProposalVerdict::NeedsOwner { promises }
        }
    }
}
