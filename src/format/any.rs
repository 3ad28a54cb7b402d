//! One entry point for every kind: [`decode_any`] decodes a full frame into
//! whichever kind its header declares ([`AnyFilter`]), checked against the
//! caller's [`DecodeLimits`] (including the kinds it accepts), and
//! [`encode_any`] writes any kind back. Each kind also has typed functions.

use crate::prelude::*;
use super::header::{FilterKind, FilterType, FrameHeader, HeaderFields};
use super::{checked_whole_frame, DecodeError, DecodeLimits};
use crate::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::kinds::counting;
use crate::kinds::scalable::{self, ScalableBloomFilter};
use crate::kinds::partitioned::PartitionedBloomFilter;
use crate::kinds::ribbon::{self, RibbonFilter};
use crate::kinds::sparse::{self, SparseFilter};
use crate::squid::{CBlock, SquidDigest};

/// A decoded filter of any kind.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnyFilter {
    /// [`FilterKind::Standard`].
    Standard(BloomFilter),
    /// [`FilterKind::Counting`].
    Counting(CountingBloomFilter),
    /// [`FilterKind::Partitioned`].
    Partitioned(PartitionedBloomFilter),
    /// [`FilterKind::Scalable`].
    Scalable(ScalableBloomFilter),
    /// [`FilterKind::Sparse`].
    Sparse(SparseFilter),
    /// [`FilterKind::Ribbon`].
    Ribbon(RibbonFilter),
    /// A Squid cache digest: a standard filter with Squid's hashing and
    /// Squid's header (metadata tag 1).
    Squid(SquidDigest),
}

impl AnyFilter {
    /// The filter's kind.
    pub fn kind(&self) -> FilterKind {
        match self {
            AnyFilter::Standard(_) => FilterKind::Standard,
            AnyFilter::Counting(_) => FilterKind::Counting,
            AnyFilter::Partitioned(_) => FilterKind::Partitioned,
            AnyFilter::Scalable(_) => FilterKind::Scalable,
            AnyFilter::Sparse(_) => FilterKind::Sparse,
            AnyFilter::Ribbon(_) => FilterKind::Ribbon,
            AnyFilter::Squid(_) => FilterKind::Standard,
        }
    }

    /// Whether `key` may be in the set (no false negatives).
    pub fn contains(&self, key: &[u8]) -> bool {
        match self {
            AnyFilter::Standard(f) => f.contains(key),
            AnyFilter::Counting(f) => f.contains(key),
            AnyFilter::Partitioned(f) => f.contains(key),
            AnyFilter::Scalable(f) => f.contains(key),
            AnyFilter::Sparse(f) => f.contains(key),
            AnyFilter::Ribbon(f) => f.contains(key),
            AnyFilter::Squid(d) => d.filter().contains(key),
        }
    }

    /// The number of keys the sender declared.
    pub fn len(&self) -> u64 {
        match self {
            AnyFilter::Standard(f) => f.len(),
            AnyFilter::Counting(f) => f.len(),
            AnyFilter::Partitioned(f) => f.len(),
            AnyFilter::Scalable(f) => f.len(),
            AnyFilter::Sparse(f) => f.len(),
            AnyFilter::Ribbon(f) => f.len(),
            AnyFilter::Squid(d) => d.filter().len(),
        }
    }

    /// Whether the sender declared no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The filter's parameters (m, k, seed, hash scheme); for the scalable
    /// kind, those of its first layer (its frame's header declares the
    /// total m and the largest k); for the ribbon kind, its header's: m
    /// its rows, k its lower columns.
    pub fn params(&self) -> &crate::FilterParams {
        match self {
            AnyFilter::Ribbon(f) => f.header_params(),
            AnyFilter::Scalable(f) => f
                .layers()
                .first()
                .map_or(&SCALABLE_NONE, |l| l.filter.params()),
            AnyFilter::Standard(f) => f.params(),
            AnyFilter::Counting(f) => f.params(),
            AnyFilter::Partitioned(f) => f.params(),
            AnyFilter::Sparse(f) => f.params(),
            AnyFilter::Squid(d) => d.filter().params(),
        }
    }

    /// The number of one bits (for the ribbon kind, the bits of its
    /// solution, which have no per-key meaning).
    pub fn count_ones(&self) -> u64 {
        match self {
            AnyFilter::Standard(f) => f.count_ones(),
            AnyFilter::Counting(f) => f.count_nonzero(),
            AnyFilter::Scalable(f) => f.count_ones(),
            AnyFilter::Partitioned(f) => f.bits().count_ones(),
            AnyFilter::Sparse(f) => f.count_ones(),
            AnyFilter::Ribbon(f) => f.solution_bits(),
            AnyFilter::Squid(d) => d.filter().count_ones(),
        }
    }
}

/// Parameters reported for a scalable filter without layers (which
/// cannot be built or decoded).
static SCALABLE_NONE: crate::FilterParams = crate::FilterParams::new(1, 1, 0);

/// Decodes exactly one full frame of any kind occupying all of `data`.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::UnsupportedKind`] for a kind this
/// build or `limits.kinds` does not accept; [`DecodeError::WrongFrameType`]
/// for a delta.
pub fn decode_any(data: &[u8], limits: &DecodeLimits) -> Result<AnyFilter, DecodeError> {
    let (h, payload) = checked_whole_frame(data, limits)?;
    decode_any_payload(&h, payload, limits)
}

/// Decodes the payload of a checked full frame into its kind.
pub(crate) fn decode_any_payload(
    h: &FrameHeader,
    payload: &[u8],
    limits: &DecodeLimits,
) -> Result<AnyFilter, DecodeError> {
    match h.kind {
        FilterKind::Standard if h.squid_cblock.is_some() => {
            decode_squid_payload(h, payload).map(AnyFilter::Squid)
        }
        FilterKind::Standard => super::decode_full(h, payload).map(AnyFilter::Standard),
        FilterKind::Counting => {
            decode_counting_payload(h, payload, limits).map(AnyFilter::Counting)
        }
        FilterKind::Scalable => decode_scalable_payload(h, payload).map(AnyFilter::Scalable),
        FilterKind::Partitioned => decode_partitioned_payload(h, payload).map(AnyFilter::Partitioned),
        FilterKind::Sparse => decode_sparse_payload(h, payload, limits).map(AnyFilter::Sparse),
        FilterKind::Ribbon => decode_ribbon_payload(h, payload).map(AnyFilter::Ribbon),
    }
}

/// Encodes a filter of any kind as its smallest full frame.
pub fn encode_any(f: &AnyFilter) -> Vec<u8> {
    match f {
        AnyFilter::Standard(f) => super::encode(f),
        AnyFilter::Counting(f) => encode_counting(f),
        AnyFilter::Scalable(f) => encode_scalable(f),
        AnyFilter::Partitioned(f) => encode_partitioned(f),
        AnyFilter::Sparse(f) => encode_sparse(f),
        AnyFilter::Ribbon(f) => encode_ribbon(f),
        AnyFilter::Squid(d) => encode_squid(d),
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
    super::frame_with(f.header_params(), f.len(), &fields, len, 0, |out| {
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
    super::frame_bytes(f.params(), f.len(), &fields, &payload)
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
    super::frame_bytes(&scalable_params(f), f.len(), &fields, &payload)
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

/// Encodes a counting filter's counters uncoded (type 0, kind 1).
pub fn encode_counting_raw(f: &CountingBloomFilter) -> Vec<u8> {
    let fields = HeaderFields::of_kind(FilterKind::Counting, FilterType::Raw);
    super::frame_bytes(f.params(), f.len(), &fields, &counting::raw_payload(f))
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
        counting::PayloadError::At { offset, source } => super::counting_error(offset, source),
    })
}

/// Encodes a Squid digest: its mask, coded or raw (whichever is smaller),
/// in a version-3 standard frame with hash scheme 2 and Squid's header as
/// metadata record 1 (docs/FORMAT.md section 6).
pub fn encode_squid(d: &SquidDigest) -> Vec<u8> {
    super::encode_bits(
        d.filter(),
        FilterKind::Standard,
        None,
        Some(*d.cblock().as_bytes()),
        super::Coding::Auto,
    )
}

/// Encodes a Squid digest with its mask uncoded (type 0), header kept.
pub fn encode_squid_raw(d: &SquidDigest) -> Vec<u8> {
    let fields = HeaderFields {
        squid_cblock: Some(*d.cblock().as_bytes()),
        ..HeaderFields::plain(FilterType::Raw)
    };
    let f = d.filter();
    super::raw_frame(f, &fields)
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
    let filter = super::decode_full(h, payload)?;
    // parse() checked the header against Squid's rules and the filter's
    // parameters; from_parts checks again rather than trust that.
    SquidDigest::from_parts(CBlock::from_bytes(cb), filter).map_err(|source| {
        DecodeError::Squid {
            offset: h.metadata.map_or(0, |(at, _)| at),
            source,
        }
    })
}

/// The one full frame in `data`, checked, with `kind` (else
/// [`DecodeError::WrongKind`]).
fn checked_of_kind<'a>(
    data: &'a [u8],
    limits: &DecodeLimits,
    kind: FilterKind,
) -> Result<(FrameHeader, &'a [u8]), DecodeError> {
    let (h, payload) = checked_whole_frame(data, limits)?;
    if h.kind != kind {
        return Err(DecodeError::WrongKind {
            found: h.kind,
            expected: kind,
        });
    }
    Ok((h, payload))
}

/// Encodes a partitioned filter: its bit array, coded or raw (whichever is
/// smaller), in a version-3 frame of kind 2.
pub fn encode_partitioned(f: &PartitionedBloomFilter) -> Vec<u8> {
    super::encode_bits(f.bits(), FilterKind::Partitioned, None, None, super::Coding::Auto)
}

/// Encodes a partitioned filter's bit array static-coded (type 4, kind 2),
/// or raw if that is not smaller: as [`super::encode_static`].
pub fn encode_partitioned_static(f: &PartitionedBloomFilter) -> Vec<u8> {
    super::encode_bits(
        f.bits(),
        FilterKind::Partitioned,
        None,
        None,
        super::Coding::Static,
    )
}

/// Encodes a partitioned filter's bit array uncoded (type 0, kind 2).
pub fn encode_partitioned_raw(f: &PartitionedBloomFilter) -> Vec<u8> {
    let fields = HeaderFields::of_kind(FilterKind::Partitioned, FilterType::Raw);
    super::raw_frame(f.bits(), &fields)
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
    Ok(PartitionedBloomFilter::from_bits(super::decode_bits(h, payload)?)?)
}

/// Encodes a sparse filter: its positions as Rice-coded gaps in a
/// version-3 frame of kind 4 (docs/FORMAT.md section 8.4). Never
/// materialises m bits.
pub fn encode_sparse(f: &SparseFilter) -> Vec<u8> {
    let positions: Vec<u64> = f.positions().collect();
    let mut payload = Vec::new();
    sparse::encode_payload(&positions, f.params().m, &mut payload);
    let fields = HeaderFields::of_kind(FilterKind::Sparse, FilterType::Coded);
    super::frame_bytes(f.params(), f.len(), &fields, &payload)
}

/// Decodes exactly one sparse-filter frame occupying all of `data`,
/// straight into the positions form: memory proportional to the positions,
/// whatever m is (the receiver's `max_m` does not apply to this kind as a
/// bound on m; the list the payload's count declares is held to its memory
/// limit, ⌈max_m/8⌉ bytes, and to the expansion limit, before it is
/// allocated).
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongKind`] for another kind;
/// [`DecodeError::LimitExceeded`] for a list over the limits.
pub fn decode_sparse(data: &[u8], limits: &DecodeLimits) -> Result<SparseFilter, DecodeError> {
    let (h, payload) = checked_of_kind(data, limits, FilterKind::Sparse)?;
    decode_sparse_payload(&h, payload, limits)
}

pub(crate) fn decode_sparse_payload(
    h: &FrameHeader,
    payload: &[u8],
    limits: &DecodeLimits,
) -> Result<SparseFilter, DecodeError> {
    // Kind 4 allows types 1 (a filter) and 2 (a delta, whose payload
    // starts with the digests): only the first is a position list.
    if h.filter_type != FilterType::Coded {
        return Err(DecodeError::WrongFrameType {
            found: h.filter_type,
            expected: "a full (coded)",
        });
    }
    // The list's bytes are known once its count is read: held there to the
    // memory limit and, as a full frame's output, to the expansion limit.
    // The list has no m-bit array: it is its own array for the floor, so
    // the most the expansion limit admits is what `admits_output` takes
    // with array = output.
    let frame_len = h.frame_len();
    let admitted = match limits.max_expansion {
        None => u64::MAX,
        Some(ratio) => frame_len.saturating_mul(ratio).max(
            limits
                .expansion_floor
                .min(frame_len.saturating_mul(super::FLOOR_MAX_EXPANSION)),
        ),
    };
    let set = sparse::decode_payload_within(payload, h.params.m, sparse_memory_limit(limits).min(admitted))
        .map_err(|source| sparse_error(h.header_len, source, limits, Some(h.frame_len())))?;
    Ok(SparseFilter::from_parts(h.params, h.n, set))
}

/// The most bytes a sparse list may hold under `limits`: ⌈max_m/8⌉, the
/// memory limit of every kind.
pub(crate) fn sparse_memory_limit(limits: &DecodeLimits) -> u64 {
    limits.max_m.div_ceil(8)
}

/// A sparse payload's error at frame offset `offset` as a [`DecodeError`]:
/// a list over the receiver's limits is [`DecodeError::LimitExceeded`]
/// (memory, or for a full frame of `frame_len` bytes the expansion
/// limit), anything else [`DecodeError::Sparse`].
pub(crate) fn sparse_error(
    offset: usize,
    source: sparse::SparseError,
    limits: &DecodeLimits,
    frame_len: Option<u64>,
) -> DecodeError {
    match source {
        sparse::SparseError::ListTooLarge { bytes, .. } if bytes > sparse_memory_limit(limits) => {
            DecodeError::LimitExceeded {
                what: "decoded memory (bytes; max_m / 8)",
                requested: bytes,
                limit: sparse_memory_limit(limits),
            }
        }
        sparse::SparseError::ListTooLarge { bytes, .. } => {
            let len = frame_len.unwrap_or(1).max(1);
            DecodeError::LimitExceeded {
                what: "expansion (output bytes per frame byte)",
                requested: bytes.div_ceil(len),
                limit: limits.max_expansion.unwrap_or(0),
            }
        }
        source => DecodeError::Sparse { offset, source },
    }
}
