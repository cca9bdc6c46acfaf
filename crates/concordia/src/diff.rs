//! The structured diff of two offers: per term added, removed or changed
//! (old → new), with the absolute and percent change of an amount when both
//! sides are money in one currency; conditions and bundles compared plainly.
//! Every amount keeps its currency; nothing is computed in floating point.

use std::collections::BTreeSet;

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Value;

use crate::offer::{Bundle, Condition, Money, Offer, OfferKind, TermValue, Terms};

/// How an amount moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmountChange {
    /// The old amount.
    pub old: Money,
    /// The new amount.
    pub new: Money,
    /// `new − old`, exact, in the shared currency; `None` when the currencies differ.
    pub delta: Option<Decimal>,
    /// `delta / old × 100`, rounded half-even to 2 places; `None` when the
    /// currencies differ or the old amount is zero.
    pub percent: Option<Decimal>,
}

/// One term's change.
#[derive(Debug, Clone, PartialEq)]
pub enum TermChange {
    /// Only in the new offer.
    Added(TermValue),
    /// Only in the old offer.
    Removed(TermValue),
    /// In both, different.
    Changed {
        /// Before.
        old: TermValue,
        /// After.
        new: TermValue,
        /// When both are money (boxed: most changes are not).
        amount: Option<Box<AmountChange>>,
        /// Better or worse for the buyer ([`term_effect`]), when the term
        /// has a direction.
        effect: Option<Effect>,
    },
}

/// What a change means for the buyer. Concordia's parties are peers, so
/// the side is named: every direction here is the buyer's (where the
/// organization sells, its better is the buyer's worse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The buyer is better off.
    Better,
    /// The buyer is worse off.
    Worse,
}

/// Which way a term's change goes for the buyer, one rule per kind of term:
/// - money in one currency (a price, a fee): lower is better;
/// - a warranty (`warranty`, `warranty_months`, a number): longer is better;
/// - payment terms written `Net N`: more days to pay is better;
/// - a delivery date (`delivery`, or any term with `"type": "date"`,
///   `YYYY-MM-DD`): earlier is better.
///
/// Every other term (quantity, item, free text) has no direction a buyer
/// agrees on, and gets none; nor does a change that cannot be compared.
pub fn term_effect(term: &str, old: &TermValue, new: &TermValue) -> Option<Effect> {
    use std::cmp::Ordering;
    let lower_is_better = |order: Ordering| match order {
        Ordering::Less => Some(Effect::Better),
        Ordering::Greater => Some(Effect::Worse),
        Ordering::Equal => None,
    };
    let higher_is_better = |order: Ordering| lower_is_better(order.reverse());
    if let (Some(o), Some(n)) = (&old.money, &new.money) {
        return (o.currency == n.currency)
            .then(|| lower_is_better(n.value.cmp(&o.value)))
            .flatten();
    }
    let id = term.to_ascii_lowercase();
    if id.contains("warranty") {
        let (o, n) = (number(&old.value)?, number(&new.value)?);
        return higher_is_better(n.cmp(&o));
    }
    if id.contains("payment") {
        let (o, n) = (net_days(&old.value)?, net_days(&new.value)?);
        return higher_is_better(n.cmp(&o));
    }
    let dated = |t: &TermValue| t.extra.get("type").and_then(Value::as_str) == Some("date");
    if id.contains("delivery") || dated(old) || dated(new) {
        let (o, n) = (date(&old.value)?, date(&new.value)?);
        return lower_is_better(n.cmp(&o));
    }
    None
}

fn number(v: &Value) -> Option<Decimal> {
    match v {
        Value::Number(n) => n.to_string().parse().ok(),
        _ => None,
    }
}

/// `Net 30` (any case, spaces around) → 30.
fn net_days(v: &Value) -> Option<u32> {
    let text = v.as_str()?.trim();
    let (word, days) = text.split_at(text.find(|c: char| c.is_ascii_digit())?);
    word.trim().eq_ignore_ascii_case("net").then_some(())?;
    days.trim().parse().ok()
}

/// A calendar date `YYYY-MM-DD` (or the date part of an RFC 3339 time).
fn date(v: &Value) -> Option<time::Date> {
    let text = v.as_str()?;
    let day = text.get(..10)?;
    time::Date::parse(
        day,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .ok()
}

/// A term id and its change.
#[derive(Debug, Clone, PartialEq)]
pub struct TermDiff {
    /// The term id.
    pub term: String,
    /// How it changed.
    pub change: TermChange,
}

/// A condition's change, by position.
#[derive(Debug, Clone, PartialEq)]
pub enum ConditionChange {
    /// A clause only the new offer has, at this position.
    Added(usize, Condition),
    /// A clause only the old offer had.
    Removed(usize, Condition),
    /// The clause at this position differs.
    Changed {
        /// Position.
        index: usize,
        /// Whether the `if` part changed.
        when_changed: bool,
        /// The `then` terms' changes.
        then: Vec<TermDiff>,
    },
}

/// A bundle's change, matched by `bundle_id`.
#[derive(Debug, Clone, PartialEq)]
pub enum BundleChange {
    /// Only in the new offer.
    Added(Bundle),
    /// Only in the old offer.
    Removed(Bundle),
    /// In both, different.
    Changed {
        /// The bundle id.
        bundle_id: String,
        /// Old and new label when they differ.
        label: Option<(Option<String>, Option<String>)>,
        /// Its terms' changes.
        terms: Vec<TermDiff>,
    },
}

/// The whole diff.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OfferDiff {
    /// `(old, new)` shape names when the shape changed (`basic` → `conditional`).
    pub kind: Option<(&'static str, &'static str)>,
    /// Term changes (basic and partial offers, and across shapes the top-level terms).
    pub terms: Vec<TermDiff>,
    /// Open terms newly left open / newly settled.
    pub open_terms: (Vec<String>, Vec<String>),
    /// Condition changes.
    pub conditions: Vec<ConditionChange>,
    /// Bundle changes.
    pub bundles: Vec<BundleChange>,
    /// `(old, new)` `valid_until` when it changed.
    pub valid_until: Option<(Option<String>, Option<String>)>,
}

impl OfferDiff {
    /// True when the offers are the same.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none()
            && self.terms.is_empty()
            && self.open_terms.0.is_empty()
            && self.open_terms.1.is_empty()
            && self.conditions.is_empty()
            && self.bundles.is_empty()
            && self.valid_until.is_none()
    }
}

fn amount_change(old: &TermValue, new: &TermValue) -> Option<Box<AmountChange>> {
    let (o, n) = (old.money.as_ref()?, new.money.as_ref()?);
    let same = o.currency == n.currency;
    let delta = same.then(|| n.value - o.value);
    let percent = match delta {
        Some(d) if !o.value.is_zero() => d
            .checked_mul(Decimal::ONE_HUNDRED)
            .and_then(|x| x.checked_div(o.value))
            .map(|p| p.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven)),
        _ => None,
    };
    Some(Box::new(AmountChange {
        old: o.clone(),
        new: n.clone(),
        delta,
        percent,
    }))
}

fn same_term(a: &TermValue, b: &TermValue) -> bool {
    match (&a.money, &b.money) {
        // 150 and 150.00 are the same amount.
        (Some(x), Some(y)) => x == y && a.extra == b.extra,
        _ => a.value == b.value && a.extra == b.extra,
    }
}

/// The per-term diff of two term maps.
pub fn diff_terms(old: &Terms, new: &Terms) -> Vec<TermDiff> {
    let ids: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    ids.into_iter()
        .filter_map(|id| {
            let change = match (old.get(id), new.get(id)) {
                (None, Some(n)) => TermChange::Added(n.clone()),
                (Some(o), None) => TermChange::Removed(o.clone()),
                (Some(o), Some(n)) if !same_term(o, n) => TermChange::Changed {
                    old: o.clone(),
                    new: n.clone(),
                    amount: amount_change(o, n),
                    effect: term_effect(id, o, n),
                },
                _ => return None,
            };
            Some(TermDiff {
                term: id.clone(),
                change,
            })
        })
        .collect()
}

fn top_terms(kind: &OfferKind) -> Option<&Terms> {
    match kind {
        OfferKind::Basic { terms } | OfferKind::Partial { terms, .. } => Some(terms),
        _ => None,
    }
}

/// The diff from `old` to `new`.
pub fn diff_offers(old: &Offer, new: &Offer) -> OfferDiff {
    let mut d = OfferDiff::default();
    if old.kind.name() != new.kind.name() {
        d.kind = Some((old.kind.name(), new.kind.name()));
    }
    let empty = Terms::new();
    if top_terms(&old.kind).is_some() || top_terms(&new.kind).is_some() {
        d.terms = diff_terms(
            top_terms(&old.kind).unwrap_or(&empty),
            top_terms(&new.kind).unwrap_or(&empty),
        );
    }
    let open = |k: &OfferKind| match k {
        OfferKind::Partial { open_terms, .. } => {
            open_terms.iter().cloned().collect::<BTreeSet<_>>()
        }
        _ => BTreeSet::new(),
    };
    let (oo, no) = (open(&old.kind), open(&new.kind));
    d.open_terms = (
        no.difference(&oo).cloned().collect(),
        oo.difference(&no).cloned().collect(),
    );
    let conds = |k: &OfferKind| match k {
        OfferKind::Conditional { conditions } => conditions.clone(),
        _ => Vec::new(),
    };
    let (oc, nc) = (conds(&old.kind), conds(&new.kind));
    for i in 0..oc.len().max(nc.len()) {
        match (oc.get(i), nc.get(i)) {
            (Some(o), Some(n)) if o != n => d.conditions.push(ConditionChange::Changed {
                index: i,
                when_changed: o.when != n.when,
                then: diff_terms(&o.then, &n.then),
            }),
            (None, Some(n)) => d.conditions.push(ConditionChange::Added(i, n.clone())),
            (Some(o), None) => d.conditions.push(ConditionChange::Removed(i, o.clone())),
            _ => {}
        }
    }
    let bundles = |k: &OfferKind| match k {
        OfferKind::Bundle { bundles, .. } => bundles.clone(),
        _ => Vec::new(),
    };
    let (ob, nb) = (bundles(&old.kind), bundles(&new.kind));
    for o in &ob {
        match nb.iter().find(|n| n.bundle_id == o.bundle_id) {
            None => d.bundles.push(BundleChange::Removed(o.clone())),
            Some(n) => {
                let terms = diff_terms(&o.terms, &n.terms);
                let label = (o.label != n.label).then(|| (o.label.clone(), n.label.clone()));
                if !terms.is_empty() || label.is_some() {
                    d.bundles.push(BundleChange::Changed {
                        bundle_id: o.bundle_id.clone(),
                        label,
                        terms,
                    });
                }
            }
        }
    }
    for n in &nb {
        if !ob.iter().any(|o| o.bundle_id == n.bundle_id) {
            d.bundles.push(BundleChange::Added(n.clone()));
        }
    }
    if !same_deadline(old.valid_until.as_deref(), new.valid_until.as_deref()) {
        d.valid_until = Some((old.valid_until.clone(), new.valid_until.clone()));
    }
    d
}

/// How far apart two `valid_until` instants must be to count as a change:
/// a deadline a person acts on is read to the second, and an agent
/// stamping milliseconds (`…35.068Z` then `…35.073Z`) moved no deadline.
pub const DEADLINE_RESOLUTION: time::Duration = time::Duration::SECOND;

/// Two deadlines are the same when both are absent, equal as text, or
/// RFC 3339 instants less than [`DEADLINE_RESOLUTION`] apart.
fn same_deadline(old: Option<&str>, new: Option<&str>) -> bool {
    use time::format_description::well_known::Rfc3339;
    use time::OffsetDateTime;
    match (old, new) {
        (Some(a), Some(b)) => match (
            OffsetDateTime::parse(a, &Rfc3339),
            OffsetDateTime::parse(b, &Rfc3339),
        ) {
            (Ok(a), Ok(b)) => (a - b).abs() < DEADLINE_RESOLUTION,
            _ => a == b,
        },
        (a, b) => a == b,
    }
}

/// A one-line text of a term value, for reports (`150.00 USD`, `"shipping"`).
pub fn describe(term: &TermValue) -> String {
    match &term.money {
        Some(m) => format!("{} {}", m.value, m.currency),
        None => match &term.value {
            Value::String(s) => format!("{s:?}"),
            other => jcs::to_string(other),
        },
    }
}
