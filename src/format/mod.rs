//! Frames: the versioned wire format (`docs/FORMAT.md` is normative).
//!
//! A frame is a header (magic, version, filter type, hash scheme, seed, m, k,
//! n, payload length), the payload, and a CRC-32C of everything before it.
//! [`encode`] picks the coded type and falls back to raw when coding would not
//! shrink the payload. [`decode`] checks, in this order, the header fields,
//! the caller's [`DecodeLimits`], the declared lengths against the bytes
//! present, and the checksum, and only then allocates and decodes.

use crate::prelude::*;
// Decoding code: the panic lints are denied for this module tree in lib.rs.

mod coding;
mod error;
mod signature;
internal_modules!(header);
#[cfg(feature = "std")]
pub mod stream;
internal! {
/// The receiver's limits (they live in [`crate::wire`]; re-exported here
/// where frame decoders look for them).
pub use crate::wire::limits;
}
internal! {
/// LEB128 varints ([`crate::wire::varint`], re-exported for frame code).
pub use crate::wire::varint;
}

use crate::coder;
use crate::filter::{padding_is_clear, zeroed_words, BloomFilter, FilterError};
use bytes::{Buf, BufMut};
pub use coding::Coding;
pub use error::{DecodeError, EncodeError};
#[cfg(feature = "std")]
pub(crate) use signature::key_id_hex;
#[cfg(feature = "std")]
pub(crate) use signature::verify_signature;
pub use signature::{sign_frame, verify_frame};
use header::HeaderFields;
pub use header::{FilterKind, FilterType, FrameHeader, UpdateId};
pub use limits::{DecodeLimits, KindSet};
// The limits' defaults are `DecodeLimits`' associated constants.
internal! {
    pub use limits::{DEFAULT_EXPANSION_FLOOR, DEFAULT_MAX_EXPANSION, FLOOR_MAX_EXPANSION};
}

/// Upper bound on the frame length [`encode`] produces for `filter`: the raw
/// frame, since the encoder never sends a coded payload larger than raw.
pub fn max_encoded_len(filter: &BloomFilter) -> usize {
    let p = filter.params();
    let raw = p.byte_len();
    (raw as usize)
        .saturating_add(header::frame_overhead(p.seed, p.m, p.k, filter.len(), raw))
        .saturating_add(header::v3_extra(&HeaderFields::plain(FilterType::Raw), p.scheme))
}

/// Encodes `filter` as a frame with [`Coding::Auto`]: static-coded
/// (type 4) where that decodes faster (minority density at least 1/16)
/// and stays within the planner's size bound, else adaptive (type 1); raw
/// when coding does not shrink the array.
///
/// # Examples
/// ```
/// use compressed_bloom::{decode, encode, BloomFilter, DecodeLimits, FilterParams};
/// let mut f = BloomFilter::new(FilterParams::new(140_000, 2, 0))?;
/// for i in 0..10_000u32 { f.insert(&i.to_le_bytes()); }
/// let frame = encode(&f);
/// assert!(frame.len() < 10_000, "{} bytes", frame.len());
/// assert_eq!(decode(&frame, &DecodeLimits::default())?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode(filter: &BloomFilter) -> Vec<u8> {
    encode_with(filter, Coding::Auto)
}

/// Encodes `filter` with the payload coding `coding` (raw instead when a
/// coding would not shrink the array, since such a frame is refused by
/// every decoder).
///
/// # Examples
/// ```
/// use compressed_bloom::{decode, format, BloomFilter, Coding, DecodeLimits, FilterParams, FilterType};
/// let mut f = BloomFilter::new(FilterParams::new(140_000, 2, 0))?;
/// for i in 0..10_000u32 { f.insert(&i.to_le_bytes()); }
/// let frame = format::encode_with(&f, Coding::Adaptive);
/// assert_eq!(format::inspect(&frame, &Default::default())?.filter_type, FilterType::Coded);
/// assert_eq!(decode(&frame, &DecodeLimits::default())?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_with(filter: &BloomFilter, coding: Coding) -> Vec<u8> {
    encode_bits(filter, FilterKind::Standard, None, None, coding)
}

internal! {
/// Encodes `filter` with a chosen payload type. Asking for [`FilterType::Coded`]
/// when coding does not shrink the payload still yields a raw frame, because
/// such a coded frame would be rejected by every decoder. A filter alone
/// cannot make a [`FilterType::Delta`] frame (that needs the previous
/// version: [`crate::delta::encode_delta`]), so `Delta` encodes like
/// [`encode`].
///
/// [`FilterType::StaticCoded`] gives a version-3 frame of type 4 (or raw,
/// likewise): faster to decode at every density, and readable only by
/// decoders of this format's version 3 with type 4 ([`encode_static`]).
pub fn encode_as(filter: &BloomFilter, ty: FilterType) -> Vec<u8> {
    match ty {
        FilterType::Raw => encode_with(filter, Coding::Raw),
        FilterType::StaticCoded => encode_with(filter, Coding::Static),
        _ => encode_with(filter, Coding::Adaptive),
    }
}
}

internal! {
/// Encodes `filter` static-coded (type 4, docs/FORMAT.md "Type 4") if
/// that is smaller than raw, raw otherwise: a version-3 frame of type 4,
/// or the version-1 raw frame of [`encode_as`] with [`FilterType::Raw`]. Type 4
/// sends each block's count of ones, so the decoder builds its tables once
/// per block and codes dense blocks a byte per step: from a minority
/// density of 1/16 it decodes faster than type 1, at about the same size
/// (below it, where type 4 codes bit by bit, type 1 is faster; see
/// [`Coding::Auto`]).
///
/// # Examples
/// ```
/// use compressed_bloom::{decode, format, BloomFilter, DecodeLimits, FilterParams};
/// let mut f = BloomFilter::new(FilterParams::new(140_000, 2, 0))?;
/// for i in 0..10_000u32 { f.insert(&i.to_le_bytes()); }
/// let frame = format::encode_static(&f);
/// assert!(frame.len() < 10_000, "{} bytes", frame.len());
/// assert_eq!(decode(&frame, &DecodeLimits::default())?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_static(filter: &BloomFilter) -> Vec<u8> {
    encode_static_with(filter, coder::static_coded::Choice::default())
}
}

internal! {
/// [`encode_static`] with the static coder's choices made by the caller:
/// the block size (smaller blocks decode on more threads, larger ones cost
/// fewer bytes) and the mode of every block. Every choice decodes the same
/// filter; the default is [`encode_static`]'s.
pub fn encode_static_with(
    filter: &BloomFilter,
    choice: coder::static_coded::Choice,
) -> Vec<u8> {
    encode_bits_with(
        filter,
        HeaderFields::plain(FilterType::Raw),
        Coding::Static,
        choice,
    )
}
}

internal! {
/// Encodes `filter` as version `id` of a published stream (docs/FORMAT.md
/// section 5): coded if that is smaller, raw otherwise, in a version-3
/// frame that carries the identity. [`crate::Subscriber`] uses it to order
/// what it receives.
///
/// # Examples
/// ```
/// use compressed_bloom::{format, BloomFilter, FilterParams, UpdateId};
/// let f = BloomFilter::new(FilterParams::new(1_000, 2, 0))?;
/// let id = UpdateId { stream: 7, epoch: 1, seq: 0 };
/// let frame = format::encode_with_identity(&f, id);
/// assert_eq!(format::inspect(&frame, &Default::default())?.identity, Some(id));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_with_identity(filter: &BloomFilter, id: UpdateId) -> Vec<u8> {
    encode_bits(filter, FilterKind::Standard, Some(id), None, Coding::Auto)
}
}

/// A bit array of `kind` (standard or partitioned, or a Squid mask) coded
/// as `coding`, or raw if that is not smaller, with an optional identity.
pub(crate) fn encode_bits(
    filter: &BloomFilter,
    kind: FilterKind,
    identity: Option<UpdateId>,
    squid_cblock: Option<[u8; header::SQUID_CBLOCK_LEN]>,
    coding: Coding,
) -> Vec<u8> {
    let base = HeaderFields {
        identity,
        squid_cblock,
        ..HeaderFields::of_kind(kind, FilterType::Raw)
    };
    encode_bits_fields(filter, base, coding)
}

/// [`encode_bits`] with the header's other fields (identity, metadata
/// records) given as `base`; its filter type is the one the coding picks.
pub(crate) fn encode_bits_fields(filter: &BloomFilter, base: HeaderFields, coding: Coding) -> Vec<u8> {
    let choice = coder::static_coded::Choice::default();
    encode_bits_with(filter, base, coding, choice)
}

/// [`encode_bits`] with the static coder's choices (used when `coding` is
/// static, or `auto` picks it).
fn encode_bits_with(
    filter: &BloomFilter,
    base: HeaderFields,
    coding: Coding,
    choice: coder::static_coded::Choice,
) -> Vec<u8> {
    let p = filter.params();
    let kind = base.kind;
    let squid_cblock = base.squid_cblock;
    // Not `HeaderFields { filter_type, ..base }`: rustc 1.95 breaks on
    // that closure (an internal compiler error on the array lengths).
    let fields = |filter_type| {
        let mut f = base;
        f.filter_type = filter_type;
        f
    };
    let coding = if coding.applies_to(kind, squid_cblock.is_some()) {
        coding
    } else {
        Coding::Adaptive
    };
    // `auto` takes static coding only where it decodes faster: arrays whose
    // minority density is at least 1/16 (its byte-per-step mode); sparser
    // arrays have few runs, which type 1 codes faster. Only `auto` needs
    // the count of ones.
    let ones = if coding == Coding::Auto { filter.count_ones() } else { 0 };
    let coding = match coding {
        Coding::Auto if ones.min(p.m.saturating_sub(ones)).saturating_mul(16) < p.m => {
            Coding::Adaptive
        }
        other => other,
    };
    match coding {
        Coding::Raw => return raw_frame(filter, &fields(FilterType::Raw)),
        Coding::Static | Coding::Auto => {
            // The blocks' streams go straight into the frame (no payload
            // copy in between: 9.9 MB on the 17.5 MB filter).
            let threads = coder::static_coded::encode_threads(p.m);
            let parts = coder::static_coded::encode_parts(filter.as_words(), p.m, threads, choice);
            let len = parts.len();
            let fits = (len as u64) < p.byte_len() && len as u64 >= header::STATIC_MIN_PAYLOAD;
            if fits
                && (coding == Coding::Static
                    || coding::static_within_bound(len, p.m, ones))
            {
                if coding == Coding::Auto && p.m < coding::AUTO_SMALLER_BELOW {
                    let mut payload = Vec::new();
                    coder::encode(filter.as_words(), p.m, &mut payload);
                    if payload.len() <= len {
                        return frame_bytes(p, filter.len(), &fields(FilterType::Coded), &payload);
                    }
                }
                let f = fields(FilterType::StaticCoded);
                return frame_with(p, filter.len(), &f, len, 0, |out| parts.append_to(out));
            }
            if coding == Coding::Static {
                return raw_frame(filter, &fields(FilterType::Raw));
            }
        }
        Coding::Adaptive => {}
    }
    let mut payload = Vec::new();
    coder::encode(filter.as_words(), p.m, &mut payload);
    if (payload.len() as u64) < p.byte_len() {
        frame_bytes(p, filter.len(), &fields(FilterType::Coded), &payload)
    } else {
        raw_frame(filter, &fields(FilterType::Raw))
    }
}

/// Header, payload and CRC-32C: a whole frame around `payload`.
pub(crate) fn frame_bytes(
    p: &crate::FilterParams,
    n: u64,
    fields: &HeaderFields,
    payload: &[u8],
) -> Vec<u8> {
    frame_with(p, n, fields, payload.len(), 0, |out| {
        out.extend_from_slice(payload)
    })
}

/// A raw frame of `filter`'s bit array, written straight from its words
/// into the frame (no intermediate copy of the array).
pub(crate) fn raw_frame(filter: &BloomFilter, fields: &HeaderFields) -> Vec<u8> {
    let len = filter.params().byte_len() as usize;
    // The words hold up to 7 bytes past ⌈m/8⌉; they are cut off again.
    frame_with(filter.params(), filter.len(), fields, len, 8, |out| {
        let end = out.len().saturating_add(len);
        for w in filter.as_words() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.truncate(end);
    })
}

/// A frame whose `payload_len`-byte payload `fill` appends (it may append
/// up to `slack` bytes more and cut them off), with header and CRC.
pub(crate) fn frame_with(
    p: &crate::FilterParams,
    n: u64,
    fields: &HeaderFields,
    payload_len: usize,
    slack: usize,
    fill: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let overhead = header::frame_overhead(p.seed, p.m, p.k, n, payload_len as u64)
        .saturating_add(header::v3_extra(fields, p.scheme));
    let mut out = Vec::with_capacity(
        payload_len
            .saturating_add(overhead)
            .saturating_add(slack),
    );
    header::write(&mut out, fields, p, n, payload_len as u64);
    fill(&mut out);
    let crc = crate::wire::crc::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Encodes into a caller-provided slice; returns the frame length.
///
/// # Errors
/// [`EncodeError::OutputTooSmall`] with the required length; `out` is then
/// left unspecified.
pub fn encode_into(filter: &BloomFilter, out: &mut [u8]) -> Result<usize, EncodeError> {
    let frame = encode(filter);
    let available = out.len();
    let dst = out
        .get_mut(..frame.len())
        .ok_or(EncodeError::OutputTooSmall {
            required: frame.len(),
            available,
        })?;
    dst.copy_from_slice(&frame);
    Ok(frame.len())
}

/// Encodes into a [`BufMut`], checking `remaining_mut()` first.
///
/// # Errors
/// [`EncodeError::OutputTooSmall`] if the buffer cannot take the frame
/// (nothing is written then).
pub fn encode_to_buf<B: BufMut>(filter: &BloomFilter, buf: &mut B) -> Result<usize, EncodeError> {
    let frame = encode(filter);
    if buf.remaining_mut() < frame.len() {
        return Err(EncodeError::OutputTooSmall {
            required: frame.len(),
            available: buf.remaining_mut(),
        });
    }
    buf.put_slice(&frame);
    Ok(frame.len())
}

/// Decodes exactly one frame of a standard filter occupying all of `data`,
/// under `limits` (checked against the header before anything is
/// allocated; `&DecodeLimits::default()` for the defaults). Every decoder
/// of the crate takes its limits this way: [`crate::decode_any`], `decode_as`,
/// [`decode_from_buf`], `apply_delta`, `Subscriber::new`.
///
/// # Errors
/// Any [`DecodeError`], including [`DecodeError::TrailingBytes`]; no
/// partially decoded filter is ever returned.
pub fn decode(data: &[u8], limits: &DecodeLimits) -> Result<BloomFilter, DecodeError> {
    let (h, payload) = checked_whole_frame(data, limits)?;
    decode_full(&h, payload)
}

/// Decodes the frame at the front of a [`Buf`] and advances past it; bytes
/// after the frame are left in the buffer. On error nothing is consumed.
///
/// Contiguous buffers (`Bytes`, `BytesMut`, slices) are decoded in place.
/// For chained buffers the frame's bytes are gathered through
/// [`Buf::chunks_vectored`] (at most 64 chunks are looked at), because
/// nothing may be consumed before the frame is known to be good.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::Truncated`] if the frame's bytes are
/// not all in the buffer yet, or cannot all be seen without consuming them
/// (more than 64 chunks, or a `Buf` whose `chunks_vectored` shows only its
/// current chunk): `available` is then the bytes visible. Copy such a buffer
/// into contiguous memory first.
///
/// Memory: a chained buffer costs one copy of the frame (at most
/// [`DecodeLimits::max_frame_len`]) on top of the filter, checked by
/// `tests/alloc_threads.rs` and, at the worst frames the default limits
/// accept, `tests/alloc_from_buf.rs`; a contiguous one costs none.
pub fn decode_from_buf<B: Buf>(
    buf: &mut B,
    limits: &DecodeLimits,
) -> Result<BloomFilter, DecodeError> {
    let (filter, used) = if buf.chunk().len() == buf.remaining() {
        decode_prefix(buf.chunk(), limits)?
    } else {
        // Most headers fit in 128 bytes; a version-3 header with metadata
        // may need up to MAX_HEADER_LEN.
        let mut head = vec![0u8; 128];
        let mut seen = peek(buf, &mut head);
        let mut parsed = header::parse(head.get(..seen).unwrap_or(&head), limits);
        if matches!(parsed, Err(DecodeError::Truncated { .. })) && seen == head.len() {
            head.resize(header::MAX_HEADER_LEN, 0);
            seen = peek(buf, &mut head);
            parsed = header::parse(head.get(..seen).unwrap_or(&head), limits);
        }
        let h = parsed?;
        let total = h.frame_len();
        if (buf.remaining() as u64) < total {
            return Err(DecodeError::Truncated {
                needed: total,
                available: buf.remaining() as u64,
            });
        }
        // total <= remaining, which is a usize.
        let mut bytes = vec![0u8; total as usize];
        let got = peek(buf, &mut bytes);
        if got < bytes.len() {
            return Err(DecodeError::Truncated {
                needed: total,
                available: got as u64,
            });
        }
        decode_prefix(&bytes, limits)?
    };
    buf.advance(used);
    Ok(filter)
}

/// Copies the first bytes of `buf` into `dst` without consuming them;
/// returns how many were visible.
/// Without `std` only the first chunk is visible (a frame whose header is
/// split across chunks reads as truncated).
fn peek<B: Buf>(buf: &B, dst: &mut [u8]) -> usize {
    #[cfg(feature = "std")]
    let mut io = [std::io::IoSlice::new(&[]); 64];
    #[cfg(feature = "std")]
    let n = buf.chunks_vectored(&mut io);
    #[cfg(not(feature = "std"))]
    let (io, n) = ([buf.chunk()], 1);
    let mut filled = 0;
    for s in io.iter().take(n) {
        let rest = dst.get_mut(filled..).unwrap_or_default();
        let take = s.len().min(rest.len());
        if let (Some(to), Some(from)) = (rest.get_mut(..take), s.get(..take)) {
            to.copy_from_slice(from);
        }
        filled = filled.saturating_add(take);
        if filled == dst.len() {
            break;
        }
    }
    filled
}

/// Parses the header at the front of `data` and checks limits, lengths and
/// the CRC. Returns the header, the payload and the frame length. Shared by
/// every frame type, so no decoder sees a byte the checksum has not covered.
pub(crate) fn checked_frame<'a>(
    data: &'a [u8],
    limits: &DecodeLimits,
) -> Result<(FrameHeader, &'a [u8], usize), DecodeError> {
    checked(data, limits, false)
}

/// [`checked_frame`] for an input that must be exactly one frame: bytes
/// after it are [`DecodeError::TrailingBytes`], found before the CRC is
/// computed and before anything is decoded or allocated (docs/FORMAT.md
/// section 2.3, step 6).
pub(crate) fn checked_whole_frame<'a>(
    data: &'a [u8],
    limits: &DecodeLimits,
) -> Result<(FrameHeader, &'a [u8]), DecodeError> {
    checked(data, limits, true).map(|(h, payload, _)| (h, payload))
}

fn checked<'a>(
    data: &'a [u8],
    limits: &DecodeLimits,
    whole: bool,
) -> Result<(FrameHeader, &'a [u8], usize), DecodeError> {
    let h = header::parse(data, limits)?;
    let total = h.frame_len();
    if (data.len() as u64) < total {
        return Err(DecodeError::Truncated {
            needed: total,
            available: data.len() as u64,
        });
    }
    if whole && (data.len() as u64) > total {
        return Err(DecodeError::TrailingBytes {
            offset: total,
            count: (data.len() as u64).saturating_sub(total),
        });
    }
    // total <= data.len(), so it fits in usize and the slices below are in
    // bounds; header_len <= body_end because frame_len adds payload_len + 4.
    let total = total as usize;
    let truncated = DecodeError::Truncated {
        needed: total as u64,
        available: data.len() as u64,
    };
    // A signed frame's signature follows the CRC (section 6, tag 2): the
    // CRC covers what comes before it, as in every frame.
    let body_end = total
        .checked_sub(h.signature_len() as usize)
        .and_then(|t| t.checked_sub(header::CRC_LEN))
        .ok_or(truncated.clone())?;
    let (body, crc) = data
        .get(..body_end.saturating_add(header::CRC_LEN))
        .and_then(|frame| frame.split_at_checked(body_end))
        .ok_or(truncated.clone())?;
    let stored = u32::from_le_bytes(crc.try_into().map_err(|_| truncated.clone())?);
    let actual = crate::wire::crc::crc32c(body);
    if stored != actual {
        return Err(DecodeError::ChecksumMismatch {
            expected: stored,
            actual,
        });
    }
    let payload = body.get(h.header_len..).ok_or(truncated)?;
    Ok((h, payload, total))
}

/// Decodes a coded bit array (type 1 payloads, and the XOR of type 2) into
/// freshly allocated words, checking the padding. `offset` is where `coded`
/// starts in the frame, for error reports.
pub(crate) fn decode_coded(
    coded: &[u8],
    params: &crate::FilterParams,
    offset: usize,
) -> Result<Vec<u64>, DecodeError> {
    let mut words = zeroed_words(params.word_len())?;
    coder::decode(coded, params.m, &mut words)
        .map_err(|source| DecodeError::Payload { offset, source })?;
    if !padding_is_clear(params.m, &words) {
        return Err(FilterError::PaddingBitsSet { m: params.m }.into());
    }
    Ok(words)
}

/// Decodes a static-coded bit array (type 4 payloads) into freshly
/// allocated words, as [`decode_coded`].
pub(crate) fn decode_static(
    coded: &[u8],
    params: &crate::FilterParams,
    offset: usize,
) -> Result<Vec<u64>, DecodeError> {
    let mut words = zeroed_words(params.word_len())?;
    coder::static_coded::decode(coded, params.m, &mut words)
        .map_err(|source| DecodeError::Payload { offset, source })?;
    if !padding_is_clear(params.m, &words) {
        return Err(FilterError::PaddingBitsSet { m: params.m }.into());
    }
    Ok(words)
}

/// Checks the frame, then decodes a full filter. Returns the filter and the
/// frame length.
fn decode_prefix(data: &[u8], limits: &DecodeLimits) -> Result<(BloomFilter, usize), DecodeError> {
    let (h, payload, total) = checked_frame(data, limits)?;
    Ok((decode_full(&h, payload)?, total))
}

/// Decodes the payload of a full frame whose header and CRC
/// [`checked_frame`] has checked.
pub(crate) fn decode_full(h: &FrameHeader, payload: &[u8]) -> Result<BloomFilter, DecodeError> {
    if h.kind != FilterKind::Standard {
        return Err(DecodeError::WrongKind {
            found: h.kind,
            expected: FilterKind::Standard,
        });
    }
    decode_bits(h, payload)
}

/// Decodes the bit array of a checked full frame (standard or partitioned).
pub(crate) fn decode_bits(h: &FrameHeader, payload: &[u8]) -> Result<BloomFilter, DecodeError> {
    let params = h.params;
    match h.filter_type {
        FilterType::Raw => Ok(BloomFilter::from_bytes(params, h.n, payload)?),
        FilterType::Coded => {
            let words = decode_coded(payload, &params, h.header_len)?;
            Ok(BloomFilter::from_words_unchecked(params, h.n, words))
        }
        FilterType::StaticCoded => {
            let words = decode_static(payload, &params, h.header_len)?;
            Ok(BloomFilter::from_words_unchecked(params, h.n, words))
        }
        found @ (FilterType::Delta | FilterType::ConditionalDelta) => {
            Err(DecodeError::WrongFrameType {
                found,
                expected: "a full (raw or coded)",
            })
        }
    }
}

/// Parses and checks a frame's header and checksum without decoding the
/// payload (what `cbloom inspect` shows before decoding). The frame is
/// the one at the front of `data`: bytes after it are not an error here.
///
/// # Errors
/// As [`decode`], except payload errors and [`DecodeError::TrailingBytes`].
pub fn inspect(data: &[u8], limits: &DecodeLimits) -> Result<FrameHeader, DecodeError> {
    checked_frame(data, limits).map(|(h, _, _)| h)
}

/// `frame` (a whole frame this crate just wrote) with the update identity
/// `id` in its header, or `frame` itself when `id` is `None`: the same
/// kind, type, parameters and payload, in a version-3 frame with a new CRC
/// (docs/FORMAT.md section 5). One pass over the frame; it lets every
/// kind's encoder serve identified updates without an identity parameter
/// of its own.
pub(crate) fn with_identity(frame: Vec<u8>, id: Option<UpdateId>) -> Vec<u8> {
    let Some(id) = id else {
        return frame;
    };
    let Ok((h, payload)) = checked_whole_frame(&frame, &DecodeLimits::unlimited()) else {
        // Our own frames parse; should one not, it is sent without the
        // identity, which the receiver orders by digests alone.
        return frame;
    };
    let fields = HeaderFields {
        identity: Some(id),
        signer: None,
        ..HeaderFields::of_header(&h)
    };
    frame_bytes(&h.params, h.n, &fields, payload)
}

/// A counting payload's error at frame offset `offset` as the frame
/// decoders report it: a work budget exceeded is a limit
/// (docs/FORMAT.md section 8.1, "Work"), the rest are `Counting`.
pub(crate) fn counting_error(
    offset: usize,
    source: crate::kinds::counting::CountingError,
) -> DecodeError {
    use crate::kinds::counting::{CountingError, DECISIONS_WHAT};
    match source {
        CountingError::TooManyDecisions { requested, limit } => DecodeError::LimitExceeded {
            what: DECISIONS_WHAT,
            requested,
            limit,
        },
        source => DecodeError::Counting { offset, source },
    }
}

/// The one full frame in `data`, checked, with `kind` (else
/// [`DecodeError::WrongKind`]).
pub(crate) fn checked_of_kind<'a>(
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
    source: crate::kinds::sparse::SparseError,
    limits: &DecodeLimits,
    frame_len: Option<u64>,
) -> DecodeError {
    match source {
        crate::kinds::sparse::SparseError::ListTooLarge { bytes, .. } if bytes > sparse_memory_limit(limits) => {
            DecodeError::LimitExceeded {
                what: "decoded memory (bytes; max_m / 8)",
                requested: bytes,
                limit: sparse_memory_limit(limits),
            }
        }
        crate::kinds::sparse::SparseError::ListTooLarge { bytes, .. } => {
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
