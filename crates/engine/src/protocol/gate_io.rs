//! The IO half every gate seam shares (Concordia, OANP, plain terms;
//! docs/approver-api.md): the record after a pin
//! (`GET …/sessions/<protocol>:<id>/log?after=N`, the answer's bytes kept as
//! evidence); a decision is POSTed as its exact bytes (the seam's default
//! `send_decision`). Tested against a real host in `tests/all/gate.rs`,
//! `oanp_gate.rs` and `plain.rs`.

use crate::edge::transport::{HostIo, SendError};
use crate::error::EngineError;
use crate::protocol::Fetched;
use crate::store::HostRecord;

/// Fetches the record after `after` (all of it for `None`).
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
