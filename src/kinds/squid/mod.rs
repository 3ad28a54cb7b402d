//! Squid cache digests: the deployed system Summary Cache and the
//! compressed-Bloom-filter paper were written for.
//!
//! A Squid digest is the 128-byte `StoreDigestCBlock` header followed by
//! the raw bit mask. Every detail below was checked against Squid's source
//! (squid-cache/squid: `src/PeerDigest.h`, `src/CacheDigest.cc`,
//! `src/store_digest.cc`, `src/peer_digest.cc`, `src/store_key_md5.cc`,
//! `src/http/MethodType.h`):
//!
//! * The header (all integers in network byte order): version `current`
//!   and `required` (shorts at bytes 0 and 2), `capacity`, `count`,
//!   `del_count`, `mask_size` (ints at 4, 8, 12, 16), `bits_per_entry`
//!   (byte 20), `hash_func_count` (byte 21, always 4), and 106 reserved
//!   bytes (a short and 26 ints, zero when Squid writes them).
//! * The mask is `mask_size` bytes; bit `i` is bit `i % 8` of byte `i / 8`
//!   (least significant first), the same packing as this crate's frames.
//! * A URL's store key is MD5 over one byte of the method id (GET = 1)
//!   followed by the URL's bytes. The 16-byte key is read as four
//!   big-endian 32-bit words, each taken modulo `8 · mask_size`; a URL may
//!   be in the cache when all four bits are set
//!   ([`HashScheme::SquidMd5`](crate::HashScheme::SquidMd5)).
//! * A receiver accepts a header only if it passes Squid's own checks in
//!   `peerDigestSetCBlock` ([`CBlock::validate`]).
//!
//! In a frame, the header travels verbatim as metadata record 1
//! (docs/FORMAT.md section 6), so exporting an imported digest gives back
//! the same bytes.

// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;
// Each frame and delta function, for the crate's tests, tools and CLI;
// the API is the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{encode_squid, encode_squid_raw, decode_squid};
}

use crate::prelude::*;
use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::wire::limits::DecodeLimits;
use thiserror::Error;

internal! {
/// Length of Squid's digest header, `StoreDigestCBlock`.
pub const CBLOCK_LEN: usize = 128;
}
internal! {
/// The digest version Squid writes (`CacheDigestVer.current`).
pub const CURRENT_VERSION: i16 = 5;
}
internal! {
/// The oldest digest version Squid reads (`CacheDigestVer.required`).
pub const REQUIRED_VERSION: i16 = 3;
}
internal! {
/// Squid's `CacheDigestHashFuncCount`: four positions per key.
pub const HASH_FUNC_COUNT: u8 = 4;
}
internal! {
/// The largest mask Squid computes (`CacheDigest::CalcMaskSize`): 268,435,454
/// bytes, so that `8 · mask_size` stays below `INT_MAX`.
pub const MAX_MASK_SIZE: u32 = 268_435_454;
}

/// An HTTP method as Squid numbers it in a store key (`METHOD_GET` = 1,
/// …); methods past DELETE keep their number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Method(pub u8);

impl Method {
    /// GET, the method of almost every digest entry.
    pub const GET: Method = Method(1);
    /// POST.
    pub const POST: Method = Method(2);
    /// PUT.
    pub const PUT: Method = Method(3);
    /// HEAD.
    pub const HEAD: Method = Method(4);
    /// CONNECT.
    pub const CONNECT: Method = Method(5);
    /// TRACE.
    pub const TRACE: Method = Method(6);
    /// OPTIONS.
    pub const OPTIONS: Method = Method(7);
    /// DELETE.
    pub const DELETE: Method = Method(8);

    /// The method of a name (case-insensitive), or of a number given as
    /// text (for the methods past DELETE, as Squid numbers them).
    pub fn parse(name: &str) -> Option<Method> {
        let method = match name.to_ascii_uppercase().as_str() {
            "GET" => Method::GET,
            "POST" => Method::POST,
            "PUT" => Method::PUT,
            "HEAD" => Method::HEAD,
            "CONNECT" => Method::CONNECT,
            "TRACE" => Method::TRACE,
            "OPTIONS" => Method::OPTIONS,
            "DELETE" => Method::DELETE,
            other => return other.parse().ok().map(Method),
        };
        Some(method)
    }
}

internal! {
/// The key Squid hashes for a URL: the method id, then the URL's bytes
/// (`storeKeyPublic`). Hash it with [`HashScheme::SquidMd5`](crate::HashScheme::SquidMd5).
pub fn store_key(method: Method, url: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(url.len().saturating_add(1));
    key.push(method.0);
    key.extend_from_slice(url);
    key
}
}

internal! {
/// Squid's `CacheDigest::CalcMaskSize`: ⌈capacity · bits_per_entry / 8⌉,
/// capped at [`MAX_MASK_SIZE`].
pub fn calc_mask_size(capacity: u64, bits_per_entry: u8) -> u32 {
    let bits = u128::from(capacity).saturating_mul(u128::from(bits_per_entry));
    let bytes = bits.div_ceil(8);
    bytes.min(u128::from(MAX_MASK_SIZE)) as u32
}
}

/// Why a Squid digest was refused. The messages follow Squid's own.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SquidError {
    /// Fewer than 128 bytes: no complete header.
    #[error("a Squid digest starts with a 128-byte header; got {len} bytes")]
    TooShort {
        /// Bytes present.
        len: usize,
    },
    /// The digest needs a newer reader than Squid's version 5.
    #[error("digest requires version {required}; this reader has version {CURRENT_VERSION}")]
    TooNew {
        /// The header's `ver.required`.
        required: i16,
    },
    /// The digest is older than the oldest version Squid reads.
    #[error("digest is version {current}; version {REQUIRED_VERSION} or later is required")]
    TooOld {
        /// The header's `ver.current`.
        current: i16,
    },
    /// A header field is out of range (Squid: "digest cblock is corrupted").
    #[error("digest header is corrupted: {field} = {value} ({why})")]
    Corrupted {
        /// Field name as in `StoreDigestCBlock`.
        field: &'static str,
        /// Its value, as Squid reads it (signed).
        value: i64,
        /// The rule broken.
        why: &'static str,
    },
    /// `mask_size` disagrees with `capacity` and `bits_per_entry`.
    #[error(
        "digest header is corrupted (mask size mismatch: {mask_size} bytes, but capacity \
         {capacity} at {bits_per_entry} bits per entry gives {expected})"
    )]
    MaskSizeMismatch {
        /// The header's `mask_size`.
        mask_size: i32,
        /// `calc_mask_size(capacity, bits_per_entry)`.
        expected: u32,
        /// The header's `capacity`.
        capacity: i32,
        /// The header's `bits_per_entry`.
        bits_per_entry: u8,
    },
    /// Squid uses exactly four hash functions.
    #[error("unsupported number of hash functions: {found} (Squid uses {HASH_FUNC_COUNT})")]
    HashFuncCount {
        /// The header's `hash_func_count`.
        found: u8,
    },
    /// The mask after the header is not `mask_size` bytes.
    #[error("the mask is {actual} bytes after the header; mask_size says {expected}")]
    MaskLength {
        /// `mask_size`.
        expected: u64,
        /// Bytes after the header.
        actual: u64,
    },
    /// The mask is larger than the receiver's limit.
    #[error("the mask has {bits} bits, above this receiver's limit of {limit}")]
    TooLarge {
        /// `8 · mask_size`.
        bits: u64,
        /// `DecodeLimits::max_m`.
        limit: u64,
    },
    /// A new digest's capacity or bits per entry make no mask.
    #[error("capacity {capacity} at {bits_per_entry} bits per entry makes no valid mask")]
    BadShape {
        /// Requested capacity.
        capacity: u64,
        /// Requested bits per entry.
        bits_per_entry: u8,
    },
    /// The filter does not fit the header (different m, k or scheme).
    #[error("the filter ({params}) does not match a Squid header of mask_size {mask_size}")]
    FilterMismatch {
        /// The filter's parameters.
        params: FilterParams,
        /// The header's `mask_size`.
        mask_size: i32,
    },
    /// The bit array could not be built.
    #[error(transparent)]
    Filter(#[from] FilterError),
}

/// Squid's 128-byte digest header, `StoreDigestCBlock`, kept verbatim so
/// that what was imported is exported byte for byte (reserved bytes
/// included). Read its fields with the accessors.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CBlock([u8; CBLOCK_LEN]);

impl core::fmt::Debug for CBlock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CBlock")
            .field("version", &(self.version_current(), self.version_required()))
            .field("capacity", &self.capacity())
            .field("count", &self.count())
            .field("del_count", &self.del_count())
            .field("mask_size", &self.mask_size())
            .field("bits_per_entry", &self.bits_per_entry())
            .field("hash_func_count", &self.hash_func_count())
            .finish_non_exhaustive()
    }
}

impl CBlock {
    /// The header Squid writes for a new digest (`storeDigestCBlockSwapOut`):
    /// versions 5 and 3, the given capacity and bits per entry, its mask
    /// size, counts 0, four hash functions, reserved bytes zero.
    ///
    /// # Errors
    /// [`SquidError::BadShape`] if capacity or bits per entry is 0, or the
    /// capacity does not fit Squid's 32-bit signed field.
    pub fn new(capacity: u64, bits_per_entry: u8) -> Result<Self, SquidError> {
        let bad = SquidError::BadShape {
            capacity,
            bits_per_entry,
        };
        let cap = i32::try_from(capacity).map_err(|_| bad.clone())?;
        if cap <= 0 || bits_per_entry == 0 {
            return Err(bad);
        }
        let mut b = [0u8; CBLOCK_LEN];
        b[0..2].copy_from_slice(&CURRENT_VERSION.to_be_bytes());
        b[2..4].copy_from_slice(&REQUIRED_VERSION.to_be_bytes());
        b[4..8].copy_from_slice(&cap.to_be_bytes());
        b[16..20].copy_from_slice(&calc_mask_size(capacity, bits_per_entry).to_be_bytes());
        b[20] = bits_per_entry;
        b[21] = HASH_FUNC_COUNT;
        Ok(CBlock(b))
    }

    /// The header as it travels.
    pub fn from_bytes(bytes: [u8; CBLOCK_LEN]) -> Self {
        CBlock(bytes)
    }

    /// The 128 bytes.
    pub fn as_bytes(&self) -> &[u8; CBLOCK_LEN] {
        &self.0
    }

    fn i16_at(&self, at: usize) -> i16 {
        let mut b = [0u8; 2];
        b.copy_from_slice(self.0.get(at..at.saturating_add(2)).unwrap_or(&[0, 0]));
        i16::from_be_bytes(b)
    }

    fn i32_at(&self, at: usize) -> i32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.0.get(at..at.saturating_add(4)).unwrap_or(&[0; 4]));
        i32::from_be_bytes(b)
    }

    /// `ver.current`.
    pub fn version_current(&self) -> i16 {
        self.i16_at(0)
    }
    /// `ver.required`.
    pub fn version_required(&self) -> i16 {
        self.i16_at(2)
    }
    /// `capacity`: the number of entries the mask was sized for.
    pub fn capacity(&self) -> i32 {
        self.i32_at(4)
    }
    /// `count`: entries added.
    pub fn count(&self) -> i32 {
        self.i32_at(8)
    }
    /// `del_count`: deletions attempted (Squid's digests cannot delete).
    pub fn del_count(&self) -> i32 {
        self.i32_at(12)
    }
    /// `mask_size` in bytes.
    pub fn mask_size(&self) -> i32 {
        self.i32_at(16)
    }
    /// `bits_per_entry`.
    pub fn bits_per_entry(&self) -> u8 {
        self.0[20]
    }
    /// `hash_func_count`.
    pub fn hash_func_count(&self) -> u8 {
        self.0[21]
    }

    pub(crate) fn set_i32(&mut self, at: usize, v: i32) {
        if let Some(dst) = self.0.get_mut(at..at.saturating_add(4)) {
            dst.copy_from_slice(&v.to_be_bytes());
        }
    }

    /// Squid's checks on a received header (`peerDigestSetCBlock`), in its
    /// order: versions both ways, then positive fields, then the mask size
    /// against capacity and bits per entry, then four hash functions.
    ///
    /// # Errors
    /// The first check that fails.
    pub fn validate(&self) -> Result<(), SquidError> {
        let (current, required) = (self.version_current(), self.version_required());
        if required > CURRENT_VERSION {
            return Err(SquidError::TooNew { required });
        }
        if current < REQUIRED_VERSION {
            return Err(SquidError::TooOld { current });
        }
        let corrupted = |field, value: i64, why| SquidError::Corrupted { field, value, why };
        if required > current {
            return Err(corrupted(
                "ver.required",
                required.into(),
                "above ver.current",
            ));
        }
        if self.mask_size() <= 0 {
            return Err(corrupted("mask_size", self.mask_size().into(), "must be positive"));
        }
        if self.capacity() <= 0 {
            return Err(corrupted("capacity", self.capacity().into(), "must be positive"));
        }
        if self.bits_per_entry() == 0 {
            return Err(corrupted("bits_per_entry", 0, "must be positive"));
        }
        if self.hash_func_count() == 0 {
            return Err(corrupted("hash_func_count", 0, "must be positive"));
        }
        // capacity > 0 was checked.
        let expected = calc_mask_size(self.capacity().unsigned_abs().into(), self.bits_per_entry());
        if self.mask_size().unsigned_abs() != expected {
            return Err(SquidError::MaskSizeMismatch {
                mask_size: self.mask_size(),
                expected,
                capacity: self.capacity(),
                bits_per_entry: self.bits_per_entry(),
            });
        }
        if self.hash_func_count() != HASH_FUNC_COUNT {
            return Err(SquidError::HashFuncCount {
                found: self.hash_func_count(),
            });
        }
        Ok(())
    }

    /// m of the mask: `8 · mask_size` (0 for a non-positive mask size).
    pub fn mask_bits(&self) -> u64 {
        u64::try_from(self.mask_size()).unwrap_or(0).saturating_mul(8)
    }
}

/// A Squid cache digest: Squid's header and the mask as a
/// [`BloomFilter`] with Squid's hashing (m = 8 · mask_size, k = 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquidDigest {
    cblock: CBlock,
    filter: BloomFilter,
}

impl SquidDigest {
    /// Squid's default `digest_bits_per_entry`.
    pub const DEFAULT_BITS_PER_ENTRY: u8 = 5;

    /// Squid's digests are refused for lookups when more than this share of
    /// the mask is set (`peerDigestUseful`: 65%).
    pub const MAX_USEFUL_UTILISATION: f64 = 0.65;

    /// An empty digest sized as Squid sizes one: `capacity` entries at
    /// `bits_per_entry` bits each ([`SquidDigest::DEFAULT_BITS_PER_ENTRY`] is Squid's
    /// default).
    ///
    /// # Errors
    /// A shape Squid cannot hold, or no memory for the mask.
    ///
    /// # Examples
    /// ```
    /// use compressed_bloom::kinds::squid::{Method, SquidDigest};
    /// let mut d = SquidDigest::new(1000, SquidDigest::DEFAULT_BITS_PER_ENTRY)?;
    /// d.add(Method::GET, b"http://example.com/");
    /// assert!(d.contains(Method::GET, b"http://example.com/"));
    /// assert_eq!(d.cblock().count(), 1);
    /// let bytes = d.to_squid_bytes();
    /// assert_eq!(bytes.len(), 128 + 625);
    /// # Ok::<(), compressed_bloom::kinds::squid::SquidError>(())
    /// ```
    pub fn new(capacity: u64, bits_per_entry: u8) -> Result<Self, SquidError> {
        let cblock = CBlock::new(capacity, bits_per_entry)?;
        let filter = BloomFilter::new(FilterParams::squid(cblock.mask_bits()))?;
        Ok(SquidDigest { cblock, filter })
    }

    /// A digest from its header and a filter with Squid's hashing whose m
    /// is `8 · mask_size`. The header must pass [`CBlock::validate`].
    ///
    /// # Errors
    /// The header fails Squid's checks, or the filter does not match it.
    pub fn from_parts(cblock: CBlock, filter: BloomFilter) -> Result<Self, SquidError> {
        cblock.validate()?;
        if *filter.params() != FilterParams::squid(cblock.mask_bits()) {
            return Err(SquidError::FilterMismatch {
                params: *filter.params(),
                mask_size: cblock.mask_size(),
            });
        }
        Ok(SquidDigest { cblock, filter })
    }

    /// Parses a digest as Squid sends it: the header, checked as Squid
    /// checks it, then exactly `mask_size` bytes of mask. The mask's bit
    /// count must be within `limits.max_m`; nothing is allocated before the
    /// header passed and the length matched.
    ///
    /// # Errors
    /// Any [`SquidError`].
    pub fn from_squid_bytes(bytes: &[u8], limits: &DecodeLimits) -> Result<Self, SquidError> {
        let (head, mask) = bytes
            .split_first_chunk::<CBLOCK_LEN>()
            .ok_or(SquidError::TooShort { len: bytes.len() })?;
        let cblock = CBlock(*head);
        cblock.validate()?;
        let bits = cblock.mask_bits();
        if bits > limits.max_m {
            return Err(SquidError::TooLarge {
                bits,
                limit: limits.max_m,
            });
        }
        let expected = bits / 8;
        if mask.len() as u64 != expected {
            return Err(SquidError::MaskLength {
                expected,
                actual: mask.len() as u64,
            });
        }
        let n = u64::try_from(cblock.count()).unwrap_or(0);
        let filter = BloomFilter::from_bytes(FilterParams::squid(bits), n, mask)?;
        Ok(SquidDigest { cblock, filter })
    }

    /// The digest as Squid sends it: the header, then the mask.
    pub fn to_squid_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(CBLOCK_LEN.saturating_add(self.filter.m() as usize / 8));
        out.extend_from_slice(self.cblock.as_bytes());
        out.extend_from_slice(&self.filter.to_bytes());
        out
    }

    /// Squid's header.
    pub fn cblock(&self) -> &CBlock {
        &self.cblock
    }

    /// The mask as a filter with Squid's hashing.
    pub fn filter(&self) -> &BloomFilter {
        &self.filter
    }

    /// The mask as a filter, without the header.
    pub fn into_filter(self) -> BloomFilter {
        self.filter
    }

    /// Adds a URL requested with `method` (see [`Method`]), and counts it in
    /// the header as Squid does.
    pub fn add(&mut self, method: Method, url: &[u8]) {
        self.add_key(&store_key(method, url));
    }

    /// Adds a store key (method byte and URL, [`store_key`]).
    pub fn add_key(&mut self, key: &[u8]) {
        self.filter.insert(key);
        let count = self.cblock.count().saturating_add(1);
        self.cblock.set_i32(8, count);
    }

    /// Whether Squid would answer "may be cached" for this URL and method
    /// (all four bits set: `cacheDigestTest`).
    pub fn contains(&self, method: Method, url: &[u8]) -> bool {
        self.filter.contains(&store_key(method, url))
    }

    /// The mask and the header, for the delta path (`delta::squid`), which
    /// changes both together.
    pub(crate) fn parts_mut(&mut self) -> (&mut BloomFilter, &mut CBlock) {
        (&mut self.filter, &mut self.cblock)
    }

    /// The share of mask bits set; Squid stops using a peer's digest above
    /// [`SquidDigest::MAX_USEFUL_UTILISATION`].
    pub fn utilisation(&self) -> f64 {
        self.filter.fill_ratio()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calc_mask_size_matches_squid() {
        assert_eq!(calc_mask_size(1000, 5), 625);
        assert_eq!(calc_mask_size(1001, 5), 626); // 5005 bits round up
        assert_eq!(calc_mask_size(1, 1), 1);
        assert_eq!(calc_mask_size(u64::MAX, 255), MAX_MASK_SIZE);
    }

    #[test]
    fn new_header_is_what_squid_writes() {
        let cb = CBlock::new(1000, 5).unwrap();
        let b = cb.as_bytes();
        assert_eq!(&b[..8], &[0, 5, 0, 3, 0, 0, 0x03, 0xe8]);
        assert_eq!(&b[16..22], &[0, 0, 0x02, 0x71, 5, 4]);
        assert!(b[22..].iter().all(|&x| x == 0));
        cb.validate().unwrap();
    }

    #[test]
    fn method_names() {
        assert_eq!(Method::parse("get"), Some(Method::GET));
        assert_eq!(Method::parse("DELETE"), Some(Method(8)));
        assert_eq!(Method::parse("12"), Some(Method(12)));
        assert_eq!(Method::parse("FETCH"), None);
    }
}
