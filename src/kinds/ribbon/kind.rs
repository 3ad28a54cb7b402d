//! The ribbon kind on the wire: its frame (kind 5, type 0: the shard table
//! and the solution) and [`Kind`]; it has no delta.

use crate::prelude::*;
use crate::delta::DeltaHeader;
use crate::filter::FilterParams;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::ribbon::{self, RibbonFilter};
use crate::kind::{expect, Kind};

impl Kind for RibbonFilter {
    const KIND: FilterKind = FilterKind::Ribbon;

    fn contains(&self, key: &[u8]) -> bool {
        RibbonFilter::contains(self, key)
    }
    fn len(&self) -> u64 {
        RibbonFilter::len(self)
    }
    /// Its header's: m its rows, k its lower columns.
    fn params(&self) -> &FilterParams {
        self.header_params()
    }
    fn count_ones(&self) -> u64 {
        self.solution_bits()
    }
    /// XXH3-64 (seed 0) of the filter's frame without identity: a ribbon
    /// filter has no delta to name it, so the digest only tells versions
    /// apart (a subscriber's state, a test).
    fn digest(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&encode_ribbon(self))
    }
    /// The ribbon kind has one coding: its solution, raw.
    fn encode_frame(&self, _coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::with_identity(encode_ribbon(self), id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Ribbon)?;
        decode_ribbon_payload(h, payload)
    }
    /// None: a changed set is sent as a full frame (docs/FORMAT.md 8.5).
    fn encode_delta(_old: &Self, _new: &Self, _id: Option<UpdateId>) -> Option<Vec<u8>> {
        None
    }
    fn apply_delta(
        &mut self,
        _held: u64,
        _frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        Err(DecodeError::WrongFrameType {
            found: d.frame.filter_type,
            expected: "a full frame (the ribbon kind has no delta)",
        })
    }
}

/// Encodes a ribbon filter: its shard table and solution in a version-3
/// frame of kind 5, type 0 (docs/FORMAT.md section 8.5).
///
/// The payload is written straight into the frame (its length is known
/// from the filter), so encoding holds one buffer of the frame's size: a
/// `Subscriber` digests a ribbon filter by encoding it, and a payload
/// built apart and then copied into the frame held the solution twice.
pub fn encode_ribbon(f: &RibbonFilter) -> Vec<u8> {
    let fields = HeaderFields::of_kind(FilterKind::Ribbon, FilterType::Raw);
    let len = ribbon::payload::payload_len(f);
    format::frame_with(f.header_params(), f.len(), &fields, len, 0, |out| {
        ribbon::payload::write(f, out)
    })
}

/// Decodes exactly one ribbon-filter frame occupying all of `data`: a
/// length check against the parameters and a copy of the solution.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongKind`] for another kind;
/// [`DecodeError::WrongFrameType`] for a delta (kind 5 has none).
pub fn decode_ribbon(data: &[u8], limits: &DecodeLimits) -> Result<RibbonFilter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Ribbon)?;
    decode_ribbon_payload(&h, payload)
}

pub(crate) fn decode_ribbon_payload(h: &FrameHeader, payload: &[u8]) -> Result<RibbonFilter, DecodeError> {
    // The header admitted type 0 only, m a multiple of 128 and k <= 63.
    ribbon::payload::parse(payload, h.params.seed, h.params.m, h.params.k, h.n).map_err(
        |source| DecodeError::Ribbon {
            offset: h.header_len,
            source,
        },
    )
}
