//! One entry point for every kind: [`decode_any`] decodes a full frame into
//! whichever kind its header declares ([`AnyFilter`]), checked against the
//! caller's [`DecodeLimits`] (including the kinds it accepts), and
//! [`encode_any`] writes any kind back. Each kind also has typed functions.

use super::header::{FilterKind, FrameHeader};
use super::{checked_frame, DecodeError, DecodeLimits};
use crate::filter::BloomFilter;

/// A decoded filter of any kind.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnyFilter {
    /// [`FilterKind::Standard`].
    Standard(BloomFilter),
}

impl AnyFilter {
    /// The filter's kind.
    pub fn kind(&self) -> FilterKind {
        match self {
            AnyFilter::Standard(_) => FilterKind::Standard,
        }
    }

    /// Whether `key` may be in the set (no false negatives).
    pub fn contains(&self, key: &[u8]) -> bool {
        match self {
            AnyFilter::Standard(f) => f.contains(key),
        }
    }

    /// The number of keys the sender declared.
    pub fn len(&self) -> u64 {
        match self {
            AnyFilter::Standard(f) => f.len(),
        }
    }

    /// Whether the sender declared no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Decodes exactly one full frame of any kind occupying all of `data`.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::UnsupportedKind`] for a kind this
/// build or `limits.kinds` does not accept; [`DecodeError::WrongFrameType`]
/// for a delta.
pub fn decode_any(data: &[u8], limits: &DecodeLimits) -> Result<AnyFilter, DecodeError> {
    let (h, payload, total) = checked_frame(data, limits)?;
    if total < data.len() {
        return Err(DecodeError::TrailingBytes {
            offset: total as u64,
            count: data.len().saturating_sub(total) as u64,
        });
    }
    decode_any_payload(&h, payload)
}

/// Decodes the payload of a checked full frame into its kind.
pub(crate) fn decode_any_payload(
    h: &FrameHeader,
    payload: &[u8],
) -> Result<AnyFilter, DecodeError> {
    match h.kind {
        FilterKind::Standard => super::decode_full(h, payload).map(AnyFilter::Standard),
        other => Err(DecodeError::UnsupportedKind {
            id: other.id(),
            name: Some(other.name()),
        }),
    }
}

/// Encodes a filter of any kind as its smallest full frame.
pub fn encode_any(f: &AnyFilter) -> Vec<u8> {
    match f {
        AnyFilter::Standard(f) => super::encode(f),
    }
}
