//! The ANEX IO half (docs/approver-api.md, "ANEX"): the conversation after
//! a pin (`GET …/sessions/anex:<context_id>/log?after=N`, the answer's bytes
//! kept as evidence); a decision is POSTed by the seam's default route.

use crate::edge::transport::{HostIo, SendError};
use crate::error::EngineError;
use crate::protocol::Fetched;
use crate::store::HostRecord;

/// The approvals member of an ANEX log answer, whatever else it carries.
#[derive(serde::Deserialize)]
struct ApprovalsOnly {
    #[serde(default)]
    approvals: Vec<countersign_host_api::approver::ApprovalRecord>,
}

/// Fetches the conversation after `after` (all of it for `None`).
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
    // The host's record of the conversation's approvals, when it holds any:
    // kept whole (each fetch carries all of it), for History.
    let approval_records = serde_json::from_slice::<ApprovalsOnly>(&bytes)
        .ok()
        .filter(|r| !r.approvals.is_empty())
        .and_then(|r| {
            serde_json::to_string(&countersign_host_api::approver::SessionApprovals {
                approvals: r.approvals,
            })
            .ok()
        });
    Ok(Fetched {
        request,
        bytes,
        requests: 1,
        approver_keys: None,
        approval_records,
    })
}
