//! A stored plain-terms thread as history shows and exports it: a timeline
//! row per entry, and the thread with the key that signed it.

use serde_json::{json, Value};

use super::terms::{amount_in, entry, terms_of};
use crate::protocol::{EntryRole, TimelineEntry};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::Side;

/// One entry as a timeline row.
pub(crate) fn timeline(stored: &StoredEvent, human: &humanize::Humanizer) -> Option<TimelineEntry> {
    let value = entry(stored)?;
    let agent: String = value
        .pointer("/agent/name")
        .and_then(Value::as_str)
        .unwrap_or("the agent")
        .chars()
        .take(80)
        .collect();
    let amount = amount_in(stored);
    let (summary, side, role) = if stored.kind == plain::TERMS {
        let terms = terms_of(stored)?;
        let lines = terms
            .value
            .get("line_items")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let what = if value.get("revises").is_some_and(|r| !r.is_null()) {
            "Revised terms"
        } else {
            "Terms"
        };
        let total = human.money(&plain::terms::money_text(terms.total), &terms.currency);
        (
            format!(
                "{what} asked about by {agent}: {total}, {lines} line{}",
                if lines == 1 { "" } else { "s" }
            ),
            Some(Side::Counterparty),
            EntryRole::Proposal(terms.value.clone()),
        )
    } else {
        match value.get("outcome").and_then(Value::as_str) {
            Some("executed") => (
                format!("{agent} reported executing the terms"),
                Some(Side::Ours),
                EntryRole::Acceptance(value.get("terms").cloned()),
            ),
            _ => (
                format!("{agent} reported abandoning the terms"),
                Some(Side::Ours),
                EntryRole::Other,
            ),
        }
    };
    Some(TimelineEntry {
        summary,
        payload: value,
        signer: Some("the host's platform key".to_owned()),
        side,
        amount,
        role,
    })
}

/// The stored thread with the key that signed it.
pub(crate) fn document(
    host: Option<&HostRecord>,
    session: &SessionRecord,
    events: &[StoredEvent],
) -> Value {
    let entries: Vec<Value> = events.iter().filter_map(entry).collect();
    json!({
        "protocol": plain::PROTOCOL,
        "session_id": session.session_id,
        "messages": entries,
        "keys": { "host": host.map(|h| h.platform_key.clone()) },
        "head": { "count": session.pin_seq, "hash": session.pin_hash },
    })
}
