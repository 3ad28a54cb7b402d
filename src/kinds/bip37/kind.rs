//! BIP37 filters on the wire: a standard frame with hash scheme 4 and
//! `nFlags` as metadata record 4, its deltas (the bit array's), and
//! [`Kind`].

use crate::prelude::*;
use crate::delta::{self, DeltaHeader};
use crate::filter::BloomFilter;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::bip37::{Bip37Error, Bip37Filter};
use crate::kind::{bits_of_filter, expect, Kind};

impl Kind for Bip37Filter {
    const KIND: FilterKind = FilterKind::Standard;
    fn accepts(h: &FrameHeader) -> bool {
        h.kind == FilterKind::Standard && h.bip37_flags.is_some()
    }
    bits_of_filter!();
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => encode_bip37_raw(self),
            coding => encode_with(self, coding),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Standard)?;
        decode_bip37_payload(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        // A delta is the bit array's: it carries no record, and the
        // receiver keeps its base's nFlags.
        BloomFilter::encode_delta(old.filter(), new.filter(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_checked(self.filter_mut(), held, frame, d)
    }
}

/// The header fields of a BIP37 filter's frame of `filter_type`.
fn fields(f: &Bip37Filter, filter_type: FilterType) -> HeaderFields {
    HeaderFields {
        bip37_flags: Some(f.flags()),
        ..HeaderFields::plain(filter_type)
    }
}

fn encode_with(f: &Bip37Filter, coding: Coding) -> Vec<u8> {
    format::encode_bits_fields(f.filter(), fields(f, FilterType::Raw), coding)
}

/// Encodes a BIP37 filter: its bit array coded (whichever of the format's
/// codings is smallest, or raw), in a version-3 standard frame with hash
/// scheme 4 and nFlags as metadata record 4 (docs/FORMAT.md section 6).
pub fn encode_bip37(f: &Bip37Filter) -> Vec<u8> {
    encode_with(f, Coding::Auto)
}

/// Encodes a BIP37 filter with its bit array uncoded (type 0).
pub fn encode_bip37_raw(f: &Bip37Filter) -> Vec<u8> {
    format::raw_frame(f.filter(), &fields(f, FilterType::Raw))
}

/// Decodes exactly one frame holding a BIP37 filter (with its record).
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::NotBip37`] for a frame without a
/// BIP37 record.
pub fn decode_bip37(data: &[u8], limits: &DecodeLimits) -> Result<Bip37Filter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Standard)?;
    decode_bip37_payload(&h, payload)
}

pub(crate) fn decode_bip37_payload(h: &FrameHeader, payload: &[u8]) -> Result<Bip37Filter, DecodeError> {
    let flags = h.bip37_flags.ok_or(DecodeError::NotBip37)?;
    let filter = format::decode_full(h, payload)?;
    // parse() checked scheme 4's rules; from_parts checks again rather
    // than trust that.
    Bip37Filter::from_parts(filter, flags).map_err(|e| match e {
        Bip37Error::Filter(e) => DecodeError::Filter(e),
        _ => DecodeError::NotBip37,
    })
}
