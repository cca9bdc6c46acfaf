//! Checking many authorship signatures at once (SPEC §4).
//!
//! A log is signed by two or three keys, thousands of times. Batch
//! verification checks one random linear combination of the signature
//! equations, `Σ zᵢ(Rᵢ + hᵢA − sᵢB) = 0`, with one multiscalar
//! multiplication; terms for the same key merge into one (`(Σ zᵢhᵢ)·A`), so
//! the multiplication has about one point per signature instead of two.
//! The coefficients `zᵢ` are 128-bit values derived from a SHA-512
//! transcript of every signature and message in the batch, as
//! `ed25519-dalek`'s own batch verifier derives them, so nobody can choose
//! signatures that cancel. Batches are checked on every core.
//!
//! A batch that fails is checked again in parts, and a part that fails one
//! signature at a time with `verify_strict`, so a report names exactly the
//! signatures that do not verify. Small-order
//! (weak) keys are refused outright. As with `ed25519-dalek`'s batch
//! verification, a signature that passes the batch equation but not
//! `verify_strict` (a non-canonical `R`, or one with a small-order
//! component) can only be made by the key's own holder: it is no forgery.

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha512};

use crate::signed;

/// Most signatures per multiscalar multiplication. Past ~190 points
/// curve25519-dalek switches to Pippenger's method, whose cost per point
/// falls with size (measured on 10,000 signatures, one thread: batches of 64
/// cost 93 ms, 256 86 ms, 512 82 ms, 1,024 to 8,192 about 74 ms, the noise
/// of a shared machine).
const BATCH: usize = 1024;

/// A failing batch is checked again in parts of this size, and a failing
/// part one signature at a time with `verify_strict`: for one bad signature,
/// two batch passes and one part's strict checks; for a log whose
/// signatures are all bad, hardly more than checking each strictly.
const PART: usize = 64;

/// One signature to check, over the authorship string of `kind` and the
/// declared `payload_hash`.
pub(crate) struct Pending<'a> {
    /// Reported back when the signature does not verify.
    pub index: usize,
    /// The signer's key.
    pub key: &'a VerifyingKey,
    /// The signature.
    pub signature: Signature,
    /// The event kind, as signed.
    pub kind: &'static str,
    /// The declared payload hash, as signed.
    pub payload_hash: &'a str,
}

/// The `index` of every pending signature that does not verify, in order,
/// using up to `threads` threads.
pub(crate) fn failing(pending: &[Pending<'_>], threads: usize) -> Vec<usize> {
    parallel::map_shares(pending, threads, |share, _| {
        let mut failed = Vec::new();
        // Equal batches of at most BATCH, rather than a full one and a scrap.
        let size = share
            .len()
            .div_ceil(share.len().div_ceil(BATCH).max(1))
            .max(1);
        for batch in share.chunks(size) {
            find_failing(batch, &mut failed);
        }
        failed
    })
}

/// Finds the signatures in `batch` that fail.
fn find_failing(batch: &[Pending<'_>], failed: &mut Vec<usize>) {
    if batch_verifies(batch) {
        return;
    }
    for part in batch.chunks(PART) {
        if part.len() == batch.len() || !batch_verifies(part) {
            failed.extend(
                part.iter()
                    .filter(|p| !verifies_strictly(p))
                    .map(|p| p.index),
            );
        }
    }
}

fn verifies_strictly(p: &Pending<'_>) -> bool {
    let message = signed::authorship_string(p.kind, p.payload_hash);
    !p.key.is_weak()
        && p.key
            .verify_strict(message.as_bytes(), &p.signature)
            .is_ok()
}

/// True when the batch equation holds for every signature in `batch`.
fn batch_verifies(batch: &[Pending<'_>]) -> bool {
    let mut transcript = Sha512::new();
    transcript.update(b"ANP/0.1 batch verification");
    transcript.update((batch.len() as u64).to_le_bytes());
    let mut terms: Vec<(Scalar, Scalar)> = Vec::with_capacity(batch.len());
    let mut points: Vec<EdwardsPoint> = Vec::with_capacity(batch.len() + 4);
    points.push(ED25519_BASEPOINT_POINT);
    for p in batch {
        if p.key.is_weak() {
            return false;
        }
        let r_bytes = p.signature.r_bytes();
        let s_bytes = p.signature.s_bytes();
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(*s_bytes)) else {
            return false;
        };
        let Some(r) = CompressedEdwardsY(*r_bytes).decompress() else {
            return false;
        };
        let mut h = Sha512::new();
        h.update(r_bytes);
        h.update(p.key.as_bytes());
        for part in signed::authorship_parts(p.kind, p.payload_hash) {
            h.update(part.as_bytes());
        }
        let hram: [u8; 64] = h.finalize().into();
        transcript.update(hram);
        transcript.update(s_bytes);
        terms.push((Scalar::from_bytes_mod_order_wide(&hram), s));
        points.push(r);
    }
    let seed: [u8; 64] = transcript.finalize().into();

    // One merged coefficient per distinct key.
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
            .find(|(k, _)| k.as_bytes() == p.key.as_bytes())
        {
            Some((_, sum)) => *sum += zh,
            None => keys.push((p.key, zh)),
        }
    }
    scalars[0] = -basepoint;
    for (key, sum) in keys {
        scalars.push(sum);
        points.push(key.to_edwards());
    }
    EdwardsPoint::vartime_multiscalar_mul(scalars, points).is_identity()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{self, SigningKey};

    fn signed_many(keys: &[SigningKey], n: usize) -> Vec<(usize, Signature, String)> {
        (0..n)
            .map(|i| {
                let hash = format!("{i:064x}");
                let key = i % keys.len();
                let message = signed::authorship_string("message", &hash);
                let sig = ed25519_dalek::Signer::sign(&keys[key], message.as_bytes());
                (key, sig, hash)
            })
            .collect()
    }

    fn pending<'a>(
        verifying: &'a [VerifyingKey],
        signed: &'a [(usize, Signature, String)],
    ) -> Vec<Pending<'a>> {
        signed
            .iter()
            .enumerate()
            .map(|(index, (key, signature, hash))| Pending {
                index,
                key: &verifying[*key],
                signature: *signature,
                kind: "message",
                payload_hash: hash,
            })
            .collect()
    }

    #[test]
    fn good_batches_pass_and_each_bad_signature_is_named() {
        let signing: Vec<SigningKey> = (0..3).map(|_| keys::generate_signing_key()).collect();
        let verifying: Vec<VerifyingKey> = signing.iter().map(|k| k.verifying_key()).collect();
        let mut signed = signed_many(&signing, 1100);
        for threads in [1, 2] {
            assert!(failing(&pending(&verifying, &signed), threads).is_empty());
        }
        // A signature of another message, one by another key, a flipped bit
        // in R, one in s, and s pushed past the group order.
        signed[3].2 = format!("{:064x}", 99_999);
        signed[700].0 = (signed[700].0 + 1) % 3;
        let mut bytes = signed[701].1.to_bytes();
        bytes[0] ^= 1;
        signed[701].1 = Signature::from_bytes(&bytes);
        let mut bytes = signed[1099].1.to_bytes();
        bytes[40] ^= 1;
        signed[1099].1 = Signature::from_bytes(&bytes);
        let mut bytes = signed[512].1.to_bytes();
        bytes[63] |= 0xf0;
        signed[512].1 = Signature::from_bytes(&bytes);
        for threads in [1, 2, 3] {
            assert_eq!(
                failing(&pending(&verifying, &signed), threads),
                [3, 512, 700, 701, 1099],
                "{threads} threads"
            );
        }
    }

    #[test]
    fn the_verdict_of_each_signature_is_verify_stricts() {
        let signing: Vec<SigningKey> = (0..2).map(|_| keys::generate_signing_key()).collect();
        let verifying: Vec<VerifyingKey> = signing.iter().map(|k| k.verifying_key()).collect();
        let mut signed = signed_many(&signing, 40);
        for i in (0..40).step_by(7) {
            let mut bytes = signed[i].1.to_bytes();
            bytes[i % 64] ^= 0x10;
            signed[i].1 = Signature::from_bytes(&bytes);
        }
        let all = pending(&verifying, &signed);
        let strict: Vec<usize> = all
            .iter()
            .filter(|p| !verifies_strictly(p))
            .map(|p| p.index)
            .collect();
        assert_eq!(strict.len(), 6);
        assert_eq!(failing(&all, 1), strict);
    }

    #[test]
    fn a_small_order_key_is_refused() {
        // The identity point: a weak key that "verifies" anything batched naively.
        // The identity point's encoding: y = 1.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let weak = VerifyingKey::from_bytes(&identity).expect("the identity decodes");
        assert!(weak.is_weak());
        let signature = Signature::from_bytes(&{
            let mut b = [0u8; 64];
            b[..32].copy_from_slice(&identity);
            b
        });
        let hash = "ab".repeat(32);
        let batch: Vec<Pending<'_>> = (0..5)
            .map(|index| Pending {
                index,
                key: &weak,
                signature,
                kind: "offer",
                payload_hash: &hash,
            })
            .collect();
        assert_eq!(failing(&batch, 1), [0, 1, 2, 3, 4]);
    }
}
