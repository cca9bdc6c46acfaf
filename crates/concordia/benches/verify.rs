//! Transcript verification: per-message cost beside one bare Ed25519
//! verification, in one run; and incremental verification from a pin,
//! whose cost depends on the new messages only, not the prefix.
//!
//! `cargo bench -p concordia --bench verify`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ed25519_dalek::{Signer, SigningKey};

use std::num::NonZeroUsize;

use concordia::approval_receipt::{edges, keys};
use concordia::document::{verify_document_bytes, VerifyOptions};
use concordia::testing::synthetic_transcript;
use concordia::transcript::{verify_since, verify_transcript, Head};

fn bench(c: &mut Criterion) {
    let (messages, ring, keys_json) = synthetic_transcript(10_000);
    let mut g = c.benchmark_group("concordia");
    g.sample_size(10);

    // One bare Ed25519 verification of a typical message preimage.
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let preimage =
        edges::canonical(&edges::without_top_level(&messages[500], "signature")).unwrap();
    let sig = key.sign(preimage.as_bytes());
    let vk = key.verifying_key();
    g.throughput(Throughput::Elements(1));
    g.bench_function("ed25519_verify_strict_one_message", |b| {
        b.iter(|| keys::verify_parsed(&vk, preimage.as_bytes(), &sig))
    });

    g.throughput(Throughput::Elements(messages.len() as u64));
    g.bench_function("verify_transcript_10000_messages", |b| {
        b.iter(|| assert!(verify_transcript(&messages, &ring).is_valid()))
    });
    g.bench_function("verify_transcript_10000_messages_one_thread", |b| {
        // Chunks under the parallel threshold, folded from pins: one core.
        b.iter(|| {
            let mut head = Head::genesis();
            for chunk in messages.chunks(500) {
                let r = verify_since(&head, chunk, &ring);
                assert!(r.is_valid());
                head = r.head;
            }
        })
    });

    // The document as countersign-verify reads it: the file's bytes, each
    // message read in place.
    let bytes = serde_json::json!({"messages": messages, "keys": keys_json}).to_string();
    for (name, threads) in [
        ("verify_document_bytes_10000_messages", None),
        (
            "verify_document_bytes_10000_messages_one_thread",
            NonZeroUsize::new(1),
        ),
    ] {
        let options = VerifyOptions { pin: None, threads };
        g.bench_function(name, |b| {
            b.iter(|| {
                let v = verify_document_bytes(bytes.as_bytes(), &options).expect("it reads");
                assert!(v.report.is_valid() && v.read_in_place);
            })
        });
    }

    // Incremental: the last 10 messages after a pin at 9,990, and the first
    // 10 after genesis; the same work.
    let pin = verify_transcript(&messages[..9_990], &ring).head;
    g.throughput(Throughput::Elements(10));
    g.bench_function("verify_since_pin_9990_ten_new", |b| {
        b.iter_batched(
            || pin.clone(),
            |p| assert!(verify_since(&p, &messages[9_990..], &ring).is_valid()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("verify_since_genesis_ten_new", |b| {
        b.iter(|| assert!(verify_since(&Head::genesis(), &messages[..10], &ring).is_valid()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
