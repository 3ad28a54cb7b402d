//! Pieces the kinds share on the wire:
//!
//! * an m-bit array inside a kind's payload — `type (1 byte: 0 raw, 1
//!   coded) ‖ length (varint) ‖ bytes` — which the counting kind's map and
//!   the scalable kind's layers both use (docs/FORMAT.md sections 8.1, 8.3);
//! * small integers as unary decisions through the range coder (counter
//!   values);
//! * the result of applying a kind's delta.

use crate::prelude::*;

use crate::coder::{self, range, CoderError};
use crate::filter::{padding_is_clear, words_from_le_bytes, zeroed_words};
use crate::wire::varint;
use thiserror::Error;

/// Why an embedded bit array is malformed (each kind reports it in its own
/// error type, with its offset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BitsError {
    /// The type byte is neither 0 nor 1.
    Type(u8),
    /// The length is malformed, runs past the payload, or breaks the
    /// type's rule (raw: exactly ⌈m/8⌉; coded: shorter).
    Length(&'static str),
    /// The coded bits are malformed.
    Coded(CoderError),
    /// A bit at or past m is set.
    Padding,
    /// No memory for the array.
    NoMemory,
}

/// Appends `words`' first m bits: coded when that is shorter than ⌈m/8⌉
/// bytes (and `raw` is false), raw otherwise.
pub(crate) fn put_bits(out: &mut Vec<u8>, words: &[u64], m: u64, raw: bool) {
    let mut coded = Vec::new();
    if !raw {
        coder::encode(words, m, &mut coded);
    }
    let raw_len = m.div_ceil(8);
    if !raw && (coded.len() as u64) < raw_len {
        out.push(1);
        varint::put(out, coded.len() as u64);
        out.extend_from_slice(&coded);
    } else {
        out.push(0);
        varint::put(out, raw_len);
        let end = out.len().saturating_add(raw_len as usize);
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
            if out.len() >= end {
                break;
            }
        }
        out.truncate(end);
    }
}

/// Reads an m-bit array written by [`put_bits`] at the front of `data`;
/// returns its words and the offset just past it. The length is checked
/// against `data` and the type's rule before the array is allocated.
pub(crate) fn read_bits(data: &[u8], m: u64) -> Result<(Vec<u64>, usize), BitsError> {
    read_bits_work(data, m).map(|(words, end, _)| (words, end))
}

/// [`read_bits`], also returning the coder's work: its coding steps
/// ([`coder::decode_counting`]'s count; 0 for a raw array).
pub(crate) fn read_bits_work(data: &[u8], m: u64) -> Result<(Vec<u64>, usize, u64), BitsError> {
    let (&ty, rest) = data
        .split_first()
        .ok_or(BitsError::Length("missing type byte"))?;
    let (len, used) = varint::get(rest).map_err(BitsError::Length)?;
    let start = used.saturating_add(1);
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .filter(|&e| e <= data.len())
        .ok_or(BitsError::Length("runs past the payload"))?;
    let bytes = data.get(start..end).unwrap_or_default();
    let raw_len = m.div_ceil(8);
    match ty {
        0 if len != raw_len => return Err(BitsError::Length("a raw array is ceil(m/8) bytes")),
        1 if len >= raw_len => {
            return Err(BitsError::Length(
                "a coded array is shorter than ceil(m/8) bytes",
            ))
        }
        0 | 1 => {}
        other => return Err(BitsError::Type(other)),
    }
    let mut words = zeroed_words(crate::filter::units_for(m, 64)).map_err(|_| BitsError::NoMemory)?;
    let mut steps = 0;
    if ty == 0 {
        words_from_le_bytes(&mut words, bytes);
    } else {
        let threads = coder::threads_for(coder::block_count(m));
        steps = coder::decode_work(bytes, m, &mut words, threads).map_err(BitsError::Coded)?;
    }
    if !padding_is_clear(m, &words) {
        return Err(BitsError::Padding);
    }
    Ok((words, end, steps))
}

/// Codes `v` as unary decisions `v > j` with model j, stopping after the
/// first 0 or after the last model (so `v` may be at most the number of
/// models).
pub(crate) fn put_unary(enc: &mut range::Encoder<'_>, models: &mut [range::BitModel], v: u64) {
    for (j, model) in (0u64..).zip(models.iter_mut()) {
        let more = v > j;
        enc.encode(model, more);
        if !more {
            break;
        }
    }
}

/// Decodes what [`put_unary`] wrote: the number of 1 decisions.
pub(crate) fn get_unary(
    dec: &mut range::Decoder<'_>,
    models: &mut [range::BitModel],
) -> Result<u64, range::RangeError> {
    let mut v = 0u64;
    for model in models.iter_mut() {
        if !dec.decode(model)? {
            break;
        }
        v = v.saturating_add(1);
    }
    Ok(v)
}

/// Why a kind's delta does not apply (the counting and scalable kinds).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KindDeltaError<E> {
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
    Payload(#[from] E),
}

/// The two digests at the front of a kind's delta payload (base, result),
/// and the rest.
pub(crate) fn split_digests(payload: &[u8]) -> Option<(u64, u64, &[u8])> {
    let (b, rest) = payload.split_first_chunk::<8>()?;
    let (r, rest) = rest.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*b), u64::from_le_bytes(*r), rest))
}
