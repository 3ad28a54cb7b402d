//! The partitioned kind on the wire: its frames (its bit array, as a
//! standard filter's, under kind 2), its deltas, and [`Kind`].

use crate::prelude::*;
use crate::delta::{check_base, expect_kind, same_params, inspect_delta, apply_checked_kind, digest, Change, DeltaHeader};
use crate::filter::FilterError;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::partitioned::PartitionedBloomFilter;
use crate::kind::{expect, identified, membership, Kind};

impl Kind for PartitionedBloomFilter {
    const KIND: FilterKind = FilterKind::Partitioned;
    membership!(PartitionedBloomFilter);
    fn count_ones(&self) -> u64 {
        self.bits().count_ones()
    }
    fn digest(&self) -> u64 {
        self.bits().digest()
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::encode_bits(self.bits(), FilterKind::Partitioned, id, None, coding)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Partitioned)?;
        decode_partitioned_payload(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(encode_delta_partitioned(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        apply_partitioned_checked(self, held, frame, d)
    }
}

/// Encodes a partitioned filter: its bit array, coded or raw (whichever is
/// smaller), in a version-3 frame of kind 2.
pub fn encode_partitioned(f: &PartitionedBloomFilter) -> Vec<u8> {
    format::encode_bits(f.bits(), FilterKind::Partitioned, None, None, Coding::Auto)
}

/// Encodes a partitioned filter's bit array static-coded (type 4, kind 2),
/// or raw if that is not smaller: as [`format::encode_static`].
pub fn encode_partitioned_static(f: &PartitionedBloomFilter) -> Vec<u8> {
    format::encode_bits(
        f.bits(),
        FilterKind::Partitioned,
        None,
        None,
        Coding::Static,
    )
}

/// Encodes a partitioned filter's bit array uncoded (type 0, kind 2).
pub fn encode_partitioned_raw(f: &PartitionedBloomFilter) -> Vec<u8> {
    let fields = HeaderFields::of_kind(FilterKind::Partitioned, FilterType::Raw);
    format::raw_frame(f.bits(), &fields)
}

/// Decodes exactly one partitioned-filter frame occupying all of `data`.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongKind`] for another kind.
pub fn decode_partitioned(
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<PartitionedBloomFilter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Partitioned)?;
    decode_partitioned_payload(&h, payload)
}

pub(crate) fn decode_partitioned_payload(
    h: &FrameHeader,
    payload: &[u8],
) -> Result<PartitionedBloomFilter, DecodeError> {
    // The header checked that m is a multiple of k.
    Ok(PartitionedBloomFilter::from_bits(format::decode_bits(h, payload)?)?)
}

internal! {
/// Encodes the smallest delta (conditional or plain, as [`encode_delta`])
/// that turns the partitioned filter `old` into `new`: the XOR of their bit
/// arrays, in a version-3 frame of kind 2.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
pub fn encode_delta_partitioned(
    old: &PartitionedBloomFilter,
    new: &PartitionedBloomFilter,
) -> Result<Vec<u8>, FilterError> {
    encode_delta_partitioned_as(old, new, FilterType::Coded)
}
}

internal! {
/// [`encode_delta_partitioned`] with the delta type chosen:
/// [`FilterType::Delta`] (plain), [`FilterType::ConditionalDelta`], or any
/// other for the smaller (docs/FORMAT.md section 8.2 allows both types).
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
pub fn encode_delta_partitioned_as(
    old: &PartitionedBloomFilter,
    new: &PartitionedBloomFilter,
    ty: FilterType,
) -> Result<Vec<u8>, FilterError> {
    let mut change = Change::new(old.bits(), new.bits(), None)?;
    change.kind = FilterKind::Partitioned;
    Ok(match ty {
        FilterType::Delta => change.plain(new.bits()),
        FilterType::ConditionalDelta => change.conditional(old.bits(), new.bits()),
        _ => change.smallest(old.bits(), new.bits()),
    })
}
}

internal! {
/// Applies a partitioned filter's delta (kind 2) to `base`, as [`apply`]
/// does for a standard filter; on any error `base` is unchanged.
///
/// # Errors
/// As [`apply`]; [`DecodeError::WrongKind`] for a delta of another kind.
pub fn apply_partitioned(
    base: &mut PartitionedBloomFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    let d = inspect_delta(data, limits)?;
    expect_kind(&d, FilterKind::Partitioned)?;
    same_params(&d.frame.params, base.params())?;
    let held = digest(base.bits());
    apply_partitioned_checked(base, held, data, &d).map(|_| ())
}
}

/// [`apply_partitioned`] for a receiver that holds `base`'s digest: a
/// delta for another base is refused before `base` is read or copied.
/// Returns the result's digest. Memory: a copy of the base's bits, made
/// once the base is known to be the right one.
pub(crate) fn apply_partitioned_checked(
    base: &mut PartitionedBloomFilter,
    held: u64,
    data: &[u8],
    d: &DeltaHeader,
) -> Result<u64, DecodeError> {
    expect_kind(d, FilterKind::Partitioned)?;
    same_params(&d.frame.params, base.params())?;
    check_base(d, held)?;
    let mut bits = base.bits().clone();
    let got = apply_checked_kind(&mut bits, held, data, d, FilterKind::Partitioned)?;
    *base = PartitionedBloomFilter::from_bits(bits)?;
    Ok(got)
}
