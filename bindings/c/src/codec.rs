//! Frames in and out: encoding into a caller's buffer, decoding under
//! limits, and deltas.

use crate::error::*;
use crate::filter::{cb_filter, kind_of};
use crate::{cb_kind, cb_limits, cb_update_id, coding_from_raw, limits_or_default};
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::ribbon::RibbonFilter;
use compressed_bloom::kinds::scalable::ScalableBloomFilter;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::SquidDigest;
use compressed_bloom::{
    decode_any, decode_as, AnyFilter, BloomFilter, Coding, CountingBloomFilter, DecodeLimits,
    FrameHeader, Kind, UpdateId,
};

/// The coding `raw` names, if the filter's kind has it.
fn coding_for(f: &cb_filter, raw: u32) -> Result<Coding, Fail> {
    let coding = coding_from_raw(raw)?;
    let kind = f.kind();
    if !coding.applies_to(kind.wire(), kind == cb_kind::CB_KIND_SQUID) {
        return Err(Fail::invalid(format!(
            "a {} filter has no {} coding (see cb_coding)",
            kind.name(),
            coding.name()
        )));
    }
    Ok(coding)
}

/// Copies `frame` into the caller's buffer and sets `*written` to its
/// length; if the buffer is too small, sets `*written` to the length
/// needed and fails with `CB_ERROR_DST_TOO_SMALL`, writing nothing.
pub(crate) fn deliver(frame: &[u8], dst: &mut [u8], written: &mut usize) -> Result<(), Fail> {
    *written = frame.len();
    match dst.get_mut(..frame.len()) {
        Some(d) => {
            d.copy_from_slice(frame);
            Ok(())
        }
        None => Err(Fail::new(
            cb_error::CB_ERROR_DST_TOO_SMALL,
            format!(
                "the frame is {} bytes, the buffer {} bytes",
                frame.len(),
                dst.len()
            ),
        )),
    }
}

/// Sets `*bound` to the size of the buffer `cb_encode` needs for this
/// filter with this coding and identity: the exact frame length. It is
/// found by encoding the frame, which the handle keeps, so that the
/// `cb_encode` with the same arguments that follows copies it instead of
/// encoding again (until the filter changes).
///
/// `identity` is optional (NULL: a frame without an update identity).
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for a coding the kind lacks.
///
/// # Safety
/// `filter` is NULL or a live handle; `identity` is NULL or readable;
/// `bound` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_encode_bound(
    filter: *const cb_filter,
    coding: u32,
    identity: *const cb_update_id,
    bound: *mut usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let b = unsafe { out(bound, "bound")? };
        let coding = coding_for(f, coding)?;
        // SAFETY: NULL or readable (contract).
        let id = unsafe { crate::identity(identity) };
        *b = f.frame(coding, id, true).len();
        Ok(())
    })
}

/// Encodes the filter as a full frame with `coding` (a `cb_coding`; use
/// `CB_CODING_AUTO` unless a receiver needs another), carrying the update
/// identity `*identity` if it is not NULL, into `dst` (`capacity` bytes).
/// Sets `*written` to the frame's length.
///
/// Errors: `CB_ERROR_DST_TOO_SMALL` (then `*written` is the length needed
/// and nothing is written; `cb_encode_bound` gives it beforehand);
/// `CB_ERROR_INVALID_ARGUMENT` for a coding the kind lacks.
///
/// # Safety
/// `filter` is NULL or a live handle; `identity` is NULL or readable;
/// `dst` is NULL or `capacity` writable bytes; `written` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn cb_encode(
    filter: *const cb_filter,
    coding: u32,
    identity: *const cb_update_id,
    dst: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: NULL is refused; `capacity` writable bytes (contract).
        let dst = unsafe { buffer(dst, capacity, "dst")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let w = unsafe { out(written, "written")? };
        let coding = coding_for(f, coding)?;
        // SAFETY: NULL or readable (contract).
        let id = unsafe { crate::identity(identity) };
        let frame = f.frame(coding, id, false);
        let r = deliver(&frame, dst, w);
        if r.is_err() {
            // Kept, so that the retry with a larger buffer copies it.
            f.keep(coding, id, frame);
        }
        r
    })
}

/// Decodes one full frame of any kind occupying all of `src` (`len`
/// bytes) into a new filter `*out`. The header, the limits and the
/// checksum are checked before anything is allocated or decoded.
/// `limits` is optional (NULL: `cb_limits_default`).
///
/// Errors: `CB_ERROR_TRUNCATED`, `CB_ERROR_CORRUPT`, `CB_ERROR_UNSUPPORTED`,
/// `CB_ERROR_LIMIT_EXCEEDED`, `CB_ERROR_WRONG_FRAME_TYPE` (a delta: apply
/// it with `cb_filter_apply_delta`). `cb_last_error_offset` gives the
/// byte of the frame the error is about.
///
/// A signed frame decodes as the same frame unsigned: its signature is
/// not checked here. A receiver that takes only signed frames checks them
/// first with `cb_verify_frame`, or uses a subscriber with verifying keys.
///
/// # Safety
/// `src` is NULL or `len` readable bytes; `limits` is NULL or readable;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_decode(
    src: *const u8,
    len: usize,
    limits: *const cb_limits,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let src = unsafe { bytes(src, len, "src")? };
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        let f = decode_any(src, &limits)?;
        give(o, cb_filter::new(f));
        Ok(())
    })
}

fn decode_kind(kind: cb_kind, src: &[u8], l: &DecodeLimits) -> Result<AnyFilter, Fail> {
    Ok(match kind {
        cb_kind::CB_KIND_STANDARD => AnyFilter::Standard(decode_as::<BloomFilter>(src, l)?),
        cb_kind::CB_KIND_COUNTING => AnyFilter::Counting(decode_as::<CountingBloomFilter>(src, l)?),
        cb_kind::CB_KIND_PARTITIONED => {
            AnyFilter::Partitioned(decode_as::<PartitionedBloomFilter>(src, l)?)
        }
        cb_kind::CB_KIND_SCALABLE => AnyFilter::Scalable(decode_as::<ScalableBloomFilter>(src, l)?),
        cb_kind::CB_KIND_SPARSE => AnyFilter::Sparse(decode_as::<SparseFilter>(src, l)?),
        cb_kind::CB_KIND_RIBBON => AnyFilter::Ribbon(decode_as::<RibbonFilter>(src, l)?),
        cb_kind::CB_KIND_SQUID => AnyFilter::Squid(decode_as::<SquidDigest>(src, l)?),
    })
}

/// As `cb_decode`, for a receiver that expects one kind: a frame of
/// another kind fails with `CB_ERROR_WRONG_KIND` before its payload is
/// read. `CB_KIND_STANDARD` also takes a Squid digest's frame (as a
/// standard filter with Squid's hashing); `CB_KIND_SQUID` only those.
///
/// # Safety
/// As `cb_decode`.
#[no_mangle]
pub unsafe extern "C" fn cb_decode_as(
    kind: u32,
    src: *const u8,
    len: usize,
    limits: *const cb_limits,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        let kind = cb_kind::from_raw(kind)?;
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let src = unsafe { bytes(src, len, "src")? };
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        let f = decode_kind(kind, src, &limits)?;
        give(o, cb_filter::new(f));
        Ok(())
    })
}

/// A frame's header, as `cb_inspect` reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cb_frame_info {
    /// The format version (1 to 3).
    pub version: u8,
    /// The filter type byte: 0 raw, 1 adaptive-coded, 2 and 3 deltas,
    /// 4 static-coded.
    pub filter_type: u8,
    /// Non-zero for a delta frame.
    pub is_delta: u8,
    /// The wire kind (a `cb_kind` value from 0 to 5).
    pub kind: u32,
    /// Non-zero if the frame carries a Squid digest header.
    pub is_squid: u8,
    /// The filter's m, k and seed as the header declares them.
    pub m: u64,
    /// See `m`.
    pub k: u32,
    /// See `m`.
    pub seed: u64,
    /// The number of keys declared.
    pub n: u64,
    /// Non-zero if the frame carries an update identity (in `identity`).
    pub has_identity: u8,
    /// The update identity, if `has_identity`.
    pub identity: cb_update_id,
    /// The header's length in bytes (the payload starts there).
    pub header_len: u64,
    /// The whole frame's length in bytes (a signed frame's signature
    /// included).
    pub frame_len: u64,
    /// Non-zero if the frame is signed (metadata tag 2): its signature
    /// follows the CRC. `cb_inspect` reports it without checking it;
    /// `cb_verify_frame` checks it.
    pub has_signer: u8,
    /// The signer's key id, if `has_signer`: the first `CB_KEY_ID_LEN`
    /// bytes of its public key (zeros otherwise).
    pub signer: [u8; 8],
}

/// The `cb_frame_info` of a parsed header.
pub(crate) fn frame_info(h: &FrameHeader) -> cb_frame_info {
    cb_frame_info {
        version: h.version,
        filter_type: h.filter_type.id(),
        is_delta: h.filter_type.is_delta().into(),
        kind: cb_kind::of_wire(h.kind) as u32,
        is_squid: h.squid_cblock.is_some().into(),
        m: h.params.m,
        k: h.params.k,
        seed: h.params.seed,
        n: h.n,
        has_identity: h.identity.is_some().into(),
        identity: h.identity.map(Into::into).unwrap_or_default(),
        header_len: h.header_len as u64,
        frame_len: h.frame_len(),
        has_signer: h.signer.is_some().into(),
        signer: h.signer.unwrap_or_default(),
    }
}

/// Reads and checks a frame's header (and its declared sizes against the
/// limits) into `*info`, without decoding its payload: to route a frame,
/// or to see what a frame is before deciding to decode it. `src` may hold
/// more than the frame; `limits` is optional (NULL: the defaults).
///
/// Errors: as `cb_decode` for the header.
///
/// # Safety
/// `src` is NULL or `len` readable bytes; `limits` is NULL or readable;
/// `info` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_inspect(
    src: *const u8,
    len: usize,
    limits: *const cb_limits,
    info: *mut cb_frame_info,
) -> cb_error {
    guard(|| {
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let src = unsafe { bytes(src, len, "src")? };
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(info, "info")? };
        *o = frame_info(&compressed_bloom::inspect(src, &limits)?);
        Ok(())
    })
}

/// The delta frame from `old` to `new`.
fn delta(old: &cb_filter, new: &cb_filter, id: Option<UpdateId>) -> Result<Vec<u8>, Fail> {
    let (ko, kn) = (kind_of(&old.inner), kind_of(&new.inner));
    if ko != kn {
        return Err(Fail::new(
            cb_error::CB_ERROR_WRONG_KIND,
            format!(
                "no delta turns a {} filter into a {} filter",
                ko.name(),
                kn.name()
            ),
        ));
    }
    if id.is_some_and(|id| id.seq == 0) {
        return Err(Fail::invalid(
            "a delta's identity has seq >= 1: it turns version seq - 1 into seq",
        ));
    }
    <AnyFilter as Kind>::encode_delta(&old.inner, &new.inner, id).ok_or_else(|| {
        Fail::new(
            cb_error::CB_ERROR_NO_DELTA,
            format!(
                "no delta describes this change of a {} filter (other parameters, or a filter \
                 that did not grow from the old one): send a full frame",
                kn.name()
            ),
        )
    })
}

/// Sets `*bound` to the length of the delta frame `cb_delta_encode` writes
/// for these arguments. The delta is computed to measure it (as costly as
/// `cb_delta_encode`); a caller with a buffer of the full frame's size
/// (`cb_encode_bound`) can skip this, since a useful delta is smaller.
///
/// # Safety
/// As `cb_delta_encode`, with `bound` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_delta_bound(
    old_filter: *const cb_filter,
    new_filter: *const cb_filter,
    identity: *const cb_update_id,
    bound: *mut usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; live handles (contract).
        let (old, new) = unsafe {
            (
                handle(old_filter, "old_filter")?,
                handle(new_filter, "new_filter")?,
            )
        };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let b = unsafe { out(bound, "bound")? };
        // SAFETY: NULL or readable (contract).
        let id = unsafe { crate::identity(identity) };
        *b = delta(old, new, id)?.len();
        Ok(())
    })
}

/// Encodes the smallest delta frame that turns `old_filter` into
/// `new_filter` (same kind and parameters) into `dst` (`capacity` bytes),
/// carrying `*identity` if not NULL (its seq, at least 1, is the version
/// the delta produces). Sets `*written` to its length.
///
/// Errors: `CB_ERROR_WRONG_KIND` for filters of different kinds;
/// `CB_ERROR_NO_DELTA` when no delta can describe the change (send a full
/// frame); `CB_ERROR_DST_TOO_SMALL` (`*written` is the length needed);
/// `CB_ERROR_INVALID_ARGUMENT` for an identity with seq 0.
///
/// # Safety
/// `old_filter` and `new_filter` are NULL or live handles; `identity` is
/// NULL or readable; `dst` is NULL or `capacity` writable bytes; `written`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_delta_encode(
    old_filter: *const cb_filter,
    new_filter: *const cb_filter,
    identity: *const cb_update_id,
    dst: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; live handles (contract).
        let (old, new) = unsafe {
            (
                handle(old_filter, "old_filter")?,
                handle(new_filter, "new_filter")?,
            )
        };
        // SAFETY: NULL is refused; `capacity` writable bytes (contract).
        let dst = unsafe { buffer(dst, capacity, "dst")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let w = unsafe { out(written, "written")? };
        // SAFETY: NULL or readable (contract).
        let id = unsafe { crate::identity(identity) };
        deliver(&delta(old, new, id)?, dst, w)
    })
}

/// Applies a delta frame (`len` bytes at `src`) to the filter: checks the
/// frame, checks that it was made from this filter (its digest), and
/// replaces the filter with the result once the result's digest is
/// verified. On any error the filter is unchanged. `limits` is optional
/// (NULL: the defaults).
///
/// Errors: as `cb_decode`; `CB_ERROR_WRONG_FRAME_TYPE` for a full frame;
/// `CB_ERROR_WRONG_BASE` for a delta made from another filter (a missed
/// update: get a full frame); `CB_ERROR_WRONG_KIND`. A signed delta is
/// applied as the unsigned one (its signature is not checked here: see
/// `cb_verify_frame`).
///
/// # Safety
/// `filter` is NULL or a live handle; `src` is NULL or `len` readable
/// bytes; `limits` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_apply_delta(
    filter: *mut cb_filter,
    src: *const u8,
    len: usize,
    limits: *const cb_limits,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let f = unsafe { handle_mut(filter, "filter")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let src = unsafe { bytes(src, len, "src")? };
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        compressed_bloom::apply_delta(f.change(), src, &limits)?;
        Ok(())
    })
}
