//! Offers of SPEC §6: basic, partial, conditional and bundle, with every
//! amount an exact decimal (never a float) that keeps its currency.

use std::collections::BTreeMap;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::json::{Json, Object};

/// What is wrong with an offer body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OfferError {
    /// A member has the wrong type.
    #[error("{member} {why}")]
    Invalid {
        /// A JSON pointer into the body.
        member: String,
        /// What is wrong.
        why: String,
    },
    /// None of `terms`, `conditions` or `bundles`.
    #[error("the offer has no terms, conditions or bundles")]
    Empty,
}

fn invalid(member: impl Into<String>, why: &str) -> OfferError {
    OfferError::Invalid {
        member: member.into(),
        why: why.to_owned(),
    }
}

/// An exact amount of money: a decimal and its currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Money {
    /// Exact: read from the number's shortest decimal text, never through float arithmetic.
    pub value: Decimal,
    /// The currency as written (`USD`).
    pub currency: String,
}

/// Reads a JSON number or a decimal string exactly.
pub fn exact_decimal(value: &Value) -> Option<Decimal> {
    match value {
        Value::Number(n) => {
            // The number's own digits: integers as written, doubles as their
            // shortest round-trip text (what JCS signs).
            let text = if n.is_i64() || n.is_u64() {
                n.to_string()
            } else {
                jcs::format_number(n)
            };
            Decimal::from_str_exact(&text)
                .ok()
                .or_else(|| Decimal::from_scientific(&text).ok())
        }
        Value::String(s) => {
            let s = s.trim();
            if s.is_empty()
                || !s
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
            {
                return None;
            }
            Decimal::from_str(s).ok()
        }
        _ => None,
    }
}

/// One term's value in an offer (`{"value": 150.00, "currency": "USD"}`).
#[derive(Debug, Clone, PartialEq)]
pub struct TermValue {
    /// The value as sent.
    pub value: Value,
    /// When the term carries a `currency` and a numeric value: the exact amount.
    pub money: Option<Money>,
    /// Every other member (`enum`, `type`, `unit`, …), kept as sent.
    pub extra: Map<String, Value>,
}

impl TermValue {
    /// Reads a term. A bare value (`"shipping"`) is taken as `{"value": …}`.
    pub fn parse(value: &Value) -> TermValue {
        let Value::Object(obj) = value else {
            return TermValue {
                value: value.clone(),
                money: None,
                extra: Map::new(),
            };
        };
        let mut extra = obj.clone();
        let inner = extra.remove("value").unwrap_or(Value::Null);
        let currency = extra
            .get("currency")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let money = match (&currency, exact_decimal(&inner)) {
            (Some(c), Some(d)) => Some(Money {
                value: d,
                currency: c.clone(),
            }),
            _ => None,
        };
        TermValue {
            value: inner,
            money,
            extra,
        }
    }
}

/// Term id → value, in id order.
pub type Terms = BTreeMap<String, TermValue>;

/// One if/then clause of a conditional offer (§6.3).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The term values the clause applies to.
    pub when: Map<String, Value>,
    /// The terms it then offers.
    pub then: Terms,
}

/// One bundle of a bundle offer (§6.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// Its id, how bundles are matched across offers.
    pub bundle_id: String,
    /// Its label (data, shown as text).
    pub label: Option<String>,
    /// Its terms.
    pub terms: Terms,
}

/// The four shapes of §6.
#[derive(Debug, Clone, PartialEq)]
pub enum OfferKind {
    /// §6.1: values for the terms, `complete` true (or unstated).
    Basic {
        /// The terms.
        terms: Terms,
    },
    /// §6.2: some terms left open.
    Partial {
        /// The terms given.
        terms: Terms,
        /// The term ids left open.
        open_terms: Vec<String>,
    },
    /// §6.3: if/then clauses.
    Conditional {
        /// In order.
        conditions: Vec<Condition>,
    },
    /// §6.4: alternatives to choose from.
    Bundle {
        /// In order.
        bundles: Vec<Bundle>,
        /// How to choose (`one_of`).
        select: Option<String>,
    },
}

impl OfferKind {
    /// `basic`, `partial`, `conditional` or `bundle`.
    pub fn name(&self) -> &'static str {
        match self {
            OfferKind::Basic { .. } => "basic",
            OfferKind::Partial { .. } => "partial",
            OfferKind::Conditional { .. } => "conditional",
            OfferKind::Bundle { .. } => "bundle",
        }
    }
}

/// An offer as carried by `negotiate.offer` / `negotiate.counter`.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// Its id, when given.
    pub offer_id: Option<String>,
    /// Its shape and content.
    pub kind: OfferKind,
    /// Until when it stands (ISO 8601, as sent).
    pub valid_until: Option<String>,
    /// Whether it assigns every term.
    pub complete: Option<bool>,
}

/// What the state machine needs of an offer that passed [`check`].
pub(crate) struct OfferFacts<'v> {
    /// Until when it stands, as sent.
    pub valid_until: Option<&'v str>,
}

/// The rules of an offer body (§6), over any JSON view, in the order the
/// errors are reported: what [`Offer::parse`] refuses, without building it.
pub(crate) fn check<O: Object + ?Sized>(body: &O) -> Result<OfferFacts<'_>, OfferError> {
    let opt = |name: &str, ok: fn(&O::Item) -> bool, why: &str| match body.get(name) {
        Some(v) if !v.is_null() && !ok(v) => Err(invalid(format!("/{name}"), why)),
        _ => Ok(()),
    };
    opt("offer_id", |v| v.as_str().is_some(), "is not a string")?;
    opt("valid_until", |v| v.as_str().is_some(), "is not a string")?;
    opt("complete", |v| v.as_bool().is_some(), "is not a boolean")?;
    let terms = |value: Option<&O::Item>, member: &str| match value {
        Some(v) if !v.is_null() && v.as_object().is_none() => {
            Err(invalid(member, "is not an object"))
        }
        _ => Ok(()),
    };
    if let Some(bundles) = body.get("bundles") {
        let items = bundles
            .as_array()
            .ok_or_else(|| invalid("/bundles", "is not an array"))?;
        for (i, b) in items.iter().enumerate() {
            let obj = b
                .as_object()
                .ok_or_else(|| invalid(format!("/bundles/{i}"), "is not an object"))?;
            if obj.get("bundle_id").and_then(Json::as_str).is_none() {
                return Err(invalid(
                    format!("/bundles/{i}/bundle_id"),
                    "is missing or not a string",
                ));
            }
            terms(obj.get("terms"), &format!("/bundles/{i}/terms"))?;
        }
    } else if let Some(conditions) = body.get("conditions") {
        let items = conditions
            .as_array()
            .ok_or_else(|| invalid("/conditions", "is not an array"))?;
        for (i, c) in items.iter().enumerate() {
            if c.get("if").and_then(Json::as_object).is_none() {
                return Err(invalid(
                    format!("/conditions/{i}/if"),
                    "is missing or not an object",
                ));
            }
            terms(c.get("then"), &format!("/conditions/{i}/then"))?;
        }
    } else if body.contains_key("terms") {
        terms(body.get("terms"), "/terms")?;
        if let Some(v) = body.get("open_terms") {
            match v.as_array() {
                Some(items) if items.iter().all(|i| i.as_str().is_some()) => {}
                Some(_) => return Err(invalid("/open_terms", "holds a non-string")),
                None => return Err(invalid("/open_terms", "is not an array")),
            }
        }
    } else {
        return Err(OfferError::Empty);
    }
    Ok(OfferFacts {
        valid_until: body.get("valid_until").and_then(Json::as_str),
    })
}

fn owned_terms(value: Option<&Value>) -> Terms {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), TermValue::parse(v)))
                .collect()
        })
        .unwrap_or_default()
}

impl Offer {
    /// Reads an offer from a message body.
    pub fn parse(body: &Map<String, Value>) -> Result<Offer, OfferError> {
        check(body)?;
        Ok(Offer::build(body))
    }

    /// The typed offer of a body that passed [`check`].
    pub(crate) fn build(body: &Map<String, Value>) -> Offer {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let complete = body.get("complete").and_then(Value::as_bool);
        let kind = if let Some(bundles) = body.get("bundles") {
            OfferKind::Bundle {
                bundles: bundles
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_object)
                    .map(|obj| Bundle {
                        bundle_id: text(obj.get("bundle_id")).unwrap_or_default(),
                        label: text(obj.get("label")),
                        terms: owned_terms(obj.get("terms")),
                    })
                    .collect(),
                select: text(body.get("select")),
            }
        } else if let Some(conditions) = body.get("conditions") {
            OfferKind::Conditional {
                conditions: conditions
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| Condition {
                        when: c
                            .get("if")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default(),
                        then: owned_terms(c.get("then")),
                    })
                    .collect(),
            }
        } else {
            let terms = owned_terms(body.get("terms"));
            match body.get("open_terms").and_then(Value::as_array) {
                Some(items) => OfferKind::Partial {
                    terms,
                    open_terms: items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_owned))
                        .collect(),
                },
                None if complete == Some(false) => OfferKind::Partial {
                    terms,
                    open_terms: Vec::new(),
                },
                None => OfferKind::Basic { terms },
            }
        };
        Offer {
            offer_id: text(body.get("offer_id")),
            kind,
            valid_until: text(body.get("valid_until")),
            complete,
        }
    }
}
