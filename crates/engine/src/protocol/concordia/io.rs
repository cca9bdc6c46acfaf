//! The Concordia IO half (docs/approver-api.md): the transcript after a pin
//! (`GET …/sessions/concordia:<id>/log?after=N`, the answer's bytes kept as
//! evidence) and a decision POSTed as its exact bytes (the seam's default
//! `send_decision`). Tested against a real host in `tests/all/gate.rs` and,
//! with the reference SDK as the agent, `tests/all/gate_sdk.rs`.

use crate::edge::transport::{HostIo, SendError};
use crate::error::EngineError;
use crate::protocol::Fetched;
use crate::store::HostRecord;

/// Fetches the transcript after `after` (all of it for `None`).
pub(crate) async fn fetch(
    io: &HostIo,
    host: &HostRecord,
    session_id: &str,
    after: Option<u64>,
) -> Result<Fetched, EngineError> {
    let (request, bytes) = io.get_log(session_id, after).await.map_err(|e| match e {
        SendError::Refused { code, message } => EngineError::HostRefused { code, message },
        SendError::Unreachable(detail) | SendError::Garbled(detail) => EngineError::Unreachable {
            url: host.url.clone(),
            detail,
        },
    })?;
    Ok(Fetched {
        request,
        bytes,
        requests: 1,
        approver_keys: None,
        approval_records: None,
    })
}
