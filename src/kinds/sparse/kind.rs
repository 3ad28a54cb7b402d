//! The sparse kind on the wire: its frames (kind 4: Rice-coded positions),
//! its deltas (the changed positions), and [`Kind`].

use crate::prelude::*;
use crate::delta::{check_base, expect_kind, same_params, inspect_delta, DeltaHeader, DIGESTS_LEN};
use crate::filter::FilterError;
use crate::format::header::HeaderFields;
use crate::format::{self, checked_of_kind, Coding, DecodeError, DecodeLimits, FilterKind, FilterType, FrameHeader, UpdateId};
use crate::kinds::sparse::{self, SparseFilter};
use crate::delta::sparse_changes;
use crate::format::{sparse_error, sparse_memory_limit};
use crate::kind::{expect, identified, membership, Kind};

impl Kind for SparseFilter {
    const KIND: FilterKind = FilterKind::Sparse;
    membership!(SparseFilter);
    fn count_ones(&self) -> u64 {
        SparseFilter::count_ones(self)
    }
    fn digest(&self) -> u64 {
        sparse::digest(self)
    }
    fn encode_frame(&self, _coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::with_identity(encode_sparse(self), id)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        expect(h, FilterKind::Sparse)?;
        decode_sparse_payload(h, payload, limits)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        identified(encode_delta_sparse(old, new).ok(), id)
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        apply_sparse_checked(self, held, frame, d, limits)
    }
}

/// Encodes a sparse filter: its positions as Rice-coded gaps in a
/// version-3 frame of kind 4 (docs/FORMAT.md section 8.4). Never
/// materialises m bits.
pub fn encode_sparse(f: &SparseFilter) -> Vec<u8> {
    let positions: Vec<u64> = f.positions().collect();
    let mut payload = Vec::new();
    sparse::encode_payload(&positions, f.params().m, &mut payload);
    let fields = HeaderFields::of_kind(FilterKind::Sparse, FilterType::Coded);
    format::frame_bytes(f.params(), f.len(), &fields, &payload)
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
    // Scheme 3's payload holds a repeat list before the positions, and
    // its key is the block hash: only `Bip158Filter` reads it.
    if h.block_hash.is_some() {
        return Err(DecodeError::InvalidField {
            offset: 4,
            field: "hash scheme",
            reason: "a BIP158 filter (scheme 3): decode it as a Bip158Filter",
        });
    }
    decode_positions(h, payload, h.header_len, limits)
}

/// The sparse position list `payload` at frame offset `offset` of the full
/// frame `h` (its m; its n as the filter's), held to `limits`.
pub(crate) fn decode_positions(
    h: &FrameHeader,
    payload: &[u8],
    offset: usize,
    limits: &DecodeLimits,
) -> Result<SparseFilter, DecodeError> {
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
                .min(frame_len.saturating_mul(format::FLOOR_MAX_EXPANSION)),
        ),
    };
    let set = sparse::decode_payload_within(payload, h.params.m, sparse_memory_limit(limits).min(admitted))
        .map_err(|source| sparse_error(offset, source, limits, Some(h.frame_len())))?;
    Ok(SparseFilter::from_parts(h.params, h.n, set))
}

internal! {
/// Encodes the delta that turns the sparse filter `old` into `new` (type 2
/// under kind 4, docs/FORMAT.md section 8.4): the two filters' sparse
/// digests, then the positions whose bit differs, Rice-coded like a sparse
/// payload. Time and memory proportional to the positions, never to m.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
pub fn encode_delta_sparse(old: &SparseFilter, new: &SparseFilter) -> Result<Vec<u8>, FilterError> {
    if old.params() != new.params() {
        return Err(FilterError::ParamsMismatch {
            left: *old.params(),
            right: *new.params(),
        });
    }
    let changes: Vec<u64> = sparse::symmetric_difference(old.positions(), new.positions()).collect();
    let mut payload = Vec::with_capacity(DIGESTS_LEN.saturating_add(16));
    payload.extend_from_slice(&sparse::digest(old).to_le_bytes());
    payload.extend_from_slice(&sparse::digest(new).to_le_bytes());
    sparse::encode_payload(&changes, new.params().m, &mut payload);
    let fields = HeaderFields::of_kind(FilterKind::Sparse, FilterType::Delta);
    Ok(format::frame_bytes(new.params(), new.len(), &fields, &payload))
}
}

internal! {
/// Applies a sparse filter's delta (type 2, kind 4) to `base`: checks the
/// base's sparse digest, flips the listed positions, and checks the
/// result's digest before replacing `base`; on any error `base` is
/// unchanged. Memory: the result's positions and the changes.
///
/// # Errors
/// As [`apply`]; [`DecodeError::WrongKind`] for a delta of another kind.
pub fn apply_sparse(
    base: &mut SparseFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    let d = inspect_delta(data, limits)?;
    expect_kind(&d, FilterKind::Sparse)?;
    same_params(&d.frame.params, base.params())?;
    let held = sparse::digest(base);
    apply_sparse_checked(base, held, data, &d, limits).map(|_| ())
}
}

/// [`apply_sparse`] for a receiver that holds `base`'s digest: a delta
/// for another base is refused before `base` is read. Returns the
/// result's digest. The changes' list and the result's are each held to
/// the memory limit (⌈max_m/8⌉ bytes) before they are allocated.
pub(crate) fn apply_sparse_checked(
    base: &mut SparseFilter,
    held: u64,
    data: &[u8],
    d: &DeltaHeader,
    limits: &DecodeLimits,
) -> Result<u64, DecodeError> {
    expect_kind(d, FilterKind::Sparse)?;
    same_params(&d.frame.params, base.params())?;
    check_base(d, held)?;
    let changes = sparse_changes(data, d, limits)?;
    let count = sparse::result_len(base, &changes);
    let bytes = sparse::EliasFano::bytes_for(count, base.params().m);
    let memory_limit = sparse_memory_limit(limits);
    if bytes > memory_limit {
        return Err(DecodeError::LimitExceeded {
            what: "decoded memory (bytes; max_m / 8)",
            requested: bytes,
            limit: memory_limit,
        });
    }
    let (result, got) = sparse::apply_changes(base, &changes, d.frame.n, count)?;
    if got != d.result_digest {
        return Err(DecodeError::ResultMismatch {
            expected: d.result_digest,
            actual: got,
        });
    }
    *base = result;
    Ok(got)
}
