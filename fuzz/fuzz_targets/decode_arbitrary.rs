//! Any bytes, tight limits: the decoder of every kind (`decode_any`)
//! returns a filter or a typed error, never panics, never holds more memory
//! than the limits allow plus a small constant, and anything it accepts
//! re-encodes to a frame that decodes to the same filter.
#![no_main]

use compressed_bloom::format::KindSet;
use compressed_bloom::{decode_any, encode_any, DecodeLimits};
use libfuzzer_sys::fuzz_target;

// The counting global allocator the allocation test uses, shared so that
// its unsafe code and its proof exist once.
#[path = "../../tests/common/counting_alloc.rs"]
mod counting_alloc;

/// Memory the decoder may hold beyond the output the limits allow: the
/// 32 KiB decode table and a few small vectors (tests/alloc_limit.rs
/// measures the same allowance).
const CONSTANT: usize = 128 * 1024;

fuzz_target!(|data: &[u8]| {
    let limits = DecodeLimits {
        max_m: 1 << 22,
        max_k: 64,
        max_frame_len: 1 << 20,
        max_expansion: None,
        max_decisions_per_byte: None,
        expansion_floor: u64::MAX,
        kinds: KindSet::ALL,
    };
    let mut decoded = None;
    let peak = counting_alloc::peak_of(|| decoded = Some(decode_any(data, &limits)));
    // Bit-array kinds hold at most max_m bits; the counting kind max_m
    // 4-bit counters and, while decoding, the max_m-bit map (section 8.1);
    // the sparse kind's list, held to ⌈max_m/8⌉ bytes at its count
    // (docs/FORMAT.md section 8.4), under the same allowance.
    let allowed = (limits.max_m / 2 + limits.max_m / 8) as usize + 64 * data.len() + CONSTANT;
    assert!(
        peak <= allowed,
        "decoding held {peak} bytes, allowed {allowed}"
    );
    if let Some(Ok(f)) = decoded {
        let again = encode_any(&f);
        assert_eq!(decode_any(&again, &limits).as_ref(), Ok(&f));
    }
});
