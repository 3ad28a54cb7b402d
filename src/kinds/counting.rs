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
use crate::coder::{self, range};
use crate::counting::{CountingBloomFilter, MAX_COUNT};
use crate::filter::{zeroed_words, BloomFilter, FilterParams};
use crate::wire::varint;
use thiserror::Error;

/// Unary decisions per value: v − 1 ones then a zero, or 14 ones for 15.
const DECISIONS: usize = (MAX_COUNT - 1) as usize;

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
    let mut out = Vec::with_capacity(len);
    for w in f.as_words() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// The coded payload (type 1): `bitmap type (1 byte) ‖ bitmap_len
/// (varint) ‖ bitmap ‖ values`.
pub fn coded_payload(f: &CountingBloomFilter) -> Vec<u8> {
    let bits = f.to_bloom();
    let m = f.params().m;
    let mut bitmap = Vec::new();
    coder::encode(bits.as_words(), m, &mut bitmap);
    let (ty, bitmap) = if (bitmap.len() as u64) < bits.params().byte_len() {
        (1u8, bitmap)
    } else {
        (0u8, bits.to_bytes())
    };
    let mut out = Vec::with_capacity(bitmap.len().saturating_add(16));
    out.push(ty);
    varint::put(&mut out, bitmap.len() as u64);
    out.extend_from_slice(&bitmap);
    let mut enc = range::Encoder::new(&mut out);
    let mut models = [range::BitModel::default(); DECISIONS];
    for i in bits.ones() {
        let v = f.count(i);
        for (j, model) in models.iter_mut().enumerate() {
            let more = usize::from(v) > j.saturating_add(1);
            enc.encode(model, more);
            if !more {
                break;
            }
        }
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
) -> Result<CountingBloomFilter, crate::DecodeError> {
    let mut words = zeroed_words(params.m.div_ceil(16) as usize)?;
    for (w, chunk) in words.iter_mut().zip(payload.chunks(8)) {
        let mut b = [0u8; 8];
        b.get_mut(..chunk.len())
            .ok_or(CountingError::Padding)
            .map_err(|e| crate::DecodeError::Counting {
                offset: 0,
                source: e,
            })?
            .copy_from_slice(chunk);
        *w = u64::from_le_bytes(b);
    }
    if !nibble_padding_clear(params.m, &words) {
        return Err(crate::DecodeError::Counting {
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

/// Decodes a coded payload. `offset` is the payload's frame offset, for
/// error messages.
///
/// # Errors
/// Any malformed part, as [`crate::DecodeError::Counting`].
pub fn decode_coded(
    payload: &[u8],
    params: FilterParams,
    n: u64,
    offset: usize,
) -> Result<CountingBloomFilter, crate::DecodeError> {
    let err = |source| crate::DecodeError::Counting { offset, source };
    let (&ty, rest) = payload
        .split_first()
        .ok_or_else(|| err(CountingError::BitmapLength("empty payload")))?;
    let (len, used) = varint::get(rest).map_err(|r| err(CountingError::BitmapLength(r)))?;
    let start = used.saturating_add(1);
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .filter(|&e| e <= payload.len())
        .ok_or_else(|| err(CountingError::BitmapLength("runs past the payload")))?;
    let bitmap = payload.get(start..end).unwrap_or(&[]);
    let bits_params = FilterParams::new(params.m, params.k, params.seed);
    let bits = match ty {
        0 => BloomFilter::from_bytes(bits_params, n, bitmap).map_err(|e| match e {
            crate::FilterError::BitArrayLength { .. } => {
                err(CountingError::BitmapLength("a raw bitmap is ceil(m/8) bytes"))
            }
            crate::FilterError::PaddingBitsSet { .. } => err(CountingError::Padding),
            other => other.into(),
        })?,
        1 => {
            if bitmap.len() as u64 >= bits_params.byte_len() {
                return Err(err(CountingError::BitmapLength(
                    "a coded bitmap is shorter than ceil(m/8) bytes",
                )));
            }
            let mut words = zeroed_words(bits_params.word_len())?;
            coder::decode(bitmap, params.m, &mut words)
                .map_err(|e| err(CountingError::Bitmap(e)))?;
            if !crate::filter::padding_is_clear(params.m, &words) {
                return Err(err(CountingError::Padding));
            }
            BloomFilter::from_words_unchecked(bits_params, n, words)
        }
        other => return Err(err(CountingError::BitmapType(other))),
    };
    let values = payload.get(end..).unwrap_or(&[]);
    let verr = |what| {
        err(CountingError::Values {
            offset: end,
            what,
        })
    };
    let mut dec = range::Decoder::new(values).map_err(verr)?;
    let mut models = [range::BitModel::default(); DECISIONS];
    let mut counters = zeroed_words(params.m.div_ceil(16) as usize)?;
    for i in bits.ones() {
        let mut v: u64 = 1;
        for model in &mut models {
            if !dec.decode(model).map_err(verr)? {
                break;
            }
            v = v.saturating_add(1);
        }
        // i < m (padding checked), so i/16 < counters.len().
        if let Some(c) = counters.get_mut((i / 16) as usize) {
            // i % 16 < 16: the shift is below 64.
            *c |= v.checked_shl(((i % 16) as u32).saturating_mul(4)).unwrap_or(0);
        }
    }
    dec.finish().map_err(verr)?;
    Ok(CountingBloomFilter::from_parts(params, n, counters))
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

/// Unary decisions for a new counter value in a delta: v ones then a zero,
/// or 15 ones for 15 (values 0 to 15).
const DELTA_DECISIONS: usize = MAX_COUNT as usize;

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
    put_map(&mut out, &changed);
    let mut enc = range::Encoder::new(&mut out);
    let mut models = [range::BitModel::default(); DELTA_DECISIONS];
    for i in changed.ones() {
        let v = usize::from(new.count(i));
        for (j, model) in models.iter_mut().enumerate() {
            let more = v > j;
            enc.encode(model, more);
            if !more {
                break;
            }
        }
    }
    enc.finish();
    Ok(out)
}

/// Appends a map: type (0 raw, 1 coded), length, bytes.
fn put_map(out: &mut Vec<u8>, bits: &BloomFilter) {
    let m = bits.m();
    let mut coded = Vec::new();
    coder::encode(bits.as_words(), m, &mut coded);
    let (ty, bytes) = if (coded.len() as u64) < bits.params().byte_len() {
        (1u8, coded)
    } else {
        (0u8, bits.to_bytes())
    };
    out.push(ty);
    varint::put(out, bytes.len() as u64);
    out.extend_from_slice(&bytes);
}

/// Why a counting delta does not apply.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CountingDeltaError {
    /// The delta was made from another filter.
    #[error("the delta's base digest {expected:016x} is not this filter's {actual:016x}")]
    WrongBase {
        /// The digest the delta names.
        expected: u64,
        /// This filter's digest.
        actual: u64,
    },
    /// Applying it did not give the filter the delta names.
    #[error("the result's digest {actual:016x} is not the delta's {expected:016x}")]
    ResultMismatch {
        /// The digest the delta names.
        expected: u64,
        /// What applying gave.
        actual: u64,
    },
    /// The payload is malformed.
    #[error(transparent)]
    Payload(#[from] CountingError),
}

/// Applies a delta payload to `base`, returning the result (the base is not
/// changed; the caller installs the result). `n` is the new key count.
///
/// # Errors
/// The wrong base, a malformed payload, or a result that does not match.
pub fn apply_delta_payload(
    base: &CountingBloomFilter,
    payload: &[u8],
    n: u64,
) -> Result<CountingBloomFilter, CountingDeltaError> {
    let (digests, rest) = payload
        .split_first_chunk::<16>()
        .ok_or(CountingError::BitmapLength("a delta starts with two digests"))?;
    let (b, r) = digests.split_at(8);
    let want_base = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let want_result = u64::from_le_bytes(r.try_into().unwrap_or([0; 8]));
    let actual = digest(base);
    if actual != want_base {
        return Err(CountingDeltaError::WrongBase {
            expected: want_base,
            actual,
        });
    }
    let params = *base.params();
    let (changed, values_at) = read_map(rest, params)?;
    let values = rest.get(values_at..).unwrap_or_default();
    let at = values_at.saturating_add(16);
    let verr = |what| CountingError::Values { offset: at, what };
    let mut dec = range::Decoder::new(values).map_err(verr)?;
    let mut models = [range::BitModel::default(); DELTA_DECISIONS];
    let mut counters = base.as_words().to_vec();
    for i in changed.ones() {
        let mut v: u64 = 0;
        for model in &mut models {
            if !dec.decode(model).map_err(verr)? {
                break;
            }
            v = v.saturating_add(1);
        }
        // i < m (the map's padding was checked), so i/16 < counters.len().
        if let Some(c) = counters.get_mut((i / 16) as usize) {
            // i % 16 < 16: the shifts are below 64.
            let shift = ((i % 16) as u32).saturating_mul(4);
            *c = (*c & !(0xfu64 << shift)) | (v << shift);
        }
    }
    dec.finish().map_err(verr)?;
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

/// Reads a map (type, length, bytes) of m bits at the front of `data`;
/// returns it and where the bytes after it start.
fn read_map(data: &[u8], params: FilterParams) -> Result<(BloomFilter, usize), CountingError> {
    let (&ty, rest) = data
        .split_first()
        .ok_or(CountingError::BitmapLength("empty payload"))?;
    let (len, used) = varint::get(rest).map_err(CountingError::BitmapLength)?;
    let start = used.saturating_add(1);
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .filter(|&e| e <= data.len())
        .ok_or(CountingError::BitmapLength("runs past the payload"))?;
    let bytes = data.get(start..end).unwrap_or(&[]);
    let p = FilterParams::new(params.m, params.k, params.seed);
    let bits = match ty {
        0 => BloomFilter::from_bytes(p, 0, bytes).map_err(|e| match e {
            crate::FilterError::PaddingBitsSet { .. } => CountingError::Padding,
            _ => CountingError::BitmapLength("a raw map is ceil(m/8) bytes"),
        })?,
        1 => {
            if bytes.len() as u64 >= p.byte_len() {
                return Err(CountingError::BitmapLength(
                    "a coded map is shorter than ceil(m/8) bytes",
                ));
            }
            let mut words = zeroed_words(p.word_len())
                .map_err(|_| CountingError::BitmapLength("no memory for the map"))?;
            coder::decode(bytes, p.m, &mut words).map_err(CountingError::Bitmap)?;
            if !crate::filter::padding_is_clear(p.m, &words) {
                return Err(CountingError::Padding);
            }
            BloomFilter::from_words_unchecked(p, 0, words)
        }
        other => return Err(CountingError::BitmapType(other)),
    };
    Ok((bits, end))
}
