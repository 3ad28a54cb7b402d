//! The counting kind on the wire: its frames (kind 1: the counters raw, or
//! coded as a bit map and values), its deltas, and [`Kind`].

use crate::prelude::*;
use crate::delta::{check_base, expect_kind, frame_slice, kind_delta_error, same_params, inspect_delta, DeltaHeader};
use crate::filter::FilterError;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::counting::{self, CountingBloomFilter};
use crate::kind::{expect, identified, membership, Kind};

impl Kind for CountingBloomFilter {
    const KIND: FilterKind = FilterKind::Counting;
    membership!(CountingBloomFilter);
    fn count_ones(&self) -> u64 {
        self.count_nonzero()
    }
    fn digest(&self) -> u64 {
        crate::kinds::counting::digest(self)
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => encode_counting_raw(self),
            _ => encode_counting(self),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Counting)?;
        decode_counting_payload(h, payload, limits)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(encode_delta_counting(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        apply_counting_checked(self, held, frame, d, limits)
    }
}

/// Encodes a counting filter (kind 1, docs/FORMAT.md section 8.1): its
/// counters coded (bit map, then values) if that is smaller than the raw
/// ⌈m/2⌉ bytes, raw otherwise.
pub fn encode_counting(f: &CountingBloomFilter) -> Vec<u8> {
    let coded = counting::coded_payload(f);
    let (ty, payload) = if (coded.len() as u64) < counting::raw_len(f.params().m) {
        (FilterType::Coded, coded)
    } else {
        (FilterType::Raw, counting::raw_payload(f))
    };
    let fields = HeaderFields::of_kind(FilterKind::Counting, ty);
    format::frame_bytes(f.params(), f.len(), &fields, &payload)
}

/// Encodes a counting filter's counters uncoded (type 0, kind 1).
pub fn encode_counting_raw(f: &CountingBloomFilter) -> Vec<u8> {
    let fields = HeaderFields::of_kind(FilterKind::Counting, FilterType::Raw);
    format::frame_bytes(f.params(), f.len(), &fields, &counting::raw_payload(f))
}

/// Decodes exactly one counting-filter frame occupying all of `data`.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongKind`] for another kind.
pub fn decode_counting(
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<CountingBloomFilter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Counting)?;
    decode_counting_payload(&h, payload, limits)
}

pub(crate) fn decode_counting_payload(
    h: &FrameHeader,
    payload: &[u8],
    limits: &DecodeLimits,
) -> Result<CountingBloomFilter, DecodeError> {
    let budget = counting::decision_budget(limits, h.frame_len());
    let decoded = match h.filter_type {
        FilterType::Raw => counting::decode_raw(payload, h.params, h.n),
        FilterType::Coded => counting::decode_coded(payload, h.params, h.n, h.header_len, budget),
        found => {
            return Err(DecodeError::WrongFrameType {
                found,
                expected: "a full (raw or coded)",
            })
        }
    };
    decoded.map_err(|e| match e {
        counting::PayloadError::NoMemory(e) => e.into(),
        counting::PayloadError::At { offset, source } => format::counting_error(offset, source),
    })
}

internal! {
/// Encodes the delta that turns the counting filter `old` into `new` (type
/// 2 under kind 1, docs/FORMAT.md section 8.1): the map of changed counters
/// and their new values.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' parameters differ, or no
/// memory for the map.
pub fn encode_delta_counting(
    old: &CountingBloomFilter,
    new: &CountingBloomFilter,
) -> Result<Vec<u8>, FilterError> {
    if old.params() != new.params() {
        return Err(FilterError::ParamsMismatch {
            left: *old.params(),
            right: *new.params(),
        });
    }
    let payload = counting::encode_delta_payload(old, new)?;
    let fields = HeaderFields::of_kind(FilterKind::Counting, FilterType::Delta);
    Ok(format::frame_bytes(new.params(), new.len(), &fields, &payload))
}
}

internal! {
/// Applies a counting filter's delta (type 2, kind 1) to `base`: checks the
/// base's digest, sets the changed counters, and checks the result's digest
/// before replacing `base`; on any error `base` is unchanged. Memory: the
/// result's counters and the map of changes.
///
/// # Errors
/// As [`apply`]; [`DecodeError::WrongKind`] for a delta of another kind.
pub fn apply_counting(
    base: &mut CountingBloomFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    let d = inspect_delta(data, limits)?;
    expect_kind(&d, FilterKind::Counting)?;
    same_params(&d.frame.params, base.params())?;
    let held = counting::digest(base);
    apply_counting_checked(base, held, data, &d, limits).map(|_| ())
}
}

/// [`apply_counting`] for a receiver that holds `base`'s digest: a delta
/// for another base is refused before `base` is read or copied. Returns
/// the result's digest.
pub(crate) fn apply_counting_checked(
    base: &mut CountingBloomFilter,
    held: u64,
    data: &[u8],
    d: &DeltaHeader,
    limits: &DecodeLimits,
) -> Result<u64, DecodeError> {
    expect_kind(d, FilterKind::Counting)?;
    let h = &d.frame;
    same_params(&h.params, base.params())?;
    check_base(d, held)?;
    let at = h.header_len;
    let payload = frame_slice(data, at, h.payload_len as usize)?;
    let budget = counting::decision_budget(limits, h.frame_len());
    let result = counting::apply_delta_payload(base, payload, h.n, budget, Some(held))
        .map_err(|e| kind_delta_error(e, |source| format::counting_error(at, source)))?;
    *base = result;
    Ok(d.result_digest)
}
