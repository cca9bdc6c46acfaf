//! What became of a proposal, for the offer view once a decision was made:
//! this console's own decision (who, when, the outcome, the event it
//! appended and whether that event is verified yet), what the host says of
//! a gate request (decided at another console, by whom and why, or expired),
//! or, when neither says, the answer the verified log shows. The one rule
//! is [`what_became`], for every protocol.

use countersign_host_api::gate::RequestState;
use serde_json::Value;

use crate::protocol::gate_request::Decider;
use crate::protocol::{HostRequest, LogAnswer, Seam, StoredRef};
use crate::store::{AppendedRef, DecisionRecord, StoredEvent};
use crate::views::{AppendedEvent, ProposalDecision};

/// Everything known about a proposal, to say what became of it.
pub(crate) struct Known<'a> {
    /// This console's latest decision on it that reached the host (or is
    /// kept to be sent again): not one the host refused.
    pub mine: Option<&'a DecisionRecord>,
    /// Who this console approves as on that host, as the views name a
    /// person ([`name_and_email`]).
    pub approver: &'a str,
    /// What the host says of the request about it (gate sessions only).
    pub host: Option<&'a HostRequest>,
    /// What the stored, verified record shows answered it.
    pub log: Option<LogAnswer>,
    /// The stored record.
    pub stored: &'a [StoredEvent],
    /// True while it is in the host's pending set.
    pub pending: bool,
    /// True when the org's own agent had to ask a person before accepting
    /// it: a counterparty's proposal in a gate session.
    pub asks_first: bool,
}

/// What became of a proposal, or `None` while it waits undecided.
///
/// A decision this console made that decided it (`appended`) stands. Once
/// the proposal has left the pending set, the host's word on its gate
/// request comes next: approved, denied or countered is `decided` (by the
/// approvers it names, with their reason), even when this console gave
/// only one of the approvals (`awaiting_approvals` is then stale); expired
/// is `expired`; superseded is what the log shows replaced it. Then this
/// console's own decision as the host last answered it, and last what the
/// log alone shows (`answered`, or `withdrawn` when it shows nothing).
pub(crate) fn what_became(known: Known<'_>) -> Option<ProposalDecision> {
    let accepted_at = match &known.log {
        Some(LogAnswer::Accepted { event, .. }) => Some(event.seq),
        _ => None,
    };
    let never_asked = known.asks_first && known.host.is_none() && known.mine.is_none();
    decided(known).map(|mut d| {
        match (accepted_at, d.action.as_deref()) {
            (Some(seq), Some(action @ ("decline" | "counter"))) => {
                d.breach = Some(format!(
                    "The org's agent accepted at seq {seq} although the decision recorded for this request was a {action}: it acted against the person's decision."
                ));
            }
            (Some(seq), _) if never_asked => {
                d.breach = Some(format!(
                    "The org's agent accepted at seq {seq} without asking: no request for a person's decision was ever made about this proposal, so nobody approved it."
                ));
            }
            _ => {}
        }
        d
    })
}

/// [`what_became`] before the check that the agent kept to the decision.
fn decided(known: Known<'_>) -> Option<ProposalDecision> {
    let state = known.host.and_then(HostRequest::state);
    let left = !known.pending;
    match (known.mine, known.host, state) {
        (Some(mine), _, _) if mine.outcome == "appended" => {
            Some(from_decision(mine, known.approver, known.stored))
        }
        (
            mine,
            Some(host),
            Some(RequestState::Approved | RequestState::Denied | RequestState::Countered),
        ) if left => Some(from_host(host, mine, known.log)),
        (mine, Some(host), Some(RequestState::Expired)) if left => {
            Some(expired(host, mine, known.log.as_ref()))
        }
        (_, Some(_), Some(RequestState::Superseded)) if left => Some(match known.log {
            None => withdrawn(
                None,
                "A later message answered it before anyone decided, the host says.",
            ),
            answer => from_log(answer),
        }),
        (Some(mine), _, _) => Some(from_decision(mine, known.approver, known.stored)),
        (None, _, _) if left => Some(from_log(known.log)),
        (None, _, _) => None,
    }
}

/// `appended` as the view shows it: verified once the stored copy holds it.
pub(crate) fn appended_event(appended: &AppendedRef, stored: &[StoredEvent]) -> AppendedEvent {
    AppendedEvent {
        seq: appended.seq,
        kind: appended.kind.clone(),
        event_hash: appended.event_hash.clone(),
        verified: stored
            .iter()
            .any(|e| e.seq == appended.seq && e.event_hash == appended.event_hash),
    }
}

/// A decision this console made; `decided_by` is who it approves as on
/// that host.
fn from_decision(
    record: &DecisionRecord,
    decided_by: &str,
    stored: &[StoredEvent],
) -> ProposalDecision {
    ProposalDecision {
        action: Some(record.action.clone()),
        outcome: record.outcome.clone(),
        decided_by: Some(decided_by.to_owned()),
        at: Some(record.at.clone()),
        decision_id: Some(record.decision_id.clone()),
        appended: record.appended.as_ref().map(|a| appended_event(a, stored)),
        detail: record.detail.clone(),
        reason: None,
        breach: None,
        countered: None,
    }
}

fn verified(event: &StoredRef) -> AppendedEvent {
    AppendedEvent {
        seq: event.seq,
        kind: event.kind.clone(),
        event_hash: event.event_hash.clone(),
        verified: true,
    }
}

/// A proposal that left the pending set with no decision from this console:
/// what the (verified, stored) log shows.
fn from_log(answer: Option<LogAnswer>) -> ProposalDecision {
    match answer {
        Some(LogAnswer::Accepted { event, approved_by }) => ProposalDecision {
            action: Some("approve".to_owned()),
            outcome: "answered".to_owned(),
            decided_by: (!approved_by.is_empty()).then(|| approved_by.join(", ")),
            at: Some(event.at.clone()),
            decision_id: None,
            detail: format!("Accepted at seq {}.", event.seq),
            appended: Some(verified(&event)),
            reason: None,
            breach: None,
            countered: None,
        },
        Some(LogAnswer::Answered { event, action }) => ProposalDecision {
            action: Some(action.to_owned()),
            outcome: "answered".to_owned(),
            decided_by: None,
            at: Some(event.at.clone()),
            decision_id: None,
            detail: format!(
                "Answered at seq {} ({}).",
                event.seq,
                event.kind.replace('_', "-")
            ),
            appended: Some(verified(&event)),
            reason: None,
            breach: None,
            countered: None,
        },
        Some(LogAnswer::Replaced { event }) => withdrawn(
            Some(event.at.clone()),
            &format!("A newer proposal replaced it at seq {}.", event.seq),
        ),
        None => withdrawn(
            None,
            "It no longer waits for a decision, and the log shows no answer to it yet.",
        ),
    }
}

fn withdrawn(at: Option<String>, detail: &str) -> ProposalDecision {
    ProposalDecision {
        action: None,
        outcome: "withdrawn".to_owned(),
        decided_by: None,
        at,
        decision_id: None,
        appended: None,
        detail: detail.to_owned(),
        reason: None,
        breach: None,
        countered: None,
    }
}

/// Who a decider is, in the words shown: their name and the email they
/// approve as, "Grace Hopper (grace@fabrikam.example)", or whichever of the
/// two the host gives.
fn who(d: &Decider) -> String {
    name_and_email(&d.name, &d.email)
}

/// A gate request the host says was decided: approved by every approver
/// it names, or declined (with terms to offer instead, or not) by the last
/// one who declined; this console's decision id when it took part; the
/// agent's answer on the log, when it shows one yet.
fn from_host(
    host: &HostRequest,
    mine: Option<&DecisionRecord>,
    log: Option<LogAnswer>,
) -> ProposalDecision {
    let (action, deciders): (&str, Vec<&Decider>) = match host.state() {
        Some(RequestState::Approved) => {
            let mut approvers: Vec<&Decider> = Vec::new();
            for d in host.decided_by.iter().filter(|d| d.decision == "approve") {
                if !approvers.iter().any(|a| who(a) == who(d)) {
                    approvers.push(d);
                }
            }
            ("approve", approvers)
        }
        state => (
            if state == Some(RequestState::Countered) {
                "counter"
            } else {
                "decline"
            },
            host.decided_by
                .iter()
                .rev()
                .find(|d| d.decision == "deny")
                .into_iter()
                .collect(),
        ),
    };
    let answered = match &log {
        Some(LogAnswer::Accepted { event, .. } | LogAnswer::Answered { event, .. }) => Some(event),
        _ => None,
    };
    let what = match action {
        "approve" => format!(
            "The host recorded the approvals its policy needs ({} of {}) for the org's agent.",
            host.approvals_given, host.approvals_required
        ),
        "counter" => {
            "The host recorded a decline with terms to offer instead, for the org's agent."
                .to_owned()
        }
        _ => "The host recorded a decline for the org's agent.".to_owned(),
    };
    let log_words = match answered {
        Some(event) => format!(
            " The session log shows the agent's answer at seq {}.",
            event.seq
        ),
        None => " The session log shows no answer from the agent yet.".to_owned(),
    };
    ProposalDecision {
        action: Some(action.to_owned()),
        outcome: "decided".to_owned(),
        decided_by: (!deciders.is_empty()).then(|| {
            deciders
                .iter()
                .map(|d| who(d))
                .collect::<Vec<String>>()
                .join(", ")
        }),
        at: deciders
            .last()
            .map(|d| d.at.clone())
            .filter(|at| !at.is_empty()),
        decision_id: mine.map(|m| m.decision_id.clone()),
        appended: answered.map(verified),
        detail: what + &log_words,
        reason: if action == "approve" {
            None
        } else {
            host.reason.clone()
        },
        breach: None,
        countered: None,
    }
}

/// A gate request that expired undecided, the host says: the agent must
/// not accept; the approvals given by then, when there were any.
fn expired(
    host: &HostRequest,
    mine: Option<&DecisionRecord>,
    log: Option<&LogAnswer>,
) -> ProposalDecision {
    let detail = if host.approvals_given > 0 {
        format!(
            "Nobody completed the decision in time: it expired with {} of {} approvals, so the org's agent must not accept.",
            host.approvals_given, host.approvals_required
        )
    } else {
        "Nobody decided before it expired, so the org's agent must not accept.".to_owned()
    };
    ProposalDecision {
        action: None,
        outcome: "expired".to_owned(),
        decided_by: None,
        at: (!host.expires_at.is_empty()).then(|| host.expires_at.clone()),
        decision_id: mine.map(|m| m.decision_id.clone()),
        appended: None,
        detail,
        reason: None,
        breach: match log {
            Some(LogAnswer::Accepted { event, .. }) => Some(format!(
                "The org's agent accepted at seq {} although the request expired with no decision: it acted without the person's approval.",
                event.seq
            )),
            _ => None,
        },
        countered: None,
    }
}

/// The terms a counter offered instead, in the protocol's counter form
/// ([`Seam::validate_counter`] reads them): the host's record when the
/// decision is the host's word (a counter made at another console), the
/// answer on the log when only the log shows it, else this console's own
/// counter as it sent it. `None` for any other decision.
pub(crate) fn countered_terms(
    decision: &ProposalDecision,
    mine: Option<&DecisionRecord>,
    host: Option<&HostRequest>,
    events: &[StoredEvent],
    seam: &dyn Seam,
) -> Option<Value> {
    if decision.action.as_deref() != Some("counter") {
        return None;
    }
    match decision.outcome.as_str() {
        "decided" => host
            .and_then(|h| h.counter_terms.clone())
            .filter(|t| !t.is_null()),
        "answered" => {
            let answer = decision.appended.as_ref()?;
            let event = events.iter().find(|e| e.event_hash == answer.event_hash)?;
            seam.counter_on_log(event)
        }
        _ => {
            let mine = mine.filter(|m| m.action == "counter")?;
            seam.counter_in_decision(&serde_json::from_str(&mine.body).ok()?)
        }
    }
}

/// A person as the views name them: "Grace Hopper (grace@fabrikam.example)",
/// or whichever of the two is known.
pub(crate) fn name_and_email(name: &str, email: &str) -> String {
    match (name.trim(), email.trim()) {
        ("", email) => email.to_owned(),
        (name, "") => name.to_owned(),
        (name, email) => format!("{name} ({email})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ADA: &str = "ada@fabrikam.example";
    const GRACE: &str = "grace@fabrikam.example";

    #[test]
    fn a_decider_reads_as_name_and_email_or_whichever_the_host_gave() {
        let d = |name: &str, email: &str| Decider {
            name: name.into(),
            email: email.into(),
            decision: "approve".into(),
            at: String::new(),
        };
        assert_eq!(
            who(&d("Ada Lovelace", ADA)),
            "Ada Lovelace (ada@fabrikam.example)"
        );
        assert_eq!(who(&d("", ADA)), ADA);
        assert_eq!(who(&d("Ada Lovelace", " ")), "Ada Lovelace");
    }

    /// The name the host gives each approver, as enrolled.
    fn name_of(email: &str) -> &'static str {
        if email == ADA {
            "Ada Lovelace"
        } else {
            "Grace Hopper"
        }
    }

    fn host(status: &str, decided_by: &[(&str, &str, &str)], reason: Option<&str>) -> HostRequest {
        serde_json::from_value(json!({
            "request_id": "r1", "message_hash": "sha256:aa", "status": status,
            "expires_at": "2026-12-02T09:00:00Z", "created_at": "2026-12-01T09:00:00Z",
            "approvals_given": decided_by.iter().filter(|d| d.1 == "approve").count(),
            "approvals_required": 2,
            "decided_by": decided_by.iter().map(|(email, decision, at)| json!({
                "name": name_of(email), "email": email, "identity": "did:key:z6Mk", "decision": decision, "at": at
            })).collect::<Vec<_>>(),
            "reason": reason, "counter_terms": null,
        }))
        .unwrap()
    }

    fn mine(outcome: &str) -> DecisionRecord {
        DecisionRecord {
            decision_id: "d-1".into(),
            host_id: "h".into(),
            session_id: "concordia:s".into(),
            in_response_to: "sha256:aa".into(),
            action: "approve".into(),
            body: "{}".into(),
            headers: None,
            outcome: outcome.into(),
            detail: "1 of 2 approvals".into(),
            at: "2026-12-01T09:10:00Z".into(),
            proposal: None,
            appended: None,
            key_fingerprint: None,
        }
    }

    fn answer(kind: &str, seq: u64) -> StoredRef {
        StoredRef {
            seq,
            kind: kind.into(),
            event_hash: format!("sha256:{seq}"),
            at: "2026-12-01T10:00:00Z".into(),
        }
    }

    fn became(
        mine: Option<&DecisionRecord>,
        host: Option<&HostRequest>,
        log: Option<LogAnswer>,
        pending: bool,
    ) -> Option<ProposalDecision> {
        what_became(Known {
            mine,
            approver: ADA,
            host,
            log,
            stored: &[],
            pending,
            asks_first: true,
        })
    }

    #[test]
    fn countered_terms_are_the_hosts_word_the_logs_answer_or_the_body_sent_here() {
        let terms = json!({"price": {"value": 1900, "currency": "USD"}});
        let mut countered = host(
            "countered",
            &[(GRACE, "deny", "2026-12-01T09:10:00Z")],
            Some("No."),
        );
        countered.counter_terms = Some(terms.clone());
        let gate = crate::protocol::Protocol::Concordia.seam();
        // Decided at another console: the host's record.
        let d = became(None, Some(&countered), None, false).unwrap();
        assert_eq!(
            (d.outcome.as_str(), d.action.as_deref()),
            ("decided", Some("counter"))
        );
        assert_eq!(
            countered_terms(&d, None, Some(&countered), &[], gate),
            Some(terms.clone())
        );
        // A host that recorded no terms gives none (null is none).
        let mut bare = countered.clone();
        bare.counter_terms = Some(Value::Null);
        assert_eq!(countered_terms(&d, None, Some(&bare), &[], gate), None);
        // This console's counter: the body it sent, read by the protocol.
        let mut sent = mine("appended");
        sent.action = "counter".into();
        sent.body = json!({"action": "counter", "counter_terms": {"price": 1}}).to_string();
        let d = became(Some(&sent), Some(&countered), None, false).unwrap();
        assert_eq!(d.outcome, "appended", "this console's decision stands");
        assert_eq!(
            countered_terms(&d, Some(&sent), Some(&countered), &[], gate),
            Some(json!({"price": 1})),
            "what it sent, not the host's copy"
        );
        // A body that is not JSON gives none.
        sent.body = "{not json".into();
        assert_eq!(countered_terms(&d, Some(&sent), None, &[], gate), None);
        // Anything but a counter offers nothing instead.
        let mut approved = mine("appended");
        approved.body = json!({"counter_terms": {"price": 1}}).to_string();
        let d = became(Some(&approved), None, None, false).unwrap();
        assert_eq!(d.action.as_deref(), Some("approve"));
        assert_eq!(countered_terms(&d, Some(&approved), None, &[], gate), None);
    }

    #[test]
    fn a_counter_only_the_log_shows_offers_what_its_event_carries() {
        let event = |kind: &str, payload: Value| StoredEvent {
            seq: 7,
            event_hash: "sha256:7".into(),
            actor: "buyer".into(),
            kind: kind.into(),
            at: "2026-12-01T10:00:00Z".into(),
            body: json!({"seq": 7, "kind": kind, "payload": payload}).to_string(),
            signature_state: "verified".into(),
        };
        let offer = json!({"currency": "USD", "line_items": []});
        let answered = |kind: &str| {
            became(
                None,
                None,
                Some(LogAnswer::Answered {
                    event: answer(kind, 7),
                    action: "counter",
                }),
                false,
            )
            .unwrap()
        };
        let anp = crate::protocol::Protocol::Anp.seam();
        let d = answered("counter_offer");
        assert_eq!(d.outcome, "answered");
        assert_eq!(
            countered_terms(
                &d,
                None,
                None,
                &[event("counter_offer", offer.clone())],
                anp
            ),
            Some(offer.clone()),
            "an ANP counter-offer's payload is the offer sent instead"
        );
        // Not stored (or not this hash): nothing to show.
        assert_eq!(countered_terms(&d, None, None, &[], anp), None);
        // A seam whose transcript counter is not in its counter form: none.
        let gate = crate::protocol::Protocol::Concordia.seam();
        let d = answered("negotiate.counter");
        assert_eq!(
            countered_terms(&d, None, None, &[event("negotiate.counter", offer)], gate),
            None
        );
    }

    #[test]
    fn an_accept_nobody_was_asked_about_is_a_breach_where_the_agent_had_to_ask() {
        let accepted = || {
            Some(LogAnswer::Accepted {
                event: answer("negotiate.accept", 7),
                approved_by: Vec::new(),
            })
        };
        let d = became(None, None, accepted(), false).unwrap();
        let breach = d.breach.expect("accepted without a request");
        assert!(
            breach.contains("accepted at seq 7 without asking"),
            "{breach}"
        );
        // Where the agent need not ask (its own proposal, or not a gate
        // session) an accept is just the answer.
        let free = what_became(Known {
            mine: None,
            approver: ADA,
            host: None,
            log: accepted(),
            stored: &[],
            pending: false,
            asks_first: false,
        })
        .unwrap();
        assert_eq!(free.breach, None);
        // Not accepted: nothing to flag.
        assert_eq!(became(None, None, None, false).unwrap().breach, None);
        // Asked and approved through the host: no breach.
        let approved = host(
            "approved",
            &[(ADA, "approve", "2026-12-01T09:10:00Z")],
            None,
        );
        assert_eq!(
            became(None, Some(&approved), accepted(), false)
                .unwrap()
                .breach,
            None
        );
    }

    #[test]
    fn an_accept_against_a_decline_a_counter_or_an_expiry_is_a_breach_and_after_an_approval_is_not()
    {
        let accepted = || {
            Some(LogAnswer::Accepted {
                event: answer("negotiate.accept", 6),
                approved_by: Vec::new(),
            })
        };
        for (status, decision) in [("denied", "deny"), ("countered", "deny")] {
            let h = host(
                status,
                &[(GRACE, decision, "2026-12-01T09:30:00Z")],
                Some("no"),
            );
            let d = became(None, Some(&h), accepted(), false).unwrap();
            let breach = d.breach.unwrap_or_else(|| panic!("{status}: no breach"));
            assert!(breach.contains("accepted at seq 6"), "{breach}");
            assert!(breach.contains("against the person's decision"), "{breach}");
            // The agent answering some other way is no breach.
            let countered = Some(LogAnswer::Answered {
                event: answer("negotiate.counter", 6),
                action: "counter",
            });
            assert_eq!(
                became(None, Some(&h), countered, false).unwrap().breach,
                None
            );
        }
        let late = host("expired", &[], None);
        let d = became(None, Some(&late), accepted(), false).unwrap();
        assert!(d.breach.unwrap().contains("expired with no decision"));
        assert_eq!(became(None, Some(&late), None, false).unwrap().breach, None);
        let approved = host(
            "approved",
            &[
                (ADA, "approve", "2026-12-01T09:10:00Z"),
                (GRACE, "approve", "2026-12-01T09:30:00Z"),
            ],
            None,
        );
        assert_eq!(
            became(None, Some(&approved), accepted(), false)
                .unwrap()
                .breach,
            None
        );
    }

    #[test]
    fn a_request_declined_at_another_console_reads_declined_by_that_approver_with_the_reason() {
        let denied = host(
            "denied",
            &[(GRACE, "deny", "2026-12-01T09:30:00Z")],
            Some("<script>alert(1)</script> Above our benchmark."),
        );
        let d = became(None, Some(&denied), None, false).unwrap();
        assert_eq!(d.outcome, "decided");
        assert_eq!(d.action.as_deref(), Some("decline"));
        assert_eq!(
            d.decided_by.as_deref(),
            Some("Grace Hopper (grace@fabrikam.example)")
        );
        assert_eq!(d.at.as_deref(), Some("2026-12-01T09:30:00Z"));
        assert_eq!(
            d.reason.as_deref(),
            Some("<script>alert(1)</script> Above our benchmark."),
            "the approver's words as written: the view shows them as text"
        );
        assert_eq!(d.decision_id, None, "not decided here");
        assert_eq!(d.appended, None);
        assert!(
            d.detail.contains("no answer from the agent yet"),
            "{}",
            d.detail
        );
        // Without the host's word it would read withdrawn: the rule is what changed it.
        assert_eq!(
            became(None, None, None, false).unwrap().outcome,
            "withdrawn"
        );
    }

    #[test]
    fn a_counter_at_another_console_names_the_agents_answer_once_the_log_shows_it() {
        let countered = host(
            "countered",
            &[(GRACE, "deny", "2026-12-01T09:30:00Z")],
            Some("Meet us nearer our number."),
        );
        let log = LogAnswer::Answered {
            event: answer("negotiate.counter", 7),
            action: "counter",
        };
        let d = became(None, Some(&countered), Some(log), false).unwrap();
        assert_eq!(d.outcome, "decided");
        assert_eq!(d.action.as_deref(), Some("counter"));
        assert_eq!(d.reason.as_deref(), Some("Meet us nearer our number."));
        let appended = d.appended.unwrap();
        assert_eq!((appended.seq, appended.verified), (7, true));
        assert!(d.detail.contains("seq 7"), "{}", d.detail);
    }

    #[test]
    fn an_approval_given_here_reads_approved_by_both_once_the_host_has_the_last_one() {
        let waiting = mine("awaiting_approvals");
        let still = host("pending", &[(ADA, "approve", "2026-12-01T09:10:00Z")], None);
        let d = became(Some(&waiting), Some(&still), None, true).unwrap();
        assert_eq!(
            d.outcome, "awaiting_approvals",
            "while the host still waits"
        );

        let approved = host(
            "approved",
            &[
                (ADA, "approve", "2026-12-01T09:10:00Z"),
                (GRACE, "approve", "2026-12-01T09:40:00Z"),
            ],
            None,
        );
        let d = became(Some(&waiting), Some(&approved), None, false).unwrap();
        assert_eq!(d.outcome, "decided", "not a stale awaiting_approvals");
        assert_eq!(d.action.as_deref(), Some("approve"));
        assert_eq!(
            d.decided_by.as_deref(),
            Some("Ada Lovelace (ada@fabrikam.example), Grace Hopper (grace@fabrikam.example)")
        );
        assert_eq!(
            d.at.as_deref(),
            Some("2026-12-01T09:40:00Z"),
            "the last approval"
        );
        assert_eq!(
            d.decision_id.as_deref(),
            Some("d-1"),
            "this console took part"
        );
        assert_eq!(d.reason, None);
        assert!(d.detail.contains("2 of 2"), "{}", d.detail);
    }

    #[test]
    fn a_decision_here_that_decided_it_stands_and_the_hosts_word_waits_for_the_pending_set() {
        let approved = host(
            "approved",
            &[(ADA, "approve", "2026-12-01T09:10:00Z")],
            None,
        );
        let appended = mine("appended");
        let d = became(Some(&appended), Some(&approved), None, false).unwrap();
        assert_eq!(
            (d.outcome.as_str(), d.decided_by.as_deref()),
            ("appended", Some(ADA))
        );
        // Still in the pending set (a newer request about the same message):
        // the host's word on an older one is not taken.
        assert_eq!(became(None, Some(&approved), None, true), None);
    }

    #[test]
    fn a_request_that_expired_undecided_reads_expired_with_the_approvals_given() {
        let expired = host("expired", &[], None);
        let d = became(None, Some(&expired), None, false).unwrap();
        assert_eq!(d.outcome, "expired");
        assert_eq!(d.action, None);
        assert_eq!(d.at.as_deref(), Some("2026-12-02T09:00:00Z"));
        assert!(d.detail.contains("must not accept"), "{}", d.detail);

        let half = host("expired", &[(ADA, "approve", "2026-12-01T09:10:00Z")], None);
        let d = became(Some(&mine("awaiting_approvals")), Some(&half), None, false).unwrap();
        assert_eq!(d.outcome, "expired", "not a stale awaiting_approvals");
        assert!(d.detail.contains("1 of 2"), "{}", d.detail);
        assert_eq!(d.decision_id.as_deref(), Some("d-1"));
    }

    #[test]
    fn a_superseded_request_reads_as_what_replaced_it_and_an_unknown_status_as_nothing() {
        let superseded = host("superseded", &[], None);
        let replaced = LogAnswer::Replaced {
            event: answer("negotiate.counter", 8),
        };
        let d = became(
            Some(&mine("awaiting_approvals")),
            Some(&superseded),
            Some(replaced),
            false,
        )
        .unwrap();
        assert_eq!(d.outcome, "withdrawn");
        assert!(d.detail.contains("seq 8"), "{}", d.detail);
        let d = became(None, Some(&superseded), None, false).unwrap();
        assert_eq!(d.outcome, "withdrawn");
        assert!(d.detail.contains("A later message"), "{}", d.detail);

        let unknown = host("reconsidered", &[(GRACE, "deny", "t")], Some("no"));
        let d = became(None, Some(&unknown), None, false).unwrap();
        assert_eq!(
            d.outcome, "withdrawn",
            "a word this build does not know decides nothing"
        );
    }
}
