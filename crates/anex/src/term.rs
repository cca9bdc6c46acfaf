//! The terms two agents negotiate (§4.4): the `access` items the requester
//! asks for, each possibly marked `(m)` (required), and the `promise` items
//! it commits to about the data it receives.
//!
//! Lists keep the order they were written in (a person reads them in that
//! order) but compare as sets: no item or promise may appear twice, and
//! "the same terms" means the same names, marks and promises in any order.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::limits::{MAX_ACCESS_ITEMS, MAX_PROMISES};
use crate::text::{quote, ItemName, Promise, TextError};

/// The suffix that marks an access item as required (§4.4, §5.4).
pub const REQUIRED_MARK: &str = "(m)";

/// One access item: the name of a piece of data about the responder's owner,
/// and whether the requester marked it required.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AccessItem {
    /// What is asked for (`tax_id`).
    pub name: ItemName,
    /// `true` when written `name(m)`: the requester cannot proceed without it.
    pub required: bool,
}

impl AccessItem {
    /// An item named `name`, required or not.
    pub fn new(name: ItemName, required: bool) -> Self {
        Self { name, required }
    }

    /// Reads the wire form: a name, optionally followed by `(m)` with no space.
    pub fn parse(s: &str) -> Result<Self, TermError> {
        let (name, required) = match s.strip_suffix(REQUIRED_MARK) {
            Some(name) => (name, true),
            None => (s, false),
        };
        let name = ItemName::parse(name).map_err(|why| TermError::Item {
            item: quote(s),
            why,
        })?;
        Ok(Self { name, required })
    }

    /// The wire form: `name` or `name(m)`.
    pub fn to_wire(&self) -> String {
        if self.required {
            format!("{}{REQUIRED_MARK}", self.name)
        } else {
            self.name.to_string()
        }
    }
}

/// Why a list of terms is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TermError {
    /// An access entry that is not `name` or `name(m)`.
    #[error(
        "{item} is not an access item (a name, optionally followed by \"(m)\"): the name {why}"
    )]
    Item {
        /// The entry, quoted.
        item: String,
        /// What is wrong with its name.
        why: TextError,
    },
    /// A promise that is not valid text.
    #[error("{promise} is not a promise: it {why}")]
    Promise {
        /// The entry, quoted.
        promise: String,
        /// What is wrong with it.
        why: TextError,
    },
    /// A promise written with the required mark, which only access items carry.
    #[error("{0} carries \"(m)\": only access items are marked required (§5.4); promises are never marked")]
    MarkedPromise(String),
    /// The same item named twice (with or without the mark).
    #[error("access item {0:?} appears more than once")]
    DuplicateItem(String),
    /// The same promise twice.
    #[error("promise {0} appears more than once")]
    DuplicatePromise(String),
    /// No access items: terms without access are not terms (refuse instead).
    #[error("the access list is empty (terms that share nothing are a refusal, not a proposal)")]
    NoAccess,
    /// Too many items.
    #[error("the access list has more than {MAX_ACCESS_ITEMS} items")]
    TooManyItems,
    /// Too many promises.
    #[error("the promise list has more than {MAX_PROMISES} promises")]
    TooManyPromises,
}

/// A set of terms: what is shared and under which promises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    /// The access items, in the order written; names are unique.
    pub access: Vec<AccessItem>,
    /// The promises, in the order written; unique.
    pub promise: Vec<Promise>,
}

impl Terms {
    /// Terms from parsed parts, checking bounds and uniqueness.
    pub fn new(access: Vec<AccessItem>, promise: Vec<Promise>) -> Result<Self, TermError> {
        if access.is_empty() {
            return Err(TermError::NoAccess);
        }
        if access.len() > MAX_ACCESS_ITEMS {
            return Err(TermError::TooManyItems);
        }
        if promise.len() > MAX_PROMISES {
            return Err(TermError::TooManyPromises);
        }
        let mut names = BTreeSet::new();
        for item in &access {
            if !names.insert(item.name.as_str()) {
                return Err(TermError::DuplicateItem(item.name.to_string()));
            }
        }
        let mut seen = BTreeSet::new();
        for p in &promise {
            if !seen.insert(p.as_str()) {
                return Err(TermError::DuplicatePromise(quote(p.as_str())));
            }
        }
        Ok(Self { access, promise })
    }

    /// Reads the wire lists (`["name(m)", "email"]`, `["no data retention"]`).
    pub fn from_wire<A, P>(access: &[A], promise: &[P]) -> Result<Self, TermError>
    where
        A: AsRef<str>,
        P: AsRef<str>,
    {
        if access.len() > MAX_ACCESS_ITEMS {
            return Err(TermError::TooManyItems);
        }
        if promise.len() > MAX_PROMISES {
            return Err(TermError::TooManyPromises);
        }
        let access = access
            .iter()
            .map(|s| AccessItem::parse(s.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let promise = promise
            .iter()
            .map(|s| {
                if s.as_ref().ends_with(REQUIRED_MARK) {
                    return Err(TermError::MarkedPromise(quote(s.as_ref())));
                }
                Promise::parse(s.as_ref()).map_err(|why| TermError::Promise {
                    promise: quote(s.as_ref()),
                    why,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(access, promise)
    }

    /// The item named `name`, if asked for.
    pub fn item(&self, name: &ItemName) -> Option<&AccessItem> {
        self.access.iter().find(|i| &i.name == name)
    }

    /// Whether `name` is among the access items.
    pub fn has_item(&self, name: &ItemName) -> bool {
        self.item(name).is_some()
    }

    /// Whether `promise` is among the promises.
    pub fn has_promise(&self, promise: &Promise) -> bool {
        self.promise.contains(promise)
    }

    /// The names marked required, in order.
    pub fn required(&self) -> impl Iterator<Item = &ItemName> {
        self.access.iter().filter(|i| i.required).map(|i| &i.name)
    }

    /// Whether any item carries the required mark.
    pub fn has_marks(&self) -> bool {
        self.access.iter().any(|i| i.required)
    }

    /// The same terms with every `(m)` mark removed: what a proposal that
    /// grants them, or an acceptance, writes.
    pub fn unmarked(&self) -> Self {
        Self {
            access: self
                .access
                .iter()
                .map(|i| AccessItem::new(i.name.clone(), false))
                .collect(),
            promise: self.promise.clone(),
        }
    }

    /// Whether both name the same items with the same marks and the same
    /// promises, in any order.
    pub fn same_as(&self, other: &Self) -> bool {
        let items = |t: &Self| -> BTreeSet<(String, bool)> {
            t.access
                .iter()
                .map(|i| (i.name.to_string(), i.required))
                .collect()
        };
        let promises =
            |t: &Self| -> BTreeSet<String> { t.promise.iter().map(|p| p.to_string()).collect() };
        self.access.len() == other.access.len()
            && self.promise.len() == other.promise.len()
            && items(self) == items(other)
            && promises(self) == promises(other)
    }

    /// The wire lists: `{"access": [...], "promise": [...]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "access": self.access.iter().map(AccessItem::to_wire).collect::<Vec<_>>(),
            "promise": self.promise.iter().map(Promise::as_str).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(access: &[&str], promise: &[&str]) -> Terms {
        Terms::from_wire(access, promise).unwrap()
    }

    #[test]
    fn the_mark_is_parsed_into_a_flag() {
        let t = terms(&["name(m)", "schedule(m)", "email"], &["no data retention"]);
        assert_eq!(
            t.access
                .iter()
                .map(|i| (i.name.as_str(), i.required))
                .collect::<Vec<_>>(),
            vec![("name", true), ("schedule", true), ("email", false)]
        );
        assert_eq!(
            t.to_json()["access"],
            json!(["name(m)", "schedule(m)", "email"])
        );
    }

    #[test]
    fn a_mark_written_any_other_way_is_refused() {
        for bad in ["name (m)", "name(M)", "name(m)(m)", "(m)", "name(required)"] {
            assert!(
                matches!(AccessItem::parse(bad), Err(TermError::Item { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_promise_cannot_be_marked_required() {
        assert!(matches!(
            Terms::from_wire(&["name"], &["no sharing(m)"]),
            Err(TermError::MarkedPromise(_))
        ));
    }

    #[test]
    fn duplicates_are_refused_marked_or_not() {
        assert_eq!(
            Terms::from_wire(&["name", "name(m)"], &[] as &[&str]),
            Err(TermError::DuplicateItem("name".into()))
        );
        assert!(matches!(
            Terms::from_wire(&["name"], &["no sharing", "no sharing"]),
            Err(TermError::DuplicatePromise(_))
        ));
    }

    #[test]
    fn bounds_are_enforced() {
        assert_eq!(
            Terms::from_wire(&[] as &[&str], &[] as &[&str]),
            Err(TermError::NoAccess)
        );
        let many: Vec<String> = (0..=MAX_ACCESS_ITEMS).map(|i| format!("i{i}")).collect();
        assert_eq!(
            Terms::from_wire(&many, &[] as &[&str]),
            Err(TermError::TooManyItems)
        );
        let promises: Vec<String> = (0..=MAX_PROMISES).map(|i| format!("p {i}")).collect();
        assert_eq!(
            Terms::from_wire(&["a"], &promises),
            Err(TermError::TooManyPromises)
        );
    }

    #[test]
    fn sameness_ignores_order_but_not_marks() {
        let a = terms(&["a(m)", "b"], &["x", "y"]);
        assert!(a.same_as(&terms(&["b", "a(m)"], &["y", "x"])));
        assert!(!a.same_as(&terms(&["a", "b"], &["x", "y"])));
        assert!(!a.same_as(&terms(&["a(m)", "b"], &["x"])));
        assert!(a.unmarked().same_as(&terms(&["a", "b"], &["x", "y"])));
        assert!(!a.unmarked().has_marks());
    }
}
