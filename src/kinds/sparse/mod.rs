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

/// ORs the low `count` bits of `v` into `words` at bit `at`.
fn put_bits(words: &mut [u64], at: u64, v: u64, count: u32) {
    if count == 0 {
        return;
    }
    let i = (at / 64) as usize;
    let shift = (at % 64) as u32;
    if let Some(w) = words.get_mut(i) {
        *w |= v << shift;
    }
    if shift != 0 && shift.saturating_add(count) > 64 {
        if let Some(w) = words.get_mut(i.saturating_add(1)) {
            *w |= v >> 64u32.saturating_sub(shift);
        }
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
        put_bits(&mut self.high, at, 1, 1);
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
            while free != 0 {
                if zeros.is_multiple_of(SAMPLE) {
                    self.samples
                        .push(base.saturating_add(u64::from(free.trailing_zeros())));
                }
                zeros = zeros.saturating_add(1);
                free &= free.wrapping_sub(1);
            }
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

    /// The values in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let l = self.l;
        let mut zeros = 0u64;
        let mut i = 0u64;
        (0..self.high_bits).filter_map(move |at| {
            if get_bits(&self.high, at, 1) == 0 {
                zeros = zeros.saturating_add(1);
                return None;
            }
            let low = get_bits(&self.low, i.saturating_mul(u64::from(l)), l);
            i = i.saturating_add(1);
            Some((zeros << l) | low)
        })
    }
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
    let p = f.params();
    let mut head = vec![p.scheme.id()];
    for v in [p.seed, p.m, u64::from(p.k)] {
        varint::put(&mut head, v);
    }
    head.push(4);
    varint::put(&mut head, f.count_ones());
    let mut h = Xxh3Default::new();
    h.update(&head);
    let mut buf = [0u8; 8 * 512];
    let mut n = 0usize;
    for pos in f.positions() {
        if let Some(slot) = buf.get_mut(n..n.saturating_add(8)) {
            slot.copy_from_slice(&pos.to_le_bytes());
        }
        n = n.saturating_add(8);
        if n == buf.len() {
            h.update(&buf);
            n = 0;
        }
    }
    h.update(buf.get(..n).unwrap_or_default());
    h.digest()
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
/// `n` keys. Memory: the result's Elias–Fano list.
///
/// # Errors
/// No memory; a change at or past m cannot occur (the changes list was
/// decoded for the same m).
pub fn apply_changes(
    base: &SparseFilter,
    changes: &EliasFano,
    n: u64,
) -> Result<SparseFilter, FilterError> {
    let count = symmetric_difference(base.positions(), changes.iter()).count() as u64;
    let mut set = EliasFano::with_len(count, base.params.m)?;
    for p in symmetric_difference(base.positions(), changes.iter()) {
        set.push(p);
    }
    set.finish();
    Ok(SparseFilter {
        params: base.params,
        n,
        set,
    })
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
