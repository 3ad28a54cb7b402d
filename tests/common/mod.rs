//! Shared test helpers, included by every test binary that needs one.
#![allow(dead_code)] // each binary uses some of the helpers, none uses all

use compressed_bloom::{DecodeError, DecodeLimits};
use quickcheck::{Gen, QuickCheck};

pub mod density;
pub mod late_block;

/// A QuickCheck runner with a fixed seed, so failures reproduce. Vectors
/// have at most 100 elements (quickcheck's default size); integers span
/// their whole range.
pub fn qc(tests: u64, seed: u64) -> QuickCheck {
    QuickCheck::new()
        .rng(Gen::from_size_and_seed(100, seed))
        .tests(tests)
        .max_tests(tests * 10)
}

/// Rewrites a frame's CRC-32C after the test changed bytes behind it, so the
/// payload checks are what refuse it.
pub fn fix_crc(frame: &mut [u8]) {
    let n = frame.len() - 4;
    let crc = crc32c::crc32c(&frame[..n]);
    frame[n..].copy_from_slice(&crc.to_le_bytes());
}

/// Every truncation and every single-bit flip of `frame` is refused by
/// `decode_any` under `limits`: a truncation as [`DecodeError::Truncated`],
/// a flip by a header check or the CRC ([`caught_before_the_payload`]).
pub fn assert_corruptions_refused(frame: &[u8], limits: &DecodeLimits, name: &str) {
    for len in 0..frame.len() {
        let r = compressed_bloom::decode_any(&frame[..len], limits);
        assert!(
            matches!(r, Err(DecodeError::Truncated { .. })),
            "{name}: cut at {len}: {:?}",
            r.err()
        );
    }
    for bit in 0..frame.len() * 8 {
        let mut bad = frame.to_vec();
        bad[bit / 8] ^= 1 << (bit % 8);
        let r = compressed_bloom::decode_any(&bad, limits);
        assert!(
            matches!(&r, Err(e) if caught_before_the_payload(e)),
            "{name}: bit {bit}: {:?}",
            r.err()
        );
    }
}

/// Whether `e` is how a frame with a damaged byte is refused: by a check of
/// the header (its magic, version, type, kind, scheme, reserved bits,
/// varints, fields, metadata, lengths, and declared sizes against the
/// limits) or by the CRC, which is checked before any payload is decoded.
/// Never a payload decoder's error or an invalid filter.
pub fn caught_before_the_payload(e: &DecodeError) -> bool {
    matches!(
        e,
        DecodeError::Truncated { .. }
            | DecodeError::BadMagic { .. }
            | DecodeError::UnsupportedVersion { .. }
            | DecodeError::UnknownFilterType { .. }
            | DecodeError::UnknownHashScheme { .. }
            | DecodeError::UnsupportedKind { .. }
            | DecodeError::UnknownMetadata { .. }
            | DecodeError::ReservedBits { .. }
            | DecodeError::BadVarint { .. }
            | DecodeError::InvalidField { .. }
            | DecodeError::LimitExceeded { .. }
            | DecodeError::ChecksumMismatch { .. }
            | DecodeError::TrailingBytes { .. }
            | DecodeError::Squid { .. }
            | DecodeError::WrongFrameType { .. }
    )
}
