//! One session's figures, read from its stored records: who the
//! counterparty is (every identity its protocol proves), its opening ask
//! and agreed total, each decision with the wait before it, the keys it
//! signed with, breaches and disputes. Kept in the store until a record
//! they are read from changes, so the desk reads 10,000 sessions without
//! reading their events.

use serde::{Deserialize, Serialize};

use crate::error::EngineError;
use crate::history::terms;
use crate::inbox::protocol_of;
use crate::protocol::EntryRole;
use crate::store::{SessionRecord, Store};
use crate::views::{Amount, SessionState, Side, Verification};

/// The figures of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Facts {
    pub host_id: String,
    pub session_id: String,
    pub protocol: String,
    pub state: SessionState,
    /// The counterparty's name as a person knows it (its text).
    pub name: String,
    /// Every identity the session proves or names (see [`identities`]).
    pub identities: Vec<String>,
    /// The first and last entries' times (RFC 3339).
    pub opened_at: String,
    pub last_at: String,
    /// The counterparty's first amount.
    pub opening: Option<Amount>,
    /// The agreed total, once agreed.
    pub agreed: Option<Amount>,
    /// Each decision made on the session, ours and (from the host's
    /// record) the other approvers'.
    pub decisions: Vec<DecisionFact>,
    /// Each key the counterparty signed with, in order of first use.
    pub keys: Vec<KeySeen>,
    pub breaches: u32,
    pub disputed: bool,
}

/// One decision, with the offer it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DecisionFact {
    /// Ours (this console's), else the host's record of another approver's.
    pub decision_id: Option<String>,
    pub action: String,
    pub person: String,
    pub role: Option<String>,
    pub rule: Option<u32>,
    pub at: String,
    /// The answered offer's hash, its arrival and its amount.
    pub offer_hash: String,
    pub offer_at: Option<String>,
    pub offer_total: Option<Amount>,
    /// The response time of the step it was made at.
    pub respond_within_minutes: Option<u32>,
    /// When that step was due, as the host said when the decision was made.
    #[serde(default)]
    pub due_at: Option<String>,
}

/// A key as one session saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeySeen {
    /// `key:<fingerprint>`.
    pub identity: String,
    pub first_at: String,
    pub last_at: String,
    /// It took over from another key within this session.
    pub changed_mid_session: bool,
}

/// Outcomes of a decision the host took (what was made, not what failed).
const MADE: [&str; 2] = ["appended", "awaiting_approvals"];

/// The identities a session's counterparty is known by: each key it signed
/// with (global), a DID it names (global), and its protocol's own id, which
/// means something only at the host that issued it.
fn identities(s: &SessionRecord, id: &str, keys: &[KeySeen]) -> Vec<String> {
    let mut out: Vec<String> = keys.iter().map(|k| k.identity.clone()).collect();
    let id = id.trim();
    if id.starts_with("did:") {
        out.push(id.to_owned());
    } else if !id.is_empty() {
        out.push(format!("{} {} at {}", s.protocol, id, s.host_id));
    }
    out.sort();
    out.dedup();
    out
}

/// Reads a session's figures from its records.
pub(crate) fn compute(
    store: &Store,
    human: &humanize::Humanizer,
    s: &SessionRecord,
) -> Result<Facts, EngineError> {
    let seam = protocol_of(s)?.seam();
    let events = store.events(&s.host_id, &s.session_id)?;
    let pinned_key = (!s.counterparty.fingerprint.is_empty())
        .then(|| format!("key:{}", s.counterparty.fingerprint));
    let host = store.host(&s.host_id)?;
    // The host's own key signs some entries on the counterparty's side (an
    // ANP session's opening): it is no key of the counterparty's.
    let platform = host
        .as_ref()
        .map(|h| format!("key:{}", h.platform_fingerprint));

    let mut keys: Vec<KeySeen> = Vec::new();
    let mut opening = None;
    let mut amounts = Vec::new();
    let mut entries = Vec::new();
    for stored in &events {
        let Some(entry) = seam.timeline(s, stored, human) else {
            continue;
        };
        if entry.side == Some(Side::Counterparty) {
            if opening.is_none() {
                opening = entry.amount.clone();
            }
            let key = seam
                .entry_key(entry.signer.as_deref())
                .map(|k| format!("key:{k}"))
                .or_else(|| pinned_key.clone())
                .filter(|k| Some(k) != platform.as_ref());
            if let Some(key) = key {
                match keys.iter_mut().find(|k| k.identity == key) {
                    Some(seen) => seen.last_at = stored.at.clone(),
                    None => {
                        let changed = !keys.is_empty();
                        keys.push(KeySeen {
                            identity: key,
                            first_at: stored.at.clone(),
                            last_at: stored.at.clone(),
                            changed_mid_session: changed,
                        });
                    }
                }
            }
        }
        amounts.push((
            stored.event_hash.clone(),
            stored.at.clone(),
            entry.amount.clone(),
        ));
        entries.push((stored.seq, stored.at.clone(), entry));
    }
    if keys.is_empty() {
        if let Some(key) = pinned_key {
            keys.push(KeySeen {
                identity: key,
                first_at: events.first().map(|e| e.at.clone()).unwrap_or_default(),
                last_at: events.last().map(|e| e.at.clone()).unwrap_or_default(),
                changed_mid_session: false,
            });
        }
    }

    let state = match seam.lifecycle(&s.status) {
        crate::protocol::Lifecycle::Open => SessionState::Open,
        crate::protocol::Lifecycle::Agreed => SessionState::Agreed,
        crate::protocol::Lifecycle::Closed => SessionState::Closed,
    };
    let agreed = (state == SessionState::Agreed)
        .then(|| agreed_amount(&entries, s))
        .flatten();

    // When each offer reached a person: when the agent asked about it
    // (a gate request), else when it was appended (ANP/0.1).
    let asked: Vec<(String, String)> = store
        .host_requests(&s.host_id, &s.session_id)?
        .into_iter()
        .filter_map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body).ok()?;
            let at = body.get("created_at")?.as_str()?.to_owned();
            Some((r.message_hash, at))
        })
        .collect();
    // A record without times (ANEX): when this console first saw the
    // proposal pending.
    let seen = store.first_seen_pending(&s.host_id, &s.session_id)?;
    let offer = |hash: &str| {
        amounts
            .iter()
            .find(|(h, _, _)| h == hash)
            .map(|(h, at, amount)| {
                let asked_at = asked.iter().find(|(m, _)| m == h).map(|(_, at)| at.clone());
                let seen_at = || seen.iter().find(|(m, _)| m == h).map(|(_, at)| at.clone());
                let at = asked_at
                    .or_else(|| (!at.is_empty()).then(|| at.clone()))
                    .or_else(seen_at);
                (at, amount.clone())
            })
    };
    // Every time the records name, in order: the session's span.
    let mut times: Vec<String> = events
        .iter()
        .map(|e| e.at.clone())
        .chain(asked.iter().map(|(_, at)| at.clone()))
        .chain(seen.iter().map(|(_, at)| at.clone()))
        .filter(|t| !t.is_empty())
        .collect();
    times.sort();
    let ours = host
        .as_ref()
        .map(|h| h.approver_email.clone())
        .unwrap_or_default();
    let mut decisions = Vec::new();
    for d in store.decisions(&s.host_id, &s.session_id)? {
        if !MADE.contains(&d.outcome.as_str()) {
            continue;
        }
        let chain = crate::history::decision_chain(d.proposal.as_deref());
        let step = chain
            .as_ref()
            .and_then(|c| c.steps.iter().find(|x| Some(x.number) == c.step));
        let respond_within_minutes = step.and_then(|x| x.respond_within_minutes);
        // When the step was due, counted from the moment it opened (a
        // later step opens after the earlier ones are met).
        let due_at = step.and_then(|x| x.due_at.clone());
        let answered = offer(&d.in_response_to);
        decisions.push(DecisionFact {
            decision_id: Some(d.decision_id.clone()),
            action: d.action.clone(),
            person: ours.clone(),
            role: chain.as_ref().and_then(|c| c.role.clone()),
            rule: chain.as_ref().and_then(|c| c.rule),
            at: d.at.clone(),
            offer_hash: d.in_response_to.clone(),
            offer_at: answered.as_ref().and_then(|(at, _)| at.clone()),
            offer_total: answered.and_then(|(_, a)| a),
            respond_within_minutes,
            due_at,
        });
    }
    for approval in crate::history::host_approvals(store, s)? {
        if approval.approved_by == ours {
            continue;
        }
        let answered = offer(&approval.event_hash);
        decisions.push(DecisionFact {
            decision_id: None,
            action: "approve".into(),
            person: approval.approved_by,
            role: approval.role,
            rule: approval.rule,
            at: approval.at,
            offer_hash: approval.event_hash,
            offer_at: answered.as_ref().and_then(|(at, _)| at.clone()),
            offer_total: answered.and_then(|(_, a)| a),
            respond_within_minutes: None,
            due_at: None,
        });
    }

    Ok(Facts {
        host_id: s.host_id.clone(),
        session_id: s.session_id.clone(),
        protocol: s.protocol.clone(),
        state,
        name: s.counterparty.display_name().to_owned(),
        identities: identities(s, &seam.counterparty_id(s), &keys),
        opened_at: times
            .first()
            .cloned()
            .unwrap_or_else(|| s.updated_at.clone()),
        last_at: times
            .last()
            .cloned()
            .unwrap_or_else(|| s.updated_at.clone()),
        opening,
        agreed,
        decisions,
        keys,
        breaches: store.breaches_found(&s.host_id, &s.session_id)?,
        disputed: s.verification == Verification::Disputed,
    })
}

/// The accepted proposal's amount (the agreement History shows), else the
/// session's last amount.
fn agreed_amount(
    entries: &[(u64, String, crate::protocol::TimelineEntry)],
    s: &SessionRecord,
) -> Option<Amount> {
    let steps: Vec<terms::Step<'_>> = entries
        .iter()
        .map(|(seq, at, e)| terms::Step {
            seq: *seq,
            at,
            side: e.side,
            summary: &e.summary,
            role: &e.role,
        })
        .collect();
    let agreement = terms::agreement(&steps);
    let from_proposal = agreement
        .and_then(|a| a.proposal_seq)
        .and_then(|seq| entries.iter().find(|(s, _, _)| *s == seq))
        .and_then(|(_, _, e)| match e.role {
            EntryRole::Proposal(_) => e.amount.clone(),
            _ => None,
        });
    from_proposal.or_else(|| match (&s.last_total, &s.currency) {
        (Some(value), Some(currency)) => Some(Amount {
            value: value.clone(),
            currency: currency.clone(),
        }),
        _ => None,
    })
}

/// Every session's figures: those kept, and the rest computed and kept.
pub(crate) fn all(store: &Store, human: &humanize::Humanizer) -> Result<Vec<Facts>, EngineError> {
    let (known, missing) = store.desk_facts()?;
    let mut out = Vec::with_capacity(known.len() + missing.len());
    for (host_id, session_id, body) in known {
        match serde_json::from_str::<Facts>(&body) {
            Ok(facts) => out.push(facts),
            // Kept by an older build: read again.
            Err(_) => out.push(fresh(store, human, &host_id, &session_id)?),
        }
    }
    for (host_id, session_id) in missing {
        out.push(fresh(store, human, &host_id, &session_id)?);
    }
    Ok(out)
}

/// Computes and keeps the figures of at most `limit` sessions that have
/// none: answers how many it did (0 when every session has its figures).
pub(crate) fn warm(
    store: &Store,
    human: &humanize::Humanizer,
    limit: usize,
) -> Result<usize, EngineError> {
    let (_, missing) = store.desk_facts()?;
    let mut done = 0;
    for (host_id, session_id) in missing.into_iter().take(limit) {
        fresh(store, human, &host_id, &session_id)?;
        done += 1;
    }
    Ok(done)
}

fn fresh(
    store: &Store,
    human: &humanize::Humanizer,
    host_id: &str,
    session_id: &str,
) -> Result<Facts, EngineError> {
    let s = store
        .session(host_id, session_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })?;
    let facts = compute(store, human, &s)?;
    let body = serde_json::to_string(&facts).map_err(|e| EngineError::Protocol(e.to_string()))?;
    store.put_desk_facts(host_id, session_id, &body)?;
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{HostRecord, StoredEvent};
    use crate::views::Counterparty;

    fn event(seq: u64, actor: &str, kind: &str, signer: &str, at: &str) -> StoredEvent {
        let payload = if kind == "offer" {
            serde_json::json!({"currency": "USD", "expires_at": "2027-01-01T00:00:00Z",
                "line_items": [{"sku": "A", "description": "a", "quantity": 1, "unit": "each",
                                "unit_price": 100 * seq, "currency": "USD"}]})
        } else {
            serde_json::json!({})
        };
        let body = serde_json::json!({
            "seq": seq, "actor": actor, "kind": kind, "payload": payload,
            "payload_hash": "0".repeat(64), "prev_hash": "0".repeat(64),
            "event_hash": format!("{seq:064}"), "signature": null, "signer": signer, "at": at,
        });
        StoredEvent {
            seq,
            event_hash: format!("{seq:064}"),
            actor: actor.into(),
            kind: kind.into(),
            at: at.into(),
            body: body.to_string(),
            signature_state: "verified".into(),
        }
    }

    #[test]
    fn a_vendor_key_that_signs_after_another_in_one_session_is_flagged_and_the_hosts_own_key_is_not_the_vendors(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("c.sqlite3")).unwrap();
        store
            .insert_host(
                &HostRecord {
                    host_id: "h".into(),
                    protocol: "ANP/0.1".into(),
                    url: "https://h.example".into(),
                    label: "h".into(),
                    sandbox: false,
                    approver_id: "a".into(),
                    approver_email: "ann@fabrikam.example".into(),
                    platform_key: "k".into(),
                    platform_fingerprint: "platform".into(),
                    approver_keys: "[]".into(),
                    reachable: true,
                    last_error: None,
                    last_poll_at: None,
                    plain_http_allowed_at: None,
                    key_fingerprint: None,
                },
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        let session = SessionRecord {
            host_id: "h".into(),
            session_id: "s".into(),
            protocol: "ANP/0.1".into(),
            status: "open".into(),
            sandbox: false,
            counterparty: Counterparty {
                id: "agt_1".into(),
                name: "Northwind Agent".into(),
                organization: Some("Northwind".into()),
                fingerprint: "old".into(),
                status: "verified".into(),
                verified: Some(true),
            },
            pin_seq: 4,
            pin_hash: format!("{:064}", 4),
            remote_count: 4,
            remote_head: String::new(),
            verification: Verification::Verified,
            dispute_detail: None,
            failing_seq: None,
            failing_checks: Vec::new(),
            unproven: Vec::new(),
            last_total: None,
            currency: None,
            updated_at: "2026-01-01T00:00:00Z".into(),
            pinned_keys: "{}".into(),
        };
        store.upsert_session(&session).unwrap();
        store
            .insert_events(
                "h",
                "s",
                &[
                    event(
                        1,
                        "vendor_agent",
                        "session_open",
                        "platform",
                        "2026-01-01T00:00:00Z",
                    ),
                    event(2, "vendor_agent", "offer", "old", "2026-01-01T00:01:00Z"),
                    event(3, "vendor_agent", "offer", "new", "2026-01-01T00:02:00Z"),
                    event(4, "vendor_agent", "offer", "new", "2026-01-01T00:03:00Z"),
                ],
            )
            .unwrap();
        let human = humanize::Humanizer::in_zone("en_GB.UTF-8", "UTC");
        let facts = compute(&store, &human, &session).unwrap();
        let keys: Vec<(&str, &str, &str, bool)> = facts
            .keys
            .iter()
            .map(|k| {
                (
                    k.identity.as_str(),
                    k.first_at.as_str(),
                    k.last_at.as_str(),
                    k.changed_mid_session,
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                (
                    "key:old",
                    "2026-01-01T00:01:00Z",
                    "2026-01-01T00:01:00Z",
                    false
                ),
                (
                    "key:new",
                    "2026-01-01T00:02:00Z",
                    "2026-01-01T00:03:00Z",
                    true
                ),
            ]
        );
    }
}
