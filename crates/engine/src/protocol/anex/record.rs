//! What the stored conversation shows a person: one timeline row per
//! message (the terms asked, proposed and accepted, a refusal's words), the
//! conversation as a document, and the CSV of every set of terms.

use anex::{Content, Terms};
use serde_json::{json, Value};

use super::ask::{message_of, terms_of};
use crate::protocol::{csv_field, TimelineEntry};
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
    Some(TimelineEntry {
        summary,
        payload: value,
        signer: None,
        side: Some(side),
        amount: None,
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

/// One row per message carrying terms (an ask, a proposal, an acceptance).
pub(crate) fn csv(events: &[StoredEvent]) -> String {
    let mut out = String::from("seq,from,performative,hash,message_id,access,promise\n");
    for e in events {
        let Some((_, message)) = message_of(e) else {
            continue;
        };
        let Some(terms) = terms_of(&message) else {
            continue;
        };
        let access: Vec<String> = terms.access.iter().map(|a| a.to_wire()).collect();
        let promise: Vec<&str> = terms.promise.iter().map(|p| p.as_str()).collect();
        let fields = [
            e.seq.to_string(),
            e.actor.clone(),
            e.kind.clone(),
            e.event_hash.clone(),
            message.message_id().as_str().to_owned(),
            access.join(" "),
            promise.join("; "),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}
