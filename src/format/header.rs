//! The frame header (`docs/FORMAT.md`, section "Frame"). Versions 1 and 2
//! share it; version 2 adds filter type 3.
//!
//! ```text
//! offset  size  field
//! 0       2     magic 0xCB 0xF1
//! 2       1     format version (1 or 2: the lowest that defines the type)
//! 3       1     filter type (0 raw, 1 coded, 2 delta, 3 conditional delta)
//! 4       1     hash scheme id (1)
//! 5       1     flags (reserved, must be 0)
//! 6       var   seed        (LEB128)
//!         var   m           (LEB128, bits)
//!         var   k           (LEB128)
//!         var   n           (LEB128, keys)
//!         var   payload_len (LEB128, bytes)
//!         ...   payload
//!         4     CRC-32C of every preceding byte of the frame (LE)
//! ```

use super::error::DecodeError;
use super::limits::DecodeLimits;
use super::varint;
use crate::filter::{FilterParams, MAX_K};
use crate::hash::HashScheme;

/// The two magic bytes that open every frame.
pub const MAGIC: [u8; 2] = [0xCB, 0xF1];
/// The newest format version this crate reads and writes. A frame carries the
/// lowest version that defines its filter type ([`FilterType::min_version`]),
/// so full frames and plain deltas stay readable by version-1 decoders.
pub const VERSION: u8 = 2;
/// The oldest format version this crate reads.
pub const MIN_VERSION: u8 = 1;
/// Bytes before the first varint.
pub const FIXED_LEN: usize = 6;
/// Bytes of the trailing checksum.
pub const CRC_LEN: usize = 4;

/// How the payload represents the bit array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FilterType {
    /// The packed bit array, ⌈m/8⌉ bytes, bit i in byte i/8 at bit i%8.
    Raw,
    /// The bit array through the adaptive rANS run coder (`coder`).
    Coded,
    /// The XOR of two versions of a filter, coded like [`FilterType::Coded`],
    /// after the digests of both versions (`delta`).
    Delta,
    /// The XOR of two versions coded *given the base*: the XOR bits where the
    /// base is 0 and those where it is 1 are coded as two separate arrays,
    /// whose densities differ (format version 2; `delta`).
    ConditionalDelta,
}

impl FilterType {
    /// Wire id.
    pub const fn id(self) -> u8 {
        match self {
            FilterType::Raw => 0,
            FilterType::Coded => 1,
            FilterType::Delta => 2,
            FilterType::ConditionalDelta => 3,
        }
    }

    /// The type with wire id `id`, if format `version` defines it.
    pub const fn from_id(id: u8, version: u8) -> Option<Self> {
        let ty = match id {
            0 => FilterType::Raw,
            1 => FilterType::Coded,
            2 => FilterType::Delta,
            3 => FilterType::ConditionalDelta,
            _ => return None,
        };
        if ty.min_version() <= version {
            Some(ty)
        } else {
            None
        }
    }

    /// The first format version that defines this type; frames of this type
    /// carry it in their version byte.
    pub const fn min_version(self) -> u8 {
        match self {
            FilterType::Raw | FilterType::Coded | FilterType::Delta => 1,
            FilterType::ConditionalDelta => 2,
        }
    }

    /// Whether frames of this type carry a change to a filter (they are
    /// applied with [`crate::delta::apply`], not decoded alone).
    pub const fn is_delta(self) -> bool {
        matches!(self, FilterType::Delta | FilterType::ConditionalDelta)
    }

    /// Lower-case name used by the CLI and JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            FilterType::Raw => "raw",
            FilterType::Coded => "coded",
            FilterType::Delta => "delta",
            FilterType::ConditionalDelta => "conditional-delta",
        }
    }
}

/// A parsed, validated frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Format version (1 or 2).
    pub version: u8,
    /// Payload representation.
    pub filter_type: FilterType,
    /// m, k, seed and hash scheme.
    pub params: FilterParams,
    /// Declared number of keys.
    pub n: u64,
    /// Payload length in bytes.
    pub payload_len: u64,
    /// Header length in bytes (fixed part plus varints).
    pub header_len: usize,
}

impl FrameHeader {
    /// Total frame length: header, payload, checksum (saturating; [`parse`]
    /// refuses headers whose length does not fit in 64 bits).
    pub fn frame_len(&self) -> u64 {
        (self.header_len as u64)
            .saturating_add(self.payload_len)
            .saturating_add(CRC_LEN as u64)
    }
}

/// Bytes a frame spends outside its payload, for the given fields.
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

/// Appends a header to `out`.
pub(crate) fn write(
    out: &mut Vec<u8>,
    filter_type: FilterType,
    params: &FilterParams,
    n: u64,
    payload_len: u64,
) {
    out.extend_from_slice(&MAGIC);
    out.push(filter_type.min_version());
    out.push(filter_type.id());
    out.push(params.scheme.id());
    out.push(0);
    varint::put(out, params.seed);
    varint::put(out, params.m);
    varint::put(out, u64::from(params.k));
    varint::put(out, n);
    varint::put(out, payload_len);
}

/// Parses and validates the header at the front of `data` against `limits`.
/// Does not look at the payload or the checksum.
///
/// # Errors
/// The first problem found, in wire order, as a [`DecodeError`].
pub fn parse(data: &[u8], limits: &DecodeLimits) -> Result<FrameHeader, DecodeError> {
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
    let scheme =
        HashScheme::from_id(scheme_id).ok_or(DecodeError::UnknownHashScheme { id: scheme_id })?;
    let flags = byte(5)?;
    if flags != 0 {
        return Err(DecodeError::ReservedBits {
            offset: 5,
            value: flags,
        });
    }
    let mut at = FIXED_LEN;
    let mut next = |field: &'static str| -> Result<(u64, usize), DecodeError> {
        let start = at;
        let rest = data.get(at..).unwrap_or(&[]);
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
        at = at.saturating_add(used);
        Ok((v, start))
    };
    let (seed, _) = next("seed")?;
    let (m, m_at) = next("m")?;
    let (k, k_at) = next("k")?;
    let (n, _) = next("n")?;
    let (payload_len, len_at) = next("payload_len")?;
    let header_len = at;

    if m == 0 || m > limits.max_m {
        return Err(if m == 0 {
            DecodeError::InvalidField {
                offset: m_at,
                field: "m",
                reason: "a filter has at least one bit",
            }
        } else {
            DecodeError::LimitExceeded {
                what: "m (bits)",
                requested: m,
                limit: limits.max_m,
            }
        });
    }
    if k == 0 || k > u64::from(MAX_K.min(limits.max_k)) {
        return Err(if k == 0 || k > u64::from(MAX_K) {
            DecodeError::InvalidField {
                offset: k_at,
                field: "k",
                reason: "k must be in 1..=64",
            }
        } else {
            DecodeError::LimitExceeded {
                what: "k",
                requested: k,
                limit: u64::from(limits.max_k),
            }
        });
    }
    let params = FilterParams {
        m,
        k: k as u32,
        seed,
        scheme,
    };
    let raw_len = params.byte_len();
    match filter_type {
        FilterType::Raw if payload_len != raw_len => {
            return Err(DecodeError::InvalidField {
                offset: len_at,
                field: "payload_len",
                reason: "a raw payload is exactly ceil(m/8) bytes",
            });
        }
        // The encoder falls back to raw whenever coding does not shrink the
        // payload, so a coded payload at least as long as raw is malformed;
        // this also caps the work a coded frame can ask for per input byte.
        FilterType::Coded if payload_len >= raw_len => {
            return Err(DecodeError::InvalidField {
                offset: len_at,
                field: "payload_len",
                reason: "a coded payload must be shorter than the raw bit array",
            });
        }
        FilterType::Delta if payload_len < crate::delta::DIGESTS_LEN as u64 => {
            return Err(DecodeError::InvalidField {
                offset: len_at,
                field: "payload_len",
                reason: "a delta payload starts with two 8-byte digests",
            });
        }
        FilterType::ConditionalDelta
            if payload_len < crate::delta::CONDITIONAL_MIN_PAYLOAD as u64 =>
        {
            return Err(DecodeError::InvalidField {
                offset: len_at,
                field: "payload_len",
                reason: "a conditional delta payload holds two digests and two varints",
            });
        }
        _ => {}
    }
    // A declared payload_len near 2^64 must not wrap the frame length
    // (found by the apply_arbitrary fuzz target).
    if (header_len as u64)
        .checked_add(payload_len)
        .and_then(|v| v.checked_add(CRC_LEN as u64))
        .is_none()
    {
        return Err(DecodeError::InvalidField {
            offset: len_at,
            field: "payload_len",
            reason: "the frame length does not fit in 64 bits",
        });
    }
    let header = FrameHeader {
        version,
        filter_type,
        params,
        n,
        payload_len,
        header_len,
    };
    let frame_len = header.frame_len();
    if frame_len > limits.max_frame_len {
        return Err(DecodeError::LimitExceeded {
            what: "frame length (bytes)",
            requested: frame_len,
            limit: limits.max_frame_len,
        });
    }
    if let Some(ratio) = limits.max_expansion {
        let allowed = frame_len.saturating_mul(ratio);
        if raw_len > allowed {
            return Err(DecodeError::LimitExceeded {
                what: "expansion (output bytes per frame byte)",
                requested: raw_len.div_ceil(frame_len),
                limit: ratio,
            });
        }
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are part of the CLI's JSON output (`cbloom inspect --json`;
    /// tests/cli.rs checks them there too), so they are a contract.
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
