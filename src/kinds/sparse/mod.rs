//! The sparse kind (kind 4; Mitzenmacher §III.A, end): for k = 1 or a very
//! large m/n, the receiver holds the sorted positions of the one bits, not
//! the m-bit array, and answers lookups from them. On the wire the
//! positions are Rice-coded gaps (docs/FORMAT.md section 8.4); in memory
//! they are an Elias–Fano list ([`EliasFano`]): about 2 + log2(m/w) bits per
//! one bit, whatever m is. A frame decodes straight into that form, so m =
//! 2^40 with 10^6 keys decodes in memory proportional to the keys.
//!
//! A sparse filter has the standard filter's hashing (section 1): its one
//! bits are exactly those of the standard filter with the same m, k, seed
//! and keys, so the two convert into each other and answer alike.
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
//! let choice = plan::for_kind(FilterKind::Sparse, 10_000, Target::Fpr(0.01), &Constraints::default())?;
//! let filter = choice.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
//! assert_eq!(filter.kind(), FilterKind::Sparse);
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
    pub use kind::{encode_sparse, decode_sparse, encode_delta_sparse, apply_sparse};
}
pub(crate) use kind::decode_positions;

use crate::prelude::*;
use crate::filter::{FilterError, FilterParams};
use crate::hash::KeyHash;
use crate::wire::varint;
use thiserror::Error;
use xxhash_rust::xxh3::Xxh3Default;

/// Zeros between select samples of the Elias–Fano upper bits.
const SAMPLE: u64 = 256;

internal! {
/// Largest Rice parameter (a gap is below m ≤ 2^56).
pub const MAX_RICE: u8 = 56;
}

/// Why a sparse payload was rejected. Offsets are in bits from the start of
/// the Rice-coded gaps, or in bytes from the start of the payload where
/// said.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SparseError {
    /// The position count is malformed (payload byte offset 0).
    #[error("bad varint for the position count: {reason}")]
    BadCount {
        /// What is wrong.
        reason: &'static str,
    },
    /// More positions than m, or than the payload's bits can hold (each
    /// gap takes at least one bit).
    #[error("{count} positions declared, at most {limit} fit")]
    TooManyPositions {
        /// Declared count.
        count: u64,
        /// The largest count possible.
        limit: u64,
    },
    /// A Rice parameter above 56.
    #[error("Rice parameter {r} is above {MAX_RICE}")]
    RiceParameter {
        /// The parameter byte.
        r: u8,
    },
    /// The gaps end before the declared count.
    #[error("gap {index} runs past the end of the payload (bit {bit})")]
    Truncated {
        /// Which gap.
        index: u64,
        /// Bit offset where input ran out.
        bit: u64,
    },
    /// A position at or past m.
    #[error("gap {index} puts a position at or past m = {m} (bit {bit})")]
    PositionPastEnd {
        /// Which gap.
        index: u64,
        /// m.
        m: u64,
        /// Bit offset of the gap.
        bit: u64,
    },
    /// Bits or bytes after the last gap: padding must be 0 and the payload
    /// must end in the byte holding the last gap's last bit.
    #[error("unexpected data after the last gap at bit {bit}")]
    TrailingData {
        /// Bit offset after the last gap.
        bit: u64,
    },
    /// An empty set has no parameter byte and no gaps.
    #[error("an empty position list has bytes after its count")]
    EmptyWithData,
    /// The list the count declares would hold more bytes than the caller
    /// allows ([`decode_payload_within`]); nothing was allocated.
    #[error("{count} positions take {bytes} bytes in memory, over the {limit} allowed")]
    ListTooLarge {
        /// Declared count.
        count: u64,
        /// Bytes the list would hold ([`EliasFano::bytes_for`]).
        bytes: u64,
        /// The caller's limit.
        limit: u64,
    },
}

internal! {
/// A static sorted set of distinct integers below `universe`, in the
/// Elias–Fano representation: each value's low `l` bits in a packed array,
/// its high part in unary in a bit vector, plus a select index over that
/// bit vector (one sample per 256 zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EliasFano {
    len: u64,
    universe: u64,
    l: u32,
    low: Vec<u64>,
    high: Vec<u64>,
    high_bits: u64,
    samples: Vec<u64>,
    /// How many values the list was made for, and the last one pushed.
    cap: u64,
    last: Option<u64>,
}
}

/// `count` bits of `words` from bit `at` (count ≤ 64).
fn get_bits(words: &[u64], at: u64, count: u32) -> u64 {
    if count == 0 {
        return 0;
    }
    let i = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let lo = words.get(i).copied().unwrap_or(0) >> shift;
    let hi = if shift != 0 && shift.saturating_add(count) > 64 {
        words.get(i.saturating_add(1)).copied().unwrap_or(0) << 64u32.saturating_sub(shift)
    } else {
        0
    };
    let mask = if count >= 64 {
        u64::MAX
    } else {
        (1u64 << count).wrapping_sub(1)
    };
    (lo | hi) & mask
}

/// ORs the low `count` bits of `v` (nothing above them) into `words` at
/// bit `at`, with no branch on whether they straddle two words (as
/// [`low_bits`] reads them).
fn put_bits(words: &mut [u64], at: u64, v: u64, count: u32) {
    if count == 0 {
        return;
    }
    let i = (at >> 6) as usize;
    let shift = (at & 63) as u32;
    if let Some(w) = words.get_mut(i) {
        *w |= v << shift;
    }
    if let Some(w) = words.get_mut(i.wrapping_add(1)) {
        // v's bits that did not fit: v >> (64 − shift), as two shifts so
        // that a shift of 0 moves nothing over.
        *w |= (v >> 1) >> (63u32.wrapping_sub(shift));
    }
}

/// The shape of an Elias–Fano list of `len` values below `universe`: the
/// low-bit width l, the upper bits' length, and the words of the low
/// array, the upper array and the select samples.
fn shape(len: u64, universe: u64) -> (u32, u64, [u64; 3]) {
    // l = ⌊log2(universe / len)⌋, so universe >> l < 2·len and the upper
    // bits take at most 3·len + 1 bits.
    let l = if len == 0 || universe <= len {
        0
    } else {
        universe.checked_div(len).map_or(0, u64::ilog2)
    };
    let high_bits = if len == 0 {
        0
    } else {
        len.saturating_add(universe >> l).saturating_add(1)
    };
    let low_words = len.saturating_mul(u64::from(l)).div_ceil(64);
    // One sample per SAMPLE zeros of the upper bits (high_bits − len).
    let samples = high_bits.saturating_sub(len).div_ceil(SAMPLE);
    (l, high_bits, [low_words, high_bits.div_ceil(64), samples])
}

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
impl EliasFano {
    /// Heap bytes a finished list of `len` values below `universe` holds
    /// (its low bits, upper bits and select samples, in 8-byte words),
    /// computed without allocating: what [`EliasFano::heap_bytes`] reports
    /// once the list is built, and what a decoder checks against the
    /// receiver's memory limit before it allocates a list. About
    /// len · (2 + log2(universe/len)) / 8 + len / 128.
    pub fn bytes_for(len: u64, universe: u64) -> u64 {
        let (_, _, [low, high, samples]) = shape(len, universe);
        low.saturating_add(high)
            .saturating_add(samples)
            .saturating_mul(8)
    }

    /// An empty list ready to take `len` increasing values below
    /// `universe` with [`EliasFano::push`]. Memory:
    /// [`EliasFano::bytes_for`], about len · (2 + log2(universe/len)) bits.
    ///
    /// # Errors
    /// [`FilterError::OutOfMemory`] if the arrays cannot be reserved.
    pub fn with_len(len: u64, universe: u64) -> Result<Self, FilterError> {
        let (l, high_bits, [low_words, _, _]) = shape(len, universe);
        let alloc = |words: u64| -> Result<Vec<u64>, FilterError> {
            let n = usize::try_from(words).map_err(|_| FilterError::OutOfMemory {
                bytes: words.saturating_mul(8),
            })?;
            let mut v = Vec::new();
            v.try_reserve_exact(n)
                .map_err(|_| FilterError::OutOfMemory {
                    bytes: words.saturating_mul(8),
                })?;
            v.resize(n, 0);
            Ok(v)
        };
        Ok(EliasFano {
            len: 0,
            universe,
            l,
            low: alloc(low_words)?,
            high: alloc(high_bits.div_ceil(64))?,
            high_bits,
            samples: Vec::new(),
            cap: len,
            last: None,
        })
    }

    /// Appends `v`, which must be above the last value and below the
    /// universe, and the list must not be full; returns false (and changes
    /// nothing) otherwise.
    pub fn push(&mut self, v: u64) -> bool {
        // Increasing values below the universe keep i + (v >> l) below
        // high_bits; checked anyway, so no push can write out of place.
        let capacity_left = self.len < self.cap
            && self
                .len
                .checked_add(v >> self.l)
                .is_some_and(|at| at < self.high_bits);
        if v >= self.universe || self.last.is_some_and(|last| v <= last) || !capacity_left {
            return false;
        }
        let i = self.len;
        put_bits(
            &mut self.low,
            i.saturating_mul(u64::from(self.l)),
            v & low_mask(self.l),
            self.l,
        );
        // Checked above: i + (v >> l) < high_bits.
        let at = i.saturating_add(v >> self.l);
        if let Some(w) = self.high.get_mut((at >> 6) as usize) {
            *w |= 1 << (at & 63);
        }
        self.len = i.saturating_add(1);
        self.last = Some(v);
        true
    }

    /// Builds the select index once every value is in (its exact size:
    /// one sample per 256 zeros of the upper bits, reserved up front so
    /// that the list holds what [`EliasFano::bytes_for`] says).
    pub fn finish(&mut self) {
        self.samples.clear();
        let (_, _, [_, _, samples]) = shape(self.cap, self.universe);
        let _ = self
            .samples
            .try_reserve_exact(usize::try_from(samples).unwrap_or(0));
        let mut zeros = 0u64;
        for (wi, &w) in self.high.iter().enumerate() {
            let base = (wi as u64).saturating_mul(64);
            let bits_here = self.high_bits.saturating_sub(base).min(64) as u32;
            let mut free = !w & low_mask(bits_here);
            let n = u64::from(free.count_ones());
            // A word holds 64 bits and samples are SAMPLE ≥ 64 zeros
            // apart: at most one sample falls in it, the `need`-th zero.
            let need = SAMPLE.saturating_sub(zeros % SAMPLE) % SAMPLE;
            if need < n {
                for _ in 0..need {
                    free &= free.wrapping_sub(1);
                }
                self.samples
                    .push(base.saturating_add(u64::from(free.trailing_zeros())));
            }
            zeros = zeros.saturating_add(n);
        }
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.low
            .capacity()
            .saturating_add(self.high.capacity())
            .saturating_add(self.samples.capacity())
            .saturating_mul(8)
    }

    /// Position of the `z`-th zero (from 0) of the upper bits, if any.
    fn select0(&self, z: u64) -> Option<u64> {
        let start = *self.samples.get((z / SAMPLE) as usize)?;
        let mut left = z % SAMPLE;
        let mut wi = (start / 64) as usize;
        let mut skip = (start % 64) as u32;
        loop {
            let w = *self.high.get(wi)?;
            let base = (wi as u64).saturating_mul(64);
            let bits_here = self.high_bits.saturating_sub(base).min(64) as u32;
            let mut free = !w & low_mask(bits_here) & !low_mask(skip);
            let n = u64::from(free.count_ones());
            if left < n {
                for _ in 0..left {
                    free &= free.wrapping_sub(1);
                }
                return Some(base.saturating_add(u64::from(free.trailing_zeros())));
            }
            left = left.saturating_sub(n);
            skip = 0;
            wi = wi.saturating_add(1);
        }
    }

    /// Whether `v` is in the list.
    pub fn contains(&self, v: u64) -> bool {
        if v >= self.universe || self.len == 0 {
            return false;
        }
        let h = v >> self.l;
        let lo = v & low_mask(self.l);
        // Values with high part h sit between zero h − 1 and zero h.
        let mut at = if h == 0 {
            0
        } else {
            match self.select0(h.saturating_sub(1)) {
                Some(z) => z.saturating_add(1),
                None => return false,
            }
        };
        while at < self.high_bits && get_bits(&self.high, at, 1) == 1 {
            // A 1 at `at` after h zeros is value number at − h.
            let i = at.saturating_sub(h);
            let low = get_bits(&self.low, i.saturating_mul(u64::from(self.l)), self.l);
            if low == lo {
                return true;
            }
            if low > lo {
                return false;
            }
            at = at.saturating_add(1);
        }
        false
    }

    /// The values in increasing order: a word of the upper bits at a time,
    /// a trailing-zeros count per value (a few ns each), since a full pass
    /// over 10^7 values is what a subscriber's delta costs.
    pub fn iter(&self) -> Values<'_> {
        Values {
            list: self,
            word: self.high.first().copied().unwrap_or(0),
            wi: 0,
            i: 0,
        }
    }

    /// How many of `sorted` (increasing) are in the list: a membership
    /// query each when they are few against the list, else one merge.
    pub fn count_common(&self, sorted: &EliasFano) -> u64 {
        if sorted.len().saturating_mul(64) < self.len {
            sorted.iter().filter(|&v| self.contains(v)).count() as u64
        } else {
            let total = self.len.saturating_add(sorted.len());
            let odd = symmetric_difference(self.iter(), sorted.iter()).count() as u64;
            total.saturating_sub(odd) / 2
        }
    }
}

internal! {
/// The values of an [`EliasFano`] list, in increasing order.
#[derive(Clone, Debug)]
pub struct Values<'a> {
    list: &'a EliasFano,
    /// The ones of the current upper-bits word not yet returned.
    word: u64,
    wi: usize,
    /// Index of the next value.
    i: u64,
}
}

impl Iterator for Values<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let list = self.list;
        if self.i >= list.len {
            return None;
        }
        while self.word == 0 {
            self.wi = self.wi.saturating_add(1);
            self.word = *list.high.get(self.wi)?;
        }
        let at = ((self.wi as u64) << 6) | u64::from(self.word.trailing_zeros());
        self.word &= self.word.wrapping_sub(1);
        // The i-th one at `at` follows at − i zeros: the high part.
        let high = at.wrapping_sub(self.i);
        let l = list.l;
        let low = low_bits(&list.low, self.i.wrapping_mul(u64::from(l)), l);
        self.i = self.i.wrapping_add(1);
        Some((high << l) | low)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.list.len.saturating_sub(self.i)).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// `count` (< 64) bits of `words` from bit `at`, without a branch on
/// whether they straddle two words: the sequential reads of a pass over a
/// list cross a word boundary at a rate no predictor learns.
fn low_bits(words: &[u64], at: u64, count: u32) -> u64 {
    let i = (at >> 6) as usize;
    let w0 = words.get(i).copied().unwrap_or(0);
    let w1 = words.get(i.wrapping_add(1)).copied().unwrap_or(0);
    let both = u128::from(w0) | (u128::from(w1) << 64);
    ((both >> (at & 63)) as u64) & low_mask(count)
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits).wrapping_sub(1)
    }
}

/// A sparse filter: the parameters, the declared key count, and the sorted
/// positions of its one bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseFilter {
    params: FilterParams,
    n: u64,
    set: EliasFano,
}

impl SparseFilter {
    /// The filter of `keys`: their k positions each (section 1 hashing),
    /// sorted and deduplicated. Memory: 8 bytes per position while
    /// building, then the Elias–Fano list; never m bits.
    ///
    /// # Errors
    /// Parameters out of range, Squid's hashing
    /// ([`FilterError::SchemeNotForKind`]: the sparse kind travels with
    /// hash scheme 1 only), or no memory.
    ///
    /// # Examples
    /// ```
    /// use compressed_bloom::{kinds::sparse::SparseFilter, FilterParams};
    /// // 2^40 bits would be 128 GiB as an array; as positions it is tiny.
    /// let keys = (0..1000u32).map(|i| i.to_le_bytes());
    /// let f = SparseFilter::from_keys(FilterParams::new(1 << 40, 1, 3), keys)?;
    /// assert!(f.contains(&7u32.to_le_bytes()));
    /// assert!(f.heap_bytes() < 8_000);
    /// # Ok::<(), compressed_bloom::FilterError>(())
    /// ```
    pub fn from_keys<K: AsRef<[u8]>>(
        params: FilterParams,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<Self, FilterError> {
        params.validate_for_kind("sparse")?;
        let mut n = 0u64;
        let mut positions = Vec::new();
        for key in keys {
            let h = params.scheme.hash(key.as_ref(), params.seed);
            positions.extend(h.positions_for(params.scheme, params.m, params.k));
            n = n.saturating_add(1);
        }
        Self::from_positions(params, n, positions)
    }

    /// The filter of keys given by their hashes (the scheme's
    /// [`HashScheme::hash`](crate::HashScheme::hash) with the filter's seed), as [`SparseFilter::from_keys`].
    ///
    /// # Errors
    /// Parameters out of range, Squid's hashing
    /// ([`FilterError::SchemeNotForKind`]: the sparse kind travels with
    /// hash scheme 1 only), or no memory.
    pub fn from_hashes(
        params: FilterParams,
        hashes: impl IntoIterator<Item = KeyHash>,
    ) -> Result<Self, FilterError> {
        params.validate_for_kind("sparse")?;
        let mut n = 0u64;
        let mut positions = Vec::new();
        for h in hashes {
            positions.extend(h.positions_for(params.scheme, params.m, params.k));
            n = n.saturating_add(1);
        }
        Self::from_positions(params, n, positions)
    }

    /// The filter whose one bits are `positions` (any order, duplicates
    /// allowed; each must be below m), declaring `n` keys.
    ///
    /// # Errors
    /// Parameters out of range, Squid's hashing
    /// ([`FilterError::SchemeNotForKind`]), a position at or past m
    /// ([`FilterError::PaddingBitsSet`]), or no memory.
    pub fn from_positions(
        params: FilterParams,
        n: u64,
        mut positions: Vec<u64>,
    ) -> Result<Self, FilterError> {
        params.validate_for_kind("sparse")?;
        positions.sort_unstable();
        positions.dedup();
        let mut set = EliasFano::with_len(positions.len() as u64, params.m)?;
        for p in positions {
            if !set.push(p) {
                return Err(FilterError::PaddingBitsSet { m: params.m });
            }
        }
        set.finish();
        Ok(SparseFilter { params, n, set })
    }

    /// The sparse form of a standard filter (same parameters, same bits).
    ///
    /// # Errors
    /// [`FilterError::SchemeNotForKind`] for a filter with Squid's hashing,
    /// or no memory.
    pub fn from_bloom(f: &crate::BloomFilter) -> Result<Self, FilterError> {
        f.params().validate_for_kind("sparse")?;
        let mut set = EliasFano::with_len(f.count_ones(), f.m())?;
        for p in f.ones() {
            set.push(p);
        }
        set.finish();
        Ok(SparseFilter {
            params: *f.params(),
            n: f.len(),
            set,
        })
    }

    /// The standard filter with the same bits (allocates m bits).
    ///
    /// # Errors
    /// No memory for m bits.
    pub fn to_bloom(&self) -> Result<crate::BloomFilter, FilterError> {
        let mut f = crate::BloomFilter::new(self.params)?;
        for p in self.set.iter() {
            f.set_bit(p);
        }
        f.set_len(self.n);
        Ok(f)
    }

    pub(crate) fn from_parts(params: FilterParams, n: u64, set: EliasFano) -> Self {
        SparseFilter { params, n, set }
    }

    /// The parameters.
    pub fn params(&self) -> &FilterParams {
        &self.params
    }

    /// Keys inserted (or declared).
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no key was declared.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of one bits.
    pub fn count_ones(&self) -> u64 {
        self.set.len()
    }

    /// Heap bytes held (the Elias–Fano list).
    pub fn heap_bytes(&self) -> usize {
        self.set.heap_bytes()
    }

    /// The positions of the one bits, in increasing order.
    pub fn positions(&self) -> impl Iterator<Item = u64> + '_ {
        self.set.iter()
    }

    /// Whether position `p` is one of the list's.
    pub(crate) fn set_contains(&self, p: u64) -> bool {
        self.set.contains(p)
    }

    /// True if the key may be in the set; false if it certainly is not.
    pub fn contains(&self, key: &[u8]) -> bool {
        let p = &self.params;
        p.scheme
            .hash(key, p.seed)
            .positions_for(p.scheme, p.m, p.k)
            .all(|i| self.set.contains(i))
    }
}

/// Writes bits least significant first into bytes.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter<'_> {
    /// Appends the low `count` (≤ 56) bits of `v`.
    #[allow(clippy::arithmetic_side_effects)] // n < 8 on entry: n + count < 64
    fn put(&mut self, v: u64, count: u32) {
        self.acc |= (v & low_mask(count)) << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn finish(self) {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
    }
}

internal! {
/// The content digest of a sparse filter (docs/FORMAT.md section 8.4):
/// XXH3-64 (seed 0) of the scheme id (1 byte), the varints seed, m and k,
/// the kind byte 4, the varint w, then each position as a u64 LE. Computed
/// from the positions, in time and memory independent of m.
pub fn digest(f: &SparseFilter) -> u64 {
    let mut d = Digester::new(f.params(), f.count_ones());
    f.positions().for_each(|p| d.push(p));
    d.finish()
}
}

/// The sparse digest fed one position at a time, so that a pass that
/// builds a list can digest it on the way.
struct Digester {
    h: Xxh3Default,
    buf: [u8; 8 * 512],
    n: usize,
}

impl Digester {
    fn new(p: &FilterParams, count: u64) -> Self {
        let mut head = vec![p.scheme.id()];
        for v in [p.seed, p.m, u64::from(p.k)] {
            varint::put(&mut head, v);
        }
        head.push(4);
        varint::put(&mut head, count);
        let mut h = Xxh3Default::new();
        h.update(&head);
        Digester {
            h,
            buf: [0; 8 * 512],
            n: 0,
        }
    }

    fn push(&mut self, pos: u64) {
        if let Some(slot) = self.buf.get_mut(self.n..self.n.saturating_add(8)) {
            slot.copy_from_slice(&pos.to_le_bytes());
        }
        self.n = self.n.saturating_add(8);
        if self.n == self.buf.len() {
            self.h.update(&self.buf);
            self.n = 0;
        }
    }

    fn finish(mut self) -> u64 {
        self.h.update(self.buf.get(..self.n).unwrap_or_default());
        self.h.digest()
    }
}

internal! {
/// The symmetric difference of two sorted lists (positions in exactly one
/// of them), in increasing order.
pub fn symmetric_difference<'a>(
    a: impl Iterator<Item = u64> + 'a,
    b: impl Iterator<Item = u64> + 'a,
) -> impl Iterator<Item = u64> + 'a {
    let mut a = a.peekable();
    let mut b = b.peekable();
    core::iter::from_fn(move || loop {
        match (a.peek().copied(), b.peek().copied()) {
            (Some(x), Some(y)) if x == y => {
                a.next();
                b.next();
            }
            (Some(x), Some(y)) if x < y => return a.next(),
            (Some(_), Some(_)) => return b.next(),
            (Some(_), None) => return a.next(),
            (None, Some(_)) => return b.next(),
            (None, None) => return None,
        }
    })
}
}

internal! {
/// The filter `base` with the positions of `changes` flipped, declaring
/// `n` keys, and its digest ([`digest`]), given `count`, the result's
/// size ([`result_len`], which the caller needs first to check the
/// memory). One pass over `base`: a merge builds the result's list and
/// digests it on the way. Memory: the result's Elias–Fano list.
///
/// # Errors
/// No memory; a change at or past m cannot occur (the changes list was
/// decoded for the same m).
pub fn apply_changes(
    base: &SparseFilter,
    changes: &EliasFano,
    n: u64,
    count: u64,
) -> Result<(SparseFilter, u64), FilterError> {
    let mut set = EliasFano::with_len(count, base.params.m)?;
    let mut digest = Digester::new(&base.params, count);
    let mut whole = true;
    let mut emit = |p: u64| {
        whole &= set.push(p);
        digest.push(p);
    };
    // Positions are below m ≤ 2^56: u64::MAX marks the changes' end.
    let mut changes = changes.iter();
    let mut next = changes.next().unwrap_or(u64::MAX);
    for p in base.positions() {
        while next < p {
            emit(next);
            next = changes.next().unwrap_or(u64::MAX);
        }
        if next == p {
            next = changes.next().unwrap_or(u64::MAX);
        } else {
            emit(p);
        }
    }
    while next != u64::MAX {
        emit(next);
        next = changes.next().unwrap_or(u64::MAX);
    }
    let whole = whole && set.len() == count;
    set.finish();
    let result = SparseFilter {
        params: base.params,
        n,
        set,
    };
    // The merge cannot emit a value the list refuses, nor other than
    // `count` values; were it to, the digest is the list's own, so the
    // caller's digest check refuses the result.
    let got = if whole {
        digest.finish()
    } else {
        self::digest(&result)
    };
    Ok((result, got))
}
}

internal! {
/// How many positions `base` with `changes` flipped holds: those of each
/// list less twice those in both (a membership query per change when the
/// changes are few, as a delta's are).
pub fn result_len(base: &SparseFilter, changes: &EliasFano) -> u64 {
    let common = base.set.count_common(changes);
    base.count_ones()
        .saturating_add(changes.len())
        .saturating_sub(common.saturating_mul(2))
}
}

internal! {
/// Appends the sparse payload of sorted distinct `positions` below m:
/// varint count, then (if any) the Rice parameter byte and the Rice-coded
/// gaps, least significant bit first. Picks the parameter that makes the
/// payload smallest (the smallest such on ties).
///
/// The encoder codes the caller's own positions (sorted, distinct, below
/// m, as [`SparseFilter`] keeps them), so its arithmetic cannot overflow:
/// gaps are below m ≤ 2^56.
#[allow(clippy::arithmetic_side_effects)]
pub fn encode_payload(positions: &[u64], m: u64, out: &mut Vec<u8>) {
    let w = positions.len() as u64;
    varint::put(out, w);
    if w == 0 {
        return;
    }
    let gaps = || {
        positions.iter().scan(None::<u64>, |prev, &p| {
            let g = match *prev {
                None => p,
                Some(q) => p - q - 1,
            };
            *prev = Some(p);
            Some(g)
        })
    };
    // The mean gap is about (m − w)/w; the best Rice parameter is within a
    // few of its logarithm.
    let mean = m.saturating_sub(w) / w;
    let center = if mean == 0 { 0 } else { mean.ilog2() };
    let (lo, hi) = (
        center.saturating_sub(3),
        (center + 3).min(u32::from(MAX_RICE)),
    );
    let cost = |r: u32| -> u64 { gaps().map(|g| (g >> r) + 1 + u64::from(r)).sum() };
    let r = (lo..=hi).min_by_key(|&r| (cost(r), r)).unwrap_or(0);
    out.push(r as u8);
    let mut bits = BitWriter { out, acc: 0, n: 0 };
    for g in gaps() {
        let mut q = g >> r;
        while q > 0 {
            let ones = q.min(56) as u32;
            bits.put(u64::MAX, ones);
            q -= u64::from(ones);
        }
        bits.put(0, 1);
        bits.put(g, r);
    }
    bits.finish();
}
}

/// Reads bits least significant first from a byte slice.
struct Bits<'a> {
    data: &'a [u8],
    at: u64,
    /// Reads so far: each single bit, each window of up to 64, and each
    /// whole byte of ones, an O(1) step apiece.
    reads: u64,
}

impl Bits<'_> {
    fn bit(&mut self, at: u64) -> Option<bool> {
        self.reads = self.reads.saturating_add(1);
        let byte = self.data.get((at / 8) as usize)?;
        Some(byte >> (at % 8) & 1 == 1)
    }

    /// The next bits from `at`, least significant first: a word and how
    /// many of its bits are in the data (57 to 64 away from the end).
    fn window(&mut self) -> (u64, u32) {
        self.reads = self.reads.saturating_add(1);
        let byte = usize::try_from(self.at / 8).unwrap_or(usize::MAX);
        let shift = (self.at % 8) as u32;
        let rest = self.data.get(byte..).unwrap_or_default();
        let mut buf = [0u8; 8];
        for (b, &r) in buf.iter_mut().zip(rest) {
            *b = r;
        }
        let take = rest.len().min(8) as u32;
        let valid = take.saturating_mul(8).saturating_sub(shift);
        (u64::from_le_bytes(buf) >> shift, valid)
    }

    /// A unary quotient: the 1s before the next 0 (at most `max`).
    fn unary(&mut self, max: u64) -> Option<u64> {
        // A word at a time when the 0 is in it: what the loop below does
        // one bit at a time (the sparse decoder spent nine tenths of a
        // 10^7-position decode reading bits singly).
        let (word, valid) = self.window();
        let q = (!word).trailing_zeros();
        if q < valid && u64::from(q) <= max {
            self.at = self.at.saturating_add(u64::from(q) + 1);
            return Some(u64::from(q));
        }
        let mut q = 0u64;
        loop {
            // Whole bytes of ones at a time where aligned.
            if self.at.is_multiple_of(8) {
                while self.data.get((self.at / 8) as usize) == Some(&0xFF) && q < max {
                    self.reads = self.reads.saturating_add(1);
                    q = q.saturating_add(8);
                    self.at = self.at.saturating_add(8);
                }
            }
            let b = self.bit(self.at)?;
            self.at = self.at.saturating_add(1);
            if !b {
                return Some(q);
            }
            q = q.saturating_add(1);
            if q > max {
                return Some(q);
            }
        }
    }

    fn bits(&mut self, count: u32) -> Option<u64> {
        let (word, valid) = self.window();
        if count <= valid && count < 64 {
            self.at = self.at.saturating_add(u64::from(count));
            return Some(word & low_mask(count));
        }
        let mut v = 0u64;
        for i in 0..count {
            if self.bit(self.at)? {
                v |= 1u64 << i;
            }
            self.at = self.at.saturating_add(1);
        }
        Some(v)
    }
}

internal! {
/// Decodes a sparse payload for an m-bit filter into an Elias–Fano list.
/// Allocates only after checking that the declared count fits both m and
/// the payload's bits; runs in time linear in the payload.
///
/// # Errors
/// A [`SparseError`] saying what and where.
pub fn decode_payload(payload: &[u8], m: u64) -> Result<EliasFano, SparseError> {
    decode_payload_work(payload, m).map(|(set, _)| set)
}
}

internal! {
/// [`decode_payload`] for a receiver that allows the list at most
/// `max_bytes` of memory: once the count is read and found possible
/// (docs/FORMAT.md section 8.4, step 3), a list whose
/// [`EliasFano::bytes_for`] is above `max_bytes` is refused as
/// [`SparseError::ListTooLarge`] before anything is allocated.
///
/// # Errors
/// As [`decode_payload`], and [`SparseError::ListTooLarge`].
pub fn decode_payload_within(
    payload: &[u8],
    m: u64,
    max_bytes: u64,
) -> Result<EliasFano, SparseError> {
    decode_payload_bounded(payload, m, max_bytes).map(|(set, _)| set)
}
}

internal! {
/// [`decode_payload`], also returning the decoder's work: its reads of the
/// gap bits (single bits, 64-bit windows and whole bytes of ones). Each
/// position costs at most two windows, and every other read advances at
/// least one bit, so the work is at most 2·w + 8·B + 8 for B bytes of gaps
/// and w ≤ 8·B positions: 24 reads per byte; the hostile tests hold it
/// there.
///
/// # Errors
/// As [`decode_payload`].
pub fn decode_payload_work(payload: &[u8], m: u64) -> Result<(EliasFano, u64), SparseError> {
    decode_payload_bounded(payload, m, u64::MAX)
}
}

fn decode_payload_bounded(
    payload: &[u8],
    m: u64,
    max_bytes: u64,
) -> Result<(EliasFano, u64), SparseError> {
    let (w, used) = varint::get(payload).map_err(|reason| SparseError::BadCount { reason })?;
    let rest = payload.get(used..).unwrap_or_default();
    if w == 0 {
        if !rest.is_empty() {
            return Err(SparseError::EmptyWithData);
        }
        return EliasFano::with_len(0, m)
            .map(|set| (set, 0))
            .map_err(|_| SparseError::TooManyPositions { count: 0, limit: 0 });
    }
    let Some((&r, gaps)) = rest.split_first() else {
        return Err(SparseError::Truncated { index: 0, bit: 0 });
    };
    if r > MAX_RICE {
        return Err(SparseError::RiceParameter { r });
    }
    // Every gap takes at least one bit (its unary terminator).
    let limit = m.min((gaps.len() as u64).saturating_mul(8));
    if w > limit {
        return Err(SparseError::TooManyPositions { count: w, limit });
    }
    let bytes = EliasFano::bytes_for(w, m);
    if bytes > max_bytes {
        return Err(SparseError::ListTooLarge {
            count: w,
            bytes,
            limit: max_bytes,
        });
    }
    let mut set = EliasFano::with_len(w, m).map_err(|_| SparseError::TooManyPositions {
        count: w,
        limit,
    })?;
    let mut bits = Bits {
        data: gaps,
        at: 0,
        reads: 0,
    };
    let mut next = 0u64; // the smallest position the next gap can give
    let r32 = u32::from(r);
    for index in 0..w {
        let start = bits.at;
        let past = SparseError::PositionPastEnd {
            index,
            m,
            bit: start,
        };
        // A gap g puts the position at next + g < m: q = g >> r ≤ (m − 1 − next) >> r.
        let room = m.saturating_sub(1).saturating_sub(next);
        let q = bits
            .unary(room >> r32)
            .ok_or(SparseError::Truncated { index, bit: bits.at })?;
        if q > room >> r32 {
            return Err(past);
        }
        let low = bits
            .bits(r32)
            .ok_or(SparseError::Truncated { index, bit: bits.at })?;
        let g = (q << r32) | low;
        if g > room || next >= m {
            return Err(past);
        }
        let p = next.saturating_add(g);
        if !set.push(p) {
            return Err(past);
        }
        next = p.saturating_add(1);
    }
    // The gaps end in the last byte; its remaining bits are 0.
    let end = bits.at;
    if end.div_ceil(8) != gaps.len() as u64 {
        return Err(SparseError::TrailingData { bit: end });
    }
    let mut pad = end;
    while !pad.is_multiple_of(8) {
        if bits.bit(pad) == Some(true) {
            return Err(SparseError::TrailingData { bit: end });
        }
        pad = pad.saturating_add(1);
    }
    set.finish();
    Ok((set, bits.reads))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(s: &mut u64) -> u64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *s >> 11
    }

    #[test]
    fn elias_fano_membership_matches_a_sorted_vec() {
        let mut s = 5u64;
        for (universe, count) in [(1u64, 1u64), (64, 64), (1000, 10), (1 << 20, 5000), (1 << 40, 300)] {
            let mut v: Vec<u64> = (0..count).map(|_| lcg(&mut s) % universe).collect();
            v.sort_unstable();
            v.dedup();
            let mut ef = EliasFano::with_len(v.len() as u64, universe).unwrap();
            for &x in &v {
                assert!(ef.push(x));
            }
            ef.finish();
            assert_eq!(ef.iter().collect::<Vec<_>>(), v);
            for &x in &v {
                assert!(ef.contains(x), "{x} in {universe}");
            }
            for _ in 0..2000 {
                let x = lcg(&mut s) % universe;
                assert_eq!(ef.contains(x), v.binary_search(&x).is_ok(), "{x}");
            }
            assert!(!ef.contains(universe));
        }
    }

    #[test]
    fn apply_changes_matches_a_model_and_its_digest() {
        // The one-pass apply (a merge into a register-buffered writer,
        // digested on the way) against the symmetric difference of two
        // sorted vectors, across low-bit widths from 0 (a dense list) to
        // 34, changes few or many (the merge-counting path of
        // `count_common`), none, all the base, and past its last value.
        let mut s = 17u64;
        let cases: [(u64, u64, u64); 8] = [
            (64, 64, 5),
            (100, 80, 60),
            (1 << 12, 300, 0),
            (1 << 20, 5000, 40),
            (1 << 20, 5000, 4000),
            (1 << 40, 3000, 100),
            (1 << 50, 70, 70),
            (1000, 0, 30),
        ];
        for (m, count, flips) in cases {
            let params = FilterParams::new(m, 1, 3);
            let mut base: Vec<u64> = (0..count).map(|_| lcg(&mut s) % m).collect();
            base.sort_unstable();
            base.dedup();
            let mut changes: Vec<u64> = (0..flips).map(|_| lcg(&mut s) % m).collect();
            changes.sort_unstable();
            changes.dedup();
            let model: Vec<u64> =
                symmetric_difference(base.iter().copied(), changes.iter().copied()).collect();
            let held = SparseFilter::from_positions(params, 1, base.clone()).unwrap();
            let list = SparseFilter::from_positions(params, 1, changes.clone()).unwrap();
            let count = result_len(&held, &list.set);
            assert_eq!(count, model.len() as u64, "m {m}");
            let (got, d) = apply_changes(&held, &list.set, 1, count).unwrap();
            assert_eq!(got.positions().collect::<Vec<_>>(), model, "m {m}");
            let want = SparseFilter::from_positions(params, 1, model).unwrap();
            assert_eq!(got, want, "m {m}");
            assert_eq!(d, digest(&want), "m {m}");
            // Applying the same changes again gives the base back.
            let (back, d2) = apply_changes(&got, &list.set, 1, result_len(&got, &list.set)).unwrap();
            assert_eq!(back, held, "m {m}");
            assert_eq!(d2, digest(&held), "m {m}");
        }
        // Every base position flipped: the result is empty.
        let params = FilterParams::new(1 << 30, 1, 3);
        let all: Vec<u64> = (0..500).map(|i| i * 1000 + 7).collect();
        let held = SparseFilter::from_positions(params, 1, all.clone()).unwrap();
        let (empty, d) = apply_changes(&held, &held.set, 0, 0).unwrap();
        assert_eq!(empty.count_ones(), 0);
        assert_eq!(d, digest(&empty));
    }

    #[test]
    fn a_wrong_count_yields_a_digest_that_refuses() {
        // A count below the merge's output: the list refuses the extra
        // values, and the digest returned is the list's own, not the one
        // of the values offered.
        let params = FilterParams::new(1 << 20, 1, 3);
        let held = SparseFilter::from_positions(params, 1, vec![1, 5, 9]).unwrap();
        let changes = SparseFilter::from_positions(params, 1, vec![7]).unwrap();
        let (got, d) = apply_changes(&held, &changes.set, 1, 3).unwrap();
        assert_eq!(d, digest(&got));
        let full = SparseFilter::from_positions(params, 1, vec![1, 5, 7, 9]).unwrap();
        assert_ne!(d, digest(&full));
    }

    #[test]
    fn push_refuses_out_of_order_and_out_of_range() {
        let mut ef = EliasFano::with_len(3, 100).unwrap();
        assert!(ef.push(5));
        assert!(!ef.push(5));
        assert!(!ef.push(4));
        assert!(!ef.push(100));
        assert!(ef.push(99));
    }

    #[test]
    fn payload_round_trips_and_rejects_its_corruptions() {
        let mut s = 9u64;
        for (m, count) in [(1u64, 1u64), (10, 10), (1 << 20, 1000), (1 << 40, 2000), (1000, 0)] {
            let mut v: Vec<u64> = (0..count).map(|_| lcg(&mut s) % m).collect();
            v.sort_unstable();
            v.dedup();
            let mut payload = Vec::new();
            encode_payload(&v, m, &mut payload);
            let ef = decode_payload(&payload, m).unwrap();
            assert_eq!(ef.iter().collect::<Vec<_>>(), v, "m = {m}");
            for cut in 0..payload.len() {
                assert!(decode_payload(&payload[..cut], m).is_err(), "cut {cut}");
            }
            let mut longer = payload.clone();
            longer.push(0);
            assert!(decode_payload(&longer, m).is_err());
        }
    }
}
