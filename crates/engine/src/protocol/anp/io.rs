//! The ANP IO half: the log after a pin through the approver client (the
//! bytes kept as evidence), the approver keys refreshed when the new events
//! carry an accept, and a decision sent as its exact bytes.

use anp::{EventKind, LogDocument};

use crate::edge::enroll::refresh_approver_keys;
use crate::edge::transport::HostIo;
use crate::error::EngineError;
use crate::protocol::Fetched;
use crate::store::HostRecord;

/// Fetches the log after `after` (all of it for `None`).
pub(crate) async fn fetch(
    io: &HostIo,
    host: &HostRecord,
    session_id: &str,
    after: Option<u64>,
) -> Result<Fetched, EngineError> {
    let raw = io
        .client
        .log_raw(session_id, after)
        .await
        .map_err(|e| EngineError::Unreachable {
            url: host.url.clone(),
            detail: e.to_string(),
        })?;
    let doc: &LogDocument = &raw.document;
    let mut requests = 1;
    // An accept's approvals are checked against the keys the host publishes
    // now: one approver may have enrolled since the last look.
    // With an accept, the host's record of who approved as what is read too
    // (an ANP approval names neither its role nor whom a stand-in made it
    // for); a host that cannot say leaves the last record read.
    let accepted = doc.events.iter().any(|e| e.kind == EventKind::Accept);
    let approver_keys = if accepted {
        requests += 1;
        refresh_approver_keys(&io.client).await
    } else {
        None
    };
    let approval_records = if accepted {
        requests += 1;
        match io.client.session_approvals(session_id).await {
            Ok(record) => serde_json::to_string(&record).ok(),
            Err(e) => {
                tracing::debug!(error = %e, "the host's record of approvals was not read");
                None
            }
        }
    } else {
        None
    };
    Ok(Fetched {
        request: raw.request,
        bytes: raw.bytes,
        requests,
        approver_keys,
        approval_records,
    })
}
