//! The approver key file's format (`approver-key.json`), as every
//! Countersign tool writes it.

use ed25519_dalek::SigningKey;

/// A fresh Ed25519 key.
pub(crate) fn generate() -> SigningKey {
    anp::keys::generate_signing_key()
}

/// The key file's text for `key` (as earlier builds wrote it; the tests of
/// the move into protection write one).
#[cfg(test)]
pub(crate) fn encode(key: &SigningKey) -> String {
    anp::keys::encode_key_file(key)
}

/// The key in a key file's text, or why it cannot be read.
pub(crate) fn decode(text: &str) -> Result<SigningKey, String> {
    anp::keys::decode_key_file(text).map_err(|e| e.to_string())
}

/// The public key as hosts enroll it (base64url).
pub(crate) fn public_key_text(key: &ed25519_dalek::VerifyingKey) -> String {
    anp::keys::public_key_b64(key)
}

/// The fingerprint people compare (lowercase hex SHA-256 of the key).
pub(crate) fn fingerprint(key: &ed25519_dalek::VerifyingKey) -> String {
    anp::keys::fingerprint(key)
}

/// A public key as hosts enroll it (base64url), or why it is not one.
pub(crate) fn parse_public_key(text: &str) -> Result<ed25519_dalek::VerifyingKey, String> {
    anp::keys::parse_public_key(text).map_err(|e| e.to_string())
}
