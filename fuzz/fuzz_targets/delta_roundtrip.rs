//! Two structured filters with the same parameters: applying the delta of
//! (old, new) to old gives new, for both delta types and for the one
//! `encode_delta` picks (the smaller); applied to any other filter it is
//! refused with the base left unchanged.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::{delta, BloomFilter, DecodeLimits, FilterParams};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    m: u32,
    k: u8,
    seed: u64,
    old: Vec<Vec<u8>>,
    new: Vec<Vec<u8>>,
}

fuzz_target!(|i: Input| {
    let p = FilterParams::new(
        u64::from(i.m % (1 << 20)) + 1,
        u32::from(i.k % 64) + 1,
        i.seed,
    );
    let mut old = BloomFilter::new(p).unwrap();
    i.old.iter().for_each(|k| old.insert(k));
    let mut new = BloomFilter::new(p).unwrap();
    i.new.iter().for_each(|k| new.insert(k));
    let plain = delta::encode_delta_plain(&old, &new).unwrap();
    let cond = delta::encode_delta_conditional(&old, &new).unwrap();
    let best = delta::encode_delta(&old, &new).unwrap();
    assert_eq!(best.len(), plain.len().min(cond.len()));
    let limits = DecodeLimits::default();
    for frame in [plain, cond, best] {
        let mut base = old.clone();
        delta::apply(&mut base, &frame, &limits).unwrap();
        assert_eq!(base.as_words(), new.as_words());
        if old.as_words() != new.as_words() {
            let before = new.clone();
            let mut again = new.clone();
            assert!(delta::apply(&mut again, &frame, &limits).is_err());
            assert_eq!(again, before);
        }
    }
});
