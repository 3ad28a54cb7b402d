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
