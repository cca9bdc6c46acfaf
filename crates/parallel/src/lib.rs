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
    let most = items / MIN_PER_THREAD;
    if most < 2 {
        return 1;
    }
    let cores = limit.map_or_else(cores, NonZeroUsize::get);
    cores.min(most)
}

/// This machine's cores, asked once: `available_parallelism` reads cgroup
/// files on Linux, which cost more than verifying a short log.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
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

/// `f` over contiguous pieces of `items` taken by `threads` threads as they
/// come free (given each piece and the index its first item has in
/// `items`), results concatenated in order. A piece is a share of what is
/// left, `1 / (2 · threads)` of it but at least `min_piece` items: the first
/// pieces are large (what a batch verifier wants), the last ones small, so a
/// core that is held up (by another process, or by a slow start) leaves the
/// rest to the others instead of the whole phase waiting for it. The calling
/// thread takes pieces too. A panic in a piece is carried to the caller
/// unchanged, after every thread has ended.
pub fn map_guided<'a, T: Sync, R: Send>(
    items: &'a [T],
    threads: usize,
    min_piece: usize,
    f: impl Fn(&'a [T], usize) -> Vec<R> + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return f(items, 0);
    }
    let next = AtomicUsize::new(0);
    let min_piece = min_piece.max(1);
    // Takes the next piece: its start and end.
    let take = || -> Option<(usize, usize)> {
        let mut start = next.load(Ordering::Relaxed);
        loop {
            let left = items.len().checked_sub(start).filter(|&n| n > 0)?;
            let size = (left / (2 * threads)).max(min_piece).min(left);
            match next.compare_exchange_weak(
                start,
                start + size,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some((start, start + size)),
                Err(now) => start = now,
            }
        }
    };
    let (f, take) = (&f, &take);
    let work = move || {
        let mut done: Vec<(usize, Vec<R>)> = Vec::new();
        while let Some((start, end)) = take() {
            done.push((start, f(&items[start..end], start)));
        }
        done
    };
    let mut pieces: Vec<(usize, Vec<R>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut pieces = work();
        for handle in handles {
            match handle.join() {
                Ok(part) => pieces.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        pieces
    });
    pieces.sort_unstable_by_key(|(start, _)| *start);
    pieces.into_iter().flat_map(|(_, r)| r).collect()
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
    fn guided_pieces_cover_every_item_once_in_order() {
        let items: Vec<usize> = (0..10_007).collect();
        for threads in 1..5 {
            for min_piece in [1, 64, 500, 20_000] {
                let out = map_guided(&items, threads, min_piece, |piece, offset| {
                    assert!(piece.len() >= min_piece.min(items.len() - offset));
                    vec![(offset, piece.to_vec())]
                });
                let starts: Vec<usize> = out.iter().map(|(o, _)| *o).collect();
                assert!(starts.windows(2).all(|w| w[0] < w[1]), "in order");
                let all: Vec<usize> = out.into_iter().flat_map(|(_, p)| p).collect();
                assert_eq!(all, items, "{threads} threads, pieces of {min_piece}+");
            }
        }
        assert!(map_guided(&[] as &[u8], 4, 8, |s, _| s.to_vec()).is_empty());
    }

    #[test]
    fn a_held_up_thread_leaves_the_rest_to_the_others() {
        // The thread that takes the first piece sleeps; the other takes
        // every later piece, so pieces shrink rather than wait.
        let items: Vec<usize> = (0..4_000).collect();
        let out = map_guided(&items, 2, 10, |piece, offset| {
            if offset == 0 {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            vec![piece.len()]
        });
        assert_eq!(out.iter().sum::<usize>(), 4_000);
        assert!(out[0] < 4_000 / 2, "the first piece is a quarter: {out:?}");
        assert!(out.len() > 4, "later pieces shrink: {out:?}");
    }

    #[test]
    fn small_inputs_stay_on_one_thread() {
        let two = NonZeroUsize::new(2);
        assert_eq!(threads_for(10, two), 1);
        assert_eq!(threads_for(10_000, two), 2);
        assert_eq!(threads_for(10_000, NonZeroUsize::new(1)), 1);
    }
}
