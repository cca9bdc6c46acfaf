//! A gate session's record as the approver API hands it over
//! (`GET …/sessions/<protocol>:<id>/log?after=N`, docs/approver-api.md): the
//! transcript's messages after N byte for byte as mirrored, each party's
//! key, the org's own party and the counterparty, the head, and the agent's
//! requests for a decision (read by `protocol::gate_request`, shared with
//! OANP). Nothing here is trusted until `verify` checks it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::EngineError;

/// The protocol value of a Concordia session.
pub(crate) const PROTOCOL: &str = "concordia";

/// The counterparty as the org's own agent names it (its words: data; the
/// summary carries the same names to the session row).
#[derive(Debug, Clone, Default, Deserialize)]
#[allow(dead_code)] // name and organization: the summary's copy is the one shown
pub(crate) struct NamedParty {
    /// Its party id (the key into `keys`).
    pub id: String,
    /// Its name, when given.
    #[serde(default)]
    pub name: Option<String>,
    /// Its organization, when given.
    #[serde(default)]
    pub organization: Option<String>,
}

/// The head the host says it holds.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct HeadClaim {
    /// Messages.
    pub count: u64,
    /// The last one's hash.
    pub hash: String,
}

/// The log document of a Concordia gate session.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ConcordiaLog {
    /// `concordia`.
    pub protocol: String,
    /// The transcript's own session id (without the `concordia:` prefix).
    pub session_id: String,
    /// The position the messages follow.
    #[serde(default)]
    pub after: u64,
    /// The org's own party id.
    #[serde(rename = "self")]
    pub self_party: String,
    /// The other side.
    pub counterparty: NamedParty,
    /// Party id → base64url Ed25519 key.
    pub keys: BTreeMap<String, String>,
    /// The messages after `after`, each one's JSON text byte for byte as
    /// the host sent it (what the store keeps).
    #[serde(rename = "messages")]
    pub raw: Vec<Box<RawValue>>,
    /// The same messages, parsed (what the protocol crate verifies).
    #[serde(skip)]
    pub messages: Vec<Value>,
    /// The head the host holds.
    pub head: HeadClaim,
}

/// The transcript's own id of the session the approver API names `session`
/// (`concordia:ses_…` → `ses_…`).
pub(crate) fn transcript_id(session: &str) -> &str {
    session
        .strip_prefix(PROTOCOL)
        .and_then(|rest| rest.strip_prefix(':'))
        .unwrap_or(session)
}

/// Reads a fetched log, refusing another protocol's or another session's.
pub(crate) fn read(bytes: &[u8], session: &str) -> Result<ConcordiaLog, EngineError> {
    let not_a_transcript = |e: serde_json::Error| {
        EngineError::Protocol(format!(
            "the record of session {session} is not a Concordia transcript: {e}"
        ))
    };
    let mut log: ConcordiaLog = serde_json::from_slice(bytes).map_err(not_a_transcript)?;
    log.messages = log
        .raw
        .iter()
        .map(|m| serde_json::from_str(m.get()))
        .collect::<Result<_, _>>()
        .map_err(not_a_transcript)?;
    if log.protocol != PROTOCOL {
        return Err(EngineError::Protocol(format!(
            "the record of session {session} speaks {:?}, not {PROTOCOL}",
            log.protocol
        )));
    }
    if log.session_id != transcript_id(session) {
        return Err(EngineError::Protocol(format!(
            "asked for the record of session {session}, got session {:?}",
            log.session_id
        )));
    }
    for party in [&log.self_party, &log.counterparty.id] {
        if !log.keys.contains_key(party) {
            return Err(EngineError::Protocol(format!(
                "the record of session {session} gives no key for its party {party:?}"
            )));
        }
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_document_of_the_approver_api_is_read_and_another_refused() {
        let doc = serde_json::json!({
            "protocol": "concordia", "session_id": "ses_9d4e8f01", "after": 2,
            "self": "agent_buyer_42", "counterparty": {"id": "agent_seller_01", "name": "Litware Sales Agent", "organization": "Litware"},
            "keys": {"agent_buyer_42": "a", "agent_seller_01": "b"},
            "messages": [], "head": {"count": 4, "hash": "sha256:00"},
            "requests": [{"request_id": "r1", "message_hash": "sha256:00", "action": "accept", "amount": "150000.00 USD",
                          "expires_at": "2026-12-02T09:00:00Z", "status": "pending", "created_at": "2026-12-01T09:00:00Z",
                          "receipts": [], "reason": null, "counter_terms": null}]
        });
        let bytes = serde_json::to_vec(&doc).unwrap();
        let log = read(&bytes, "concordia:ses_9d4e8f01").unwrap();
        assert_eq!(log.self_party, "agent_buyer_42");
        assert_eq!(log.counterparty.organization.as_deref(), Some("Litware"));
        let requests =
            crate::protocol::gate_request::read(&bytes, "concordia:ses_9d4e8f01").unwrap();
        assert_eq!(requests[0].amount.as_deref(), Some("150000.00 USD"));
        assert_eq!((log.after, log.head.count), (2, 4));
        let err = read(&bytes, "concordia:ses_other").unwrap_err();
        assert!(
            err.to_string().contains("got session \"ses_9d4e8f01\""),
            "{err}"
        );
        let mut anp = doc.clone();
        anp["protocol"] = "ANP/0.1".into();
        let err = read(&serde_json::to_vec(&anp).unwrap(), "concordia:ses_9d4e8f01").unwrap_err();
        assert!(err.to_string().contains("not concordia"), "{err}");
        assert!(read(b"{\"events\": []}", "concordia:ses_9d4e8f01").is_err());
    }
}
