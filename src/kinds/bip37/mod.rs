//! BIP37 `filterload` filters: the Bloom filters Bitcoin SPV wallets send
//! to full nodes, held, queried and exported byte for byte.
//!
//! Every detail below follows BIP37 and Bitcoin Core's `CBloomFilter`
//! (`src/common/bloom.cpp`, `src/serialize.h`), and is checked against
//! Core's own test vectors (tests/data/bip37-*.txt):
//!
//! * The `filterload` payload is `CompactSize(len) ‖ vData[len] ‖
//!   nHashFuncs (u32 LE) ‖ nTweak (u32 LE) ‖ nFlags (u8)`. A node refuses a
//!   filter with `len > 36,000` or `nHashFuncs > 50`.
//! * Position `i` of a key, for i = 0..nHashFuncs−1, is
//!   `MurmurHash3_x86_32(i·0xFBA4C795 + nTweak, key) mod 8·len`, and bit j
//!   is `vData[j >> 3] & (1 << (j & 7))`: least significant bit first, the
//!   same packing as this crate's bit arrays, so `vData` *is* the filter's
//!   packed array ([`HashScheme::Bip37Murmur`]).
//! * `nFlags` only steers how a node updates the filter as it matches
//!   transactions; a query ignores it. It travels verbatim.
//!
//! In a frame, the filter is a standard filter with hash scheme 4
//! (m = 8·len, k = nHashFuncs, seed = nTweak) and `nFlags` as metadata
//! record 4 (docs/FORMAT.md section 6), so exporting an imported filter
//! gives back the same bytes, and the bit array can be coded smaller.
//!
//! Two payloads Core accepts are refused here: `len = 0` and
//! `nHashFuncs = 0`. Both match every key in Core (an empty filter is
//! Core's "match all"); this crate's filters have m ≥ 1 and k ≥ 1.

// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;
// Each frame function, for the crate's tests, tools and CLI; the API is
// the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{decode_bip37, encode_bip37, encode_bip37_raw};
}

use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::hash::HashScheme;
use crate::prelude::*;
use crate::wire::compact_size::{self, CompactSizeError};
use crate::wire::limits::DecodeLimits;
use thiserror::Error;

/// Core's `MAX_BLOOM_FILTER_SIZE`: the longest `vData` a node accepts.
const MAX_FILTER_BYTES: u32 = crate::hash::BIP37_MAX_FILTER_BYTES;
/// Core's `MAX_HASH_FUNCS`.
const MAX_HASH_FUNCS: u32 = crate::hash::BIP37_MAX_HASH_FUNCS;
/// The `filterload` bytes after `vData`: nHashFuncs, nTweak, nFlags.
const TRAILER_LEN: usize = 9;

/// Why a BIP37 `filterload` payload (or a filter's shape) was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bip37Error {
    /// The filter length is not a canonical CompactSize (Core:
    /// "non-canonical ReadCompactSize()"): a longer form than the value
    /// needs.
    #[error("the filter length at byte 0 is a non-canonical CompactSize ({value} in {bytes} bytes)")]
    BadCompactSize {
        /// The value read.
        value: u64,
        /// The bytes its encoding took.
        bytes: usize,
    },
    /// The filter is longer than a node accepts (36,000 bytes), or than
    /// the receiver's `max_m` allows.
    #[error("the filter is {len} bytes; at most {max} are accepted")]
    TooLarge {
        /// The declared length in bytes.
        len: u64,
        /// The largest accepted.
        max: u64,
    },
    /// More than 50 hash functions (Core's `MAX_HASH_FUNCS`).
    #[error("nHashFuncs = {found}; BIP37 allows at most 50")]
    TooManyHashFuncs {
        /// nHashFuncs as sent.
        found: u32,
    },
    /// A filter of length 0: Core's "match everything", which this crate's
    /// filters (m ≥ 1) cannot hold.
    #[error("the filter is empty (0 bytes); an empty BIP37 filter matches everything and is not held")]
    Empty,
    /// nHashFuncs = 0: in current Core a filter that matches everything,
    /// which this crate's filters (k ≥ 1) cannot hold.
    #[error("nHashFuncs = 0; such a BIP37 filter matches everything and is not held")]
    NoHashFuncs,
    /// The payload ends early.
    #[error("the filterload payload is truncated: {needed} bytes needed, {available} present")]
    Truncated {
        /// Bytes the payload needs.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// Bytes after nFlags.
    #[error("{extra} bytes after the filterload payload's end (byte {end})")]
    TrailingData {
        /// Where the payload ends.
        end: u64,
        /// How many bytes follow.
        extra: u64,
    },
    /// A filter whose parameters are not BIP37's (another hash scheme, or
    /// outside scheme 4's rules).
    #[error("not a BIP37 filter: {params}")]
    NotBip37 {
        /// The filter's parameters.
        params: FilterParams,
    },
    /// The bit array could not be built.
    #[error(transparent)]
    Filter(#[from] FilterError),
}

/// A BIP37 `filterload` filter: its bit array as a [`BloomFilter`] with
/// BIP37's hashing (m = 8·len, k = nHashFuncs, seed = nTweak) and its
/// `nFlags`.
///
/// # Examples
/// ```
/// use compressed_bloom::bitcoin::Bip37Filter;
/// use compressed_bloom::DecodeLimits;
/// // Bitcoin Core's bloom_tests.cpp, bloom_create_insert_serialize.
/// let mut f = Bip37Filter::new(3, 5, 0, 1)?;
/// for hex in ["99108ad8ed9bb6274d3980bab5a85c048f0950c8",
///             "b5a2c786d9ef4658287ced5914b37a1b4aa32eee",
///             "b9300670b4c5366e95b2699e8b18bc75e5f729c5"] {
///     let key: Vec<u8> = (0..hex.len()).step_by(2)
///         .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
///     f.insert(&key);
/// }
/// let payload = f.to_filterload();
/// assert_eq!(payload, [0x03, 0x61, 0x4e, 0x9b, 5, 0, 0, 0, 0, 0, 0, 0, 1]);
/// // filterload carries no key count: the import has the same bits and
/// // answers, n = 0.
/// let back = Bip37Filter::from_filterload(&payload, &DecodeLimits::default())?;
/// assert_eq!(back.to_filterload(), payload);
/// assert!(back.contains(&[0x99, 0x10, 0x8a, 0xd8, 0xed, 0x9b, 0xb6, 0x27, 0x4d, 0x39,
///                         0x80, 0xba, 0xb5, 0xa8, 0x5c, 0x04, 0x8f, 0x09, 0x50, 0xc8]));
/// # Ok::<(), compressed_bloom::bitcoin::Bip37Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bip37Filter {
    filter: BloomFilter,
    flags: u8,
}

impl Bip37Filter {
    /// Core's `MAX_BLOOM_FILTER_SIZE`: the longest filter, in bytes.
    pub const MAX_FILTER_BYTES: u32 = MAX_FILTER_BYTES;
    /// Core's `MAX_HASH_FUNCS`.
    pub const MAX_HASH_FUNCS: u32 = MAX_HASH_FUNCS;

    /// An empty filter of `len_bytes` bytes with `hash_funcs` hash
    /// functions, `tweak` and `flags`, as a wallet would send it.
    ///
    /// # Errors
    /// [`Bip37Error::Empty`], [`Bip37Error::TooLarge`],
    /// [`Bip37Error::NoHashFuncs`], [`Bip37Error::TooManyHashFuncs`], or no
    /// memory for the bits.
    pub fn new(len_bytes: u32, hash_funcs: u32, tweak: u32, flags: u8) -> Result<Self, Bip37Error> {
        check_shape(u64::from(len_bytes), hash_funcs, u64::from(MAX_FILTER_BYTES))?;
        let filter = BloomFilter::new(params(len_bytes, hash_funcs, tweak))?;
        Ok(Bip37Filter { filter, flags })
    }

    /// An empty filter sized as Bitcoin Core's `CBloomFilter(nElements,
    /// nFPRate, nTweak, nFlags)` sizes one, in double precision as Core
    /// computes it: `len = min(−n·ln(fp)/ln²2 bits, 288,000) / 8` bytes,
    /// `nHashFuncs = min(⌊(8·len / n) · ln 2⌋, 50)` with the division on
    /// integers.
    ///
    /// # Errors
    /// As [`Bip37Filter::new`] (e.g. [`Bip37Error::Empty`] for
    /// `n_elements = 0` or `fp_rate ≥ 1`).
    #[cfg(feature = "std")]
    pub fn with_capacity(n_elements: u32, fp_rate: f64, tweak: u32, flags: u8) -> Result<Self, Bip37Error> {
        const LN2SQUARED: f64 = core::f64::consts::LN_2 * core::f64::consts::LN_2;
        if n_elements == 0 {
            return Err(Bip37Error::Empty);
        }
        // C++ casts the double to unsigned int; `as` saturates instead of
        // being undefined where it does not fit.
        let bits = (-1.0 / LN2SQUARED * f64::from(n_elements) * fp_rate.ln()) as u32;
        let len = bits.min(MAX_FILTER_BYTES * 8) / 8;
        // n_elements >= 1; len <= 36,000, so 8·len does not saturate.
        let per = len.saturating_mul(8).checked_div(n_elements).unwrap_or(0);
        let k = (f64::from(per) * core::f64::consts::LN_2) as u32;
        Bip37Filter::new(len, k.min(MAX_HASH_FUNCS), tweak, flags)
    }

    /// Parses a `filterload` payload: `CompactSize(len) ‖ vData ‖
    /// nHashFuncs ‖ nTweak ‖ nFlags`, in one pass. The length is checked
    /// (canonical, at most 36,000 bytes and within `limits.max_m` bits)
    /// and the payload's size matched before anything is allocated.
    ///
    /// # Errors
    /// Any [`Bip37Error`], naming the first problem in payload order.
    pub fn from_filterload(bytes: &[u8], limits: &DecodeLimits) -> Result<Self, Bip37Error> {
        let (len, at) = read_compact_size(bytes)?;
        let max = u64::from(MAX_FILTER_BYTES).min(limits.max_m / 8);
        if len > max {
            return Err(Bip37Error::TooLarge { len, max });
        }
        if len == 0 {
            return Err(Bip37Error::Empty);
        }
        // len <= 36,000 and at <= 9: no overflow.
        let end = at.saturating_add(len as usize).saturating_add(TRAILER_LEN);
        let (body, rest) = bytes.split_at_checked(end).ok_or(Bip37Error::Truncated {
            needed: end as u64,
            available: bytes.len() as u64,
        })?;
        if !rest.is_empty() {
            return Err(Bip37Error::TrailingData {
                end: end as u64,
                extra: rest.len() as u64,
            });
        }
        let (data, trailer) = body
            .get(at..)
            .and_then(|b| b.split_at_checked(len as usize))
            .ok_or(Bip37Error::Truncated {
                needed: end as u64,
                available: bytes.len() as u64,
            })?;
        let word = |i: usize| {
            trailer
                .get(i..i.saturating_add(4))
                .and_then(|w| <[u8; 4]>::try_from(w).ok())
                .map_or(0, u32::from_le_bytes)
        };
        let (k, tweak, flags) = (word(0), word(4), trailer.get(8).copied().unwrap_or(0));
        check_shape(len, k, max)?;
        let filter = BloomFilter::from_bytes(params(len as u32, k, tweak), 0, data)?;
        Ok(Bip37Filter { filter, flags })
    }

    /// The `filterload` payload, as Core serialises the filter.
    pub fn to_filterload(&self) -> Vec<u8> {
        let bits = self.filter.to_bytes();
        let mut out = Vec::with_capacity(bits.len().saturating_add(3 + TRAILER_LEN));
        compact_size::put(&mut out, bits.len() as u64);
        out.extend_from_slice(&bits);
        out.extend_from_slice(&self.hash_funcs().to_le_bytes());
        out.extend_from_slice(&self.tweak().to_le_bytes());
        out.push(self.flags);
        out
    }

    /// A filter from a [`BloomFilter`] with BIP37's hashing (scheme 4,
    /// whose rules make it a valid `filterload` shape) and `flags`.
    ///
    /// # Errors
    /// [`Bip37Error::NotBip37`] for another scheme or shape.
    pub fn from_parts(filter: BloomFilter, flags: u8) -> Result<Self, Bip37Error> {
        let p = *filter.params();
        if p.scheme != HashScheme::Bip37Murmur || p.validate().is_err() {
            return Err(Bip37Error::NotBip37 { params: p });
        }
        Ok(Bip37Filter { filter, flags })
    }

    /// Inserts a data element (Core's `CBloomFilter::insert`).
    pub fn insert(&mut self, key: &[u8]) {
        self.filter.insert(key);
    }

    /// Whether the filter matches a data element, as Core's
    /// `CBloomFilter::contains` answers: every one of the nHashFuncs bits
    /// set. (Core's "match all" cases, an empty filter or nHashFuncs = 0,
    /// are never held.)
    pub fn contains(&self, key: &[u8]) -> bool {
        self.filter.contains(key)
    }

    /// The filter's length in bytes (`vData.size()`).
    pub fn len_bytes(&self) -> u32 {
        (self.filter.m() / 8) as u32
    }

    /// nHashFuncs.
    pub fn hash_funcs(&self) -> u32 {
        self.filter.k()
    }

    /// nTweak.
    pub fn tweak(&self) -> u32 {
        self.filter.params().seed as u32
    }

    /// nFlags (0 `BLOOM_UPDATE_NONE`, 1 `BLOOM_UPDATE_ALL`, 2
    /// `BLOOM_UPDATE_P2PUBKEY_ONLY`; any byte is kept).
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// The name of nFlags' update mode (its low two bits, as Core reads
    /// them): "none", "all", "p2pubkey-only" or "unknown".
    pub fn flags_name(&self) -> &'static str {
        match self.flags & 3 {
            0 => "none",
            1 => "all",
            2 => "p2pubkey-only",
            _ => "unknown",
        }
    }

    /// The bit array as a filter with BIP37's hashing.
    pub fn filter(&self) -> &BloomFilter {
        &self.filter
    }

    /// The bit array as a filter, without nFlags.
    pub fn into_filter(self) -> BloomFilter {
        self.filter
    }

    /// The bit array, for the delta path.
    pub(crate) fn filter_mut(&mut self) -> &mut BloomFilter {
        &mut self.filter
    }
}

/// Scheme 4's parameters for a filter of `len` bytes.
const fn params(len: u32, k: u32, tweak: u32) -> FilterParams {
    FilterParams {
        // len < 2^32: 8·len < 2^35.
        m: (len as u64).saturating_mul(8),
        k,
        seed: tweak as u64,
        scheme: HashScheme::Bip37Murmur,
    }
}

/// The refusals of a shape, in payload order: length, then nHashFuncs.
fn check_shape(len: u64, k: u32, max: u64) -> Result<(), Bip37Error> {
    if len > max {
        return Err(Bip37Error::TooLarge { len, max });
    }
    if len == 0 {
        return Err(Bip37Error::Empty);
    }
    if k > MAX_HASH_FUNCS {
        return Err(Bip37Error::TooManyHashFuncs { found: k });
    }
    if k == 0 {
        return Err(Bip37Error::NoHashFuncs);
    }
    Ok(())
}

/// Reads a CompactSize at the start of `bytes` as Core's
/// `ReadCompactSize` does, refusals in this importer's terms.
fn read_compact_size(bytes: &[u8]) -> Result<(u64, usize), Bip37Error> {
    compact_size::get(bytes).map_err(|e| match e {
        CompactSizeError::Truncated { needed, available } => Bip37Error::Truncated { needed, available },
        CompactSizeError::NonCanonical { value, bytes } => Bip37Error::BadCompactSize { value, bytes },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared reader's refusals, in this importer's terms.
    #[test]
    fn compact_size_refusals_are_bip37_errors() {
        assert_eq!(read_compact_size(&[0x05]), Ok((5, 1)));
        assert_eq!(
            read_compact_size(&[0xfd, 0xfc, 0x00]),
            Err(Bip37Error::BadCompactSize { value: 0xfc, bytes: 3 })
        );
        assert_eq!(
            read_compact_size(&[0xfe, 0xff, 0xff, 0, 0]),
            Err(Bip37Error::BadCompactSize { value: 0xffff, bytes: 5 })
        );
        assert_eq!(
            read_compact_size(&[0xfd, 0x01]),
            Err(Bip37Error::Truncated { needed: 3, available: 2 })
        );
    }
}
