//! Builders for the messages the tests exchange: a supplier's onboarding
//! agent (the requester) asks an organization's host (the responder).

use anex::{AgentId, Content, Envelope, Id, Message, Protocol, Terms};
use serde_json::{json, Value};

pub const REQUESTER: &str = "did:web:supplier.example";
pub const RESPONDER: &str = "https://host.example/a2a/org1";
pub const CONVERSATION: &str = "conv-1";

pub fn id(s: &str) -> Id {
    Id::parse(s).unwrap()
}

pub fn agent(s: &str) -> AgentId {
    AgentId::parse(s).unwrap()
}

pub fn terms(access: &[&str], promise: &[&str]) -> Terms {
    Terms::from_wire(access, promise).unwrap()
}

/// A message from `from` to the other party, in the test conversation.
pub fn from(
    from_requester: bool,
    message_id: &str,
    in_reply_to: Option<&str>,
    protocol: Protocol,
    content: Content,
) -> Message {
    let (sender, receiver) = if from_requester {
        (REQUESTER, RESPONDER)
    } else {
        (RESPONDER, REQUESTER)
    };
    Message::new(
        Envelope {
            sender: agent(sender),
            receiver: agent(receiver),
            protocol,
            conversation_id: id(CONVERSATION),
            message_id: id(message_id),
            in_reply_to: in_reply_to.map(id),
        },
        content,
    )
    .unwrap()
}

/// The JSON of a CFP for onboarding, as a counterparty would send it.
pub fn cfp_json() -> Value {
    json!({
        "performative": "CFP",
        "sender": REQUESTER,
        "receiver": RESPONDER,
        "content": {
            "request": {
                "identity": REQUESTER,
                "owner": "Northwind Supplies Ltd",
                "relation": "new supplier (introduced by procurement)",
                "request_type": "supplier onboarding",
                "access": ["legal_name(m)", "tax_id(m)", "bank_details(m)", "ap_contact"],
                "promise": ["no retention beyond 90 days", "no sharing with third parties"]
            }
        },
        "language": "JSON",
        "ontology": "ANEX-Ontology",
        "protocol": "ANEX-Negotiation",
        "conversation_id": CONVERSATION,
        "message_id": "m1"
    })
}

pub fn cfp() -> Message {
    anex::parse_value(&cfp_json()).unwrap()
}

pub fn propose(from_requester: bool, message_id: &str, reply: &str, t: Terms) -> Message {
    from(
        from_requester,
        message_id,
        Some(reply),
        Protocol::Negotiation,
        Content::Propose(t),
    )
}

pub fn accept(from_requester: bool, message_id: &str, reply: &str, t: Terms) -> Message {
    from(
        from_requester,
        message_id,
        Some(reply),
        Protocol::Negotiation,
        Content::Accept(t),
    )
}

/// A data REQUEST from the requester for `items`.
pub fn data_request(message_id: &str, items: &[&str]) -> Message {
    from(
        true,
        message_id,
        None,
        Protocol::DataExchange,
        Content::DataRequest {
            access: items
                .iter()
                .map(|s| anex::ItemName::parse(s).unwrap())
                .collect(),
        },
    )
}
