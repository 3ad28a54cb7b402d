//! Any bytes, tight limits: the decoder returns a filter or a typed error,
//! never panics, and anything it accepts re-encodes to a frame that decodes
//! to the same filter.
#![no_main]

use compressed_bloom::{decode_with_limits, encode, DecodeLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = DecodeLimits {
        max_m: 1 << 22,
        max_k: 64,
        max_frame_len: 1 << 20,
        max_expansion: None,
    };
    if let Ok(f) = decode_with_limits(data, &limits) {
        assert!(f.m() <= limits.max_m);
        let again = encode(&f);
        assert_eq!(decode_with_limits(&again, &limits).as_ref(), Ok(&f));
    }
});
