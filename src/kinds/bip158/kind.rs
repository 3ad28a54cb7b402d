//! BIP158 filters on the wire: a sparse frame (kind 4, type 1) under hash
//! scheme 3, with the block hash as metadata record 3 and the repeated
//! values before the position list (docs/FORMAT.md section 8.4,
//! "Scheme 3"), and [`Kind`]. A block's filter never changes, so there is
//! no delta.

use crate::delta::DeltaHeader;
use crate::filter::FilterParams;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kind::{expect, Kind};
use crate::kinds::bip158::{Bip158Error, Bip158Filter};
use crate::kinds::sparse::{self, decode_positions};
use crate::prelude::*;
use crate::wire::varint;

impl Kind for Bip158Filter {
    const KIND: FilterKind = FilterKind::Sparse;
    fn accepts(h: &FrameHeader) -> bool {
        h.kind == FilterKind::Sparse && h.block_hash.is_some()
    }
    fn contains(&self, key: &[u8]) -> bool {
        Bip158Filter::contains(self, key)
    }
    fn len(&self) -> u64 {
        Bip158Filter::len(self)
    }
    fn params(&self) -> &FilterParams {
        self.sparse().params()
    }
    fn count_ones(&self) -> u64 {
        self.sparse().count_ones()
    }
    /// The sparse list's digest (its positions under the block's key).
    fn digest(&self) -> u64 {
        sparse::digest(self.sparse())
    }
    /// One coding: the position list.
    fn encode_frame(&self, _coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::with_identity(encode_bip158(self), id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Sparse)?;
        decode_bip158_payload(h, payload, limits)
    }
    /// None: a block's filter is sent whole.
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
            expected: "a full frame (a BIP158 filter has no delta)",
        })
    }
}

/// Encodes a BIP158 filter: a version-3 sparse frame under hash scheme 3
/// whose n is N, with the block hash as metadata record 3; the payload is
/// the repeat count, the repeats' gaps, then the distinct values as a
/// sparse position list.
pub fn encode_bip158(f: &Bip158Filter) -> Vec<u8> {
    let mut payload = Vec::new();
    varint::put(&mut payload, f.repeats().len() as u64);
    let mut last = 0u64;
    for &r in f.repeats() {
        varint::put(&mut payload, r.saturating_sub(last));
        last = r;
    }
    let positions: Vec<u64> = f.sparse().positions().collect();
    sparse::encode_payload(&positions, f.sparse().params().m, &mut payload);
    let fields = HeaderFields {
        block_hash: Some(*f.block_hash()),
        ..HeaderFields::of_kind(FilterKind::Sparse, FilterType::Coded)
    };
    format::frame_bytes(f.sparse().params(), f.len(), &fields, &payload)
}

/// Decodes exactly one frame holding a BIP158 filter.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::NotBip158`] for a frame without a
/// block hash (metadata record 3).
pub fn decode_bip158(data: &[u8], limits: &DecodeLimits) -> Result<Bip158Filter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Sparse)?;
    decode_bip158_payload(&h, payload, limits)
}

/// The payload of a checked scheme-3 frame: the repeats (at most n, each
/// at least the one before and below m, one varint byte or more each, so
/// their count is held to the payload's length before it is allocated),
/// then the position list as the sparse kind decodes it, then the two
/// checked against each other and n.
pub(crate) fn decode_bip158_payload(
    h: &FrameHeader,
    payload: &[u8],
    limits: &DecodeLimits,
) -> Result<Bip158Filter, DecodeError> {
    let block_hash = h.block_hash.ok_or(DecodeError::NotBip158)?;
    let offset = h.header_len;
    let bad = |reason| DecodeError::Bip158 {
        offset,
        source: Bip158Error::BadRepeats { reason },
    };
    let (d, mut at) = varint::get(payload).map_err(|_| bad("bad varint for the count"))?;
    if d > h.n || d > payload.len() as u64 {
        return Err(bad("more repeats than n or the payload's bytes"));
    }
    let mut repeats = Vec::with_capacity(usize::try_from(d).unwrap_or(0));
    let mut last = 0u64;
    for _ in 0..d {
        let rest = payload.get(at..).unwrap_or_default();
        let (gap, used) = varint::get(rest).map_err(|_| bad("bad varint for a repeat"))?;
        at = at.saturating_add(used);
        last = last
            .checked_add(gap)
            .filter(|&r| r < h.params.m)
            .ok_or_else(|| bad("a repeat at or past m"))?;
        repeats.push(last);
    }
    let positions = payload.get(at..).unwrap_or_default();
    let set = decode_positions(h, positions, offset.saturating_add(at), limits)?;
    Bip158Filter::from_parts(block_hash, set, repeats)
        .map_err(|source| DecodeError::Bip158 { offset, source })
}
