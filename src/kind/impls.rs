//! [`Kind`] for each filter type: the kind's frame and delta codecs from
//! `format`, `delta` and `kinds/`, joined under one interface.

use super::{check_base, Kind};
use crate::counting::CountingBloomFilter;
use crate::delta::{self, DeltaHeader};
use crate::filter::BloomFilter;
use crate::format::any::{self, AnyFilter};
use crate::format::{self, Coding, DecodeError, DecodeLimits, FilterKind, FrameHeader, UpdateId};
use crate::kinds::partitioned::PartitionedBloomFilter;
use crate::kinds::ribbon::RibbonFilter;
use crate::kinds::scalable::ScalableBloomFilter;
use crate::kinds::sparse::{self, SparseFilter};
use crate::prelude::*;
use crate::squid::SquidDigest;

/// `WrongKind` unless `h` is a frame of `kind`.
fn expect(h: &FrameHeader, kind: FilterKind) -> Result<(), DecodeError> {
    if h.kind == kind {
        Ok(())
    } else {
        Err(DecodeError::WrongKind {
            found: h.kind,
            expected: kind,
        })
    }
}

/// A kind's delta frame with the identity `id`, if given. A delta with an
/// identity needs a sequence number above 0 (the first version of an epoch
/// is always a full frame), so there is none for seq 0.
fn identified(frame: Option<Vec<u8>>, id: Option<UpdateId>) -> Option<Vec<u8>> {
    let frame = frame?;
    id.is_none_or(|id| id.seq > 0)
        .then(|| format::with_identity(frame, id))
}

/// `contains` and `len` of a kind whose type has them as inherent methods.
macro_rules! membership {
    ($ty:ty) => {
        fn contains(&self, key: &[u8]) -> bool {
            <$ty>::contains(self, key)
        }
        fn len(&self) -> u64 {
            <$ty>::len(self)
        }
    };
}

impl Kind for BloomFilter {
    const KIND: FilterKind = FilterKind::Standard;
    fn accepts(h: &FrameHeader) -> bool {
        // A Squid digest's frame holds a standard filter (its mask), as
        // `decode` reads it.
        h.kind == FilterKind::Standard
    }
    membership!(BloomFilter);
    fn digest(&self) -> u64 {
        BloomFilter::digest(self)
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::encode_bits(self, FilterKind::Standard, id, None, coding)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        format::decode_full(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        match id {
            Some(id) => delta::encode_delta_with_identity(old, new, id).ok(),
            None => delta::encode_delta(old, new).ok(),
        }
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_checked(self, held, frame, d)
    }
}

impl Kind for PartitionedBloomFilter {
    const KIND: FilterKind = FilterKind::Partitioned;
    membership!(PartitionedBloomFilter);
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
        any::decode_partitioned_payload(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(delta::encode_delta_partitioned(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_partitioned_checked(self, held, frame, d)
    }
}

impl Kind for CountingBloomFilter {
    const KIND: FilterKind = FilterKind::Counting;
    membership!(CountingBloomFilter);
    fn digest(&self) -> u64 {
        crate::kinds::counting::digest(self)
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => any::encode_counting_raw(self),
            _ => any::encode_counting(self),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Counting)?;
        any::decode_counting_payload(h, payload, limits)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(delta::encode_delta_counting(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_counting_checked(self, held, frame, d, limits)
    }
}

impl Kind for ScalableBloomFilter {
    const KIND: FilterKind = FilterKind::Scalable;
    membership!(ScalableBloomFilter);
    fn digest(&self) -> u64 {
        ScalableBloomFilter::digest(self)
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => any::encode_scalable_raw(self),
            _ => any::encode_scalable(self),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Scalable)?;
        any::decode_scalable_payload(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(delta::encode_delta_scalable(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_scalable_checked(self, held, frame, d, limits)
    }
}

impl Kind for SparseFilter {
    const KIND: FilterKind = FilterKind::Sparse;
    membership!(SparseFilter);
    fn digest(&self) -> u64 {
        sparse::digest(self)
    }
    fn encode_frame(&self, _coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::with_identity(any::encode_sparse(self), id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Sparse)?;
        any::decode_sparse_payload(h, payload, limits)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(delta::encode_delta_sparse(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_sparse_checked(self, held, frame, d, limits)
    }
}

impl Kind for SquidDigest {
    const KIND: FilterKind = FilterKind::Standard;
    fn accepts(h: &FrameHeader) -> bool {
        h.kind == FilterKind::Standard && h.squid_cblock.is_some()
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.filter().contains(key)
    }
    fn len(&self) -> u64 {
        self.filter().len()
    }
    fn digest(&self) -> u64 {
        self.filter().digest()
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        let frame = match coding {
            Coding::Raw => any::encode_squid_raw(self),
            _ => any::encode_squid(self),
        };
        format::with_identity(frame, id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Standard)?;
        any::decode_squid_payload(h, payload)
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

impl Kind for RibbonFilter {
    const KIND: FilterKind = FilterKind::Ribbon;

    membership!(RibbonFilter);
    /// XXH3-64 (seed 0) of the filter's frame without identity: a ribbon
    /// filter has no delta to name it, so the digest only tells versions
    /// apart (a subscriber's state, a test).
    fn digest(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&any::encode_ribbon(self))
    }
    /// The ribbon kind has one coding: its solution, raw.
    fn encode_frame(&self, _coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::with_identity(any::encode_ribbon(self), id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Ribbon)?;
        any::decode_ribbon_payload(h, payload)
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

/// Runs `$e` with `$f` bound to the filter inside any variant.
macro_rules! each {
    ($any:expr, $f:ident => $e:expr) => {
        match $any {
            AnyFilter::Standard($f) => $e,
            AnyFilter::Counting($f) => $e,
            AnyFilter::Partitioned($f) => $e,
            AnyFilter::Scalable($f) => $e,
            AnyFilter::Sparse($f) => $e,
            AnyFilter::Squid($f) => $e,
            AnyFilter::Ribbon($f) => $e,
        }
    };
}

impl Kind for AnyFilter {
    const KIND: FilterKind = FilterKind::Standard;
    fn accepts(h: &FrameHeader) -> bool {
        h.kind.is_supported()
    }
    fn contains(&self, key: &[u8]) -> bool {
        each!(self, f => Kind::contains(f, key))
    }
    fn len(&self) -> u64 {
        each!(self, f => Kind::len(f))
    }
    fn digest(&self) -> u64 {
        each!(self, f => Kind::digest(f))
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        each!(self, f => Kind::encode_frame(f, coding, id))
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        any::decode_any_payload(h, payload, limits)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        match (old, new) {
            (AnyFilter::Standard(a), AnyFilter::Standard(b)) => Kind::encode_delta(a, b, id),
            (AnyFilter::Counting(a), AnyFilter::Counting(b)) => Kind::encode_delta(a, b, id),
            (AnyFilter::Partitioned(a), AnyFilter::Partitioned(b)) => Kind::encode_delta(a, b, id),
            (AnyFilter::Scalable(a), AnyFilter::Scalable(b)) => Kind::encode_delta(a, b, id),
            (AnyFilter::Sparse(a), AnyFilter::Sparse(b)) => Kind::encode_delta(a, b, id),
            (AnyFilter::Squid(a), AnyFilter::Squid(b)) => Kind::encode_delta(a, b, id),
            (AnyFilter::Ribbon(a), AnyFilter::Ribbon(b)) => Kind::encode_delta(a, b, id),
            _ => None,
        }
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        // The base is checked first, so a delta for another kind's filter
        // is refused for its digest before its kind is looked at.
        check_base(d, held)?;
        each!(self, f => Kind::apply_delta(f, held, frame, d, limits))
    }
}
