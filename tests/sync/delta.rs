//! XOR delta frames, the publisher and the subscriber.

use crate::common;

use compressed_bloom::coder;
use compressed_bloom::delta::{
    self, apply, decode_xor, encode_delta, encode_delta_conditional, encode_delta_plain,
    inspect_delta, summarize,
};
use compressed_bloom::format::varint;
use compressed_bloom::math::log2_binomial;
use compressed_bloom::PublisherOptions;
use compressed_bloom::{
    decode, BloomFilter, DecodeError, DecodeLimits, FilterError, FilterParams, Publisher,
    Subscriber, SyncError, UpdateKind,
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
        // Both delta types, each applied to its own copy of the base.
        let ok = ENCODERS.iter().all(|(_, enc)| {
            let frame = enc(&a, &b).unwrap();
            let mut c = a.clone();
            apply(&mut c, &frame, &DecodeLimits::default()).unwrap();
            c == b
        });
        TestResult::from_bool(ok)
    }
    common::qc(300, 0x5EED_0001).quickcheck(prop as fn(_, _, _, _, _) -> TestResult);
}

type Encoder = fn(&BloomFilter, &BloomFilter) -> Result<Vec<u8>, FilterError>;

/// The conditional (type 3) and plain (type 2) delta encoders.
const ENCODERS: [(&str, Encoder); 2] = [
    ("conditional", encode_delta_conditional),
    ("plain", encode_delta_plain),
];

fn pair(m: u64, k: u32, n: u64, changed: u64) -> (BloomFilter, BloomFilter) {
    let p = FilterParams::new(m, k, 5);
    (build(p, 0..n), build(p, changed..n + changed))
}

#[test]
fn wrong_base_or_params_is_refused_and_base_untouched() {
    for (_, enc) in ENCODERS {
        wrong_base_or_params(enc);
    }
}

fn wrong_base_or_params(enc: Encoder) {
    let (a, b) = pair(100_000, 3, 5000, 250);
    let frame = enc(&a, &b).unwrap();
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
    // The encoders refuse mismatched parameters.
    assert!(matches!(
        enc(&a, &other),
        Err(FilterError::ParamsMismatch { .. })
    ));
    // decode_xor needs the base the delta names.
    assert!(matches!(
        decode_xor(&b, &frame, &limits),
        Err(DecodeError::WrongBase { .. })
    ));
    let (_, xor) = decode_xor(&a, &frame, &limits).unwrap();
    let expected: Vec<u64> = a
        .as_words()
        .iter()
        .zip(b.as_words())
        .map(|(x, y)| x ^ y)
        .collect();
    assert_eq!(xor.as_words(), expected.as_slice());
    // A delta is not a full frame, and a full frame is not a delta.
    assert!(matches!(
        decode(&frame, &DecodeLimits::default()),
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
    for (_, enc) in ENCODERS {
        let (a, b) = pair(20_000, 2, 1000, 50);
        truncations_and_flips(&a, &enc(&a, &b).unwrap());
    }
}

fn truncations_and_flips(a: &BloomFilter, frame: &[u8]) {
    let a = a.clone();
    let limits = DecodeLimits::unlimited();
    for cut in 0..frame.len() {
        let mut base = a.clone();
        let r = apply(&mut base, &frame[..cut], &limits);
        assert!(
            matches!(r, Err(DecodeError::Truncated { .. })),
            "cut {cut}: {r:?}"
        );
        assert_eq!(base, a);
    }
    let mut f = frame.to_vec();
    for i in 0..f.len() * 8 {
        f[i / 8] ^= 1 << (i % 8);
        let mut base = a.clone();
        let r = apply(&mut base, &f, &limits);
        assert!(
            matches!(&r, Err(e) if common::caught_before_the_payload(e)),
            "flip {i}: {r:?}"
        );
        assert_eq!(base, a, "base changed by a rejected delta (flip {i})");
        f[i / 8] ^= 1 << (i % 8);
    }
}

/// The digest, computed in one shot from FORMAT.md's definition (scheme id,
/// varints seed, m, k, then the ⌈m/8⌉ packed bytes), matches the crate's
/// streaming one, including arrays longer than its 4 KiB chunk whose last
/// word has padding.
#[test]
fn digest_matches_its_definition() {
    for m in [1u64, 63, 64, 1000, 14_000, 32_768, 32_769, 40_000, 100_001] {
        let p = FilterParams::new(m, 3, m ^ 0xABCD);
        let f = build(p, 0..m / 10);
        let mut input = vec![1u8];
        for v in [p.seed, m, 3] {
            varint::put(&mut input, v);
        }
        input.extend_from_slice(&f.to_bytes());
        assert_eq!(
            delta::digest(&f),
            xxhash_rust::xxh3::xxh3_64(&input),
            "m = {m}"
        );
    }
}

/// A delta with bytes after it is refused with their count, by both types.
#[test]
fn trailing_bytes_after_a_delta_are_refused() {
    let (a, b) = pair(20_000, 2, 1000, 50);
    for (_, enc) in ENCODERS {
        let mut frame = enc(&a, &b).unwrap();
        let len = frame.len() as u64;
        frame.extend_from_slice(&[0, 0, 0]);
        let mut base = a.clone();
        let err = apply(&mut base, &frame, &DecodeLimits::default()).unwrap_err();
        assert_eq!(
            err,
            DecodeError::TrailingBytes {
                offset: len,
                count: 3
            }
        );
        assert_eq!(base, a);
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
/// bytes (d = ones of the XOR) for n = 10,000, c = 5% and 1%. The plain
/// delta is held to that; the conditional delta (two parts, plus its two
/// varints) to the same bound, and also to 0.2% + 16 bytes of its own bound
/// Σ log2 C(m_i, d_i), which is never larger (Vandermonde:
/// C(m0, d0)·C(m1, d1) ≤ C(m, d)). `encode_delta` picks the smaller type;
/// the conditional one must win wherever the base is sparse (fill below
/// 40%), where its bound is well under the plain one.
#[test]
fn delta_size_near_entropy_bound() {
    let n = 10_000u64;
    let limits = DecodeLimits::default();
    for c in [0.05f64, 0.01] {
        for (bpk, k) in [(8u64, 5u32), (12, 3), (32, 2), (13, 2), (16, 3), (48, 2)] {
            let changed = (c * n as f64) as u64;
            let (a, b) = pair(bpk * n, k, n, changed);
            let plain = encode_delta_plain(&a, &b).unwrap();
            let cond = encode_delta_conditional(&a, &b).unwrap();
            let best = encode_delta(&a, &b).unwrap();
            assert_eq!(best.len(), cond.len().min(plain.len()));
            let ps = summarize(&plain, &limits).unwrap();
            let cs = summarize(&cond, &limits).unwrap();
            assert_eq!(ps.changed_bits(), cs.changed_bits());
            let plain_bound = log2_binomial(a.m(), ps.changed_bits()) / 8.0;
            let plain_coded = ps.header.frame.payload_len as f64 - delta::DIGESTS_LEN as f64;
            assert!(
                plain_coded <= plain_bound * 1.002 + 16.0,
                "plain c={c} m/n={bpk} k={k}: {plain_coded} bytes vs bound {plain_bound:.1}"
            );
            // The conditional payload after the digests: two layout varints
            // and two coded parts, each within the coder's documented bound.
            let cond_coded = cs.header.frame.payload_len as f64 - delta::DIGESTS_LEN as f64;
            let cond_bound = cs.entropy_bits() / 8.0;
            assert!(cond_bound <= plain_bound + 1e-9);
            let layout = cs.header.parts.unwrap();
            let varints =
                (varint::len(layout.base_ones) + varint::len(layout.zeros_len as u64)) as f64;
            // The summary's totals are the sums over its parts.
            let parts_entropy: f64 = cs.parts.iter().map(|p| log2_binomial(p.bits, p.ones)).sum();
            assert!((cs.entropy_bits() - parts_entropy).abs() < 1e-6);
            assert_eq!(cs.coded_bytes() as f64 + varints, cond_coded);
            assert_eq!(ps.coded_bytes() as f64, plain_coded);
            let coder_bound: f64 = cs
                .parts
                .iter()
                .map(|p| coder::payload_bits_bound(p.bits, p.entropy_bits()) / 8.0)
                .sum();
            assert!(
                cond_coded <= coder_bound + varints,
                "conditional c={c} m/n={bpk} k={k}: {cond_coded} bytes vs bound {coder_bound:.1} + {varints}"
            );
            // What encode_delta sends is within 0.2% and 16 bytes of the
            // plain delta's bound.
            let best_h = inspect_delta(&best, &limits).unwrap();
            let best_coded = best_h.frame.payload_len as f64 - delta::DIGESTS_LEN as f64;
            assert!(
                best_coded <= plain_bound * 1.002 + 16.0,
                "encode_delta c={c} m/n={bpk} k={k}: {best_coded} bytes vs bound {plain_bound:.1}"
            );
            let fill = a.count_ones() as f64 / a.m() as f64;
            println!(
                "c={c} m/n={bpk} k={k} fill {fill:.3}: plain {} B (bound {:.1}), conditional {} B (bound {:.1})",
                plain.len(),
                plain_bound,
                cond.len(),
                cond_bound
            );
            if fill < 0.4 {
                assert!(
                    cond.len() < plain.len(),
                    "c={c} m/n={bpk} k={k}: conditional {} bytes, plain {}",
                    cond.len(),
                    plain.len()
                );
            }
        }
    }
}

/// Bases with no 1s or no 0s leave one part empty (no bits, no bytes).
#[test]
fn conditional_delta_with_an_empty_part() {
    let limits = DecodeLimits::default();
    let p = FilterParams::new(64, 64, 3);
    let empty = BloomFilter::new(p).unwrap();
    let full = build(p, 0..200); // 200 keys x 64 positions fill all 64 bits
    assert_eq!(full.count_ones(), 64);
    for (a, b) in [
        (&empty, &full),
        (&full, &empty),
        (&empty, &empty),
        (&full, &full),
    ] {
        let frame = encode_delta_conditional(a, b).unwrap();
        let s = summarize(&frame, &limits).unwrap();
        let layout = s.header.parts.unwrap();
        assert_eq!(layout.base_ones, a.count_ones());
        let mut c = a.clone();
        apply(&mut c, &frame, &limits).unwrap();
        assert_eq!(&c, b);
    }
}

/// Re-frames a conditional delta with its payload edited by `edit` (the CRC
/// recomputed), so the checks behind the CRC are reached.
fn reframed(frame: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let h = inspect_delta(frame, &DecodeLimits::default())
        .unwrap()
        .frame;
    let mut payload = frame[h.header_len..frame.len() - 4].to_vec();
    edit(&mut payload);
    let mut out = frame[..6].to_vec();
    for v in [
        h.params.seed,
        h.params.m,
        u64::from(h.params.k),
        h.n,
        payload.len() as u64,
    ] {
        compressed_bloom::format::varint::put(&mut out, v);
    }
    out.extend_from_slice(&payload);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The part layout is checked against m, the payload and the base, each
/// failure with its own field name.
#[test]
fn conditional_layout_errors_are_typed() {
    let (a, b) = pair(20_000, 2, 1000, 50);
    let frame = encode_delta_conditional(&a, &b).unwrap();
    let limits = DecodeLimits::default();
    let field_of = |f: &[u8]| {
        let mut base = a.clone();
        match apply(&mut base, f, &limits) {
            Err(DecodeError::InvalidField { field, .. }) => {
                assert_eq!(base, a);
                field
            }
            other => panic!("expected InvalidField, got {other:?}"),
        }
    };
    // Replaces the varint at `at` of a payload with `v`.
    fn set_varint(p: &mut Vec<u8>, at: usize, v: u64) {
        let (_, used) = varint::get(&p[at..]).unwrap();
        let mut enc = Vec::new();
        varint::put(&mut enc, v);
        p.splice(at..at + used, enc);
    }
    let ones = a.count_ones();
    let ones_at = delta::DIGESTS_LEN;
    let len_at = ones_at + varint::len(ones);
    // base_ones one more than the base has (digest still matches).
    let more = reframed(&frame, |p| set_varint(p, ones_at, ones + 1));
    assert_eq!(field_of(&more), "base_ones");
    let h = inspect_delta(&frame, &limits).unwrap().frame;
    let mut base = a.clone();
    assert!(matches!(
        apply(&mut base, &more, &limits),
        Err(DecodeError::InvalidField { offset, .. }) if offset == h.header_len + ones_at
    ));
    // base_ones larger than m.
    let over_m = reframed(&frame, |p| set_varint(p, ones_at, 20_001));
    assert_eq!(field_of(&over_m), "base_ones");
    // First part longer than what follows.
    let long = reframed(&frame, |p| {
        let rest = (p.len() - len_at) as u64;
        set_varint(p, len_at, rest + 1);
    });
    assert_eq!(field_of(&long), "zeros_len");
    // The first part claims every remaining byte, leaving the second part
    // (which has bits) empty.
    let swallowed = reframed(&frame, |p| {
        let (_, used) = varint::get(&p[len_at..]).unwrap();
        let rest = (p.len() - len_at - used) as u64;
        set_varint(p, len_at, rest);
    });
    assert_eq!(field_of(&swallowed), "payload_len");
    // A non-canonical varint for base_ones is reported where it starts.
    let bad = reframed(&frame, |p| {
        let (_, used) = varint::get(&p[ones_at..]).unwrap();
        p.splice(ones_at..ones_at + used, [0x80, 0x00]);
    });
    let mut base = a.clone();
    match apply(&mut base, &bad, &limits) {
        Err(DecodeError::BadVarint { offset, field, .. }) => {
            assert_eq!(field, "base_ones");
            assert_eq!(offset, h.header_len + ones_at);
        }
        other => panic!("expected BadVarint, got {other:?}"),
    }
    // A payload too short for the layout varints.
    let mut short = frame[..6].to_vec();
    for v in [h.params.seed, h.params.m, u64::from(h.params.k), h.n, 17] {
        compressed_bloom::format::varint::put(&mut short, v);
    }
    short.extend_from_slice(&frame[h.header_len..h.header_len + 17]);
    let crc = crc32c::crc32c(&short);
    short.extend_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        inspect_delta(&short, &limits),
        Err(DecodeError::InvalidField {
            field: "payload_len",
            ..
        })
    ));
}

#[test]
fn publisher_sends_smaller_frame_and_periodic_full() {
    let p = FilterParams::new(320_000, 2, 9);
    let mut publ = Publisher::counting(
        p,
        PublisherOptions {
            full_every: 4,
            ..PublisherOptions::default()
        },
    )
    .unwrap();
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
    let mut all = Publisher::counting(
        FilterParams::new(2000, 6, 1),
        PublisherOptions {
            full_every: 100,
            ..PublisherOptions::default()
        },
    )
    .unwrap();
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
    let mut publ = Publisher::counting(
        p,
        PublisherOptions {
            full_every: 5,
            ..PublisherOptions::default()
        },
    )
    .unwrap();
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
    let mut sub = <Subscriber>::default();
    for (u, s) in updates.iter().zip(&states) {
        sub.receive(&u.frame).unwrap();
        assert_eq!(sub.filter().unwrap().as_words(), s.as_words());
    }

    // A delta before any full frame.
    let mut sub = <Subscriber>::default();
    assert!(matches!(
        sub.receive(&updates[1].frame),
        Err(SyncError::NeedFull { .. })
    ));

    // Dropped delta 2: delta 3 is refused, the state stays at 1.
    let mut sub = <Subscriber>::default();
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
    let mut sub = <Subscriber>::default();
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
    let mut sub = <Subscriber>::default();
    sub.receive(&updates[0].frame).unwrap();
    sub.receive(&updates[1].frame).unwrap();
    assert!(matches!(sub.receive(&bad), Err(SyncError::Decode(_))));
    assert_eq!(sub.filter().unwrap().as_words(), states[1].as_words());
    let _ = inspect_delta(&updates[1].frame, &DecodeLimits::default()).unwrap();
}
