//! The C ABI of compressed-bloom: opaque handles, caller-owned buffers,
//! error codes, in the style of zstd's API.
//!
//! Every entry point is `extern "C"`, named `cb_*`, and
//! * returns a [`cb_error`] (except the few that return a static string or
//!   a number and cannot fail: [`cb_error_name`], [`cb_version`],
//!   [`cb_version_number`], [`cb_last_error_message`],
//!   [`cb_last_error_offset`]);
//! * refuses NULL for every pointer it needs and zero for every length
//!   (an optional pointer is said to be optional in its comment);
//! * catches any panic and returns `CB_ERROR_INTERNAL` instead of
//!   unwinding into C, which would be undefined behaviour;
//! * on failure, leaves a message in the calling thread's last-error slot
//!   (with the byte offset of a decode error where the frame has one), and
//!   leaves its output arguments and handles unchanged.
//!
//! The core crate is `#![forbid(unsafe_code)]`; the unsafe code of the
//! binding is here, in the pointer and handle conversions of this file and
//! the `cb_*_free` functions, each block with the argument for it.
//!
//! `include/compressed_bloom.h` is generated from this crate by cbindgen
//! (`cbindgen.toml`) and committed; `tests/header.rs` fails when it
//! differs from a fresh one. Regenerate it with
//! `CB_BLESS_HEADER=1 cargo test -p compressed_bloom_c --test header`.

// The C names are the API: `cb_filter`, `CB_ERROR_TRUNCATED`.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

mod codec;
mod error;
mod filter;
mod plan;
mod sign;
mod squid;
mod sync;

pub use codec::*;
pub use error::*;
pub use filter::*;
pub use plan::*;
pub use sign::*;
pub use squid::*;
pub use sync::*;

use compressed_bloom::{Coding, DecodeLimits, FilterKind, UpdateId};
use core::ffi::c_char;

/// The kinds of filter a handle can hold. The first six are the wire
/// kinds (their values are the frame's kind byte); `CB_KIND_SQUID` is a
/// Squid cache digest, a standard filter with Squid's hashing and header.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cb_kind {
    /// One m-bit array, k positions per key.
    CB_KIND_STANDARD = 0,
    /// 4-bit counters: keys can be removed.
    CB_KIND_COUNTING = 1,
    /// k sub-arrays of m/k bits, one position in each.
    CB_KIND_PARTITIONED = 2,
    /// Layers of standard filters that grow as keys arrive.
    CB_KIND_SCALABLE = 3,
    /// The sorted positions of the one bits, for very sparse arrays.
    CB_KIND_SPARSE = 4,
    /// A solved linear system over GF(2): the smallest frame for a static
    /// set, built from all of its keys at once.
    CB_KIND_RIBBON = 5,
    /// A Squid cache digest (standard kind on the wire, Squid's MD5
    /// hashing and 128-byte header).
    CB_KIND_SQUID = 6,
}

impl cb_kind {
    /// The kind with this value, as a C caller passes it.
    fn from_raw(v: u32) -> Result<cb_kind, Fail> {
        Ok(match v {
            0 => cb_kind::CB_KIND_STANDARD,
            1 => cb_kind::CB_KIND_COUNTING,
            2 => cb_kind::CB_KIND_PARTITIONED,
            3 => cb_kind::CB_KIND_SCALABLE,
            4 => cb_kind::CB_KIND_SPARSE,
            5 => cb_kind::CB_KIND_RIBBON,
            6 => cb_kind::CB_KIND_SQUID,
            _ => {
                return Err(Fail::new(
                    cb_error::CB_ERROR_INVALID_ARGUMENT,
                    format!("kind {v} is not a cb_kind (0 to 6)"),
                ))
            }
        })
    }

    /// The wire kind (Squid digests are standard filters on the wire).
    fn wire(self) -> FilterKind {
        match self {
            cb_kind::CB_KIND_STANDARD | cb_kind::CB_KIND_SQUID => FilterKind::Standard,
            cb_kind::CB_KIND_COUNTING => FilterKind::Counting,
            cb_kind::CB_KIND_PARTITIONED => FilterKind::Partitioned,
            cb_kind::CB_KIND_SCALABLE => FilterKind::Scalable,
            cb_kind::CB_KIND_SPARSE => FilterKind::Sparse,
            cb_kind::CB_KIND_RIBBON => FilterKind::Ribbon,
        }
    }

    /// The handle kind of a wire kind.
    fn of_wire(k: FilterKind) -> cb_kind {
        match k {
            FilterKind::Counting => cb_kind::CB_KIND_COUNTING,
            FilterKind::Partitioned => cb_kind::CB_KIND_PARTITIONED,
            FilterKind::Scalable => cb_kind::CB_KIND_SCALABLE,
            FilterKind::Sparse => cb_kind::CB_KIND_SPARSE,
            FilterKind::Ribbon => cb_kind::CB_KIND_RIBBON,
            _ => cb_kind::CB_KIND_STANDARD,
        }
    }

    fn name(self) -> &'static str {
        match self {
            cb_kind::CB_KIND_SQUID => "Squid digest",
            k => k.wire().name(),
        }
    }
}

/// How a full frame's bit array is coded. Not every kind has every coding
/// (`cb_encode` refuses the ones it lacks with `CB_ERROR_INVALID_ARGUMENT`):
/// static coding is for standard and partitioned filters, adaptive for
/// every kind but ribbon, raw for every kind but sparse.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cb_coding {
    /// The faster-decoding coding within the planner's size guarantee:
    /// what a sender should use unless a receiver needs another.
    CB_CODING_AUTO = 0,
    /// Type 1, the adaptive rANS coder: the smallest on small filters and
    /// readable by decoders of format version 1.
    CB_CODING_ADAPTIVE = 1,
    /// Type 4, static coding with per-block counts (format version 3).
    CB_CODING_STATIC = 2,
    /// Type 0, the array uncoded.
    CB_CODING_RAW = 3,
}

fn coding_from_raw(v: u32) -> Result<Coding, Fail> {
    Ok(match v {
        0 => Coding::Auto,
        1 => Coding::Adaptive,
        2 => Coding::Static,
        3 => Coding::Raw,
        _ => {
            return Err(Fail::new(
                cb_error::CB_ERROR_INVALID_ARGUMENT,
                format!("coding {v} is not a cb_coding (0 to 3)"),
            ))
        }
    })
}

/// The identity of a published version (docs/FORMAT.md section 5):
/// versions are ordered by (epoch, seq) within a stream. A full frame is
/// version `seq`; a delta turns version `seq - 1` into `seq`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cb_update_id {
    /// Which published filter (chosen by the application).
    pub stream: u64,
    /// The publisher's incarnation: larger after a restart.
    pub epoch: u64,
    /// The version's number within the epoch.
    pub seq: u64,
}

impl From<UpdateId> for cb_update_id {
    fn from(id: UpdateId) -> Self {
        cb_update_id {
            stream: id.stream,
            epoch: id.epoch,
            seq: id.seq,
        }
    }
}

impl From<cb_update_id> for UpdateId {
    fn from(id: cb_update_id) -> Self {
        UpdateId {
            stream: id.stream,
            epoch: id.epoch,
            seq: id.seq,
        }
    }
}

/// What a decoder accepts from a frame before it allocates: limits on the
/// sizes a stranger's bytes can declare. Start from `cb_limits_default`
/// (safe for frames from the network) and lower what you know; raise them
/// only for senders you trust.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cb_limits {
    /// Largest m (bits) accepted; ceil(max_m / 8) is also the most bytes
    /// any decoded frame may hold.
    pub max_m: u64,
    /// Largest k accepted (at most 64 in any case).
    pub max_k: u32,
    /// Largest whole frame, in bytes.
    pub max_frame_len: u64,
    /// The most output a full frame may decode to per byte of frame
    /// (above `expansion_floor`); 0 for no such limit.
    pub max_expansion: u64,
    /// The most value decisions a counting frame may take per frame byte;
    /// 0 for the default (max_expansion / 32).
    pub max_decisions_per_byte: u64,
    /// Output, in bytes, a full frame may decode to beyond max_expansion
    /// times its length, so that the empty filter a publisher declares is
    /// taken; 0 holds every frame to the ratio alone.
    pub expansion_floor: u64,
    /// The kinds accepted: bit `id` set accepts wire kind `id` (a
    /// `cb_kind` value from 0 to 5). All ones accepts every kind.
    pub kinds: u64,
}

impl From<DecodeLimits> for cb_limits {
    fn from(l: DecodeLimits) -> Self {
        cb_limits {
            max_m: l.max_m,
            max_k: l.max_k,
            max_frame_len: l.max_frame_len,
            max_expansion: l.max_expansion.unwrap_or(0),
            max_decisions_per_byte: l.max_decisions_per_byte.unwrap_or(0),
            expansion_floor: l.expansion_floor,
            kinds: l.kinds.0,
        }
    }
}

impl From<cb_limits> for DecodeLimits {
    fn from(l: cb_limits) -> Self {
        DecodeLimits {
            max_m: l.max_m,
            max_k: l.max_k,
            max_frame_len: l.max_frame_len,
            max_expansion: (l.max_expansion != 0).then_some(l.max_expansion),
            max_decisions_per_byte: (l.max_decisions_per_byte != 0)
                .then_some(l.max_decisions_per_byte),
            expansion_floor: l.expansion_floor,
            kinds: compressed_bloom::format::KindSet(l.kinds),
        }
    }
}

/// The limits of an optional `cb_limits` pointer: the defaults for NULL.
///
/// # Safety
/// `p` is NULL or points to a readable `cb_limits`.
unsafe fn limits_or_default(p: *const cb_limits) -> DecodeLimits {
    // SAFETY: the caller passes NULL or a valid pointer; `as_ref` maps
    // NULL to None, and `cb_limits` is plain integers, valid for any bits.
    match unsafe { p.as_ref() } {
        Some(l) => DecodeLimits::from(*l),
        None => DecodeLimits::default(),
    }
}

/// The identity of an optional `cb_update_id` pointer: none for NULL.
///
/// # Safety
/// `p` is NULL or points to a readable `cb_update_id`.
unsafe fn identity(p: *const cb_update_id) -> Option<UpdateId> {
    // SAFETY: as for `limits_or_default`: NULL or valid, plain integers.
    unsafe { p.as_ref() }.map(|id| UpdateId::from(*id))
}

/// The library's version, "MAJOR.MINOR.PATCH": a static string.
#[no_mangle]
pub extern "C" fn cb_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library's version as MAJOR * 10000 + MINOR * 100 + PATCH, for
/// comparisons (`CB_VERSION_NUMBER` is the header's).
#[no_mangle]
pub extern "C" fn cb_version_number() -> u32 {
    VERSION_NUMBER
}

/// The version this header was generated for, as `cb_version_number`
/// returns it: compare the two to catch a header and library that differ.
pub const CB_VERSION_NUMBER: u32 = 100;

const VERSION_NUMBER: u32 = {
    // Parsed at compile time from the crate version; a unit test below
    // checks the header's CB_VERSION_NUMBER against it.
    let v = env!("CARGO_PKG_VERSION").as_bytes();
    let mut parts = [0u32; 3];
    let mut i = 0;
    let mut p = 0;
    while i < v.len() && p < 3 {
        let c = v[i];
        if c == b'.' {
            p += 1;
        } else if c >= b'0' && c <= b'9' {
            parts[p] = parts[p] * 10 + (c - b'0') as u32;
        } else {
            break;
        }
        i += 1;
    }
    parts[0] * 10000 + parts[1] * 100 + parts[2]
};

/// The oldest frame format version this library decodes.
pub const CB_FORMAT_VERSION_MIN: u8 = 1;
/// The newest frame format version this library decodes (and the one it
/// writes whenever a frame needs a version-3 feature).
pub const CB_FORMAT_VERSION_MAX: u8 = 3;

/// The range of frame format versions this library reads, into `*min` and
/// `*max` (1 and 3 for this release).
///
/// # Safety
/// `min` and `max` are NULL or point to writable bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_format_versions(min: *mut u8, max: *mut u8) -> cb_error {
    guard(|| {
        // SAFETY: the caller passes NULL (refused) or writable pointers.
        let (min, max) = unsafe { (out(min, "min")?, out(max, "max")?) };
        *min = CB_FORMAT_VERSION_MIN;
        *max = CB_FORMAT_VERSION_MAX;
        Ok(())
    })
}

/// Fills `*out` with the default decode limits: every kind, m up to 2^32
/// bits (512 MiB), and the expansion limits that keep a small frame from
/// costing much more than its size.
///
/// # Safety
/// `out` is NULL or points to a writable `cb_limits`.
#[no_mangle]
pub unsafe extern "C" fn cb_limits_default(out_limits: *mut cb_limits) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable, per the contract.
        let o = unsafe { out(out_limits, "out_limits")? };
        *o = DecodeLimits::default().into();
        Ok(())
    })
}

/// Fills `*out` with no limits beyond the format's own: for trusted input
/// only, such as files this process wrote.
///
/// # Safety
/// `out` is NULL or points to a writable `cb_limits`.
#[no_mangle]
pub unsafe extern "C" fn cb_limits_unlimited(out_limits: *mut cb_limits) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable, per the contract.
        let o = unsafe { out(out_limits, "out_limits")? };
        *o = DecodeLimits::unlimited().into();
        Ok(())
    })
}

/// A keys argument: `count` pointers and `count` lengths. An empty set
/// (count 0) may pass NULL for both.
///
/// # Safety
/// As the functions that take keys document: `keys` and `lens` are NULL or
/// point to `count` readable entries, and each key to `lens[i]` bytes.
unsafe fn key_list<'a>(
    keys: *const *const u8,
    lens: *const usize,
    count: usize,
) -> Result<Vec<&'a [u8]>, Fail> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if keys.is_null() || lens.is_null() {
        return Err(Fail::null(if keys.is_null() { "keys" } else { "key_lens" }));
    }
    // SAFETY: both arrays are non-NULL and hold `count` entries (contract).
    let (ptrs, lens) = unsafe {
        (
            core::slice::from_raw_parts(keys, count),
            core::slice::from_raw_parts(lens, count),
        )
    };
    ptrs.iter()
        .zip(lens)
        .enumerate()
        .map(|(i, (&p, &len))| {
            // SAFETY: each key points to `len` readable bytes (contract);
            // `bytes` refuses NULL and zero lengths.
            unsafe { bytes(p, len, "key") }.map_err(|f| f.context(&format!("key {i}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use compressed_bloom::{BloomFilter, DecodeError, FilterParams, Kind};

    #[test]
    fn the_header_version_is_the_crate_version() {
        assert_eq!(CB_VERSION_NUMBER, VERSION_NUMBER);
    }

    /// The core crate does not export its format version range, so the
    /// binding states it; this holds it to what the core reads and writes.
    #[test]
    fn the_format_versions_are_the_ones_the_core_reads() {
        let f = BloomFilter::new(FilterParams::new(1000, 3, 0)).unwrap();
        let id = UpdateId {
            stream: 1,
            epoch: 1,
            seq: 1,
        };
        let mut frame = f.encode_frame(Coding::Raw, Some(id));
        assert_eq!(
            frame[2], CB_FORMAT_VERSION_MAX,
            "an identified frame is the newest version"
        );
        let limits = DecodeLimits::default();
        for (version, readable) in [
            (CB_FORMAT_VERSION_MIN - 1, false),
            (CB_FORMAT_VERSION_MAX, true),
            (CB_FORMAT_VERSION_MAX + 1, false),
        ] {
            frame[2] = version;
            let r = compressed_bloom::inspect(&frame, &limits);
            let unsupported = matches!(r, Err(DecodeError::UnsupportedVersion { .. }));
            assert_eq!(!unsupported, readable, "version {version}: {r:?}");
        }
    }
}
