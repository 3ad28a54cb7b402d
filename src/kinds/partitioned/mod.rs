//! The partitioned Bloom filter (kind 2; Kirsch–Mitzenmacher's partition
//! scheme, and the partitioned filters of the DBMS article): the m bits are
//! k disjoint sub-arrays of s = m/k bits, and a key sets one position in
//! each: hash i lands at i·s + ⌊g_i · s / 2^64⌋, with g_i the enhanced double
//! hash of docs/FORMAT.md section 1.
//!
//! Every key sets exactly k bits (no two of its positions collide), at the
//! price of a slightly higher false-positive rate than the standard filter
//! at the same m, n, k: (1 − (1 − 1/s)^n)^k against (1 − (1 − 1/m)^(kn))^k.
//! On the wire it is the standard bit array (raw or coded) under kind 2.
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
//! let choice = plan::for_kind(FilterKind::Partitioned, 10_000, Target::Fpr(0.01), &Constraints::default())?;
//! let filter = choice.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
//! assert_eq!(filter.kind(), FilterKind::Partitioned);
//! let frame = encode_any(&filter);
//! let received: AnyFilter = decode_as(&frame, &DecodeLimits::default())?;
//! assert_eq!(received, filter);
//! let mut publisher = Publisher::new(filter, PublisherOptions::default());
//! let mut subscriber = Subscriber::<AnyFilter>::default();
//! subscriber.receive(&publisher.publish().frame)?;
//! assert!(subscriber.filter().is_some_and(|f| f.contains(&7u32.to_le_bytes())));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;
// Each frame and delta function, for the crate's tests, tools and CLI;
// the API is the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{encode_partitioned, encode_partitioned_static, encode_partitioned_raw, decode_partitioned, encode_delta_partitioned, encode_delta_partitioned_as, apply_partitioned};
}

use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::hash::KeyHash;

/// A partitioned Bloom filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionedBloomFilter {
    bits: BloomFilter,
}

impl PartitionedBloomFilter {
    /// An empty filter; m must be a multiple of k.
    ///
    /// # Errors
    /// Parameters out of range, m not a multiple of k
    /// ([`FilterError::NotPartitionable`]), or no memory.
    ///
    /// # Examples
    /// ```
    /// use compressed_bloom::{kinds::partitioned::PartitionedBloomFilter, FilterParams};
    /// let mut f = PartitionedBloomFilter::new(FilterParams::new(3000, 3, 7))?;
    /// f.insert(b"apple");
    /// assert!(f.contains(b"apple"));
    /// assert_eq!(f.bits().count_ones(), 3); // one bit in each partition
    /// # Ok::<(), compressed_bloom::FilterError>(())
    /// ```
    pub fn new(params: FilterParams) -> Result<Self, FilterError> {
        check(&params)?;
        Ok(PartitionedBloomFilter {
            bits: BloomFilter::new(params)?,
        })
    }

    /// A partitioned filter over an existing bit array (as decoded).
    ///
    /// # Errors
    /// m not a multiple of k.
    pub fn from_bits(bits: BloomFilter) -> Result<Self, FilterError> {
        check(bits.params())?;
        Ok(PartitionedBloomFilter { bits })
    }

    /// The bit array (what travels on the wire).
    pub fn bits(&self) -> &BloomFilter {
        &self.bits
    }

    /// The parameters.
    pub fn params(&self) -> &FilterParams {
        self.bits.params()
    }

    /// Bits per partition, s = m/k.
    pub fn partition_bits(&self) -> u64 {
        let p = self.bits.params();
        // k >= 1 (validated).
        p.m.checked_div(u64::from(p.k)).unwrap_or(p.m)
    }

    /// Keys inserted (or declared).
    pub fn len(&self) -> u64 {
        self.bits.len()
    }

    /// Whether no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The k positions of a key, one per partition.
    pub fn positions(&self, key: &[u8]) -> impl Iterator<Item = u64> {
        let p = *self.bits.params();
        let s = self.partition_bits();
        KeyHash::new(key, p.seed)
            .positions(s, p.k)
            .zip(0u64..)
            // i < k and at < s, so i·s + at < m.
            .map(move |(at, i)| i.saturating_mul(s).saturating_add(at))
    }

    /// Adds a key.
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hash(KeyHash::new(key, self.bits.params().seed));
    }

    /// Adds a key by its hash ([`KeyHash::new`] with this filter's seed).
    pub fn insert_hash(&mut self, h: KeyHash) {
        let p = *self.bits.params();
        let s = self.partition_bits();
        for (at, i) in h.positions(s, p.k).zip(0u64..) {
            // i < k and at < s, so i·s + at < m.
            self.bits.set_bit(i.saturating_mul(s).saturating_add(at));
        }
        self.bits.set_len(self.bits.len().saturating_add(1));
    }

    /// True if the key may be in the set; false if it certainly is not.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.positions(key).all(|pos| self.bits.bit(pos))
    }

    /// The false-positive rate of n random keys: (1 − (1 − 1/s)^n)^k.
    #[cfg(feature = "std")]
    pub fn formula_fpr(params: &FilterParams, n: u64) -> f64 {
        let s = params.m.checked_div(u64::from(params.k)).unwrap_or(params.m) as f64;
        let fill = 1.0 - (n as f64 * (-1.0 / s).ln_1p()).exp();
        fill.powi(params.k as i32)
    }
}

fn check(p: &FilterParams) -> Result<(), FilterError> {
    p.validate_for_kind("partitioned")?;
    if p.m.checked_rem(u64::from(p.k)).is_none_or(|r| r != 0) {
        return Err(FilterError::NotPartitionable { m: p.m, k: p.k });
    }
    Ok(())
}
