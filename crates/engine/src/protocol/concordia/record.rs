//! A stored Concordia transcript as history shows and exports it: a
//! timeline row per message, the transcript with its keys (what
//! `countersign-verify` reads: `{"messages", "keys"}`), and the offers as CSV.

use concordia::message::{Body, MessageType};
use serde_json::{json, Value};

use super::offer::{message, offer_view, pinned, price};
use crate::protocol::{EntryRole, ExportParts, TimelineEntry};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::{OfferShape, Side};

fn shape_words(shape: OfferShape, clauses: usize, bundles: usize) -> String {
    match shape {
        OfferShape::Conditional => format!("conditional, {clauses} clauses"),
        OfferShape::Bundle => format!("{bundles} bundles"),
        OfferShape::Partial => "some terms left open".to_owned(),
        OfferShape::Basic => "terms".to_owned(),
    }
}

/// One message as a timeline row; `counterparty` is the other side's party id.
pub(crate) fn timeline(
    stored: &StoredEvent,
    counterparty: &str,
    human: &humanize::Humanizer,
) -> Option<TimelineEntry> {
    let (value, typed) = message(stored)?;
    let side = if stored.actor == counterparty {
        Side::Counterparty
    } else {
        Side::Ours
    };
    let short = |text: &Option<String>| {
        text.as_deref()
            .map(|t| format!(": {}", t.chars().take(120).collect::<String>()))
            .unwrap_or_default()
    };
    let (summary, amount) = match (&typed.kind, &typed.body) {
        (MessageType::Offer | MessageType::Counter, Body::Offer(offer) | Body::Counter(offer)) => {
            let what = if typed.kind == MessageType::Offer {
                "Offer"
            } else {
                "Counter-offer"
            };
            let amount = price(offer);
            let view = offer_view(offer);
            let words = match &amount {
                Some(a) => human.money(&a.value, &a.currency),
                None => shape_words(view.shape, view.conditions.len(), view.bundles.len()),
            };
            (format!("{what}: {words}"), amount)
        }
        (MessageType::Open, _) => ("Session proposed".to_owned(), None),
        (MessageType::AcceptSession, _) => ("Session accepted".to_owned(), None),
        (MessageType::DeclineSession, Body::DeclineSession { reason }) => {
            (format!("Session declined{}", short(reason)), None)
        }
        (MessageType::Accept, _) => ("Accepted".to_owned(), None),
        (MessageType::Reject, Body::Reject { reason }) => {
            (format!("Rejected{}", short(reason)), None)
        }
        (MessageType::Withdraw, Body::Withdraw { reason, .. }) => {
            (format!("Withdrew{}", short(reason)), None)
        }
        (MessageType::Commit, _) => ("Committed".to_owned(), None),
        (kind, _) => (kind.as_str().to_owned(), None),
    };
    let body = value.get("body").cloned().unwrap_or(Value::Null);
    let role = match (&typed.kind, &typed.body) {
        (MessageType::Offer | MessageType::Counter, _) => EntryRole::Proposal(body.clone()),
        (MessageType::Accept, Body::Accept { accepted_terms, .. }) => {
            EntryRole::Acceptance(accepted_terms.clone().map(Value::Object))
        }
        _ => EntryRole::Other,
    };
    Some(TimelineEntry {
        summary,
        payload: body,
        signer: Some(stored.actor.clone()),
        side: Some(side),
        amount,
        role,
    })
}

/// The stored transcript with the keys this console pinned: verifiable by
/// `countersign-verify` (and the reference SDK) as it is.
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
        "protocol": "concordia",
        "session_id": session.session_id,
        "messages": messages,
        "keys": pinned(&session.pinned_keys),
        "head": { "count": session.pin_seq, "hash": session.pin_hash },
    })
}

/// The JSON export: the transcript document itself at the top (so
/// `countersign-verify` reads it as a Concordia transcript: links,
/// signatures, the state machine), with this console's ApprovalReceipts as
/// they were sent (`receipts`, each verifiable against the message its
/// `scope.offer_hash` names), the decisions, the approver and the
/// verification beside it.
pub(crate) fn export_document(record: Value, export: ExportParts) -> Value {
    let receipts: Vec<Value> = export
        .decisions
        .iter()
        .filter_map(|d| d.get("request_body")?.as_str())
        .filter_map(|body| serde_json::from_str::<Value>(body).ok())
        .filter_map(|body| body.get("receipt").cloned())
        .collect();
    let mut doc = match record {
        Value::Object(map) => map,
        other => {
            let mut map = serde_json::Map::new();
            map.insert("log".into(), other);
            map
        }
    };
    doc.insert("receipts".into(), Value::Array(receipts));
    doc.insert("decisions".into(), Value::Array(export.decisions));
    doc.insert("approver".into(), export.approver);
    doc.insert("verification".into(), export.verification);
    Value::Object(doc)
}
