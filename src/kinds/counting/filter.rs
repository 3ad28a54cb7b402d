//! The in-memory counting filter: 4-bit counters packed sixteen to a
//! word. Not decoding code (frames are read by `payload`, under the
//! decoders' lints); its positions are below m by construction, which the
//! indexing here relies on, as `filter` does for the bit array.
#![allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::hash::HashScheme;
use crate::prelude::*;

internal! {
/// The saturating maximum of a counter.
pub const MAX_COUNT: u8 = 15;
}

/// A Bloom filter of 4-bit counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountingBloomFilter {
    params: FilterParams,
    n: u64,
    /// Sixteen 4-bit counters per word; counter i in word i/16 at bits 4·(i%16).
    counters: Vec<u64>,
}

impl CountingBloomFilter {
    /// An empty filter (m/2 bytes of counters), with hash scheme 1: the
    /// counting kind travels only with it (docs/FORMAT.md).
    ///
    /// # Errors
    /// Parameters out of range, [`FilterError::SchemeNotForKind`] for
    /// Squid's hashing, or the counters cannot be allocated.
    pub fn new(params: FilterParams) -> Result<Self, FilterError> {
        params.validate_for_kind("counting")?;
        Self::with_any_scheme(params)
    }

    /// [`Self::new`] for Squid's hashing too: the counts behind a
    /// [`Publisher`](crate::Publisher), whose frames are standard filters
    /// (which may use Squid's hashing), never counting frames. The
    /// counters take a key's positions from its [`KeyHash`](crate::KeyHash),
    /// which under BIP37's scheme holds only the first four of up to 50,
    /// and BIP158's scheme is the sparse kind's: both are refused.
    pub(crate) fn with_any_scheme(params: FilterParams) -> Result<Self, FilterError> {
        params.validate()?;
        if matches!(
            params.scheme,
            HashScheme::Bip37Murmur | HashScheme::Bip158SipHash
        ) {
            return Err(FilterError::SchemeNotForKind {
                kind: "counting",
                scheme: params.scheme.name(),
            });
        }
        let words = crate::filter::units_for(params.m, 16);
        let counters = crate::filter::zeroed_words(words)?;
        Ok(CountingBloomFilter {
            params,
            n: 0,
            counters,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &FilterParams {
        &self.params
    }

    /// Keys inserted minus keys removed.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// A filter from packed counters (crate-internal: the decoder checked
    /// that counters past m are 0).
    pub(crate) fn from_parts(params: FilterParams, n: u64, counters: Vec<u64>) -> Self {
        debug_assert_eq!(counters.len() as u64, params.m.div_ceil(16));
        CountingBloomFilter {
            params,
            n,
            counters,
        }
    }

    /// The packed counters: sixteen per word, counter i at bits 4·(i mod
    /// 16) of word ⌊i/16⌋ (as little-endian bytes: counter i in the low
    /// nibble of byte i/2 for even i, the high nibble for odd i).
    pub fn as_words(&self) -> &[u64] {
        &self.counters
    }

    /// The number of non-zero counters (the bit view's one bits).
    pub fn count_nonzero(&self) -> u64 {
        self.counters
            .iter()
            .map(|&w| {
                // A nibble is non-zero if any of its 4 bits is set.
                let any = w | (w >> 1) | (w >> 2) | (w >> 3);
                u64::from((any & 0x1111_1111_1111_1111).count_ones())
            })
            .sum()
    }

    /// How many counters hold each value 0..=15.
    pub fn histogram(&self) -> [u64; 16] {
        let mut h = [0u64; 16];
        for i in 0..self.params.m {
            h[usize::from(self.count(i))] += 1;
        }
        h
    }

    /// Counter `i` (0 for i >= m).
    pub fn count(&self, i: u64) -> u8 {
        if i >= self.params.m {
            return 0;
        }
        ((self.counters[(i / 16) as usize] >> (4 * (i % 16))) & 0xf) as u8
    }

    fn distinct_positions(&self, key: &[u8]) -> ([u64; crate::MAX_K as usize], usize) {
        let params = &self.params;
        self.distinct_positions_of(params.scheme.hash(key, params.seed))
    }

    fn distinct_positions_of(
        &self,
        h: crate::hash::KeyHash,
    ) -> ([u64; crate::MAX_K as usize], usize) {
        let mut pos = [0u64; crate::MAX_K as usize];
        let mut len = 0;
        let params = &self.params;
        for p in h.positions_for(params.scheme, params.m, params.k) {
            if !pos[..len].contains(&p) {
                pos[len] = p;
                len += 1;
            }
        }
        (pos, len)
    }

    fn add(&mut self, i: u64, delta: i8) {
        let c = self.count(i);
        if c == MAX_COUNT {
            return; // saturated: sticky
        }
        let new = (i16::from(c) + i16::from(delta)) as u64;
        let w = &mut self.counters[(i / 16) as usize];
        let shift = 4 * (i % 16);
        *w = (*w & !(0xf << shift)) | (new << shift);
    }

    /// Inserts a key by its hash (the scheme's
    /// [`hash`](crate::HashScheme::hash) with this filter's seed).
    pub fn insert_hash(&mut self, h: crate::hash::KeyHash) {
        let (pos, len) = self.distinct_positions_of(h);
        for &p in &pos[..len] {
            self.add(p, 1);
        }
        self.n = self.n.saturating_add(1);
    }

    /// Overrides the declared key count.
    pub fn set_len(&mut self, n: u64) {
        self.n = n;
    }

    /// Inserts a key.
    pub fn insert(&mut self, key: &[u8]) {
        let (pos, len) = self.distinct_positions(key);
        for &p in &pos[..len] {
            self.add(p, 1);
        }
        self.n = self.n.saturating_add(1);
    }

    /// Removes a key. Returns false, changing nothing, if the key cannot be
    /// present (one of its counters is 0). A key that was never inserted
    /// but tests present (a false positive) is removed all the same, which
    /// can make an inserted key that shares a counter read as absent: a
    /// false negative (module docs).
    pub fn remove(&mut self, key: &[u8]) -> bool {
        let (pos, len) = self.distinct_positions(key);
        if pos[..len].iter().any(|&p| self.count(p) == 0) {
            return false;
        }
        for &p in &pos[..len] {
            self.add(p, -1);
        }
        self.n = self.n.saturating_sub(1);
        true
    }

    /// True if the key may be present.
    pub fn contains(&self, key: &[u8]) -> bool {
        let p = &self.params;
        p.scheme
            .hash(key, p.seed)
            .positions_for(p.scheme, p.m, p.k)
            .all(|i| self.count(i) > 0)
    }

    /// Number of saturated counters.
    pub fn saturated(&self) -> u64 {
        (0..self.params.m)
            .filter(|&i| self.count(i) == MAX_COUNT)
            .count() as u64
    }

    /// The bit view: bit i is set when counter i is non-zero. Its key count
    /// is this filter's.
    pub fn to_bloom(&self) -> BloomFilter {
        let mut words = vec![0u64; self.params.word_len()];
        for (ci, &c) in self.counters.iter().enumerate() {
            // Nibble j of c is non-zero -> bit 16·ci + j.
            let mut nz = 0u64;
            for j in 0..16 {
                if (c >> (4 * j)) & 0xf != 0 {
                    nz |= 1 << j;
                }
            }
            let bit = ci * 16;
            words[bit / 64] |= nz << (bit % 64);
        }
        BloomFilter::from_words_unchecked(self.params, self.n, words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_round_trip() {
        let mut c = CountingBloomFilter::new(FilterParams::new(10_000, 4, 3)).unwrap();
        let empty = c.to_bloom();
        for i in 0..500u32 {
            c.insert(&i.to_le_bytes());
        }
        for i in 0..500u32 {
            assert!(c.contains(&i.to_le_bytes()));
        }
        // The bit view equals a plain filter of the same keys.
        let mut plain = BloomFilter::new(FilterParams::new(10_000, 4, 3)).unwrap();
        for i in 0..500u32 {
            plain.insert(&i.to_le_bytes());
        }
        assert_eq!(c.to_bloom().as_words(), plain.as_words());
        for i in 0..500u32 {
            assert!(c.remove(&i.to_le_bytes()));
        }
        assert_eq!(c.to_bloom().as_words(), empty.as_words());
        assert!(!c.remove(b"never inserted"));
        assert!(c.is_empty());
    }

    #[test]
    fn counters_saturate_and_stick() {
        let mut c = CountingBloomFilter::new(FilterParams::new(64, 1, 0)).unwrap();
        for _ in 0..20 {
            c.insert(b"same");
        }
        assert_eq!(c.saturated(), 1);
        for _ in 0..20 {
            assert!(c.remove(b"same"));
        }
        assert!(
            c.contains(b"same"),
            "a saturated counter keeps the key maybe-present"
        );
    }
}
