//! Reading the files a command is given, with errors that say which file and
//! why, so a person can fix the input without guessing.

use std::io::Read;
use std::path::Path;

use serde::de::DeserializeOwned;

/// The largest input any command reads. A 100,000-event log is about 100 MB;
/// anything past this is refused rather than exhausting memory.
pub const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;

/// Why an input file could not be used: every variant leads to exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file as the user named it.
        path: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_INPUT_BYTES`].
    #[error("{path}: larger than the {limit} byte limit")]
    TooLarge {
        /// The file as the user named it.
        path: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// The bytes are not JSON, or not the JSON shape the command needs.
    /// serde_json's message names the line and column.
    #[error("{path}: {what}: {source}")]
    Parse {
        /// The file as the user named it.
        path: String,
        /// What the file was expected to hold ("not JSON", "not a log document").
        what: &'static str,
        /// The parser's reason, with line and column.
        source: serde_json::Error,
    },
}

/// Reads a whole file (or stdin for `-`), refusing oversized input.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    let shown = display(path);
    let read_err = |source| InputError::Read {
        path: shown.clone(),
        source,
    };
    let mut bytes = Vec::new();
    let reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(read_err)?;
        // One allocation of the right size, not a doubling series of copies.
        let len = file
            .metadata()
            .map_or(0, |m| m.len())
            .min(MAX_INPUT_BYTES + 1);
        bytes.reserve_exact(usize::try_from(len).unwrap_or(0).saturating_add(1));
        Box::new(file)
    };
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputError::TooLarge {
            path: shown,
            limit: MAX_INPUT_BYTES,
        });
    }
    Ok(bytes)
}

/// Reads and parses a file as `T`; `what` names the expected content in errors.
pub fn read_json<T: DeserializeOwned>(path: &Path, what: &'static str) -> Result<T, InputError> {
    let bytes = read_bytes(path)?;
    serde_json::from_slice(&bytes).map_err(|source| InputError::Parse {
        path: display(path),
        what,
        source,
    })
}

/// How a path appears in messages: as the user typed it, `<stdin>` for `-`.
pub fn display(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Counterparty text made safe for a terminal (the one rule, in `humanize`).
pub use humanize::terminal_safe;
