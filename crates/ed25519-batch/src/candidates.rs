//! The two batch equations this crate replaces, kept side by side only to
//! be measured in one criterion run (`benches/batch.rs`); the crate uses
//! neither. Adapted to [`Signed`] and otherwise as they were:
//!
//! - [`anp`]: `crates/anp/src/batch.rs`: cofactorless, keys merged by a
//!   linear scan, four 128-bit coefficients per SHA-512 block, small-order
//!   `R` not refused.
//! - [`concordia`]: `crates/concordia/src/batch.rs`: cofactored, keys merged
//!   through a `HashMap`, one SHA-512 per coefficient, small-order `R`
//!   refused.

use std::collections::HashMap;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha512};

use crate::Signed;

/// ANP's equation.
pub fn anp<T: Signed>(batch: &[T]) -> bool {
    let mut transcript = Sha512::new();
    transcript.update(b"ANP/0.1 batch verification");
    transcript.update((batch.len() as u64).to_le_bytes());
    let mut terms: Vec<(Scalar, Scalar)> = Vec::with_capacity(batch.len());
    let mut points: Vec<EdwardsPoint> = Vec::with_capacity(batch.len() + 4);
    points.push(ED25519_BASEPOINT_POINT);
    for p in batch {
        let (key, signature) = (p.key(), p.signature());
        if key.is_weak() {
            return false;
        }
        let r_bytes = signature.r_bytes();
        let s_bytes = signature.s_bytes();
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(*s_bytes)) else {
            return false;
        };
        let Some(r) = CompressedEdwardsY(*r_bytes).decompress() else {
            return false;
        };
        let mut h = Sha512::new();
        h.update(r_bytes);
        h.update(key.as_bytes());
        p.message(&mut |piece| h.update(piece));
        let hram: [u8; 64] = h.finalize().into();
        transcript.update(hram);
        transcript.update(s_bytes);
        terms.push((Scalar::from_bytes_mod_order_wide(&hram), s));
        points.push(r);
    }
    let seed: [u8; 64] = transcript.finalize().into();
    let mut keys: Vec<(&VerifyingKey, Scalar)> = Vec::new();
    let mut scalars: Vec<Scalar> = Vec::with_capacity(points.len() + 4);
    scalars.push(Scalar::ZERO);
    let mut basepoint = Scalar::ZERO;
    let mut block = [0u8; 64];
    for (i, (p, (h, s))) in batch.iter().zip(&terms).enumerate() {
        if i % 4 == 0 {
            let mut z = Sha512::new();
            z.update(seed);
            z.update((i as u64 / 4).to_le_bytes());
            block = z.finalize().into();
        }
        let at = (i % 4) * 16;
        let mut z_bytes = [0u8; 16];
        z_bytes.copy_from_slice(&block[at..at + 16]);
        let z = Scalar::from(u128::from_le_bytes(z_bytes));
        basepoint += z * s;
        scalars.push(z);
        let zh = z * h;
        match keys
            .iter_mut()
            .find(|(k, _)| k.as_bytes() == p.key().as_bytes())
        {
            Some((_, sum)) => *sum += zh,
            None => keys.push((p.key(), zh)),
        }
    }
    scalars[0] = -basepoint;
    for (key, sum) in keys {
        scalars.push(sum);
        points.push(key.to_edwards());
    }
    EdwardsPoint::vartime_multiscalar_mul(scalars, points).is_identity()
}

/// Concordia's equation.
pub fn concordia<T: Signed>(items: &[T]) -> bool {
    if items.is_empty() {
        return true;
    }
    let mut keys: Vec<(EdwardsPoint, Scalar)> = Vec::new();
    let mut slots: HashMap<[u8; 32], usize> = HashMap::new();
    let mut rs: Vec<EdwardsPoint> = Vec::with_capacity(items.len());
    let mut ks: Vec<(usize, Scalar, Scalar)> = Vec::with_capacity(items.len());
    let mut transcript = Sha512::new();
    transcript.update(b"countersign concordia batch v1");
    for item in items {
        let (key, signature) = (item.key(), item.signature());
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
        item.message(&mut |piece| h.update(piece));
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
    scalars.push(Scalar::ZERO);
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
