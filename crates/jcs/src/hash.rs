//! SHA-256, the one hash of every protocol here, in the forms they write it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// SHA-256 of `bytes`, lowercase hex (ANP's `payload_hash` and `event_hash`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(sha256(bytes))
}

/// SHA-256 of `bytes` as `sha256:<lowercase hex>` (Concordia's and OANP's form).
pub fn sha256_prefixed(bytes: &[u8]) -> String {
    let mut hex = [0u8; 64];
    // 64 hex digits for 32 bytes: the buffer is exactly large enough.
    let _ = hex::encode_to_slice(sha256(bytes), &mut hex);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    out.extend(hex.iter().map(|&b| char::from(b)));
    out
}

/// SHA-256 of the canonical JSON of `value`, lowercase hex.
pub fn value_hash_hex(value: &Value) -> String {
    sha256_hex(crate::to_string(value).as_bytes())
}

/// SHA-256 of the canonical JSON of `value`, as `sha256:<hex>`.
pub fn value_hash_prefixed(value: &Value) -> String {
    sha256_prefixed(crate::to_string(value).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_prefixed(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let v = serde_json::json!({"b": 1, "a": [true, null]});
        assert_eq!(
            value_hash_hex(&v),
            sha256_hex(br#"{"a":[true,null],"b":1}"#)
        );
    }
}
