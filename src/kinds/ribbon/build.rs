//! Construction: banded Gaussian elimination "on the fly" and back
//! substitution (Dillinger & Walzer 2021, sections 2 and 3), shard by
//! shard.
//!
//! A shard's equations are added in order of start row: starting at its
//! start row, if the row holds no pivot the equation is stored there;
//! otherwise the stored equation is XORed in (clearing the leading
//! coefficient), and the search moves to the next set coefficient. An
//! equation that vanishes with a zero right-hand side was implied by the
//! others (a duplicate key); with a non-zero one the system has no
//! solution, and the shard is built again with the next construction seed
//! and a few more rows. Back substitution (`solve.rs`) then fills
//! the rows from the last to the first, as 128-row words per column (the
//! interleaved layout of section 8.5).
//!
//! Speed: the elimination is a chain of dependent steps, one per pivot an
//! equation meets before it finds a free row, so its cost is the backlog
//! of equations waiting along the band; how many rows a shard gets sets
//! that backlog and how often a try fails ([`Build`]). Most failed tries
//! are found before the elimination, by counting equations per start row
//! (`overloaded`). Four shards are eliminated side by side so that their
//! chains overlap (`LANES`); the order of the equations and the
//! interleaving change nothing in the result ([`build`]).
//!
//! Sizing: each shard is sized for the keys it actually received, and
//! shards are laid end to end over the rows, so a shard's rows need not
//! fill whole blocks; the row count and seed of a shard cost about three
//! bytes in the frame.

use super::hash::{row_of, seeded_h2, shard_of, start_of};
use super::sizing::Build;
use super::solve::solve;
use super::{RibbonError, BAND};
use crate::hash::KeyHash;
use crate::prelude::*;

/// Rows per block, as an index.
pub(super) const ROWS: usize = BAND as usize;

/// Construction seeds tried per shard before giving up (the seed is a byte).
const SEEDS: u16 = 256;

/// Shards eliminated side by side. One shard's elimination is a chain of
/// dependent steps (load a row, XOR, find the next set coefficient, load
/// that row), so a single shard leaves most of the core idle; independent
/// shards interleaved fill it. At 10^6 keys (f = 2^-8, x86-64) four lanes
/// build in about 63% of the time of one, two in about 66%.
const LANES: usize = 4;
const _: () = assert!(LANES <= 4, "drive writes out four lanes");

/// One shard's place in the structure: its rows and the construction
/// seed its equations were solved with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Rows: 0 for a shard that received no keys, else at least 128.
    pub rows: u64,
    /// Construction seed (section 8.5, "Key to equation").
    pub cseed: u8,
}

/// A row of a shard's band (`lo | hi << 64` the stored coefficients, 0 for
/// a row without a pivot; `rhs` the right-hand side), or an equation
/// waiting to be added (then `start` is its start row). 32 bytes, aligned,
/// so that a step of the elimination touches one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub(super) struct Row {
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) rhs: u64,
    pub(super) start: u64,
}

/// Reusable buffers for [`equations`].
#[derive(Default)]
struct Scratch {
    /// Per start row (shifted by one), the keys starting there, then the
    /// equations before it, then where the next goes.
    count: Vec<usize>,
    /// Each key's start row, in key order.
    starts: Vec<usize>,
}

/// A shard's equations under construction seed `cseed`, in order of start
/// row, into `out`. The order changes nothing in the result (below) but
/// makes the elimination walk the band from its first row to its last, so
/// that the rows it touches stay in the L1 cache and a contradiction shows
/// up sooner: a counting sort, one pass for the start rows
/// ([`count_starts`]) and one for the rest of each equation
/// ([`place_equations`]).
#[cfg(test)]
fn equations(keys: &[u64], cseed: u8, starts: u64, scratch: &mut Scratch, out: &mut Vec<Row>) {
    count_starts(keys, cseed, starts, scratch);
    place_equations(keys, cseed, scratch, out);
}

/// The first pass of [`equations`]: each key's start row, and in
/// `scratch.count[s + 1]` how many keys start at row s.
fn count_starts(keys: &[u64], cseed: u8, starts: u64, scratch: &mut Scratch) {
    let Scratch { count, starts: at } = scratch;
    count.clear();
    count.resize((starts as usize).saturating_add(1), 0);
    at.clear();
    for &h in keys {
        let s = start_of(seeded_h2(h, cseed), starts) as usize;
        at.push(s);
        if let Some(c) = count.get_mut(s.saturating_add(1)) {
            *c = c.saturating_add(1);
        }
    }
}

/// The second pass of [`equations`], after [`count_starts`]: the
/// equations, each at its place in start-row order.
fn place_equations(keys: &[u64], cseed: u8, scratch: &mut Scratch, out: &mut Vec<Row>) {
    let Scratch { count, starts: at } = scratch;
    let mut sum = 0usize;
    for c in count.iter_mut() {
        sum = sum.saturating_add(*c);
        *c = sum;
    }
    out.clear();
    out.resize(keys.len(), Row::default());
    for (&h, &s) in keys.iter().zip(at.iter()) {
        let (lo, hi, rhs) = row_of(seeded_h2(h, cseed));
        if let Some(c) = count.get_mut(s) {
            if let Some(slot) = out.get_mut(*c) {
                *slot = Row {
                    lo,
                    hi,
                    rhs,
                    start: s as u64,
                };
            }
            *c = c.saturating_add(1);
        }
    }
}

/// Where one lane's elimination stands: the equation being added (its
/// index in the lane's list, and its coefficients as reduced so far, which
/// begin at `row`).
#[derive(Clone, Copy, Debug, Default)]
struct Walk {
    idx: usize,
    row: usize,
    lo: u64,
    hi: u64,
    rhs: u64,
}

impl Walk {
    /// Starts on equation `e` (field by field: a whole-struct copy
    /// invites the compiler to pack the fields into a vector register,
    /// which costs a shuffle on every step).
    #[inline(always)]
    fn load(&mut self, e: &Row) {
        self.row = e.start as usize;
        self.lo = e.lo;
        self.hi = e.hi;
        self.rhs = e.rhs;
    }
}

/// How a lane's shard ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// Every equation was added.
    Solved,
    /// An equation contradicted the others.
    Failed,
}

/// Gaussian elimination on the fly, `K` shards at a time, step for step,
/// until one of them ends; returns which and how. A step adds the lane's
/// equation at its row if the row holds no pivot (a stored row always has
/// bit 0 set, so `lo == 0` means empty), or XORs the stored row in, which
/// clears the leading coefficient, and moves to the next set one. An
/// equation that vanishes with a zero right-hand side was implied by the
/// others (a duplicate key) and is dropped; with a non-zero one the shard
/// has no solution. The walk never passes the equation's highest set
/// coefficient, at most row start + 127 < rows, so a row past the band is
/// unreachable (and counted as a failure, should it happen).
#[inline(always)]
fn drive<const K: usize>(
    bands: &mut [&mut [Row]; K],
    lists: &[&[Row]; K],
    walks: &mut [Walk; K],
) -> (usize, Event) {
    let mut w = *walks;
    let out = 'run: loop {
        // One step of each lane; `step` is written out per lane (the lane
        // number a constant), so each lane's walk stays in registers.
        macro_rules! step {
            ($k:literal) => {
                if $k < K {
                    if let (Some(band), Some(list), Some(l)) =
                        (bands.get_mut($k), lists.get($k), w.get_mut($k))
                    {
                        if let Some(event) = step(band, list, l) {
                            break 'run ($k, event);
                        }
                    }
                }
            };
        }
        step!(0);
        step!(1);
        step!(2);
        step!(3);
    };
    *walks = w;
    out
}

/// One step of a walk (see [`drive`]); the event if its shard ended.
#[inline(always)]
fn step(band: &mut [Row], list: &[Row], l: &mut Walk) -> Option<Event> {
    let Some(slot) = band.get_mut(l.row) else {
        return Some(Event::Failed);
    };
    if slot.lo == 0 {
        slot.lo = l.lo;
        slot.hi = l.hi;
        slot.rhs = l.rhs;
        l.idx = l.idx.wrapping_add(1);
        let Some(e) = list.get(l.idx) else {
            return Some(Event::Solved);
        };
        l.load(e);
        return None;
    }
    let x = l.lo ^ slot.lo;
    let y = l.hi ^ slot.hi;
    l.rhs ^= slot.rhs;
    if x != 0 {
        // Both rows have bit 0 set, so 1 ≤ tz ≤ 63.
        let tz = x.trailing_zeros();
        l.lo = x.wrapping_shr(tz) | y.wrapping_shl(64u32.wrapping_sub(tz));
        l.hi = y.wrapping_shr(tz);
        l.row = l.row.wrapping_add(tz as usize);
    } else if y != 0 {
        let tz = y.trailing_zeros();
        l.lo = y.wrapping_shr(tz);
        l.hi = 0;
        l.row = l.row.wrapping_add(64).wrapping_add(tz as usize);
    } else {
        if l.rhs != 0 {
            return Some(Event::Failed);
        }
        l.idx = l.idx.wrapping_add(1);
        let Some(e) = list.get(l.idx) else {
            return Some(Event::Solved);
        };
        l.load(e);
    }
    None
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
/// solving for `cols` columns (the most any block has). An empty set gets
/// one shard of 128 rows of zeros, so that the structure is never empty.
///
/// A shard's result does not depend on the order its equations are added
/// in, nor on which shards are solved alongside it: whether the system
/// has a solution is a property of the system, and the rows that end up
/// without a pivot (the leading positions of the row space's echelon
/// form) and so the solution that gives them 0 are the same in any order.
/// The bytes are those of one shard at a time, key by key.
///
/// # Errors
/// [`RibbonError::Unsolvable`] if a shard fails with all 256 seeds (each
/// failure adds rows, so this does not happen in practice).
pub fn build(hashes: &[KeyHash], cols: u32, how: Build) -> Result<Solved, RibbonError> {
    // With x86-64-v3 (BMI2, POPCNT) a shift by a variable count is one
    // instruction rather than three, and `count_ones` one rather than a
    // dozen: about 5% off a build of 10^6 keys (pulp checks the CPU at run
    // time; the code is the same).
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if let Some(v3) = pulp::x86::V3::try_new() {
        return v3.vectorize(
            #[inline(always)]
            || build_in(hashes, cols, how),
        );
    }
    build_in(hashes, cols, how)
}

/// One shard being solved: which, with which seed and rows.
#[derive(Clone, Copy, Debug)]
struct Job {
    shard: usize,
    cseed: u16,
    rows: u64,
}

impl Job {
    /// The next try after a failure: the next seed, and a few more rows.
    ///
    /// # Errors
    /// [`RibbonError::Unsolvable`] after the last seed.
    fn retry(self) -> Result<Job, RibbonError> {
        let cseed = self.cseed.saturating_add(1);
        if cseed >= SEEDS {
            return Err(RibbonError::Unsolvable {
                shard: self.shard as u64,
            });
        }
        Ok(Job {
            shard: self.shard,
            cseed,
            rows: Build::retry_rows(self.rows),
        })
    }
}

/// Whether a shard's equations may not all hold, from their counts per
/// start row alone (`counts[s]`, keys starting at row s): some run of
/// start rows a…b holds more equations than the b − a + 128 rows they
/// reach. The largest sum over runs of (equations − 1) per start row
/// (Kadane's, one branch-free pass) against 127. Equal equations (the same
/// key twice) never contradict, so a shard over the bound is refused only
/// if it is over it counting them once ([`distinct_overload`]): then its
/// equations are linearly dependent, and distinct keys' fingerprints make
/// the dependency a contradiction (its right-hand side is 0 with
/// probability 2^-64). Of the failed first tries in the ignored test
/// `success_rates`, this finds 74 of 93 at the default's 4,000 keys and
/// 0.9% spare, and 26 of 27 at the fast build's 16,000 keys and 2%; the
/// elimination meets the rest about 80% of the way through.
fn overloaded(counts: &[usize]) -> bool {
    let (mut best, mut run) = (0i64, 0i64);
    for &c in counts {
        let d = (c as i64).wrapping_sub(1);
        run = run.max(0).saturating_add(d);
        best = best.max(run);
    }
    best > 127
}

/// [`overloaded`]'s test over the distinct equations of `list` (sorted by
/// start row).
fn distinct_overload(list: &[Row]) -> bool {
    let (mut best, mut run) = (0i64, 0i64);
    let (mut at, mut group) = (0u64, 0usize);
    for (i, r) in list.iter().enumerate() {
        if i > 0 && at == r.start.wrapping_add(1) {
            // Another equation at the same start row: one more, if distinct.
            if !list.get(group..i).unwrap_or_default().contains(r) {
                run = run.saturating_add(1);
            }
        } else {
            // A new start row after `r.start − at` empty ones (−1 each):
            // the best run ending here starts here or carries on.
            let gap = r.start.saturating_sub(at) as i64;
            run = run.saturating_sub(gap).max(0);
            at = r.start.saturating_add(1);
            group = i;
        }
        best = best.max(run);
    }
    best > 127
}

/// The lanes: per lane its band, its equations, where its walk stands and
/// its job (None when idle).
struct Lanes<const K: usize> {
    bands: [Vec<Row>; K],
    lists: [Vec<Row>; K],
    walks: [Walk; K],
    jobs: [Option<Job>; K],
}

impl<const K: usize> Lanes<K> {
    fn new() -> Self {
        Lanes {
            bands: core::array::from_fn(|_| Vec::new()),
            lists: core::array::from_fn(|_| Vec::new()),
            walks: [Walk::default(); K],
            jobs: [None; K],
        }
    }

    /// Sets lane `k` to `job`, or to the first retry of it whose equations
    /// are not [`overloaded`]: its equations, sorted, and an empty band.
    /// Returns the job the lane holds.
    ///
    /// # Errors
    /// [`RibbonError::Unsolvable`] if every seed left is overloaded.
    #[inline(always)]
    fn start(
        &mut self,
        k: usize,
        mut job: Job,
        keys: &[u64],
        scratch: &mut Scratch,
    ) -> Result<Job, RibbonError> {
        let (Some(band), Some(list), Some(walk), Some(slot)) = (
            self.bands.get_mut(k),
            self.lists.get_mut(k),
            self.walks.get_mut(k),
            self.jobs.get_mut(k),
        ) else {
            return Ok(job);
        };
        loop {
            let cseed = job.cseed as u8;
            count_starts(keys, cseed, job.rows.saturating_sub(BAND - 1), scratch);
            let suspect = overloaded(scratch.count.get(1..).unwrap_or_default());
            place_equations(keys, cseed, scratch, list);
            if !(suspect && distinct_overload(list)) {
                break;
            }
            job = job.retry()?;
        }
        band.clear();
        band.resize(job.rows as usize, Row::default());
        *walk = Walk::default();
        if let Some(e) = list.first() {
            walk.load(e);
        }
        *slot = Some(job);
        Ok(job)
    }

    /// Runs every lane until one ends (all K lanes must hold a job).
    #[inline(always)]
    fn run_all(&mut self) -> (usize, Event) {
        let mut bands = self.bands.each_mut().map(Vec::as_mut_slice);
        let lists = self.lists.each_ref().map(Vec::as_slice);
        drive::<K>(&mut bands, &lists, &mut self.walks)
    }

    /// Runs lane `k` alone until its shard ends.
    #[inline(always)]
    fn run_one(&mut self, k: usize) -> Event {
        let (Some(band), Some(list), Some(walk)) =
            (self.bands.get_mut(k), self.lists.get(k), self.walks.get_mut(k))
        else {
            return Event::Failed;
        };
        let mut w = [*walk];
        let (_, event) = drive::<1>(&mut [band.as_mut_slice()], &[list.as_slice()], &mut w);
        *walk = w[0];
        event
    }
}

/// What happens to the shards as they are solved: their shard table
/// entries and the solution words, placed in shard order as soon as every
/// shard before them is done.
struct Results {
    cols: u32,
    shards: Vec<Shard>,
    /// Per shard: solved (its words, for a shard not yet placed).
    done: Vec<Option<Vec<u128>>>,
    /// Shards placed, and the rows they hold.
    placed: usize,
    first_row: u64,
    words: Vec<u128>,
    /// Word buffers to reuse.
    spare: Vec<Vec<u128>>,
}

impl Results {
    /// A shard of `job` solved in `band`: back substitution, then placing
    /// every shard that is now next in order.
    #[inline(always)]
    fn solved(&mut self, job: Job, band: &[Row]) {
        let mut local = self.spare.pop().unwrap_or_default();
        local.clear();
        solve(band, job.rows.div_ceil(BAND) as usize, self.cols, &mut local);
        if let Some(s) = self.shards.get_mut(job.shard) {
            *s = Shard {
                rows: job.rows,
                cseed: job.cseed as u8,
            };
        }
        if let Some(d) = self.done.get_mut(job.shard) {
            *d = Some(local);
        }
        self.flush();
    }

    /// Places the solved shards that follow the placed ones.
    fn flush(&mut self) {
        while let Some(slot) = self.done.get_mut(self.placed) {
            let Some(local) = slot.take() else {
                break;
            };
            let rows = self.shards.get(self.placed).map_or(0, |s| s.rows);
            place(&mut self.words, &local, self.first_row, rows, self.cols);
            self.first_row = self.first_row.saturating_add(rows);
            self.placed = self.placed.saturating_add(1);
            self.spare.push(local);
        }
    }
}

/// [`build`]'s body (inlined into the dispatch, so that it is compiled
/// once per instruction set).
#[inline(always)]
fn build_in(hashes: &[KeyHash], cols: u32, how: Build) -> Result<Solved, RibbonError> {
    let n = hashes.len() as u64;
    let shard_count = n.div_ceil(how.shard_keys()).max(1);
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
    // Each shard's keys as their h2, all its equations need.
    let mut sorted = vec![0u64; hashes.len()];
    for &h in hashes {
        let s = shard_of(h, shard_count) as usize;
        if let Some(at) = fill.get_mut(s) {
            if let Some(slot) = sorted.get_mut(*at) {
                *slot = h.h2;
            }
            *at = at.saturating_add(1);
        }
    }
    drop(fill);
    let keys_of = |s: usize| -> &[u64] {
        let lo = starts.get(s).copied().unwrap_or(0);
        let hi = starts.get(s.saturating_add(1)).copied().unwrap_or(lo);
        sorted.get(lo..hi).unwrap_or(&[])
    };
    let count = shard_count as usize;
    let mut results = Results {
        cols,
        shards: vec![Shard { rows: 0, cseed: 0 }; count],
        // A shard without keys is done from the start.
        done: (0..count)
            .map(|s| keys_of(s).is_empty().then(Vec::new))
            .collect(),
        placed: 0,
        first_row: 0,
        words: Vec::new(),
        spare: Vec::new(),
    };
    let mut pending = (0..count).filter(|&s| !keys_of(s).is_empty());
    let mut next_job = || {
        pending.next().map(|shard| Job {
            shard,
            cseed: 0,
            rows: how.planned_rows(keys_of(shard).len() as u64),
        })
    };
    let mut lanes = Lanes::<LANES>::new();
    let mut scratch = Scratch::default();
    for k in 0..LANES {
        if let Some(job) = next_job() {
            lanes.start(k, job, keys_of(job.shard), &mut scratch)?;
        }
    }
    // While every lane holds a shard, the lanes run together; once the
    // shards run out, each lane finishes its own alone.
    while lanes.jobs.iter().all(Option::is_some) {
        let (k, event) = lanes.run_all();
        settle(&mut lanes, k, event, &mut results, &mut next_job, &keys_of, &mut scratch)?;
    }
    for k in 0..LANES {
        while lanes.jobs.get(k).copied().flatten().is_some() {
            let event = lanes.run_one(k);
            settle(&mut lanes, k, event, &mut results, &mut next_job, &keys_of, &mut scratch)?;
        }
    }
    results.flush();
    let Results {
        mut shards,
        mut words,
        first_row,
        ..
    } = results;
    if first_row == 0 {
        if let Some(first) = shards.first_mut() {
            first.rows = BAND;
        }
        words.resize(cols as usize, 0);
    }
    Ok(Solved { shards, words })
}

/// Acts on how lane `k`'s shard ended: a solved shard goes to the results
/// and the lane takes the next shard, if any; a failed one is tried again
/// with the next seed and 0.1% more rows.
#[inline(always)]
fn settle<'k, const K: usize>(
    lanes: &mut Lanes<K>,
    k: usize,
    event: Event,
    results: &mut Results,
    next_job: &mut impl FnMut() -> Option<Job>,
    keys_of: &impl Fn(usize) -> &'k [u64],
    scratch: &mut Scratch,
) -> Result<(), RibbonError> {
    let Some(job) = lanes.jobs.get(k).copied().flatten() else {
        return Ok(());
    };
    let follow = match event {
        Event::Solved => {
            if let Some(band) = lanes.bands.get(k) {
                results.solved(job, band);
            }
            next_job()
        }
        Event::Failed => Some(job.retry()?),
    };
    match follow {
        Some(job) => {
            lanes.start(k, job, keys_of(job.shard), scratch)?;
        }
        None => {
            if let Some(slot) = lanes.jobs.get_mut(k) {
                *slot = None;
            }
        }
    }
    Ok(())
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

/// Solves one shard on its own (the tests' way in): its shard entry and
/// its words from its own row 0.
#[cfg(test)]
fn solve_shard(keys: &[u64], cols: u32, index: u64) -> Result<(Shard, Vec<u128>), RibbonError> {
    let how = Build::Compact;
    let mut lanes = Lanes::<1>::new();
    let mut scratch = Scratch::default();
    let mut job = Job {
        shard: index as usize,
        cseed: 0,
        rows: how.planned_rows(keys.len() as u64),
    };
    loop {
        job = lanes.start(0, job, keys, &mut scratch)?;
        if lanes.run_one(0) == Event::Solved {
            let mut words = Vec::new();
            solve(&lanes.bands[0], job.rows.div_ceil(BAND) as usize, cols, &mut words);
            let shard = Shard {
                rows: job.rows,
                cseed: job.cseed as u8,
            };
            return Ok((shard, words));
        }
        job = job.retry()?;
    }
}

#[cfg(test)]
mod tests {
    use super::super::hash::equation;
    use super::*;

    /// Whether `start` would refuse the keys at `rows` rows and seed 0
    /// before the elimination; leaves their equations in `list`.
    fn refused_early(keys: &[u64], rows: u64, scratch: &mut Scratch, list: &mut Vec<Row>) -> bool {
        count_starts(keys, 0, rows - (BAND - 1), scratch);
        let suspect = overloaded(&scratch.count[1..]);
        place_equations(keys, 0, scratch, list);
        suspect && distinct_overload(list)
    }

    /// The h2 halves, all a shard's equations use.
    fn h2s(keys: &[KeyHash]) -> Vec<u64> {
        keys.iter().map(|h| h.h2).collect()
    }

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
        let (shard, words) = solve_shard(&h2s(&keys), 5, 0).unwrap();
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

    /// The equations come out sorted by start row, each as `equation`
    /// gives it.
    #[test]
    fn equations_are_sorted_and_exact() {
        let keys = hashes(2000, 4);
        let mut out = Vec::new();
        equations(&h2s(&keys), 3, 1900, &mut Scratch::default(), &mut out);
        assert!(out.windows(2).all(|w| w[0].start <= w[1].start));
        let mut want: Vec<Row> = keys
            .iter()
            .map(|&h| {
                let e = equation(h, 3, 1900);
                Row {
                    lo: e.coef as u64,
                    hi: (e.coef >> 64) as u64,
                    rhs: e.fingerprint,
                    start: e.start,
                }
            })
            .collect();
        let key = |r: &Row| (r.start, r.lo, r.hi, r.rhs);
        want.sort_by_key(key);
        let mut got = out.clone();
        got.sort_by_key(key);
        assert_eq!(got, want);
    }

    /// The textbook construction, for comparison: one shard at a time,
    /// keys in the order given, u128 rows, one column at a time in back
    /// substitution.
    fn reference(hashes: &[KeyHash], cols: u32, how: Build) -> (Vec<Shard>, Vec<u128>) {
        let count = hashes.len().div_ceil(how.shard_keys() as usize).max(1) as u64;
        let (mut shards, mut words, mut first) = (Vec::new(), Vec::new(), 0u64);
        for s in 0..count {
            let keys: Vec<KeyHash> = hashes.iter().copied().filter(|&h| shard_of(h, count) == s).collect();
            let mut rows = how.planned_rows(keys.len() as u64);
            if rows == 0 {
                shards.push(Shard { rows: 0, cseed: 0 });
                continue;
            }
            let mut cseed = 0u8;
            let band = loop {
                let mut band = vec![(0u128, 0u64); rows as usize];
                let ok = keys.iter().all(|&h| {
                    let e = equation(h, cseed, rows - (BAND - 1));
                    let (mut row, mut coef, mut rhs) = (e.start as usize, e.coef, e.fingerprint);
                    loop {
                        let (c, r) = &mut band[row];
                        if *c == 0 {
                            (*c, *r) = (coef, rhs);
                            return true;
                        }
                        coef ^= *c;
                        rhs ^= *r;
                        if coef == 0 {
                            return rhs == 0;
                        }
                        row += coef.trailing_zeros() as usize;
                        coef >>= coef.trailing_zeros();
                    }
                });
                if ok {
                    break band;
                }
                cseed += 1;
                rows += rows.div_ceil(1000);
            };
            let blocks = rows.div_ceil(BAND) as usize;
            let mut local = vec![0u128; blocks * cols as usize];
            let mut state = vec![0u128; cols as usize];
            for i in (0..blocks * 128).rev() {
                let (coef, rhs) = band.get(i).copied().unwrap_or((0, 0));
                for (j, st) in state.iter_mut().enumerate() {
                    let bit = (((coef >> 1) & *st).count_ones() as u64 ^ (rhs >> j)) & 1;
                    *st = (*st << 1) | u128::from(bit);
                }
                if i % 128 == 0 {
                    local[i / 128 * cols as usize..][..cols as usize].copy_from_slice(&state);
                }
            }
            place(&mut words, &local, first, rows, cols);
            first += rows;
            shards.push(Shard { rows, cseed });
        }
        (shards, words)
    }

    /// Shards solved side by side, equations sorted, give the textbook
    /// construction's shards and words exactly, at any column count.
    #[test]
    fn lanes_agree_with_the_textbook_construction() {
        let cases = [(23_000u64, 7u32), (9_000, 64), (4_100, 1), (700, 21), (70_000, 9), (33_000, 17)];
        for how in [Build::Compact, Build::Fast] {
            for (n, cols) in cases {
                let keys = hashes(n, n);
                let solved = build(&keys, cols, how).unwrap();
                let (shards, words) = reference(&keys, cols, how);
                assert_eq!(solved.shards, shards, "{how:?} n {n}");
                assert_eq!(solved.words, words, "{how:?} n {n} cols {cols}");
            }
        }
    }

    /// The check before the elimination only ever refuses shards the
    /// elimination refuses too (it finds most of them at tight sizes), and
    /// counts a key given many times once.
    #[test]
    fn shards_refused_early_are_unsolvable() {
        let mut lanes = Lanes::<1>::new();
        let mut scratch = Scratch::default();
        let mut list = Vec::new();
        let (mut found, mut failed) = (0, 0);
        for t in 0..200u64 {
            let keys = h2s(&hashes(2000, 70_000 + t));
            // 0.5% spare: most first tries fail.
            let rows = 2010;
            let is_doomed = refused_early(&keys, rows, &mut scratch, &mut list);
            // The elimination alone, on the same equations.
            let job = Job { shard: 0, cseed: 0, rows };
            lanes.bands[0].clear();
            lanes.bands[0].resize(rows as usize, Row::default());
            lanes.lists[0].clone_from(&list);
            lanes.walks[0] = Walk::default();
            lanes.walks[0].load(&list[0]);
            lanes.jobs[0] = Some(job);
            let solved = lanes.run_one(0) == Event::Solved;
            assert!(!(is_doomed && solved), "trial {t}: doomed but solvable");
            found += usize::from(is_doomed);
            failed += usize::from(!solved);
        }
        assert!(found * 2 >= failed && failed > 50, "{found} of {failed}");
        // One key 200 times: an overload of equal equations, solvable.
        let keys = vec![12345u64; 200];
        assert!(!refused_early(&keys, 128, &mut scratch, &mut list));
        // 200 distinct keys on one start row: doomed.
        let keys: Vec<u64> = (0..200).collect();
        assert!(refused_early(&keys, 128, &mut scratch, &mut list));
    }

    /// Duplicate keys are implied equations, never a contradiction.
    #[test]
    fn duplicates_are_accepted() {
        let mut keys = hashes(500, 1);
        keys.extend(hashes(500, 1));
        let solved = build(&keys, 3, Build::Fast).unwrap();
        assert_eq!(solved.shards.len(), 1);
    }

    /// How often a first try succeeds at the planned size, per shard size,
    /// how many of the failures are found before the elimination,
    /// and how far into the shard the elimination meets the others (prints
    /// a table; run with `--release -- --ignored --nocapture` to re-derive
    /// the constants of [`Build`]).
    #[test]
    #[ignore]
    fn success_rates() {
        let mut lanes = Lanes::<1>::new();
        let mut scratch = Scratch::default();
        let mut list = Vec::new();
        for n in [1000u64, 4000, 16_000, 32_000] {
            for spare_ppm in [8000u64, 9000, 10_000, 12_000, 15_000, 20_000, 25_000] {
                let rows = n + n * spare_ppm / 1_000_000;
                let trials = 200u64;
                let (mut ok, mut found, mut late, mut at) = (0, 0, 0, 0.0);
                for t in 0..trials {
                    let keys = h2s(&hashes(n, 1000 + t));
                    if refused_early(&keys, rows, &mut scratch, &mut list) {
                        found += 1;
                        continue;
                    }
                    let job = Job {
                        shard: 0,
                        cseed: 0,
                        rows,
                    };
                    lanes.start(0, job, &keys, &mut scratch).unwrap();
                    if lanes.run_one(0) == Event::Solved {
                        ok += 1;
                    } else {
                        late += 1;
                        at += lanes.walks[0].idx as f64 / n as f64;
                    }
                }
                println!(
                    "n {n:6} spare {:5.2}%: first try solves {ok}/{trials}; of {} failures {found} found before the elimination, {late} by it at {:.0}% of the keys",
                    spare_ppm as f64 / 1e4,
                    found + late,
                    100.0 * at / f64::from(late.max(1)),
                );
            }
        }
    }
}
