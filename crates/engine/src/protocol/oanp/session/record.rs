//! A stored OANP session log as history shows and exports it: a timeline
//! row per envelope, the log with the roles this console pinned (what
//! `countersign-verify --log` reads is its `messages`), and the offers as CSV.

use oanp::MessageType;
use serde_json::{json, Value};

use super::offer::{amount_in, envelope, offer_of, terms_view};
use crate::protocol::{EntryRole, TimelineEntry};
use crate::store::{HostRecord, SessionRecord, StoredEvent};
use crate::views::Side;

fn inclusions(terms: &crate::views::OanpTerms) -> String {
    if terms.inclusions.is_empty() {
        return "no inclusions".to_owned();
    }
    terms
        .inclusions
        .iter()
        .map(|i| i.kind.chars().take(60).collect::<String>())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One envelope as a timeline row; `counterparty` is the other side's role.
pub(crate) fn timeline(
    stored: &StoredEvent,
    counterparty: &str,
    human: &humanize::Humanizer,
) -> Option<TimelineEntry> {
    let (value, typed) = envelope(stored)?;
    let side = match typed.sender.role.as_str() {
        "arbiter" => None,
        role if role == counterparty => Some(Side::Counterparty),
        _ => Some(Side::Ours),
    };
    let amount = amount_in(stored);
    let summary = match typed.kind {
        MessageType::OfferPropose | MessageType::OfferCounter => {
            let (_, round, terms) = offer_of(stored)?;
            let what = if typed.kind == MessageType::OfferPropose {
                "Offer"
            } else {
                "Counter-offer"
            };
            let price = match &amount {
                Some(a) => human.money(&a.value, &a.currency),
                None => format!(
                    "{} minor units of {}",
                    terms.price.amount_minor, terms.price.currency
                ),
            };
            let round = round.map(|r| format!(" (round {r})")).unwrap_or_default();
            format!(
                "{what} by the {}{round}: {price} with {}",
                typed.sender.role.as_str(),
                inclusions(&terms_view(&terms))
            )
        }
        MessageType::ArbitrationEvaluate | MessageType::ArbitrationReject => {
            let p = typed.evaluation().ok();
            let verdict = p
                .as_ref()
                .and_then(|p| p.verdict.clone())
                .unwrap_or_else(|| "no verdict".to_owned());
            let verdict: String = verdict.chars().take(60).collect();
            let score = p
                .as_ref()
                .and_then(|p| p.fairness_score.as_ref())
                .map(|f| format!(", score {}", f.as_str()))
                .unwrap_or_default();
            let what = if typed.kind == MessageType::ArbitrationReject {
                "Arbiter rejected the offer"
            } else {
                "Arbiter's verdict"
            };
            format!("{what}: {verdict}{score}")
        }
        MessageType::OfferAccept => format!("Accepted by the {}", typed.sender.role.as_str()),
        MessageType::SessionAgree => "Agreed: the arbiter signs the final terms".to_owned(),
        MessageType::SessionClose => "Closed without agreement".to_owned(),
        MessageType::SessionOpen => format!("Session opened by the {}", typed.sender.role.as_str()),
        MessageType::SessionAck => format!("Joined by the {}", typed.sender.role.as_str()),
        MessageType::SessionAccept => {
            "The arbiter accepted the session and fixed its rules".to_owned()
        }
    };
    let payload = value.get("payload").cloned().unwrap_or(Value::Null);
    let role = match typed.kind {
        MessageType::OfferPropose | MessageType::OfferCounter => EntryRole::Proposal(
            payload
                .get("terms")
                .cloned()
                .unwrap_or_else(|| payload.clone()),
        ),
        MessageType::OfferAccept => EntryRole::Acceptance(None),
        _ => EntryRole::Other,
    };
    Some(TimelineEntry {
        summary,
        payload,
        signer: None,
        side,
        amount,
        role,
    })
}

/// The stored log with the roles this console pinned; `messages` is the
/// session log as `countersign-verify RECEIPT --log` reads it.
pub(crate) fn document(
    _host: Option<&HostRecord>,
    session: &SessionRecord,
    events: &[StoredEvent],
) -> Value {
    let messages: Vec<Value> = events
        .iter()
        .filter_map(|e| serde_json::from_str(&e.body).ok())
        .collect();
    let roles: Value = serde_json::from_str(&session.pinned_keys).unwrap_or(json!({}));
    json!({
        "protocol": "oanp",
        "session_id": session.session_id,
        "messages": messages,
        "roles": roles,
        "head": { "count": session.pin_seq, "hash": session.pin_hash },
    })
}
