//! Stand-ins: one approver acting for another, in some of their roles, for a
//! stated time. The host keeps the signed delegation and passes the ones of
//! the org here with their window already in UTC; whether one is in force
//! is decided against the `now` the host passes, never a clock read here.

use serde::{Deserialize, Serialize};

use crate::policy::Person;

/// A delegation: `to` may act for `from` in `roles` from `starts_at`
/// (inclusive) until `ends_at` (exclusive), unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandIn {
    /// The delegation's id, named in what a stand-in signs.
    pub id: String,
    /// Whose roles.
    pub from: Person,
    /// Who stands in.
    pub to: Person,
    /// Which of `from`'s roles.
    pub roles: Vec<String>,
    /// From (unix seconds, inclusive).
    pub starts_at: i64,
    /// Until (unix seconds, exclusive): the end of the last day in the
    /// delegator's zone.
    pub ends_at: i64,
}

impl StandIn {
    /// True at `now` (unix seconds) inside the window.
    pub fn in_force(&self, now: i64) -> bool {
        self.starts_at <= now && now < self.ends_at
    }
}

/// Someone who may act as a role: a holder in their own right, or a
/// stand-in for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Actor {
    /// Who acts.
    pub person: Person,
    /// For whom, when standing in.
    pub for_person: Option<Person>,
    /// The delegation, when standing in.
    pub stand_in: Option<String>,
}
