//! An OANP gate session's record as the approver API hands it over
//! (`GET …/sessions/oanp:<id>/log?after=N`, docs/approver-api.md): the
//! envelopes after N byte for byte as mirrored, the session's roles with
//! their agents' ids (OANP envelopes are unsigned: there are no keys), the
//! org's own role and the counterparty's, and the head. Nothing here is
//! trusted until `verify` checks it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::EngineError;

/// The protocol value of an OANP session.
pub(crate) const PROTOCOL: &str = "oanp";

/// The other side, as the org's agent names it.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct NamedParty {
    /// Its role (`merchant`, `buyer`).
    pub id: String,
}

/// The head the host says it holds.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct HeadClaim {
    /// Envelopes.
    pub count: u64,
    /// The last one's hash.
    pub hash: String,
}

/// The log document of an OANP gate session.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct OanpLog {
    /// `oanp`.
    pub protocol: String,
    /// The session's own id (without the `oanp:` prefix).
    pub session_id: String,
    /// The position the envelopes follow.
    #[serde(default)]
    pub after: u64,
    /// The org's own role.
    #[serde(rename = "self")]
    pub self_party: String,
    /// The other side.
    pub counterparty: NamedParty,
    /// Role → the party's agent id.
    pub keys: BTreeMap<String, String>,
    /// The envelopes after `after`, as mirrored.
    pub messages: Vec<Value>,
    /// The head the host holds.
    pub head: HeadClaim,
}

/// The session's own id of the session the approver API names `session`
/// (`oanp:01M42…` → `01M42…`).
pub(crate) fn session_id(session: &str) -> &str {
    session
        .strip_prefix(PROTOCOL)
        .and_then(|rest| rest.strip_prefix(':'))
        .unwrap_or(session)
}

/// Reads a fetched log, refusing another protocol's or another session's.
pub(crate) fn read(bytes: &[u8], session: &str) -> Result<OanpLog, EngineError> {
    let log: OanpLog = serde_json::from_slice(bytes).map_err(|e| {
        EngineError::Protocol(format!(
            "the record of session {session} is not an OANP session log: {e}"
        ))
    })?;
    if log.protocol != PROTOCOL {
        return Err(EngineError::Protocol(format!(
            "the record of session {session} speaks {:?}, not {PROTOCOL}",
            log.protocol
        )));
    }
    if log.session_id != session_id(session) {
        return Err(EngineError::Protocol(format!(
            "asked for the record of session {session}, got session {:?}",
            log.session_id
        )));
    }
    for role in [&log.self_party, &log.counterparty.id] {
        if !log.keys.contains_key(role) {
            return Err(EngineError::Protocol(format!(
                "the record of session {session} names no agent for its role {role:?}"
            )));
        }
    }
    Ok(log)
}
