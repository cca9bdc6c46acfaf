//! The rules that judge a counter-proposal's terms (§4.4), once each:
//!
//! - [`dropped_required`]: the items the requester marked `(m)` that a
//!   counter leaves out. §4.4: "Agent A rejects if B drops a term A marked
//!   as required."
//! - [`check_counter`]: what a requester applies to a responder's counter
//!   before anything else: the §4.4 rule, and that a counter only narrows
//!   access ("B … counters by narrowing access and/or asking for more
//!   promises"). A failing counter is answered `REJECT-PROPOSAL` with the
//!   reason ([`Rejection::reason`]); no person needs to look at it.
//! - [`check_owner_counter`]: what the console's counter editor applies to
//!   a counter a person is writing: a counter the requester's required
//!   terms make pointless (it would have to be rejected) is refused before
//!   it is sent, saying why; so is anything that is not a counter.

use std::fmt;

use crate::term::Terms;
use crate::text::{join_names, join_promises, ItemName, Promise, Text};

/// The items `counter` offers that `ask` did not ask for.
fn not_asked(ask: &Terms, counter: &Terms) -> Vec<ItemName> {
    counter
        .access
        .iter()
        .filter(|i| !ask.has_item(&i.name))
        .map(|i| i.name.clone())
        .collect()
}

/// §4.4: the items `ask` marks required that `counter` does not contain.
pub fn dropped_required(ask: &Terms, counter: &Terms) -> Vec<ItemName> {
    ask.required()
        .filter(|name| !counter.has_item(name))
        .cloned()
        .collect()
}

/// Whether a counter may drop `item` of an ask: not one the requester
/// marked required (§4.4: it must reject any counter that drops it). The
/// rule an editor offers choices by, before anything is checked:
/// [`dropped_required`] and [`check_owner_counter`] hold counters to it.
pub fn counter_may_drop(item: &crate::term::AccessItem) -> bool {
    !item.required
}

/// Why a requester rejects a responder's counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Required items the counter drops (§4.4).
    pub dropped_required: Vec<ItemName>,
    /// Items the counter offers that were not asked for (a counter narrows).
    pub not_asked: Vec<ItemName>,
}

impl Rejection {
    /// The reason, for the `REJECT-PROPOSAL`'s `reason`.
    pub fn reason(&self) -> Text {
        Text::lossy(&self.to_string())
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.dropped_required.is_empty() {
            parts.push(format!(
                "the counter drops {}, which the request marked required (ANEX §4.4)",
                join_names(&self.dropped_required)
            ));
        }
        if !self.not_asked.is_empty() {
            parts.push(format!(
                "the counter offers {}, which was not asked for (a counter narrows access)",
                join_names(&self.not_asked)
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

/// A requester's check of a responder's `counter` against its own `ask`
/// (with marks): `Err` with everything wrong when it must be rejected.
pub fn check_counter(ask: &Terms, counter: &Terms) -> Result<(), Rejection> {
    let rejection = Rejection {
        dropped_required: dropped_required(ask, counter),
        not_asked: not_asked(ask, counter),
    };
    if rejection.dropped_required.is_empty() && rejection.not_asked.is_empty() {
        Ok(())
    } else {
        Err(rejection)
    }
}

/// Something that makes a person's counter pointless or not a counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterProblem {
    /// It removes items the requester marked required: the requester must
    /// reject it (§4.4), so it is pointless.
    DropsRequired(Vec<ItemName>),
    /// It adds items the requester did not ask for.
    NotAsked(Vec<ItemName>),
    /// It removes promises the requester offered.
    RemovesPromises(Vec<Promise>),
    /// It writes `(m)` marks, which are the requester's.
    Marked(Vec<ItemName>),
    /// It changes nothing: that is the request as asked.
    SameAsAsked,
}

impl fmt::Display for CounterProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DropsRequired(items) => write!(
                f,
                "a counter without {} is pointless: the requester marked it required and must reject any counter that drops it (ANEX §4.4); keep it, or refuse the request",
                join_names(items)
            ),
            Self::NotAsked(items) => write!(
                f,
                "{} was not asked for: a counter narrows access, it never adds to it",
                join_names(items)
            ),
            Self::RemovesPromises(list) => write!(
                f,
                "the requester offered {}: a counter asks for more promises, never fewer",
                join_promises(list)
            ),
            Self::Marked(items) => write!(
                f,
                "{} carries an (m) mark: marks are the requester's, a counter names items without them",
                join_names(items)
            ),
            Self::SameAsAsked => f.write_str(
                "this counter changes nothing: it is the request as asked, so accept it instead",
            ),
        }
    }
}

/// The counter editor's check of a person's `counter` to the requester's
/// `ask` (with marks): every problem, or `Ok` when it is a real counter
/// (only optional items removed and/or promises added, at least one change).
pub fn check_owner_counter(ask: &Terms, counter: &Terms) -> Result<(), Vec<CounterProblem>> {
    let mut problems = Vec::new();
    let dropped = dropped_required(ask, counter);
    if !dropped.is_empty() {
        problems.push(CounterProblem::DropsRequired(dropped));
    }
    let extra = not_asked(ask, counter);
    if !extra.is_empty() {
        problems.push(CounterProblem::NotAsked(extra));
    }
    let removed: Vec<Promise> = ask
        .promise
        .iter()
        .filter(|p| !counter.has_promise(p))
        .cloned()
        .collect();
    if !removed.is_empty() {
        problems.push(CounterProblem::RemovesPromises(removed));
    }
    let marked: Vec<ItemName> = counter.required().cloned().collect();
    if !marked.is_empty() {
        problems.push(CounterProblem::Marked(marked));
    }
    if problems.is_empty() && counter.same_as(&ask.unmarked()) {
        problems.push(CounterProblem::SameAsAsked);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}
