//! Construction: banded Gaussian elimination "on the fly" and back
//! substitution (Dillinger & Walzer 2021, sections 2 and 3), one shard at a
//! time.
//!
//! Each key's equation is added as it comes: starting at its start row, if
//! the row holds no pivot the equation is stored there; otherwise the
//! stored equation is XORed in (clearing the leading coefficient), and the
//! search moves to the next set coefficient. An equation that vanishes
//! with a zero right-hand side was implied by the others (a duplicate
//! key); with a non-zero one the system has no solution, and the shard is
//! built again with the next construction seed. Back substitution then
//! fills the rows from the last to the first, one column at a time, as
//! 128-row words (the interleaved layout of section 8.5).
//!
//! Sizing: the rows a shard needs to succeed grow slowly with its size
//! (the fluctuation of its local load; RocksDB's tables for w = 128
//! measure about +0.4% of rows per doubling). Shards of about
//! [`SHARD_KEYS`] keys, each sized for the keys it actually received,
//! keep that near 1% at any n; the row count per shard costs about three
//! bytes per shard in the frame. Shards are laid end to end over the
//! rows, so a shard's rows need not fill whole blocks.

use super::hash::{equation, shard_of, Equation};
use super::{RibbonError, BAND};
use crate::hash::KeyHash;
use crate::prelude::*;

/// Keys a shard is planned for.
pub const SHARD_KEYS: u64 = 4_000;

/// Rows per block, as an index.
const ROWS: usize = BAND as usize;

/// Construction seeds tried per shard before giving up (the seed is a byte).
const SEEDS: u16 = 256;

/// One shard's place in the structure: its rows and the construction
/// seed its equations were solved with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Rows: 0 for a shard that received no keys, else at least 128.
    pub rows: u64,
    /// Construction seed (section 8.5, "Key to equation").
    pub cseed: u8,
}

/// Rows planned for a shard of `n` keys before any retry: n·1.009, and
/// at least 128 (one band). At n = 4000 a first try then succeeds about
/// 55 times in 100 (the ignored test `success_rates` prints the table: 49
/// at 0.8% spare, 61 at 1.0%, 72 at 1.2%; shards of 1000 to 8000 keys
/// behave alike); each failure adds 0.1% more rows, so the expected spare
/// is about 1% at about 1.7 tries.
pub fn planned_rows(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    n.saturating_add(n.saturating_mul(9) / 1000).max(BAND)
}

/// Working rows of one shard's elimination, reused across shards and
/// retries.
#[derive(Default)]
pub(crate) struct Banding {
    /// Per row: the stored coefficients (0 for a row without a pivot) and
    /// right-hand side, side by side so that a step touches one cache line.
    rows: Vec<(u128, u64)>,
}

impl Banding {
    /// Empties the rows and sizes them for `rows`.
    fn reset(&mut self, rows: usize) {
        self.rows.clear();
        self.rows.resize(rows, (0, 0));
    }

    /// Adds one equation; false if it contradicts the ones already added.
    #[inline]
    fn add(&mut self, e: Equation) -> bool {
        let mut row = e.start as usize;
        let mut coef = e.coef;
        let mut rhs = e.fingerprint;
        loop {
            // start + 127 < rows, and the walk never passes the highest set
            // coefficient, so the row exists.
            let Some((c, r)) = self.rows.get_mut(row) else {
                return false;
            };
            if *c == 0 {
                *c = coef;
                *r = rhs;
                return true;
            }
            coef ^= *c;
            rhs ^= *r;
            if coef == 0 {
                return rhs == 0;
            }
            let tz = coef.trailing_zeros();
            coef >>= tz;
            row = row.wrapping_add(tz as usize);
        }
    }

    /// Back substitution over `blocks` blocks for `cols` columns (at most
    /// 64): appends, block by block, `cols` words whose bit i is the
    /// solution of row 128·block + i in that column.
    fn solve(&self, blocks: usize, cols: u32, out: &mut Vec<u128>) {
        let cols = cols.min(64) as usize;
        let first = out.len();
        out.resize(first.saturating_add(blocks.saturating_mul(cols)), 0);
        // state[j] bit t is the solution of row i + t in column j.
        let mut state = [0u128; 64];
        let rows = blocks.saturating_mul(BAND as usize);
        for i in (0..rows).rev() {
            let (coef, rhs) = self.rows.get(i).copied().unwrap_or((0, 0));
            let coef = coef >> 1;
            for (j, s) in state.iter_mut().take(cols).enumerate() {
                let bit = (u64::from((coef & *s).count_ones()) ^ (rhs >> j)) & 1;
                *s = (*s << 1) | u128::from(bit);
            }
            if i % ROWS == 0 {
                let at = first.saturating_add((i / ROWS).saturating_mul(cols));
                if let (Some(dst), Some(src)) =
                    (out.get_mut(at..at.saturating_add(cols)), state.get(..cols))
                {
                    dst.copy_from_slice(src);
                }
            }
        }
    }
}

/// What [`build`] produces: the shards, and the solution for `cols`
/// columns laid over all rows, block by block (`cols` words per block of
/// 128 rows; the shards follow each other row by row).
pub struct Solved {
    /// The shards, in shard order.
    pub shards: Vec<Shard>,
    /// `cols` words per block.
    pub words: Vec<u128>,
}

/// Builds the shards for `hashes` (key hashes under the filter's seed),
/// solving for `cols` columns (the upper column count). An empty set gets
/// one shard of 128 rows of zeros, so that the structure is never empty.
///
/// # Errors
/// [`RibbonError::Unsolvable`] if a shard fails with all 256 seeds (each
/// failure adds rows, so this does not happen in practice).
pub fn build(hashes: &[KeyHash], cols: u32) -> Result<Solved, RibbonError> {
    let n = hashes.len() as u64;
    let shard_count = n.div_ceil(SHARD_KEYS).max(1);
    // Counting sort of the hashes by shard.
    let mut starts = vec![0usize; (shard_count as usize).saturating_add(1)];
    for &h in hashes {
        let s = shard_of(h, shard_count) as usize;
        if let Some(c) = starts.get_mut(s.saturating_add(1)) {
            *c = c.saturating_add(1);
        }
    }
    for i in 1..starts.len() {
        let prev = starts.get(i.wrapping_sub(1)).copied().unwrap_or(0);
        if let Some(c) = starts.get_mut(i) {
            *c = c.saturating_add(prev);
        }
    }
    let mut fill = starts.clone();
    let mut sorted = vec![KeyHash { h1: 0, h2: 0 }; hashes.len()];
    for &h in hashes {
        let s = shard_of(h, shard_count) as usize;
        if let Some(at) = fill.get_mut(s) {
            if let Some(slot) = sorted.get_mut(*at) {
                *slot = h;
            }
            *at = at.saturating_add(1);
        }
    }
    let mut banding = Banding::default();
    let mut shards = Vec::with_capacity(shard_count as usize);
    let mut words = Vec::new();
    let mut local = Vec::new();
    let mut first_row = 0u64;
    for s in 0..shard_count as usize {
        let lo = starts.get(s).copied().unwrap_or(0);
        let hi = starts.get(s.saturating_add(1)).copied().unwrap_or(lo);
        let keys = sorted.get(lo..hi).unwrap_or(&[]);
        local.clear();
        let shard = solve_shard(&mut banding, keys, cols, s as u64, &mut local)?;
        place(&mut words, &local, first_row, shard.rows, cols);
        first_row = first_row.saturating_add(shard.rows);
        shards.push(shard);
    }
    if first_row == 0 {
        if let Some(first) = shards.first_mut() {
            first.rows = BAND;
        }
        words.resize(cols as usize, 0);
    }
    Ok(Solved { shards, words })
}

/// ORs a shard's words (its own blocks, `cols` words each) into the global
/// words at row `first_row`, growing them to cover its `rows`.
fn place(words: &mut Vec<u128>, local: &[u128], first_row: u64, rows: u64, cols: u32) {
    let cols = cols as usize;
    let end_block = first_row.saturating_add(rows).div_ceil(BAND) as usize;
    if words.len() < end_block.saturating_mul(cols) {
        words.resize(end_block.saturating_mul(cols), 0);
    }
    let base = (first_row / BAND) as usize;
    let shift = (first_row % BAND) as u32;
    for (lb, chunk) in local.chunks_exact(cols.max(1)).enumerate() {
        let g = base.saturating_add(lb);
        for (j, &w) in chunk.iter().enumerate() {
            if let Some(dst) = words.get_mut(g.saturating_mul(cols).saturating_add(j)) {
                *dst |= w << shift;
            }
            if shift > 0 {
                let next = g.saturating_add(1).saturating_mul(cols).saturating_add(j);
                if let Some(dst) = words.get_mut(next) {
                    *dst |= w >> 128u32.wrapping_sub(shift);
                }
            }
        }
    }
}

/// Solves one shard into `words` (its own blocks from row 0); retries with
/// the next seed on failure, with 0.1% more rows each time.
fn solve_shard(
    banding: &mut Banding,
    keys: &[KeyHash],
    cols: u32,
    index: u64,
    words: &mut Vec<u128>,
) -> Result<Shard, RibbonError> {
    let mut rows = planned_rows(keys.len() as u64);
    if rows == 0 {
        return Ok(Shard { rows, cseed: 0 });
    }
    for seed in 0..SEEDS {
        let cseed = seed as u8;
        if seed > 0 {
            rows = rows.saturating_add(rows.div_ceil(1000));
        }
        let starts = rows.saturating_sub(BAND - 1);
        banding.reset(rows as usize);
        if keys
            .iter()
            .all(|&h| banding.add(equation(h, cseed, starts)))
        {
            banding.solve(rows.div_ceil(BAND) as usize, cols, words);
            return Ok(Shard { rows, cseed });
        }
    }
    Err(RibbonError::Unsolvable { shard: index })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashes(n: u64, seed: u64) -> Vec<KeyHash> {
        (0..n)
            .map(|i| KeyHash::new(&i.to_le_bytes(), seed))
            .collect()
    }

    /// Each stored equation holds for the solution: the XOR of the rows its
    /// coefficients select equals its fingerprint, in every column.
    #[test]
    fn solution_satisfies_every_equation() {
        let keys = hashes(3000, 9);
        let mut banding = Banding::default();
        let mut words = Vec::new();
        let shard = solve_shard(&mut banding, &keys, 5, 0, &mut words).unwrap();
        let rows = shard.rows;
        let bit = |row: u64, col: usize| -> u64 {
            let w = words[(row / BAND) as usize * 5 + col];
            ((w >> (row % BAND)) & 1) as u64
        };
        for &h in &keys {
            let e = equation(h, shard.cseed, rows - (BAND - 1));
            for col in 0..5 {
                let mut acc = 0;
                for t in 0..128 {
                    if (e.coef >> t) & 1 == 1 {
                        acc ^= bit(e.start + t, col);
                    }
                }
                assert_eq!(acc, (e.fingerprint >> col) & 1);
            }
        }
    }

    /// Duplicate keys are implied equations, never a contradiction.
    #[test]
    fn duplicates_are_accepted() {
        let mut keys = hashes(500, 1);
        keys.extend(hashes(500, 1));
        let solved = build(&keys, 3).unwrap();
        assert_eq!(solved.shards.len(), 1);
    }

    /// Build time for 10^6 keys (prints; run with `--ignored --nocapture`
    /// in release).
    #[test]
    #[ignore]
    fn build_time() {
        let keys = hashes(1_000_000, 7);
        for cols in [9u32, 21] {
            let t = std::time::Instant::now();
            let solved = build(&keys, cols).unwrap();
            let tries: u32 = solved.shards.iter().map(|s| u32::from(s.cseed) + 1).sum();
            println!(
                "cols {cols}: {:.1} ms, {} shards, {tries} tries",
                t.elapsed().as_secs_f64() * 1e3,
                solved.shards.len()
            );
        }
    }

    /// How often a first try succeeds at the planned size, per shard size
    /// (prints a table; run with `--ignored --nocapture` to re-derive the
    /// constants of [`planned_rows`]).
    #[test]
    #[ignore]
    fn success_rates() {
        let mut banding = Banding::default();
        for n in [1000u64, 2000, 4000, 8000] {
            for spare_ppm in [6000u64, 8000, 10_000, 12_000, 15_000] {
                let rows = n + n * spare_ppm / 1_000_000;
                let trials = 100u64;
                let mut ok = 0;
                for t in 0..trials {
                    let keys = hashes(n, 1000 + t);
                    banding.reset(rows as usize);
                    if keys
                        .iter()
                        .all(|&h| banding.add(equation(h, 0, rows - (BAND - 1))))
                    {
                        ok += 1;
                    }
                }
                println!(
                    "n {n:6} spare {:5.2}% ok {ok}/{trials}",
                    spare_ppm as f64 / 1e4,
                );
            }
        }
    }
}
