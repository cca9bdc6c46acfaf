//! The performance figures of issue 2, printed from one run:
//! whole-log verification of a 100,000-event signed log per event against one
//! bare Ed25519 `verify_strict` (target ratio ≤ 1.3), incremental verification
//! after a pinned prefix (independent of the prefix), and canonicalizing,
//! hashing and diffing 200-line-item offers.
//!
//! Run: `cargo bench -p anp --bench verify` (about two minutes on an idle
//! 2-core machine; figures go to crates/anp/BENCHMARKS.md).

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anp::canonical::canonical_hash;
use anp::diff::diff_offers;
use anp::keys::{self, SigningKey};
use anp::payload::Offer;
use anp::{
    signed, verify_log, verify_log_from_pin, Actor, ChainHead, Event, EventDraft, EventKind,
    KeyRing,
};
use criterion::Criterion;
use serde_json::{json, Value};

const SESSION: &str = "5f1c6f2e-9d1a-4c8b-b7e3-2a61c0de9a44";
const BIG: usize = 100_000;
const SMALL: usize = 100;
const NEW: usize = 10;

/// A realistic offer: `items` line items with SKUs, prices and conditions.
fn offer(items: usize, round: usize) -> Value {
    let line_items: Vec<Value> = (0..items)
        .map(|i| {
            json!({
                "sku": format!("SKU-{i:04}"),
                "description": format!("Enterprise seat bundle {i}, annual, premier support"),
                "quantity": 10 + (i * 7) % 500,
                "unit": "seat/year",
                "unit_price": 1140.5 - (round % 50) as f64 + i as f64,
                "currency": "USD"
            })
        })
        .collect();
    json!({
        "currency": "USD",
        "term_months": 36,
        "expires_at": "2026-08-01T00:00:00Z",
        "line_items": line_items,
        "conditions": ["Net 60 payment", "Price hold through the term"],
        "notes": format!("Round {round}: includes premier support and onboarding.")
    })
}

/// The 200-line offer a counter-offer would answer it with: one line added at
/// the top, one removed, every tenth repriced, two swapped, a condition changed.
fn shifted_offer(items: usize) -> Value {
    let mut value = offer(items, 1);
    let lines = value["line_items"].as_array_mut().expect("line items");
    lines.pop();
    for (i, line) in lines.iter_mut().enumerate() {
        if i % 10 == 0 {
            line["unit_price"] = json!(999.25 + i as f64);
        }
    }
    lines.swap(3, 150);
    lines.insert(
        0,
        json!({"sku": "NEW-TOP", "description": "Analytics add-on", "quantity": 50,
               "unit": "seat/year", "unit_price": 120, "currency": "USD"}),
    );
    value["conditions"] = json!(["Net 30 payment", "Price hold through the term"]);
    value
}

/// A message of a few hundred characters.
fn message(n: usize) -> Value {
    json!({
        "subject": format!("Re: renewal, round {n}"),
        "body": "Thanks for the update. We can move on term length if the unit price reflects \
                 the volume commitment; please confirm the support tier and payment terms. "
            .repeat(1 + n % 4)
    })
}

/// The `n`th event's kind and payload: one in five an offer or counter-offer
/// (3 to 12 line items), the rest messages.
fn payload_for(n: usize) -> (EventKind, Value) {
    match n % 10 {
        0 => (EventKind::Offer, offer(3 + n % 10, n)),
        5 => (EventKind::CounterOffer, offer(3 + (n / 10) % 10, n)),
        _ => (EventKind::Message, message(n)),
    }
}

/// A signed log of `len` events, vendor and buyer alternating, each event
/// signed by its actor's key.
fn build_log(len: usize, vendor: &SigningKey, buyer: &SigningKey) -> Vec<Event> {
    let mut events = Vec::with_capacity(len);
    let mut head = ChainHead::genesis();
    for n in 0..len {
        let (kind, payload) = payload_for(n);
        let (actor, key) = if n % 2 == 0 {
            (Actor::VendorAgent, vendor)
        } else {
            (Actor::Buyer, buyer)
        };
        let event = EventDraft {
            session_id: SESSION,
            prev: &head,
            actor,
            kind,
            payload,
            at: format!("2026-07-11T09:{:02}:{:02}.000Z", (n / 60) % 60, n % 60),
        }
        .seal_signed(key);
        head = ChainHead {
            seq: event.seq,
            event_hash: event.event_hash.clone(),
        };
        events.push(event);
    }
    events
}

/// Mean time per iteration of what criterion measured through `iter_custom`.
#[derive(Default)]
struct Measured {
    iters: u64,
    total: Duration,
}

impl Measured {
    fn per_iter(&self) -> Duration {
        self.total / u32::try_from(self.iters.max(1)).unwrap_or(u32::MAX)
    }
}

/// Runs `f` under criterion and keeps the totals criterion timed.
fn measure(c: &mut Criterion, name: &str, mut f: impl FnMut()) -> Duration {
    let measured = RefCell::new(Measured::default());
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            let elapsed = start.elapsed();
            let mut m = measured.borrow_mut();
            m.iters += iters;
            m.total += elapsed;
            elapsed
        })
    });
    let per_iter = measured.borrow().per_iter();
    per_iter
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
        .measurement_time(Duration::from_secs(60));
    let whole_log = measure(&mut group_config, "verify_log (100,000 events)", || {
        black_box(verify_log(SESSION, black_box(whole), &ring));
    });

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

    let per_event = nanos(whole_log) / BIG as f64;
    let bare_ns = nanos(bare);
    println!();
    println!("== ANP verification figures ==");
    println!(
        "whole log, 100,000 events:       {:>10.3} ms  ({per_event:.0} ns per event)",
        nanos(whole_log) / 1e6
    );
    println!("bare ed25519 verify_strict:      {bare_ns:>10.0} ns");
    println!(
        "per event / bare verify ratio:   {:>10.2}  (target <= 1.30)",
        per_event / bare_ns
    );
    println!(
        "10 new events after 100,000 pin: {:>10.1} us",
        nanos(after_big) / 1e3
    );
    println!(
        "10 new events after 100 pin:     {:>10.1} us",
        nanos(after_small) / 1e3
    );
    println!(
        "canonicalize+hash 200-item offer:{:>10.1} us",
        nanos(hash_offer) / 1e3
    );
    println!(
        "diff two 200-item offers:        {:>10.1} us",
        nanos(diff_200) / 1e3
    );
}
