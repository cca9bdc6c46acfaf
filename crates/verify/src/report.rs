//! The outcome of verifying one file.

use serde::Serialize;

/// One failing check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Where: `message 3 (msg_ab12)`, `seq 4`, or empty for the whole artifact.
    pub at: String,
    /// The check's name (`signature`, `link`, `offer_hash`, …).
    pub check: String,
    /// What was found.
    pub detail: String,
}

/// What the verifier says about one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The file, as given.
    pub file: String,
    /// What it is (`Concordia transcript`, …), or `unreadable`.
    pub kind: String,
    /// `verified`, `failed` or `unreadable`.
    pub status: &'static str,
    /// One line: counts, heads.
    pub summary: String,
    /// Every failing check.
    pub failures: Vec<Finding>,
}

impl Outcome {
    /// A file that could not be read or understood.
    pub fn unreadable(file: &str, why: impl Into<String>) -> Outcome {
        Outcome {
            file: file.to_owned(),
            kind: "unreadable".into(),
            status: "unreadable",
            summary: why.into(),
            failures: Vec::new(),
        }
    }

    /// A verdict: verified when there are no failures.
    pub fn judged(file: &str, kind: &str, summary: String, failures: Vec<Finding>) -> Outcome {
        Outcome {
            file: file.to_owned(),
            kind: kind.to_owned(),
            status: if failures.is_empty() {
                "verified"
            } else {
                "failed"
            },
            summary,
            failures,
        }
    }

    /// The process exit code this outcome alone calls for: 0, 1 or 2.
    pub fn exit_code(&self) -> i32 {
        match self.status {
            "verified" => 0,
            "failed" => 1,
            _ => 2,
        }
    }

    /// For people: one line, then one line per failing check. Counterparty
    /// text is escaped, never interpreted by the terminal.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {}: {}: {}\n",
            safe(&self.file),
            self.kind,
            self.status,
            safe(&self.summary)
        );
        for f in &self.failures {
            if f.at.is_empty() {
                out.push_str(&format!("  {}: {}\n", f.check, safe(&f.detail)));
            } else {
                out.push_str(&format!(
                    "  {}: {}: {}\n",
                    safe(&f.at),
                    f.check,
                    safe(&f.detail)
                ));
            }
        }
        out
    }
}

/// Escapes control and bidirectional-override characters (the one rule, in
/// `humanize`).
pub use humanize::terminal_safe as safe;
