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
//! (`cargo run --release -- counting` in `benches/compare` measures it).

use crate::prelude::*;
use crate::kinds::bits::{get_unary, put_bits, put_unary, read_bits, split_digests, BitsError};
use crate::coder::{self, range};
use crate::kinds::counting::{CountingBloomFilter, MAX_COUNT};
use crate::filter::{
    ones_of, with_le_bytes, words_from_le_bytes, zeroed_words, BloomFilter, FilterError,
    FilterParams,
};
use crate::wire::limits::DecodeLimits;
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
    /// The map marks more counters than the receiver's work budget allows
    /// values for (docs/FORMAT.md section 8.1, "Work"); reported as
    /// [`crate::DecodeError::LimitExceeded`] by the frame decoders.
    #[error("{requested} value decisions possible, the budget is {limit}")]
    TooManyDecisions {
        /// 14 (full frame) or 15 (delta) per counter the map marks.
        requested: u64,
        /// The receiver's budget for this frame.
        limit: u64,
    },
}

/// Why a counting payload did not decode: no memory for the counters, or
/// a malformed part (or a work budget exceeded) at a frame offset.
/// `format` reports the first as the filter's error, a budget exceeded as
/// a limit and the rest as `DecodeError::Counting`.
#[derive(Debug)]
pub enum PayloadError {
    /// The counters could not be allocated.
    NoMemory(FilterError),
    /// A malformed part, or more value decisions than the budget allows.
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

fn at(offset: usize, source: CountingError) -> PayloadError {
    PayloadError::At { offset, source }
}

/// What a budget exceeded is reported as (`DecodeError::LimitExceeded`).
pub const DECISIONS_WHAT: &str = "counting value decisions (14 or 15 per marked counter)";

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

/// Decodes a raw payload of ⌈m/2⌉ bytes (its length was checked).
///
/// # Errors
/// A non-zero padding nibble, or no memory.
pub fn decode_raw(
    payload: &[u8],
    params: FilterParams,
    n: u64,
) -> Result<CountingBloomFilter, PayloadError> {
    let mut words = zeroed_words(crate::filter::units_for(params.m, 16))?;
    words_from_le_bytes(&mut words, payload);
    if !nibble_padding_clear(params.m, &words) {
        return Err(at(0, CountingError::Padding));
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
/// error messages; `budget` is the most value decisions the receiver
/// allows ([`decision_budget`]; `None`: no limit).
///
/// # Errors
/// Any malformed part, or more value decisions than the budget allows
/// ([`CountingError::TooManyDecisions`]), with its frame offset.
pub fn decode_coded(
    payload: &[u8],
    params: FilterParams,
    n: u64,
    offset: usize,
    budget: Option<u64>,
) -> Result<CountingBloomFilter, PayloadError> {
    decode_coded_work(payload, params, n, offset, budget).map(|(f, _)| f)
}

/// [`decode_coded`], also returning the number of value decisions it
/// decoded (the map's work is the coder's, [`coder::decode_counting`]).
/// `tests/hostile/frames.rs` holds the sum to a fixed number per frame byte.
///
/// # Errors
/// As [`decode_coded`].
pub fn decode_coded_work(
    payload: &[u8],
    params: FilterParams,
    n: u64,
    offset: usize,
    budget: Option<u64>,
) -> Result<(CountingBloomFilter, u64), PayloadError> {
    let err = |source| at(offset, source);
    let (map, end) = read_bits(payload, params.m).map_err(|e| err(e.into()))?;
    check_decisions(&map, DECISIONS as u64, budget).map_err(err)?;
    let mut counters = zeroed_words(crate::filter::units_for(params.m, 16))?;
    let decisions = set_values(&mut counters, &map, payload.get(end..).unwrap_or_default(), end, 1)
        .map_err(err)?;
    Ok((
        CountingBloomFilter::from_parts(params, n, counters),
        decisions,
    ))
}

/// Output bytes one value decision counts as under the receiver's
/// expansion limit (docs/FORMAT.md section 8.1, "Work"): a counting frame
/// takes at most `max_expansion / 32` decisions per frame byte, 128 under
/// the default limits (a few µs of CPU per frame byte; a decision at the
/// model's limit carries 0.00035 bits, so without a budget a byte held
/// ~22,700). A filter's values cost 10 to 25 decisions per byte; only an
/// array saturated past use (nearly every counter at 15, or at 1) needs
/// more.
pub const DECISION_WEIGHT: u64 = 32;

/// The most value decisions a counting frame of `frame_len` bytes may take
/// under `limits` (docs/FORMAT.md section 8.1, "Work"):
/// `max_decisions_per_byte` · frame_len if set, else
/// ⌊max_expansion · frame_len / 32⌋, or `None` without an expansion limit.
pub fn decision_budget(limits: &DecodeLimits, frame_len: u64) -> Option<u64> {
    if let Some(d) = limits.max_decisions_per_byte {
        return Some(d.saturating_mul(frame_len));
    }
    limits.max_expansion.map(|e| {
        let product = u128::from(e).saturating_mul(u128::from(frame_len));
        let budget = product.checked_div(u128::from(DECISION_WEIGHT)).unwrap_or(0);
        u64::try_from(budget).unwrap_or(u64::MAX)
    })
}

/// Refuses a values part whose decisions could exceed `budget`: at most
/// `per_value` decisions for each counter the map marks (docs/FORMAT.md
/// section 8.1, "Work"), checked before any value is decoded.
fn check_decisions(map: &[u64], per_value: u64, budget: Option<u64>) -> Result<(), CountingError> {
    let Some(budget) = budget else {
        return Ok(());
    };
    let marked = map
        .iter()
        .fold(0u64, |a, w| a.saturating_add(u64::from(w.count_ones())));
    let most = marked.saturating_mul(per_value);
    if most > budget {
        return Err(CountingError::TooManyDecisions {
            requested: most,
            limit: budget,
        });
    }
    Ok(())
}

/// Decodes the range-coded values of the counters the map marks (at
/// payload offset `at`) into `counters`: a full frame's values start at 1
/// (`base` 1, 14 decisions), a delta's at 0 (`base` 0, 15 decisions).
/// Returns the number of decisions decoded.
fn set_values(
    counters: &mut [u64],
    map: &[u64],
    values: &[u8],
    at: usize,
    base: u64,
) -> Result<u64, CountingError> {
    let verr = |what| CountingError::Values { offset: at, what };
    let mut dec = range::Decoder::new(values).map_err(verr)?;
    let mut models = [range::BitModel::default(); DELTA_DECISIONS];
    let decisions = if base == 0 { DELTA_DECISIONS } else { DECISIONS };
    let models = models.get_mut(..decisions).unwrap_or_default();
    let mut work = 0u64;
    for i in ones_of(map) {
        let v = get_unary(&mut dec, models).map_err(verr)?;
        // v ones and a final zero, or `decisions` ones at the top value.
        work = work.saturating_add(v.saturating_add(1).min(decisions as u64));
        set_counter(counters, i, v.saturating_add(base));
    }
    dec.finish().map_err(verr)?;
    Ok(work)
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
    // The raw payload's bytes straight from the words (no ⌈m/2⌉-byte
    // copy: a delta's receiver holds the base, the result and the map).
    let len = usize::try_from(raw_len(p.m)).unwrap_or(usize::MAX);
    let _ = with_le_bytes(f.as_words(), len, |bytes| {
        h.update(bytes);
        Ok::<(), ()>(())
    });
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
pub type CountingDeltaError = crate::kinds::bits::KindDeltaError<CountingError>;

/// Applies a delta payload to `base`, returning the result (the base is not
/// changed; the caller installs the result). `n` is the new key count;
/// `budget` the most value decisions the receiver allows
/// ([`decision_budget`]).
///
/// Memory: the result's counters (⌈m/2⌉ bytes, rounded up to words) and
/// the map of changes (⌈m/8⌉); the digests hash the counters in place.
///
/// # Errors
/// The wrong base, a malformed payload, more decisions than the budget, or
/// a result that does not match.
pub fn apply_delta_payload(
    base: &CountingBloomFilter,
    payload: &[u8],
    n: u64,
    budget: Option<u64>,
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
    check_decisions(&changed, DELTA_DECISIONS as u64, budget)?;
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
            assert_eq!(decode_coded(&coded, *f.params(), f.len(), 0, None).unwrap(), f);
        }
    }

    #[test]
    fn saturated_counters_travel() {
        let mut f = CountingBloomFilter::new(FilterParams::new(64, 1, 0)).unwrap();
        for _ in 0..40 {
            f.insert(b"same");
        }
        assert_eq!(f.saturated(), 1);
        let back = decode_coded(&coded_payload(&f), *f.params(), f.len(), 0, None).unwrap();
        assert_eq!(back.saturated(), 1);
        assert_eq!(back, f);
    }
}
