//! Splitting verification work over the machine's cores, for every
//! protocol crate (ANP logs, Concordia transcripts) and the signature
//! batches below them.
//!
//! The work is a few coarse, evenly sized phases over a slice (hash every
//! payload, check every event or message, verify every signature batch), so
//! `std::thread::scope` with one contiguous share per core is all it takes:
//! no work stealing to pay for, no global pool left running inside the host
//! or the console, and shares come back in order. Pure std; no IO. Small inputs (an
//! incremental poll of a few events) stay on the calling thread.

use std::num::NonZeroUsize;

/// Below this many items per thread a phase is not worth a thread
/// (spawning one costs tens of microseconds; an item costs a few).
pub const MIN_PER_THREAD: usize = 256;

/// How many threads to use for `items` items: every core (or at most
/// `limit`), but no more than gives each [`MIN_PER_THREAD`] items, and at
/// least one.
pub fn threads_for(items: usize, limit: Option<NonZeroUsize>) -> usize {
    let cores = limit
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    cores.min(items / MIN_PER_THREAD).max(1)
}

/// `f` over `threads` contiguous shares of `items` (given each share and the
/// index its first item has in `items`), results concatenated in order. The
/// first share runs on the calling thread. A panic in a share is carried to
/// the caller unchanged, after every share has ended.
pub fn map_shares<'a, T: Sync, R: Send>(
    items: &'a [T],
    threads: usize,
    f: impl Fn(&'a [T], usize) -> Vec<R> + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return f(items, 0);
    }
    let size = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let mut shares = items.chunks(size).enumerate();
        let first = shares.next();
        let handles: Vec<_> = shares
            .map(|(i, share)| scope.spawn(move || f(share, i * size)))
            .collect();
        let mut out = first.map_or_else(Vec::new, |(_, share)| f(share, 0));
        for handle in handles {
            match handle.join() {
                Ok(part) => out.extend(part),
                // A panic in a share is a bug; carry it to the caller as is.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_come_back_in_order_with_their_offsets() {
        let items: Vec<usize> = (0..1000).collect();
        for threads in 1..6 {
            let out = map_shares(&items, threads, |share, offset| {
                share
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        assert_eq!(offset + i, *item);
                        item * 2
                    })
                    .collect()
            });
            assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        }
        assert!(map_shares(&[] as &[u8], 4, |s, _| s.to_vec()).is_empty());
    }

    #[test]
    fn small_inputs_stay_on_one_thread() {
        let two = NonZeroUsize::new(2);
        assert_eq!(threads_for(10, two), 1);
        assert_eq!(threads_for(10_000, two), 2);
        assert_eq!(threads_for(10_000, NonZeroUsize::new(1)), 1);
    }
}
