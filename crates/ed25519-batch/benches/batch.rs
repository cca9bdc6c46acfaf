//! The batch equation beside ed25519-dalek's own `verify_batch` (a term per
//! signature) and one `verify_strict`, in one run; then
//! `failing` on 10,000 signatures on one and two threads, all valid and
//! with one bad signature. Two shapes: 1,024 short messages (ANP's
//! authorship strings, 78 bytes) and 5,000 long ones (Concordia message
//! preimages, ~600 bytes), by two keys.
//!
//! `cargo bench -p countersign-ed25519-batch --bench batch`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ed25519_batch::{all_valid, failing, Item};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

/// Messages of `len` bytes, signed alternately by two keys.
fn signed(n: usize, len: usize) -> Vec<(Vec<u8>, Signature, VerifyingKey)> {
    let keys = [
        SigningKey::generate(&mut rand_core::OsRng),
        SigningKey::generate(&mut rand_core::OsRng),
    ];
    (0..n)
        .map(|i| {
            let mut m = format!("{i:08}").into_bytes();
            m.resize(len, b'x');
            let k = &keys[i % 2];
            let s = k.sign(&m);
            (m, s, k.verifying_key())
        })
        .collect()
}

fn items(signed: &[(Vec<u8>, Signature, VerifyingKey)]) -> Vec<Item<'_>> {
    signed
        .iter()
        .map(|(m, s, k)| Item {
            message: m,
            signature: *s,
            key: *k,
        })
        .collect()
}

/// Criterion's mean per iteration, kept for the summary.
fn measure(c: &mut Criterion, name: &str, mut f: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    let mut iters = 0u64;
    c.bench_function(name, |b| {
        b.iter_custom(|n| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            let elapsed = start.elapsed();
            total += elapsed;
            iters += n;
            elapsed
        })
    });
    total / u32::try_from(iters.max(1)).unwrap_or(u32::MAX)
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    let mut summary = Vec::new();
    for (n, len) in [(1_024, 78), (5_000, 600)] {
        let signed = signed(n, len);
        let items = items(&signed);
        let (ms, ss, ks): (Vec<&[u8]>, Vec<Signature>, Vec<VerifyingKey>) = (
            signed.iter().map(|s| s.0.as_slice()).collect(),
            signed.iter().map(|s| s.1).collect(),
            signed.iter().map(|s| s.2).collect(),
        );
        let one = measure(
            &mut c,
            &format!("verify_strict, one {len}-byte message"),
            || assert!(ks[0].verify_strict(black_box(ms[0]), &ss[0]).is_ok()),
        );
        let rows: Vec<(&str, Duration)> = vec![
            (
                "this crate (cofactored, HashMap, 4 z per SHA-512 block)",
                measure(&mut c, &format!("{n}x{len} ours"), || {
                    assert!(all_valid(black_box(&items)))
                }),
            ),
            (
                "ed25519-dalek verify_batch (a term per signature)",
                measure(&mut c, &format!("{n}x{len} dalek"), || {
                    assert!(ed25519_dalek::verify_batch(&ms, &ss, &ks).is_ok())
                }),
            ),
        ];
        summary.push(format!(
            "{n} signatures of {len}-byte messages by two keys (one verify_strict {:.1} us):",
            one.as_secs_f64() * 1e6
        ));
        for (what, d) in rows {
            summary.push(format!(
                "  {what}: {:.2} ms, {:.2} us per signature, {:.3} of a verify_strict",
                d.as_secs_f64() * 1e3,
                d.as_secs_f64() * 1e6 / n as f64,
                d.as_secs_f64() / n as f64 / one.as_secs_f64()
            ));
        }
    }
    let signed = signed(10_000, 600);
    let good = items(&signed);
    let mut bad = good.clone();
    bad[7_777].message = b"another message";
    summary.push("failing(), 10,000 signatures of 600-byte messages:".into());
    for threads in [1, 2] {
        let d = measure(
            &mut c,
            &format!("failing 10000 valid, {threads} threads"),
            || assert!(failing(black_box(&good), threads).is_empty()),
        );
        let e = measure(
            &mut c,
            &format!("failing 10000, one bad, {threads} threads"),
            || assert_eq!(failing(black_box(&bad), threads), [7_777]),
        );
        summary.push(format!(
            "  {threads} thread(s): all valid {:.1} ms; one bad {:.1} ms",
            d.as_secs_f64() * 1e3,
            e.as_secs_f64() * 1e3
        ));
    }
    println!("\n{}", summary.join("\n"));
}
