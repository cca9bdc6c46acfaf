//! The structured diff of two offers, as the console shows an offer beside
//! the one it answers. Serializes exactly as `OfferDiff` in
//! `docs/console-contract.md`.
//!
//! Lines are matched by SKU where one is present (non-empty), by description
//! where it is absent; the k-th occurrence of a key in the old offer pairs
//! with its k-th occurrence in the new one. A matched line is `moved` only
//! when it must be: the matched lines on a longest increasing subsequence of
//! new positions (taken in old order) stay put, every other matched line
//! moved. So an item inserted at the top moves nothing, and swapping two
//! lines moves one.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::money::{self, offer_total, Money, Total};
use crate::payload::{LineItem, Offer};

/// What a change means for the buyer, the side an ANP host always takes
/// (ANP/0.1: vendor agents sell to the organization's buyer host).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// The buyer is better off.
    Better,
    /// The buyer is worse off.
    Worse,
}

/// The one direction rule of an ANP offer: a price (unit price or total)
/// that goes down is better for the buyer, up is worse, no move is neither.
/// Quantity, unit, term and currency have no direction a buyer agrees on
/// (more seats or a longer term may be wanted or not), so they get none.
pub fn price_effect(absolute: &Money) -> Option<Effect> {
    match absolute.decimal().cmp(&rust_decimal::Decimal::ZERO) {
        std::cmp::Ordering::Less => Some(Effect::Better),
        std::cmp::Ordering::Greater => Some(Effect::Worse),
        std::cmp::Ordering::Equal => None,
    }
}

/// Everything that differs between two offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferDiff {
    /// Set when the offer currency changed.
    pub currency: Option<Scalar>,
    /// Set when the term changed.
    pub term_months: Option<Scalar>,
    /// Set when the expiry moved by a second or more (see [`EXPIRY_RESOLUTION`]).
    pub expires_at: Option<Scalar>,
    /// Set when the notes changed (appeared, vanished or were edited). Notes
    /// are the sender's prose, not a term: shown apart from the terms.
    pub notes: Option<Scalar>,
    /// Conditions compared as multisets (an absent list is an empty one).
    pub conditions: ConditionsDiff,
    /// One row per line of either offer: new order, removed lines after their
    /// old predecessor.
    pub line_items: Vec<LineItemDiff>,
    /// The change of the offer's total.
    pub total: TotalChange,
}

/// An old and a new value, as text; `None` where a side has none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scalar {
    /// Before.
    pub old: Option<String>,
    /// After.
    pub new: Option<String>,
}

/// Conditions added, removed and kept, counted with multiplicity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionsDiff {
    /// In the new offer only (new order).
    pub added: Vec<String>,
    /// In the old offer only (old order).
    pub removed: Vec<String>,
    /// In both (new order).
    pub unchanged: Vec<String>,
}

/// What became of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineStatus {
    /// Only in the new offer.
    Added,
    /// Only in the old offer.
    Removed,
    /// In both, with some field changed.
    Changed,
    /// In both, identical.
    Unchanged,
}

/// One row of the line-item diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineItemDiff {
    /// Added, removed, changed or unchanged.
    pub status: LineStatus,
    /// True when the line changed place relative to the other matched lines.
    pub moved: bool,
    /// The SKU, or the description when SKU is absent.
    pub key: String,
    /// Position in the old offer.
    pub old_index: Option<usize>,
    /// Position in the new offer.
    pub new_index: Option<usize>,
    /// The old line.
    pub old: Option<LineItem>,
    /// The new line.
    pub new: Option<LineItem>,
    /// The changed fields; empty unless `status` is `changed`.
    pub fields: Vec<FieldChange>,
}

/// One changed field of a matched line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldChange {
    /// `sku`, `description`, `quantity`, `unit`, `unit_price`, `currency` or
    /// `term_months`: what the sender wrote. A line's total is derived from
    /// its quantity and unit price, so it is never a changed field of its own.
    pub field: String,
    /// Before, as text.
    pub old: Option<String>,
    /// After, as text.
    pub new: Option<String>,
    /// `new − old` for numeric fields with both sides present.
    pub absolute: Option<Money>,
    /// Percent change for numeric fields (see [`money::percent_change`]).
    pub percent: Option<String>,
    /// Better or worse for the buyer, for a field with a direction
    /// ([`price_effect`]: the unit price); `None` for the others.
    pub effect: Option<Effect>,
}

/// The change of an offer's total.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TotalChange {
    /// The old offer's total.
    pub old: Total,
    /// The new offer's total.
    pub new: Total,
    /// `new.amount − old.amount`.
    pub absolute: Money,
    /// Percent change of the amount; `None` when the old amount is zero or
    /// the currency changed (a percentage across currencies means nothing).
    pub percent: Option<String>,
    /// True when the two offers are in different currencies.
    pub currency_changed: bool,
    /// Better or worse for the buyer ([`price_effect`]); `None` when the
    /// total did not move or the currency changed (not comparable).
    pub effect: Option<Effect>,
}

/// Compares `old` with `new`.
pub fn diff_offers(old: &Offer, new: &Offer) -> OfferDiff {
    let old_total = offer_total(old);
    let new_total = offer_total(new);
    let currency_changed = old.currency != new.currency;
    let total_change = money::change(old_total.amount, new_total.amount);
    OfferDiff {
        currency: scalar(Some(&old.currency), Some(&new.currency)),
        term_months: scalar(
            Some(&old.term_months.to_string()),
            Some(&new.term_months.to_string()),
        ),
        expires_at: expiry_change(old, new),
        notes: scalar(old.notes.as_ref(), new.notes.as_ref()),
        conditions: diff_conditions(
            old.conditions.as_deref().unwrap_or_default(),
            new.conditions.as_deref().unwrap_or_default(),
        ),
        line_items: diff_lines(&old.line_items, &new.line_items),
        total: TotalChange {
            old: old_total,
            new: new_total,
            absolute: total_change.absolute,
            percent: if currency_changed {
                None
            } else {
                total_change.percent
            },
            currency_changed,
            effect: if currency_changed {
                None
            } else {
                price_effect(&total_change.absolute)
            },
        },
    }
}

fn scalar(old: Option<&String>, new: Option<&String>) -> Option<Scalar> {
    (old != new).then(|| Scalar {
        old: old.cloned(),
        new: new.cloned(),
    })
}

/// How far apart two expiries must be to count as a change: a deadline a
/// person acts on is read to the second, and a host stamping milliseconds
/// (`…35.068Z` then `…35.073Z`) moved no deadline.
pub const EXPIRY_RESOLUTION: time::Duration = time::Duration::SECOND;

/// The same instant written two ways, or two instants less than
/// [`EXPIRY_RESOLUTION`] apart, is no change.
fn expiry_change(old: &Offer, new: &Offer) -> Option<Scalar> {
    let same = match (old.expires_at_utc(), new.expires_at_utc()) {
        (Some(a), Some(b)) => (a - b).abs() < EXPIRY_RESOLUTION,
        _ => old.expires_at == new.expires_at,
    };
    (!same).then(|| Scalar {
        old: Some(old.expires_at.clone()),
        new: Some(new.expires_at.clone()),
    })
}

fn diff_conditions(old: &[String], new: &[String]) -> ConditionsDiff {
    let mut remaining: HashMap<&str, usize> = HashMap::new();
    for condition in old {
        *remaining.entry(condition).or_default() += 1;
    }
    let mut diff = ConditionsDiff::default();
    for condition in new {
        match remaining.get_mut(condition.as_str()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                diff.unchanged.push(condition.clone());
            }
            _ => diff.added.push(condition.clone()),
        }
    }
    // What is left over, in old order, was removed.
    for condition in old.iter().rev() {
        if let Some(count) = remaining.get_mut(condition.as_str()) {
            if *count > 0 {
                *count -= 1;
                diff.removed.push(condition.clone());
            }
        }
    }
    diff.removed.reverse();
    diff
}

/// How lines are matched: SKU and description keys never match each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum MatchKey<'a> {
    Sku(&'a str),
    Description(&'a str),
}

fn match_key(item: &LineItem) -> MatchKey<'_> {
    match &item.sku {
        Some(sku) if !sku.is_empty() => MatchKey::Sku(sku),
        _ => MatchKey::Description(&item.description),
    }
}

/// `(key, occurrence)` of every line, in order.
fn keyed(items: &[LineItem]) -> Vec<(MatchKey<'_>, usize)> {
    let mut seen: HashMap<MatchKey<'_>, usize> = HashMap::new();
    items
        .iter()
        .map(|item| {
            let key = match_key(item);
            let count = seen.entry(key).or_default();
            *count += 1;
            (key, *count - 1)
        })
        .collect()
}

fn diff_lines(old: &[LineItem], new: &[LineItem]) -> Vec<LineItemDiff> {
    let old_keys = keyed(old);
    let old_by_key: HashMap<(MatchKey<'_>, usize), usize> = old_keys
        .iter()
        .enumerate()
        .map(|(i, key)| (*key, i))
        .collect();
    // new index → matched old index
    let new_to_old: Vec<Option<usize>> = keyed(new)
        .iter()
        .map(|key| old_by_key.get(key).copied())
        .collect();
    let mut old_matched = vec![false; old.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (j, i) in new_to_old.iter().enumerate() {
        if let Some(i) = *i {
            old_matched[i] = true;
            pairs.push((i, j));
        }
    }
    pairs.sort_unstable();
    let new_positions: Vec<usize> = pairs.iter().map(|&(_, j)| j).collect();
    let mut stays = vec![false; new.len()];
    for k in longest_increasing_subsequence(&new_positions) {
        stays[new_positions[k]] = true;
    }

    let mut rows: Vec<LineItemDiff> = new
        .iter()
        .enumerate()
        .map(|(j, item)| match new_to_old[j] {
            Some(i) => matched_row(i, &old[i], j, item, !stays[j]),
            None => LineItemDiff {
                status: LineStatus::Added,
                moved: false,
                key: item.match_key().to_owned(),
                old_index: None,
                new_index: Some(j),
                old: None,
                new: Some(item.clone()),
                fields: Vec::new(),
            },
        })
        .collect();

    // Each removed line goes right after the row holding its old predecessor.
    for (i, item) in old.iter().enumerate() {
        if old_matched[i] {
            continue;
        }
        let at = if i == 0 {
            0
        } else {
            rows.iter()
                .position(|row| row.old_index == Some(i - 1))
                .map_or(0, |p| p + 1)
        };
        rows.insert(
            at,
            LineItemDiff {
                status: LineStatus::Removed,
                moved: false,
                key: item.match_key().to_owned(),
                old_index: Some(i),
                new_index: None,
                old: Some(item.clone()),
                new: None,
                fields: Vec::new(),
            },
        );
    }
    rows
}

fn matched_row(i: usize, old: &LineItem, j: usize, new: &LineItem, moved: bool) -> LineItemDiff {
    let fields = field_changes(old, new);
    LineItemDiff {
        status: if fields.is_empty() {
            LineStatus::Unchanged
        } else {
            LineStatus::Changed
        },
        moved,
        key: new.match_key().to_owned(),
        old_index: Some(i),
        new_index: Some(j),
        old: Some(old.clone()),
        new: Some(new.clone()),
        fields,
    }
}

fn field_changes(old: &LineItem, new: &LineItem) -> Vec<FieldChange> {
    let mut fields = Vec::new();
    let mut text = |field: &str, a: Option<&String>, b: Option<&String>| {
        if a != b {
            fields.push(FieldChange {
                field: field.to_owned(),
                old: a.cloned(),
                new: b.cloned(),
                absolute: None,
                percent: None,
                effect: None,
            });
        }
    };
    text("sku", old.sku.as_ref(), new.sku.as_ref());
    text(
        "description",
        Some(&old.description),
        Some(&new.description),
    );
    let quantity = numeric(
        "quantity",
        Some(old.quantity.money()),
        Some(new.quantity.money()),
    );
    let unit = (old.unit != new.unit).then(|| FieldChange {
        field: "unit".to_owned(),
        old: Some(old.unit.clone()),
        new: Some(new.unit.clone()),
        absolute: None,
        percent: None,
        effect: None,
    });
    let unit_price = numeric(
        "unit_price",
        Some(old.unit_price.money()),
        Some(new.unit_price.money()),
    )
    .map(|mut change| {
        change.effect = change.absolute.as_ref().and_then(price_effect);
        change
    });
    let currency = (old.currency != new.currency).then(|| FieldChange {
        field: "currency".to_owned(),
        old: Some(old.currency.clone()),
        new: Some(new.currency.clone()),
        absolute: None,
        percent: None,
        effect: None,
    });
    let term = numeric(
        "term_months",
        old.term_months.map(months),
        new.term_months.map(months),
    );
    fields.extend(
        [quantity, unit, unit_price, currency, term]
            .into_iter()
            .flatten(),
    );
    fields
}

fn months(m: u32) -> Money {
    Money::new(m.into())
}

fn numeric(field: &str, old: Option<Money>, new: Option<Money>) -> Option<FieldChange> {
    if old == new {
        return None;
    }
    let (absolute, percent) = match (old, new) {
        (Some(a), Some(b)) => {
            let change = money::change(a, b);
            (Some(change.absolute), change.percent)
        }
        _ => (None, None),
    };
    Some(FieldChange {
        field: field.to_owned(),
        old: old.map(|m| m.to_string()),
        new: new.map(|m| m.to_string()),
        absolute,
        percent,
        effect: None,
    })
}

/// Indices (into `values`) of one longest strictly increasing subsequence,
/// O(n log n) (patience sorting with back links).
fn longest_increasing_subsequence(values: &[usize]) -> Vec<usize> {
    // tails[k]: index of the smallest tail of an increasing run of length k+1.
    let mut tails: Vec<usize> = Vec::new();
    let mut back: Vec<Option<usize>> = vec![None; values.len()];
    for (i, &v) in values.iter().enumerate() {
        let k = tails.partition_point(|&t| values[t] < v);
        back[i] = k.checked_sub(1).map(|p| tails[p]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut cursor = tails.last().copied();
    while let Some(i) = cursor {
        out.push(i);
        cursor = back[i];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::longest_increasing_subsequence as lis;

    #[test]
    fn lis_finds_a_longest_run() {
        assert_eq!(lis(&[]), Vec::<usize>::new());
        assert_eq!(lis(&[0, 1, 2]).len(), 3);
        assert_eq!(lis(&[1, 0]).len(), 1);
        assert_eq!(lis(&[3, 0, 1, 2]), vec![1, 2, 3]);
        assert_eq!(lis(&[2, 5, 3, 7, 11, 8, 10, 13, 6]).len(), 6);
    }
}
