//! An organization's policy of authority, sans-IO: who may approve what,
//! in which order, and where a request stands (issue 30, docs/authority.md).
//!
//! Three questions, each a pure function the host asks at request time and
//! at decision time, with nothing read from a clock, a file or a database:
//! - [`parse`]: is this policy file usable? Every refusal names the line,
//!   the field and the reason ([`FormatError`]).
//! - [`route`]: which rule fires for these facts, why (the sentence a
//!   person reads), and which chain of steps the request needs. The
//!   [`Route`] is stored with the request, whole, so a later policy never
//!   reroutes a request already asked.
//! - [`progress`] and [`admit`]: which step is current, who may act at it,
//!   whether the request is complete; and whether this person may approve,
//!   decline or counter now, as which role ([`Refusal`] says why not).
//!
//! A [`StandIn`] lets one approver act for another in some of their roles
//! for a stated time; an approval made so names both, and both count as
//! used on that request.
//!
//! [`legacy`] reads the host's old one-number policy as a policy of
//! authority, so every org that never loads one keeps its routing.
//!
//! Amounts are exact decimals, never converted between currencies: an
//! amount in a currency no rule names goes to the policy's stated fallback.

mod format;
mod legacy;
mod policy;
mod progress;
mod route;
mod standin;

#[cfg(test)]
mod tests;

pub use format::{parse, FormatError, MAX_BYTES, MAX_RULES, MAX_STEPS};
pub use legacy::{legacy, LEGACY_ROLE};
pub use policy::{
    Band, Chain, Conditions, Currency, Fallback, Holders, Need, Part, Person, Policy, Protocol,
    Rule, Step, MAX_COUNT,
};
pub use progress::{
    admit, progress, Action, Admitted, Approval, PartProgress, Progress, Refusal, Standing,
    StepProgress, StoodIn,
};
pub use route::{route, Facts, Fired, Money, Route};
pub use standin::StandIn;
