//! The counting kind on the wire (kind 1, docs/FORMAT.md section 8.1):
//! 4-bit saturating counters ([`CountingBloomFilter`]), so a receiver that
//! must delete (a summary-cache proxy taking over a peer's role) gets the
//! counts, not only the bits.
//!
//! Most counters are 0 and most of the rest are 1 or 2, so the coded
//! payload splits them: the zero/non-zero map is the standard bit array
//! (coded by the run-length coder of section 3, or raw), and the value of
//! each non-zero counter, in position order, follows as unary decisions
//! (`v > 1`, `v > 2`, … `v > 14`), each with its own adaptive binary model,
//! through the range coder of [`crate::coder::range`]. The cost is close to
//! m times the entropy of the counter distribution
//! (`examples/counting_bits.rs` measures it).

#[allow(unused_imports)]
use crate::prelude::*;
use super::bits::{get_unary, put_bits, put_unary, read_bits, split_digests, BitsError};
use crate::coder::{self, range};
use crate::counting::{CountingBloomFilter, MAX_COUNT};
use crate::filter::{ones_of, words_from_le_bytes, zeroed_words, BloomFilter, FilterError, FilterParams};
use crate::wire::varint;
use thiserror::Error;

/// Unary decisions per value of a full frame: v − 1 ones then a zero, or
/// 14 ones for 15.
const DECISIONS: usize = (MAX_COUNT - 1) as usize;

/// Unary decisions for a new counter value in a delta: v ones then a zero,
/// or 15 ones for 15 (values 0 to 15).
const DELTA_DECISIONS: usize = MAX_COUNT as usize;

/// Why a counting payload is malformed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CountingError {
    /// The bitmap type byte is neither 0 (raw) nor 1 (coded).
    #[error("bitmap type {0} (0 raw, 1 coded)")]
    BitmapType(u8),
    /// The bitmap length is malformed or runs past the payload.
    #[error("bitmap length: {0}")]
    BitmapLength(&'static str),
    /// The coded bitmap is malformed.
    #[error("bitmap: {0}")]
    Bitmap(coder::CoderError),
    /// The counter values' range-coded stream is malformed.
    #[error("counter values at payload byte {offset}: {what:?}")]
    Values {
        /// Payload offset of the value stream.
        offset: usize,
        /// What went wrong.
        what: range::RangeError,
    },
    /// A raw payload sets a counter past m − 1, or a bitmap bit past it.
    #[error("a counter or bit past position m - 1 is set")]
    Padding,
}

/// Bytes of the raw (type 0) payload: ⌈m/2⌉, two counters per byte.
pub fn raw_len(m: u64) -> u64 {
    m.div_ceil(2)
}

/// The raw payload: counter i in the low nibble of byte i/2 for even i,
/// the high nibble for odd i.
pub fn raw_payload(f: &CountingBloomFilter) -> Vec<u8> {
    let len = raw_len(f.params().m) as usize;
    // Whole words first (up to 7 bytes past len), then cut: no regrowth.
    let mut out = Vec::with_capacity(f.as_words().len().saturating_mul(8));
    for w in f.as_words() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// The coded payload (type 1): the map (`type ‖ length ‖ bytes`, coded
/// when that is smaller) and the values of the non-zero counters.
pub fn coded_payload(f: &CountingBloomFilter) -> Vec<u8> {
    let map = f.to_bloom();
    let mut out = Vec::new();
    put_bits(&mut out, map.as_words(), map.m(), false);
    let mut enc = range::Encoder::new(&mut out);
    let mut models = [range::BitModel::default(); DECISIONS];
    for i in map.ones() {
        put_unary(&mut enc, &mut models, u64::from(f.count(i)).saturating_sub(1));
    }
    enc.finish();
    out
}

/// Why a counting payload did not decode: no memory for the counters, or
/// a malformed part at a frame offset. `format` reports the first as the
/// filter's error and the second as `DecodeError::Counting`.
#[derive(Debug)]
pub(crate) enum PayloadError {
    /// The counters could not be allocated.
    NoMemory(FilterError),
    /// A malformed part.
    At {
        /// Frame offset of the part.
        offset: usize,
        /// What was wrong.
        source: CountingError,
    },
}

impl From<FilterError> for PayloadError {
    fn from(e: FilterError) -> Self {
        PayloadError::NoMemory(e)
    }
}

/// Decodes a raw payload of ⌈m/2⌉ bytes (its length was checked).
///
/// # Errors
/// A non-zero padding nibble, or no memory.
pub(crate) fn decode_raw(
    payload: &[u8],
    params: FilterParams,
    n: u64,
) -> Result<CountingBloomFilter, PayloadError> {
    let mut words = zeroed_words(crate::filter::units_for(params.m, 16))?;
    words_from_le_bytes(&mut words, payload);
    if !nibble_padding_clear(params.m, &words) {
        return Err(PayloadError::At {
            offset: 0,
            source: CountingError::Padding,
        });
    }
    Ok(CountingBloomFilter::from_parts(params, n, words))
}

/// Whether the counters at and past m are 0.
fn nibble_padding_clear(m: u64, words: &[u64]) -> bool {
    let used = (m % 16) as u32;
    match words.last() {
        // used < 16, so the shift is below 64.
        Some(&last) if used != 0 => last.checked_shr(used.saturating_mul(4)) == Some(0),
        _ => true,
    }
}

impl From<BitsError> for CountingError {
    fn from(e: BitsError) -> Self {
        match e {
            BitsError::Type(t) => CountingError::BitmapType(t),
            BitsError::Length(what) => CountingError::BitmapLength(what),
            BitsError::Coded(e) => CountingError::Bitmap(e),
            BitsError::Padding => CountingError::Padding,
            BitsError::NoMemory => CountingError::BitmapLength("no memory for the map"),
        }
    }
}

/// Sets counter i of packed counters to v (i < 16 · counters.len()).
fn set_counter(counters: &mut [u64], i: u64, v: u64) {
    if let Some(c) = counters.get_mut((i / 16) as usize) {
        // i % 16 < 16: the shifts are below 64.
        let shift = ((i % 16) as u32).saturating_mul(4);
        *c = (*c & !(0xfu64 << shift)) | ((v & 0xf) << shift);
    }
}

/// Decodes a coded payload. `offset` is the payload's frame offset, for
/// error messages.
///
/// # Errors
/// Any malformed part, with its frame offset.
pub(crate) fn decode_coded(
    payload: &[u8],
    params: FilterParams,
    n: u64,
    offset: usize,
) -> Result<CountingBloomFilter, PayloadError> {
    let err = |source| PayloadError::At { offset, source };
    let (map, end) = read_bits(payload, params.m).map_err(|e| err(e.into()))?;
    let mut counters = zeroed_words(crate::filter::units_for(params.m, 16))?;
    set_values(&mut counters, &map, payload.get(end..).unwrap_or_default(), end, 1)
        .map_err(err)?;
    Ok(CountingBloomFilter::from_parts(params, n, counters))
}

/// Decodes the range-coded values of the counters the map marks (at
/// payload offset `at`) into `counters`: a full frame's values start at 1
/// (`base` 1, 14 decisions), a delta's at 0 (`base` 0, 15 decisions).
fn set_values(
    counters: &mut [u64],
    map: &[u64],
    values: &[u8],
    at: usize,
    base: u64,
) -> Result<(), CountingError> {
    let verr = |what| CountingError::Values { offset: at, what };
    let mut dec = range::Decoder::new(values).map_err(verr)?;
    let mut models = [range::BitModel::default(); DELTA_DECISIONS];
    let decisions = if base == 0 { DELTA_DECISIONS } else { DECISIONS };
    let models = models.get_mut(..decisions).unwrap_or_default();
    for i in ones_of(map) {
        let v = get_unary(&mut dec, models).map_err(verr)?;
        set_counter(counters, i, v.saturating_add(base));
    }
    dec.finish().map_err(verr)
}

/// The content digest of a counting filter (docs/FORMAT.md section 8.1):
/// XXH3-64 (seed 0) of the hash scheme id (1 byte), the varints seed, m
/// and k, the kind byte 1, then the raw counters (⌈m/2⌉ bytes).
pub fn digest(f: &CountingBloomFilter) -> u64 {
    let p = f.params();
    let mut head = vec![p.scheme.id()];
    for v in [p.seed, p.m, u64::from(p.k)] {
        varint::put(&mut head, v);
    }
    head.push(1);
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    h.update(&head);
    h.update(&raw_payload(f));
    h.digest()
}

/// The delta payload (type 2 under kind 1) from `old` to `new` (same
/// parameters): the two digests, the map of changed counters (raw or
/// coded, as in type 1), then each changed counter's new value in 0..=15
/// as unary decisions through the range coder.
///
/// # Errors
/// No memory for the map of changed counters.
pub fn encode_delta_payload(
    old: &CountingBloomFilter,
    new: &CountingBloomFilter,
) -> Result<Vec<u8>, crate::FilterError> {
    let p = *new.params();
    let mut changed = BloomFilter::new(FilterParams::new(p.m, p.k, p.seed))?;
    for i in 0..p.m {
        if old.count(i) != new.count(i) {
            changed.set_bit(i);
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&digest(old).to_le_bytes());
    out.extend_from_slice(&digest(new).to_le_bytes());
    put_bits(&mut out, changed.as_words(), p.m, false);
    let mut enc = range::Encoder::new(&mut out);
    let mut models = [range::BitModel::default(); DELTA_DECISIONS];
    for i in changed.ones() {
        put_unary(&mut enc, &mut models, u64::from(new.count(i)));
    }
    enc.finish();
    Ok(out)
}

/// Why a counting delta does not apply.
pub type CountingDeltaError = super::bits::KindDeltaError<CountingError>;

/// Applies a delta payload to `base`, returning the result (the base is not
/// changed; the caller installs the result). `n` is the new key count.
///
/// # Errors
/// The wrong base, a malformed payload, or a result that does not match.
pub fn apply_delta_payload(
    base: &CountingBloomFilter,
    payload: &[u8],
    n: u64,
    held: Option<u64>,
) -> Result<CountingBloomFilter, CountingDeltaError> {
    let (want_base, want_result, rest) =
        split_digests(payload).ok_or(CountingError::BitmapLength("a delta starts with two digests"))?;
    // A receiver that keeps the base's digest saves the pass over it.
    let actual = held.unwrap_or_else(|| digest(base));
    if actual != want_base {
        return Err(CountingDeltaError::WrongBase {
            expected: want_base,
            actual,
        });
    }
    let params = *base.params();
    let (changed, end) = read_bits(rest, params.m).map_err(CountingError::from)?;
    let mut counters = base.as_words().to_vec();
    let at = end.saturating_add(16);
    set_values(&mut counters, &changed, rest.get(end..).unwrap_or_default(), at, 0)?;
    let result = CountingBloomFilter::from_parts(params, n, counters);
    let got = digest(&result);
    if got != want_result {
        return Err(CountingDeltaError::ResultMismatch {
            expected: want_result,
            actual: got,
        });
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(m: u64, k: u32, n: u32) -> CountingBloomFilter {
        let mut f = CountingBloomFilter::new(FilterParams::new(m, k, 3)).unwrap();
        for i in 0..n {
            f.insert(&i.to_le_bytes());
        }
        f
    }

    #[test]
    fn payloads_round_trip() {
        for (m, k, n) in [(1, 1, 0), (17, 2, 5), (1000, 3, 100), (100_000, 4, 10_000), (64, 1, 40)] {
            let f = filter(m, k, n);
            let raw = raw_payload(&f);
            assert_eq!(raw.len() as u64, raw_len(m));
            assert_eq!(decode_raw(&raw, *f.params(), f.len()).unwrap(), f);
            let coded = coded_payload(&f);
            assert_eq!(decode_coded(&coded, *f.params(), f.len(), 0).unwrap(), f);
        }
    }

    #[test]
    fn saturated_counters_travel() {
        let mut f = CountingBloomFilter::new(FilterParams::new(64, 1, 0)).unwrap();
        for _ in 0..40 {
            f.insert(b"same");
        }
        assert_eq!(f.saturated(), 1);
        let back = decode_coded(&coded_payload(&f), *f.params(), f.len(), 0).unwrap();
        assert_eq!(back.saturated(), 1);
        assert_eq!(back, f);
    }
}
