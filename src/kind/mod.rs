//! One interface for every filter kind: what a frame, a delta and a
//! publisher/subscriber need of a filter, whatever its kind.
//!
//! [`Kind`] is implemented by each in-memory filter type
//! ([`BloomFilter`](crate::BloomFilter),
//! [`PartitionedBloomFilter`](crate::kinds::partitioned::PartitionedBloomFilter),
//! [`CountingBloomFilter`](crate::CountingBloomFilter),
//! [`ScalableBloomFilter`](crate::kinds::scalable::ScalableBloomFilter),
//! [`SparseFilter`](crate::kinds::sparse::SparseFilter),
//! [`SquidDigest`](crate::kinds::squid::SquidDigest)) and by
//! [`AnyFilter`], which dispatches to the kind a frame
//! declares. [`crate::sync`]'s `Publisher` and `Subscriber` are generic over
//! it, so every kind gets ordered, identified updates and the same refusals.
//!
//! The trait sits above `format` and `delta` in the pipeline (it names
//! frames and deltas); each kind's payload codecs stay in `kinds/`, below
//! the frame layer, and the implementations here only connect them.

mod any;
pub use any::{decode_any, encode_any, AnyFilter};

use crate::delta::{self, DeltaHeader};
use crate::prelude::*;
use crate::format::{self, Coding, DecodeError, DecodeLimits, FilterKind, FrameHeader, UpdateId};

/// A filter kind: its frames, its deltas and the digest that names a
/// version of it.
pub trait Kind: Clone + core::fmt::Debug + PartialEq + Sized {
    /// The wire kind of this type's frames (for [`AnyFilter`],
    /// which holds every kind, the standard one).
    const KIND: FilterKind;

    /// Whether this type holds the full frames of header `h` (its kind,
    /// and for a Squid digest its metadata record). A typed receiver
    /// refuses other frames as [`DecodeError::WrongKind`]. By default, the
    /// frames of [`Kind::KIND`].
    fn accepts(h: &FrameHeader) -> bool {
        h.kind == Self::KIND
    }

    /// Whether `key` may be in the set (no false negatives).
    fn contains(&self, key: &[u8]) -> bool;

    /// The number of keys the sender declared.
    fn len(&self) -> u64;

    /// The filter's parameters: m, k, seed and hash scheme. For the
    /// scalable kind, those of its first layer (its frame's header declares
    /// the total m and the largest k); for the ribbon kind, its header's:
    /// m its rows, k its lower columns.
    fn params(&self) -> &crate::filter::FilterParams;

    /// The number of one bits: for the counting kind, the nonzero
    /// counters; for the sparse kind, its positions; for the ribbon kind,
    /// the bits of its solution, which have no per-key meaning.
    fn count_ones(&self) -> u64;

    /// Whether the sender declared no keys.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The content digest that deltas name as their base and result
    /// (docs/FORMAT.md, type 2 and section 8). A receiver keeps it with
    /// the filter, so that a delta for another base is refused in work
    /// proportional to the frame alone.
    fn digest(&self) -> u64;

    /// A full frame of this filter with `coding`, carrying `id` if given.
    /// The table on [`Coding`] says what each kind writes for each coding;
    /// a coding the kind lacks ([`Coding::applies_to`] is false) is
    /// written as `Auto`, so check it first where a caller must refuse it.
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> alloc::vec::Vec<u8>;

    /// Decodes the payload of a checked full frame (header `h`, limits
    /// and CRC already checked); `limits` also bounds the work a payload
    /// may ask for (a counting frame's value decisions).
    ///
    /// # Errors
    /// [`DecodeError::WrongKind`] for a frame this type does not hold; any
    /// error of the payload.
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError>;

    /// The smallest delta frame that turns `old` into `new`, carrying `id`
    /// if given; `None` when no delta can describe the change (other
    /// parameters, a scalable filter that did not grow from `old`) and a
    /// full frame must be sent.
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<alloc::vec::Vec<u8>>;

    /// Applies the checked delta `d` (frame `frame`) to `self`, whose
    /// digest the caller holds as `held`; returns the result's digest.
    /// A delta that names another base than `held` is refused before
    /// `self` is read or copied. On any error `self` is unchanged.
    ///
    /// # Errors
    /// [`DecodeError::WrongKind`], [`DecodeError::ParamsMismatch`],
    /// [`DecodeError::WrongBase`], [`DecodeError::ResultMismatch`], or any
    /// error of the delta's payload.
    /// `limits` bounds what the delta may add (a scalable delta's new
    /// layers, held to `limits.max_expansion`).
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError>;
}

/// `WrongKind` unless `h` is a frame of `kind`.
pub(crate) fn expect(h: &FrameHeader, kind: FilterKind) -> Result<(), DecodeError> {
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
pub(crate) fn identified(frame: Option<Vec<u8>>, id: Option<UpdateId>) -> Option<Vec<u8>> {
    let frame = frame?;
    id.is_none_or(|id| id.seq > 0)
        .then(|| format::with_identity(frame, id))
}

/// `contains`, `len` and `params` of a kind whose type has them as
/// inherent methods.
macro_rules! membership {
    ($ty:ty) => {
        fn contains(&self, key: &[u8]) -> bool {
            <$ty>::contains(self, key)
        }
        fn len(&self) -> u64 {
            <$ty>::len(self)
        }
        fn params(&self) -> &crate::filter::FilterParams {
            <$ty>::params(self)
        }
    };
}
pub(crate) use membership;

/// The [`Kind`] methods of a foreign format held as a standard filter and
/// a record (a Squid digest, a BIP37 filter): membership, counts and the
/// digest are its bit array's, `self.filter()`; the record changes none.
macro_rules! bits_of_filter {
    () => {
        fn contains(&self, key: &[u8]) -> bool {
            self.filter().contains(key)
        }
        fn len(&self) -> u64 {
            self.filter().len()
        }
        fn params(&self) -> &crate::filter::FilterParams {
            self.filter().params()
        }
        fn count_ones(&self) -> u64 {
            self.filter().count_ones()
        }
        fn digest(&self) -> u64 {
            self.filter().digest()
        }
    };
}
pub(crate) use bits_of_filter;

/// Decodes exactly one full frame of kind `F` occupying all of `data`,
/// under `limits` (header, limits and CRC checked before the payload is
/// decoded). `F = AnyFilter` takes any kind, as [`crate::decode_any`].
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongKind`] for a frame of another
/// kind; [`DecodeError::WrongFrameType`] for a delta.
///
/// # Examples
/// ```
/// use compressed_bloom::kinds::sparse::SparseFilter;
/// use compressed_bloom::{decode_as, Coding, FilterParams, Kind};
/// let f = SparseFilter::from_keys(FilterParams::new(1 << 40, 1, 3), [b"a", b"b"])?;
/// let frame = f.encode_frame(Coding::Auto, None);
/// let back: SparseFilter = decode_as(&frame, &Default::default())?;
/// assert_eq!(back, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_as<F: Kind>(data: &[u8], limits: &DecodeLimits) -> Result<F, DecodeError> {
    let (h, payload) = format::checked_whole_frame(data, limits)?;
    if h.filter_type.is_delta() {
        return Err(DecodeError::WrongFrameType {
            found: h.filter_type,
            expected: "a full (raw or coded)",
        });
    }
    if !F::accepts(&h) {
        return Err(DecodeError::WrongKind {
            found: h.kind,
            expected: F::KIND,
        });
    }
    F::decode_frame(&h, payload, limits)
}

/// Applies a delta frame to `base`, a filter of any kind: checks the frame
/// (header, limits, CRC), hashes `base` once to check that the delta
/// applies to it, and replaces `base` with the result once its digest is
/// verified. On any error `base` is unchanged. A receiver that keeps the
/// digest of what it holds saves the hash: [`crate::Subscriber`] does.
///
/// # Errors
/// As [`Kind::apply_delta`], and any error of the frame.
pub fn apply_delta<F: Kind>(base: &mut F, frame: &[u8], limits: &DecodeLimits) -> Result<(), DecodeError> {
    let d = delta::inspect_delta(frame, limits)?;
    let held = base.digest();
    base.apply_delta(held, frame, &d, limits).map(|_| ())
}
