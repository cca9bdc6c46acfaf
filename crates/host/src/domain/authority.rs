//! Requests routed through their organization's policy of authority
//! (docs/authority.md): the one place the host asks `countersign-authority`.
//!
//! At request time a request gets its [`StoredRoute`] (the policy version
//! in force, read with the org, and the route it gave), stored with the
//! request; at decision time the stored route, never the current policy,
//! says who may act, as which role, at which step. An org that never
//! loaded a policy is routed by the legacy reading of its old threshold, so
//! its answers stay as they were; a request stored before routing (no
//! route) is decided by its `approvals_required` alone, as before.

use ::authority::{
    self as rules, Action, Admitted, Approval, Chain, Facts, Fired, Holders, Money, Need, Part,
    Person, Policy, Progress, Protocol, Route, StandIn, Standing, Step,
};
use countersign_host_api::approver::{
    delegation_urn, ApprovalRecord, OnBehalfOf, RoutePart, RouteStep, RouteView, StoodIn,
};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::DomainError;
use crate::store::Org;

/// A request's route as stored with it (JSON in the request's row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRoute {
    /// The version of the org's policy it was routed under; `None` when the
    /// org had none (the legacy reading of its threshold routed it).
    pub policy_version: Option<u64>,
    /// The route.
    pub route: Route,
}

impl StoredRoute {
    /// The host's record of one approval given towards a request routed so,
    /// its route's part filled (the reason, rule and policy version when
    /// `routed`: none for a request from before routing) and the rest
    /// empty, for the caller to fill.
    pub fn approval_record(&self, routed: bool) -> ApprovalRecord {
        ApprovalRecord {
            event_hash: String::new(),
            approved_by: String::new(),
            at: String::new(),
            step: None,
            role: None,
            for_person: None,
            reason: routed.then(|| self.route.reason.clone()),
            rule: match self.route.fired {
                Fired::Rule { number, .. } if routed => Some(number as u32),
                _ => None,
            },
            policy_version: self.policy_version,
        }
    }

    /// As stored: JSON text.
    pub fn to_text(&self) -> Result<String, DomainError> {
        serde_json::to_string(self).map_err(|e| DomainError::Internal(e.to_string()))
    }

    /// Reads a stored route; `None` (a request from before routing) reads
    /// as one step of `required` distinct approvers among every enrolled
    /// approver, which is how such a request was always decided.
    pub fn read(text: Option<&str>, required: u32) -> Result<StoredRoute, DomainError> {
        match text {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| DomainError::Internal(format!("a stored route does not read: {e}"))),
            None => Ok(StoredRoute {
                policy_version: None,
                route: Route {
                    fired: Fired::NoRule,
                    reason: format!(
                        "Asked before routing by authority: {required} distinct approver(s)"
                    ),
                    chain: one_step(required),
                    threshold: None,
                    holders: [(rules::LEGACY_ROLE.to_owned(), Holders::EveryApprover)]
                        .into_iter()
                        .collect(),
                },
            }),
        }
    }

    /// How many approvals the whole chain takes (the approver API's
    /// `approvals_required`): every part's count, `all` as the holders named.
    pub fn approvals_required(&self) -> u32 {
        self.route
            .chain
            .steps
            .iter()
            .flat_map(|s| &s.parts)
            .map(|p| match p.need {
                Need::One => 1,
                Need::Count(n) => n,
                Need::All => match self.route.holders.get(&p.role) {
                    Some(Holders::People(people)) => people.len().max(1) as u32,
                    _ => 1,
                },
            })
            .sum()
    }
}

fn one_step(required: u32) -> Chain {
    Chain {
        steps: vec![Step {
            parts: vec![Part {
                role: rules::LEGACY_ROLE.to_owned(),
                need: if required <= 1 {
                    Need::One
                } else {
                    Need::Count(required)
                },
            }],
            respond_within_minutes: None,
            escalate_to: None,
        }],
    }
}

/// The org's policy of authority in force and its version: the version an
/// admin loaded last, or the legacy reading of its old threshold.
pub fn policy_of(org: &Org) -> Result<(Option<u64>, Policy), DomainError> {
    if let Some(loaded) = &org.authority {
        let policy = rules::parse(&loaded.text).map_err(|e| {
            DomainError::Internal(format!(
                "the policy of authority version {} of {} no longer reads: {e}",
                loaded.version, org.handle
            ))
        })?;
        return Ok((Some(loaded.version), policy));
    }
    Ok(match org.policy() {
        Ok(p) => (
            None,
            rules::legacy(p.approval.above_total, p.approval.approvers_required),
        ),
        // An unreadable old policy: the most any old policy could ask.
        Err(_) => (None, rules::legacy(Decimal::ZERO, 20)),
    })
}

/// The facts of an ANP offer: its total and currency, its SKUs, and the
/// vendor's name as the host knows it.
pub fn anp_facts(vendor_name: &str, offer: &Value) -> Result<Facts, DomainError> {
    let parsed = anp::payload::Offer::parse(offer)
        .map_err(|e| DomainError::Invalid(format!("offer: {e}")))?;
    let total = anp::money::offer_total(&parsed).amount.decimal();
    let mut facts = Facts::new(
        Protocol::Anp,
        Some(Money {
            value: total,
            currency: parsed.currency.clone(),
        }),
    );
    facts.counterparty = Some(vendor_name.to_owned());
    facts.skus = parsed
        .line_items
        .iter()
        .filter_map(|l| l.sku.clone())
        .collect();
    Ok(facts)
}

/// Routes a request of `org` with these facts under the policy in force.
pub fn route(org: &Org, facts: &Facts) -> Result<StoredRoute, DomainError> {
    let (policy_version, policy) = policy_of(org)?;
    Ok(StoredRoute {
        policy_version,
        route: rules::route(&policy, facts),
    })
}

/// Everything a decision on a routed request is checked against.
#[derive(Clone, Copy)]
pub struct Decidable<'a> {
    /// The route stored with the request.
    pub route: &'a StoredRoute,
    /// Approvals given so far (by approvers not revoked), in order.
    pub approvals: &'a [Approval],
    /// The emails of the org's approvers enrolled and not revoked now.
    pub enrolled: &'a [Person],
    /// The approver named as the requesting agent's owner, if any.
    pub owner: Option<&'a Person>,
    /// When the request arrived and now: a step past its response time is
    /// offered to its escalation role too.
    pub timing: Timing,
    /// The org's delegations in force (stand-ins), by [`crate::domain::delegation::stand_ins`].
    pub stand_ins: &'a [StandIn],
}

/// The times a chain's escalation runs on (unix seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// When the request arrived (its first step opened).
    pub asked_at: Option<i64>,
    /// Now.
    pub now: Option<i64>,
}

impl Timing {
    /// A request that arrived at `asked_at` (RFC 3339, as stored), at `now`.
    pub fn new(asked_at: &str, now: time::OffsetDateTime) -> Timing {
        Timing {
            asked_at: unix(asked_at),
            now: Some(now.unix_timestamp()),
        }
    }
}

/// A stored time as unix seconds, if it reads.
fn unix(text: &str) -> Option<i64> {
    anp::api::parse_timestamp(text).map(time::OffsetDateTime::unix_timestamp)
}

impl Decidable<'_> {
    fn standing(&self) -> Standing<'_> {
        Standing {
            route: &self.route.route,
            approvals: self.approvals,
            enrolled: self.enrolled,
            owner: self.owner,
            asked_at: self.timing.asked_at,
            now: self.timing.now,
            stand_ins: self.stand_ins,
        }
    }

    /// Whether `email` may take `action` now, and where it counts; the
    /// refusal is the sentence the approver reads.
    pub fn admit(&self, email: &str, action: Action) -> Result<Admitted, DomainError> {
        rules::admit(&self.standing(), &Person::new(email), action, None)
            .map_err(|r| DomainError::Policy(r.to_string()))
    }

    /// "Approved at step 1 as buyer; step 2 waits on finance (1 more).":
    /// what an approval by `email`, admitted as `admitted`, leaves to do.
    pub fn approved_sentence(&self, email: &str, admitted: &Admitted) -> String {
        let mut after = self.approvals.to_vec();
        let mut given = approval(
            email,
            Some(admitted.step as u32),
            Some(&admitted.role),
            None,
        );
        given.at = self.timing.now;
        given.for_person = admitted.for_person.clone();
        after.push(given);
        let next = Decidable {
            approvals: &after,
            ..*self
        };
        format!(
            "Approved at step {} as {}{}; {}.",
            admitted.step,
            admitted.role,
            for_whom(admitted),
            waiting_on(&next.progress())
        )
    }

    /// Where the request stands.
    pub fn progress(&self) -> Progress {
        rules::progress(&self.standing())
    }

    /// The approver API's view of it, for the approver `email`.
    pub fn view(&self, email: &str) -> RouteView {
        let progress = self.progress();
        let me = Person::new(email);
        let you_may_act = progress.current.is_some_and(|n| {
            progress.steps[n - 1]
                .parts
                .iter()
                .any(|p| p.may_act.contains(&me))
        });
        let route = &self.route.route;
        // The role a decision by this approver is made as at the current
        // step (what `admit` picks: a role of an open part it holds, or the
        // escalation role once the step is past its time).
        let yours = rules::admit(&self.standing(), &me, Action::Decline, None).ok();
        let your_stand_in = yours.as_ref().and_then(on_behalf_of);
        let your_role = yours.map(|a| a.role);
        let you_may_decide = your_role.is_some();
        RouteView {
            reason: route.reason.clone(),
            rule: match route.fired {
                Fired::Rule { number, .. } => Some(number as u32),
                _ => None,
            },
            policy_version: self.route.policy_version,
            threshold: route.threshold.as_ref().map(Money::to_string),
            current_step: progress.current.map(|n| n as u32),
            you_may_act,
            you_may_decide,
            your_role,
            your_stand_in,
            steps: progress
                .steps
                .iter()
                .zip(&route.chain.steps)
                .map(|(s, step)| RouteStep {
                    number: s.number as u32,
                    met: s.met,
                    parts: s
                        .parts
                        .iter()
                        .map(|p| RoutePart {
                            role: p.role.clone(),
                            required: p.required,
                            approved_by: p.approved_by.iter().map(|x| x.to_string()).collect(),
                            may_act: p.may_act.iter().map(|x| x.to_string()).collect(),
                            stood_in: p
                                .stood_in
                                .iter()
                                .map(|s| StoodIn {
                                    by: s.person.to_string(),
                                    for_person: s.for_person.to_string(),
                                })
                                .collect(),
                        })
                        .collect(),
                    respond_within_minutes: step.respond_within_minutes,
                    escalate_to: step.escalate_to.clone(),
                    due_at: s
                        .due_at
                        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
                        .map(anp::api::format_timestamp),
                    escalated: s.escalated,
                })
                .collect(),
        }
    }
}

/// What a receipt signed by a stand-in admitted as `admitted` names as
/// `approver.on_behalf_of`; `None` for a decision in one's own right.
pub fn on_behalf_of(admitted: &Admitted) -> Option<OnBehalfOf> {
    match (&admitted.for_person, &admitted.stand_in) {
        (Some(person), Some(id)) => Some(OnBehalfOf {
            person: person.to_string(),
            delegation: delegation_urn(id),
        }),
        _ => None,
    }
}

/// " for ann@…" after a role, when the decision is a stand-in's.
pub fn for_whom(admitted: &Admitted) -> String {
    admitted
        .for_person
        .as_ref()
        .map(|p| format!(" for {p}"))
        .unwrap_or_default()
}

/// Checks that a receipt's `approver.on_behalf_of` says what the chain
/// admitted: the holder and delegation for a stand-in, absent otherwise.
pub fn check_on_behalf_of(receipt: &Value, admitted: &Admitted) -> Result<(), String> {
    let signed = receipt.pointer("/approver/on_behalf_of");
    match (signed, on_behalf_of(admitted)) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(
            "approver.on_behalf_of is present, but you decide in your own right: sign without it"
                .into(),
        ),
        (None, Some(want)) => Err(format!(
            "approver.on_behalf_of is absent, but you decide as the stand-in of {} (delegation {}): sign it with on_behalf_of {{\"person\": {:?}, \"delegation\": {:?}}}",
            want.person, want.delegation, want.person, want.delegation
        )),
        (Some(v), Some(want)) => {
            let read: Option<OnBehalfOf> = serde_json::from_value(v.clone()).ok();
            if read.as_ref() == Some(&want) {
                Ok(())
            } else {
                Err(format!(
                    "approver.on_behalf_of is {v}, but you decide as the stand-in of {} under delegation {}",
                    want.person, want.delegation
                ))
            }
        }
    }
}

/// "step 2 waits on finance (1 more)": what the current step still needs.
pub fn waiting_on(progress: &Progress) -> String {
    let Some(n) = progress.current else {
        return "every step is met".into();
    };
    let parts: Vec<String> = progress.steps[n - 1]
        .parts
        .iter()
        .filter(|p| !p.met())
        .map(|p| {
            format!(
                "{} ({} more)",
                p.role,
                p.required.saturating_sub(p.approved_by.len() as u32)
            )
        })
        .collect();
    format!("step {n} waits on {}", parts.join(" and "))
}

/// The enrolled approvers' emails as people.
pub fn people(emails: &[String]) -> Vec<Person> {
    emails.iter().map(|e| Person::new(e)).collect()
}

/// One approval as the chain counts it: who (its signed `approved_by`), at
/// which step, as which role; an approval stored before routing counts at
/// step 1 in the legacy role.
pub fn approval(
    approved_by: &str,
    step: Option<u32>,
    role: Option<&str>,
    at: Option<&str>,
) -> Approval {
    Approval {
        person: Person::new(approved_by),
        step: step.unwrap_or(1) as usize,
        role: role.unwrap_or(rules::LEGACY_ROLE).to_owned(),
        at: at.and_then(unix),
        for_person: None,
    }
}

/// Whom a stored receipt was signed for (its `approver.on_behalf_of`'s
/// person), as the chain counts it.
pub fn signed_for(receipt: &Value) -> Option<Person> {
    receipt
        .pointer("/approver/on_behalf_of/person")
        .and_then(Value::as_str)
        .map(Person::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn org(authority: Option<&str>) -> Org {
        Org {
            handle: "anp_org_test".into(),
            name: "Test".into(),
            sandbox: false,
            disabled: false,
            policy: Some(serde_json::to_string(&crate::policy::Policy::initial()).expect("policy")),
            authority: authority.map(|text| crate::store::OrgAuthority {
                version: 4,
                text: text.to_owned(),
            }),
        }
    }

    const TIERS: &str = include_str!("../../../../docs/examples/authority-three-tier.toml");

    fn usd(v: &str) -> Facts {
        Facts::new(
            Protocol::Anp,
            Some(Money {
                value: v.parse().expect("decimal"),
                currency: "USD".into(),
            }),
        )
    }

    #[test]
    fn a_loaded_policy_routes_and_names_its_version() {
        let r = route(&org(Some(TIERS)), &usd("50000")).expect("route");
        assert_eq!(r.policy_version, Some(4));
        assert_eq!(r.route.reason, "Above 10,000 USD: rule 2");
        assert_eq!(r.approvals_required(), 2);
        let back = StoredRoute::read(Some(&r.to_text().expect("text")), 0).expect("read");
        assert_eq!(back, r);
    }

    #[test]
    fn without_a_policy_the_old_threshold_routes() {
        let o = org(None);
        let p = o.policy().expect("policy");
        let above = p.approval.above_total + Decimal::ONE;
        let r = route(&o, &usd(&above.to_string())).expect("route");
        assert_eq!(r.policy_version, None);
        assert_eq!(r.approvals_required(), p.approval.approvers_required);
        let r = route(&o, &usd("1")).expect("route");
        assert_eq!(r.approvals_required(), 1);
    }

    #[test]
    fn a_request_from_before_routing_takes_its_count_from_any_approvers() {
        let r = StoredRoute::read(None, 2).expect("read");
        assert_eq!(r.approvals_required(), 2);
        let enrolled = people(&["a@x.example".into(), "b@x.example".into()]);
        let given = [approval("a@x.example", None, None, None)];
        let d = Decidable {
            route: &r,
            approvals: &given,
            enrolled: &enrolled,
            owner: None,
            timing: Timing::default(),
            stand_ins: &[],
        };
        assert!(d.admit("a@x.example", Action::Approve).is_err());
        let ok = d.admit("B@x.example", Action::Approve).expect("admit");
        assert!(ok.completes);
    }
}
