//! Errors of the frame layer.

use crate::prelude::*;
use crate::coder::CoderError;
use crate::filter::{FilterError, FilterParams};
use crate::format::{FilterKind, FilterType};
use thiserror::Error;

/// Why a frame was rejected. Grouped as: the input is corrupt or truncated
/// (retrying will not help; ask the peer to resend), it uses something this
/// version does not know (upgrade), or it exceeds your [`DecodeLimits`]
/// (raise them only if you trust the sender).
///
/// [`DecodeLimits`]: crate::DecodeLimits
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ends before the frame does.
    #[error("frame truncated: needs at least {needed} bytes, got {available}")]
    Truncated {
        /// Bytes needed to go on.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// The first two bytes are not the frame magic 0xCB 0xF1.
    #[error("not a compressed-bloom frame: magic is {found:02x?}, expected [cb, f1]")]
    BadMagic {
        /// The bytes found.
        found: [u8; 2],
    },
    /// A format version this crate does not read.
    #[error("unsupported format version {version} (this build reads versions 1 to 3)")]
    UnsupportedVersion {
        /// The version byte.
        version: u8,
    },
    /// A filter type id the frame's version does not define.
    #[error("unknown filter type {id} for format version {version}")]
    UnknownFilterType {
        /// The type byte.
        id: u8,
        /// The frame's version byte.
        version: u8,
    },
    /// A hash scheme id this version does not define.
    #[error("unknown hash scheme {id}")]
    UnknownHashScheme {
        /// The scheme byte.
        id: u8,
    },
    /// A version-3 frame of a filter kind this build does not support (or
    /// an unassigned kind id). Nothing was allocated.
    #[error("unsupported filter kind {id}{}", name.map(|n| format!(" ({n})")).unwrap_or_else(|| " (unassigned)".into()))]
    UnsupportedKind {
        /// The kind byte.
        id: u8,
        /// The name the format assigns to the id, if any.
        name: Option<&'static str>,
    },
    /// A version-3 metadata record with a tag this build does not know.
    #[error("unknown metadata tag {tag} at byte {offset}")]
    UnknownMetadata {
        /// Byte offset of the tag.
        offset: usize,
        /// The tag.
        tag: u64,
    },
    /// A frame without a signature where one is required
    /// ([`verify_frame`](crate::format::verify_frame) with keys).
    #[error("the frame is not signed, and only signed frames are accepted")]
    Unsigned,
    /// A frame signed by a key the receiver does not hold.
    #[error("the frame is signed by key {}, which is not among the receiver's keys", super::signature::key_id_hex(key_id))]
    UnknownKey {
        /// The signer's key id (metadata tag 2).
        key_id: [u8; 8],
    },
    /// A signature that does not verify with the key its id names: the
    /// frame was altered, or not signed by that key.
    #[error("the frame's signature does not verify with key {}", super::signature::key_id_hex(key_id))]
    BadSignature {
        /// The signer's key id (metadata tag 2).
        key_id: [u8; 8],
    },
    /// Reserved bits are set.
    #[error("reserved bits set at byte {offset}: {value:#04x}")]
    ReservedBits {
        /// Byte offset in the frame.
        offset: usize,
        /// The byte found.
        value: u8,
    },
    /// A varint is malformed.
    #[error("bad varint for `{field}` at byte {offset}: {reason}")]
    BadVarint {
        /// Byte offset in the frame.
        offset: usize,
        /// Which field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A header field is out of range or inconsistent with another.
    #[error("invalid `{field}` at byte {offset}: {reason}")]
    InvalidField {
        /// Byte offset of the field.
        offset: usize,
        /// Which field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A declared size exceeds the caller's [`DecodeLimits`](crate::DecodeLimits).
    #[error("{what} = {requested} exceeds the limit {limit}")]
    LimitExceeded {
        /// Which quantity.
        what: &'static str,
        /// Declared value.
        requested: u64,
        /// The limit in force.
        limit: u64,
    },
    /// The CRC-32C trailer does not match the frame's bytes.
    #[error("checksum mismatch: frame says {expected:#010x}, bytes give {actual:#010x}")]
    ChecksumMismatch {
        /// The CRC stored in the frame.
        expected: u32,
        /// The CRC computed over the received bytes.
        actual: u32,
    },
    /// Bytes follow the frame where none were expected.
    #[error("{count} unexpected bytes after the frame at byte {offset}")]
    TrailingBytes {
        /// Where the frame ended.
        offset: u64,
        /// How many bytes follow.
        count: u64,
    },
    /// The coded payload is malformed.
    #[error("payload at frame byte {offset}: {source}")]
    Payload {
        /// Frame offset of the payload's first byte.
        offset: usize,
        /// What the coder found.
        source: CoderError,
    },
    /// A sparse-kind payload is malformed.
    #[error("sparse payload at frame byte {offset}: {source}")]
    Sparse {
        /// Frame offset of the payload's first byte.
        offset: usize,
        /// What is wrong, and where in the payload.
        source: crate::kinds::sparse::SparseError,
    },
    /// A ribbon-kind payload is malformed.
    #[error("ribbon payload at frame byte {offset}: {source}")]
    Ribbon {
        /// Frame offset of the payload's first byte.
        offset: usize,
        /// What is wrong.
        source: crate::kinds::ribbon::RibbonError,
    },
    /// A scalable-kind payload is malformed.
    #[error("scalable payload at frame byte {offset}: {source}")]
    Scalable {
        /// Frame offset of the payload's first byte.
        offset: usize,
        /// What is wrong.
        source: crate::kinds::scalable::ScalableError,
    },
    /// A counting-kind payload is malformed.
    #[error("counting payload at frame byte {offset}: {source}")]
    Counting {
        /// Frame offset of the payload's first byte.
        offset: usize,
        /// What is wrong.
        source: crate::kinds::counting::CountingError,
    },
    /// A Squid digest header (metadata tag 1) that Squid would refuse, or
    /// that does not describe the frame's filter.
    #[error("Squid digest header at frame byte {offset}: {source}")]
    Squid {
        /// Frame offset of the header's first byte.
        offset: usize,
        /// What is wrong.
        source: crate::kinds::squid::SquidError,
    },
    /// The frame is not a Squid digest (no Squid header, metadata tag 1).
    #[error("not a Squid digest: the frame has no Squid header (metadata tag 1)")]
    NotSquid,
    /// The frame is not a BIP37 filter (hash scheme 4 with BIP37's flags,
    /// metadata tag 4).
    #[error("not a BIP37 filter: the frame has no BIP37 record (hash scheme 4, metadata tag 4)")]
    NotBip37,
    /// A BIP158 record (metadata tag 3) or filter that BIP158 does not
    /// allow, or that does not describe the frame's filter.
    #[error("BIP158 filter at frame byte {offset}: {source}")]
    Bip158 {
        /// Frame offset of the record, or of the payload.
        offset: usize,
        /// What is wrong.
        source: crate::kinds::bip158::Bip158Error,
    },
    /// The frame is not a BIP158 filter (no metadata record 3).
    #[error("not a BIP158 filter: the frame has no BIP158 record (metadata tag 3)")]
    NotBip158,
    /// The decoded bits are not a valid filter (e.g. ones past bit m − 1).
    #[error("decoded filter invalid: {0}")]
    Filter(#[from] FilterError),
    /// A delta frame where a full filter was expected, or the reverse.
    #[error("frame holds a {} filter where {expected} frame was expected", found.name())]
    WrongFrameType {
        /// The frame's type.
        found: FilterType,
        /// What the caller asked for.
        expected: &'static str,
    },
    /// A frame of another kind than the function decodes (e.g. a
    /// partitioned filter given to [`crate::decode`]; use
    /// [`crate::decode_any`]).
    #[error("frame holds a {} filter, {} was expected (decode_any reads every kind)", found.name(), expected.name())]
    WrongKind {
        /// The frame's kind.
        found: FilterKind,
        /// The kind the caller decodes.
        expected: FilterKind,
    },
    /// A delta for filters with other parameters than the base.
    #[error("delta is for a filter with {frame}, the base has {filter}")]
    ParamsMismatch {
        /// Parameters in the delta frame.
        frame: FilterParams,
        /// Parameters of the base filter.
        filter: FilterParams,
    },
    /// A delta made from another filter than the base it is applied to
    /// (a missed or reordered update): fetch a full frame.
    #[error("delta applies to filter {expected:#018x}, the base is {actual:#018x}")]
    WrongBase {
        /// Base digest named by the delta.
        expected: u64,
        /// Digest of the filter it was applied to.
        actual: u64,
    },
    /// The filter a delta produced does not have the digest it names.
    #[error("delta result has digest {actual:#018x}, the frame promises {expected:#018x}")]
    ResultMismatch {
        /// Result digest named by the delta.
        expected: u64,
        /// Digest of what was computed.
        actual: u64,
    },
}

/// Why a filter could not be encoded into the given space.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output slice or buffer is too small; `required` bytes would do.
    #[error("output too small: frame needs {required} bytes, {available} available")]
    OutputTooSmall {
        /// Frame length.
        required: usize,
        /// Space given.
        available: usize,
    },
}

