//! Shared test helpers.

use quickcheck::{Gen, QuickCheck};

pub mod density;
pub mod late_block;

/// A QuickCheck runner with a fixed seed, so failures reproduce. Vectors
/// have at most 100 elements (quickcheck's default size); integers span
/// their whole range.
#[allow(dead_code)]
pub fn qc(tests: u64, seed: u64) -> QuickCheck {
    QuickCheck::new()
        .rng(Gen::from_size_and_seed(100, seed))
        .tests(tests)
        .max_tests(tests * 10)
}

/// Rewrites a frame's CRC-32C after the test changed bytes behind it, so the
/// payload checks are what refuse it.
#[allow(dead_code)]
pub fn fix_crc(frame: &mut [u8]) {
    let n = frame.len() - 4;
    let crc = crc32c::crc32c(&frame[..n]);
    frame[n..].copy_from_slice(&crc.to_le_bytes());
}

/// Every truncation and every single-bit flip of `frame` is refused by
/// `decode_any` under `limits`.
#[allow(dead_code)]
pub fn assert_corruptions_refused(
    frame: &[u8],
    limits: &compressed_bloom::DecodeLimits,
    name: &str,
) {
    for len in 0..frame.len() {
        assert!(
            compressed_bloom::decode_any(&frame[..len], limits).is_err(),
            "{name}: cut at {len}"
        );
    }
    for bit in 0..frame.len() * 8 {
        let mut bad = frame.to_vec();
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(
            compressed_bloom::decode_any(&bad, limits).is_err(),
            "{name}: bit {bit}"
        );
    }
}
