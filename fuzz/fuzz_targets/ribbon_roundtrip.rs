//! Structured sets (keys, rate, seed, either way of building): a ribbon
//! filter has no false negatives, decode(encode(f)) == f, and the frame
//! decodes through `decode_any` to the same filter.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::kinds::ribbon::decode_ribbon;
use compressed_bloom::kinds::ribbon::encode_ribbon;
use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
use compressed_bloom::{decode_any, AnyFilter, DecodeLimits, KeyHash};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    keys: Vec<Vec<u8>>,
    /// The rate as 2^-(bits/8), bits/8 in [1, 33).
    bits: u8,
    seed: u64,
    /// Repeats the keys this many times (duplicates are implied equations).
    copies: u8,
    /// Build::Fast rather than the default.
    fast: bool,
}

fuzz_target!(|input: Input| {
    let fpr = (-(1.0 + f64::from(input.bits) / 8.0)).exp2();
    let copies = usize::from(input.copies % 3) + 1;
    let hashes: Vec<KeyHash> = input
        .keys
        .iter()
        .cycle()
        .take(input.keys.len() * copies)
        .map(|k| KeyHash::new(k, input.seed))
        .collect();
    let how = if input.fast {
        Build::Fast
    } else {
        Build::Compact
    };
    let f = RibbonFilter::from_hashes_with(&hashes, fpr, input.seed, how).unwrap();
    assert!(
        input.keys.iter().all(|k| f.contains(k)),
        "a member is absent"
    );
    let frame = encode_ribbon(&f);
    let lim = DecodeLimits::default();
    assert_eq!(decode_ribbon(&frame, &lim).unwrap(), f);
    match decode_any(&frame, &lim).unwrap() {
        AnyFilter::Ribbon(g) => assert_eq!(g, f),
        other => panic!("decoded as {:?}", other.kind()),
    }
});
