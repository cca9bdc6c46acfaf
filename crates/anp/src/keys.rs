//! Ed25519 identities (SPEC §2): keys, their base64url form and fingerprints,
//! and a key-file encoding. Pure: callers do the file IO.

pub use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use ed25519_dalek::{Signer as _, Verifier as _};
use serde::{Deserialize, Serialize};

use crate::canonical::sha256_hex;

/// Why a key, a signature or a key file could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    /// Not unpadded base64url text.
    #[error("{what} is not unpadded base64url")]
    NotBase64Url {
        /// What was being decoded (public key, signature, secret key).
        what: &'static str,
    },
    /// Decoded, but of the wrong length.
    #[error("{what} must be {expected} bytes, got {actual}")]
    WrongLength {
        /// What was being decoded.
        what: &'static str,
        /// The length the protocol requires.
        expected: usize,
        /// The length found.
        actual: usize,
    },
    /// 32 bytes that are not a valid Ed25519 point.
    #[error("public key is not a valid Ed25519 point")]
    InvalidPoint,
    /// A key file that is not the format `encode_key_file` writes.
    #[error("key file: {0}")]
    KeyFile(String),
}

/// A fresh random signing key from the operating system's generator.
pub fn generate_signing_key() -> SigningKey {
    SigningKey::generate(&mut rand_core::OsRng)
}

/// Unpadded base64url, the protocol's encoding for keys and signatures.
pub fn b64url(bytes: &[u8]) -> String {
    jcs::b64url::encode(bytes)
}

fn decode_b64url(text: &str, what: &'static str) -> Result<Vec<u8>, KeyError> {
    jcs::b64url::decode(text).map_err(|_| KeyError::NotBase64Url { what })
}

/// The wire form of a public key: raw 32 bytes, base64url, unpadded.
pub fn public_key_b64(key: &VerifyingKey) -> String {
    b64url(key.as_bytes())
}

/// Reads a wire-form public key, refusing anything but a valid Ed25519 point.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, KeyError> {
    let bytes = decode_b64url(text, "public key")?;
    let raw: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| KeyError::WrongLength {
            what: "public key",
            expected: 32,
            actual: bytes.len(),
        })?;
    VerifyingKey::from_bytes(&raw).map_err(|_| KeyError::InvalidPoint)
}

/// The identity shown to people: SHA-256 of the raw key bytes, hex.
pub fn fingerprint(key: &VerifyingKey) -> String {
    sha256_hex(key.as_bytes())
}

/// Signs `message` and returns the signature as base64url.
pub fn sign_b64(key: &SigningKey, message: &[u8]) -> String {
    b64url(&key.sign(message).to_bytes())
}

/// Reads a base64url signature.
pub fn parse_signature(text: &str) -> Result<Signature, KeyError> {
    let bytes = decode_b64url(text, "signature")?;
    let raw: [u8; 64] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| KeyError::WrongLength {
            what: "signature",
            expected: 64,
            actual: bytes.len(),
        })?;
    Ok(Signature::from_bytes(&raw))
}

/// True when `signature_b64` is a valid signature of `message` by `key`.
/// Strict verification: rejects malleable and small-order forms.
pub fn verify_b64(key: &VerifyingKey, message: &[u8], signature_b64: &str) -> bool {
    match parse_signature(signature_b64) {
        Ok(sig) => key.verify_strict(message, &sig).is_ok(),
        Err(_) => false,
    }
}

/// Plain (non-strict) verification, the cost `verify_b64` is measured against.
pub fn verify_plain(key: &VerifyingKey, message: &[u8], signature: &Signature) -> bool {
    key.verify(message, signature).is_ok()
}

/// The on-disk form of a private key: JSON, so it says what it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct KeyFile {
    /// Always `ANP/0.1 ed25519`.
    pub kind: String,
    /// The 32-byte seed, base64url.
    pub secret_key: String,
    /// The public key, base64url.
    pub public_key: String,
    /// The public key's fingerprint.
    pub fingerprint: String,
}

/// The `kind` every key file carries.
pub const KEY_FILE_KIND: &str = "ANP/0.1 ed25519";

/// Serializes a signing key into the key-file JSON text.
pub fn encode_key_file(key: &SigningKey) -> String {
    let vk = key.verifying_key();
    let file = KeyFile {
        kind: KEY_FILE_KIND.to_owned(),
        secret_key: b64url(key.as_bytes()),
        public_key: public_key_b64(&vk),
        fingerprint: fingerprint(&vk),
    };
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads key-file JSON text, checking that its public half matches its secret.
pub fn decode_key_file(text: &str) -> Result<SigningKey, KeyError> {
    let file: KeyFile = serde_json::from_str(text).map_err(|e| KeyError::KeyFile(e.to_string()))?;
    if file.kind != KEY_FILE_KIND {
        return Err(KeyError::KeyFile(format!(
            "kind must be {KEY_FILE_KIND:?}, got {:?}",
            file.kind
        )));
    }
    let bytes = decode_b64url(&file.secret_key, "secret key")?;
    let seed: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| KeyError::WrongLength {
            what: "secret key",
            expected: 32,
            actual: bytes.len(),
        })?;
    let key = SigningKey::from_bytes(&seed);
    if public_key_b64(&key.verifying_key()) != file.public_key {
        return Err(KeyError::KeyFile(
            "public_key does not belong to secret_key".to_owned(),
        ));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_file_round_trips_and_detects_mismatch() {
        let key = generate_signing_key();
        let text = encode_key_file(&key);
        let back = decode_key_file(&text).expect("decodes");
        assert_eq!(back.to_bytes(), key.to_bytes());
        let other = generate_signing_key();
        let forged = text.replace(
            &public_key_b64(&key.verifying_key()),
            &public_key_b64(&other.verifying_key()),
        );
        assert!(matches!(
            decode_key_file(&forged),
            Err(KeyError::KeyFile(_))
        ));
    }

    #[test]
    fn public_key_errors_name_the_problem() {
        assert_eq!(
            parse_public_key("abc"),
            Err(KeyError::WrongLength {
                what: "public key",
                expected: 32,
                actual: 2
            })
        );
        assert_eq!(
            parse_public_key("!!"),
            Err(KeyError::NotBase64Url { what: "public key" })
        );
    }
}
