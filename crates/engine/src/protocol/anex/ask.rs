//! The ask awaiting the owner: the requester's CFP or PROPOSE found in the
//! stored conversation, the previous standing proposal it answers, the view
//! (items with their marks and the policy's verdicts, promises offered and
//! required, the diff), the counter editor's check, and what the record
//! shows became of an ask. Every rule is `crates/anex`'s.

use anex::rules::check_owner_counter;
use anex::{Content, Message, Terms};
use countersign_host_api::anex::AnexPending;
use serde_json::Value;

use super::log::message_hash;
use crate::protocol::{answered_entry, Located, LogAnswer, PendingProposal, Proposal, StoredRef};
use crate::store::StoredEvent;
use crate::views::{
    AnexAccessItem, AnexAskView, AnexItemView, AnexMarkChange, AnexRequester, AnexTerms,
    AnexTermsDiff, CounterCheck, FieldError, PreviousRef, ProposalDiff,
};

/// The host's ANEX member of a pending record, when it has one.
pub(crate) fn pending_anex(pending: &PendingProposal) -> Option<AnexPending> {
    serde_json::from_value(pending.anex.clone()?).ok()
}

/// A stored message read as ANEX.
pub(crate) fn message_of(event: &StoredEvent) -> Option<(Value, Message)> {
    let value: Value = serde_json::from_str(&event.body).ok()?;
    let message = anex::parse_value(&value).ok()?;
    Some((value, message))
}

/// The terms a message carries (a CFP's ask, a PROPOSE's offer, an
/// ACCEPT-PROPOSAL's terms).
pub(crate) fn terms_of(message: &Message) -> Option<&Terms> {
    match message.content() {
        Content::Cfp(cfp) => Some(&cfp.terms),
        Content::Propose(terms) | Content::Accept(terms) => Some(terms),
        _ => None,
    }
}

fn is_ask(kind: &str) -> bool {
    matches!(kind, "CFP" | "PROPOSE")
}

fn by_hash<'a>(events: &'a [StoredEvent], hash: &str) -> Option<&'a StoredEvent> {
    events.iter().find(|e| e.event_hash == hash)
}

/// The ask with the hash `hash`, and its terms.
pub(crate) fn ask_at(events: &[StoredEvent], hash: &str) -> Option<(StoredEvent, Message, Terms)> {
    let event = by_hash(events, hash)?;
    let (_, message) = message_of(event)?;
    let terms = match message.content() {
        Content::Cfp(cfp) => cfp.terms.clone(),
        Content::Propose(terms) => terms.clone(),
        _ => return None,
    };
    Some((event.clone(), message, terms))
}

/// The pending ask and the standing proposal of the other side it answers.
pub(crate) fn locate(events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
    let (event, _, _) = ask_at(events, &pending.event_hash)?;
    let proposal = |e: &StoredEvent| Proposal {
        seq: e.seq,
        actor: e.actor.clone(),
        value: serde_json::from_str(&e.body).unwrap_or(Value::Null),
        amount: None,
    };
    let previous = answered_entry(events, event.seq, &event.actor, is_ask)
        .filter(|e| e.actor != event.actor)
        .map(proposal);
    Some(Located {
        proposal: proposal(&event),
        previous,
        change: None,
        gap: None,
    })
}

/// An ask that left the pending set, as a pending record (without the
/// host's policy verdicts, which only the pending record carries).
pub(crate) fn former(events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
    let (event, message, _) = ask_at(events, event_hash)?;
    Some(PendingProposal {
        seq: event.seq,
        event_hash: event.event_hash.clone(),
        kind: event.kind.clone(),
        actor: event.actor.clone(),
        expires_at: String::new(),
        approvals: Vec::new(),
        approvals_required: 1,
        draft: None,
        held_reason: None,
        request_id: Some(message.message_id().as_str().to_owned()),
        action: Some("propose".to_owned()),
        amount: None,
        threshold: None,
        anex: None,
        chain: None,
    })
}

fn wire(terms: &Terms) -> AnexTerms {
    AnexTerms {
        access: terms
            .access
            .iter()
            .map(|a| a.name.as_str().to_owned())
            .collect(),
        promise: terms
            .promise
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect(),
    }
}

/// `crates/anex`'s diff in the contract's shape.
pub(crate) fn diff_view(old: &Terms, new: &Terms) -> AnexTermsDiff {
    let d = anex::diff(old, new);
    let item = |a: &anex::AccessItem| AnexAccessItem {
        item: a.name.as_str().to_owned(),
        required: a.required,
    };
    AnexTermsDiff {
        access_added: d.access_added.iter().map(item).collect(),
        access_removed: d.access_removed.iter().map(item).collect(),
        required_changed: d
            .required_changed
            .iter()
            .map(|m| AnexMarkChange {
                item: m.name.as_str().to_owned(),
                was_required: m.was_required,
            })
            .collect(),
        promises_added: d
            .promises_added
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect(),
        promises_removed: d
            .promises_removed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect(),
    }
}

/// The first message of the conversation, when it is a CFP.
fn cfp_of(events: &[StoredEvent]) -> Option<anex::CallForProposal> {
    events
        .iter()
        .filter_map(message_of)
        .find_map(|(_, m)| match m.content() {
            Content::Cfp(cfp) => Some(cfp.clone()),
            _ => None,
        })
}

/// The view of a located ask: from the host's pending record where it has
/// one (the policy's verdicts), the terms always from the stored message.
pub(crate) fn view(
    events: &[StoredEvent],
    pending: &PendingProposal,
    located: &Located,
) -> AnexAskView {
    let event = events.iter().find(|e| e.seq == located.proposal.seq);
    let message = event.and_then(message_of);
    let terms = message.as_ref().and_then(|(_, m)| terms_of(m).cloned());
    let host = pending_anex(pending);
    let previous_terms: Option<Terms> = host
        .as_ref()
        .and_then(|h| h.previous.as_ref())
        .and_then(|p| Terms::from_wire(&p.access, &p.promise).ok())
        .or_else(|| {
            let prev = located.previous.as_ref()?;
            terms_of(&anex::parse_value(&prev.value).ok()?).cloned()
        });
    let cfp = cfp_of(events);
    let items: Vec<AnexItemView> = terms
        .iter()
        .flat_map(|t| t.access.iter())
        .map(|a| {
            let verdict = host
                .as_ref()
                .and_then(|h| h.items.iter().find(|i| i.item == a.name.as_str()));
            AnexItemView {
                item: a.name.as_str().to_owned(),
                required: a.required,
                removable: anex::rules::counter_may_drop(a),
                within_policy: verdict.map(|v| v.within_policy),
                rule: verdict.and_then(|v| v.rule).map(|r| r as u32),
                adds: verdict.map(|v| v.adds.clone()).unwrap_or_default(),
                reason: verdict.map(|v| v.reason.clone()),
            }
        })
        .collect();
    let offered: Vec<String> = terms
        .iter()
        .flat_map(|t| t.promise.iter())
        .map(|p| p.as_str().to_owned())
        .collect();
    let policy_promises = host
        .as_ref()
        .map(|h| h.policy_promises.clone())
        .unwrap_or_default();
    let missing = policy_promises
        .iter()
        .filter(|p| !offered.contains(p))
        .cloned()
        .collect();
    let requester = match (&host, &cfp) {
        (Some(h), _) => AnexRequester {
            identity: h.requester.identity.clone(),
            owner: h.requester.owner.clone(),
            relation: h.requester.relation.clone(),
        },
        (None, Some(c)) => AnexRequester {
            identity: c.identity.as_str().to_owned(),
            owner: c.owner.as_str().to_owned(),
            relation: c.relation.as_ref().map(|r| r.as_str().to_owned()),
        },
        (None, None) => AnexRequester {
            identity: located.proposal.actor.clone(),
            owner: String::new(),
            relation: None,
        },
    };
    let (value, msg) = match &message {
        Some((v, m)) => (Some(v), Some(m)),
        None => (None, None),
    };
    AnexAskView {
        conversation_id: msg
            .map(|m| m.conversation_id().as_str().to_owned())
            .unwrap_or_default(),
        message_id: msg
            .map(|m| m.message_id().as_str().to_owned())
            .unwrap_or_default(),
        performative: msg
            .map(|m| m.performative().as_str().to_owned())
            .unwrap_or_default(),
        message_hash: value.map(message_hash).unwrap_or_default(),
        requester,
        responder: host
            .as_ref()
            .map(|h| h.responder.clone())
            .or_else(|| msg.map(|m| m.receiver().as_str().to_owned()))
            .unwrap_or_default(),
        purpose: host
            .as_ref()
            .map(|h| h.request_type.clone())
            .or_else(|| cfp.as_ref().map(|c| c.request_type.as_str().to_owned()))
            .unwrap_or_default(),
        items,
        promises_offered: offered,
        policy_promises,
        promises_missing: missing,
        previous: previous_terms.as_ref().map(wire),
        previous_ref: located.previous.as_ref().map(|p| PreviousRef {
            seq: p.seq,
            actor: p.actor.clone(),
        }),
        diff: match (&previous_terms, &terms) {
            (Some(old), Some(new)) => Some(diff_view(old, new)),
            _ => None,
        },
        terms_valid_days: host.as_ref().map(|h| h.terms_valid_days),
        policy_known: host.is_some(),
        host: String::new(),
        responder_refused: None,
    }
}

fn field(path: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// A counter as the editor writes it (`{access, promise}`) read into terms.
pub(crate) fn counter_terms(counter: &Value) -> Result<(AnexTerms, Terms), Vec<FieldError>> {
    let lists: AnexTerms = serde_json::from_value(counter.clone()).map_err(|e| {
        vec![field(
            "",
            format!("a counter is {{\"access\": [items], \"promise\": [promises]}}: {e}"),
        )]
    })?;
    let terms = Terms::from_wire(&lists.access, &lists.promise)
        .map_err(|e| vec![field("access", e.to_string())])?;
    Ok((lists, terms))
}

/// The counter editor's check against the ask `ask` (with its marks):
/// every problem `crates/anex` finds, each in words.
pub(crate) fn check(ask: &Terms, counter: &Value) -> Result<(AnexTerms, Terms), Vec<FieldError>> {
    let (lists, terms) = counter_terms(counter)?;
    check_owner_counter(ask, &terms).map_err(|problems| {
        problems
            .iter()
            .map(|p| {
                let path = match p {
                    anex::rules::CounterProblem::RemovesPromises(_) => "promise",
                    anex::rules::CounterProblem::SameAsAsked => "",
                    _ => "access",
                };
                field(path, p.to_string())
            })
            .collect::<Vec<_>>()
    })?;
    Ok((lists, terms))
}

/// The counter editor's verdict, with the diff from the ask when it parses.
pub(crate) fn check_counter(
    events: &[StoredEvent],
    event_hash: &str,
    counter: &Value,
    _at: &crate::protocol::CounterAt<'_>,
) -> Option<CounterCheck> {
    let (_, _, ask) = ask_at(events, event_hash)?;
    let diff = counter_terms(counter)
        .ok()
        .map(|(_, t)| ProposalDiff::AnexAsk(Box::new(diff_view(&ask.unmarked(), &t))));
    Some(match check(&ask, counter) {
        Ok(_) => CounterCheck {
            ok: true,
            errors: Vec::new(),
            diff,
        },
        Err(errors) => CounterCheck {
            ok: false,
            errors,
            diff,
        },
    })
}

/// What the record shows became of the ask at `seq` by `actor`: the
/// responder's PROPOSE of the ask as asked (accepted), of narrower terms
/// (countered) or its REFUSE (declined); or a newer ask of the requester.
pub(crate) fn answer_on_log(events: &[StoredEvent], seq: u64, actor: &str) -> Option<LogAnswer> {
    let asked = events.iter().find(|e| e.seq == seq)?;
    let (_, ask) = message_of(asked)?;
    let ask_terms = terms_of(&ask)?.unmarked();
    for later in events.iter().filter(|e| e.seq > seq) {
        let Some((_, m)) = message_of(later) else {
            continue;
        };
        let replies = m.in_reply_to().map(|r| r.as_str()) == Some(ask.message_id().as_str());
        if later.actor != actor && replies {
            return Some(match m.content() {
                Content::Propose(t) if t.same_as(&ask_terms) => LogAnswer::Accepted {
                    event: StoredRef::of(later),
                    approved_by: Vec::new(),
                },
                Content::Propose(_) => LogAnswer::Answered {
                    event: StoredRef::of(later),
                    action: "counter",
                },
                _ => LogAnswer::Answered {
                    event: StoredRef::of(later),
                    action: "decline",
                },
            });
        }
        if later.actor == actor && is_ask(&later.kind) {
            return Some(LogAnswer::Replaced {
                event: StoredRef::of(later),
            });
        }
    }
    None
}
