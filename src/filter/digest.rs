//! The content digest of a filter's bits, which deltas name as their base
//! and result and which a receiver keeps with the filter it holds, so that a
//! delta for another base is refused without reading the filter.

use super::{with_le_bytes, BloomFilter, FilterParams};
#[allow(unused_imports)]
use crate::prelude::*;
use crate::wire::varint;
use xxhash_rust::xxh3::Xxh3Default;

impl BloomFilter {
    /// The content digest (docs/FORMAT.md section 3, type 2): XXH3-64
    /// (seed 0) of the hash scheme id (1 byte), the varints seed, m and k,
    /// then the packed bit array (⌈m/8⌉ bytes). The key count n is
    /// metadata and not part of it. One pass over the array.
    pub fn digest(&self) -> u64 {
        let mut d = Digester::new(self.params());
        d.update(self.as_words());
        d.finish()
    }
}

/// The digest of a filter computed word chunk by word chunk, so a caller
/// that produces the words (applying a delta) hashes each chunk while it is
/// in cache, in the same pass.
pub(crate) struct Digester {
    h: Xxh3Default,
    /// Bytes of the packed array still to hash (the last word may hold
    /// bytes past ⌈m/8⌉, which are not hashed).
    left: usize,
}

impl Digester {
    /// Words per chunk that a caller producing the words feeds at a time
    /// (any size works).
    pub(crate) const CHUNK_WORDS: usize = 512;

    pub(crate) fn new(p: &FilterParams) -> Self {
        let mut h = Xxh3Default::new();
        let mut head = vec![p.scheme.id()];
        for v in [p.seed, p.m, u64::from(p.k)] {
            varint::put(&mut head, v);
        }
        h.update(&head);
        Digester {
            h,
            left: p.byte_len() as usize,
        }
    }

    pub(crate) fn update(&mut self, words: &[u64]) {
        // In place on a little-endian machine: a copy of each chunk into a
        // byte buffer took 1 ms of a 5 ms delta apply on the 17.5 MB filter.
        let len = words.len().saturating_mul(8).min(self.left);
        let (h, left) = (&mut self.h, &mut self.left);
        let _ = with_le_bytes(words, len, |b| {
            h.update(b);
            *left = left.saturating_sub(b.len());
            Ok::<(), core::convert::Infallible>(())
        });
    }

    pub(crate) fn finish(&self) -> u64 {
        self.h.digest()
    }
}
