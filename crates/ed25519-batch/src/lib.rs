//! Many Ed25519 signatures by few keys, checked at once: the one batch
//! verifier below every protocol crate (ANP logs and Concordia transcripts
//! hold thousands of signatures by two or three keys).
//!
//! [`failing`] is what a verifier calls: it checks batches of up to
//! [`BATCH`] signatures with one cofactored batch equation each, in which
//! the signatures by one key share one term (see [`equation`](mod@equation)), on up
//! to `threads` threads. A batch that is refused for any reason is checked
//! again in parts of [`PART`], and a part that is refused one signature at
//! a time with ed25519-dalek's `verify_strict` ([`verify_strict`]), so the
//! answer names exactly the signatures that do not verify. [`all_valid`] is
//! the single equation, for a caller that only needs yes or no.
//!
//! What is accepted, precisely:
//! - every signature `verify_strict` accepts;
//! - nothing else, except a signature that satisfies the cofactored
//!   equation `[8]·sB = [8]·R + [8]·hA` without satisfying `sB = R + hA`
//!   exactly, that is `R` or the key `A` carrying a small-order (torsion)
//!   component. Only the holder of the private key can make one (it is as
//!   hard as forging otherwise), and such a signature is accepted when the
//!   batch holding it holds and refused when a bad signature beside it sends
//!   its part to `verify_strict`: the key holder can make their own
//!   signature's verdict depend on its neighbours, nobody else can. Weak
//!   (small-order) keys, small-order `R`, `R` that is not a point and
//!   non-canonical `s` are refused by the batch itself, so they always go
//!   to `verify_strict`, which refuses them too.
//! - The coefficients are derived from every input (no randomness), so a
//!   false acceptance has probability below 2⁻¹²⁵ per batch and cannot be
//!   aimed at.
//!
//! Pure: no IO, no global state; threads only through `countersign-parallel`.

#![warn(missing_docs)]

mod equation;

use ed25519_dalek::{Signature, VerifyingKey};

/// Most signatures per batch equation. Past ~190 points curve25519-dalek
/// switches to Pippenger's method, whose cost per point falls with size
/// (10,000 signatures on one thread: batches of 64 cost 93 ms, 256 86 ms,
/// 512 82 ms, 1,024 to 8,192 about 74 ms on a shared machine; on an idle
/// one, a whole 10,000-message Concordia transcript took 2–3% less CPU with
/// 4,096 than with 1,024). A refused batch costs about one more of its size
/// to find the bad signatures in (see [`PART`]).
pub const BATCH: usize = 4096;

/// A refused batch is checked again in parts of this many signatures, and a
/// refused part one signature at a time: for one bad signature, two batch
/// passes and one part's strict checks; when every signature is bad, hardly
/// more than checking each strictly.
pub const PART: usize = 64;

/// One signature to check: the key, the signature, and the message signed,
/// which need not be one contiguous slice.
pub trait Signed {
    /// The signer's key.
    fn key(&self) -> &VerifyingKey;
    /// The signature.
    fn signature(&self) -> &Signature;
    /// Hands the signed message to `sink` as the pieces it is the
    /// concatenation of (a protocol's signed string in parts, or a canonical
    /// text with one member cut out), so nothing is copied to check it.
    fn message(&self, sink: &mut dyn FnMut(&[u8]));
}

/// A signature over one contiguous message.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    /// The message signed.
    pub message: &'a [u8],
    /// The signature.
    pub signature: Signature,
    /// The signer's key.
    pub key: VerifyingKey,
}

impl Signed for Item<'_> {
    fn key(&self) -> &VerifyingKey {
        &self.key
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn message(&self, sink: &mut dyn FnMut(&[u8])) {
        sink(self.message)
    }
}

/// True when one batch equation holds for all of `items` (and for none
/// refused before it: a weak key, a small-order or undecodable `R`, a
/// non-canonical `s`). `false` says only "check them one by one", never which
/// one failed. An empty slice is valid. One equation, one thread, whatever
/// the size: [`failing`] is what splits work.
pub fn all_valid<T: Signed>(items: &[T]) -> bool {
    equation::holds(items).unwrap_or(false)
}

/// The one signature check: ed25519-dalek's `verify_strict` over the whole
/// message (small-order keys and `R`, non-canonical `s` refused).
pub fn verify_strict<T: Signed>(item: &T) -> bool {
    let mut message = Vec::new();
    item.message(&mut |piece| message.extend_from_slice(piece));
    item.key().verify_strict(&message, item.signature()).is_ok()
}

/// The positions in `items` of the signatures that do not verify, in
/// ascending order, using up to `threads` threads (see the crate's
/// documentation for what "verify" means exactly). The answer is the same
/// for any thread count.
pub fn failing<T: Signed + Sync>(items: &[T], threads: usize) -> Vec<usize> {
    parallel::map_shares(items, threads, |share, offset| {
        let mut failed = Vec::new();
        // Equal batches of at most BATCH, rather than a full one and a scrap.
        let size = share
            .len()
            .div_ceil(share.len().div_ceil(BATCH).max(1))
            .max(1);
        for (b, batch) in share.chunks(size).enumerate() {
            find_failing(batch, offset + b * size, &mut failed);
        }
        failed
    })
}

/// Pushes the positions (from `offset`) of the signatures in `batch` that fail.
fn find_failing<T: Signed>(batch: &[T], offset: usize, failed: &mut Vec<usize>) {
    if all_valid(batch) {
        return;
    }
    for (p, part) in batch.chunks(PART).enumerate() {
        // A batch of one part was just refused: no need to ask again.
        if part.len() == batch.len() || !all_valid(part) {
            let start = offset + p * PART;
            failed.extend(
                part.iter()
                    .enumerate()
                    .filter(|(_, item)| !verify_strict(*item))
                    .map(|(i, _)| start + i),
            );
        }
    }
}

#[cfg(test)]
mod tests;
