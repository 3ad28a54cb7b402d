//! Structured filters (parameters and keys): decode(encode(f)) == f and the
//! frame is never larger than the raw frame, for type 1 and for type 4
//! (static coded) under any of its coder's choices (block size, mode), in
//! memory and streamed.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::{
    decode, encode, encode_as, BloomFilter, DecodeLimits, FilterParams, FilterType,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    m: u32,
    k: u8,
    seed: u64,
    keys: Vec<Vec<u8>>,
    /// Extra raw bits XORed in, to reach densities keys alone would not.
    noise: Vec<u8>,
    /// Type 4: block_log (0 = the encoder's, else 16 + n mod 25) and mode
    /// (0 = by density, 1 runs, 2 bytes).
    static_log: u8,
    static_mode: u8,
}

fuzz_target!(|input: Input| {
    // Up to 2^21 bits: arrays of 2^20 bits and more are coded with four
    // lanes, smaller ones with one.
    let m = u64::from(input.m % (1 << 21)) + 1;
    let k = u32::from(input.k % 64) + 1;
    let mut f = BloomFilter::new(FilterParams::new(m, k, input.seed)).unwrap();
    for key in &input.keys {
        f.insert(key);
    }
    let mut bytes = f.to_bytes();
    for (b, n) in bytes.iter_mut().zip(&input.noise) {
        *b ^= n;
    }
    if m % 8 != 0 {
        let last = bytes.len() - 1;
        bytes[last] &= (1u8 << (m % 8)) - 1;
    }
    let f = BloomFilter::from_bytes(*f.params(), f.len(), &bytes).unwrap();
    let frame = encode(&f);
    assert!(frame.len() <= encode_as(&f, FilterType::Raw).len());
    // A nearly empty filter expands past the default limit (4096 output
    // bytes per frame byte): this target checks the round trip, not limits.
    assert_eq!(decode(&frame, &DecodeLimits::unlimited()).unwrap(), f);
    use compressed_bloom::coder::static_coded::{Choice, Mode};
    let choice = Choice {
        block_log: (input.static_log != 0).then(|| 16 + input.static_log % 25),
        mode: [None, Some(Mode::Runs), Some(Mode::Bytes)][usize::from(input.static_mode % 3)],
    };
    let frame = compressed_bloom::format::encode_static_with(&f, choice);
    assert!(frame.len() <= encode_as(&f, FilterType::Raw).len());
    let unlimited = DecodeLimits::unlimited();
    assert_eq!(decode(&frame, &unlimited).unwrap(), f);
    assert_eq!(
        compressed_bloom::format::stream::read_frame(&frame[..], &unlimited).unwrap(),
        f
    );
    for key in &input.keys {
        let _ = f.contains(key);
    }
});
