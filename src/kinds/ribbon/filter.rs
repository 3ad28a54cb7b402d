//! The queryable Ribbon filter: the solution words, the shard table and
//! the column split (docs/FORMAT.md section 8.5, "Query").

use super::build::{self, Shard};
use super::sizing::Build;
use super::hash::{equation, shard_of};
use super::{RibbonError, BAND, MAX_COLUMNS};
use crate::filter::FilterParams;
use crate::hash::KeyHash;
use crate::prelude::*;

/// A shard as the query needs it: where its rows start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placed {
    /// Global index of the shard's first row.
    pub(crate) first: u64,
    /// Rows (0, or at least 128).
    pub(crate) rows: u64,
    /// Construction seed.
    pub(crate) cseed: u8,
}

/// A static set as a Ribbon filter (kind 5): no false negatives, and a
/// false-positive rate set at construction, between 2^-(r+1) and 2^-r.
///
/// ```
/// use compressed_bloom::kinds::ribbon::RibbonFilter;
/// let keys: Vec<String> = (0..1000).map(|i| format!("key-{i}")).collect();
/// let f = RibbonFilter::from_keys(&keys, 0.01, 7)?;
/// assert!(keys.iter().all(|k| f.contains(k.as_bytes())));
/// assert!((f.expected_fpr() - 0.01).abs() < 0.001);
/// # Ok::<(), compressed_bloom::kinds::ribbon::RibbonError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RibbonFilter {
    seed: u64,
    n: u64,
    /// r: the columns of the lower blocks.
    cols: u32,
    /// Blocks with r + 1 columns (the last ones).
    upper: u64,
    /// All rows (m).
    rows: u64,
    /// All blocks, ⌈m / 128⌉.
    blocks: u64,
    shards: Vec<Placed>,
    /// Block by block, r or r + 1 words (bit i of word j: row 128·block + i,
    /// column j).
    words: Vec<u128>,
    /// What the frame header carries: m = rows, k = r, the seed.
    params: FilterParams,
}

/// The lower column count r and the share u of keys that should see r + 1
/// columns for a target rate f: 2^-r·(1 − u/2) = f with 2^-(r+1) < f ≤ 2^-r.
///
/// # Errors
/// [`RibbonError::Params`] for f outside (2^-64, 1/2].
pub fn columns_for(fpr: f64) -> Result<(u32, f64), RibbonError> {
    if !(fpr > 0.0 && fpr <= 0.5) {
        return Err(RibbonError::Params {
            reason: "the false-positive rate must be in (2^-64, 1/2]",
        });
    }
    let mut r = 1u32;
    let mut p = 0.5f64;
    while r < MAX_COLUMNS && p * 0.5 >= fpr {
        p *= 0.5;
        r = r.saturating_add(1);
    }
    let u = 2.0 * (1.0 - fpr / p);
    if u > 1.0 {
        return Err(RibbonError::Params {
            reason: "the false-positive rate must be in (2^-64, 1/2]",
        });
    }
    Ok((r, u.max(0.0)))
}

/// The shards end to end: each one's first row, and the rows in all.
fn place(shards: &[Shard]) -> (Vec<Placed>, u64) {
    let mut first = 0u64;
    let placed = shards
        .iter()
        .map(|s| {
            let p = Placed {
                first,
                rows: s.rows,
                cseed: s.cseed,
            };
            first = first.saturating_add(s.rows);
            p
        })
        .collect();
    (placed, first)
}

/// The rate of a non-member with `upper` upper blocks (see
/// [`RibbonFilter::expected_fpr`]).
fn rate(shards: &[Placed], blocks: u64, cols: u32, upper: u64) -> f64 {
    let lower = blocks.saturating_sub(upper);
    let (lo, hi) = (pow2_neg(cols), pow2_neg(cols.saturating_add(1)));
    let mut sum = 0.0;
    for s in shards {
        if s.rows == 0 {
            continue;
        }
        let starts = s.rows.saturating_sub(BAND - 1);
        // Starts in a lower block: first + start < 128·lower.
        let in_lower = lower
            .saturating_mul(BAND)
            .saturating_sub(s.first)
            .min(starts);
        let in_upper = starts.saturating_sub(in_lower);
        sum += (in_lower as f64 * lo + in_upper as f64 * hi) / starts as f64;
    }
    sum / shards.len().max(1) as f64
}

/// The number of upper blocks whose rate is closest to `fpr`: the rate
/// falls as blocks become upper, so a binary search finds the first count
/// at or below `fpr`, and the one before it may be closer.
fn upper_for(shards: &[Placed], blocks: u64, cols: u32, fpr: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, blocks);
    while lo < hi {
        let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
        if rate(shards, blocks, cols, mid) <= fpr {
            hi = mid;
        } else {
            lo = mid.saturating_add(1);
        }
    }
    if lo > 0 {
        let below = (rate(shards, blocks, cols, lo) - fpr).abs();
        let above = (rate(shards, blocks, cols, lo.saturating_sub(1)) - fpr).abs();
        if above < below {
            return lo.saturating_sub(1);
        }
    }
    lo
}

/// 2^-c as a float, for c ≤ 64 (no `powi` without std).
fn pow2_neg(c: u32) -> f64 {
    f64::from_bits(u64::from(1023u32.saturating_sub(c)) << 52)
}

impl RibbonFilter {
    /// Builds a filter of `keys` at false-positive rate `fpr`, hashing with
    /// `seed` (docs/FORMAT.md section 1), the [`Build::Compact`] way.
    ///
    /// # Errors
    /// [`RibbonError::Params`] for a rate outside (2^-64, 1/2].
    pub fn from_keys<K: AsRef<[u8]>>(
        keys: impl IntoIterator<Item = K>,
        fpr: f64,
        seed: u64,
    ) -> Result<Self, RibbonError> {
        Self::from_keys_with(keys, fpr, seed, Build::Compact)
    }

    /// As [`Self::from_keys`], built the way `how` says: [`Build::Fast`]
    /// builds in about two thirds of the time for about 1% more bytes.
    /// The keys are hashed with `seed`, the seed the frame carries.
    ///
    /// ```
    /// use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
    /// let keys: Vec<[u8; 4]> = (0..20_000u32).map(|i| i.to_le_bytes()).collect();
    /// let compact = RibbonFilter::from_keys(&keys, 0.01, 7)?;
    /// let fast = RibbonFilter::from_keys_with(&keys, 0.01, 7, Build::Fast)?;
    /// assert!(compact.rows() < fast.rows());
    /// assert!(keys.iter().all(|k| fast.contains(k)));
    /// # Ok::<(), compressed_bloom::kinds::ribbon::RibbonError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Self::from_keys`].
    pub fn from_keys_with<K: AsRef<[u8]>>(
        keys: impl IntoIterator<Item = K>,
        fpr: f64,
        seed: u64,
        how: Build,
    ) -> Result<Self, RibbonError> {
        let hashes: Vec<KeyHash> = keys
            .into_iter()
            .map(|k| KeyHash::new(k.as_ref(), seed))
            .collect();
        Self::from_hashes_with(&hashes, fpr, seed, how)
    }

    /// Builds a filter from key hashes made with `seed` ([`KeyHash::new`]),
    /// the [`Build::Compact`] way. Equal hashes count once in the solution
    /// but each in [`Self::len`].
    ///
    /// # Errors
    /// As [`Self::from_keys`].
    pub fn from_hashes(hashes: &[KeyHash], fpr: f64, seed: u64) -> Result<Self, RibbonError> {
        Self::from_hashes_with(hashes, fpr, seed, Build::Compact)
    }

    /// As [`Self::from_hashes`], built the way `how` says: [`Build::Fast`]
    /// builds in about two thirds of the time for about 1% more bytes.
    ///
    /// ```
    /// use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
    /// use compressed_bloom::KeyHash;
    /// let hashes: Vec<KeyHash> = (0..20_000u32).map(|i| KeyHash::new(&i.to_le_bytes(), 7)).collect();
    /// let compact = RibbonFilter::from_hashes(&hashes, 0.01, 7)?;
    /// let fast = RibbonFilter::from_hashes_with(&hashes, 0.01, 7, Build::Fast)?;
    /// assert!(compact.rows() < fast.rows());
    /// assert!(hashes.iter().all(|&h| fast.contains_hash(h)));
    /// # Ok::<(), compressed_bloom::kinds::ribbon::RibbonError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Self::from_keys`].
    pub fn from_hashes_with(
        hashes: &[KeyHash],
        fpr: f64,
        seed: u64,
        how: Build,
    ) -> Result<Self, RibbonError> {
        let (cols, share) = columns_for(fpr)?;
        // At f = 2^-r exactly no block has r + 1 columns, so the solution
        // is needed for r columns only (at r = 8 or 16, one AVX-512
        // register fewer in back substitution).
        let extra = share > 0.0;
        let per = cols.saturating_add(u32::from(extra));
        let solved = build::build(hashes, per, how)?;
        let (placed, rows) = place(&solved.shards);
        let blocks = rows.div_ceil(BAND);
        let upper = if extra {
            upper_for(&placed, blocks, cols, fpr)
        } else {
            0
        };
        let lower = blocks.saturating_sub(upper);
        let mut words = Vec::with_capacity(
            (blocks.saturating_mul(u64::from(cols)).saturating_add(upper)) as usize,
        );
        for (g, chunk) in solved.words.chunks_exact(per.max(1) as usize).enumerate() {
            let keep = if (g as u64) < lower { cols } else { per } as usize;
            words.extend_from_slice(chunk.get(..keep).unwrap_or(chunk));
        }
        Ok(Self::from_placed(
            seed,
            hashes.len() as u64,
            cols,
            upper,
            placed,
            rows,
            words,
        ))
    }

    /// A filter from its parts, as decoded (the payload parser checked
    /// that the shards' rows add up to `rows` and the words are
    /// `⌈rows/128⌉·cols + upper`). The tables are kept as given, so the
    /// decoder allocates each once.
    pub(crate) fn from_placed(
        seed: u64,
        n: u64,
        cols: u32,
        upper: u64,
        shards: Vec<Placed>,
        rows: u64,
        words: Vec<u128>,
    ) -> Self {
        RibbonFilter {
            seed,
            n,
            cols,
            upper,
            rows,
            blocks: rows.div_ceil(BAND),
            shards,
            words,
            params: FilterParams::new(rows, cols, seed),
        }
    }

    /// Index of block g's first word: blocks before the upper ones have r
    /// words, the upper ones r + 1.
    #[inline]
    fn word_at(&self, g: u64) -> usize {
        let lower = self.blocks.saturating_sub(self.upper);
        g.saturating_mul(u64::from(self.cols))
            .saturating_add(g.saturating_sub(lower)) as usize
    }

    /// True if the key may be in the set; false if it certainly is not.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(KeyHash::new(key, self.seed))
    }

    /// [`Self::contains`] for a hash made with [`Self::seed`].
    #[inline]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let shard_count = self.shards.len() as u64;
        let Some(shard) = self.shards.get(shard_of(h, shard_count) as usize) else {
            return false;
        };
        if shard.rows == 0 {
            return false;
        }
        let e = equation(h, shard.cseed, shard.rows.saturating_sub(BAND - 1));
        let row = shard.first.saturating_add(e.start);
        let g = row / BAND;
        let shift = (row % BAND) as u32;
        let cols = if g >= self.blocks.saturating_sub(self.upper) {
            self.cols.saturating_add(1)
        } else {
            self.cols
        } as usize;
        let at = self.word_at(g);
        let Some(first) = self.words.get(at..at.saturating_add(cols)) else {
            return false;
        };
        // Column by column, stopping at the first that differs from the
        // fingerprint: a non-member differs in each with probability 1/2,
        // so it reads two columns on average rather than all of them.
        let low = e.coef << shift;
        let mut fingerprint = e.fingerprint;
        if shift == 0 {
            for w in first {
                if u64::from((w & low).count_ones()) & 1 != fingerprint & 1 {
                    return false;
                }
                fingerprint >>= 1;
            }
        } else {
            let next = self.word_at(g.saturating_add(1));
            let Some(second) = self.words.get(next..next.saturating_add(cols)) else {
                return false;
            };
            // 0 < shift < 128.
            let high = e.coef >> 128u32.wrapping_sub(shift);
            for (a, b) in first.iter().zip(second) {
                if u64::from(((a & low) ^ (b & high)).count_ones()) & 1 != fingerprint & 1 {
                    return false;
                }
                fingerprint >>= 1;
            }
        }
        true
    }

    /// Keys the filter was built from (or the sender declared).
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether it was built from no keys.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The key-hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// r: columns of the lower blocks (the upper ones have r + 1).
    pub fn columns(&self) -> u32 {
        self.cols
    }

    /// Blocks with r + 1 columns.
    pub fn upper_blocks(&self) -> u64 {
        self.upper
    }

    /// All blocks of 128 rows.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The frame header's parameters: m the rows, k the lower columns r,
    /// the key-hash seed, hash scheme 1.
    pub fn header_params(&self) -> &FilterParams {
        &self.params
    }

    /// Rows (slots); the header's m.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The shards, in order: rows and construction seed of each.
    pub fn shards(&self) -> impl Iterator<Item = Shard> + '_ {
        self.shards.iter().map(|p| Shard {
            rows: p.rows,
            cseed: p.cseed,
        })
    }

    /// The solution words, block by block (what the payload carries).
    pub fn words(&self) -> &[u128] {
        &self.words
    }

    /// Bits of the solution: 128 per word.
    pub fn solution_bits(&self) -> u64 {
        (self.words.len() as u64).saturating_mul(128)
    }

    /// The false-positive rate of a key outside the set, exactly: a key
    /// lands in shard i with probability 1/S, on each of its rows − 127
    /// start rows alike, and matches with probability 2^-(columns of its
    /// start's block) (0 in a shard without rows).
    pub fn expected_fpr(&self) -> f64 {
        rate(&self.shards, self.blocks, self.cols, self.upper)
    }

    /// Bytes held: the words and the shard table.
    pub fn heap_bytes(&self) -> usize {
        self.words.len().saturating_mul(16).saturating_add(
            self.shards
                .len()
                .saturating_mul(core::mem::size_of::<Placed>()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_for_splits_the_rate() {
        assert_eq!(columns_for(0.5).unwrap(), (1, 0.0));
        assert_eq!(columns_for(1.0 / 256.0).unwrap(), (8, 0.0));
        // f = 0.01: r = 6 (2^-6 = 0.015625), u = 2(1 − 0.64) = 0.72.
        let (r, u) = columns_for(0.01).unwrap();
        assert_eq!(r, 6);
        assert!((u - 0.72).abs() < 1e-12);
        assert!(columns_for(0.6).is_err());
        assert!(columns_for(0.0).is_err());
        assert!(columns_for(f64::NAN).is_err());
    }

    #[test]
    fn small_sets_have_no_false_negatives() {
        for n in [0u64, 1, 2, 100, 3000] {
            let keys: Vec<[u8; 8]> = (0..n).map(|i| i.to_le_bytes()).collect();
            let f = RibbonFilter::from_keys(&keys, 0.01, 5).unwrap();
            assert_eq!(f.len(), n);
            assert!(keys.iter().all(|k| f.contains(k)), "n = {n}");
            assert!(f.blocks() >= 1);
        }
    }
}
