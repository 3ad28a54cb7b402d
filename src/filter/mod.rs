//! The in-memory Bloom filter: a packed bit array plus the parameters that
//! say how keys map to bits.
//!
//! Bit `i` of the filter lives in byte `i / 8` at bit position `i % 8`
//! (least significant bit first) of the packed form, which is also the order
//! of the 64-bit words in memory read as little-endian. Bits at positions
//! `>= m` in the last word are always zero: every constructor and every
//! operation keeps that invariant, and the decoder checks it.
//!
//! ## From a plan to the wire and back
//! Plan for 10,000 keys at f = 0.01, build, send as a frame, decode, and
//! publish to a subscriber:
//!
//! ```
//! use compressed_bloom::plan::{self, Constraints, Target};
//! use compressed_bloom::{decode_as, encode_any, AnyFilter, DecodeLimits, FilterKind};
//! use compressed_bloom::{Publisher, PublisherOptions, Subscriber};
//! // Standard, partitioned and sparse filters meet the same needs (deltas,
//! // union): the planner picks among them by size, or is asked for one.
//! let choice = plan::for_kind(FilterKind::Standard, 10_000, Target::Fpr(0.01), &Constraints::default())?;
//! let filter = choice.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
//! assert_eq!(filter.kind(), FilterKind::Standard);
//! let frame = encode_any(&filter);
//! let received: AnyFilter = decode_as(&frame, &DecodeLimits::default())?;
//! assert_eq!(received, filter);
//! let mut publisher = Publisher::new(filter, PublisherOptions::default());
//! let mut subscriber = Subscriber::<AnyFilter>::default();
//! subscriber.receive(&publisher.publish().frame)?;
//! assert!(subscriber.filter().is_some_and(|f| f.contains(&7u32.to_le_bytes())));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::hash::{HashScheme, KeyHash};
use crate::prelude::*;
use thiserror::Error;
mod digest;
pub(crate) use digest::Digester;

internal! {
    /// The format's ranges of m and k ([`FilterParams::MAX_M`],
    /// [`FilterParams::MAX_K`]) as free constants, for the crate's own tools.
    pub use crate::wire::limits::{MAX_K, MAX_M};
}

/// The parameters two parties must agree on for their filters to mean the
/// same thing. Two filters can be combined only if these are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FilterParams {
    /// Number of bits, `1..=MAX_M`.
    pub m: u64,
    /// Number of hash positions per key, `1..=MAX_K`.
    pub k: u32,
    /// Seed of the key hash.
    pub seed: u64,
    /// How keys map to positions.
    pub scheme: HashScheme,
}

/// `m = 16964 bits, k = 2, seed = 0, hash scheme 1`: what a person
/// compares when two filters do not match.
impl core::fmt::Display for FilterParams {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "m = {} bits, k = {}, seed = {}, hash scheme {} ({})",
            self.m,
            self.k,
            self.seed,
            self.scheme.id(),
            self.scheme.name()
        )
    }
}

impl FilterParams {
    /// The largest m the format allows: 2^56 bits.
    pub const MAX_M: u64 = MAX_M;
    /// The largest k the format allows: 64.
    pub const MAX_K: u32 = MAX_K;

    /// Parameters with the default (and in v1 only) hash scheme.
    pub const fn new(m: u64, k: u32, seed: u64) -> Self {
        FilterParams {
            m,
            k,
            seed,
            scheme: HashScheme::Xxh3EnhancedDouble,
        }
    }

    /// Parameters of a Squid cache digest of `m` bits: Squid's MD5
    /// hashing ([`HashScheme::SquidMd5`]), k = 4, seed 0.
    pub const fn squid(m: u64) -> Self {
        FilterParams {
            m,
            k: 4,
            seed: 0,
            scheme: HashScheme::SquidMd5,
        }
    }

    /// [`Self::validate`], and hash scheme 1, which every kind built from
    /// keys here requires (docs/FORMAT.md: Squid's and BIP37's hashing are
    /// for standard filters, BIP158's is built by its own type), so that
    /// a filter of `kind` can be sent.
    ///
    /// # Errors
    /// As [`Self::validate`]; [`FilterError::SchemeNotForKind`].
    pub(crate) fn validate_for_kind(&self, kind: &'static str) -> Result<(), FilterError> {
        self.validate()?;
        if self.scheme != HashScheme::Xxh3EnhancedDouble {
            return Err(FilterError::SchemeNotForKind {
                kind,
                scheme: self.scheme.name(),
            });
        }
        Ok(())
    }

    /// Checks the ranges documented on the fields, and the scheme's own
    /// rules ([`HashScheme::SquidMd5`]: k = 4, m < 2^32, seed 0;
    /// [`HashScheme::Bip37Murmur`]: k ≤ 50, seed < 2^32, m a multiple of 8
    /// up to 288,000; [`HashScheme::Bip158SipHash`]: k = 1, seed 0).
    ///
    /// # Errors
    /// [`FilterError::InvalidM`], [`FilterError::InvalidK`] or
    /// [`FilterError::SchemeRule`].
    pub fn validate(&self) -> Result<(), FilterError> {
        if self.m == 0 || self.m > MAX_M {
            return Err(FilterError::InvalidM { m: self.m });
        }
        if self.k == 0 || self.k > MAX_K {
            return Err(FilterError::InvalidK { k: self.k });
        }
        if let Some(rule) = self.scheme_rule_broken() {
            return Err(FilterError::SchemeRule {
                scheme: self.scheme.name(),
                rule,
            });
        }
        Ok(())
    }

    /// The rule of the hash scheme these parameters break, if any.
    pub(crate) const fn scheme_rule_broken(&self) -> Option<&'static str> {
        match self.scheme {
            HashScheme::Xxh3EnhancedDouble => None,
            HashScheme::Bip37Murmur => {
                if self.k > crate::hash::BIP37_MAX_HASH_FUNCS {
                    Some("BIP37 allows at most 50 hash functions (k <= 50)")
                } else if self.seed > u32::MAX as u64 {
                    Some("BIP37's seed is the 32-bit nTweak: seed < 2^32")
                } else if !self.m.is_multiple_of(8) {
                    Some("BIP37's filter is whole bytes: m a multiple of 8")
                } else if self.m > crate::hash::BIP37_MAX_FILTER_BYTES as u64 * 8 {
                    Some("BIP37's filter is at most 36,000 bytes (m <= 288,000)")
                } else {
                    None
                }
            }
            HashScheme::SquidMd5 => {
                if self.k != 4 {
                    Some("Squid's hashing gives exactly k = 4 positions")
                } else if self.m > u32::MAX as u64 {
                    Some("Squid's hashing takes 32-bit words modulo m, so m < 2^32")
                } else if self.seed != 0 {
                    Some("Squid's hashing has no seed: seed must be 0")
                } else {
                    None
                }
            }
            HashScheme::Bip158SipHash => {
                if self.k != 1 {
                    Some("BIP158's hashing gives one position per script: k = 1")
                } else if self.seed != 0 {
                    Some("BIP158's hashing is keyed by the block hash, not a seed: seed must be 0")
                } else {
                    None
                }
            }
        }
    }

    /// Number of 64-bit words that hold `m` bits; `usize::MAX` when that
    /// count does not fit in a `usize` (m ≥ 2^38 on a 32-bit target), so
    /// that allocating it fails as out of memory instead of truncating.
    pub fn word_len(&self) -> usize {
        units_for(self.m, 64)
    }

    /// Number of bytes of the packed bit array: ⌈m / 8⌉.
    pub fn byte_len(&self) -> u64 {
        self.m.div_ceil(8)
    }
}

/// Caller misuse of the filter API.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterError {
    /// `m` is 0 or above [`FilterParams::MAX_M`].
    #[error("m = {m} bits is out of range (1..={max})", max = MAX_M)]
    InvalidM {
        /// The rejected value.
        m: u64,
    },
    /// `k` is 0 or above [`FilterParams::MAX_K`].
    #[error("k = {k} hash positions is out of range (1..={max})", max = MAX_K)]
    InvalidK {
        /// The rejected value.
        k: u32,
    },
    /// Two filters with different parameters cannot be combined.
    #[error("filter parameters differ: {left} against {right}")]
    ParamsMismatch {
        /// Parameters of the receiver.
        left: FilterParams,
        /// Parameters of the argument.
        right: FilterParams,
    },
    /// The parameters break a rule of their hash scheme.
    #[error("hash scheme {scheme}: {rule}")]
    SchemeRule {
        /// The scheme's name.
        scheme: &'static str,
        /// The rule broken.
        rule: &'static str,
    },
    /// The kind does not work with this hash scheme (Squid's hashing is
    /// for standard filters only).
    #[error("{kind} filters use hash scheme 1 (xxh3), not {scheme}")]
    SchemeNotForKind {
        /// The kind's name.
        kind: &'static str,
        /// The scheme's name.
        scheme: &'static str,
    },
    /// A delta's update identity has seq 0; a delta produces version seq
    /// from seq − 1, so seq is at least 1.
    #[error("a delta's sequence number must be at least 1")]
    InvalidSeq,
    /// A partitioned filter needs m to be a multiple of k.
    #[error("a partitioned filter needs m to be a multiple of k (m = {m}, k = {k})")]
    NotPartitionable {
        /// m of the parameters.
        m: u64,
        /// k of the parameters.
        k: u32,
    },
    /// A packed bit array has the wrong length for `m`.
    #[error("bit array is {actual} bytes, m = {m} bits needs exactly {expected}")]
    BitArrayLength {
        /// m of the parameters.
        m: u64,
        /// ⌈m/8⌉.
        expected: u64,
        /// What was given.
        actual: u64,
    },
    /// A packed bit array has ones past bit m − 1.
    #[error("bit array has bits set at or after position m = {m}")]
    PaddingBitsSet {
        /// m of the parameters.
        m: u64,
    },
    /// The memory for the bit array could not be reserved.
    #[error("cannot allocate {bytes} bytes for the bit array")]
    OutOfMemory {
        /// Bytes requested.
        bytes: u64,
    },
}

/// A Bloom filter over byte-string keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    params: FilterParams,
    /// Number of keys inserted (or declared by whoever built the bits).
    n: u64,
    words: Vec<u64>,
}

impl BloomFilter {
    /// An empty filter.
    ///
    /// # Errors
    /// Parameters out of range, or the bit array cannot be allocated.
    ///
    /// # Examples
    /// ```
    /// use compressed_bloom::{BloomFilter, FilterParams};
    /// let mut f = BloomFilter::new(FilterParams::new(1000, 3, 7))?;
    /// f.insert(b"apple");
    /// assert!(f.contains(b"apple"));
    /// # Ok::<(), compressed_bloom::FilterError>(())
    /// ```
    pub fn new(params: FilterParams) -> Result<Self, FilterError> {
        params.validate()?;
        let words = zeroed_words(params.word_len())?;
        Ok(BloomFilter {
            params,
            n: 0,
            words,
        })
    }

    /// A filter from already-packed little-endian words (crate-internal: the
    /// decoder has checked the padding invariant).
    pub(crate) fn from_words_unchecked(params: FilterParams, n: u64, words: Vec<u64>) -> Self {
        debug_assert_eq!(words.len(), params.word_len());
        BloomFilter { params, n, words }
    }

    /// A filter from a packed bit array (byte `i/8`, bit `i%8`, LSB first) of
    /// exactly ⌈m/8⌉ bytes, for importing filters built elsewhere.
    ///
    /// # Errors
    /// Bad parameters, wrong length, or ones in the padding past bit m − 1.
    pub fn from_bytes(params: FilterParams, n: u64, bytes: &[u8]) -> Result<Self, FilterError> {
        params.validate()?;
        check_packed(&params, bytes)?;
        let mut words = zeroed_words(params.word_len())?;
        words_from_le_bytes(&mut words, bytes);
        Ok(BloomFilter { params, n, words })
    }

    /// The parameters.
    pub fn params(&self) -> &FilterParams {
        &self.params
    }

    /// Number of bits m.
    pub fn m(&self) -> u64 {
        self.params.m
    }

    /// Number of hash positions per key k.
    pub fn k(&self) -> u32 {
        self.params.k
    }

    /// The number of keys inserted (or declared on import/decode).
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when no key was inserted (or declared).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Overrides the declared key count (e.g. after importing a bit array).
    pub fn set_len(&mut self, n: u64) {
        self.n = n;
    }

    /// Inserts a key.
    pub fn insert(&mut self, key: &[u8]) {
        if self.params.scheme == HashScheme::Bip37Murmur {
            // Up to 50 Murmur runs: not expressible as one KeyHash.
            let p = self.params;
            for pos in crate::hash::bip37_positions(key, p.seed, p.m, p.k) {
                self.set_bit(pos);
            }
            self.n = self.n.saturating_add(1);
            return;
        }
        self.insert_hash(self.hash(key));
    }

    /// The hash of `key` under this filter's scheme and seed.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> KeyHash {
        self.params.scheme.hash(key, self.params.seed)
    }

    /// Inserts a key by its precomputed hash ([`hash`](Self::hash)). Under
    /// [`HashScheme::Bip37Murmur`] a hash holds only the first four
    /// positions: a filter with k > 4 sets all of a key's bits only through
    /// [`insert`](Self::insert).
    pub fn insert_hash(&mut self, h: KeyHash) {
        let p = &self.params;
        for pos in h.positions_for(p.scheme, p.m, p.k) {
            // pos < m, so pos / 64 < word_len: in bounds.
            self.words[(pos >> 6) as usize] |= 1u64 << (pos & 63);
        }
        self.n = self.n.saturating_add(1);
    }

    /// XORs `other` (packed words of the same m, padding clear) into the
    /// bits (crate-internal: applying a delta layer).
    pub(crate) fn xor_words(&mut self, other: &[u64]) {
        for (w, o) in self.words.iter_mut().zip(other) {
            *w ^= o;
        }
    }

    /// Sets bit `i` (crate-internal: kinds that place positions their own
    /// way share this bit array). Bits at or past m are ignored.
    pub(crate) fn set_bit(&mut self, i: u64) {
        if i < self.params.m {
            if let Some(w) = self.words.get_mut((i >> 6) as usize) {
                *w |= 1u64 << (i & 63);
            }
        }
    }

    /// True if the key may be in the set; false if it certainly is not.
    pub fn contains(&self, key: &[u8]) -> bool {
        if self.params.scheme == HashScheme::Bip37Murmur {
            let p = &self.params;
            return crate::hash::bip37_positions(key, p.seed, p.m, p.k).all(|pos| self.bit(pos));
        }
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) by precomputed hash ([`hash`](Self::hash)).
    /// Under [`HashScheme::Bip37Murmur`] with k > 4 it checks the first four
    /// positions only (never a false negative, more false positives):
    /// [`contains`](Self::contains) checks all k.
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let p = &self.params;
        h.positions_for(p.scheme, p.m, p.k)
            .all(|pos| self.words[(pos >> 6) as usize] >> (pos & 63) & 1 == 1)
    }

    /// Bit `i` (false for `i >= m`).
    pub fn bit(&self, i: u64) -> bool {
        i < self.params.m && self.words[(i >> 6) as usize] >> (i & 63) & 1 == 1
    }

    /// ORs `other` into `self`: the filter of the union of both key sets.
    /// The key count becomes the sum (an upper bound on the union's size).
    ///
    /// # Errors
    /// [`FilterError::ParamsMismatch`] if m, k, seed or scheme differ.
    pub fn union_with(&mut self, other: &BloomFilter) -> Result<(), FilterError> {
        self.check_same(other)?;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
        self.n = self.n.saturating_add(other.n);
        Ok(())
    }

    /// ANDs `other` into `self`. The result answers "maybe" for every key of
    /// the intersection (and possibly more than a filter built from the
    /// intersection alone). The key count becomes the smaller of the two.
    ///
    /// # Errors
    /// [`FilterError::ParamsMismatch`] if m, k, seed or scheme differ.
    pub fn intersect_with(&mut self, other: &BloomFilter) -> Result<(), FilterError> {
        self.check_same(other)?;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= *b;
        }
        self.n = self.n.min(other.n);
        Ok(())
    }

    fn check_same(&self, other: &BloomFilter) -> Result<(), FilterError> {
        if self.params != other.params {
            return Err(FilterError::ParamsMismatch {
                left: self.params,
                right: other.params,
            });
        }
        Ok(())
    }

    /// Number of bits set.
    pub fn count_ones(&self) -> u64 {
        crate::coder::popcount::count_ones(&self.words)
    }

    /// Fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.params.m as f64
    }

    /// The Swamidass–Baldi estimate of the number of distinct keys:
    /// n* = −(m/k)·ln(1 − X/m), with X the number of ones. Infinite when every
    /// bit is set (the filter no longer carries information about n).
    #[cfg(feature = "std")]
    pub fn estimated_len(&self) -> f64 {
        let m = self.params.m as f64;
        let x = self.count_ones() as f64;
        if x >= m {
            return f64::INFINITY;
        }
        -(m / f64::from(self.params.k)) * (-x / m).ln_1p()
    }

    /// The false-positive rate implied by the current fill: (X/m)^k.
    #[cfg(feature = "std")]
    pub fn expected_fpr(&self) -> f64 {
        self.fill_ratio().powi(self.params.k as i32)
    }

    /// The positions of the one bits, in increasing order.
    pub fn ones(&self) -> impl Iterator<Item = u64> + '_ {
        ones_of(&self.words)
    }

    /// The packed words (little-endian bit order; see the module docs).
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// The packed bit array: ⌈m/8⌉ bytes, bit i in byte i/8 at bit i%8.
    pub fn to_bytes(&self) -> Vec<u8> {
        let len = self.params.byte_len() as usize;
        // Whole words first (up to 7 bytes past len), then cut: no regrowth.
        let mut out = Vec::with_capacity(self.words.len().saturating_mul(8));
        for w in &self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.truncate(len);
        out
    }
}

/// The positions of the one bits of packed words, in increasing order.
pub(crate) fn ones_of(words: &[u64]) -> impl Iterator<Item = u64> + '_ {
    words.iter().enumerate().flat_map(|(wi, &w)| {
        let base = (wi as u64).saturating_mul(64);
        let mut bits = w;
        core::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let p = base.saturating_add(u64::from(bits.trailing_zeros()));
            bits &= bits.wrapping_sub(1);
            Some(p)
        })
    })
}

/// Packs little-endian bytes into words (the packed-array order of the
/// module docs); a short last chunk fills the low bytes of its word.
pub(crate) fn words_from_le_bytes(words: &mut [u64], bytes: &[u8]) {
    for (w, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
        let mut buf = [0u8; 8];
        if let Some(dst) = buf.get_mut(..chunk.len()) {
            dst.copy_from_slice(chunk);
        }
        *w = u64::from_le_bytes(buf);
    }
}

/// Hands the first `len` bytes of `words` as little-endian bytes (the
/// packed-array order) to `put`, in order: on a little-endian machine the
/// words' own bytes, in one piece and without a copy; elsewhere by
/// [`with_le_bytes_copied`]. The raw-frame writer and the filter digest
/// both read the words this way.
pub(crate) fn with_le_bytes<E>(
    words: &[u64],
    len: usize,
    mut put: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    #[cfg(target_endian = "little")]
    {
        let bytes: &[u8] = bytemuck::cast_slice(words);
        put(bytes.get(..len).unwrap_or(bytes))
    }
    #[cfg(not(target_endian = "little"))]
    with_le_bytes_copied(words, len, put)
}

/// [`with_le_bytes`] by way of a little-endian copy of each 4 KiB chunk
/// (the path of big-endian machines; the tests check both agree).
#[cfg_attr(all(target_endian = "little", not(test)), allow(dead_code))]
pub(crate) fn with_le_bytes_copied<E>(
    words: &[u64],
    len: usize,
    mut put: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    const CHUNK_WORDS: usize = 512;
    let mut buf = [0u8; 8 * CHUNK_WORDS];
    let mut left = len;
    for chunk in words.chunks(CHUNK_WORDS) {
        if left == 0 {
            break;
        }
        for (slot, w) in buf.chunks_exact_mut(8).zip(chunk) {
            slot.copy_from_slice(&w.to_le_bytes());
        }
        let take = chunk.len().saturating_mul(8).min(left);
        put(buf.get(..take).unwrap_or_default())?;
        left = left.saturating_sub(take);
    }
    Ok(())
}

/// True when no bit at position >= m is set in `words`.
pub(crate) fn padding_is_clear(m: u64, words: &[u64]) -> bool {
    let used = (m & 63) as u32;
    match words.last() {
        Some(&last) if used != 0 => last >> used == 0,
        _ => true,
    }
}

/// Checks a packed bit array (the bytes of [`BloomFilter::to_bytes`]) for
/// the filter `params` describes: exactly ⌈m/8⌉ bytes, and the bits past m
/// in the last one 0. [`BloomFilter::from_bytes`] and the block-by-block
/// writer of raw frames (`format::stream`) both check this.
pub(crate) fn check_packed(params: &FilterParams, bytes: &[u8]) -> Result<(), FilterError> {
    if bytes.len() as u64 != params.byte_len() {
        return Err(FilterError::BitArrayLength {
            m: params.m,
            expected: params.byte_len(),
            actual: bytes.len() as u64,
        });
    }
    let used = (params.m % 8) as u32;
    if bytes.last().is_some_and(|&b| used != 0 && b >> used != 0) {
        return Err(FilterError::PaddingBitsSet { m: params.m });
    }
    Ok(())
}

/// A zeroed word vector, reporting allocation failure instead of aborting.
///
/// The reservation is tried first, fallibly (a refused one is
/// `OutOfMemory`), and released; the vector itself is then allocated
/// zeroed (`vec![0; len]`, the allocator's calloc), so a large one takes
/// the kernel's zero pages instead of a memset on the calling thread, and
/// its pages are first touched where the decoders write them, on their own
/// threads: on `cbloom decode --bits-only` of the 17.5 MB filter (type 4)
/// that is 29.6 ms against 33.1 with a memset (medians of 9). Safe stable Rust has no fallible
/// zeroed allocation; the second step can fail only if memory the first
/// found vanished in between, and then aborts as any infallible allocation
/// does.
/// ⌈bits / per⌉ as a `usize`, saturating at `usize::MAX` (on 32-bit
/// targets a large m's count does not fit): an allocation of that many
/// then fails in [`zeroed_words`] rather than silently allocating a
/// truncated count.
pub(crate) fn units_for(bits: u64, per: u64) -> usize {
    usize::try_from(bits.div_ceil(per.max(1))).unwrap_or(usize::MAX)
}

pub(crate) fn zeroed_words(len: usize) -> Result<Vec<u64>, FilterError> {
    let mut probe: Vec<u64> = Vec::new();
    probe
        .try_reserve_exact(len)
        .map_err(|_| FilterError::OutOfMemory {
            bytes: (len as u64).saturating_mul(8),
        })?;
    drop(probe);
    Ok(vec![0u64; len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_params() {
        assert_eq!(
            BloomFilter::new(FilterParams::new(0, 1, 0)).unwrap_err(),
            FilterError::InvalidM { m: 0 }
        );
        assert_eq!(
            BloomFilter::new(FilterParams::new(8, 0, 0)).unwrap_err(),
            FilterError::InvalidK { k: 0 }
        );
        assert_eq!(
            BloomFilter::new(FilterParams::new(8, MAX_K + 1, 0)).unwrap_err(),
            FilterError::InvalidK { k: MAX_K + 1 }
        );
        assert!(matches!(
            BloomFilter::new(FilterParams::new(MAX_M + 1, 1, 0)),
            Err(FilterError::InvalidM { .. })
        ));
    }

    #[test]
    fn edge_filters_work() {
        // m = 1, k at its maximum, the empty key.
        let mut f = BloomFilter::new(FilterParams::new(1, MAX_K, 0)).unwrap();
        assert!(f.is_empty());
        assert!(!f.contains(b""));
        assert_eq!(f.estimated_len(), 0.0);
        f.insert(b"");
        assert!(f.contains(b""));
        assert!(
            f.contains(b"anything"),
            "m = 1 with one key answers yes to all"
        );
        assert_eq!(f.count_ones(), 1);
        assert_eq!(f.estimated_len(), f64::INFINITY);
        assert_eq!(f.to_bytes(), vec![1u8]);
    }

    #[test]
    fn bytes_round_trip_and_padding_check() {
        let mut f = BloomFilter::new(FilterParams::new(77, 3, 5)).unwrap();
        for i in 0..20u32 {
            f.insert(&i.to_le_bytes());
        }
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), 10);
        let g = BloomFilter::from_bytes(*f.params(), f.len(), &bytes).unwrap();
        assert_eq!(f, g);
        let mut bad = bytes.clone();
        bad[9] |= 0x80; // bit 79 >= m = 77
        assert_eq!(
            BloomFilter::from_bytes(*f.params(), 0, &bad).unwrap_err(),
            FilterError::PaddingBitsSet { m: 77 }
        );
        assert!(matches!(
            BloomFilter::from_bytes(*f.params(), 0, &bytes[..9]),
            Err(FilterError::BitArrayLength {
                expected: 10,
                actual: 9,
                ..
            })
        ));
    }

    #[test]
    fn combining_refuses_different_params() {
        let mut a = BloomFilter::new(FilterParams::new(100, 3, 1)).unwrap();
        for other in [
            FilterParams::new(101, 3, 1),
            FilterParams::new(100, 4, 1),
            FilterParams::new(100, 3, 2),
        ] {
            let b = BloomFilter::new(other).unwrap();
            assert!(matches!(
                a.union_with(&b),
                Err(FilterError::ParamsMismatch { .. })
            ));
            assert!(matches!(
                a.intersect_with(&b),
                Err(FilterError::ParamsMismatch { .. })
            ));
        }
    }

    #[test]
    fn intersection_keeps_common_keys() {
        let p = FilterParams::new(4096, 4, 9);
        let mut a = BloomFilter::new(p).unwrap();
        let mut b = BloomFilter::new(p).unwrap();
        for i in 0..100u32 {
            a.insert(&i.to_le_bytes());
        }
        for i in 50..150u32 {
            b.insert(&i.to_le_bytes());
        }
        a.intersect_with(&b).unwrap();
        for i in 50..100u32 {
            assert!(a.contains(&i.to_le_bytes()));
        }
        assert_eq!(a.len(), 100);
    }

    #[test]
    fn swamidass_baldi_estimate_is_close() {
        let mut f = BloomFilter::new(FilterParams::new(100_000, 3, 1)).unwrap();
        for i in 0..10_000u32 {
            f.insert(&i.to_le_bytes());
        }
        let est = f.estimated_len();
        // The estimator's standard deviation here is about 0.6% of n
        // (sqrt(m(e^{kn/m} − 1 − kn/m))/k ≈ 63 keys); allow 5 sigma.
        assert!((est - 10_000.0).abs() < 315.0, "estimate {est}");
    }
}
