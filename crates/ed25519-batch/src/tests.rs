//! Each refusal alone, the answer `failing` gives, and the one documented
//! difference from `verify_strict`, shown with signatures a key holder makes.

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT as B;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use proptest::prelude::*;
use sha2::{Digest, Sha512};

use crate::equation::{holds, Refusal};
use crate::{all_valid, failing, verify_strict, Item, Signed, PART};

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// `n` messages signed by `keys` in turn.
fn signed(keys: &[SigningKey], n: usize) -> Vec<(Vec<u8>, Signature, VerifyingKey)> {
    (0..n)
        .map(|i| {
            let m = format!("message {i}").into_bytes();
            let k = &keys[i % keys.len()];
            (m.clone(), k.sign(&m), k.verifying_key())
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

fn challenge(r: &[u8; 32], key: &VerifyingKey, message: &[u8]) -> Scalar {
    let mut h = Sha512::new();
    h.update(r);
    h.update(key.as_bytes());
    h.update(message);
    Scalar::from_bytes_mod_order_wide(&h.finalize().into())
}

/// The single cofactored equation `[8](sB − R − hA) = 0`, computed directly
/// (with `s` reduced): what the batch would accept without its refusals.
fn cofactored_equation(item: &Item<'_>) -> bool {
    let r_bytes = item.signature.r_bytes();
    let Some(r) = CompressedEdwardsY(*r_bytes).decompress() else {
        return false;
    };
    let s = Scalar::from_bytes_mod_order(*item.signature.s_bytes());
    let h = challenge(r_bytes, &item.key, item.message);
    (s * B - r - h * item.key.to_edwards())
        .mul_by_cofactor()
        .is_identity()
}

/// A point of order 4 (y = 0): a torsion component.
fn torsion() -> EdwardsPoint {
    let t = CompressedEdwardsY([0u8; 32])
        .decompress()
        .expect("y = 0 is on the curve");
    assert!(t.is_small_order() && !t.is_identity());
    t
}

fn signature(r: &[u8; 32], s: &Scalar) -> Signature {
    let mut bytes = [0u8; 64];
    bytes[..32].copy_from_slice(r);
    bytes[32..].copy_from_slice(s.as_bytes());
    Signature::from_bytes(&bytes)
}

#[test]
fn an_empty_batch_is_valid_and_names_nothing() {
    let none: [Item<'_>; 0] = [];
    assert!(all_valid(&none));
    assert_eq!(holds(&none), Ok(true));
    for threads in [1, 2] {
        assert!(failing(&none, threads).is_empty());
    }
}

#[test]
fn valid_signatures_by_several_keys_pass_in_one_equation() {
    let keys: Vec<SigningKey> = (1..=3).map(key).collect();
    let s = signed(&keys, 300);
    assert!(all_valid(&items(&s)));
    assert!(all_valid(&items(&s)[..1]));
    // Every signature by its own key: one term per key, as many keys as signatures.
    let many: Vec<SigningKey> = (0..=255).map(key).collect();
    let s = signed(&many, 256);
    assert!(all_valid(&items(&s)));
}

#[test]
fn a_weak_key_is_refused_though_anyone_satisfies_its_equation() {
    // The identity as a key: R = sB "signs" any message under it.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let weak = VerifyingKey::from_bytes(&identity).expect("the identity decodes");
    assert!(weak.is_weak());
    let s = Scalar::from(12_345u64);
    let forged = Item {
        message: b"pay 1,000,000 USD",
        signature: signature((s * B).compress().as_bytes(), &s),
        key: weak,
    };
    assert!(cofactored_equation(&forged), "the bare equation holds");
    assert_eq!(holds(&[forged]), Err(Refusal::WeakKey));
    assert!(!all_valid(&[forged]));
    assert!(!verify_strict(&forged));
    assert_eq!(failing(&[forged], 1), [0]);
}

#[test]
fn a_small_order_r_is_refused_though_its_equation_holds() {
    // R = T of order 4 and s = h·a: sB − hA = 0, so [8](sB − R − hA) = 0.
    let k = key(7);
    let vk = k.verifying_key();
    let r = torsion().compress();
    let message = b"small order R";
    let s = challenge(r.as_bytes(), &vk, message) * k.to_scalar();
    let item = Item {
        message,
        signature: signature(r.as_bytes(), &s),
        key: vk,
    };
    assert!(cofactored_equation(&item), "the bare equation holds");
    assert_eq!(holds(&[item]), Err(Refusal::SmallOrderR));
    assert!(!verify_strict(&item));
    assert_eq!(failing(&[item], 1), [0]);
}

#[test]
fn a_non_canonical_s_is_refused_though_it_is_the_same_scalar() {
    let k = key(9);
    let message = b"non-canonical s";
    let good = k.sign(message);
    // s + l: the same scalar modulo the group order, written differently.
    let l = Scalar::ZERO - Scalar::ONE; // l − 1
    let mut bytes = good.to_bytes();
    let mut carry = 1u16; // s + (l − 1) + 1
    for (i, b) in l.as_bytes().iter().enumerate() {
        let sum = u16::from(bytes[32 + i]) + u16::from(*b) + carry;
        bytes[32 + i] = sum as u8;
        carry = sum >> 8;
    }
    assert_eq!(carry, 0);
    let item = Item {
        message,
        signature: Signature::from_bytes(&bytes),
        key: k.verifying_key(),
    };
    assert!(cofactored_equation(&item), "the bare equation holds");
    assert_eq!(holds(&[item]), Err(Refusal::NonCanonicalS));
    assert!(!verify_strict(&item));
    assert_eq!(failing(&[item], 1), [0]);
}

#[test]
fn an_r_that_is_no_point_is_refused() {
    let k = key(3);
    let good = k.sign(b"m");
    let mut bytes = good.to_bytes();
    // y = 2 is not on the curve (x² = 3 / (4d + 1) is not a square).
    bytes[..32].copy_from_slice(&{
        let mut y = [0u8; 32];
        y[0] = 2;
        y
    });
    assert!(CompressedEdwardsY(bytes[..32].try_into().unwrap())
        .decompress()
        .is_none());
    let item = Item {
        message: b"m",
        signature: Signature::from_bytes(&bytes),
        key: k.verifying_key(),
    };
    assert_eq!(holds(&[item]), Err(Refusal::RNotAPoint));
    assert_eq!(failing(&[item], 1), [0]);
}

#[test]
fn each_wrong_signature_among_many_is_named_on_any_thread_count() {
    let keys: Vec<SigningKey> = (1..=3).map(key).collect();
    let mut s = signed(&keys, 2_500);
    s[3].0 = b"another message".to_vec(); // signed something else
    s[700].2 = keys[(700 + 1) % 3].verifying_key(); // attributed to another key
    let mut bytes = s[701].1.to_bytes();
    bytes[0] ^= 1; // R flipped
    s[701].1 = Signature::from_bytes(&bytes);
    let mut bytes = s[2_499].1.to_bytes();
    bytes[40] ^= 1; // s flipped
    s[2_499].1 = Signature::from_bytes(&bytes);
    let mut bytes = s[1_024].1.to_bytes();
    bytes[63] |= 0xf0; // s beyond the group order
    s[1_024].1 = Signature::from_bytes(&bytes);
    let all = items(&s);
    assert!(!all_valid(&all));
    for threads in [1, 2, 3] {
        assert_eq!(
            failing(&all, threads),
            [3, 700, 701, 1_024, 2_499],
            "{threads} threads"
        );
    }
}

#[test]
fn a_signature_moved_between_keys_or_messages_is_named() {
    // Mixed keys: two keys interleaved, one signature swapped with its neighbour's.
    let keys = [key(1), key(2)];
    let mut s = signed(&keys, 40);
    let moved = s[10].1;
    s[10].1 = s[11].1;
    s[11].1 = moved;
    assert_eq!(failing(&items(&s), 1), [10, 11]);
}

#[test]
fn a_key_holder_can_make_a_signature_only_the_batch_accepts() {
    // R with a torsion component: R = rB + T, s = r + h·a. The cofactored
    // equation holds; sB − hA = rB ≠ R, so verify_strict refuses it.
    let k = key(5);
    let vk = k.verifying_key();
    let message = b"crafted by the key holder";
    let craft = |r: u64| {
        let r = Scalar::from(r);
        let big_r = (r * B + torsion()).compress();
        let s = r + challenge(big_r.as_bytes(), &vk, message) * k.to_scalar();
        Item {
            message,
            signature: signature(big_r.as_bytes(), &s),
            key: vk,
        }
    };
    // Each alone, and all together: the cofactor removes the torsion
    // whatever the coefficients (a cofactorless equation would keep z·T).
    let crafted: Vec<Item<'_>> = (1..=12).map(|r| craft(987_654_321 * r)).collect();
    for item in &crafted {
        assert!(!verify_strict(item));
        assert!(
            all_valid(std::slice::from_ref(item)),
            "the documented difference"
        );
    }
    assert!(all_valid(&crafted));
    assert!(failing(&crafted, 1).is_empty());
    let crafted = crafted[0];
    // Beside a bad signature in its part, it goes to verify_strict and is refused.
    let s = signed(std::slice::from_ref(&k), 3);
    let mut batch = items(&s);
    batch[1].message = b"tampered";
    batch.push(crafted);
    assert_eq!(failing(&batch, 1), [1, 3]);
    // In another part of the same batch, it stands.
    let many = signed(&[k], PART + 1);
    let mut batch = items(&many);
    batch[0].message = b"tampered";
    batch[PART] = crafted;
    assert_eq!(failing(&batch, 1), [0]);
}

/// What a property test may do to one signature.
#[derive(Debug, Clone)]
enum Damage {
    None,
    FlipBit(usize),
    OtherMessage,
    OtherKey,
    SPlusL,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        6 => Just(Damage::None),
        2 => (0..512usize).prop_map(Damage::FlipBit),
        1 => Just(Damage::OtherMessage),
        1 => Just(Damage::OtherKey),
        1 => Just(Damage::SPlusL),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn failing_names_exactly_what_verify_strict_refuses(
        damages in proptest::collection::vec(damage(), 0..150),
        threads in 1..4usize,
    ) {
        let keys = [key(11), key(12), key(13)];
        let mut s = signed(&keys, damages.len());
        for (i, d) in damages.iter().enumerate() {
            match d {
                Damage::None => {}
                Damage::FlipBit(bit) => {
                    let mut bytes = s[i].1.to_bytes();
                    bytes[bit / 8] ^= 1 << (bit % 8);
                    s[i].1 = Signature::from_bytes(&bytes);
                }
                Damage::OtherMessage => s[i].0.push(b'!'),
                Damage::OtherKey => s[i].2 = keys[(i + 1) % 3].verifying_key(),
                Damage::SPlusL => {
                    let mut bytes = s[i].1.to_bytes();
                    bytes[63] |= 0x80;
                    s[i].1 = Signature::from_bytes(&bytes);
                }
            }
        }
        let all = items(&s);
        let strict: Vec<usize> = (0..all.len()).filter(|&i| !verify_strict(&all[i])).collect();
        prop_assert_eq!(failing(&all, threads), strict.clone());
        prop_assert_eq!(all_valid(&all), strict.is_empty());
    }
}

#[test]
fn pieces_are_one_message() {
    struct Pieces<'a>(&'a [&'a [u8]], Signature, VerifyingKey);
    impl Signed for Pieces<'_> {
        fn key(&self) -> &VerifyingKey {
            &self.2
        }
        fn signature(&self) -> &Signature {
            &self.1
        }
        fn message(&self, sink: &mut dyn FnMut(&[u8])) {
            self.0.iter().for_each(|p| sink(p))
        }
    }
    let k = key(4);
    let sig = k.sign(b"ANP/0.1\noffer\nab");
    let parts: [&[u8]; 5] = [b"ANP/0.1", b"\n", b"offer", b"\n", b"ab"];
    let good = Pieces(&parts, sig, k.verifying_key());
    assert!(verify_strict(&good));
    assert_eq!(holds(std::slice::from_ref(&good)), Ok(true));
    let parts: [&[u8]; 5] = [b"ANP/0.1", b"\n", b"offer", b"\n", b"ac"];
    let bad = Pieces(&parts, sig, k.verifying_key());
    assert_eq!(failing(&[bad], 1), [0]);
}

/// Every torsion point, derived: `l·P` is the torsion component of `P`.
fn torsion_points() -> Vec<EdwardsPoint> {
    let l_minus_1 = Scalar::ZERO - Scalar::ONE;
    let eight = (2u8..=255)
        .filter_map(|seed| {
            let mut y = [0u8; 32];
            y[0] = seed;
            CompressedEdwardsY(y).decompress()
        })
        .map(|p| l_minus_1 * p + p)
        .find(|t| !(t + t + t + t).is_identity())
        .expect("a point with a component of order 8");
    (0..8u64).map(|k| Scalar::from(k) * eight).collect()
}

#[test]
fn small_order_encodings_are_exactly_what_is_small_order_says() {
    use crate::equation::small_order_encoding;
    let torsion = torsion_points();
    let mut seen = std::collections::BTreeSet::new();
    for t in &torsion {
        assert!(t.is_small_order());
        let bytes = t.compress().to_bytes();
        assert!(small_order_encoding(&bytes), "{bytes:02x?}");
        seen.insert(bytes);
    }
    assert_eq!(seen.len(), 8, "eight distinct torsion points");
    // Both sign bits, and y + p for the two y below 19 (0 and 1).
    let p_plus = |low: u8| {
        let mut y = [0xffu8; 32];
        y[0] = low;
        y[31] = 0x7f;
        y
    };
    let mut candidates: Vec<[u8; 32]> = seen.iter().copied().collect();
    candidates.extend([p_plus(0xed), p_plus(0xee)]);
    for mut bytes in candidates {
        for sign in [0, 0x80] {
            bytes[31] = (bytes[31] & 0x7f) | sign;
            let point = CompressedEdwardsY(bytes)
                .decompress()
                .expect("a torsion encoding decodes");
            assert!(point.is_small_order() && small_order_encoding(&bytes));
        }
    }
    // Any other point: signatures' R, and the same shifted by each torsion point.
    for seed in 0..=255u8 {
        let r = key(seed).sign(b"r").r_bytes().to_owned();
        let point = CompressedEdwardsY(r).decompress().expect("R decodes");
        for t in &torsion {
            let shifted = (point + t).compress().to_bytes();
            assert!(!small_order_encoding(&shifted));
        }
        assert!(!small_order_encoding(&r));
    }
    // Every encoding of y below 256, and the top ones, both signs.
    for low in 0..=255u8 {
        for top in [0x00, 0x7f] {
            let mut bytes = [if top == 0x7f { 0xff } else { 0 }; 32];
            bytes[0] = low;
            bytes[31] = top;
            for sign in [0, 0x80] {
                bytes[31] = top | sign;
                if let Some(point) = CompressedEdwardsY(bytes).decompress() {
                    assert_eq!(
                        point.is_small_order(),
                        small_order_encoding(&bytes),
                        "{bytes:02x?}"
                    );
                }
            }
        }
    }
}
