//! OANP receipts, through `crates/oanp`'s own report: the issue fixes their
//! JSON (`{"protocol": "oanp", "ok", "status", "checks": [{"id", "ok",
//! "skipped", "detail"}]}`) and their exit codes (0 proof, 1 not proof, 2
//! unreadable). The receipt is read from its bytes by the OANP crate's strict
//! reader, which refuses what a lenient parse would silently round.

use oanp::report::{exit_code, render_json, render_text, verify_bytes, Input, EXIT_UNREADABLE};
use oanp::{PinnedKeys, Trust};

/// What the OANP part prints and how the process should exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    /// For stdout (empty when unreadable).
    pub stdout: String,
    /// For stderr (a sentence naming the unreadable input).
    pub stderr: String,
    /// 0 proof, 1 not proof, 2 unreadable.
    pub exit_code: i32,
}

/// Verifies one receipt (and the session log given with `--log`).
/// `allow_test` makes a test-mode arbiter's receipt count as proof.
pub fn verify(
    file: &str,
    receipt: &[u8],
    log: Option<(&str, &[u8])>,
    allow_test: bool,
    json: bool,
) -> Printed {
    let pins = PinnedKeys::published();
    let trust = Trust {
        pins: &pins,
        allow_test,
    };
    match verify_bytes(receipt, log.map(|(_, bytes)| bytes), trust) {
        Ok(v) => Printed {
            stdout: if json {
                format!("{}\n", render_json(&v).trim_end())
            } else {
                format!("{file}: OANP receipt\n{}", render_text(&v))
            },
            stderr: String::new(),
            exit_code: exit_code(&v),
        },
        Err(e) => {
            let path = match (e.input(), log) {
                (Input::Log, Some((log_path, _))) => log_path,
                _ => file,
            };
            Printed {
                stdout: String::new(),
                stderr: format!("countersign-verify: {}: {e}\n", crate::report::safe(path)),
                exit_code: EXIT_UNREADABLE,
            }
        }
    }
}
