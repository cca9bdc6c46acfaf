//! The key sealed with a passphrase, where no secret store answers: the
//! 32-byte seed encrypted with XChaCha20-Poly1305 under a key derived from
//! the person's passphrase by Argon2id (memory-hard, so a copied file is
//! not opened by guessing fast). The public key travels beside it in the
//! clear and is bound to the ciphertext as associated data, so a file whose
//! public key was swapped does not open.

use argon2::{Algorithm, Argon2, Params, Version};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use ed25519_dalek::SigningKey;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

/// The format tag of a sealed key file.
pub(crate) const FORMAT: &str = "countersign-sealed-key/1";

/// The shortest passphrase accepted: shorter ones fall to guessing even
/// through Argon2id.
pub(crate) const MIN_PASSPHRASE_CHARS: usize = 10;

/// Argon2id's cost: 19 MiB, two passes, one lane (OWASP's floor for
/// Argon2id in 2024).
const MEMORY_KIB: u32 = 19 * 1024;
const ITERATIONS: u32 = 2;
const PARALLELISM: u32 = 1;

/// The sealed key file, as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SealedKey {
    /// [`FORMAT`].
    pub format: String,
    /// The public key (base64url): known while the key is locked.
    pub public_key: String,
    /// How the sealing key was derived.
    pub kdf: Kdf,
    /// `xchacha20poly1305`.
    pub aead: String,
    /// 24 random bytes (base64url).
    pub nonce: String,
    /// The seed and the tag (base64url).
    pub ciphertext: String,
}

/// Argon2id's parameters, kept with the file so a later build can raise them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Kdf {
    /// `argon2id`.
    pub name: String,
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes.
    pub iterations: u32,
    /// Lanes.
    pub parallelism: u32,
    /// 16 random bytes (base64url).
    pub salt: String,
}

/// Why a sealed key did not open.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum SealError {
    /// Wrong passphrase (or a file altered after sealing).
    #[error("the passphrase does not open the key")]
    WrongPassphrase,
    /// The passphrase is too short to seal with.
    #[error("a passphrase needs at least {MIN_PASSPHRASE_CHARS} characters")]
    TooShort,
    /// The file is not a sealed key this build reads.
    #[error("the sealed key file is damaged: {0}")]
    Damaged(String),
}

fn derive(passphrase: &str, kdf: &Kdf) -> Result<Zeroizing<[u8; 32]>, SealError> {
    if kdf.name != "argon2id" {
        return Err(SealError::Damaged(format!("unknown KDF {:?}", kdf.name)));
    }
    let salt = jcs::b64url::decode(&kdf.salt)
        .map_err(|_| SealError::Damaged("the salt is not base64url".into()))?;
    let params = Params::new(kdf.memory_kib, kdf.iterations, kdf.parallelism, Some(32))
        .map_err(|e| SealError::Damaged(format!("Argon2 parameters: {e}")))?;
    let mut out = Zeroizing::new([0u8; 32]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase.as_bytes(), &salt, out.as_mut())
        .map_err(|e| SealError::Damaged(format!("Argon2: {e}")))?;
    Ok(out)
}

/// Seals `key` under `passphrase` with a fresh salt and nonce.
pub(crate) fn seal(key: &SigningKey, passphrase: &str) -> Result<SealedKey, SealError> {
    if passphrase.chars().count() < MIN_PASSPHRASE_CHARS {
        return Err(SealError::TooShort);
    }
    let mut salt = [0u8; 16];
    let mut nonce = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut salt);
    rand::thread_rng().fill_bytes(&mut nonce);
    let kdf = Kdf {
        name: "argon2id".to_owned(),
        memory_kib: MEMORY_KIB,
        iterations: ITERATIONS,
        parallelism: PARALLELISM,
        salt: jcs::b64url::encode(&salt),
    };
    let sealing = derive(passphrase, &kdf)?;
    let public_key = crate::edge::keyfile::public_key_text(&key.verifying_key());
    let seed = Zeroizing::new(key.to_bytes());
    let cipher = XChaCha20Poly1305::new(sealing.as_ref().into());
    let ciphertext = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: seed.as_ref(),
                aad: public_key.as_bytes(),
            },
        )
        .map_err(|_| SealError::Damaged("encryption failed".into()))?;
    Ok(SealedKey {
        format: FORMAT.to_owned(),
        public_key,
        kdf,
        aead: "xchacha20poly1305".to_owned(),
        nonce: jcs::b64url::encode(&nonce),
        ciphertext: jcs::b64url::encode(&ciphertext),
    })
}

/// Opens a sealed key with `passphrase`; the key it holds must be the
/// public key the file names.
pub(crate) fn open(sealed: &SealedKey, passphrase: &str) -> Result<SigningKey, SealError> {
    if sealed.format != FORMAT || sealed.aead != "xchacha20poly1305" {
        return Err(SealError::Damaged(format!(
            "format {:?} with {:?} is not one this console reads",
            sealed.format, sealed.aead
        )));
    }
    let nonce = jcs::b64url::decode(&sealed.nonce)
        .ok()
        .filter(|n| n.len() == 24)
        .ok_or_else(|| SealError::Damaged("the nonce is not 24 base64url bytes".into()))?;
    let ciphertext = jcs::b64url::decode(&sealed.ciphertext)
        .map_err(|_| SealError::Damaged("the ciphertext is not base64url".into()))?;
    let sealing = derive(passphrase, &sealed.kdf)?;
    let cipher = XChaCha20Poly1305::new(sealing.as_ref().into());
    let seed = Zeroizing::new(
        cipher
            .decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &ciphertext,
                    aad: sealed.public_key.as_bytes(),
                },
            )
            .map_err(|_| SealError::WrongPassphrase)?,
    );
    let seed: [u8; 32] = seed
        .as_slice()
        .try_into()
        .map_err(|_| SealError::Damaged("the sealed seed is not 32 bytes".into()))?;
    let key = SigningKey::from_bytes(&seed);
    if crate::edge::keyfile::public_key_text(&key.verifying_key()) != sealed.public_key {
        return Err(SealError::Damaged(
            "the sealed key is not the public key the file names".into(),
        ));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_key_opens_with_its_passphrase_only() {
        let key = crate::edge::keyfile::generate();
        let sealed = seal(&key, "correct horse battery").unwrap();
        assert_eq!(
            open(&sealed, "correct horse battery").unwrap().to_bytes(),
            key.to_bytes()
        );
        assert_eq!(
            open(&sealed, "wrong horse battery").unwrap_err(),
            SealError::WrongPassphrase
        );
    }

    #[test]
    fn the_seed_is_not_in_the_sealed_file() {
        let key = crate::edge::keyfile::generate();
        let text = serde_json::to_string(&seal(&key, "correct horse battery").unwrap()).unwrap();
        assert!(!text.contains(&jcs::b64url::encode(&key.to_bytes())));
    }

    #[test]
    fn a_swapped_public_key_does_not_open() {
        let key = crate::edge::keyfile::generate();
        let mut sealed = seal(&key, "correct horse battery").unwrap();
        sealed.public_key = crate::edge::keyfile::public_key_text(
            &crate::edge::keyfile::generate().verifying_key(),
        );
        assert_eq!(
            open(&sealed, "correct horse battery").unwrap_err(),
            SealError::WrongPassphrase
        );
    }

    #[test]
    fn a_short_passphrase_is_refused() {
        let key = crate::edge::keyfile::generate();
        assert_eq!(seal(&key, "short").unwrap_err(), SealError::TooShort);
    }
}
