//! ANP/0.1 log documents, through the same library path as `anp verify`:
//! [`anp::verify_document_bytes`] on the file's bytes (events borrowed from
//! the text, canonical payloads hashed as they stand, every core), whose
//! verdict is `anp`'s ordinary one.

use crate::report::{Finding, Outcome};

/// Verifies the log of a Countersign console's ANP session export (its
/// `log` member, given as `log`) exactly as a bare log; `decisions` is how
/// many decisions the export carries beside it, as they were sent (their
/// effect is in the log: the host appended each as an event).
pub fn export(file: &str, log: &[u8], decisions: Option<usize>) -> Outcome {
    let mut outcome = verify(file, log);
    if outcome.status == "unreadable" {
        outcome.summary = format!("its log: {}", outcome.summary);
    } else {
        outcome.kind = "ANP session export".into();
        outcome.summary = format!(
            "its log, {}; {} decisions carried as sent",
            outcome.summary,
            decisions.unwrap_or(0)
        );
    }
    outcome
}

/// Verifies the ANP log document in `bytes` with the keys it names itself.
pub fn verify(file: &str, bytes: &[u8]) -> Outcome {
    let verdict = match anp::verify_document_bytes(bytes) {
        Ok(v) => v,
        Err(anp::DocumentError::Parse(e)) => {
            return Outcome::unreadable(file, format!("not an ANP/0.1 log document: {e}"))
        }
        Err(anp::DocumentError::Protocol(protocol)) => {
            return Outcome::unreadable(
                file,
                format!("protocol is {protocol:?}; this tool verifies ANP/0.1 logs"),
            )
        }
        Err(anp::DocumentError::Keys(e)) => return Outcome::unreadable(file, format!("keys: {e}")),
    };
    let report = &verdict.report;
    let mut failures: Vec<Finding> = report
        .failing
        .iter()
        .flat_map(|f| {
            f.checks.iter().enumerate().map(move |(i, c)| Finding {
                at: format!("seq {}", f.seq),
                check: c.as_str().to_owned(),
                detail: f.details.get(i).cloned().unwrap_or_default(),
            })
        })
        .collect();
    // As `anp verify` does: the document's own head claim is a note, not a check.
    let note = if verdict.event_count > 0
        && verdict.claimed_head != report.head.event_hash
        && report.rewrite.is_none()
    {
        format!(
            "; note: session.chain_head claims {}, but the events end at {}",
            verdict.claimed_head, report.head
        )
    } else {
        String::new()
    };
    if !report.ok && failures.is_empty() {
        failures.push(Finding {
            at: String::new(),
            check: "chain".into(),
            detail: "the log does not verify".into(),
        });
    }
    Outcome::judged(
        file,
        "ANP/0.1 log",
        format!(
            "session {}: {} events checked, head {}{note}",
            verdict.session_id, report.events_checked, report.head
        ),
        failures,
    )
}
