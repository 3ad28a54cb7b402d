//! XOR delta frames, the publisher and the subscriber.

mod common;

use compressed_bloom::delta::{self, apply, decode_xor, encode_delta, inspect_delta};
use compressed_bloom::math::log2_binomial;
use compressed_bloom::{
    decode, BloomFilter, DecodeError, DecodeLimits, FilterParams, Publisher, Subscriber, SyncError,
    UpdateKind,
};
use quickcheck::TestResult;

fn build(p: FilterParams, keys: impl IntoIterator<Item = u64>) -> BloomFilter {
    let mut f = BloomFilter::new(p).unwrap();
    for k in keys {
        f.insert(&k.to_le_bytes());
    }
    f
}

#[test]
fn apply_of_delta_gives_the_new_filter() {
    fn prop(m: u32, k: u8, seed: u64, old: Vec<u64>, new: Vec<u64>) -> TestResult {
        let p = FilterParams::new(u64::from(m % 200_000) + 1, u32::from(k % 8) + 1, seed);
        let a = build(p, old);
        let b = build(p, new);
        let frame = encode_delta(&a, &b).unwrap();
        let mut c = a.clone();
        apply(&mut c, &frame, &DecodeLimits::default()).unwrap();
        TestResult::from_bool(c == b)
    }
    common::qc(300, 0x5EED_0001).quickcheck(prop as fn(_, _, _, _, _) -> TestResult);
}

fn pair(m: u64, k: u32, n: u64, changed: u64) -> (BloomFilter, BloomFilter) {
    let p = FilterParams::new(m, k, 5);
    (build(p, 0..n), build(p, changed..n + changed))
}

#[test]
fn wrong_base_or_params_is_refused_and_base_untouched() {
    let (a, b) = pair(100_000, 3, 5000, 250);
    let frame = encode_delta(&a, &b).unwrap();
    let limits = DecodeLimits::default();
    // Applying twice: the second time the base is already the result.
    let mut c = a.clone();
    apply(&mut c, &frame, &limits).unwrap();
    let before = c.clone();
    assert!(matches!(
        apply(&mut c, &frame, &limits),
        Err(DecodeError::WrongBase { .. })
    ));
    assert_eq!(c, before);
    // Other parameters.
    let mut other = BloomFilter::new(FilterParams::new(100_000, 4, 5)).unwrap();
    assert!(matches!(
        apply(&mut other, &frame, &limits),
        Err(DecodeError::ParamsMismatch { .. })
    ));
    // encode_delta refuses mismatched parameters.
    assert!(encode_delta(&a, &other).is_err());
    // A delta is not a full frame, and a full frame is not a delta.
    assert!(matches!(
        decode(&frame),
        Err(DecodeError::WrongFrameType { .. })
    ));
    let full = compressed_bloom::encode(&a);
    let mut d = a.clone();
    assert!(matches!(
        apply(&mut d, &full, &limits),
        Err(DecodeError::WrongFrameType { .. })
    ));
    assert_eq!(d, a);
}

#[test]
fn every_truncation_and_bit_flip_of_a_delta_is_rejected() {
    let (a, b) = pair(20_000, 2, 1000, 50);
    let frame = encode_delta(&a, &b).unwrap();
    let limits = DecodeLimits::unlimited();
    for cut in 0..frame.len() {
        let mut base = a.clone();
        assert!(
            apply(&mut base, &frame[..cut], &limits).is_err(),
            "cut {cut}"
        );
        assert_eq!(base, a);
    }
    let mut f = frame.clone();
    for i in 0..f.len() * 8 {
        f[i / 8] ^= 1 << (i % 8);
        let mut base = a.clone();
        assert!(apply(&mut base, &f, &limits).is_err(), "flip {i}");
        assert_eq!(base, a, "base changed by a rejected delta (flip {i})");
        f[i / 8] ^= 1 << (i % 8);
    }
}

#[test]
fn digest_depends_on_bits_and_parameters_not_on_n() {
    let p = FilterParams::new(1000, 3, 1);
    let a = build(p, 0..10);
    let mut a2 = a.clone();
    a2.set_len(99);
    assert_eq!(delta::digest(&a), delta::digest(&a2));
    assert_ne!(delta::digest(&a), delta::digest(&build(p, 0..11)));
    let q = FilterParams::new(1000, 3, 2);
    assert_ne!(
        delta::digest(&BloomFilter::new(p).unwrap()),
        delta::digest(&BloomFilter::new(q).unwrap())
    );
}

/// Must-show: the coded XOR is within 0.2% of log2 C(m, d) bits plus 16
/// bytes (d = ones of the XOR) for n = 10,000, c = 5% and 1%.
#[test]
fn delta_size_near_entropy_bound() {
    let n = 10_000u64;
    for c in [0.05f64, 0.01] {
        for (bpk, k) in [(8u64, 5u32), (12, 3), (32, 2), (13, 2), (16, 3), (48, 2)] {
            let changed = (c * n as f64) as u64;
            let (a, b) = pair(bpk * n, k, n, changed);
            let frame = encode_delta(&a, &b).unwrap();
            let (h, xor) = decode_xor(&frame, &DecodeLimits::default()).unwrap();
            let coded = h.frame.payload_len as f64 - delta::DIGESTS_LEN as f64;
            let bound = log2_binomial(xor.m(), xor.count_ones()) / 8.0;
            assert!(
                coded <= bound * 1.002 + 16.0,
                "c={c} m/n={bpk} k={k}: {coded} bytes vs bound {bound:.1}"
            );
        }
    }
}

#[test]
fn publisher_sends_smaller_frame_and_periodic_full() {
    let p = FilterParams::new(320_000, 2, 9);
    let mut publ = Publisher::new(p, 4).unwrap();
    for i in 0..10_000u64 {
        publ.insert(&i.to_le_bytes());
    }
    let first = publ.publish();
    assert_eq!(first.kind, UpdateKind::Full);
    let mut kinds = Vec::new();
    for round in 0..8u64 {
        // Replace 2% of the keys.
        for i in 0..200u64 {
            let old = round * 200 + i;
            assert!(publ.remove(&old.to_le_bytes()));
            publ.insert(&(1_000_000 + old).to_le_bytes());
        }
        let u = publ.publish();
        kinds.push(u.kind);
        if u.kind == UpdateKind::Delta {
            assert!(u.frame.len() < compressed_bloom::encode(&publ.current()).len());
        }
    }
    use UpdateKind::{Delta, Full};
    assert_eq!(
        kinds,
        vec![Delta, Delta, Delta, Full, Delta, Delta, Delta, Full]
    );
    // With nothing to gain, a delta is not sent: replacing every key.
    let mut all = Publisher::new(FilterParams::new(2000, 6, 1), 100).unwrap();
    for i in 0..250u64 {
        all.insert(&i.to_le_bytes());
    }
    all.publish();
    for i in 0..250u64 {
        all.remove(&i.to_le_bytes());
        all.insert(&(i + 7777).to_le_bytes());
    }
    assert_eq!(all.publish().kind, Full);
}

#[test]
fn subscriber_detects_dropped_and_reordered_deltas_and_recovers() {
    let p = FilterParams::new(200_000, 2, 3);
    let mut publ = Publisher::new(p, 5).unwrap();
    for i in 0..5000u64 {
        publ.insert(&i.to_le_bytes());
    }
    let mut updates = vec![publ.publish()];
    let mut states = vec![publ.current()];
    for round in 0..5u64 {
        for i in 0..100u64 {
            publ.remove(&(round * 100 + i).to_le_bytes());
            publ.insert(&(900_000 + round * 100 + i).to_le_bytes());
        }
        updates.push(publ.publish());
        states.push(publ.current());
    }
    let kinds: Vec<UpdateKind> = updates.iter().map(|u| u.kind).collect();
    use UpdateKind::{Delta, Full};
    assert_eq!(kinds, vec![Full, Delta, Delta, Delta, Delta, Full]);

    // In order: every state reproduced.
    let mut sub = Subscriber::default();
    for (u, s) in updates.iter().zip(&states) {
        sub.receive(&u.frame).unwrap();
        assert_eq!(sub.filter().unwrap().as_words(), s.as_words());
    }

    // A delta before any full frame.
    let mut sub = Subscriber::default();
    assert!(matches!(
        sub.receive(&updates[1].frame),
        Err(SyncError::NeedFull { .. })
    ));

    // Dropped delta 2: delta 3 is refused, the state stays at 1.
    let mut sub = Subscriber::default();
    sub.receive(&updates[0].frame).unwrap();
    sub.receive(&updates[1].frame).unwrap();
    assert!(matches!(
        sub.receive(&updates[3].frame),
        Err(SyncError::NeedFull { .. })
    ));
    assert!(matches!(
        sub.receive(&updates[4].frame),
        Err(SyncError::NeedFull { .. })
    ));
    assert_eq!(sub.filter().unwrap().as_words(), states[1].as_words());
    // The next full frame recovers.
    sub.receive(&updates[5].frame).unwrap();
    assert_eq!(sub.filter().unwrap().as_words(), states[5].as_words());

    // Reordered: 2 before 1. 2 is refused; 1 applies; then 3 is refused
    // because 2 was consumed out of order, never silently applied.
    let mut sub = Subscriber::default();
    sub.receive(&updates[0].frame).unwrap();
    assert!(matches!(
        sub.receive(&updates[2].frame),
        Err(SyncError::NeedFull { .. })
    ));
    sub.receive(&updates[1].frame).unwrap();
    assert_eq!(sub.filter().unwrap().as_words(), states[1].as_words());
    assert!(matches!(
        sub.receive(&updates[3].frame),
        Err(SyncError::NeedFull { .. })
    ));

    // A corrupted frame is a decode error, not a state change.
    let mut bad = updates[2].frame.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let mut sub = Subscriber::default();
    sub.receive(&updates[0].frame).unwrap();
    sub.receive(&updates[1].frame).unwrap();
    assert!(matches!(sub.receive(&bad), Err(SyncError::Decode(_))));
    assert_eq!(sub.filter().unwrap().as_words(), states[1].as_words());
    let _ = inspect_delta(&updates[1].frame, &DecodeLimits::default()).unwrap();
}
