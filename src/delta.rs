//! XOR delta frames (Mitzenmacher §IV): a changed set is re-sent as the coded
//! XOR of the new filter and the old one.
//!
//! A delta frame (filter type 2) names the filter it applies to and the one it
//! produces by 64-bit content digests ([`digest`]); [`apply`] refuses any
//! other base and verifies the result before it replaces the base, so a
//! receiver never silently diverges.

// Decoding code: a stranger's bytes must never reach a panic.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use crate::coder;
use crate::filter::{BloomFilter, FilterError};
use crate::format::{self, header, DecodeError, DecodeLimits, FilterType, FrameHeader};
use xxhash_rust::xxh3::Xxh3Default;

/// Bytes of the two digests at the front of a delta payload.
pub const DIGESTS_LEN: usize = 16;

/// The content digest of a filter: XXH3-64 (seed 0) of the hash scheme id
/// (1 byte), the varints seed, m and k, then the packed bit array (⌈m/8⌉
/// bytes). The key count n is metadata and not part of it.
pub fn digest(f: &BloomFilter) -> u64 {
    let p = f.params();
    let mut h = Xxh3Default::new();
    let mut head = vec![p.scheme.id()];
    for v in [p.seed, p.m, u64::from(p.k)] {
        format::varint::put(&mut head, v);
    }
    h.update(&head);
    let byte_len = p.byte_len() as usize;
    let mut buf = [0u8; 8 * 512];
    let mut done = 0usize;
    for chunk in f.as_words().chunks(512) {
        let mut used = 0;
        for w in chunk {
            buf[used..used + 8].copy_from_slice(&w.to_le_bytes());
            used += 8;
        }
        let take = used.min(byte_len - done);
        h.update(&buf[..take]);
        done += take;
    }
    h.digest()
}

/// A delta frame's header and digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeltaHeader {
    /// The frame header (type [`FilterType::Delta`]; `n` is the new filter's).
    pub frame: FrameHeader,
    /// Digest of the filter the delta applies to.
    pub base_digest: u64,
    /// Digest of the filter it produces.
    pub result_digest: u64,
}

/// Encodes the delta that turns `old` into `new`.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
///
/// # Examples
/// ```
/// use compressed_bloom::{delta, BloomFilter, FilterParams};
/// let p = FilterParams::new(320_000, 2, 0);
/// let mut old = BloomFilter::new(p)?;
/// for i in 0..10_000u32 { old.insert(&i.to_le_bytes()); }
/// let mut new = BloomFilter::new(p)?;
/// for i in 500..10_500u32 { new.insert(&i.to_le_bytes()); } // 5% replaced
/// let frame = delta::encode_delta(&old, &new)?;
/// assert!(frame.len() < 2_200, "{} bytes", frame.len());   // vs 40,000 raw
/// let mut copy = old.clone();
/// delta::apply(&mut copy, &frame, &Default::default())?;
/// assert_eq!(copy, new);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_delta(old: &BloomFilter, new: &BloomFilter) -> Result<Vec<u8>, FilterError> {
    if old.params() != new.params() {
        return Err(FilterError::ParamsMismatch {
            left: *old.params(),
            right: *new.params(),
        });
    }
    let xor: Vec<u64> = old
        .as_words()
        .iter()
        .zip(new.as_words())
        .map(|(a, b)| a ^ b)
        .collect();
    let mut payload = Vec::with_capacity(DIGESTS_LEN + 64);
    payload.extend_from_slice(&digest(old).to_le_bytes());
    payload.extend_from_slice(&digest(new).to_le_bytes());
    coder::encode(&xor, new.m(), &mut payload);
    Ok(format::frame_bytes(
        new.params(),
        new.len(),
        FilterType::Delta,
        &payload,
    ))
}

/// Parses and checks a delta frame (header, limits, lengths, CRC) without
/// decoding its bits.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongFrameType`] for a full filter.
pub fn inspect_delta(data: &[u8], limits: &DecodeLimits) -> Result<DeltaHeader, DecodeError> {
    let (h, payload, total) = format::checked_frame(data, limits)?;
    if total < data.len() {
        return Err(DecodeError::TrailingBytes {
            offset: total as u64,
            count: (data.len() - total) as u64,
        });
    }
    if h.filter_type != FilterType::Delta {
        return Err(DecodeError::WrongFrameType {
            found: h.filter_type,
            expected: "a delta",
        });
    }
    let digest_at = |i: usize| {
        let mut b = [0u8; 8];
        // The header parser guarantees payload_len >= DIGESTS_LEN.
        b.copy_from_slice(&payload[i..i + 8]);
        u64::from_le_bytes(b)
    };
    Ok(DeltaHeader {
        frame: h,
        base_digest: digest_at(0),
        result_digest: digest_at(8),
    })
}

/// Decodes a delta frame to its XOR bit array (as a filter with the frame's
/// parameters), for inspection.
///
/// # Errors
/// As [`inspect_delta`], and malformed coded bits.
pub fn decode_xor(
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(DeltaHeader, BloomFilter), DecodeError> {
    let d = inspect_delta(data, limits)?;
    let words = decode_xor_words(data, &d)?;
    Ok((
        d,
        BloomFilter::from_words_unchecked(d.frame.params, d.frame.n, words),
    ))
}

fn decode_xor_words(data: &[u8], d: &DeltaHeader) -> Result<Vec<u64>, DecodeError> {
    let h = &d.frame;
    // inspect_delta checked the frame: these bounds lie within it.
    let start = h.header_len + DIGESTS_LEN;
    let end = h.header_len + h.payload_len as usize;
    format::decode_coded(&data[start..end], &h.params, start)
}

/// Applies a delta frame to `base`. On success `base` is the filter the
/// delta produces (its digest verified); on any error `base` is unchanged.
///
/// # Errors
/// Any [`DecodeError`] of the frame; [`DecodeError::ParamsMismatch`] if the
/// delta is for other parameters; [`DecodeError::WrongBase`] if `base` is not
/// the filter the delta was made from (a missed or reordered update: ask for
/// a full frame); [`DecodeError::ResultMismatch`] if the result's digest
/// differs (corruption the CRC missed, or a digest collision).
pub fn apply(
    base: &mut BloomFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    let d = inspect_delta(data, limits)?;
    if d.frame.params != *base.params() {
        return Err(DecodeError::ParamsMismatch {
            frame: d.frame.params,
            filter: *base.params(),
        });
    }
    let actual = digest(base);
    if actual != d.base_digest {
        return Err(DecodeError::WrongBase {
            expected: d.base_digest,
            actual,
        });
    }
    let mut words = decode_xor_words(data, &d)?;
    for (w, b) in words.iter_mut().zip(base.as_words()) {
        *w ^= b;
    }
    let result = BloomFilter::from_words_unchecked(d.frame.params, d.frame.n, words);
    let got = digest(&result);
    if got != d.result_digest {
        return Err(DecodeError::ResultMismatch {
            expected: d.result_digest,
            actual: got,
        });
    }
    *base = result;
    Ok(())
}

/// Bytes of a delta frame outside its coded XOR: header, digests, CRC.
pub fn delta_overhead(f: &BloomFilter, coded_len: u64) -> usize {
    let p = f.params();
    let payload = coded_len + DIGESTS_LEN as u64;
    header::frame_overhead(p.seed, p.m, p.k, f.len(), payload) + DIGESTS_LEN
}
