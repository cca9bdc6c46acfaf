//! `anp verify`: re-verifies a log document with the keys it names, whole or
//! from a pinned head, and reports every failing seq and check.

use std::fmt::Write as _;
use std::path::Path;

use anp::{ChainHead, DocumentError, VerifyOptions, VerifyReport};
use serde::Serialize;

use crate::input::{self, terminal_safe, InputError};

/// Why a log could not be verified at all (as opposed to failing).
#[derive(Debug, thiserror::Error)]
pub enum VerifyInputError {
    /// Unreadable or unparseable file.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A protocol this tool does not speak.
    #[error("{path}: protocol is {found:?}; this tool verifies ANP/0.1 logs")]
    Protocol {
        /// The file.
        path: String,
        /// The protocol it declares.
        found: String,
    },
    /// A key in the document's `keys` block is not a valid Ed25519 key.
    #[error("{path}: keys: {source}")]
    Keys {
        /// The file.
        path: String,
        /// What is wrong with the key.
        source: anp::keys::KeyError,
    },
}

/// The machine-readable report `anp verify --json` prints.
#[derive(Debug, Serialize)]
pub struct VerifyOutput {
    /// The file verified.
    pub file: String,
    /// The session the log belongs to.
    pub session_id: String,
    /// The pin the log was checked against, if any.
    pub pin: Option<ChainHead>,
    /// The verdict, exactly as `anp::chain` reports it.
    #[serde(flatten)]
    pub report: VerifyReport,
    /// Set when the document's own `session.chain_head` claim disagrees with
    /// the head its events actually end at (for example, a truncated log).
    pub claim_mismatch: Option<String>,
}

/// Reads and verifies `path`; `pin` restricts checking to events after it.
/// The library's whole-document path does the work
/// ([`anp::verify_document_bytes_with`]): every core, no tree for payloads.
pub fn verify_file(path: &Path, pin: Option<&ChainHead>) -> Result<VerifyOutput, VerifyInputError> {
    let shown = input::display(path);
    let bytes = input::read_bytes(path)?;
    let options = VerifyOptions {
        pin: pin.cloned(),
        threads: None,
    };
    let verdict = anp::verify_document_bytes_with(&bytes, &options).map_err(|e| match e {
        DocumentError::Parse(source) => VerifyInputError::Input(InputError::Parse {
            path: shown.clone(),
            what: "not an ANP log document",
            source,
        }),
        DocumentError::Protocol(found) => VerifyInputError::Protocol {
            path: shown.clone(),
            found,
        },
        DocumentError::Keys(source) => VerifyInputError::Keys {
            path: shown.clone(),
            source,
        },
    })?;
    let report = verdict.report;
    let claim_mismatch = (report.rewrite.is_none()
        && verdict.event_count > 0
        && verdict.claimed_head != report.head.event_hash)
        .then(|| {
            format!(
                "session.chain_head claims {}, but the events end at {}",
                verdict.claimed_head, report.head
            )
        });
    Ok(VerifyOutput {
        file: shown,
        session_id: verdict.session_id,
        pin: pin.cloned(),
        report,
        claim_mismatch,
    })
}

/// The report as text for people: the verdict, every failing seq with its
/// checks and reasons, the rewrite, and unproven attributions.
pub fn render_text(out: &VerifyOutput) -> String {
    let r = &out.report;
    let mut text = String::new();
    let verdict = if r.ok { "verified" } else { "FAILED" };
    let _ = writeln!(
        text,
        "{}: {verdict}: {} events checked, head {}",
        terminal_safe(&out.file),
        r.events_checked,
        r.head
    );
    if let Some(pin) = &out.pin {
        let _ = writeln!(text, "pinned at {pin}");
    }
    if let Some(rewrite) = &r.rewrite {
        let _ = writeln!(
            text,
            "rewrite: the log does not extend the pinned head {}: {}",
            rewrite.pinned,
            terminal_safe(&rewrite.detail)
        );
    }
    for failure in &r.failing {
        let checks: Vec<&str> = failure.checks.iter().map(|c| c.as_str()).collect();
        let _ = writeln!(text, "seq {}: {}", failure.seq, checks.join(", "));
        for detail in &failure.details {
            let _ = writeln!(text, "  {}", terminal_safe(detail));
        }
    }
    for seq in &r.unproven {
        let _ = writeln!(
            text,
            "seq {seq}: attribution unproven: the event carries no signature"
        );
    }
    if let Some(mismatch) = &out.claim_mismatch {
        let _ = writeln!(text, "note: {}", terminal_safe(mismatch));
    }
    text
}
