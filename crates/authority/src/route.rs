//! Routing: the facts of one request in, the rule that fired, the reason a
//! person reads and the chain out. The result is a [`Route`], which the host
//! stores with the request: it carries the holders of every role it names,
//! so a later policy never reroutes a request already asked.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::policy::{Band, Chain, Holders, Policy, Protocol};

/// An exact amount in one currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Money {
    /// The value.
    #[serde(with = "rust_decimal::serde::str")]
    pub value: Decimal,
    /// ISO 4217 code.
    pub currency: String,
}

impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.value, self.currency)
    }
}

/// What the host knows about a request when it routes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// How it arrived.
    pub protocol: Protocol,
    /// The counterparty, as the host names it.
    pub counterparty: Option<String>,
    /// SKUs it names.
    pub skus: Vec<String>,
    /// Categories it names.
    pub categories: Vec<String>,
    /// ANEX data items it asks for.
    pub data_items: Vec<String>,
    /// Its amount, when it has one (an ANEX ask has none).
    pub amount: Option<Money>,
}

impl Facts {
    /// Facts naming only the protocol and the amount.
    pub fn new(protocol: Protocol, amount: Option<Money>) -> Facts {
        Facts {
            protocol,
            counterparty: None,
            skus: Vec::new(),
            categories: Vec::new(),
            data_items: Vec::new(),
            amount,
        }
    }
}

/// Why a request got its chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fired {
    /// A rule matched.
    Rule {
        /// Its place in the policy, counted from 1.
        number: usize,
        /// Its name.
        name: String,
    },
    /// The amount's currency is named by no rule.
    UnnamedCurrency,
    /// No rule matched.
    NoRule,
}

/// The route a request was given: kept with the request, whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// What fired.
    pub fired: Fired,
    /// The sentence a person reads ("Hardware above 50,000 USD: rule 3";
    /// "EUR is named by no rule: fallback (…)").
    pub reason: String,
    /// The chain to go through.
    pub chain: Chain,
    /// The lower edge of the band that matched, in the request's currency:
    /// the threshold the request crossed (an ApprovalReceipt's
    /// `threshold_crossed`); none when the band starts at zero or no band
    /// decided.
    pub threshold: Option<Money>,
    /// The holders of every role the chain names, as the policy said when
    /// the request was routed.
    pub holders: BTreeMap<String, Holders>,
}

/// Routes a request: the first rule whose every condition holds fires; a
/// request none fits goes to a fallback, the unnamed-currency one when its
/// amount is in a currency no rule names (never converted), else the
/// no-rule one.
pub fn route(policy: &Policy, facts: &Facts) -> Route {
    for (i, rule) in policy.rules.iter().enumerate() {
        if let Some(band) = matches(&rule.when, facts) {
            let threshold = match (band, &facts.amount) {
                (Some(b), Some(amount)) => b.above.map(|edge| Money {
                    value: edge,
                    currency: amount.currency.clone(),
                }),
                _ => None,
            };
            return finish(
                policy,
                Fired::Rule {
                    number: i + 1,
                    name: rule.name.clone(),
                },
                format!("{}: rule {}", rule.name, i + 1),
                &rule.chain,
                threshold,
            );
        }
    }
    match &facts.amount {
        Some(amount) if !policy.names_currency(&amount.currency) => finish(
            policy,
            Fired::UnnamedCurrency,
            format!(
                "{} is named by no rule: fallback ({})",
                amount.currency, policy.unnamed_currency.reason
            ),
            &policy.unnamed_currency.chain,
            None,
        ),
        _ => finish(
            policy,
            Fired::NoRule,
            format!("No rule matches: fallback ({})", policy.no_rule.reason),
            &policy.no_rule.chain,
            None,
        ),
    }
}

fn finish(
    policy: &Policy,
    fired: Fired,
    reason: String,
    chain: &Chain,
    threshold: Option<Money>,
) -> Route {
    let holders = chain
        .roles()
        .into_iter()
        .filter_map(|r| policy.roles.get(r).map(|h| (r.to_owned(), h.clone())))
        .collect();
    Route {
        fired,
        reason,
        chain: chain.clone(),
        threshold,
        holders,
    }
}

/// `None` when the conditions do not hold; `Some(band)` when they do, with
/// the band the amount fell in if the rule names bands.
fn matches<'p>(when: &'p crate::policy::Conditions, facts: &Facts) -> Option<Option<&'p Band>> {
    let any = |wanted: &[String], given: &[String]| {
        wanted.is_empty() || given.iter().any(|g| wanted.contains(g))
    };
    let protocol = when.protocols.is_empty() || when.protocols.contains(&facts.protocol);
    let counterparty = when.counterparties.is_empty()
        || facts
            .counterparty
            .as_ref()
            .is_some_and(|c| when.counterparties.contains(c));
    if !(protocol
        && counterparty
        && any(&when.skus, &facts.skus)
        && any(&when.categories, &facts.categories)
        && any(&when.data_items, &facts.data_items))
    {
        return None;
    }
    if when.amounts.is_empty() {
        return Some(None);
    }
    let amount = facts.amount.as_ref()?;
    when.amounts
        .iter()
        .find(|b| b.holds(amount.value, &amount.currency))
        .map(Some)
}
