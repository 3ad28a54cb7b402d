//! Any delta bytes against a valid base: an error leaves the base unchanged;
//! success yields a filter with the base's parameters whose digest is the
//! one the frame promised.
#![no_main]

use compressed_bloom::{delta, BloomFilter, DecodeLimits, FilterParams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let p = FilterParams::new(4096, 3, 7);
    let mut base = BloomFilter::new(p).unwrap();
    for i in 0..200u32 {
        base.insert(&i.to_le_bytes());
    }
    let before = base.clone();
    let limits = DecodeLimits {
        max_m: 1 << 20,
        max_k: 64,
        max_frame_len: 1 << 20,
        max_expansion: None,
        ..DecodeLimits::default()
    };
    match delta::apply(&mut base, data, &limits) {
        Ok(()) => {
            assert_eq!(base.params(), before.params());
            let h = delta::inspect_delta(data, &limits).unwrap();
            assert_eq!(delta::digest(&base), h.result_digest);
        }
        Err(_) => assert_eq!(base, before),
    }
});
