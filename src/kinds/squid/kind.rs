//! Squid digests on the wire: a standard frame with scheme 2 and Squid's
//! header as metadata record 1, its deltas (the mask's), and [`Kind`].

use crate::prelude::*;
use crate::delta::{self, DeltaHeader};
use crate::filter::BloomFilter;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::squid::{CBlock, SquidDigest};
use crate::kind::{bits_of_filter, expect, Kind};

impl Kind for SquidDigest {
    const KIND: FilterKind = FilterKind::Standard;
    fn accepts(h: &FrameHeader) -> bool {
        h.kind == FilterKind::Standard && h.squid_cblock.is_some()
    }
    bits_of_filter!();
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => encode_squid_raw(self),
            _ => encode_squid(self),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Standard)?;
        decode_squid_payload(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        BloomFilter::encode_delta(old.filter(), new.filter(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        self.apply_delta_checked(held, frame, d)
    }
}

/// Encodes a Squid digest: its mask, coded or raw (whichever is smaller),
/// in a version-3 standard frame with hash scheme 2 and Squid's header as
/// metadata record 1 (docs/FORMAT.md section 6).
pub fn encode_squid(d: &SquidDigest) -> Vec<u8> {
    format::encode_bits(
        d.filter(),
        FilterKind::Standard,
        None,
        Some(*d.cblock().as_bytes()),
        Coding::Auto,
    )
}

/// Encodes a Squid digest with its mask uncoded (type 0), header kept.
pub fn encode_squid_raw(d: &SquidDigest) -> Vec<u8> {
    let fields = HeaderFields {
        squid_cblock: Some(*d.cblock().as_bytes()),
        ..HeaderFields::plain(FilterType::Raw)
    };
    let f = d.filter();
    format::raw_frame(f, &fields)
}

/// Decodes exactly one frame holding a Squid digest (with its header).
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::NotSquid`] for a frame without a
/// Squid header.
pub fn decode_squid(data: &[u8], limits: &DecodeLimits) -> Result<SquidDigest, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Standard)?;
    decode_squid_payload(&h, payload)
}

pub(crate) fn decode_squid_payload(h: &FrameHeader, payload: &[u8]) -> Result<SquidDigest, DecodeError> {
    let cb = h.squid_cblock.ok_or(DecodeError::NotSquid)?;
    let filter = format::decode_full(h, payload)?;
    // parse() checked the header against Squid's rules and the filter's
    // parameters; from_parts checks again rather than trust that.
    SquidDigest::from_parts(CBlock::from_bytes(cb), filter).map_err(|source| {
        DecodeError::Squid {
            offset: h.metadata.map_or(0, |(at, _)| at),
            source,
        }
    })
}

impl SquidDigest {
    /// Applies a delta frame (plain or conditional) to the mask, checked as
    /// [`crate::delta::apply`] checks it; the header's `count` becomes the
    /// delta's declared n (clamped to Squid's 32-bit field). On error
    /// nothing changes.
    ///
    /// # Errors
    /// Any [`DecodeError`] of the delta.
    pub fn apply_delta(&mut self, frame: &[u8], limits: &DecodeLimits) -> Result<(), DecodeError> {
        let (filter, cblock) = self.parts_mut();
        delta::apply(filter, frame, limits)?;
        let count = i32::try_from(filter.len()).unwrap_or(i32::MAX);
        cblock.set_i32(8, count);
        Ok(())
    }

    /// [`SquidDigest::apply_delta`] for a receiver that holds the mask's
    /// digest: a delta for another base is refused before the mask is
    /// read. Returns the result's digest.
    pub(crate) fn apply_delta_checked(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
    ) -> Result<u64, DecodeError> {
        let (filter, cblock) = self.parts_mut();
        let got = delta::apply_checked(filter, held, frame, d)?;
        let count = i32::try_from(filter.len()).unwrap_or(i32::MAX);
        cblock.set_i32(8, count);
        Ok(got)
    }
}
