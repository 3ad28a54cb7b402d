//! XOR delta frames (Mitzenmacher §IV): a changed set is re-sent as the coded
//! XOR of the new filter and the old one.
//!
//! Two frame types carry a delta. Both name the filter they apply to and the
//! one they produce by 64-bit content digests ([`digest`]); [`apply`] refuses
//! any other base and verifies the result before it replaces the base, so a
//! receiver never silently diverges.
//!
//! * **Conditional delta** (type 3, format version 2; [`encode_delta`]): the
//!   XOR is coded *given the base*, which the receiver holds. XOR bits where
//!   the base is 0 (keys added) and where it is 1 (keys removed) are coded as
//!   two arrays (module `split`): log2 C(m0, d0) + log2 C(m1, d1) bits instead of
//!   log2 C(m, d), about 12% fewer at the paper's m/n = 32, k = 2, c = 5%.
//! * **Plain delta** (type 2, version 1; [`encode_delta_plain`]): the XOR coded
//!   alone, as in the paper, for receivers that only read version 1.

use crate::prelude::*;
// Decoding code: the panic lints are denied for this module tree in lib.rs.

mod split;

use crate::coder;
use crate::filter::{zeroed_words, BloomFilter, FilterError};
use crate::format::header::HeaderFields;
use crate::format::FilterKind;
use crate::kinds::sparse::{self};
use crate::format::{self, varint, DecodeError, DecodeLimits, FilterType, FrameHeader, UpdateId};
#[cfg(feature = "std")]
use crate::math::log2_binomial;
use split::Side;
use crate::filter::Digester;

internal! {
/// Bytes of the two digests at the front of a delta payload.
pub const DIGESTS_LEN: usize = format::header::DELTA_MIN_PAYLOAD as usize;
}

internal! {
/// Smallest conditional delta payload: the digests and two one-byte varints.
pub const CONDITIONAL_MIN_PAYLOAD: usize =
    format::header::CONDITIONAL_DELTA_MIN_PAYLOAD as usize;
}

internal! {
/// The content digest of a filter ([`BloomFilter::digest`]), which deltas
/// name as their base and result.
pub fn digest(f: &BloomFilter) -> u64 {
    f.digest()
}
}

/// A delta frame's header and digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeltaHeader {
    /// The frame header (a delta type; `n` is the new filter's).
    pub frame: FrameHeader,
    /// Digest of the filter the delta applies to.
    pub base_digest: u64,
    /// Digest of the filter it produces.
    pub result_digest: u64,
    /// For a conditional delta, the layout of its two coded parts.
    pub parts: Option<PartLayout>,
}

/// Where a conditional delta's two coded parts lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartLayout {
    /// Number of 1 bits in the base (so the part for the base's 0s has
    /// m − base_ones bits and the part for its 1s has base_ones bits).
    pub base_ones: u64,
    /// Frame offset of the part for the base's 0 positions (the part for
    /// its 1 positions follows it and runs to the end of the payload).
    pub zeros_at: usize,
    /// Byte length of the part for the base's 0 positions.
    pub zeros_len: usize,
    /// Byte length of the part for the base's 1 positions.
    pub ones_len: usize,
}

impl PartLayout {
    /// (side, bits, frame offset, byte length) of each part, in wire order.
    fn parts(&self, m: u64) -> [(Side, u64, usize, usize); 2] {
        [
            (
                Side::Zeros,
                // part_layout checked base_ones <= m.
                m.saturating_sub(self.base_ones),
                self.zeros_at,
                self.zeros_len,
            ),
            (
                Side::Ones,
                self.base_ones,
                self.zeros_at.saturating_add(self.zeros_len),
                self.ones_len,
            ),
        ]
    }
}

/// What both delta types are made from: the XOR of the two versions and
/// the payload's leading digests (computed once when both types are tried).
pub(crate) struct Change {
    xor: Vec<u64>,
    digests: Vec<u8>,
    identity: Option<UpdateId>,
    pub(crate) kind: FilterKind,
}

impl Change {
    pub(crate) fn new(
        old: &BloomFilter,
        new: &BloomFilter,
        identity: Option<UpdateId>,
    ) -> Result<Self, FilterError> {
        if old.params() != new.params() {
            return Err(FilterError::ParamsMismatch {
                left: *old.params(),
                right: *new.params(),
            });
        }
        let xor = old
            .as_words()
            .iter()
            .zip(new.as_words())
            .map(|(a, b)| a ^ b)
            .collect();
        let mut digests = Vec::with_capacity(DIGESTS_LEN);
        digests.extend_from_slice(&digest(old).to_le_bytes());
        digests.extend_from_slice(&digest(new).to_le_bytes());
        Ok(Change {
            xor,
            digests,
            identity,
            kind: FilterKind::Standard,
        })
    }

    /// The type 2 frame: digests, then the XOR coded alone.
    pub(crate) fn plain(&self, new: &BloomFilter) -> Vec<u8> {
        let mut payload = self.digests.clone();
        coder::encode(&self.xor, new.m(), &mut payload);
        format::frame_bytes(new.params(), new.len(), &self.fields(FilterType::Delta), &payload)
    }

    /// The type 3 frame: digests, base_ones, zeros_len, then the XOR bits at
    /// the base's 0s and at its 1s, each coded as its own array (an empty
    /// part is no bytes).
    pub(crate) fn conditional(&self, old: &BloomFilter, new: &BloomFilter) -> Vec<u8> {
        let m = new.m();
        let base = old.as_words();
        let (zeros, zeros_bits) = split::gather(&self.xor, base, m, Side::Zeros);
        let (ones, ones_bits) = split::gather(&self.xor, base, m, Side::Ones);
        let mut first = Vec::new();
        if zeros_bits > 0 {
            coder::encode(&zeros, zeros_bits, &mut first);
        }
        let mut payload = self.digests.clone();
        varint::put(&mut payload, ones_bits);
        varint::put(&mut payload, first.len() as u64);
        payload.extend_from_slice(&first);
        if ones_bits > 0 {
            coder::encode(&ones, ones_bits, &mut payload);
        }
        format::frame_bytes(
            new.params(),
            new.len(),
            &self.fields(FilterType::ConditionalDelta),
            &payload,
        )
    }

    fn fields(&self, ty: FilterType) -> HeaderFields {
        HeaderFields {
            filter_type: ty,
            kind: self.kind,
            identity: self.identity,
            squid_cblock: None,
            signer: None,
            bip37_flags: None,
            block_hash: None,
        }
    }

    /// The smaller of the two delta types (the conditional one on ties).
    pub(crate) fn smallest(&self, old: &BloomFilter, new: &BloomFilter) -> Vec<u8> {
        let cond = self.conditional(old, new);
        let plain = self.plain(new);
        if plain.len() < cond.len() {
            plain
        } else {
            cond
        }
    }
}

/// Encodes the smallest delta that turns `old` into `new`: the conditional
/// delta ([`encode_delta_conditional`]), unless the plain one
/// ([`encode_delta_plain`]) is smaller, which happens when the base is about
/// half full and the two parts have nearly the same density (then the second
/// part's fixed costs are not repaid). A conditional delta needs a format
/// version 2 receiver; use [`encode_delta_plain`] for version-1 receivers.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
///
/// # Examples
/// ```
/// use compressed_bloom::{delta, BloomFilter, FilterParams};
/// let p = FilterParams::new(320_000, 2, 0);
/// let mut old = BloomFilter::new(p)?;
/// for i in 0..10_000u32 { old.insert(&i.to_le_bytes()); }
/// let mut new = BloomFilter::new(p)?;
/// for i in 500..10_500u32 { new.insert(&i.to_le_bytes()); } // 5% replaced
/// let frame = delta::encode_delta(&old, &new)?;
/// assert!(frame.len() < 1_950, "{} bytes", frame.len());   // vs 40,000 raw
/// let mut copy = old.clone();
/// delta::apply(&mut copy, &frame, &Default::default())?;
/// assert_eq!(copy, new);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_delta(old: &BloomFilter, new: &BloomFilter) -> Result<Vec<u8>, FilterError> {
    Ok(Change::new(old, new, None)?.smallest(old, new))
}

internal! {
/// As [`encode_delta`], in a version-3 frame that carries the update
/// identity `id` of the version it produces (docs/FORMAT.md section 5): the
/// delta turns version `id.seq − 1` of the stream into `id.seq`.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme
/// differ; [`FilterError::InvalidSeq`] if `id.seq` is 0.
pub fn encode_delta_with_identity(
    old: &BloomFilter,
    new: &BloomFilter,
    id: UpdateId,
) -> Result<Vec<u8>, FilterError> {
    if id.seq == 0 {
        return Err(FilterError::InvalidSeq);
    }
    Ok(Change::new(old, new, Some(id))?.smallest(old, new))
}
}

internal! {
/// Encodes the conditional delta (type 3, format version 2) that turns `old`
/// into `new`: the XOR bits at the base's 0 positions and at its 1 positions
/// coded as two arrays.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
pub fn encode_delta_conditional(
    old: &BloomFilter,
    new: &BloomFilter,
) -> Result<Vec<u8>, FilterError> {
    Ok(Change::new(old, new, None)?.conditional(old, new))
}
}

internal! {
/// Encodes the plain delta (type 2, format version 1) that turns `old` into
/// `new`: the XOR coded without reference to the base, as in the paper.
/// [`encode_delta`] is smaller; this one is for version-1 receivers.
///
/// # Errors
/// [`FilterError::ParamsMismatch`] if the filters' m, k, seed or scheme differ.
pub fn encode_delta_plain(old: &BloomFilter, new: &BloomFilter) -> Result<Vec<u8>, FilterError> {
    Ok(Change::new(old, new, None)?.plain(new))
}
}

/// Parses and checks a delta frame (header, limits, lengths, CRC, and for a
/// conditional delta the part layout) without decoding its bits.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::WrongFrameType`] for a full filter.
pub fn inspect_delta(data: &[u8], limits: &DecodeLimits) -> Result<DeltaHeader, DecodeError> {
    let (h, payload) = format::checked_whole_frame(data, limits)?;
    delta_header(h, payload)
}

/// The delta header of a frame whose header and CRC are checked.
pub(crate) fn delta_header(h: FrameHeader, payload: &[u8]) -> Result<DeltaHeader, DecodeError> {
    if !h.filter_type.is_delta() {
        return Err(DecodeError::WrongFrameType {
            found: h.filter_type,
            expected: "a delta",
        });
    }
    // The header parser guarantees payload_len >= DIGESTS_LEN for both delta
    // types; `get` keeps that an error, not a panic, if it ever changed.
    let digest_at = |i: usize| -> Result<u64, DecodeError> {
        let b = payload
            .get(i..i.saturating_add(8))
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .ok_or(DecodeError::Truncated {
                needed: h.header_len.saturating_add(i).saturating_add(8) as u64,
                available: h.header_len.saturating_add(payload.len()) as u64,
            })?;
        Ok(u64::from_le_bytes(b))
    };
    let parts = match h.filter_type {
        FilterType::ConditionalDelta => Some(part_layout(&h, payload)?),
        _ => None,
    };
    Ok(DeltaHeader {
        frame: h,
        base_digest: digest_at(0)?,
        result_digest: digest_at(8)?,
        parts,
    })
}

/// Reads a conditional delta's `base_ones` and first-part length and checks
/// them against m and the payload.
fn part_layout(h: &FrameHeader, payload: &[u8]) -> Result<PartLayout, DecodeError> {
    let mut at = DIGESTS_LEN;
    let mut field = |name: &'static str| -> Result<(u64, usize), DecodeError> {
        let start = h.header_len.saturating_add(at);
        let rest = payload.get(at..).unwrap_or(&[]);
        let (v, used) = varint::get(rest).map_err(|reason| DecodeError::BadVarint {
            offset: start,
            field: name,
            reason,
        })?;
        // used <= rest.len(): at stays within the payload.
        at = at.saturating_add(used);
        Ok((v, start))
    };
    let (base_ones, ones_off) = field("base_ones")?;
    let (zeros_len, len_off) = field("zeros_len")?;
    let m = h.params.m;
    if base_ones > m {
        return Err(DecodeError::InvalidField {
            offset: ones_off,
            field: "base_ones",
            reason: "the base cannot have more 1 bits than m",
        });
    }
    let rest = payload.len().saturating_sub(at) as u64;
    if zeros_len > rest {
        return Err(DecodeError::InvalidField {
            offset: len_off,
            field: "zeros_len",
            reason: "the first part runs past the end of the payload",
        });
    }
    // zeros_len <= rest < payload.len(), a usize.
    let zeros_len = zeros_len as usize;
    let ones_len = payload.len().saturating_sub(at).saturating_sub(zeros_len);
    for (bits, len, what) in [
        (m.saturating_sub(base_ones), zeros_len, "zeros_len"),
        (base_ones, ones_len, "payload_len"),
    ] {
        if bits == 0 && len != 0 {
            return Err(DecodeError::InvalidField {
                offset: len_off,
                field: what,
                reason: "a part with no bits must have no bytes",
            });
        }
        if bits > 0 && len == 0 {
            return Err(DecodeError::InvalidField {
                offset: len_off,
                field: what,
                reason: "a part with bits cannot be empty",
            });
        }
    }
    Ok(PartLayout {
        base_ones,
        zeros_at: h.header_len.saturating_add(at),
        zeros_len,
        ones_len,
    })
}

internal! {
/// One coded array of a delta: how many bits it covers and how many of them
/// are 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeltaPart {
    /// Bits in the array (m for a plain delta).
    pub bits: u64,
    /// Changed bits (1s of the XOR) in it.
    pub ones: u64,
    /// Coded bytes of the array.
    pub coded_bytes: usize,
}
}

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
impl DeltaPart {
    /// Entropy bound log2 C(bits, ones) of the array, in bits.
    #[cfg(feature = "std")]
    pub fn entropy_bits(&self) -> f64 {
        log2_binomial(self.bits, self.ones)
    }
}

internal! {
/// What a delta frame holds, found by decoding it without a base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaSummary {
    /// Header and digests.
    pub header: DeltaHeader,
    /// The coded arrays: one for a plain delta; for a conditional delta the
    /// part for the base's 0 positions, then the part for its 1 positions.
    pub parts: Vec<DeltaPart>,
}
}

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
impl DeltaSummary {
    /// Changed bits (ones of the XOR) in all parts.
    pub fn changed_bits(&self) -> u64 {
        self.parts.iter().map(|p| p.ones).sum()
    }

    /// Entropy bound of the coded arrays: Σ log2 C(bits, ones), in bits.
    #[cfg(feature = "std")]
    pub fn entropy_bits(&self) -> f64 {
        self.parts.iter().map(DeltaPart::entropy_bits).sum()
    }

    /// Entropy bound of the same XOR coded without the base (the
    /// paper's bound for a delta): log2 C(m, changed bits), in bits. A
    /// conditional delta's parts sum to less where the base predicts the
    /// change.
    #[cfg(feature = "std")]
    pub fn unconditional_entropy_bits(&self) -> f64 {
        let m = self.parts.iter().map(|p| p.bits).sum();
        log2_binomial(m, self.changed_bits())
    }

    /// Bytes of coded arrays in the frame.
    pub fn coded_bytes(&self) -> usize {
        self.parts.iter().map(|p| p.coded_bytes).sum()
    }
}

/// The coded arrays of a delta as (bits, frame offset, byte length): the
/// whole XOR for a plain delta, the two parts of a conditional one.
fn coded_arrays(d: &DeltaHeader) -> Vec<(u64, usize, usize)> {
    let h = &d.frame;
    match &d.parts {
        Some(l) => l
            .parts(h.params.m)
            .iter()
            .map(|&(_, bits, at, len)| (bits, at, len))
            .collect(),
        None => {
            let (at, len) = plain_span(h);
            vec![(h.params.m, at, len)]
        }
    }
}

/// Frame offset and length of a plain delta's coded XOR (after the digests).
pub(crate) fn plain_span(h: &FrameHeader) -> (usize, usize) {
    // The header parser checked payload_len >= DIGESTS_LEN.
    let at = h.header_len.saturating_add(DIGESTS_LEN);
    (at, (h.payload_len as usize).saturating_sub(DIGESTS_LEN))
}

/// `data[at..at + len]`, which [`inspect_delta`] has checked lies in the
/// frame.
pub(crate) fn frame_slice(data: &[u8], at: usize, len: usize) -> Result<&[u8], DecodeError> {
    let end = at.saturating_add(len);
    data.get(at..end).ok_or(DecodeError::Truncated {
        needed: end as u64,
        available: data.len() as u64,
    })
}

/// Decodes the coded array of `bits` bits at `data[at..at + len]` one coder
/// block at a time, handing each block's words and bit count to `sink`. An array of no
/// bits has no bytes and nothing to decode.
fn decode_array(
    data: &[u8],
    at: usize,
    len: usize,
    bits: u64,
    mut sink: impl FnMut(&[u64], u64),
) -> Result<(), DecodeError> {
    if bits == 0 {
        return Ok(());
    }
    let coded = frame_slice(data, at, len)?;
    coder::decode_each_block(coded, bits, |_, words, n| sink(words, n))
        .map_err(|source| DecodeError::Payload { offset: at, source })
}

/// The changed positions of a sparse delta, decoded; their list is held
/// to the receiver's memory limit at its count, before it is allocated.
pub(crate) fn sparse_changes(
    data: &[u8],
    d: &DeltaHeader,
    limits: &DecodeLimits,
) -> Result<sparse::EliasFano, DecodeError> {
    let (at, len) = plain_span(&d.frame);
    let max_bytes = format::sparse_memory_limit(limits);
    sparse::decode_payload_within(frame_slice(data, at, len)?, d.frame.params.m, max_bytes)
        .map_err(|source| format::sparse_error(at, source, limits, None))
}

internal! {
/// Decodes a delta frame's coded arrays to count their bits, without the
/// base (`cbloom inspect`). Memory: one coder block.
///
/// # Errors
/// As [`inspect_delta`], and malformed coded bits.
pub fn summarize(data: &[u8], limits: &DecodeLimits) -> Result<DeltaSummary, DecodeError> {
    let d = inspect_delta(data, limits)?;
    if matches!(d.frame.kind, FilterKind::Scalable | FilterKind::Counting) {
        // Their parts are sized by the base (old layers) or are not bit
        // arrays of changes alone (counter values): nothing to count here.
        return Err(DecodeError::WrongKind {
            found: d.frame.kind,
            expected: FilterKind::Standard,
        });
    }
    if d.frame.kind == FilterKind::Sparse {
        let changes = sparse_changes(data, &d, limits)?;
        return Ok(DeltaSummary {
            header: d,
            parts: vec![DeltaPart {
                bits: d.frame.params.m,
                ones: changes.len(),
                coded_bytes: plain_span(&d.frame).1,
            }],
        });
    }
    let mut parts = Vec::with_capacity(2);
    for (bits, at, len) in coded_arrays(&d) {
        let mut ones = 0u64;
        decode_array(data, at, len, bits, |words, _| {
            let block = coder::popcount::count_ones(words);
            ones = ones.saturating_add(block);
        })?;
        parts.push(DeltaPart {
            bits,
            ones,
            coded_bytes: len,
        });
    }
    Ok(DeltaSummary { header: d, parts })
}
}

/// A delta decoded against its base: the plain delta's decoder yields the
/// XOR, the conditional delta's scatter the result itself.
enum Decoded {
    Xor(Vec<u64>),
    Result(Vec<u64>),
}

/// Checks that `base` (whose digest is `base_digest`) is the filter the
/// delta names, then decodes the delta.
fn checked_decode(
    base: &BloomFilter,
    base_digest: u64,
    data: &[u8],
    d: &DeltaHeader,
) -> Result<Decoded, DecodeError> {
    let h = &d.frame;
    same_params(&h.params, base.params())?;
    if base_digest != d.base_digest {
        return Err(DecodeError::WrongBase {
            expected: d.base_digest,
            actual: base_digest,
        });
    }
    let Some(layout) = d.parts else {
        let (at, len) = plain_span(h);
        return format::decode_coded(frame_slice(data, at, len)?, &h.params, at).map(Decoded::Xor);
    };
    scatter_parts(base, data, h, &layout).map(Decoded::Result)
}

/// Decodes a conditional delta's two parts over the base into the result
/// (the base XOR the change). The filter's words are cut into one range per
/// thread (up to one per core for arrays of two coder blocks or more); each
/// range finds where its part bits start from the base's ranks, which one
/// popcount pass on the same threads (the one that checks `base_ones`)
/// yields, and decodes the blocks it needs itself. Memory beyond
/// the XOR: two coder blocks (2 MiB at most) and a 32 KiB decode table per
/// thread. Errors are those of the first range that fails, in filter order,
/// so they do not depend on the thread count.
fn scatter_parts(
    base: &BloomFilter,
    data: &[u8],
    h: &FrameHeader,
    layout: &PartLayout,
) -> Result<Vec<u64>, DecodeError> {
    let m = h.params.m;
    let words = base.as_words();
    let n = words.len();
    // One without std.
    let threads = coder::threads_for(coder::block_count(m));
    // Range t is words [n·t/T, n·(t+1)/T), computed in u128: n·t fits
    // there whatever the width of usize (on a 32-bit target it may not fit
    // a usize), and the quotient is at most n.
    let bound = |t: usize| {
        let q = (n as u128)
            .saturating_mul(t as u128)
            .checked_div(threads as u128)
            .unwrap_or(0);
        usize::try_from(q).unwrap_or(n)
    };
    let bounds: Vec<(usize, usize)> = (0..threads)
        .map(|t| (bound(t), bound(t.saturating_add(1))))
        .collect();
    // The 1s of each range, counted on the threads that will scatter them
    // (a serial pass took 1.1 ms of a 6 ms apply on the 17.5 MB filter).
    let counts = coder::map_threaded(&bounds, threads, |(): &mut (), &(a, b)| {
        let range = words.get(a..b).unwrap_or_default();
        // At most 2^56 bits: the sum cannot overflow.
        coder::popcount::count_ones(range)
    });
    // The 1s of the base before each range.
    let mut ranks = Vec::with_capacity(threads);
    let mut ones = 0u64;
    for count in counts {
        ranks.push(ones);
        ones = ones.saturating_add(count);
    }
    if ones != layout.base_ones {
        // The digest matched, so the frame itself is inconsistent.
        return Err(DecodeError::InvalidField {
            offset: h.header_len.saturating_add(DIGESTS_LEN),
            field: "base_ones",
            reason: "differs from the 1 bits of the base the digest names",
        });
    }
    let [zeros_part, ones_part] = layout.parts(m);
    let blocks = |(_, bits, at, len): (Side, u64, usize, usize)| {
        if bits == 0 {
            return Ok(None);
        }
        coder::Blocks::new(frame_slice(data, at, len)?, bits)
            .map(Some)
            .map_err(|source| DecodeError::Payload { offset: at, source })
    };
    let (zb, ob) = (blocks(zeros_part)?, blocks(ones_part)?);
    let mut result = zeroed_words(h.params.word_len())?;
    let run = |w0: usize, rank: u64, out: &mut [u64]| {
        // w0 < n, so 64·w0 < m + 64 and rank <= 64·w0.
        let zeros_start = (w0 as u64).saturating_mul(64).saturating_sub(rank);
        let mut z = split::PartReader::new(zb.as_ref(), zeros_start);
        let mut o = split::PartReader::new(ob.as_ref(), rank);
        split::scatter(words, m, w0, out, &mut z, &mut o).map_err(|(side, source)| {
            let at = if side == Side::Zeros { zeros_part.2 } else { ones_part.2 };
            DecodeError::Payload { offset: at, source }
        })
    };
    let mut jobs = Vec::with_capacity(threads);
    let mut rest = result.as_mut_slice();
    for (&(a, b), rank) in bounds.iter().zip(ranks) {
        let (head, tail) = rest.split_at_mut(b.saturating_sub(a).min(rest.len()));
        rest = tail;
        jobs.push((a, rank, head));
    }
    #[cfg(feature = "std")]
    if jobs.len() > 1 {
        let results: Vec<Result<(), DecodeError>> = std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .into_iter()
                .map(|(a, rank, out)| s.spawn(move || run(a, rank, out)))
                .collect();
            handles
                .into_iter()
                // A panic in a worker is a bug: re-raise it here.
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        results.into_iter().collect::<Result<(), _>>()?;
        return Ok(result);
    }
    for (a, rank, out) in jobs {
        run(a, rank, out)?;
    }
    Ok(result)
}

/// The base a delta names, checked against the digest a receiver holds:
/// the O(1) refusal every kind's apply starts with.
pub(crate) fn check_base(d: &DeltaHeader, held: u64) -> Result<(), DecodeError> {
    if d.base_digest == held {
        Ok(())
    } else {
        Err(DecodeError::WrongBase {
            expected: d.base_digest,
            actual: held,
        })
    }
}

/// Refuses a delta of another kind than the base's.
pub(crate) fn expect_kind(d: &DeltaHeader, kind: FilterKind) -> Result<(), DecodeError> {
    if d.frame.kind == kind {
        Ok(())
    } else {
        Err(DecodeError::WrongKind {
            found: d.frame.kind,
            expected: kind,
        })
    }
}

/// A delta's parameters against its base's: `ParamsMismatch` unless equal.
pub(crate) fn same_params(frame: &crate::FilterParams, base: &crate::FilterParams) -> Result<(), DecodeError> {
    if frame != base {
        return Err(DecodeError::ParamsMismatch {
            frame: *frame,
            filter: *base,
        });
    }
    Ok(())
}

/// A kind's delta error as a [`DecodeError`]: the digest mismatches as for
/// a standard filter, the payload's own error as `payload` says.
pub(crate) fn kind_delta_error<E>(
    e: crate::kinds::bits::KindDeltaError<E>,
    payload: impl FnOnce(E) -> DecodeError,
) -> DecodeError {
    use crate::kinds::bits::KindDeltaError as K;
    match e {
        K::WrongBase { expected, actual } => DecodeError::WrongBase { expected, actual },
        K::ResultMismatch { expected, actual } => DecodeError::ResultMismatch { expected, actual },
        K::Payload(source) => payload(source),
    }
}

internal! {
/// Decodes a delta frame to its XOR bit array (as a filter with the frame's
/// parameters and the new version's n). A conditional delta is coded given
/// its base, so the base is needed; it must be the filter the delta names.
///
/// # Errors
/// As [`apply`], except [`DecodeError::ResultMismatch`].
pub fn decode_xor(
    base: &BloomFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(DeltaHeader, BloomFilter), DecodeError> {
    let d = inspect_delta(data, limits)?;
    expect_kind(&d, FilterKind::Standard)?;
    let words = match checked_decode(base, digest(base), data, &d)? {
        Decoded::Xor(words) => words,
        Decoded::Result(mut words) => {
            for (w, b) in words.iter_mut().zip(base.as_words()) {
                *w ^= b;
            }
            words
        }
    };
    Ok((
        d,
        BloomFilter::from_words_unchecked(d.frame.params, d.frame.n, words),
    ))
}
}

/// Applies a delta frame (either type) to `base`. On success `base` is the
/// filter the delta produces (its digest verified); on any error `base` is
/// unchanged.
///
/// This hashes `base` (⌈m/8⌉ bytes) to check that the delta applies to it.
/// A receiver that keeps the digest of the filter it holds should call
/// [`apply_with_digest`], which refuses a delta for another base without
/// reading the base.
///
/// Memory: the result's bit array, plus for a conditional delta, on each of
/// its threads (one per core, at most one per coder block), one decoded
/// coder block of each part (1 MiB each at most) and a 32 KiB decode table.
///
/// # Errors
/// Any [`DecodeError`] of the frame; [`DecodeError::ParamsMismatch`] if the
/// delta is for other parameters; [`DecodeError::WrongBase`] if `base` is not
/// the filter the delta was made from (a missed or reordered update: ask for
/// a full frame); [`DecodeError::ResultMismatch`] if the result's digest
/// differs (corruption the CRC missed, or a digest collision).
pub fn apply(
    base: &mut BloomFilter,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    // Check the frame, and that its parameters are the base's, before
    // hashing the base: a bad frame costs no pass over m.
    let d = inspect_delta(data, limits)?;
    expect_kind(&d, FilterKind::Standard)?;
    same_params(&d.frame.params, base.params())?;
    let base_digest = digest(base);
    apply_checked(base, base_digest, data, &d).map(|_| ())
}

/// Applies a delta frame to `base`, whose digest ([`digest`]) the caller
/// keeps as `base_digest`; returns the new filter's digest, to keep for the
/// next delta. A delta for another base is refused after the frame checks
/// alone (header, limits, CRC: work proportional to the frame), without
/// reading the base. The result's digest costs one pass over it: for a
/// plain delta the same pass that XORs the base in, for a conditional one a
/// pass after the scatter, which writes the result itself.
///
/// If `base_digest` is not the digest of `base`, a delta for the filter
/// `base_digest` names may be applied to `base`; the result then differs
/// from the one the frame names and is refused, with
/// [`DecodeError::ResultMismatch`], or for a conditional delta usually
/// sooner with [`DecodeError::InvalidField`] (its count of the base's 1
/// bits does not match `base`), unless 64-bit digests collide.
///
/// # Errors
/// As [`apply`]; on any error `base` is unchanged.
///
/// # Examples
/// ```
/// use compressed_bloom::{delta, BloomFilter, FilterParams};
/// let p = FilterParams::new(10_000, 2, 0);
/// let (mut a, mut b) = (BloomFilter::new(p)?, BloomFilter::new(p)?);
/// a.insert(b"x");
/// b.insert(b"y");
/// let frame = delta::encode_delta(&a, &b)?;
/// let mut held = a.clone();
/// let mut held_digest = delta::digest(&held);      // computed once
/// held_digest = delta::apply_with_digest(&mut held, held_digest, &frame, &Default::default())?;
/// assert_eq!((held_digest, &held), (delta::digest(&b), &b));
/// // Replaying it now names a base this receiver no longer holds: refused in O(frame).
/// assert!(delta::apply_with_digest(&mut held, held_digest, &frame, &Default::default()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn apply_with_digest(
    base: &mut BloomFilter,
    base_digest: u64,
    data: &[u8],
    limits: &DecodeLimits,
) -> Result<u64, DecodeError> {
    let d = inspect_delta(data, limits)?;
    apply_checked(base, base_digest, data, &d)
}

/// Applies the delta `d` (of the checked frame `data`) to `base`, whose
/// digest is `base_digest`; returns the result's digest.
pub(crate) fn apply_checked(
    base: &mut BloomFilter,
    base_digest: u64,
    data: &[u8],
    d: &DeltaHeader,
) -> Result<u64, DecodeError> {
    apply_checked_kind(base, base_digest, data, d, FilterKind::Standard)
}

/// [`apply_checked`] for a delta of `kind` (the base's bit array).
pub(crate) fn apply_checked_kind(
    base: &mut BloomFilter,
    base_digest: u64,
    data: &[u8],
    d: &DeltaHeader,
    kind: FilterKind,
) -> Result<u64, DecodeError> {
    expect_kind(d, kind)?;
    let mut digester = Digester::new(&d.frame.params);
    let words = match checked_decode(base, base_digest, data, d)? {
        Decoded::Xor(mut words) => {
            // One pass: XOR a chunk into the result and hash it while it is
            // cached.
            for (chunk, b) in words
                .chunks_mut(Digester::CHUNK_WORDS)
                .zip(base.as_words().chunks(Digester::CHUNK_WORDS))
            {
                for (w, b) in chunk.iter_mut().zip(b) {
                    *w ^= b;
                }
                digester.update(chunk);
            }
            words
        }
        Decoded::Result(words) => {
            digester.update(&words);
            words
        }
    };
    let got = digester.finish();
    if got != d.result_digest {
        return Err(DecodeError::ResultMismatch {
            expected: d.result_digest,
            actual: got,
        });
    }
    *base = BloomFilter::from_words_unchecked(d.frame.params, d.frame.n, words);
    Ok(got)
}
