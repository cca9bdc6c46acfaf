//! What the stored conversation shows a person: one timeline row per
//! message (the terms asked, proposed and accepted, a refusal's words), the
//! conversation as a document, and the CSV of every set of terms.

use anex::{Content, Terms};
use serde_json::{json, Value};

use super::ask::message_of;
use crate::protocol::{EntryRole, TimelineEntry};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::Side;

/// Terms in words: `legal_name (required), ap_contact; promises: no sharing`.
pub(crate) fn terms_words(terms: &Terms) -> String {
    let items: Vec<String> = terms
        .access
        .iter()
        .map(|a| {
            if a.required {
                format!("{} (required)", a.name.as_str())
            } else {
                a.name.as_str().to_owned()
            }
        })
        .collect();
    let promises: Vec<&str> = terms.promise.iter().map(|p| p.as_str()).collect();
    let promises = if promises.is_empty() {
        "none".to_owned()
    } else {
        promises.join("; ")
    };
    format!("{}; promises: {promises}", items.join(", "))
}

/// Terms as a person reads them: each data item with whether it is
/// required, then the promises.
fn terms_json(terms: &Terms) -> Value {
    let data: serde_json::Map<String, Value> = terms
        .access
        .iter()
        .map(|a| {
            let mark = if a.required { "required" } else { "optional" };
            (a.name.as_str().to_owned(), Value::from(mark))
        })
        .collect();
    let promises: Vec<&str> = terms.promise.iter().map(|p| p.as_str()).collect();
    json!({ "data": data, "promises": promises })
}

fn short(text: Option<&str>) -> String {
    text.map(|t| format!(": {}", t.chars().take(160).collect::<String>()))
        .unwrap_or_default()
}

/// One stored message as a timeline row.
pub(crate) fn timeline(stored: &StoredEvent, counterparty: &str) -> Option<TimelineEntry> {
    let (value, message) = message_of(stored)?;
    let side = if stored.actor == counterparty {
        Side::Counterparty
    } else {
        Side::Ours
    };
    let summary = match message.content() {
        Content::Cfp(cfp) => format!(
            "Asks for {} (purpose: {})",
            terms_words(&cfp.terms),
            cfp.request_type.as_str()
        ),
        Content::Propose(t) => format!("Proposes {}", terms_words(t)),
        Content::Accept(t) => format!("Accepted terms: {}", terms_words(t)),
        Content::Reject { reason } => {
            format!(
                "Rejects the proposal{}",
                short(reason.as_ref().map(|r| r.as_str()))
            )
        }
        Content::Refuse { response, items } if items.is_empty() => {
            format!("Refuses{}", short(response.as_ref().map(|r| r.as_str())))
        }
        Content::Refuse { items, .. } => format!(
            "Refuses items not accepted: {}",
            items
                .iter()
                .map(|i| i.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Content::DataRequest { access } => format!(
            "Requests the data: {}",
            access
                .iter()
                .map(|i| i.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Content::Data(items) => format!(
            "Sends the data: {}",
            items
                .keys()
                .map(|i| i.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Content::Cancel { reason } => {
            format!("Cancels{}", short(reason.as_ref().map(|r| r.as_str())))
        }
        _ => message.performative().as_str().to_owned(),
    };
    let role = match message.content() {
        Content::Cfp(cfp) => EntryRole::Proposal(terms_json(&cfp.terms)),
        Content::Propose(t) => EntryRole::Proposal(terms_json(t)),
        Content::Accept(t) => EntryRole::Acceptance(Some(terms_json(t))),
        _ => EntryRole::Other,
    };
    Some(TimelineEntry {
        summary,
        payload: value,
        signer: None,
        side: Some(side),
        amount: None,
        role,
    })
}

/// The stored conversation as one document.
pub(crate) fn document(
    _host: Option<&HostRecord>,
    session: &SessionRecord,
    events: &[StoredEvent],
) -> Value {
    let messages: Vec<Value> = events
        .iter()
        .filter_map(|e| serde_json::from_str(&e.body).ok())
        .collect();
    json!({
        "protocol": super::log::PROTOCOL,
        "session_id": session.session_id,
        "messages": messages,
        "head": { "count": session.pin_seq, "hash": session.pin_hash },
    })
}
