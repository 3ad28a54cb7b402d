//! The counting kind (kind 1, docs/FORMAT.md section 8.1): 4-bit
//! saturating counters on the wire. Round trips (quickcheck), sticky
//! saturation, coded size against the entropy of the counter distribution,
//! plans that keep their budgets, and hostile payloads.

use crate::common;

use compressed_bloom::decode_any;
use compressed_bloom::encode_any;
use compressed_bloom::kinds::counting::decode_counting;
use compressed_bloom::kinds::counting::encode_counting;
use compressed_bloom::kinds::counting::encode_counting_raw;
use compressed_bloom::plan::kinds::{plan_counting_for_fpr, plan_counting_for_size};
use compressed_bloom::plan::{fpr_finite, Constraints};
use compressed_bloom::AnyFilter;
use compressed_bloom::{CountingBloomFilter, DecodeError, DecodeLimits, FilterKind, FilterParams};

fn counting(m: u64, k: u32, seed: u64, keys: &[Vec<u8>]) -> CountingBloomFilter {
    let mut f = CountingBloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
    for key in keys {
        f.insert(key);
    }
    f
}

#[test]
fn counting_round_trips_without_false_negatives() {
    fn prop(m: u16, k: u8, seed: u64, keys: Vec<Vec<u8>>, removed: u8) -> bool {
        let m = u64::from(m) + 1;
        let k = u32::from(k % 8) + 1;
        let mut f = counting(m, k, seed, &keys);
        // Remove some keys again: the counts the receiver gets are the
        // sender's, whatever the history.
        let cut = keys.len().min(usize::from(removed));
        for key in &keys[..cut] {
            f.remove(key);
        }
        let lim = DecodeLimits::unlimited();
        [encode_counting(&f), encode_counting_raw(&f)]
            .iter()
            .all(|frame| {
                let back = decode_counting(frame, &lim).unwrap();
                let any = decode_any(frame, &lim).unwrap();
                back == f
                    && any == AnyFilter::Counting(f.clone())
                    && keys[cut..].iter().all(|key| back.contains(key))
            })
            && encode_any(&AnyFilter::Counting(f.clone())) == encode_counting(&f)
    }
    common::qc(300, 0x5EED_0C01).quickcheck(prop as fn(_, _, _, _, _) -> bool);
}

/// A counter at 15 stays at 15 through the wire and is never decremented:
/// the receiver that deletes keeps the key maybe-present (no false
/// negative for the other keys that share the counter).
#[test]
fn saturated_counters_stay_saturated_after_the_wire() {
    let mut f = CountingBloomFilter::new(FilterParams::new(256, 1, 0)).unwrap();
    for _ in 0..30 {
        f.insert(b"hot");
    }
    assert_eq!(f.saturated(), 1);
    let mut back = decode_counting(&encode_counting(&f), &DecodeLimits::default()).unwrap();
    assert_eq!(back.saturated(), 1);
    for _ in 0..30 {
        assert!(back.remove(b"hot"));
    }
    assert!(back.contains(b"hot"), "a saturated counter never goes down");
    assert_eq!(back.saturated(), 1);
}

/// The coded counters cost close to the entropy of their distribution:
/// within 1% plus 40 bytes (range coder flush, model learning, bitmap
/// block overhead) at m = 10^6, and well under 4 bits per counter.
#[test]
fn coded_size_near_the_counter_entropy() {
    for (bits_per_key, k) in [(8u64, 1u32), (8, 4), (16, 3), (32, 6)] {
        let n = 1_000_000 / bits_per_key;
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("c{i}").into_bytes()).collect();
        let f = counting(1_000_000, k, 7, &keys);
        let frame = encode_counting(&f);
        let hist = f.histogram();
        let m = f.params().m as f64;
        let entropy_bytes: f64 = hist
            .iter()
            .filter(|&&h| h > 0)
            .map(|&h| -(h as f64) * (h as f64 / m).log2())
            .sum::<f64>()
            / 8.0;
        let size = frame.len() as f64;
        assert!(
            size <= entropy_bytes * 1.01 + 40.0,
            "m/n={bits_per_key} k={k}: {size} bytes, entropy {entropy_bytes:.0}"
        );
        assert!(size >= entropy_bytes * 0.99, "below the entropy: {size}");
        assert!(size * 8.0 / m < 4.0);
    }
}

/// The false-positive rate of the bit view follows the standard formula:
/// within 4 standard deviations (binomial over 200,000 fixed probes).
#[test]
fn counting_fpr_within_4_sd_of_the_formula() {
    let (m, k, n) = (80_000u64, 4u32, 10_000u64);
    let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("member{i}").into_bytes()).collect();
    let f = counting(m, k, 11, &keys);
    let probes = 200_000u64;
    let hits = (0..probes)
        .filter(|i| f.contains(format!("probe{i}").as_bytes()))
        .count() as f64;
    let p = fpr_finite(m, n, k);
    let sd = (probes as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (hits - probes as f64 * p).abs() < 4.0 * sd,
        "{hits} hits, expected {:.0} ± {sd:.0}",
        probes as f64 * p
    );
}

#[test]
fn counting_plans_keep_their_budgets() {
    let cons = Constraints::default();
    for (n, budget) in [(1_000u64, 2_000u64), (10_000, 25_000), (50_000, 150_000)] {
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("plan:{i}").into_bytes()).collect();
        let p = plan_counting_for_size(n, budget, &cons).unwrap();
        let frame = encode_counting(&counting(p.m, p.k, 0, &keys));
        assert!(
            frame.len() as u64 <= p.bound_bytes && p.bound_bytes <= budget,
            "{p:?}: {}",
            frame.len()
        );
        // The expected size is within 2% of what was built.
        let rel = (frame.len() as f64 - p.expected_bytes).abs() / p.expected_bytes;
        assert!(rel < 0.02, "{p:?}: {} bytes", frame.len());
    }
    let p = plan_counting_for_fpr(10_000, 0.01, &cons).unwrap();
    assert!(p.fpr <= 0.01, "{p:?}");
}

#[test]
fn hostile_counting_payloads_are_typed_errors() {
    let keys: Vec<Vec<u8>> = (0..200u32).map(|i| i.to_le_bytes().to_vec()).collect();
    let f = counting(4000, 3, 1, &keys);
    let frame = encode_counting(&f);
    assert_eq!(
        (frame[2], frame[3], frame[6]),
        (3, 1, FilterKind::Counting.id())
    );
    let lim = DecodeLimits::default();
    // Every truncation and every bit flip is refused (the CRC, then the
    // payload checks behind it).
    common::assert_corruptions_refused(&frame, &lim, "counting");
    // Behind a valid CRC: a bad bitmap type, a bitmap length past the
    // payload, a truncated value stream, trailing value bytes.
    let h = compressed_bloom::format::inspect(&frame, &lim).unwrap();
    let at = h.header_len;
    let body = &frame[at..frame.len() - 4];
    for (name, payload) in [
        ("type", [&[7u8][..], &body[1..]].concat()),
        (
            "length",
            [&body[..1], &[0xff, 0x7f][..], &body[3..]].concat(),
        ),
        ("truncated", body[..body.len() - 1].to_vec()),
        ("trailing", [body, &[0u8][..]].concat()),
    ] {
        let bad = reframe(&frame[..at], &payload);
        let err = decode_any(&bad, &lim).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::Counting { .. } | DecodeError::InvalidField { .. }
            ),
            "{name}: {err:?}"
        );
    }
}

/// The header with a new payload length and the payload, and a valid CRC.
fn reframe(header: &[u8], payload: &[u8]) -> Vec<u8> {
    // The header ends with the payload_len varint: strip and rewrite it.
    let mut h = header.to_vec();
    h.pop();
    while h.last().is_some_and(|b| b & 0x80 != 0) {
        h.pop();
    }
    let mut len = payload.len() as u64;
    loop {
        let b = (len & 0x7f) as u8;
        len >>= 7;
        if len == 0 {
            h.push(b);
            break;
        }
        h.push(b | 0x80);
    }
    h.extend_from_slice(payload);
    let crc = crc32c::crc32c(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

/// A delta between two versions of a counting filter (type 2, kind 1):
/// keys added and removed; applying it gives the new counters exactly; the
/// wrong base and a corrupted delta are refused with the base unchanged.
#[test]
fn counting_deltas_round_trip() {
    use compressed_bloom::kinds::counting::apply_counting;
    use compressed_bloom::kinds::counting::encode_delta_counting;
    fn prop(seed: u64, add: Vec<u16>, remove: Vec<u16>) -> bool {
        let params = FilterParams::new(3_000, 3, seed);
        let mut old = CountingBloomFilter::new(params).unwrap();
        for i in 0..300u16 {
            old.insert(&i.to_le_bytes());
        }
        let mut new = old.clone();
        for k in &add {
            new.insert(&k.to_le_bytes());
        }
        for k in &remove {
            new.remove(&(k % 300).to_le_bytes());
        }
        let frame = encode_delta_counting(&old, &new).unwrap();
        let lim = DecodeLimits::default();
        let mut got = old.clone();
        apply_counting(&mut got, &frame, &lim).unwrap();
        let mut again = got.clone();
        got == new
            && (old == new
                || matches!(
                    apply_counting(&mut again, &frame, &lim),
                    Err(DecodeError::WrongBase { .. })
                ))
            && again == got
    }
    common::qc(200, 0x5EED_0C04).quickcheck(prop as fn(_, _, _) -> bool);

    // A corrupted value stream behind a valid CRC: refused with the base
    // unchanged, or (a change in the coder's last flush bytes, which do not
    // affect the values) applied to exactly the new filter, as the result
    // digest checks.
    let params = FilterParams::new(5_000, 4, 2);
    let keys: Vec<Vec<u8>> = (0..400u32).map(|i| i.to_le_bytes().to_vec()).collect();
    let old = counting(params.m, params.k, params.seed, &keys[..200]);
    let new = counting(params.m, params.k, params.seed, &keys);
    let frame = encode_delta_counting(&old, &new).unwrap();
    let lim = DecodeLimits::default();
    for back in [6usize, 9, 14] {
        let mut bad = frame.clone();
        let at = bad.len() - back;
        bad[at] ^= 0x20;
        common::fix_crc(&mut bad);
        let mut base = old.clone();
        match apply_counting(&mut base, &bad, &lim) {
            Ok(()) => assert_eq!(base, new, "byte {at}"),
            Err(_) => assert_eq!(base, old, "byte {at}"),
        }
    }
    // A change early in the values is always caught.
    let mut bad = frame.clone();
    let last = bad.len() - 12;
    bad[last] ^= 0xFF;
    common::fix_crc(&mut bad);
    let mut base = old.clone();
    let r = apply_counting(&mut base, &bad, &lim);
    assert!(matches!(r, Err(DecodeError::Counting { .. })), "{r:?}");
    assert_eq!(base, old);
    assert!(
        frame.len() < encode_counting(&new).len(),
        "the delta is smaller"
    );
}
