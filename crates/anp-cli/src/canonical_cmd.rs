//! `anp canonical`: the exact bytes ANP hashes for a JSON document, or their
//! SHA-256, so anyone can check a `payload_hash` by hand.

use std::path::Path;

use anp::canonical::{sha256_hex, to_canonical_string};
use serde_json::Value;

use crate::input::{self, InputError};

/// The canonical JSON text of the file, or its SHA-256 hex when `hash`.
pub fn canonical(path: &Path, hash: bool) -> Result<String, InputError> {
    let value: Value = input::read_json(path, "not JSON")?;
    let text = to_canonical_string(&value);
    Ok(if hash {
        sha256_hex(text.as_bytes())
    } else {
        text
    })
}
