//! The frame header (`docs/FORMAT.md`, section 2). Versions 1 and 2
//! share one layout (version 2 adds filter type 3); version 3 adds the kind
//! byte, the update identity and metadata records.
//!
//! ```text
//! offset  size  field
//! 0       2     magic 0xCB 0xF1
//! 2       1     format version (1, 2 or 3: the lowest that defines what
//!               the frame uses)
//! 3       1     filter type (0 raw, 1 coded, 2 delta, 3 conditional delta;
//!               4 static coded, version 3 only)
//! 4       1     hash scheme id (1 xxh3; version 3 only: 2 Squid's MD5,
//!               3 BIP158's SipHash-2-4, 4 BIP37's MurmurHash3)
//! 5       1     flags (v1, v2: must be 0; v3: 0x01 identity, 0x02 metadata)
//! 6       1     kind (version 3 only; 0 standard, 1 counting, 2 partitioned,
//!               3 scalable, 4 sparse, 5 ribbon)
//! 6 or 7  var   seed        (LEB128)
//!         var   m           (LEB128, bits)
//!         var   k           (LEB128)
//!         var   n           (LEB128, keys)
//!         var   stream, epoch, seq  (v3 with the identity flag)
//!         var   meta_len, records   (v3 with the metadata flag)
//!         var   payload_len (LEB128, bytes)
//!         ...   payload
//!         4     CRC-32C of every preceding byte of the frame (LE)
//! ```

use crate::prelude::*;
use super::error::DecodeError;
use super::limits::DecodeLimits;
use super::varint;
use crate::filter::{FilterParams, MAX_K, MAX_M};
use crate::hash::HashScheme;
pub use crate::wire::kind_id::{FilterKind, FilterType};

/// The two magic bytes that open every frame.
pub const MAGIC: [u8; 2] = [0xCB, 0xF1];
/// The newest format version this crate reads and writes. A frame carries the
/// lowest version that defines what it uses ([`FrameHeader::version`]), so
/// full frames and plain deltas without an update identity stay readable by
/// version-1 decoders.
pub const VERSION: u8 = 3;
/// The oldest format version this crate reads.
pub const MIN_VERSION: u8 = 1;
/// Bytes before the first varint in versions 1 and 2.
pub const FIXED_LEN: usize = 6;
/// Bytes before the first varint in version 3 (the kind byte is added).
pub const FIXED_LEN_V3: usize = 7;
/// Bytes of the trailing checksum.
pub const CRC_LEN: usize = 4;
/// Largest `meta_len` of a version-3 frame (docs/FORMAT.md, section 6).
pub const MAX_META_LEN: u64 = 4096;
/// Longest possible header: the fixed bytes, eight varints of at most 10
/// bytes (seed, m, k, n, stream, epoch, seq, payload_len), `meta_len`'s
/// varint and the records.
pub const MAX_HEADER_LEN: usize = FIXED_LEN_V3 + 9 * 10 + MAX_META_LEN as usize;

/// Metadata tag 1: Squid's 128-byte `StoreDigestCBlock`, verbatim
/// (docs/FORMAT.md section 6).
pub const META_SQUID_CBLOCK: u64 = 1;
/// Length of Squid's digest header.
pub const SQUID_CBLOCK_LEN: usize = 128;
/// Metadata tag 2: the frame is signed (docs/FORMAT.md section 6): the
/// record holds the signing key's id, and the Ed25519 signature of the
/// whole frame, CRC included, follows the CRC.
pub const META_SIGNATURE: u64 = 2;
/// Metadata tag 4: BIP37's `nFlags`, one byte verbatim (docs/FORMAT.md
/// section 6), with hash scheme 4.
pub const META_BIP37: u64 = 4;
/// Length of a signing key's id: the first 8 bytes of its 32-byte Ed25519
/// public key.
pub const KEY_ID_LEN: usize = 8;
/// Length of the signature that follows a signed frame's CRC.
pub const SIGNATURE_LEN: usize = 64;
/// Metadata tag 3: a BIP158 basic filter's block hash (docs/FORMAT.md
/// section 6); it goes with hash scheme 3.
pub const META_BIP158: u64 = 3;
/// Length of a block hash.
pub const BLOCK_HASH_LEN: usize = 32;

/// Version-3 flag bit: the update identity follows n.
const FLAG_IDENTITY: u8 = 0x01;
/// Version-3 flag bit: metadata records follow.
const FLAG_METADATA: u8 = 0x02;

/// Where a version of a published filter stands in its publisher's history
/// (docs/FORMAT.md section 5): versions are ordered by `(epoch, seq)` within
/// a `stream`. A full frame is version `seq`; a delta turns version
/// `seq − 1` into `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UpdateId {
    /// Which published filter (chosen by the application).
    pub stream: u64,
    /// The publisher's incarnation: larger after a restart.
    pub epoch: u64,
    /// The version's number within the epoch.
    pub seq: u64,
}

impl UpdateId {
    /// `(epoch, seq)`, the order of versions within a stream.
    pub const fn version(&self) -> (u64, u64) {
        (self.epoch, self.seq)
    }
}

/// What a frame's header says beyond the filter's parameters: its coding,
/// kind and update identity (the fields an encoder chooses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeaderFields {
    pub(crate) filter_type: FilterType,
    pub(crate) kind: FilterKind,
    pub(crate) identity: Option<UpdateId>,
    /// Squid's digest header, kept as metadata tag 1 (section 6).
    pub(crate) squid_cblock: Option<[u8; SQUID_CBLOCK_LEN]>,
    /// The signing key's id, as metadata tag 2 (section 6): the frame is
    /// followed by its signature.
    pub(crate) signer: Option<[u8; KEY_ID_LEN]>,
    /// A BIP158 filter's block hash, as metadata tag 3 (section 6).
    pub(crate) block_hash: Option<[u8; BLOCK_HASH_LEN]>,
    /// BIP37's `nFlags`, as metadata tag 4 (section 6).
    pub(crate) bip37_flags: Option<u8>,
}

impl HeaderFields {
    /// The fields of a parsed header, to write its frame again with some
    /// of them changed.
    pub(crate) const fn of_header(h: &FrameHeader) -> Self {
        HeaderFields {
            filter_type: h.filter_type,
            kind: h.kind,
            identity: h.identity,
            squid_cblock: h.squid_cblock,
            signer: h.signer,
            block_hash: h.block_hash,
            bip37_flags: h.bip37_flags,
        }
    }

    /// A standard filter's frame of `filter_type` without an identity.
    pub(crate) const fn plain(filter_type: FilterType) -> Self {
        HeaderFields {
            filter_type,
            kind: FilterKind::Standard,
            identity: None,
            squid_cblock: None,
            signer: None,
            block_hash: None,
            bip37_flags: None,
        }
    }

    /// A frame of `kind` and `filter_type` without identity or metadata.
    pub(crate) const fn of_kind(kind: FilterKind, filter_type: FilterType) -> Self {
        HeaderFields {
            filter_type,
            kind,
            identity: None,
            squid_cblock: None,
            signer: None,
            block_hash: None,
            bip37_flags: None,
        }
    }

    /// The lowest version that defines everything these fields and the
    /// hash scheme use.
    pub(crate) const fn version(&self, scheme: HashScheme) -> u8 {
        if self.identity.is_some()
            || self.squid_cblock.is_some()
            || self.signer.is_some()
            || self.block_hash.is_some()
            || self.bip37_flags.is_some()
            || !matches!(self.kind, FilterKind::Standard)
            || scheme.min_version() >= 3
        {
            3
        } else {
            self.filter_type.min_version()
        }
    }

    /// The metadata records these fields carry (section 6), as written:
    /// `tag ‖ len ‖ bytes` for each, in increasing tag order; `None`
    /// without records.
    fn records(&self) -> Option<Vec<u8>> {
        if self.squid_cblock.is_none()
            && self.signer.is_none()
            && self.block_hash.is_none()
            && self.bip37_flags.is_none()
        {
            return None;
        }
        let mut out = Vec::new();
        if let Some(cb) = self.squid_cblock {
            varint::put(&mut out, META_SQUID_CBLOCK);
            varint::put(&mut out, SQUID_CBLOCK_LEN as u64);
            out.extend_from_slice(&cb);
        }
        if let Some(id) = self.signer {
            varint::put(&mut out, META_SIGNATURE);
            varint::put(&mut out, KEY_ID_LEN as u64);
            out.extend_from_slice(&id);
        }
        if let Some(hash) = self.block_hash {
            varint::put(&mut out, META_BIP158);
            varint::put(&mut out, BLOCK_HASH_LEN as u64);
            out.extend_from_slice(&hash);
        }
        if let Some(flags) = self.bip37_flags {
            varint::put(&mut out, META_BIP37);
            varint::put(&mut out, 1);
            out.push(flags);
        }
        Some(out)
    }
}

/// A parsed, validated frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Format version (1, 2 or 3).
    pub version: u8,
    /// Payload representation.
    pub filter_type: FilterType,
    /// The filter's kind ([`FilterKind::Standard`] in versions 1 and 2).
    pub kind: FilterKind,
    /// m, k, seed and hash scheme.
    pub params: FilterParams,
    /// Declared number of keys.
    pub n: u64,
    /// The update identity, if the frame carries one (version 3).
    pub identity: Option<UpdateId>,
    /// Frame offset and length of the metadata records (version 3), if any.
    pub metadata: Option<(usize, usize)>,
    /// Squid's digest header (metadata tag 1), if the frame carries one.
    pub squid_cblock: Option<[u8; SQUID_CBLOCK_LEN]>,
    /// The id of the key that signed the frame (metadata tag 2), if it is
    /// signed: its signature follows the CRC. Checked by
    /// [`verify_frame`](crate::format::verify_frame), not by the decoders.
    pub signer: Option<[u8; KEY_ID_LEN]>,
    /// The block hash of a BIP158 filter (metadata tag 3, internal byte
    /// order), if the frame holds one.
    pub block_hash: Option<[u8; BLOCK_HASH_LEN]>,
    /// BIP37's `nFlags` (metadata tag 4), if the frame is a BIP37
    /// `filterload` filter ([`Bip37Filter`](crate::kinds::bip37::Bip37Filter)).
    pub bip37_flags: Option<u8>,
    /// Payload length in bytes.
    pub payload_len: u64,
    /// Header length in bytes (fixed part plus varints and records).
    pub header_len: usize,
}

impl FrameHeader {
    /// Total frame length: header, payload, checksum, and the signature
    /// of a signed frame (saturating; [`parse`] refuses headers whose
    /// length does not fit in 64 bits).
    pub fn frame_len(&self) -> u64 {
        self.signed_len().saturating_add(self.signature_len())
    }

    /// Length of what the CRC and the signature cover, the CRC included:
    /// header, payload and checksum.
    pub fn signed_len(&self) -> u64 {
        (self.header_len as u64)
            .saturating_add(self.payload_len)
            .saturating_add(CRC_LEN as u64)
    }

    /// Bytes of the signature after the CRC: 64 for a signed frame, else 0.
    pub const fn signature_len(&self) -> u64 {
        if self.signer.is_some() {
            SIGNATURE_LEN as u64
        } else {
            0
        }
    }
}

/// Bytes a frame without an update identity spends outside its payload, for
/// the given fields.
pub fn frame_overhead(seed: u64, m: u64, k: u32, n: u64, payload_len: u64) -> usize {
    // Five varints of at most 10 bytes each and two small constants: no overflow.
    [
        FIXED_LEN,
        varint::len(seed),
        varint::len(m),
        varint::len(u64::from(k)),
        varint::len(n),
        varint::len(payload_len),
        CRC_LEN,
    ]
    .iter()
    .sum()
}

/// Bytes the version-3 header adds for `fields` over [`frame_overhead`]:
/// the kind byte and the identity's varints, if it is a version-3 frame.
pub(crate) fn v3_extra(fields: &HeaderFields, scheme: HashScheme) -> usize {
    if fields.version(scheme) < 3 {
        return 0;
    }
    // meta_len's varint and the records (at most 4096 bytes).
    let meta = fields
        .records()
        .map_or(0, |r| varint::len(r.len() as u64).saturating_add(r.len()));
    // Three varints of at most 10 bytes and the kind byte: no overflow.
    let id = fields.identity.map_or(0, |i| {
        [i.stream, i.epoch, i.seq]
            .iter()
            .map(|&v| varint::len(v))
            .sum::<usize>()
    });
    id.saturating_add(1).saturating_add(meta)
}

/// Appends a header to `out`.
pub(crate) fn write(
    out: &mut Vec<u8>,
    fields: &HeaderFields,
    params: &FilterParams,
    n: u64,
    payload_len: u64,
) {
    let version = fields.version(params.scheme);
    let records = fields.records();
    out.extend_from_slice(&MAGIC);
    out.push(version);
    out.push(fields.filter_type.id());
    out.push(params.scheme.id());
    if version >= 3 {
        let mut flags = 0;
        if fields.identity.is_some() {
            flags |= FLAG_IDENTITY;
        }
        if records.is_some() {
            flags |= FLAG_METADATA;
        }
        out.push(flags);
        out.push(fields.kind.id());
    } else {
        out.push(0);
    }
    varint::put(out, params.seed);
    varint::put(out, params.m);
    varint::put(out, u64::from(params.k));
    varint::put(out, n);
    if let Some(id) = fields.identity {
        varint::put(out, id.stream);
        varint::put(out, id.epoch);
        varint::put(out, id.seq);
    }
    if let Some(rec) = records {
        varint::put(out, rec.len() as u64);
        out.extend_from_slice(&rec);
    }
    varint::put(out, payload_len);
}

/// Reads the header's varints in wire order from a cursor, reporting where
/// each field starts.
struct Fields<'a> {
    data: &'a [u8],
    at: usize,
}

impl Fields<'_> {
    fn next(&mut self, field: &'static str) -> Result<(u64, usize), DecodeError> {
        let data = self.data;
        let start = self.at;
        let rest = data.get(start..).unwrap_or(&[]);
        let (v, used) = varint::get(rest).map_err(|reason| {
            if rest.len() < 10 && rest.iter().all(|b| b & 0x80 != 0) {
                DecodeError::Truncated {
                    needed: (data.len() as u64).saturating_add(1),
                    available: data.len() as u64,
                }
            } else {
                DecodeError::BadVarint {
                    offset: start,
                    field,
                    reason,
                }
            }
        })?;
        // used <= rest.len() = data.len() - at: at stays within data.
        self.at = start.saturating_add(used);
        Ok((v, start))
    }
}

/// Parses and validates the header at the front of `data` against `limits`.
/// Does not look at the payload or the checksum.
///
/// # Errors
/// The first problem found, in the order of docs/FORMAT.md section 2.3, as a
/// [`DecodeError`].
pub fn parse(data: &[u8], limits: &DecodeLimits) -> Result<FrameHeader, DecodeError> {
    let fixed = fixed_fields(data, limits)?;
    let fields = varint_fields(data, &fixed)?;
    check_ranges(&fixed, &fields, limits)?;
    let params = check_rules(&fixed, &fields)?;
    let header = FrameHeader {
        version: fixed.version,
        filter_type: fixed.filter_type,
        kind: fixed.kind,
        params,
        n: fields.n,
        identity: fields.identity,
        metadata: fields.metadata,
        squid_cblock: fields.squid_cblock.map(|(_, cb)| cb),
        signer: fields.signer,
        block_hash: fields.block_hash.map(|(_, hash)| hash),
        bip37_flags: fields.bip37_flags.map(|(_, f)| f),
        payload_len: fields.payload_len.0,
        header_len: fields.header_len,
    };
    check_size(&header, limits)?;
    Ok(header)
}

/// The fixed bytes of a header: magic through kind (section 2.3, steps 1
/// and 2).
struct Fixed {
    version: u8,
    filter_type: FilterType,
    scheme: HashScheme,
    flags: u8,
    kind: FilterKind,
    /// Where the varints start.
    len: usize,
}

/// The varint fields and records that follow the fixed bytes, with the
/// offsets that errors name.
struct Varints {
    seed: u64,
    m: (u64, usize),
    k: (u64, usize),
    n: u64,
    identity: Option<UpdateId>,
    seq_at: usize,
    metadata: Option<(usize, usize)>,
    squid_cblock: Option<(usize, [u8; SQUID_CBLOCK_LEN])>,
    signer: Option<[u8; KEY_ID_LEN]>,
    /// A BIP158 filter's block hash (tag 3), and where it starts.
    block_hash: Option<(usize, [u8; BLOCK_HASH_LEN])>,
    /// BIP37's flags byte and where it is.
    bip37_flags: Option<(usize, u8)>,
    payload_len: (u64, usize),
    header_len: usize,
}

/// Magic, version, filter type, hash scheme, flags and (version 3) kind,
/// each checked as it is read; a kind the receiver does not accept is
/// refused here, before any varint.
fn fixed_fields(data: &[u8], limits: &DecodeLimits) -> Result<Fixed, DecodeError> {
    let byte = |i: usize| {
        data.get(i).copied().ok_or(DecodeError::Truncated {
            needed: (i as u64).saturating_add(1),
            available: data.len() as u64,
        })
    };
    let magic = [byte(0)?, byte(1)?];
    if magic != MAGIC {
        return Err(DecodeError::BadMagic { found: magic });
    }
    let version = byte(2)?;
    if !(MIN_VERSION..=VERSION).contains(&version) {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    let ty = byte(3)?;
    let filter_type = FilterType::from_id(ty, version)
        .ok_or(DecodeError::UnknownFilterType { id: ty, version })?;
    let scheme_id = byte(4)?;
    let scheme = HashScheme::from_id(scheme_id)
        .filter(|s| s.min_version() <= version)
        .ok_or(DecodeError::UnknownHashScheme { id: scheme_id })?;
    let flags = byte(5)?;
    let allowed = if version >= 3 {
        FLAG_IDENTITY | FLAG_METADATA
    } else {
        0
    };
    if flags & !allowed != 0 {
        return Err(DecodeError::ReservedBits {
            offset: 5,
            value: flags,
        });
    }
    let (kind, len) = if version >= 3 {
        let id = byte(6)?;
        let kind = FilterKind::from_id(id)
            .filter(|k| k.is_supported() && limits.kinds.contains(id))
            .ok_or(DecodeError::UnsupportedKind {
                id,
                name: FilterKind::assigned_name(id),
            })?;
        (kind, FIXED_LEN_V3)
    } else if limits.kinds.contains(FilterKind::Standard.id()) {
        (FilterKind::Standard, FIXED_LEN)
    } else {
        // Versions 1 and 2 hold the standard kind: a receiver that does
        // not take it refuses them as it refuses a version-3 kind byte 0.
        return Err(DecodeError::UnsupportedKind {
            id: FilterKind::Standard.id(),
            name: Some(FilterKind::Standard.name()),
        });
    };
    Ok(Fixed {
        version,
        filter_type,
        scheme,
        flags,
        kind,
        len,
    })
}

/// seed, m, k, n, the identity and the metadata records if the flags say
/// so, and payload_len, in wire order.
fn varint_fields(data: &[u8], fixed: &Fixed) -> Result<Varints, DecodeError> {
    let mut cur = Fields {
        data,
        at: fixed.len,
    };
    let (seed, _) = cur.next("seed")?;
    let m = cur.next("m")?;
    let k = cur.next("k")?;
    let (n, _) = cur.next("n")?;
    let mut identity = None;
    let mut seq_at = 0;
    if fixed.flags & FLAG_IDENTITY != 0 {
        let (stream, _) = cur.next("stream")?;
        let (epoch, _) = cur.next("epoch")?;
        let (seq, at) = cur.next("seq")?;
        seq_at = at;
        identity = Some(UpdateId { stream, epoch, seq });
    }
    let mut metadata = None;
    let mut squid_cblock = None;
    let mut signer = None;
    let mut block_hash = None;
    let mut bip37_flags = None;
    if fixed.flags & FLAG_METADATA != 0 {
        let found = records(&mut cur)?;
        metadata = Some((found.start, found.len));
        squid_cblock = found.squid_at.and_then(|i| {
            let block = data.get(i..i.saturating_add(SQUID_CBLOCK_LEN))?;
            Some((i, <[u8; SQUID_CBLOCK_LEN]>::try_from(block).ok()?))
        });
        signer = found.signer_at.and_then(|i| {
            let id = data.get(i..i.saturating_add(KEY_ID_LEN))?;
            <[u8; KEY_ID_LEN]>::try_from(id).ok()
        });
        block_hash = found.bip158_at.and_then(|i| {
            let hash = data.get(i..i.saturating_add(BLOCK_HASH_LEN))?;
            Some((i, <[u8; BLOCK_HASH_LEN]>::try_from(hash).ok()?))
        });
        bip37_flags = found
            .bip37_at
            .and_then(|i| Some((i, *data.get(i)?)));
    }
    let payload_len = cur.next("payload_len")?;
    Ok(Varints {
        seed,
        m,
        k,
        n,
        identity,
        seq_at,
        metadata,
        squid_cblock,
        signer,
        block_hash,
        bip37_flags,
        payload_len,
        header_len: cur.at,
    })
}

/// The format's own ranges of m and k first, whatever the limits say;
/// then the receiver's limits on m, k and the memory the kind holds once
/// decoded (section 2.3, step 3).
fn check_ranges(fixed: &Fixed, v: &Varints, limits: &DecodeLimits) -> Result<(), DecodeError> {
    let ((m, m_at), (k, k_at)) = (v.m, v.k);
    if m == 0 || m > MAX_M {
        return Err(DecodeError::InvalidField {
            offset: m_at,
            field: "m",
            reason: "m must be in 1..=2^56",
        });
    }
    if k == 0 || k > u64::from(MAX_K) {
        return Err(DecodeError::InvalidField {
            offset: k_at,
            field: "k",
            reason: "k must be in 1..=64",
        });
    }
    if fixed.kind.holds_m_bits() && m > limits.max_m {
        return Err(DecodeError::LimitExceeded {
            what: "m (bits)",
            requested: m,
            limit: limits.max_m,
        });
    }
    if k > u64::from(limits.max_k) {
        return Err(DecodeError::LimitExceeded {
            what: "k",
            requested: k,
            limit: u64::from(limits.max_k),
        });
    }
    // Memory: what the kind holds once decoded, against the ⌈max_m/8⌉
    // bytes of an array of max_m bits (counters hold 4 bits per position
    // and, while decoding, the map). A sparse list's size depends on the
    // position count its payload declares: it is checked there, before the
    // list is allocated (`any::decode_sparse_payload`).
    let memory = fixed
        .kind
        .decoded_bytes(&FilterParams::new(m, 1, 0), v.payload_len.0);
    let memory_limit = limits.max_m.div_ceil(8);
    if memory > memory_limit {
        return Err(DecodeError::LimitExceeded {
            what: "decoded memory (bytes; max_m / 8)",
            requested: memory,
            limit: memory_limit,
        });
    }
    Ok(())
}

/// The rules between fields (section 2.3, step 4): a delta's seq, the
/// hash scheme's rules, a Squid header that describes this filter, the
/// kind's own rules, and a frame length that fits in 64 bits. Returns the
/// filter's parameters.
fn check_rules(fixed: &Fixed, v: &Varints) -> Result<FilterParams, DecodeError> {
    let ((m, m_at), (k, _)) = (v.m, v.k);
    let (payload_len, len_at) = v.payload_len;
    if fixed.filter_type.is_delta() && v.identity.is_some_and(|id| id.seq == 0) {
        return Err(DecodeError::InvalidField {
            offset: v.seq_at,
            field: "seq",
            reason: "a delta produces version seq from seq - 1, so seq is at least 1",
        });
    }
    let params = FilterParams {
        m,
        k: k as u32,
        seed: v.seed,
        scheme: fixed.scheme,
    };
    if let Some(reason) = params.scheme_rule_broken() {
        return Err(DecodeError::InvalidField {
            offset: 4,
            field: "hash scheme",
            reason,
        });
    }
    scheme_kind_rules(fixed, v, &params)?;
    if let Some((at, cb)) = &v.squid_cblock {
        // Squid's own checks, then that the header describes this filter
        // (the scheme rules above made k = 4, seed 0).
        let cb = crate::kinds::squid::CBlock::from_bytes(*cb);
        cb.validate()
            .and_then(|()| {
                if fixed.kind == FilterKind::Standard
                    && params == FilterParams::squid(cb.mask_bits())
                {
                    Ok(())
                } else {
                    Err(crate::kinds::squid::SquidError::FilterMismatch {
                        params,
                        mask_size: cb.mask_size(),
                    })
                }
            })
            .map_err(|source| DecodeError::Squid {
                offset: *at,
                source,
            })?;
    }
    kind_rules(fixed.kind, fixed.filter_type, &params, payload_len, (m_at, len_at))?;
    // A declared payload_len near 2^64 must not wrap the frame length
    // (found by the apply_arbitrary fuzz target).
    if (v.header_len as u64)
        .checked_add(payload_len)
        .and_then(|l| l.checked_add(CRC_LEN as u64))
        .and_then(|l| l.checked_add(if v.signer.is_some() { SIGNATURE_LEN as u64 } else { 0 }))
        .is_none()
    {
        return Err(DecodeError::InvalidField {
            offset: len_at,
            field: "payload_len",
            reason: "the frame length does not fit in 64 bits",
        });
    }
    Ok(params)
}

/// The receiver's frame-length limit, then, for full frames, the
/// expansion limit (section 2.3, step 5). A delta writes into memory the
/// size of the base the receiver already holds, so only full frames are
/// held to the expansion limit.
fn check_size(header: &FrameHeader, limits: &DecodeLimits) -> Result<(), DecodeError> {
    let frame_len = header.frame_len();
    if frame_len > limits.max_frame_len {
        return Err(DecodeError::LimitExceeded {
            what: "frame length (bytes)",
            requested: frame_len,
            limit: limits.max_frame_len,
        });
    }
    if !header.filter_type.is_delta() {
        let (kind, params) = (header.kind, &header.params);
        let output = kind.decoded_bytes(params, header.payload_len);
        let array = if kind == FilterKind::Counting {
            params.byte_len()
        } else {
            output
        };
        check_expansion(limits, output, array, frame_len)?;
    }
    Ok(())
}

/// The receiver's expansion limit: `output` bytes (of which an m-bit
/// array of `array` bytes) from a frame of `frame_len` bytes are refused
/// unless [`DecodeLimits::admits_output`] (max_expansion · frame_len, or
/// the floor while the array is within 2^16 bytes per frame byte).
pub(crate) fn check_expansion(
    limits: &DecodeLimits,
    output: u64,
    array: u64,
    frame_len: u64,
) -> Result<(), DecodeError> {
    match limits.max_expansion {
        Some(ratio) if !limits.admits_output(output, array, frame_len) => {
            Err(DecodeError::LimitExceeded {
                what: "expansion (output bytes per frame byte)",
                requested: output.div_ceil(frame_len.max(1)),
                limit: ratio,
            })
        }
        _ => Ok(()),
    }
}

/// The payload-length rules of docs/FORMAT.md section 2.3, step 4, for a
/// frame of `kind` and `filter_type`.
fn kind_rules(
    kind: FilterKind,
    filter_type: FilterType,
    params: &FilterParams,
    payload_len: u64,
    (m_at, len_at): (usize, usize),
) -> Result<(), DecodeError> {
    let invalid = |reason| {
        Err(DecodeError::InvalidField {
            offset: len_at,
            field: "payload_len",
            reason,
        })
    };
    match kind {
        FilterKind::Ribbon => {
            return ribbon_rules(filter_type, params, payload_len, len_at)
        }
        FilterKind::Partitioned
            if params.m.checked_rem(u64::from(params.k)).is_none_or(|r| r != 0) =>
        {
            return Err(DecodeError::InvalidField {
                offset: m_at,
                field: "m",
                reason: "a partitioned filter's m is a multiple of k",
            });
        }
        FilterKind::Counting
            if matches!(
                filter_type,
                FilterType::ConditionalDelta | FilterType::StaticCoded
            ) =>
        {
            return Err(DecodeError::InvalidField {
                offset: 3,
                field: "filter type",
                reason: "the counting kind has types 0 (raw), 1 (coded) and 2 (delta) only",
            });
        }
        // Kinds without a raw form (positions; layers that are each raw or
        // coded inside): types 1 and 2 only, and the payload may be longer
        // than ⌈m/8⌉. A sparse decoder is linear in the payload and holds
        // the list its count declares (checked at the count); a scalable
        // one holds the header's m bits.
        FilterKind::Scalable | FilterKind::Sparse => {
            let (types, least_reason) = if kind == FilterKind::Sparse {
                (
                    "the sparse kind has types 1 (positions) and 2 (changed positions) only",
                    "a sparse payload holds at least its position count (after the digests)",
                )
            } else {
                (
                    "the scalable kind has types 1 (layers) and 2 (delta by layer) only",
                    "a scalable payload holds its policy and layers (after the digests)",
                )
            };
            if !matches!(filter_type, FilterType::Coded | FilterType::Delta) {
                return Err(DecodeError::InvalidField {
                    offset: 3,
                    field: "filter type",
                    reason: types,
                });
            }
            let least = if filter_type == FilterType::Delta {
                DELTA_MIN_PAYLOAD.saturating_add(1)
            } else {
                1
            };
            if payload_len < least {
                return Err(DecodeError::InvalidField {
                    offset: len_at,
                    field: "payload_len",
                    reason: least_reason,
                });
            }
            return Ok(());
        }
        _ => {}
    }
    let raw_len = kind.raw_len(params);
    match filter_type {
        FilterType::Raw if payload_len != raw_len => {
            invalid("a raw payload is exactly the packed array (ceil(m/8) bytes for a bit array)")
        }
        // The encoder falls back to raw whenever coding does not shrink the
        // payload, so a coded payload at least as long as raw is malformed;
        // this also caps the work a coded frame can ask for per input byte.
        FilterType::Coded | FilterType::StaticCoded if payload_len >= raw_len => {
            invalid("a coded payload must be shorter than the raw array")
        }
        FilterType::StaticCoded if payload_len < STATIC_MIN_PAYLOAD => {
            invalid("a static-coded payload holds block_log and at least one table entry")
        }
        FilterType::Delta if payload_len < DELTA_MIN_PAYLOAD => {
            invalid("a delta payload starts with two 8-byte digests")
        }
        FilterType::ConditionalDelta if payload_len < CONDITIONAL_DELTA_MIN_PAYLOAD => {
            invalid("a conditional delta payload holds two digests and two varints")
        }
        _ => Ok(()),
    }
}

/// Step 4 for kind 5 (docs/FORMAT.md section 8.5): type 0 only (a delta
/// is refused as a frame type the receiver cannot use: a changed set is
/// sent whole), and at least the solution the parameters imply
/// (16·⌈m/128⌉·k bytes) plus the smallest prefix, so that the memory a
/// frame asks for is bounded by its own length.
fn ribbon_rules(
    filter_type: FilterType,
    params: &FilterParams,
    payload_len: u64,
    len_at: usize,
) -> Result<(), DecodeError> {
    use crate::kinds::ribbon::payload;
    if filter_type.is_delta() {
        return Err(DecodeError::WrongFrameType {
            found: filter_type,
            expected: "a full (raw) frame: the ribbon kind has no delta",
        });
    }
    if filter_type != FilterType::Raw {
        return Err(DecodeError::InvalidField {
            offset: 3,
            field: "filter type",
            reason: "the ribbon kind has type 0 (raw) only",
        });
    }
    let least = payload::solution_len(params.m, params.k, 0)
        .and_then(|s| s.checked_add(payload::MIN_PREFIX));
    if least.is_none_or(|least| payload_len < least) {
        return Err(DecodeError::InvalidField {
            offset: len_at,
            field: "payload_len",
            reason: "a ribbon payload holds its prefix and 16 bytes per block and column",
        });
    }
    Ok(())
}

impl FilterKind {
    /// Whether a decoded filter of this kind holds an array of at least m
    /// bits (so the receiver's `max_m` bounds its memory).
    pub const fn holds_m_bits(self) -> bool {
        !matches!(self, FilterKind::Sparse)
    }

    /// Bytes of this kind's raw (type 0) payload for `params`: ⌈m/8⌉ for
    /// a bit array, ⌈m/2⌉ for 4-bit counters.
    pub fn raw_len(self, params: &FilterParams) -> u64 {
        match self {
            FilterKind::Counting => params.m.div_ceil(2),
            _ => params.byte_len(),
        }
    }

    /// Bytes a decoded frame of this kind holds in memory that its header
    /// alone determines, for the memory limit (⌈max_m/8⌉ bytes) and, for
    /// full frames, the expansion limit. Only m and `payload_len` are read
    /// from `params`/the header.
    ///
    /// The sparse kind's list is sized by the position count at the start
    /// of its payload, not by the header: 0 here, and its exact size
    /// ([`crate::kinds::sparse::EliasFano::bytes_for`]) is checked against
    /// the same limits once the count is read, before the list is
    /// allocated (docs/FORMAT.md section 8.4, step 3).
    pub fn decoded_bytes(self, params: &FilterParams, payload_len: u64) -> u64 {
        match self {
            FilterKind::Sparse => 0,
            // The words are the payload's bytes, but the last block's are
            // sent cut (as little as 1 byte for 16 held); the shard table
            // holds at most 24 bytes per two payload bytes.
            FilterKind::Ribbon => payload_len.saturating_mul(16),
            // The counters and, while decoding, the bit map.
            FilterKind::Counting => params.m.div_ceil(2).saturating_add(params.byte_len()),
            _ => params.byte_len(),
        }
    }
}

/// Smallest plain delta payload: the two 8-byte digests.
pub const DELTA_MIN_PAYLOAD: u64 = 16;
/// Smallest conditional delta payload: the digests and two one-byte varints.
pub const CONDITIONAL_DELTA_MIN_PAYLOAD: u64 = DELTA_MIN_PAYLOAD + 2;
/// Smallest static-coded payload: block_log and one table entry (a mode
/// byte and a one-byte count).
pub const STATIC_MIN_PAYLOAD: u64 = 3;

/// Each metadata tag this build knows (docs/FORMAT.md section 6; any
/// other is `UnknownMetadata`), its record's length, and why a record of
/// another length is refused.
const RECORD_LENGTHS: [(u64, u64, &str); 4] = [
    (
        META_SQUID_CBLOCK,
        SQUID_CBLOCK_LEN as u64,
        "a Squid digest header (tag 1) is 128 bytes",
    ),
    (
        META_SIGNATURE,
        KEY_ID_LEN as u64,
        "a signing key's id (tag 2) is 8 bytes",
    ),
    (
        META_BIP158,
        BLOCK_HASH_LEN as u64,
        "a BIP158 record (tag 3) is a 32-byte block hash",
    ),
    (META_BIP37, 1, "a BIP37 record (tag 4) is 1 byte"),
];

/// Which hash scheme goes with which kind (section 2.3, step 4): Squid's
/// and BIP37's with the standard kind; BIP158's with the sparse kind, one
/// whole filter (type 1) whose m is N · 784931 and which carries record
/// 3; record 3 with scheme 3 only, record 4 with scheme 4 only.
fn scheme_kind_rules(fixed: &Fixed, v: &Varints, params: &FilterParams) -> Result<(), DecodeError> {
    let scheme = |reason| {
        Err(DecodeError::InvalidField {
            offset: 4,
            field: "hash scheme",
            reason,
        })
    };
    match fixed.scheme {
        HashScheme::Xxh3EnhancedDouble => {}
        HashScheme::SquidMd5 if fixed.kind != FilterKind::Standard => {
            return scheme("Squid's hashing (scheme 2) is for the standard kind only");
        }
        HashScheme::SquidMd5 => {}
        HashScheme::Bip37Murmur if fixed.kind != FilterKind::Standard => {
            return scheme("BIP37's hashing (scheme 4) is for the standard kind only");
        }
        HashScheme::Bip37Murmur => {}
        HashScheme::Bip158SipHash => {
            if fixed.kind != FilterKind::Sparse {
                return scheme("BIP158's hashing (scheme 3) is for the sparse kind only");
            }
            if fixed.filter_type != FilterType::Coded {
                return Err(DecodeError::InvalidField {
                    offset: 3,
                    field: "filter type",
                    reason: "a BIP158 filter (scheme 3) travels whole, as type 1",
                });
            }
            if v.block_hash.is_none() {
                return scheme("BIP158's hashing (scheme 3) needs metadata record 3 (the block hash)");
            }
            if crate::kinds::bip158::range_for(v.n) != Some(params.m) {
                return Err(DecodeError::InvalidField {
                    offset: v.m.1,
                    field: "m",
                    reason: "under scheme 3, m = N · 784931 with N = n (m = 784931 when n = 0)",
                });
            }
        }
    }
    if let Some((at, _)) = v.bip37_flags {
        // The record describes a filter BIP37's hashing built: it has no
        // meaning beside another scheme.
        if fixed.scheme != HashScheme::Bip37Murmur {
            return Err(DecodeError::InvalidField {
                offset: at,
                field: "metadata tag",
                reason: "a BIP37 record (tag 4) needs hash scheme 4",
            });
        }
    }
    match v.block_hash {
        Some((at, _)) if fixed.scheme != HashScheme::Bip158SipHash => Err(DecodeError::InvalidField {
            offset: at,
            field: "metadata tag",
            reason: "metadata record 3 (BIP158) goes with hash scheme 3 only",
        }),
        _ => Ok(()),
    }
}

/// Where a header's metadata records are, and the known records in them.
struct Records {
    /// Frame offset of the first record.
    start: usize,
    /// `meta_len`.
    len: usize,
    /// Where a Squid digest header (tag 1) starts.
    squid_at: Option<usize>,
    /// Where a signing key's id (tag 2) starts.
    signer_at: Option<usize>,
    /// Where a BIP158 block hash (tag 3) starts.
    bip158_at: Option<usize>,
    /// Where BIP37's flags byte (tag 4) is.
    bip37_at: Option<usize>,
}

/// Reads `meta_len` and the records after it (docs/FORMAT.md section 6).
fn records(cur: &mut Fields<'_>) -> Result<Records, DecodeError> {
    let (meta_len, len_at) = cur.next("meta_len")?;
    if meta_len == 0 || meta_len > MAX_META_LEN {
        return Err(DecodeError::InvalidField {
            offset: len_at,
            field: "meta_len",
            reason: "metadata holds 1 to 4096 bytes of records",
        });
    }
    // meta_len <= 4096: no overflow.
    let start = cur.at;
    let end = start.saturating_add(meta_len as usize);
    if cur.data.len() < end {
        return Err(DecodeError::Truncated {
            needed: end as u64,
            available: cur.data.len() as u64,
        });
    }
    let mut last: Option<u64> = None;
    let mut squid_at = None;
    let mut signer_at = None;
    let mut bip158_at = None;
    let mut bip37_at = None;
    while cur.at < end {
        let (tag, tag_at) = cur.next("metadata tag")?;
        let (len, len_at) = cur.next("metadata length")?;
        if last.is_some_and(|l| tag <= l) {
            return Err(DecodeError::InvalidField {
                offset: tag_at,
                field: "metadata tag",
                reason: "tags must be strictly increasing",
            });
        }
        last = Some(tag);
        let room = end.saturating_sub(cur.at) as u64;
        if len > room {
            return Err(DecodeError::InvalidField {
                offset: len_at,
                field: "metadata length",
                reason: "a record runs past meta_len",
            });
        }
        let Some(&(_, want, reason)) = RECORD_LENGTHS.iter().find(|r| r.0 == tag) else {
            return Err(DecodeError::UnknownMetadata {
                offset: tag_at,
                tag,
            });
        };
        if len != want {
            return Err(DecodeError::InvalidField {
                offset: len_at,
                field: "metadata length",
                reason,
            });
        }
        match tag {
            META_SQUID_CBLOCK => squid_at = Some(cur.at),
            META_SIGNATURE => signer_at = Some(cur.at),
            META_BIP158 => bip158_at = Some(cur.at),
            META_BIP37 => bip37_at = Some(cur.at),
            _ => {}
        }
        // len <= room <= 4096.
        cur.at = cur.at.saturating_add(len as usize);
    }
    if cur.at != end {
        return Err(DecodeError::InvalidField {
            offset: start,
            field: "meta_len",
            reason: "the records do not fill meta_len exactly",
        });
    }
    Ok(Records {
        start,
        len: end.saturating_sub(start),
        squid_at,
        signer_at,
        bip158_at,
        bip37_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are part of the CLI's JSON output (`cbloom inspect --json`;
    /// tests/cli/end_to_end.rs checks them there too), so they are a contract.
    #[test]
    fn filter_type_names() {
        let names = [
            (FilterType::Raw, "raw"),
            (FilterType::Coded, "coded"),
            (FilterType::Delta, "delta"),
            (FilterType::ConditionalDelta, "conditional-delta"),
        ];
        for (ty, name) in names {
            assert_eq!(ty.name(), name);
        }
    }
}
