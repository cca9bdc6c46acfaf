//! One Ed25519 batch equation for many signatures by few keys.
//!
//! A transcript has thousands of signatures and two or three signers.
//! `ed25519_dalek::verify_batch` puts every signature's key into the
//! multiscalar sum (2n + 1 points); here the terms of each distinct key are
//! added first (n + keys + 1 points), which is what makes a long
//! transcript's signatures cheaper than as many single verifications.
//!
//! The equation is the usual cofactored one,
//! `[8]( −(Σ zᵢsᵢ)·B + Σ zᵢ·Rᵢ + Σ_A (Σ_{i: Aᵢ=A} zᵢkᵢ)·A ) = 0`, with
//! `kᵢ = SHA-512(Rᵢ ‖ Aᵢ ‖ Mᵢ)` and 128-bit `zᵢ` derived from all the inputs
//! (as dalek derives its own), so no randomness is needed. It only
//! ever accepts a whole batch: any refusal sends the caller to
//! `verify_strict`, one by one, which names the failing signatures. As with
//! any cofactored batch, a signer could craft a signature with a torsion
//! component that the batch accepts and a cofactorless verifier would not;
//! only the holder of the key can make one.

use std::collections::HashMap;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha512};

/// True only when every `(message, signature, key)` verifies; `false` means
/// "check them one by one", never which one failed.
pub fn all_valid(items: &[(&[u8], Signature, VerifyingKey)]) -> bool {
    if items.is_empty() {
        return true;
    }
    let mut keys: Vec<(EdwardsPoint, Scalar)> = Vec::new();
    let mut slots: HashMap<[u8; 32], usize> = HashMap::new();
    let mut rs: Vec<EdwardsPoint> = Vec::with_capacity(items.len());
    let mut ks: Vec<(usize, Scalar, Scalar)> = Vec::with_capacity(items.len());
    let mut transcript = Sha512::new();
    transcript.update(b"countersign concordia batch v1");
    for (message, signature, key) in items {
        if key.is_weak() {
            return false;
        }
        let Some(r) = CompressedEdwardsY(*signature.r_bytes()).decompress() else {
            return false;
        };
        if r.is_small_order() {
            return false;
        }
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(*signature.s_bytes()))
        else {
            return false;
        };
        let slot = *slots.entry(key.to_bytes()).or_insert_with(|| {
            keys.push((key.to_edwards(), Scalar::ZERO));
            keys.len() - 1
        });
        let mut h = Sha512::new();
        h.update(signature.r_bytes());
        h.update(key.as_bytes());
        h.update(message);
        let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
        transcript.update(k.as_bytes());
        transcript.update(signature.s_bytes());
        transcript.update(signature.r_bytes());
        rs.push(r);
        ks.push((slot, k, s));
    }
    let seed: [u8; 64] = transcript.finalize().into();
    let mut base = Scalar::ZERO;
    let mut scalars: Vec<Scalar> = Vec::with_capacity(items.len() + keys.len() + 1);
    scalars.push(Scalar::ZERO); // the basepoint's, filled in below
    for (i, (slot, k, s)) in ks.iter().enumerate() {
        let mut h = Sha512::new();
        h.update(seed);
        h.update((i as u64).to_le_bytes());
        let digest: [u8; 64] = h.finalize().into();
        let mut wide = [0u8; 16];
        wide.copy_from_slice(&digest[..16]);
        let z = Scalar::from(u128::from_le_bytes(wide));
        base += z * s;
        keys[*slot].1 += z * k;
        scalars.push(z);
    }
    scalars[0] = -base;
    scalars.extend(keys.iter().map(|(_, c)| *c));
    let points = std::iter::once(ED25519_BASEPOINT_POINT)
        .chain(rs)
        .chain(keys.iter().map(|(a, _)| *a));
    EdwardsPoint::vartime_multiscalar_mul(scalars, points)
        .mul_by_cofactor()
        .is_identity()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    #[test]
    fn accepts_a_valid_batch_and_refuses_any_bad_member() {
        let a = SigningKey::from_bytes(&[3u8; 32]);
        let b = SigningKey::from_bytes(&[4u8; 32]);
        let messages: Vec<Vec<u8>> = (0..20)
            .map(|i| format!("message {i}").into_bytes())
            .collect();
        let items: Vec<(&[u8], Signature, VerifyingKey)> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let k = if i % 3 == 0 { &a } else { &b };
                (m.as_slice(), k.sign(m), k.verifying_key())
            })
            .collect();
        assert!(all_valid(&items));
        assert!(all_valid(&items[..1]));
        assert!(all_valid(&[]));
        // A signature moved to another message, another key, a changed message.
        let mut x = items.clone();
        x[5].1 = x[6].1;
        assert!(!all_valid(&x));
        let mut x = items.clone();
        x[7].2 = a.verifying_key();
        assert!(!all_valid(&x));
        let mut x = items.clone();
        x[19].0 = b"changed";
        assert!(!all_valid(&x));
        // A non-canonical s (s + l) is refused even though it is the same scalar mod l.
        let mut x = items.clone();
        let mut bytes = x[2].1.to_bytes();
        bytes[63] |= 0xf0;
        x[2].1 = Signature::from_bytes(&bytes);
        assert!(!all_valid(&x));
    }
}
