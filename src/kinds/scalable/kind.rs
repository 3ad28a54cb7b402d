//! The scalable kind on the wire: its frames (kind 3: the policy and every
//! layer), its deltas layer by layer, and [`Kind`].

use crate::prelude::*;
use crate::delta::{check_base, expect_kind, frame_slice, kind_delta_error, inspect_delta, DeltaHeader};
use crate::filter::FilterParams;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::scalable::{self, ScalableBloomFilter};
use crate::kind::{expect, identified, Kind};

/// Parameters reported for a scalable filter without layers (which
/// cannot be built or decoded).
static NO_LAYERS: FilterParams = FilterParams::new(1, 1, 0);

impl Kind for ScalableBloomFilter {
    const KIND: FilterKind = FilterKind::Scalable;
    fn contains(&self, key: &[u8]) -> bool {
        ScalableBloomFilter::contains(self, key)
    }
    fn len(&self) -> u64 {
        ScalableBloomFilter::len(self)
    }
    /// The first layer's (the frame's header declares the total m and the
    /// largest k).
    fn params(&self) -> &FilterParams {
        self.layers().first().map_or(&NO_LAYERS, |l| l.filter.params())
    }
    fn count_ones(&self) -> u64 {
        ScalableBloomFilter::count_ones(self)
    }
    fn digest(&self) -> u64 {
        ScalableBloomFilter::digest(self)
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => encode_scalable_raw(self),
            _ => encode_scalable(self),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Scalable)?;
        decode_scalable_payload(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(encode_delta_scalable(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        apply_scalable_checked(self, held, frame, d, limits)
    }
}

/// The header fields of a scalable filter's frames: m is the sum of the
/// layers' m, k the largest layer k, n the sum of their counts.
pub(crate) fn scalable_params(f: &ScalableBloomFilter) -> crate::FilterParams {
    crate::FilterParams::new(f.total_bits(), f.max_k(), f.seed())
}

/// Encodes a scalable filter: its policy and every layer, each coded or
/// raw, in one version-3 frame of kind 3, type 1 (docs/FORMAT.md 8.3).
pub fn encode_scalable(f: &ScalableBloomFilter) -> Vec<u8> {
    scalable_frame(f, false)
}

/// Encodes a scalable filter with every layer uncoded (the kind's frame is
/// type 1 either way: the layers say how each is held).
pub fn encode_scalable_raw(f: &ScalableBloomFilter) -> Vec<u8> {
    scalable_frame(f, true)
}

fn scalable_frame(f: &ScalableBloomFilter, raw: bool) -> Vec<u8> {
    let fields = HeaderFields::of_kind(FilterKind::Scalable, FilterType::Coded);
    let payload = scalable::encode_payload(f, raw);
    format::frame_bytes(&scalable_params(f), f.len(), &fields, &payload)
}

/// Decodes exactly one scalable-filter frame occupying all of `data`.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongKind`] for another kind.
pub fn decode_scalable(
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<ScalableBloomFilter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Scalable)?;
    decode_scalable_payload(&h, payload)
}

/// What a scalable frame's header declares.
pub(crate) fn scalable_declared(h: &FrameHeader) -> scalable::Declared {
    scalable::Declared {
        m: h.params.m,
        k: h.params.k,
        n: h.n,
        seed: h.params.seed,
    }
}

pub(crate) fn decode_scalable_payload(
    h: &FrameHeader,
    payload: &[u8],
) -> Result<ScalableBloomFilter, DecodeError> {
    if h.filter_type != FilterType::Coded {
        return Err(DecodeError::WrongFrameType {
            found: h.filter_type,
            expected: "a full (coded)",
        });
    }
    scalable::decode_payload(payload, &scalable_declared(h)).map_err(|source| {
        DecodeError::Scalable {
            offset: h.header_len,
            source,
        }
    })
}

internal! {
/// Encodes the delta that turns the scalable filter `old` into `new` (type
/// 2 under kind 3, docs/FORMAT.md section 8.3): layer by layer, the XOR of
/// each layer `old` has, then the layers `new` opened since, whole.
///
/// # Errors
/// [`ScalableError::Layer`](crate::kinds::scalable::ScalableError) if
/// `new` is not `old` grown (same seed, policy and old layers' shapes).
pub fn encode_delta_scalable(
    old: &ScalableBloomFilter,
    new: &ScalableBloomFilter,
) -> Result<Vec<u8>, crate::kinds::scalable::ScalableError> {
    let payload = scalable::encode_delta_payload(old, new)?;
    let fields = HeaderFields::of_kind(FilterKind::Scalable, FilterType::Delta);
    let p = scalable_params(new);
    Ok(format::frame_bytes(&p, new.len(), &fields, &payload))
}
}

internal! {
/// Applies a scalable filter's delta (type 2, kind 3) to `base`: checks
/// the base's digest, XORs each old layer's change, adds the new layers,
/// and checks the result's digest before replacing `base`; on any error
/// `base` is unchanged. Memory while it is checked: the decoded changes
/// and the result (each about the size of the base, plus the new layers).
/// Unlike other deltas, this one can grow the filter (new layers, up to
/// the header's m), so the receiver's expansion limit applies to what it
/// may add: ⌈(m − the base's bits) / 8⌉ bytes against `max_expansion` ×
/// the frame's length, or the floor ([`DecodeLimits::admits_output`]: new
/// layers of zeros a publisher opened are taken as its empty frames are),
/// checked before anything is decoded.
///
/// # Errors
/// As [`apply`]; [`DecodeError::WrongKind`] for a delta of another kind;
/// [`DecodeError::LimitExceeded`] for a delta that may add more than the
/// expansion limit allows.
pub fn apply_scalable(
    base: &mut ScalableBloomFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    let d = inspect_delta(data, limits)?;
    expect_kind(&d, FilterKind::Scalable)?;
    scalable_seed(&d, base)?;
    let held = base.digest();
    apply_scalable_checked(base, held, data, &d, limits).map(|_| ())
}
}

/// A scalable delta's seed against its base's: `ParamsMismatch` unless equal.
fn scalable_seed(d: &DeltaHeader, base: &ScalableBloomFilter) -> Result<(), DecodeError> {
    if d.frame.params.seed != base.seed() {
        return Err(DecodeError::ParamsMismatch {
            frame: d.frame.params,
            filter: scalable_params(base),
        });
    }
    Ok(())
}

/// [`apply_scalable`] for a receiver that holds `base`'s digest: a delta
/// for another base is refused before `base` is read. Returns the
/// result's digest.
pub(crate) fn apply_scalable_checked(
    base: &mut ScalableBloomFilter,
    held: u64,
    data: &[u8],
    d: &DeltaHeader,
    limits: &DecodeLimits,
) -> Result<u64, DecodeError> {
    expect_kind(d, FilterKind::Scalable)?;
    scalable_seed(d, base)?;
    check_base(d, held)?;
    let h = &d.frame;
    // The new layers are allocated as they are decoded, within the
    // header's m less the base's bits (`scalable::apply_delta_payload`):
    // held to the expansion limit as a full frame's output is.
    let added = h.params.m.saturating_sub(base.total_bits()).div_ceil(8);
    format::header::check_expansion(limits, added, added, h.frame_len())?;
    let at = h.header_len;
    let payload = frame_slice(data, at, h.payload_len as usize)?;
    let declared = scalable_declared(h);
    scalable::apply_delta_payload(base, payload, &declared, Some(held))
        .map_err(|e| kind_delta_error(e, |source| DecodeError::Scalable { offset: at, source }))?;
    Ok(d.result_digest)
}
