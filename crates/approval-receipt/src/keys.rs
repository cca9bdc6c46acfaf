//! Ed25519 keys and signatures as Concordia writes them: base64url, with
//! or without padding (the suite and the SDK pad; RUNNER_CONTRACT allows both).

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

/// Why a key or signature text could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Not base64url.
    #[error("{what} is not base64url")]
    NotBase64Url {
        /// Which value.
        what: &'static str,
    },
    /// Wrong length or not a curve point.
    #[error("{what} is not an Ed25519 {what} ({len} bytes)")]
    Malformed {
        /// Which value.
        what: &'static str,
        /// How many bytes it decoded to.
        len: usize,
    },
}

/// Reads a base64url Ed25519 public key.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, KeyError> {
    let bytes = jcs::b64url::decode_padding_optional(text.trim())
        .map_err(|_| KeyError::NotBase64Url { what: "public key" })?;
    let len = bytes.len();
    let array: [u8; 32] = bytes.try_into().map_err(|_| KeyError::Malformed {
        what: "public key",
        len,
    })?;
    VerifyingKey::from_bytes(&array).map_err(|_| KeyError::Malformed {
        what: "public key",
        len,
    })
}

/// Reads a base64url Ed25519 signature.
pub fn parse_signature(text: &str) -> Result<Signature, KeyError> {
    let bytes = jcs::b64url::decode_padding_optional(text)
        .map_err(|_| KeyError::NotBase64Url { what: "signature" })?;
    let len = bytes.len();
    let array: [u8; 64] = bytes.try_into().map_err(|_| KeyError::Malformed {
        what: "signature",
        len,
    })?;
    Ok(Signature::from_bytes(&array))
}

/// True when `signature_text` is a valid Ed25519 signature of `message` by `key`
/// (strict verification: no malleable or small-order forms).
pub fn verify(key: &VerifyingKey, message: &[u8], signature_text: &str) -> bool {
    match parse_signature(signature_text) {
        Ok(sig) => verify_parsed(key, message, &sig),
        Err(_) => false,
    }
}

/// Signs `message`, as padded base64url (the reference SDK's
/// `urlsafe_b64encode`, which its own verifier requires).
pub fn sign(key: &SigningKey, message: &[u8]) -> String {
    jcs::b64url::encode_padded(&key.sign(message).to_bytes())
}

/// The padded base64url of a public key, as the SDK's `public_key_b64()` writes it.
pub fn public_key_text(key: &VerifyingKey) -> String {
    jcs::b64url::encode_padded(key.as_bytes())
}

/// True when `signature` is valid for `message` under `key`, strictly
/// (non-canonical and small-order forms refused).
pub fn verify_parsed(key: &VerifyingKey, message: &[u8], signature: &Signature) -> bool {
    key.verify_strict(message, signature).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_padded_and_unpadded() {
        let key = SigningKey::from_bytes(&[1u8; 32]);
        let sig = sign(&key, b"m");
        assert!(sig.ends_with("=="), "{sig}");
        assert!(verify(&key.verifying_key(), b"m", &sig));
        assert!(verify(
            &key.verifying_key(),
            b"m",
            sig.trim_end_matches('=')
        ));
        assert!(!verify(&key.verifying_key(), b"n", &sig));
        let text = public_key_text(&key.verifying_key());
        assert_eq!(parse_public_key(&text).unwrap(), key.verifying_key());
        assert!(parse_public_key("AAAA").is_err());
    }
}
