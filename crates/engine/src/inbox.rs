//! The inbox: each pending decision beside the offer it answers, with the
//! diff, exact totals, the vendor, both envelopes, the session's verification
//! state and the approvals already given; and the same view of a proposal
//! once it was decided. Built from the store only, so it works offline and
//! costs no request.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use time::OffsetDateTime;

use crate::clock::parse_time;
use crate::config::ApproverProfile;
use crate::error::EngineError;
use crate::protocol::{CounterAt, HostRequest, Located, PendingProposal, Protocol, Trust};
use crate::store::{PendingOverview, PendingRecord, SessionRecord, Store};
use crate::views::*;

/// The protocol a stored session speaks.
pub(crate) fn protocol_of(session: &SessionRecord) -> Result<Protocol, EngineError> {
    Protocol::parse(&session.protocol)
}

/// The total and currency of a pending proposal, for notifications.
pub(crate) fn pending_amount(
    store: &Store,
    session: &SessionRecord,
    pending: &PendingProposal,
) -> Option<(String, String)> {
    let events = store.events(&session.host_id, &session.session_id).ok()?;
    let located = protocol_of(session).ok()?.seam().locate(&events, pending)?;
    let amount = located.proposal.amount?;
    Some((amount.value, amount.currency))
}

fn item(
    record: &PendingRecord,
    pending: &PendingProposal,
    session: &SessionRecord,
    located: &Located,
    unread: bool,
) -> Result<InboxItem, EngineError> {
    let seam = protocol_of(session)?.seam();
    Ok(InboxItem {
        host_id: record.host_id.clone(),
        session_id: record.session_id.clone(),
        protocol: session.protocol.clone(),
        proposal_kind: seam.proposal_kind(),
        seq: located.proposal.seq,
        event_hash: pending.event_hash.clone(),
        kind: pending.kind.clone(),
        side: seam.side(session, &located.proposal.actor),
        actor: located.proposal.actor.clone(),
        is_draft: pending.draft.is_some(),
        counterparty: session.counterparty.clone(),
        amount: located.proposal.amount.clone(),
        previous_amount: located.previous.as_ref().and_then(|p| p.amount.clone()),
        change: located.change.clone(),
        gap: located.gap.clone(),
        expires_at: pending.expires_at.clone(),
        verification: session.verification,
        approvals_given: pending.approvals.len() as u32,
        approvals_required: pending.approvals_required,
        unread,
        held_reason: pending.held_reason.clone(),
        chain: pending.chain.clone(),
        waits_on_you: pending.chain.as_ref().is_none_or(|c| c.you_may_approve),
    })
}

/// A pending decision the inbox can list: its offer is stored (or it is a
/// draft, which carries its offer) and its session is known.
struct Listed {
    overview: PendingOverview,
    pending: PendingProposal,
}

/// The pending decisions of every host but `left_out`, soonest expiry first,
/// read without touching a single event.
fn listed(store: &Store, left_out: &HashSet<String>) -> Result<Vec<Listed>, EngineError> {
    let mut listed: Vec<Listed> = store
        .pending_overview()?
        .into_iter()
        .filter(|o| o.session_known && !o.dismissed && !left_out.contains(&o.record.host_id))
        .filter_map(|overview| {
            let pending = serde_json::from_str::<PendingProposal>(&overview.record.body).ok()?;
            (pending.draft.is_some() || overview.offer_stored)
                .then_some(Listed { overview, pending })
        })
        .collect();
    listed.sort_by_cached_key(|l| expiry_key(&l.pending.expires_at));
    Ok(grouped_by_session(listed, |l| {
        (
            l.overview.record.host_id.clone(),
            l.overview.record.session_id.clone(),
        )
    }))
}

/// Keeps a session's items together (its counterparty's proposal and our
/// agent's draft answering it are one matter): each session's items follow
/// its first, in the order given, and sessions keep the order of their first.
fn grouped_by_session<T>(items: Vec<T>, key: impl Fn(&T) -> (String, String)) -> Vec<T> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: std::collections::HashMap<(String, String), Vec<T>> =
        std::collections::HashMap::new();
    for item in items {
        let k = key(&item);
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(item);
    }
    order
        .into_iter()
        .flat_map(|k| groups.remove(&k).unwrap_or_default())
        .collect()
}

/// The inbox as `query` asks for it: full rows for the page, counts for all.
/// Only the page's offers are read and diffed, so a thousand pending
/// decisions cost a page of work, not a thousand. A pending offer whose
/// stored event cannot be read as an offer is left out of the page and of
/// the counts; one further down is counted (it is checked when it is shown).
pub(crate) fn inbox_page(
    store: &Store,
    query: &InboxQuery,
    left_out: &HashSet<String>,
    now: OffsetDateTime,
) -> Result<InboxPage, EngineError> {
    let (expired, listed): (Vec<Listed>, Vec<Listed>) = listed(store, left_out)?
        .into_iter()
        .partition(|l| is_expired(&l.pending.expires_at, now));
    let emails = approver_emails(store)?;
    let others = waiting_on_others(&listed, &emails);
    let listed = yours_first(listed, &others);
    let limit = query.limit.map_or(usize::MAX, |l| l as usize);
    let through = query.through.as_ref().and_then(|target| {
        listed.iter().position(|l| {
            let r = &l.overview.record;
            r.host_id == target.host_id
                && r.session_id == target.session_id
                && r.event_hash == target.event_hash
        })
    });
    let mut page = InboxPage {
        items: Vec::new(),
        total: 0,
        unread: 0,
        waiting: 0,
        expired: Vec::new(),
    };
    for l in &expired {
        if let Some(row) = row_of(store, l, false)? {
            page.expired.push(row);
        }
    }
    for (index, l) in listed.iter().enumerate() {
        let unread = !l.overview.seen;
        let wanted = page.items.len() < limit || through.is_some_and(|t| index <= t);
        if wanted {
            let Some(mut row) = row_of(store, l, unread)? else {
                continue;
            };
            row.waits_on_you = !others.contains(&session_of(l));
            page.items.push(row);
        }
        page.total += 1;
        page.unread += u32::from(unread);
        page.waiting += u32::from(waits_on(&l.pending, emails.get(&l.overview.record.host_id)));
    }
    Ok(page)
}

/// The sessions that wait on others, not on this person: every one of
/// their counterparty's proposals does (our agent's drafts go with the
/// proposal they answer; a session of drafts alone waits on this person).
fn waiting_on_others(
    listed: &[Listed],
    emails: &HashMap<String, String>,
) -> HashSet<(String, String)> {
    let mut yours: HashSet<(String, String)> = HashSet::new();
    let mut others: HashSet<(String, String)> = HashSet::new();
    for l in listed.iter().filter(|l| l.pending.draft.is_none()) {
        let r = &l.overview.record;
        let key = (r.host_id.clone(), r.session_id.clone());
        if waits_on(&l.pending, emails.get(&r.host_id)) {
            yours.insert(key);
        } else {
            others.insert(key);
        }
    }
    others.retain(|k| !yours.contains(k));
    others
}

fn session_of(l: &Listed) -> (String, String) {
    let r = &l.overview.record;
    (r.host_id.clone(), r.session_id.clone())
}

/// The decisions that wait on this person first, then those that wait on
/// others (a later step's role, other holders once this person's approval
/// counts), each part in its order (soonest expiry first, sessions kept
/// together).
fn yours_first(listed: Vec<Listed>, others: &HashSet<(String, String)>) -> Vec<Listed> {
    let (mine, theirs): (Vec<Listed>, Vec<Listed>) = listed
        .into_iter()
        .partition(|l| !others.contains(&session_of(l)));
    mine.into_iter().chain(theirs).collect()
}

/// Per host, the email this console approves as there.
fn approver_emails(store: &Store) -> Result<HashMap<String, String>, EngineError> {
    Ok(store
        .hosts()?
        .into_iter()
        .map(|host| (host.host_id, host.approver_email))
        .collect())
}

/// True while `pending` waits on the approver `email`. Where the host
/// routed it along a chain of approvals, exactly when the chain lets this
/// person approve at its current step (a step that waits on other roles,
/// or on other holders once theirs counts, waits on them). Otherwise
/// always, unless they
/// already gave their approval and it waits only on other approvers (a
/// host without a known email counts it: better one too many than a
/// decision nobody is told of).
pub(crate) fn waits_on(pending: &PendingProposal, email: Option<&String>) -> bool {
    if let Some(chain) = &pending.chain {
        return chain.you_may_approve;
    }
    let Some(email) = email.map(|e| e.trim()).filter(|e| !e.is_empty()) else {
        return true;
    };
    !pending
        .approvals
        .iter()
        .any(|a| a.approved_by.trim().eq_ignore_ascii_case(email))
}

/// One pending decision waiting on the person, as the reminders read it.
pub(crate) struct Waiting {
    /// The stored record (host, session, hash).
    pub record: PendingRecord,
    /// The host's pending record, read.
    pub pending: PendingProposal,
}

/// Every pending decision waiting on the person at `now` (of every host
/// but `left_out`): listed in the inbox, not expired, not already approved
/// by them. What the inbox counts as `waiting`, one by one.
pub(crate) fn waiting(
    store: &Store,
    left_out: &HashSet<String>,
    now: OffsetDateTime,
) -> Result<Vec<Waiting>, EngineError> {
    let emails = approver_emails(store)?;
    Ok(listed(store, left_out)?
        .into_iter()
        .filter(|l| !is_expired(&l.pending.expires_at, now))
        .filter(|l| waits_on(&l.pending, emails.get(&l.overview.record.host_id)))
        .map(|l| Waiting {
            record: l.overview.record,
            pending: l.pending,
        })
        .collect())
}

/// The full row of a listed proposal; `None` when its offer cannot be read.
fn row_of(store: &Store, l: &Listed, unread: bool) -> Result<Option<InboxItem>, EngineError> {
    let record = &l.overview.record;
    let Some(session) = store.session(&record.host_id, &record.session_id)? else {
        return Ok(None);
    };
    let Ok(protocol) = protocol_of(&session) else {
        return Ok(None);
    };
    let events = store.events(&record.host_id, &record.session_id)?;
    let Some(located) = protocol.seam().locate(&events, &l.pending) else {
        return Ok(None);
    };
    item(record, &l.pending, &session, &located, unread).map(Some)
}

/// Puts away a pending proposal that expired undecided (see
/// [`crate::Engine::dismiss`]).
pub(crate) fn dismiss(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
    now: OffsetDateTime,
) -> Result<(), EngineError> {
    let (_, pending, _) =
        find_pending(store, host_id, session_id, event_hash)?.ok_or_else(|| {
            EngineError::NotFound {
                what: "pending proposal",
                id: event_hash.to_owned(),
            }
        })?;
    if !is_expired(&pending.expires_at, now) {
        return Err(EngineError::InvalidInput(
            "This proposal has not expired: decide it (approve, decline or counter) instead of dismissing it."
                .to_owned(),
        ));
    }
    let at = now
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| {
            EngineError::InvalidInput(format!("the clock's time cannot be written: {e}"))
        })?;
    store.dismiss(host_id, session_id, event_hash, &at)?;
    Ok(())
}

fn expiry_key(text: &str) -> (i128, String) {
    let at = parse_time(text)
        .map(|t| t.unix_timestamp_nanos())
        .unwrap_or(i128::MAX);
    (at, text.to_owned())
}

/// True when `expires_at` has passed at `now` (an unreadable time counts
/// as expired).
pub(crate) fn is_expired(expires_at: &str, now: OffsetDateTime) -> bool {
    parse_time(expires_at).is_none_or(|t| t <= now)
}

pub(crate) fn verification_view(session: &SessionRecord) -> VerificationView {
    VerificationView {
        state: session.verification,
        detail: session.dispute_detail.clone(),
        failing_seq: session.failing_seq,
        checks: session.failing_checks.clone(),
    }
}

/// The pending record of one offer, with its session.
pub(crate) fn find_pending(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
) -> Result<Option<(PendingRecord, PendingProposal, SessionRecord)>, EngineError> {
    let record = store
        .pending()?
        .into_iter()
        .find(|p| p.host_id == host_id && p.session_id == session_id && p.event_hash == event_hash);
    let Some(record) = record else {
        return Ok(None);
    };
    let pending: PendingProposal = serde_json::from_str(&record.body)
        .map_err(|e| EngineError::Protocol(format!("stored pending decision: {e}")))?;
    let session = store
        .session(host_id, session_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })?;
    Ok(Some((record, pending, session)))
}

/// The proposal `event_hash` as a pending record, once it has left the
/// pending set: from what a decision kept of it, else from the stored log.
fn former_proposal(
    protocol: Protocol,
    events: &[crate::store::StoredEvent],
    decision: Option<&crate::store::DecisionRecord>,
    event_hash: &str,
) -> Option<PendingProposal> {
    if let Some(kept) = decision
        .and_then(|d| d.proposal.as_deref())
        .and_then(|text| serde_json::from_str::<PendingProposal>(text).ok())
    {
        return Some(kept);
    }
    protocol.seam().former(events, event_hash)
}

/// One proposal in full: while it waits for a decision, and after (what
/// was decided, by whom, when, and the event it appended).
pub(crate) fn proposal_view(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
    approver: &ApproverProfile,
    now: OffsetDateTime,
) -> Result<ProposalView, EngineError> {
    let not_found = || EngineError::NotFound {
        what: "proposal",
        id: event_hash.to_owned(),
    };
    let events = store.events(host_id, session_id)?;
    let latest = store.latest_decision(host_id, session_id, event_hash)?;
    let (record, pending, session, is_pending) =
        match find_pending(store, host_id, session_id, event_hash)? {
            Some((record, pending, session)) => (record, pending, session, true),
            None => {
                let session = store.session(host_id, session_id)?.ok_or_else(not_found)?;
                let protocol = protocol_of(&session)?;
                let pending = former_proposal(protocol, &events, latest.as_ref(), event_hash)
                    .ok_or_else(not_found)?;
                let record = PendingRecord {
                    host_id: host_id.to_owned(),
                    session_id: session_id.to_owned(),
                    event_hash: event_hash.to_owned(),
                    body: String::new(),
                    expires_at: pending.expires_at.clone(),
                };
                (record, pending, session, false)
            }
        };
    let seam = protocol_of(&session)?.seam();
    let located = seam.locate(&events, &pending).ok_or_else(not_found)?;
    let unread = is_pending && !store.is_seen(host_id, session_id, event_hash)?;
    let item = item(&record, &pending, &session, &located, unread)?;
    // The profile's name goes with the email this console approves as on
    // that host, while the profile still has that email.
    let email = store
        .host(host_id)?
        .map(|h| h.approver_email)
        .unwrap_or_default();
    let name = if approver.email.trim().eq_ignore_ascii_case(email.trim()) {
        approver.name.as_str()
    } else {
        ""
    };
    let decided_by = crate::decided::name_and_email(name, &email);
    // A refusal sent nothing: while the proposal waits it is undecided.
    let mine = latest.filter(|d| d.outcome != "refused");
    let host_request = store
        .host_request(host_id, session_id, event_hash)?
        .and_then(|r| serde_json::from_str::<HostRequest>(&r.body).ok());
    let mut decision = crate::decided::what_became(crate::decided::Known {
        mine: mine.as_ref(),
        approver: &decided_by,
        host: host_request.as_ref(),
        log: seam.answer_on_log(
            &events,
            located.proposal.seq,
            event_hash,
            &located.proposal.actor,
        ),
        stored: &events,
        pending: is_pending,
        asks_first: seam.host_keeps_requests()
            && seam.side(&session, &located.proposal.actor) == Side::Counterparty,
    });
    let host = store.host(host_id)?.ok_or_else(|| EngineError::NotFound {
        what: "host",
        id: host_id.to_owned(),
    })?;
    let detail = seam.detail(&events, &pending, &located, &Trust::of(&host, &session));
    if let Some(d) = decision.as_mut() {
        if d.breach.is_none() {
            d.breach = seam.breach_on_log(&events, located.proposal.seq);
        }
        // A decision sent from here keeps the reason the person typed.
        if let Some(m) = mine
            .as_ref()
            .filter(|m| d.decision_id.as_deref() == Some(m.decision_id.as_str()))
        {
            if d.reason.is_none() {
                d.reason = serde_json::from_str(&m.body)
                    .ok()
                    .and_then(|body| seam.reason_in_decision(&body));
            }
        }
        d.countered =
            crate::decided::countered_terms(d, mine.as_ref(), host_request.as_ref(), &events, seam)
                .and_then(|terms| {
                    let at = CounterAt {
                        now,
                        request_expires_at: None,
                    };
                    seam.validate_counter(&events, event_hash, &terms, &at).ok()
                })
                .and_then(|check| check.diff);
    }
    let expired = is_expired(&item.expires_at, now);
    let mut capabilities = seam.capabilities(&pending);
    // One rule, the seam's: what its expiry still lets through.
    capabilities.after_expiry = capabilities
        .actions
        .iter()
        .copied()
        .filter(|action| !seam.expiry_refuses(*action))
        .collect();
    if expired {
        capabilities.actions = capabilities.after_expiry.clone();
    }
    Ok(ProposalView {
        expired,
        item,
        detail,
        verification: verification_view(&session),
        approvals: pending.approvals.clone(),
        pending: is_pending,
        decision,
        capabilities,
    })
}

/// Checks an edited counter (in the protocol's own form) as of `now` and
/// diffs it against the proposal it answers.
pub(crate) fn validate_counter(
    store: &Store,
    host_id: &str,
    session_id: &str,
    event_hash: &str,
    counter: &Value,
    now: OffsetDateTime,
) -> Result<CounterCheck, EngineError> {
    let session = store
        .session(host_id, session_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })?;
    let events = store.events(host_id, session_id)?;
    let pending = find_pending(store, host_id, session_id, event_hash)?.map(|(_, p, _)| p);
    let at = CounterAt {
        now,
        request_expires_at: pending.as_ref().map(|p| p.expires_at.as_str()),
    };
    protocol_of(&session)?
        .seam()
        .validate_counter(&events, event_hash, counter, &at)
}

#[cfg(test)]
mod tests {
    use super::grouped_by_session;

    #[test]
    fn a_sessions_items_follow_its_first_and_sessions_keep_their_order() {
        // (session, what) soonest expiry first: Northwind's counter, Contoso's
        // offer, then our agent's draft in Northwind's session.
        let items = vec![
            ("nw", "counter"),
            ("co", "offer"),
            ("nw", "draft"),
            ("ts", "offer"),
        ];
        let grouped = grouped_by_session(items, |(s, _)| ("h".to_owned(), (*s).to_owned()));
        assert_eq!(
            grouped,
            vec![
                ("nw", "counter"),
                ("nw", "draft"),
                ("co", "offer"),
                ("ts", "offer")
            ]
        );
    }

    #[test]
    fn the_same_session_on_two_hosts_is_two_sessions() {
        let items = vec![("h1", "s"), ("h2", "x"), ("h2", "s")];
        let grouped =
            grouped_by_session(items.clone(), |(h, s)| ((*h).to_owned(), (*s).to_owned()));
        assert_eq!(grouped, items);
    }
}
