//! The difference between two sets of terms, as a person reads a counter
//! beside what it answers: access items added and removed, items whose
//! required mark changed, promises added and removed.

use std::fmt;

use crate::term::{AccessItem, Terms};
use crate::text::{join_promises, ItemName, Promise};

/// An item present in both whose `(m)` mark differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkChange {
    /// The item.
    pub name: ItemName,
    /// Whether it was required before.
    pub was_required: bool,
}

/// What changed from one set of terms to the next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TermsDiff {
    /// Items in the new terms only (in the new terms' order).
    pub access_added: Vec<AccessItem>,
    /// Items in the old terms only (in the old terms' order).
    pub access_removed: Vec<AccessItem>,
    /// Items in both whose required mark changed.
    pub required_changed: Vec<MarkChange>,
    /// Promises in the new terms only.
    pub promises_added: Vec<Promise>,
    /// Promises in the old terms only.
    pub promises_removed: Vec<Promise>,
}

impl TermsDiff {
    /// Whether nothing changed (same items, marks and promises, in any order).
    pub fn is_empty(&self) -> bool {
        self.access_added.is_empty()
            && self.access_removed.is_empty()
            && self.required_changed.is_empty()
            && self.promises_added.is_empty()
            && self.promises_removed.is_empty()
    }
}

/// How `new` differs from `old`.
pub fn diff(old: &Terms, new: &Terms) -> TermsDiff {
    let mut d = TermsDiff::default();
    for item in &new.access {
        match old.item(&item.name) {
            None => d.access_added.push(item.clone()),
            Some(before) if before.required != item.required => {
                d.required_changed.push(MarkChange {
                    name: item.name.clone(),
                    was_required: before.required,
                })
            }
            Some(_) => {}
        }
    }
    d.access_removed = old
        .access
        .iter()
        .filter(|i| !new.has_item(&i.name))
        .cloned()
        .collect();
    d.promises_added = new
        .promise
        .iter()
        .filter(|p| !old.has_promise(p))
        .cloned()
        .collect();
    d.promises_removed = old
        .promise
        .iter()
        .filter(|p| !new.has_promise(p))
        .cloned()
        .collect();
    d
}

impl fmt::Display for TermsDiff {
    /// One line: `access added: a, b; access removed: c(m); now required: d;
    /// no longer required: e; promises added: "x"; promises removed: "y"`,
    /// or `no change`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let items = |v: &[AccessItem]| {
            v.iter()
                .map(AccessItem::to_wire)
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.access_added.is_empty() {
            parts.push(format!("access added: {}", items(&self.access_added)));
        }
        if !self.access_removed.is_empty() {
            parts.push(format!("access removed: {}", items(&self.access_removed)));
        }
        let marked = |was: bool| {
            self.required_changed
                .iter()
                .filter(|c| c.was_required == was)
                .map(|c| c.name.to_string())
                .collect::<Vec<_>>()
        };
        let now_required = marked(false);
        if !now_required.is_empty() {
            parts.push(format!("now required: {}", now_required.join(", ")));
        }
        let no_longer = marked(true);
        if !no_longer.is_empty() {
            parts.push(format!("no longer required: {}", no_longer.join(", ")));
        }
        if !self.promises_added.is_empty() {
            parts.push(format!(
                "promises added: {}",
                join_promises(&self.promises_added)
            ));
        }
        if !self.promises_removed.is_empty() {
            parts.push(format!(
                "promises removed: {}",
                join_promises(&self.promises_removed)
            ));
        }
        if parts.is_empty() {
            f.write_str("no change")
        } else {
            f.write_str(&parts.join("; "))
        }
    }
}
