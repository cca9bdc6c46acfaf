//! The OANP part of `countersign-verify RECEIPT.json [--log LOG.json]
//! [--allow-test] [--json]`, as pure functions: read the bytes, verify,
//! render text or JSON, choose the exit code. The binary adds only the
//! files, the flags and the printing.
//!
//! Exit codes: [`EXIT_PROOF`] (0) only when the receipt is proof,
//! [`EXIT_NOT_PROOF`] (1) when it is not, [`EXIT_UNREADABLE`] (2) when an
//! input cannot be read ([`ReadError`]).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::canonical::read_json;
use crate::money::{display_minor, MinorUnits};
use crate::text::shown;
use crate::verify::{verify, Trust, Verification};

/// The protocol's name in the shared verifier's JSON.
pub const PROTOCOL: &str = "oanp";
/// The receipt is proof.
pub const EXIT_PROOF: i32 = 0;
/// The receipt was read and is not proof.
pub const EXIT_NOT_PROOF: i32 = 1;
/// An input could not be read.
pub const EXIT_UNREADABLE: i32 = 2;
/// The largest receipt read (the published ones are about 6 KB).
pub const MAX_RECEIPT_BYTES: usize = 1 << 20;
/// The largest session log read.
pub const MAX_LOG_BYTES: usize = 16 << 20;

/// Which input could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The receipt.
    Receipt,
    /// The session log.
    Log,
}

impl Input {
    fn noun(self) -> &'static str {
        match self {
            Input::Receipt => "receipt",
            Input::Log => "session log",
        }
    }
}

/// Why an input could not be read; its sentence names the input.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Larger than the limit.
    #[error("the {} is {size} bytes, more than the {limit} this verifier reads", .input.noun())]
    TooLarge {
        /// Which input.
        input: Input,
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Not JSON, or JSON holding a number that cannot be read exactly.
    #[error("the {} cannot be read: {source}", .input.noun())]
    NotJson {
        /// Which input.
        input: Input,
        /// Why.
        source: jcs::ParseError,
    },
    /// The receipt is not a JSON object.
    #[error("the receipt is not a JSON object")]
    NotAnObject,
    /// The log is not a JSON array.
    #[error("the session log is not a JSON array of envelopes")]
    NotAnArray,
}

impl ReadError {
    /// Which input could not be read.
    pub fn input(&self) -> Input {
        match self {
            ReadError::TooLarge { input, .. } | ReadError::NotJson { input, .. } => *input,
            ReadError::NotAnObject => Input::Receipt,
            ReadError::NotAnArray => Input::Log,
        }
    }
}

fn read(bytes: &[u8], input: Input, limit: usize) -> Result<Value, ReadError> {
    if bytes.len() > limit {
        return Err(ReadError::TooLarge {
            input,
            size: bytes.len(),
            limit,
        });
    }
    read_json(bytes).map_err(|source| ReadError::NotJson { input, source })
}

/// Reads a receipt file's bytes: a JSON object.
pub fn read_receipt(bytes: &[u8]) -> Result<Map<String, Value>, ReadError> {
    match read(bytes, Input::Receipt, MAX_RECEIPT_BYTES)? {
        Value::Object(receipt) => Ok(receipt),
        _ => Err(ReadError::NotAnObject),
    }
}

/// Reads a session log file's bytes: a JSON array of envelopes.
pub fn read_log(bytes: &[u8]) -> Result<Vec<Value>, ReadError> {
    match read(bytes, Input::Log, MAX_LOG_BYTES)? {
        Value::Array(log) => Ok(log),
        _ => Err(ReadError::NotAnArray),
    }
}

/// Reads and verifies a receipt (and its log) from their bytes.
pub fn verify_bytes(
    receipt: &[u8],
    log: Option<&[u8]>,
    trust: Trust<'_>,
) -> Result<Verification, ReadError> {
    let receipt = read_receipt(receipt)?;
    let log = log.map(read_log).transpose()?;
    Ok(verify(&receipt, log.as_deref(), trust))
}

/// [`EXIT_PROOF`] when the receipt is proof, else [`EXIT_NOT_PROOF`].
pub fn exit_code(verification: &Verification) -> i32 {
    if verification.proof {
        EXIT_PROOF
    } else {
        EXIT_NOT_PROOF
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    protocol: &'static str,
    ok: bool,
    status: &'static str,
    checks: Vec<JsonCheck<'a>>,
}

#[derive(Serialize)]
struct JsonCheck<'a> {
    id: &'static str,
    ok: bool,
    skipped: bool,
    detail: &'a str,
}

/// `{"protocol": "oanp", "ok": …, "status": …, "checks": [{"id", "ok",
/// "skipped", "detail"}]}` on one line, with a trailing newline.
pub fn render_json(verification: &Verification) -> String {
    let report = JsonReport {
        protocol: PROTOCOL,
        ok: verification.proof,
        status: verification.status.as_str(),
        checks: verification
            .checks
            .iter()
            .map(|c| JsonCheck {
                id: c.id.as_str(),
                ok: c.ok,
                skipped: c.skipped,
                detail: &c.detail,
            })
            .collect(),
    };
    // Strings and booleans only: serialising cannot fail.
    let mut out = serde_json::to_string(&report).unwrap_or_default();
    out.push('\n');
    out
}

/// The text report: what was verified, one line per check (`ok`, `FAIL`,
/// `skip`), the status, the verdict and, only when proof, the signed terms.
pub fn render_text(verification: &Verification) -> String {
    let mut out = String::new();
    match &verification.signed_session_id {
        Some(id) => out.push_str(&format!(
            "OANP receipt for session {} (as signed)\n",
            shown(id)
        )),
        None => out.push_str("OANP receipt\n"),
    }
    for check in &verification.checks {
        let mark = match (check.skipped, check.ok) {
            (true, _) => "skip",
            (false, true) => "ok",
            (false, false) => "FAIL",
        };
        out.push_str(&format!(
            "  {mark:<5} {:<10} {}\n",
            check.id.as_str(),
            check.detail
        ));
    }
    out.push_str(&format!("status: {}\n", verification.status.as_str()));
    out.push_str(&verification.headline());
    out.push('\n');
    if verification.proof {
        if let Some(terms) = verification.signed_terms.as_ref().and_then(terms_line) {
            out.push_str(&format!("signed final terms: {terms}\n"));
        }
    }
    if !verification.proof && verification.signed_terms.is_some() {
        out.push_str("Do not act on the terms this receipt carries.\n");
    }
    out
}

/// `419.00 USD with warranty (included), cable (included)`.
fn terms_line(terms: &Value) -> Option<String> {
    let price = terms.get("price")?;
    let amount = MinorUnits::new(price.get("amount_minor")?.as_i64()?)?;
    let currency = shown(price.get("currency")?.as_str()?);
    let mut line = display_minor(amount, &currency);
    let inclusions: Vec<String> = terms
        .get("inclusions")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| {
                    let kind = shown(i.get("kind")?.as_str()?);
                    Some(match i.get("value").and_then(Value::as_str) {
                        Some(value) => format!("{kind} ({})", shown(value)),
                        None => kind,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if !inclusions.is_empty() {
        line.push_str(" with ");
        line.push_str(&inclusions.join(", "));
    }
    Some(line)
}
