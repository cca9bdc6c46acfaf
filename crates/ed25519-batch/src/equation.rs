//! The batch equation: one multiscalar multiplication for many signatures,
//! with one term per distinct key.
//!
//! For signatures `(Rᵢ, sᵢ)` by keys `Aᵢ` on messages `Mᵢ`, with
//! `hᵢ = SHA-512(Rᵢ ‖ Aᵢ ‖ Mᵢ)` and 128-bit coefficients `zᵢ`, it checks
//!
//! `[8]( −(Σ zᵢsᵢ)·B + Σ zᵢ·Rᵢ + Σ_A (Σ_{i: Aᵢ=A} zᵢhᵢ)·A ) = 0`.
//!
//! Summing each key's `zᵢhᵢ` first leaves `n + keys + 1` points instead of
//! `2n + 1` (ed25519-dalek's `verify_batch` puts every signature's key in
//! the sum). The `zᵢ` come from a SHA-512 transcript of the count and of
//! every `hᵢ` and `sᵢ` (each `hᵢ` binds `Rᵢ`, `Aᵢ` and `Mᵢ`), four per
//! SHA-512 block, so nobody who signs can choose signatures that cancel, and
//! no randomness is needed: the same batch always gets the same answer.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use sha2::{Digest, Sha512};

use crate::Signed;

/// Why a batch was refused before any arithmetic: each is a signature that
/// `verify_strict` refuses as well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The key is a point of small order (a "weak" key).
    WeakKey,
    /// `R` is not the encoding of a curve point.
    RNotAPoint,
    /// `R` is a point of small order.
    SmallOrderR,
    /// `s` is not below the group order.
    NonCanonicalS,
}

/// The `y` coordinates (sign bit cleared) of every encoding that decodes to
/// a point of small order: the eight torsion points have `y` = 1 (the
/// identity), −1, 0 (order 4) and ±y₈ (order 8), and of the encodings of
/// `y` ≥ p, which decode as `y − p`, only `p` and `p + 1` land on one. Either
/// sign bit decodes (to the point or its negation, also of small order).
const SMALL_ORDER_Y: [[u8; 32]; 7] = {
    let mut table = [[0u8; 32]; 7];
    table[0][0] = 1; // 1
    table[1] = [
        0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67,
        0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac,
        0x03, 0x7a,
    ]; // −y₈
       // table[2]: 0
    table[3] = [
        0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98,
        0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53,
        0xfc, 0x05,
    ]; // y₈
    let mut i = 0;
    while i < 32 {
        // p − 1, p, p + 1 (p = 2²⁵⁵ − 19: 0xed, then 0xff…, then 0x7f)
        table[4][i] = 0xff;
        table[5][i] = 0xff;
        table[6][i] = 0xff;
        i += 1;
    }
    table[4][0] = 0xec;
    table[5][0] = 0xed;
    table[6][0] = 0xee;
    table[4][31] = 0x7f;
    table[5][31] = 0x7f;
    table[6][31] = 0x7f;
    table
};

/// True when `bytes`, an encoding that decodes, is a point of small order:
/// what `decompress().is_small_order()` says (tested on every such encoding
/// and on random points), without the three doublings, which cost about 6%
/// of a batch.
pub(crate) fn small_order_encoding(bytes: &[u8; 32]) -> bool {
    let mut y = *bytes;
    y[31] &= 0x7f;
    SMALL_ORDER_Y.contains(&y)
}

/// `Ok(true)` when the equation holds for every signature in `batch`,
/// `Ok(false)` when it does not, `Err` naming the first input refused
/// before the arithmetic. An empty batch holds.
pub(crate) fn holds<T: Signed>(batch: &[T]) -> Result<bool, Refusal> {
    if batch.is_empty() {
        return Ok(true);
    }
    let mut transcript = Sha512::new();
    transcript.update(b"countersign ed25519 batch v1");
    transcript.update((batch.len() as u64).to_le_bytes());
    // (key slot, hᵢ, sᵢ) per signature; the points are B, every Rᵢ, then the keys.
    let mut terms: Vec<(usize, Scalar, Scalar)> = Vec::with_capacity(batch.len());
    let mut points: Vec<EdwardsPoint> = Vec::with_capacity(batch.len() + 4);
    points.push(ED25519_BASEPOINT_POINT);
    let mut keys: Vec<EdwardsPoint> = Vec::new();
    // Keys are found by their bytes: a batch by thousands of keys stays linear.
    let mut slots: HashMap<[u8; 32], usize> = HashMap::new();
    for item in batch {
        let (key, signature) = (item.key(), item.signature());
        let r_bytes = signature.r_bytes();
        let s_bytes = signature.s_bytes();
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(*s_bytes)) else {
            return Err(Refusal::NonCanonicalS);
        };
        let Some(r) = CompressedEdwardsY(*r_bytes).decompress() else {
            return Err(Refusal::RNotAPoint);
        };
        if small_order_encoding(r_bytes) {
            return Err(Refusal::SmallOrderR);
        }
        // A key is checked once, when the batch first meets it (three
        // doublings each time were a few per cent of a batch by two keys).
        let slot = match slots.entry(key.to_bytes()) {
            Entry::Occupied(slot) => *slot.get(),
            Entry::Vacant(slot) => {
                if key.is_weak() {
                    return Err(Refusal::WeakKey);
                }
                keys.push(key.to_edwards());
                *slot.insert(keys.len() - 1)
            }
        };
        let mut h = Sha512::new();
        h.update(r_bytes);
        h.update(key.as_bytes());
        item.message(&mut |piece| h.update(piece));
        let hram: [u8; 64] = h.finalize().into();
        transcript.update(hram);
        transcript.update(s_bytes);
        terms.push((slot, Scalar::from_bytes_mod_order_wide(&hram), s));
        points.push(r);
    }
    let seed: [u8; 64] = transcript.finalize().into();

    let mut scalars: Vec<Scalar> = Vec::with_capacity(points.len() + keys.len());
    scalars.push(Scalar::ZERO); // B's, once Σ zᵢsᵢ is known
    let mut per_key = vec![Scalar::ZERO; keys.len()];
    let mut basepoint = Scalar::ZERO;
    let mut block = [0u8; 64];
    for (i, (slot, h, s)) in terms.iter().enumerate() {
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
        per_key[*slot] += z * h;
        scalars.push(z);
    }
    scalars[0] = -basepoint;
    scalars.extend(per_key);
    points.extend(keys);
    Ok(EdwardsPoint::vartime_multiscalar_mul(scalars, points)
        .mul_by_cofactor()
        .is_identity())
}
