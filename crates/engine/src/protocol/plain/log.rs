//! A plain-terms thread's record as the approver API hands it over
//! (`GET …/sessions/plain:<id>/log?after=N`): the host's signed entries
//! after N byte for byte, the key they are signed with, and the head.
//! Nothing here is trusted until `verify` checks it, against the platform
//! key this console pinned when it enrolled.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::EngineError;

/// The protocol value of a plain-terms thread.
pub(crate) const PROTOCOL: &str = "plain";

/// The head the host says it holds.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct HeadClaim {
    /// Entries.
    pub count: u64,
    /// The last one's hash.
    pub hash: String,
}

/// The log document of a plain-terms thread.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PlainLog {
    /// `plain`.
    pub protocol: String,
    /// The thread's own id (without the `plain:` prefix).
    pub session_id: String,
    /// The position the entries follow.
    #[serde(default)]
    pub after: u64,
    /// `{"host": <platform key>}`.
    pub keys: BTreeMap<String, String>,
    /// The entries after `after`.
    pub messages: Vec<Value>,
    /// The head the host holds.
    pub head: HeadClaim,
}

/// The thread's own id of the session the approver API names `session`.
pub(crate) fn session_id(session: &str) -> &str {
    session
        .strip_prefix(PROTOCOL)
        .and_then(|rest| rest.strip_prefix(':'))
        .unwrap_or(session)
}

/// Reads a fetched log, refusing another protocol's or another thread's.
pub(crate) fn read(bytes: &[u8], session: &str) -> Result<PlainLog, EngineError> {
    let log: PlainLog = serde_json::from_slice(bytes).map_err(|e| {
        EngineError::Protocol(format!(
            "the record of session {session} is not a plain-terms log: {e}"
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
    Ok(log)
}
