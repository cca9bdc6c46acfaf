//! Canonical JSON as ANP/0.1 uses it (SPEC §4, docs/protocol-notes.md).
//!
//! Every protocol here shares one implementation, the `jcs` crate. ANP's
//! rule at this call site: byte-identical to ECMAScript `JSON.stringify` with
//! sorted keys, and total, as the reference implementation (JavaScript) is:
//! an integer beyond 2^53 is hashed as the double JavaScript would read, and
//! `-0` as `0`. The tests in `tests/all/vectors.rs` pin both.

use serde_json::Value;

pub use jcs::{format_f64, format_number, number_as_f64, sha256_hex};

/// The canonical JSON text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    jcs::to_string(value)
}

/// The canonical JSON bytes of `value`, as hashed by `payload_hash`.
pub fn to_canonical_bytes(value: &Value) -> Vec<u8> {
    jcs::to_vec(value)
}

/// SHA-256 of the canonical JSON of `value`, lowercase hex: a `payload_hash`.
pub fn canonical_hash(value: &Value) -> String {
    jcs::value_hash_hex(value)
}
