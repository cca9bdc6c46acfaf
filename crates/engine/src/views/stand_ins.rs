//! The Stand-ins screen: who the person lets act for them, and for whom
//! they may act, at each connected host.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One delegation as the screen lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct StandInView {
    /// Its id at the host.
    pub delegation_id: String,
    /// Who gave it (an email).
    pub from: String,
    /// Their name.
    pub from_name: String,
    /// Who stands in (an email).
    pub to: String,
    /// Their name.
    pub to_name: String,
    /// The roles handed over.
    pub roles: Vec<String>,
    /// The first day (`YYYY-MM-DD`), in `zone`.
    pub from_date: String,
    /// The last day, inclusive, in `zone`.
    pub to_date: String,
    /// The delegator's time zone (IANA name).
    pub zone: String,
    /// The first moment in force (RFC 3339, UTC).
    pub starts_at: String,
    /// The first moment no longer in force (RFC 3339, UTC).
    pub ends_at: String,
    /// `scheduled`, `in_force`, `ended` or `revoked`.
    pub state: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
    /// Who revoked it (an email), if it was.
    pub revoked_by: Option<String>,
}

/// A colleague who may stand in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ColleagueView {
    /// Their email.
    pub email: String,
    /// Their name.
    pub name: String,
}

/// One host's stand-ins for this person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HostStandIns {
    /// The console's id for the host.
    pub host_id: String,
    /// Its name for people.
    pub host_label: String,
    /// Who the person is there (an email).
    pub me: String,
    /// Given by the person, newest first.
    pub given: Vec<StandInView>,
    /// Given to the person, newest first.
    pub received: Vec<StandInView>,
    /// The roles the person holds there now (what they may hand over).
    pub my_roles: Vec<String>,
    /// Who may stand in.
    pub colleagues: Vec<ColleagueView>,
    /// Why the host's list could not be read, when it could not.
    pub error: Option<String>,
}

/// The screen: every connected host's stand-ins, and the zone days are
/// read in when the person gives one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct StandInsView {
    /// One entry per connected host.
    pub hosts: Vec<HostStandIns>,
    /// This computer's time zone (IANA name), in which new delegations'
    /// days are given.
    pub zone: String,
    /// Today in that zone (`YYYY-MM-DD`).
    pub today: String,
}

/// What the person asks to give.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct GiveStandIn {
    /// At which host.
    pub host_id: String,
    /// Who stands in (a colleague's email).
    pub to: String,
    /// Which of the person's roles.
    pub roles: Vec<String>,
    /// The first day (`YYYY-MM-DD`), in this computer's zone.
    pub from_date: String,
    /// The last day, inclusive.
    pub to_date: String,
}
