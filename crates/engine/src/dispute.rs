//! A disputed session's next steps. When a host's record stops matching the
//! copy this console verified, the poller keeps the host's conflicting
//! answer byte for byte ([`record`]). A person can then see where it is
//! (host, session, counterparty) at a glance ([`view`]), export the evidence
//! (the stored copy beside the host's answer, both byte for byte, with the
//! exact seq and check: [`export`]) and acknowledge it with a note
//! ([`acknowledge`]). Acknowledged or not, the session stays disputed and
//! decisions on it stay refused: only the stored copy is trusted.

use std::path::Path;

use serde_json::{json, Value};

use crate::error::EngineError;
use crate::store::{Acknowledgement, DisputeRecord, HostRecord, SessionRecord, Store};
use crate::views::{AcknowledgementView, DisputeView, ExportResult, Verification};

/// The host's conflicting answer, as the poller read it.
pub(crate) struct HostAnswer<'a> {
    /// The request answered (`GET …/log?after=3`).
    pub request: &'a str,
    /// Its body, byte for byte.
    pub bytes: &'a [u8],
}

/// Keeps a dispute as first found; a later finding keeps the first evidence.
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    store: &Store,
    host_id: &str,
    session_id: &str,
    seq: u64,
    checks: &[String],
    detail: &str,
    answer: Option<&HostAnswer<'_>>,
    now: &str,
) -> Result<(), EngineError> {
    store.record_dispute(&DisputeRecord {
        host_id: host_id.to_owned(),
        session_id: session_id.to_owned(),
        detected_at: now.to_owned(),
        seq,
        checks: checks.to_vec(),
        detail: detail.to_owned(),
        request: answer.map(|a| a.request.to_owned()),
        host_answer: answer.map(|a| a.bytes.to_vec()),
        acknowledged: None,
    })?;
    Ok(())
}

/// The dispute of a session recorded before evidence was kept (or with
/// none): what the session row says.
fn from_session(session: &SessionRecord) -> DisputeRecord {
    DisputeRecord {
        host_id: session.host_id.clone(),
        session_id: session.session_id.clone(),
        detected_at: String::new(),
        seq: session.failing_seq.unwrap_or(0),
        checks: session.failing_checks.clone(),
        detail: session.dispute_detail.clone().unwrap_or_default(),
        request: None,
        host_answer: None,
        acknowledged: None,
    }
}

fn host_of(store: &Store, host_id: &str) -> Result<HostRecord, EngineError> {
    store.host(host_id)?.ok_or_else(|| EngineError::NotFound {
        what: "host",
        id: host_id.to_owned(),
    })
}

fn disputed_session(
    store: &Store,
    host_id: &str,
    session_id: &str,
) -> Result<SessionRecord, EngineError> {
    let session = store
        .session(host_id, session_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })?;
    if session.verification != Verification::Disputed {
        return Err(EngineError::InvalidInput(format!(
            "Session {session_id} is not disputed: its record matches the copy this console verified."
        )));
    }
    Ok(session)
}

/// The session's dispute at a glance, or `None` when it is not disputed.
pub(crate) fn view(
    store: &Store,
    session: &SessionRecord,
) -> Result<Option<DisputeView>, EngineError> {
    if session.verification != Verification::Disputed {
        return Ok(None);
    }
    let host = host_of(store, &session.host_id)?;
    let record = store
        .dispute(&session.host_id, &session.session_id)?
        .unwrap_or_else(|| from_session(session));
    Ok(Some(DisputeView {
        host_id: host.host_id.clone(),
        host_label: host.label.clone(),
        host_url: host.url.clone(),
        session_id: session.session_id.clone(),
        protocol: session.protocol.clone(),
        counterparty: session.counterparty.display_name().to_owned(),
        detected_at: Some(record.detected_at.clone()).filter(|t| !t.is_empty()),
        failing_seq: record.seq,
        checks: record.checks.clone(),
        detail: record.detail.clone(),
        request: record.request.clone(),
        host_answer_kept: record.host_answer.is_some(),
        acknowledged: record.acknowledged.map(|a| AcknowledgementView {
            note: a.note,
            at: a.at,
            by: a.by,
        }),
    }))
}

/// Records the person's note; the session stays disputed.
pub(crate) fn acknowledge(
    store: &Store,
    host_id: &str,
    session_id: &str,
    note: &str,
    now: &str,
) -> Result<DisputeView, EngineError> {
    let note = note.trim();
    if note.is_empty() || note.chars().count() > 2000 {
        return Err(EngineError::InvalidInput(
            "An acknowledgement needs a note of 1 to 2,000 characters: what you checked, or whom you told.".into(),
        ));
    }
    let session = disputed_session(store, host_id, session_id)?;
    let host = host_of(store, host_id)?;
    if store.dispute(host_id, session_id)?.is_none() {
        store.record_dispute(&from_session(&session))?;
    }
    store.acknowledge_dispute(
        host_id,
        session_id,
        &Acknowledgement {
            note: note.to_owned(),
            at: now.to_owned(),
            by: host.approver_email,
        },
    )?;
    view(store, &session)?.ok_or_else(|| EngineError::NotFound {
        what: "dispute",
        id: session_id.to_owned(),
    })
}

/// The stored copy as one JSON array of the events exactly as stored.
fn stored_copy(bodies: &[String]) -> String {
    let mut out = String::from("[\n");
    out.push_str(&bodies.join(",\n"));
    out.push_str("\n]\n");
    out
}

/// The event at `seq` in a JSON log answer (or in a bare array of events).
fn event_at(answer: &Value, seq: u64) -> Value {
    let events = answer
        .get("events")
        .and_then(Value::as_array)
        .or_else(|| answer.as_array());
    events
        .and_then(|events| events.iter().find(|e| e["seq"].as_u64() == Some(seq)))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Writes `exports/dispute-<session>/`: `stored-events.json` (the copy this
/// console verified, each event byte for byte as stored), `host-answer.json`
/// (the host's conflicting answer byte for byte, when it was kept) and
/// `evidence.json` (which host and session, the exact seq and check, both
/// files' SHA-256, the two versions of the failing event side by side, and
/// the acknowledgement).
pub(crate) fn export(
    store: &Store,
    exports: &Path,
    host_id: &str,
    session_id: &str,
    now: &str,
) -> Result<ExportResult, EngineError> {
    let session = disputed_session(store, host_id, session_id)?;
    let host = host_of(store, host_id)?;
    let record = store
        .dispute(host_id, session_id)?
        .unwrap_or_else(|| from_session(&session));
    let bodies: Vec<String> = store
        .events(host_id, session_id)?
        .into_iter()
        .map(|e| e.body)
        .collect();
    let stored = stored_copy(&bodies);
    let stored_value: Value = serde_json::from_str(&stored).unwrap_or(Value::Null);
    let safe: String = session_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(64)
        .collect();
    let dir = exports.join(format!("dispute-{safe}"));
    crate::owner_only::create_dir(&dir)?;
    crate::owner_only::write(&dir.join("stored-events.json"), stored.as_bytes())?;
    let mut written = stored.len() as u64;
    let host_answer = match &record.host_answer {
        Some(bytes) => {
            crate::owner_only::write(&dir.join("host-answer.json"), bytes)?;
            written += bytes.len() as u64;
            let parsed: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            json!({
                "file": "host-answer.json",
                "request": record.request,
                "bytes": bytes.len(),
                "sha256": jcs::sha256_hex(bytes),
                "event_at_failing_seq": event_at(&parsed, record.seq),
            })
        }
        None => Value::Null,
    };
    let evidence = json!({
        "what": "A session whose record on the host no longer matches the copy this console verified and stored. Only the stored copy is trusted; decisions on this session are refused.",
        "host": { "label": host.label, "url": host.url, "platform_fingerprint": host.platform_fingerprint },
        "session_id": session.session_id,
        "protocol": session.protocol,
        "counterparty": { "id": session.counterparty.id, "name": session.counterparty.name,
                          "organization": session.counterparty.organization,
                          "fingerprint": session.counterparty.fingerprint },
        "detected_at": Some(record.detected_at.clone()).filter(|t| !t.is_empty()),
        "failing_seq": record.seq,
        "checks": record.checks,
        "detail": record.detail,
        "stored_copy": {
            "file": "stored-events.json",
            "events": bodies.len(),
            "bytes": stored.len(),
            "sha256": jcs::sha256_hex(stored.as_bytes()),
            "pinned_head": { "seq": session.pin_seq, "event_hash": session.pin_hash },
            "event_at_failing_seq": event_at(&stored_value, record.seq),
        },
        "host_answer": host_answer,
        "acknowledged": record.acknowledged.as_ref().map(|a| json!({"note": a.note, "at": a.at, "by": a.by})),
        "exported_at": now,
    });
    let text = serde_json::to_string_pretty(&evidence)
        .map_err(|e| EngineError::Protocol(e.to_string()))?;
    crate::owner_only::write(&dir.join("evidence.json"), text.as_bytes())?;
    written += text.len() as u64;
    Ok(ExportResult {
        path: dir.display().to_string(),
        bytes: written,
    })
}
