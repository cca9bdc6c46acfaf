//! ANP/0.1 log documents, through `crates/anp`'s public library API only.
//!
//! Kept to this one module so it can switch to the whole-document
//! verification function `crates/anp` is about to expose, unchanged elsewhere.

use serde_json::Value;

use crate::report::{Finding, Outcome};

/// Verifies an ANP log document with the keys it names itself.
pub fn verify(file: &str, value: &Value) -> Outcome {
    let doc = match <anp::LogDocument as serde::Deserialize>::deserialize(value) {
        Ok(d) => d,
        Err(e) => return Outcome::unreadable(file, format!("not an ANP/0.1 log document: {e}")),
    };
    if !doc.is_anp_0_1() {
        return Outcome::unreadable(
            file,
            format!(
                "protocol is {:?}; this tool verifies ANP/0.1 logs",
                doc.protocol
            ),
        );
    }
    let report = match anp::verify_document(&doc) {
        Ok(r) => r,
        Err(e) => return Outcome::unreadable(file, format!("keys: {e}")),
    };
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
    let note = if !doc.events.is_empty()
        && doc.session.chain_head != report.head.event_hash
        && report.rewrite.is_none()
    {
        format!(
            "; note: session.chain_head claims {}, but the events end at {}",
            doc.session.chain_head, report.head
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
            doc.session.id, report.events_checked, report.head
        ),
        failures,
    )
}
