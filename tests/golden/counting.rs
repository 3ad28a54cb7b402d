//! Counting-kind golden vectors (docs/FORMAT.md section 8.1): frames whose
//! counters `tools/ref_kinds.py`, a decoder written from the document
//! alone, decoded and cross-checked against the counters computed from the
//! keys in Python (`tools/make_golden_counting.sh`). The crate must decode
//! each to the same counters, rebuild it byte for byte from the keys, and
//! reject every truncation and every single-bit flip.

use crate::common;

use compressed_bloom::kinds::counting::decode_counting;
use compressed_bloom::kinds::counting::encode_counting;
use compressed_bloom::kinds::counting::encode_counting_raw;
use compressed_bloom::kinds::counting::raw_payload;
use compressed_bloom::{CountingBloomFilter, DecodeError, DecodeLimits, FilterParams};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

#[test]
fn counting_goldens() {
    let list = std::fs::read_to_string(format!("{DIR}/golden_counting.txt")).unwrap();
    let mut seen = 0;
    for line in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.ends_with("delta"))
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (name, m, k, seed, n) = (
            f[0],
            f[1].parse::<u64>().unwrap(),
            f[2].parse::<u32>().unwrap(),
            f[3].parse::<u64>().unwrap(),
            f[4].parse::<u64>().unwrap(),
        );
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        let reference = std::fs::read(format!("{DIR}/{name}.nib")).unwrap();
        let lim = DecodeLimits::default();
        let got = decode_counting(&frame, &lim).unwrap();
        assert_eq!(raw_payload(&got), reference, "{name}");
        assert_eq!(got.len(), n);
        let mut built = CountingBloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
        for i in 1..=n {
            built.insert(format!("key-{i}").as_bytes());
        }
        assert_eq!(built, got, "{name}");
        let again = if frame[3] == 0 {
            encode_counting_raw(&built)
        } else {
            encode_counting(&built)
        };
        assert_eq!(again, frame, "{name} re-encodes byte for byte");
        common::assert_corruptions_refused(&frame, &lim, name);
        seen += 1;
    }
    assert_eq!(seen, 4);

    // The delta from key-1..key-200 to key-51..key-260, applied by the
    // reference to the first golden frame.
    let lim = DecodeLimits::default();
    let read = |name: &str| std::fs::read(format!("{DIR}/{name}")).unwrap();
    let mut base = decode_counting(&read("v3_counting_coded.cbf"), &lim).unwrap();
    let delta = read("v3_counting_delta.cbf");
    compressed_bloom::kinds::counting::apply_counting(&mut base, &delta, &lim).unwrap();
    assert_eq!(raw_payload(&base), read("v3_counting_delta.nib"));
    let mut want = CountingBloomFilter::new(FilterParams::new(3000, 3, 5)).unwrap();
    for i in 51..=260 {
        want.insert(format!("key-{i}").as_bytes());
    }
    assert_eq!(base, want);
    // Every truncation and bit flip of the delta is refused by apply (the
    // CRC first), leaving the base as it was.
    let old = decode_counting(&read("v3_counting_coded.cbf"), &lim).unwrap();
    for len in 0..delta.len() {
        let mut b = old.clone();
        let r = compressed_bloom::kinds::counting::apply_counting(&mut b, &delta[..len], &lim);
        assert!(
            matches!(r, Err(DecodeError::Truncated { .. })),
            "cut at {len}: {r:?}"
        );
        assert_eq!(b, old);
    }
    for bit in 0..delta.len() * 8 {
        let mut bad = delta.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let mut b = old.clone();
        let r = compressed_bloom::kinds::counting::apply_counting(&mut b, &bad, &lim);
        assert!(
            matches!(&r, Err(e) if common::caught_before_the_payload(e)),
            "bit {bit}: {r:?}"
        );
        assert_eq!(b, old);
    }
}
