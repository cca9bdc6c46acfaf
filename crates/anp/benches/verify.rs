//! The verification figures, printed from one run: the whole-document path
//! `anp verify` runs (`anp::verify_document_bytes_with`, a 10,000-event
//! signed log of about 10 MB, from its bytes) per event on one core and on
//! every core, beside one bare Ed25519 `verify_strict`; verification of a
//! 100,000-event parsed log; incremental verification after a pinned prefix
//! (independent of the prefix); and canonicalizing, hashing and diffing
//! 200-line-item offers.
//!
//! Run: `cargo bench -p anp --bench verify` (a few minutes on an idle 2-core
//! machine; figures go to crates/anp/BENCHMARKS.md).

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anp::canonical::canonical_hash;
use anp::diff::diff_offers;
use anp::keys;
use anp::payload::Offer;
use anp::{
    signed, verify_document_bytes_with, verify_log, verify_log_from_pin, ChainHead, KeyRing,
    VerifyOptions,
};
use criterion::Criterion;
use std::num::NonZeroUsize;

#[path = "support/synthetic.rs"]
mod synthetic;
use synthetic::{build_log, document, offer, shifted_offer, SESSION};
const BIG: usize = 100_000;
const SMALL: usize = 100;
const NEW: usize = 10;
/// Events in the document `anp verify` is timed on against other verifiers.
const DOCUMENT: usize = 10_000;

/// Mean time per iteration of what criterion measured through `iter_custom`.
#[derive(Default)]
struct Measured {
    iters: u64,
    total: Duration,
    cpu: Duration,
}

impl Measured {
    fn per_iter(&self) -> Duration {
        self.total / u32::try_from(self.iters.max(1)).unwrap_or(u32::MAX)
    }
    fn cpu_per_iter(&self) -> Duration {
        self.cpu / u32::try_from(self.iters.max(1)).unwrap_or(u32::MAX)
    }
}

/// CPU time this process has used, all threads (Linux: `/proc/self/stat`,
/// in clock ticks of 10 ms; criterion's runs last seconds). Zero elsewhere.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the command name (which may hold spaces) end with ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Runs `f` under criterion and keeps the totals criterion timed (wall
/// time).
fn measure(c: &mut Criterion, name: &str, f: impl FnMut()) -> Duration {
    measure_both(c, name, f).0
}

/// [`measure`], also returning the CPU time the process spent per
/// iteration (all threads), which other load on the machine does not inflate
/// as it does wall time.
fn measure_both(c: &mut Criterion, name: &str, mut f: impl FnMut()) -> (Duration, Duration) {
    let measured = RefCell::new(Measured::default());
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let cpu = cpu_time();
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            let elapsed = start.elapsed();
            let mut m = measured.borrow_mut();
            m.iters += iters;
            m.total += elapsed;
            m.cpu += cpu_time().saturating_sub(cpu);
            elapsed
        })
    });
    let m = measured.borrow();
    (m.per_iter(), m.cpu_per_iter())
}

fn nanos(d: Duration) -> f64 {
    d.as_secs_f64() * 1e9
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let vendor = keys::generate_signing_key();
    let buyer = keys::generate_signing_key();
    let mut ring = KeyRing::new();
    ring.add(vendor.verifying_key());
    ring.add(buyer.verifying_key());

    let started = Instant::now();
    let big = build_log(BIG + NEW, &vendor, &buyer);
    let small = build_log(SMALL + NEW, &vendor, &buyer);
    eprintln!(
        "generated {} signed events in {:.1} s",
        big.len() + small.len(),
        started.elapsed().as_secs_f64()
    );
    let whole = &big[..BIG];
    assert!(
        verify_log(SESSION, whole, &ring).ok,
        "the generated log verifies"
    );

    // One bare strict verification of one authorship string.
    let sample = &whole[0];
    let authorship = signed::authorship_string(sample.kind.as_str(), &sample.payload_hash);
    let signature = keys::parse_signature(sample.signature.as_deref().unwrap_or_default())
        .expect("the generated signature parses");
    let vk = vendor.verifying_key();
    let bare = measure(
        &mut c,
        "ed25519 verify_strict (one authorship string)",
        || {
            black_box(vk.verify_strict(black_box(authorship.as_bytes()), &signature)).ok();
        },
    );

    let mut group_config = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(30));

    // The whole-document path, from the bytes of a 10,000-event document.
    let bytes = serde_json::to_vec(&document(whole[..DOCUMENT].to_vec(), &vendor, &buyer))
        .expect("the document serializes");
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let on = |threads: usize| VerifyOptions {
        pin: None,
        threads: NonZeroUsize::new(threads),
    };
    for threads in [1, cores] {
        let verdict = verify_document_bytes_with(&bytes, &on(threads)).expect("it parses");
        assert!(
            verdict.report.ok && verdict.read_in_place,
            "the document verifies in place"
        );
    }
    let (one_core, one_core_cpu) = measure_both(
        &mut group_config,
        "verify_document_bytes (10,000 events, 1 thread)",
        || {
            black_box(verify_document_bytes_with(black_box(&bytes), &on(1)).ok());
        },
    );
    let (all_cores, all_cores_cpu) = measure_both(
        &mut group_config,
        &format!("verify_document_bytes (10,000 events, {cores} threads)"),
        || {
            black_box(verify_document_bytes_with(black_box(&bytes), &on(cores)).ok());
        },
    );
    let whole_log = measure(
        &mut group_config,
        "verify_log (100,000 parsed events)",
        || {
            black_box(verify_log(SESSION, black_box(whole), &ring));
        },
    );

    let pin_big = ChainHead {
        seq: BIG as u64,
        event_hash: big[BIG - 1].event_hash.clone(),
    };
    let pin_small = ChainHead {
        seq: SMALL as u64,
        event_hash: small[SMALL - 1].event_hash.clone(),
    };
    assert!(verify_log_from_pin(SESSION, &pin_big, &big, &ring).ok);
    assert!(verify_log_from_pin(SESSION, &pin_small, &small, &ring).ok);
    let after_big = measure(&mut c, "verify_log_from_pin (10 after 100,000)", || {
        black_box(verify_log_from_pin(
            SESSION,
            &pin_big,
            black_box(&big),
            &ring,
        ));
    });
    let after_small = measure(&mut c, "verify_log_from_pin (10 after 100)", || {
        black_box(verify_log_from_pin(
            SESSION,
            &pin_small,
            black_box(&small),
            &ring,
        ));
    });

    let offer_a = offer(200, 1);
    let hash_offer = measure(&mut c, "canonicalize + hash (200-line-item offer)", || {
        black_box(canonical_hash(black_box(&offer_a)));
    });

    let offer_b = shifted_offer(200);
    let (old_offer, new_offer) = (
        Offer::parse(&offer_a).expect("the 200-line offer is valid"),
        Offer::parse(&offer_b).expect("the shifted offer is valid"),
    );
    let diff_200 = measure(&mut c, "diff_offers (two 200-line-item offers)", || {
        black_box(diff_offers(black_box(&old_offer), black_box(&new_offer)));
    });

    c.final_summary();

    let bare_ns = nanos(bare);
    let per = |d: Duration, events: usize| nanos(d) / events as f64;
    println!();
    println!("== ANP verification figures ({cores} cores) ==");
    println!("bare ed25519 verify_strict:              {bare_ns:>9.0} ns");
    for (label, d, cpu) in [
        ("1 thread", one_core, one_core_cpu),
        (&format!("{cores} threads")[..], all_cores, all_cores_cpu),
    ] {
        println!(
            "document, 10,000 events ({} MB), {label:<9}{:>8.2} ms  {:>6.0} ns/event  {:.2} x bare  (CPU {:.1} ms)",
            bytes.len() / 1_000_000,
            nanos(d) / 1e6,
            per(d, DOCUMENT),
            per(d, DOCUMENT) / bare_ns,
            nanos(cpu) / 1e6
        );
    }
    println!(
        "all cores / one core (wall):             {:>9.2}",
        nanos(all_cores) / nanos(one_core)
    );
    println!(
        "verify_log, 100,000 parsed events:       {:>9.1} ms  {:>6.0} ns/event  {:.2} x bare",
        nanos(whole_log) / 1e6,
        per(whole_log, BIG),
        per(whole_log, BIG) / bare_ns
    );
    println!(
        "10 new events after 100,000 pin:         {:>9.1} us",
        nanos(after_big) / 1e3
    );
    println!(
        "10 new events after 100 pin:             {:>9.1} us",
        nanos(after_small) / 1e3
    );
    println!(
        "canonicalize+hash 200-item offer:        {:>9.1} us",
        nanos(hash_offer) / 1e3
    );
    println!(
        "diff two 200-item offers:                {:>9.1} us",
        nanos(diff_200) / 1e3
    );
}
