//! `did:key` for Ed25519 keys: `did:key:z` + base58btc(`0xed 0x01` ‖ key).
//!
//! Anyone can verify a receipt signed by such an identity without asking
//! Countersign: the key is in the identifier.

use ed25519_dalek::VerifyingKey;

const PREFIX: &str = "did:key:z";
const ED25519_MULTICODEC: [u8; 2] = [0xed, 0x01];

/// Why a `did:key` could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DidKeyError {
    /// Not `did:key:z…` (base58btc multibase).
    #[error("not a base58btc did:key (it must start with did:key:z)")]
    NotDidKey,
    /// The multibase text is not base58btc.
    #[error("the did:key is not valid base58btc")]
    NotBase58,
    /// Not the Ed25519 multicodec, or not 32 key bytes.
    #[error("the did:key is not an Ed25519 key (multicodec 0xed01 and 32 bytes)")]
    NotEd25519,
    /// 32 bytes that are not a point on the curve.
    #[error("the did:key's bytes are not a valid Ed25519 public key")]
    BadKey,
}

/// The `did:key` of an Ed25519 public key.
pub fn encode(key: &VerifyingKey) -> String {
    let mut bytes = Vec::with_capacity(34);
    bytes.extend_from_slice(&ED25519_MULTICODEC);
    bytes.extend_from_slice(key.as_bytes());
    format!("{PREFIX}{}", bs58::encode(bytes).into_string())
}

/// The Ed25519 public key a `did:key` names. A fragment (`#…`) is ignored.
pub fn decode(did: &str) -> Result<VerifyingKey, DidKeyError> {
    let did = did.split('#').next().unwrap_or(did);
    let text = did.strip_prefix(PREFIX).ok_or(DidKeyError::NotDidKey)?;
    let bytes = bs58::decode(text)
        .into_vec()
        .map_err(|_| DidKeyError::NotBase58)?;
    if bytes.len() != 34 || bytes[..2] != ED25519_MULTICODEC {
        return Err(DidKeyError::NotEd25519);
    }
    let key: [u8; 32] = bytes[2..].try_into().map_err(|_| DidKeyError::NotEd25519)?;
    VerifyingKey::from_bytes(&key).map_err(|_| DidKeyError::BadKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector_round_trips() {
        // The W3C did:key test vector for the all-zero-seed-derived key is not
        // ours to copy; instead: the prefix every Ed25519 did:key shares.
        let key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]).verifying_key();
        let did = encode(&key);
        assert!(did.starts_with("did:key:z6Mk"), "{did}");
        assert_eq!(decode(&did).unwrap(), key);
        assert_eq!(decode(&format!("{did}#{}", &did[8..])).unwrap(), key);
        assert_eq!(decode("did:web:acme.example"), Err(DidKeyError::NotDidKey));
        assert_eq!(decode("did:key:z0OIl"), Err(DidKeyError::NotBase58));
        assert_eq!(decode("did:key:z6Mk"), Err(DidKeyError::NotEd25519));
    }
}
