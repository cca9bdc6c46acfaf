//! Where a request stands on its chain, and whether a person may act on it
//! now. Pure over what the host read: the [`Route`] stored with the request,
//! the approvals given so far, who is enrolled, and the agent's owner.
//!
//! The rules, each in one place here:
//! - Steps are met in order; a step is met when every part of it is (a
//!   parallel group's parts in any order). Only an approval counts towards
//!   a step; a decline or a counter by someone who may act at the current
//!   step decides the whole request (the host stops the chain there).
//! - One person counts once per request, across all steps: a second
//!   approval by the same person is refused, and is not counted if a store
//!   somehow holds one.
//! - The owner of the agent that made the request may approve, but never
//!   be its only approval: an approval by the owner that would complete the
//!   request with no one else's is refused.
//! - A step that has waited longer than its `respond_within` (from the
//!   moment it opened: the request's arrival for the first, the approval
//!   that met the step before for the others) escalates: it is offered to
//!   the holders of its `escalate_to` role too, whose approval counts
//!   towards it as that role. Time is passed in (unix seconds), never read.
//! - A stand-in in force may act for the holder who delegated the role, as
//!   that holder would (their role, their step); the approval names both,
//!   and both count as used on the request. Someone who holds a role in
//!   their own right acts in it before acting for anyone.

use serde::{Deserialize, Serialize};

use crate::policy::{Holders, Need, Person};
use crate::route::Route;
use crate::standin::{Actor, StandIn};

/// One approval already given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// Who.
    pub person: Person,
    /// At which step, counted from 1.
    pub step: usize,
    /// As which role.
    pub role: String,
    /// When it was recorded (unix seconds), where known: the moment the
    /// step it met was met, from which the next step's time runs.
    #[serde(default)]
    pub at: Option<i64>,
    /// For whom, when made by a stand-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_person: Option<Person>,
}

impl Approval {
    /// True when `person` made it or it was made for them.
    fn uses(&self, person: &Person) -> bool {
        &self.person == person || self.for_person.as_ref() == Some(person)
    }
}

/// An approval a stand-in made, for the record of a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoodIn {
    /// Who approved.
    pub person: Person,
    /// For whom.
    pub for_person: Person,
}

/// Everything progress is computed from.
#[derive(Debug, Clone, Copy)]
pub struct Standing<'a> {
    /// The route the request was given.
    pub route: &'a Route,
    /// The approvals so far, in the order they were given.
    pub approvals: &'a [Approval],
    /// The people enrolled (and not revoked) for the org now: a role's
    /// holders are those of its people who are, and "every approver" is
    /// all of them.
    pub enrolled: &'a [Person],
    /// The approver named as the agent's owner, if any.
    pub owner: Option<&'a Person>,
    /// When the request arrived (unix seconds): its first step's time runs
    /// from here. `None`: no step escalates.
    pub asked_at: Option<i64>,
    /// Now (unix seconds). `None`: no step escalates and no stand-in is
    /// in force.
    pub now: Option<i64>,
    /// The org's delegations; those in force at `now` let their `to` act
    /// for their `from`.
    pub stand_ins: &'a [StandIn],
}

/// One role's share of a step, as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartProgress {
    /// The role.
    pub role: String,
    /// How many the policy asks for.
    pub need: Need,
    /// How many that is now (for `all`, the enrolled holders, at least 1).
    pub required: u32,
    /// Who has approved as this role at this step, in order.
    pub approved_by: Vec<Person>,
    /// Those of `approved_by` who stood in for someone, and for whom.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stood_in: Vec<StoodIn>,
    /// Who may still approve it: holders not yet counted on this request
    /// (empty unless the step is the current one).
    pub may_act: Vec<Person>,
}

impl PartProgress {
    /// True once enough have approved.
    pub fn met(&self) -> bool {
        self.approved_by.len() as u32 >= self.required
    }
}

/// One step, as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepProgress {
    /// Counted from 1.
    pub number: usize,
    /// Its parts.
    pub parts: Vec<PartProgress>,
    /// True once every part is met.
    pub met: bool,
    /// For the current step with a response time: when it is due (unix
    /// seconds), past which it escalates.
    pub due_at: Option<i64>,
    /// True when the current step is past its time and offered to its
    /// escalation role too.
    pub escalated: bool,
}

/// A request's whole chain, as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Every step.
    pub steps: Vec<StepProgress>,
    /// The first step not met, counted from 1; none once complete.
    pub current: Option<usize>,
    /// True once every step is met.
    pub complete: bool,
}

/// What a decision would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Counts towards the current step.
    Approve,
    /// Decides the request, stopping the chain.
    Decline,
    /// Decides the request, stopping the chain, with counter terms.
    Counter,
}

/// A person admitted to act, and where it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The step, counted from 1.
    pub step: usize,
    /// The role the person acts as.
    pub role: String,
    /// For an approval: true when it completes the request.
    pub completes: bool,
    /// When the person acts as a stand-in: for whom.
    pub for_person: Option<Person>,
    /// When the person acts as a stand-in: the delegation's id.
    pub stand_in: Option<String>,
}

/// Why a person may not act on a request now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Every step is met already.
    #[error("Every step of this request's chain is met; nothing is left to approve.")]
    Complete,
    /// The person's approval already counts on this request.
    #[error("You already approved this request at step {step} as {role}; one person counts once per request, across all its steps.")]
    AlreadyCounted {
        /// Where it counted.
        step: usize,
        /// As which role.
        role: String,
    },
    /// The person holds no role the current step waits on.
    #[error("Step {step} waits on {}; you hold none of those roles.", waiting_on.join(" and "))]
    NotAtStep {
        /// The current step.
        step: usize,
        /// The roles it still waits on.
        waiting_on: Vec<String>,
    },
    /// The person asked to act as a role they do not hold at this step.
    #[error("You cannot act as {role} at step {step}: it waits on {}, and of those you hold {}.", waiting_on.join(" and "), if held.is_empty() { "none".to_owned() } else { held.join(" and ") })]
    NotInRole {
        /// The role asked for.
        role: String,
        /// The current step.
        step: usize,
        /// The roles it still waits on.
        waiting_on: Vec<String>,
        /// Those of them the person holds.
        held: Vec<String>,
    },
    /// The owner's approval would be the request's only one.
    #[error("You own the agent that made this request, and an agent's owner cannot be the only approval of its request: another holder of {} must approve it.", roles.join(" or "))]
    OwnerAlone {
        /// The roles someone else may approve as.
        roles: Vec<String>,
    },
}

/// The people holding `role` now.
fn holders(standing: &Standing<'_>, role: &str) -> Vec<Person> {
    match standing.route.holders.get(role) {
        Some(Holders::People(people)) => people
            .iter()
            .filter(|p| standing.enrolled.contains(p))
            .cloned()
            .collect(),
        Some(Holders::EveryApprover) => standing.enrolled.to_vec(),
        None => Vec::new(),
    }
}

/// Who may act as `role`: its holders in their own right first, then the
/// stand-ins in force for one of them (never for themselves).
pub(crate) fn actors(standing: &Standing<'_>, role: &str) -> Vec<Actor> {
    let holders = holders(standing, role);
    let mut out: Vec<Actor> = holders
        .iter()
        .map(|p| Actor {
            person: p.clone(),
            for_person: None,
            stand_in: None,
        })
        .collect();
    let Some(now) = standing.now else {
        return out;
    };
    for s in standing.stand_ins {
        if s.in_force(now)
            && s.roles.iter().any(|r| r == role)
            && holders.contains(&s.from)
            && standing.enrolled.contains(&s.to)
            && s.to != s.from
        {
            out.push(Actor {
                person: s.to.clone(),
                for_person: Some(s.from.clone()),
                stand_in: Some(s.id.clone()),
            });
        }
    }
    out
}

/// True when `actor` may still count on a request with these approvals:
/// neither they nor whoever they stand in for is used.
fn fresh(actor: &Actor, counted: &[&Approval]) -> bool {
    !counted
        .iter()
        .any(|a| a.uses(&actor.person) || actor.for_person.as_ref().is_some_and(|f| a.uses(f)))
}

/// The approvals that count: each person's first, at a step and role the
/// chain has; an approval made for someone uses them too.
fn counted<'a>(standing: &Standing<'a>) -> Vec<&'a Approval> {
    let mut seen: Vec<&Person> = Vec::new();
    let mut out = Vec::new();
    for a in standing.approvals {
        let in_chain = a
            .step
            .checked_sub(1)
            .and_then(|i| standing.route.chain.steps.get(i))
            .is_some_and(|s| {
                s.parts.iter().any(|p| p.role == a.role)
                    || s.escalate_to.as_deref() == Some(a.role.as_str())
            });
        let fresh =
            !seen.contains(&&a.person) && a.for_person.as_ref().is_none_or(|f| !seen.contains(&f));
        if in_chain && fresh {
            seen.push(&a.person);
            if let Some(f) = &a.for_person {
                seen.push(f);
            }
            out.push(a);
        }
    }
    out
}

/// Where the request stands.
pub fn progress(standing: &Standing<'_>) -> Progress {
    let counted = counted(standing);
    let mut steps = Vec::new();
    let mut current = None;
    for (i, step) in standing.route.chain.steps.iter().enumerate() {
        let number = i + 1;
        let mut parts = Vec::new();
        for part in &step.parts {
            let holders = holders(standing, &part.role);
            let required = match part.need {
                Need::One => 1,
                Need::Count(n) => n,
                Need::All => (holders.len() as u32).max(1),
            };
            let here: Vec<&&Approval> = counted
                .iter()
                .filter(|a| a.step == number && a.role == part.role)
                .collect();
            parts.push(PartProgress {
                role: part.role.clone(),
                need: part.need,
                required,
                approved_by: here.iter().map(|a| a.person.clone()).collect(),
                stood_in: here.iter().filter_map(|a| stood_in(a)).collect(),
                may_act: Vec::new(),
            });
        }
        // Approvals given as the escalation role fill the step's open parts
        // in order.
        if let Some(escalation) = step.escalate_to.as_deref() {
            let part_roles: Vec<&str> = step.parts.iter().map(|p| p.role.as_str()).collect();
            if !part_roles.contains(&escalation) {
                for a in counted
                    .iter()
                    .filter(|a| a.step == number && a.role == escalation)
                {
                    if let Some(open) = parts.iter_mut().find(|p| !p.met()) {
                        open.approved_by.push(a.person.clone());
                        open.stood_in.extend(stood_in(a));
                    }
                }
            }
        }
        let met = parts.iter().all(PartProgress::met);
        if !met && current.is_none() {
            current = Some(number);
        }
        steps.push(StepProgress {
            number,
            parts,
            met,
            due_at: None,
            escalated: false,
        });
    }
    if let Some(n) = current {
        let (due_at, escalated) = due(standing, &counted, n);
        steps[n - 1].due_at = due_at;
        steps[n - 1].escalated = escalated;
        let escalation = escalated
            .then(|| standing.route.chain.steps[n - 1].escalate_to.as_deref())
            .flatten();
        let others_counted = |p: &Actor| {
            counted
                .iter()
                .any(|a| !a.uses(&p.person) && p.for_person.as_ref().is_none_or(|f| !a.uses(f)))
        };
        let owns = |p: &Actor| {
            standing
                .owner
                .is_some_and(|o| o == &p.person || p.for_person.as_ref() == Some(o))
        };
        let last = n == steps.len();
        let unmet = steps[n - 1].parts.iter().filter(|p| !p.met()).count();
        for part in &mut steps[n - 1].parts {
            if part.met() {
                continue;
            }
            let completes_alone =
                last && unmet == 1 && part.required - part.approved_by.len() as u32 == 1;
            let mut may = actors(standing, &part.role);
            may.extend(escalation.map(|r| actors(standing, r)).unwrap_or_default());
            for actor in may {
                let allowed = fresh(&actor, &counted)
                    && !(completes_alone && owns(&actor) && !others_counted(&actor));
                if allowed && !part.may_act.contains(&actor.person) {
                    part.may_act.push(actor.person);
                }
            }
        }
    }
    Progress {
        complete: current.is_none(),
        current,
        steps,
    }
}

/// The record of an approval made by a stand-in.
fn stood_in(a: &Approval) -> Option<StoodIn> {
    a.for_person.as_ref().map(|f| StoodIn {
        person: a.person.clone(),
        for_person: f.clone(),
    })
}

/// When step `n` (the current one) is due, and whether it is past it: its
/// time runs from the request's arrival (step 1) or from the last approval
/// counted at the step before.
fn due(standing: &Standing<'_>, counted: &[&Approval], n: usize) -> (Option<i64>, bool) {
    let step = &standing.route.chain.steps[n - 1];
    let Some(minutes) = step.respond_within_minutes else {
        return (None, false);
    };
    let opened = if n == 1 {
        standing.asked_at
    } else {
        counted
            .iter()
            .filter(|a| a.step == n - 1)
            .map(|a| a.at)
            .collect::<Option<Vec<i64>>>()
            .and_then(|times| times.into_iter().max())
    };
    let due_at = opened.map(|t| t + i64::from(minutes) * 60);
    let escalated = step.escalate_to.is_some()
        && matches!((due_at, standing.now), (Some(due), Some(now)) if now >= due);
    (due_at, escalated)
}

/// Whether `person` may take `action` now, and as which role; `as_role`
/// chooses among the current step's roles the person holds (otherwise the
/// first, in the step's order).
pub fn admit(
    standing: &Standing<'_>,
    person: &Person,
    action: Action,
    as_role: Option<&str>,
) -> Result<Admitted, Refusal> {
    let now = progress(standing);
    let Some(n) = now.current else {
        return Err(Refusal::Complete);
    };
    let step = &now.steps[n - 1];
    let counted = counted(standing);
    if action == Action::Approve {
        if let Some(mine) = counted.iter().find(|a| a.uses(person)) {
            return Err(Refusal::AlreadyCounted {
                step: mine.step,
                role: mine.role.clone(),
            });
        }
    }
    let open: Vec<&PartProgress> = step.parts.iter().filter(|p| !p.met()).collect();
    // Past its time, the step is offered to its escalation role too.
    let escalation = step
        .escalated
        .then(|| standing.route.chain.steps[n - 1].escalate_to.clone())
        .flatten();
    let mut waiting_on: Vec<String> = open.iter().map(|p| p.role.clone()).collect();
    if let Some(role) = escalation.as_ref().filter(|r| !waiting_on.contains(r)) {
        waiting_on.push(role.clone());
    }
    // (role acted as, the part it counts towards, as whom): every open part
    // the person may act at, in their own right before as a stand-in.
    let mine = |role: &str| -> Vec<Actor> {
        actors(standing, role)
            .into_iter()
            .filter(|a| &a.person == person && (action != Action::Approve || fresh(a, &counted)))
            .collect()
    };
    let mut held: Vec<(String, &PartProgress, Actor)> = Vec::new();
    for own_right in [true, false] {
        for p in open.iter().copied() {
            if let Some(a) = mine(&p.role)
                .into_iter()
                .find(|a| a.for_person.is_none() == own_right)
            {
                held.push((p.role.clone(), p, a));
            }
        }
        if let (Some(role), Some(first)) = (escalation.as_ref(), open.first().copied()) {
            if !held.iter().any(|(r, _, _)| r == role) {
                if let Some(a) = mine(role)
                    .into_iter()
                    .find(|a| a.for_person.is_none() == own_right)
                {
                    held.push((role.clone(), first, a));
                }
            }
        }
    }
    let (role, part, actor) = match as_role {
        Some(role) => held
            .iter()
            .find(|(r, _, _)| r == role)
            .cloned()
            .ok_or_else(|| Refusal::NotInRole {
                role: role.to_owned(),
                step: n,
                waiting_on: waiting_on.clone(),
                held: held.iter().map(|(r, _, _)| r.clone()).collect(),
            })?,
        None => held.first().cloned().ok_or_else(|| Refusal::NotAtStep {
            step: n,
            waiting_on: waiting_on.clone(),
        })?,
    };
    let completes = action == Action::Approve
        && n == now.steps.len()
        && open.len() == 1
        && part.required - part.approved_by.len() as u32 == 1;
    let owns = standing
        .owner
        .is_some_and(|o| o == person || actor.for_person.as_ref() == Some(o));
    if completes && owns && counted.is_empty() {
        return Err(Refusal::OwnerAlone {
            roles: vec![part.role.clone()],
        });
    }
    Ok(Admitted {
        step: n,
        role,
        completes,
        for_person: actor.for_person,
        stand_in: actor.stand_in,
    })
}
