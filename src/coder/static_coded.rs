//! Static-coded payloads (format type 4, version 3): the bit array in
//! blocks whose count of ones travels in a table at the front, so each
//! block's model is built once, before its first symbol, instead of at
//! every doubling as in type 1 ([`super::encode`]).
//!
//! Each block is coded in one of two modes:
//!
//! * **runs** (mode 0): the run coder of type 1 with the fixed model
//!   `build(B, ones)`; the mode for sparse blocks;
//! * **bytes** (mode 1): one rANS step per byte from two 16-symbol nibble
//!   tables (module `coder::bytes`); the mode for dense blocks, where runs are
//!   short and a run coder spends a step every few bits;
//!
//! and a block of all 0s or all 1s takes no stream at all. The block size is
//! chosen per frame (`block_log`), so that sparse multi-megabit arrays do
//! not pay a block's fixed cost every 2^23 bits. `docs/FORMAT.md`, "Type
//! 4", is the normative description.

use crate::prelude::*;
use super::{block, bytes, threads_for, CoderError};
use crate::wire::varint;

/// Smallest `block_log` a payload may declare (blocks of 2^16 bits).
pub const MIN_BLOCK_LOG: u8 = 16;
/// Largest `block_log` a payload may declare (blocks of 2^40 bits).
pub const MAX_BLOCK_LOG: u8 = 40;
/// The encoder's usual block size, 2^23 bits (1 MiB of filter), as type 1.
pub const DEFAULT_BLOCK_LOG: u8 = 23;
/// The encoder makes blocks larger than the default when they would carry
/// less than this many coded bytes each on average: a block's fixed cost
/// (8 lanes' flushed states, its table entry and count, about 50 bytes)
/// then stays near 0.005% of it.
const MIN_CODED_BLOCK_BYTES: u64 = 1 << 20;

/// How a block is coded (the table entry's mode byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Mode 0: runs with a fixed model (and every constant block).
    Runs,
    /// Mode 1: one coding step per byte.
    Bytes,
}

impl Mode {
    /// The table entry's mode byte.
    const fn id(self) -> u8 {
        match self {
            Mode::Runs => 0,
            Mode::Bytes => 1,
        }
    }

    /// The mode of a table entry's mode byte, if it has one.
    const fn from_id(id: u8) -> Option<Mode> {
        match id {
            0 => Some(Mode::Runs),
            1 => Some(Mode::Bytes),
            _ => None,
        }
    }
}

/// The encoder's choices: the block size and which mode each block takes.
/// [`Choice::default`] is what [`encode`] does; the others exist so that
/// tests and fuzzers can reach every path of the decoder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Choice {
    /// Blocks of 2^block_log bits; `None` picks as [`encode`] does.
    pub block_log: Option<u8>,
    /// The mode of every non-constant block; `None` picks by density.
    pub mode: Option<Mode>,
}

/// The mode [`encode`] picks for a non-constant block: bytes when the
/// minority density is at least 1/16. Below that a byte step would code
/// mostly majority bits, and the run coder takes fewer steps (and its
/// model loses less to the 12-bit quantisation at low density).
pub fn mode_for(bits: u64, ones: u64) -> Mode {
    let minority = ones.min(bits.saturating_sub(ones));
    if minority.saturating_mul(16) >= bits {
        Mode::Bytes
    } else {
        Mode::Runs
    }
}

/// Number of blocks of 2^block_log bits in an m-bit array.
fn block_count(m: u64, block_log: u8) -> u64 {
    m.div_ceil(1u64 << block_log.min(63)).max(1)
}

/// log2(x) in Q16 (x ≥ 1), by the bit-by-bit squaring method: the integer
/// part from the leading bit, then 16 fraction bits, each from squaring the
/// mantissa (kept in Q62).
// Encoder-side estimate only: the shifts are below 64 and the squares of
// a Q62 mantissa below 2 fit in u128.
#[allow(clippy::arithmetic_side_effects)]
fn log2_q16(x: u64) -> u64 {
    let x = x.max(1);
    let int = u64::from(63 - x.leading_zeros());
    // Mantissa in [1, 2) as Q62.
    let mut m = u128::from(x) << (62 - int);
    let mut frac = 0u64;
    for _ in 0..16 {
        m = (m * m) >> 62;
        frac <<= 1;
        if m >= 2 << 62 {
            m >>= 1;
            frac |= 1;
        }
    }
    int << 16 | frac
}

/// Coded bits of a block with `minority` minority bits among `bits`,
/// estimated as its entropy bits·H(minority/bits). It only sizes blocks.
// Encoder-side estimate: logs are below 2^22 in Q16, counts below 2^56, so
// the products fit in u128.
#[allow(clippy::arithmetic_side_effects)]
fn coded_bits_estimate(bits: u64, minority: u64) -> u64 {
    let majority = bits.saturating_sub(minority);
    let l = log2_q16(bits);
    let term = |c: u64| {
        if c == 0 {
            0
        } else {
            u128::from(c) * u128::from(l.saturating_sub(log2_q16(c)))
        }
    };
    ((term(minority) + term(majority)) >> 16) as u64
}

/// The ones of each 2^23-bit sub-block of the first m bits of `words`
/// (bits past m ignored).
fn sub_block_ones(words: &[u64], m: u64, threads: usize) -> Vec<u64> {
    let sub = 1u64 << DEFAULT_BLOCK_LOG;
    let blocks: Vec<u64> = (0..block_count(m, DEFAULT_BLOCK_LOG)).collect();
    // Counted on the encoder's threads: it is a pass over the whole array.
    super::map_threaded(&blocks, threads, |(): &mut (), &b| {
        let from = b.saturating_mul(sub);
        let to = from.saturating_add(sub).min(m);
        block::count_ones_range(words, from, to)
    })
}

/// The `block_log` [`encode`] picks: 23, or the smallest larger value
/// (at most 40) whose blocks carry at least 1 MiB of coded data each on
/// average, so that each block's fixed cost (flush, table entry, count)
/// stays near 0.005% of it; but an array with at least 1 MiB of coded data
/// keeps two blocks. `sub` holds the ones of each 2^23-bit sub-block.
fn pick_block_log(m: u64, sub: &[u64]) -> u8 {
    let ones: u64 = sub.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let minority = ones.min(m.saturating_sub(ones));
    let total = coded_bits_estimate(m, minority) / 8;
    let mut log = DEFAULT_BLOCK_LOG;
    while log < MAX_BLOCK_LOG {
        let blocks = block_count(m, log);
        if blocks == 1 || total.checked_div(blocks).unwrap_or(0) >= MIN_CODED_BLOCK_BYTES {
            break;
        }
        log = log.saturating_add(1);
    }
    // An array with at least 1 MiB of coded data keeps two blocks, so that
    // two threads share its decoding (a 3.5 MB filter at density 0.133
    // would otherwise be one block of ~2 MB).
    if log > DEFAULT_BLOCK_LOG && block_count(m, log) == 1 && total >= MIN_CODED_BLOCK_BYTES {
        // The smallest log with ⌈m / 2^log⌉ = 2: one below ⌈log2 m⌉.
        let ceil_log2 = 64u32.saturating_sub(m.saturating_sub(1).leading_zeros());
        log = (ceil_log2.saturating_sub(1) as u8).max(DEFAULT_BLOCK_LOG);
    }
    log
}

/// Encodes the first m bits of `words` as a type-4 payload appended to
/// `out`, on up to one thread per block. Bits at positions ≥ m are ignored.
///
/// # Panics
/// If `words` holds fewer than ⌈m/64⌉ words (a caller bug: every
/// [`BloomFilter`](crate::BloomFilter) holds exactly that many).
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn encode(words: &[u64], m: u64, out: &mut Vec<u8>) {
    encode_with(words, m, out, encode_threads(m), Choice::default());
}

/// Threads [`encode`] uses for an m-bit array: one per 2^23-bit
/// sub-block, at most the machine's cores.
pub(crate) fn encode_threads(m: u64) -> usize {
    threads_for(block_count(m, DEFAULT_BLOCK_LOG))
}

/// [`encode`] with an explicit thread count and choices. A `block_log`
/// outside [`MIN_BLOCK_LOG`]..=[`MAX_BLOCK_LOG`] is clamped into it.
///
/// # Panics
/// As [`encode`].
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn encode_with(words: &[u64], m: u64, out: &mut Vec<u8>, threads: usize, choice: Choice) {
    let parts = encode_parts(words, m, threads, choice);
    out.reserve(parts.len());
    parts.append_to(out);
}

/// A payload in pieces: block_log and the table, then each block's stream,
/// so that a frame can take them without an intermediate payload copy.
pub(crate) struct Parts {
    table: Vec<u8>,
    streams: Vec<Vec<u8>>,
}

impl Parts {
    /// Bytes of the payload.
    pub(crate) fn len(&self) -> usize {
        self.streams
            .iter()
            .fold(self.table.len(), |n, s| n.saturating_add(s.len()))
    }

    /// Appends the payload to `out`.
    pub(crate) fn append_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.table);
        for s in &self.streams {
            out.extend_from_slice(s);
        }
    }
}

/// [`encode_with`], as pieces.
// Encoder: it codes the caller's own filter, never received bytes.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn encode_parts(words: &[u64], m: u64, threads: usize, choice: Choice) -> Parts {
    assert!(
        words.len() as u64 >= m.div_ceil(64),
        "encode: {} words cannot hold {m} bits",
        words.len()
    );
    let sub = sub_block_ones(words, m, threads);
    let log = choice
        .block_log
        .map_or_else(|| pick_block_log(m, &sub), |l| l.clamp(MIN_BLOCK_LOG, MAX_BLOCK_LOG));
    let size = 1u64 << log;
    // (first bit, bits, ones, mode) of each block.
    let blocks: Vec<(u64, u64, u64, Mode)> = (0..block_count(m, log))
        .map(|b| {
            let from = b * size;
            let bits = (m - from.min(m)).min(size);
            let ones = if log >= DEFAULT_BLOCK_LOG {
                // A union of whole sub-blocks (the last one cut at m).
                let per = 1u64 << (log - DEFAULT_BLOCK_LOG);
                let first = (b * per) as usize;
                sub.iter().skip(first).take(per as usize).sum()
            } else {
                block::count_ones_range(words, from, from + bits)
            };
            let mode = if ones == 0 || ones == bits {
                Mode::Runs
            } else {
                choice.mode.unwrap_or_else(|| mode_for(bits, ones))
            };
            (from, bits, ones, mode)
        })
        .collect();
    // Each thread keeps one set of scratch buffers for its blocks.
    let streams = super::map_threaded(
        &blocks,
        threads,
        |(scratch, rev): &mut (block::Scratch, Vec<u32>), &(from, bits, ones, mode)| {
            let mut v = Vec::new();
            // Blocks start at multiples of 2^16 bits: whole words.
            let words = words.get((from / 64) as usize..).unwrap_or_default();
            if ones != 0 && ones != bits {
                match mode {
                    Mode::Runs => block::encode_block_fixed(words, bits, ones, &mut v, scratch),
                    Mode::Bytes => bytes::encode_block(words, bits, ones, &mut v, rev),
                }
            }
            v
        },
    );
    let mut table = vec![log];
    for (i, (&(_, _, ones, mode), s)) in blocks.iter().zip(&streams).enumerate() {
        table.push(mode.id());
        varint::put(&mut table, ones);
        if i + 1 < blocks.len() {
            varint::put(&mut table, s.len() as u64);
        }
    }
    Parts { table, streams }
}

/// One block of a payload, as its table entry declares it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    mode: Mode,
    ones: u64,
    bits: u64,
    /// The stream's byte range in the payload.
    start: usize,
    end: usize,
}

impl Entry {
    /// Bytes of the block's stream.
    #[cfg(feature = "std")]
    pub(crate) fn stream_len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// The block's stream in `payload` (the one its table came from).
    pub(crate) fn stream<'p>(&self, payload: &'p [u8]) -> &'p [u8] {
        payload.get(self.start..self.end).unwrap_or_default()
    }

    /// Words of the block's bits.
    pub(crate) fn words(&self) -> usize {
        self.bits.div_ceil(64) as usize
    }

    /// All 0s or all 1s: no stream.
    fn is_constant(&self) -> bool {
        self.ones == 0 || self.ones == self.bits
    }
}

/// Reads a payload's bytes for [`parse_table`], a byte at a time, never
/// past the payload's `len` bytes.
struct TableBytes<F> {
    next: F,
    at: usize,
    len: usize,
}

/// A block-table error at payload byte `offset`.
fn table_error(offset: usize, reason: &'static str) -> CoderError {
    CoderError::BlockTable { offset, reason }
}

const PAST: &str = "the block table runs past the payload";

impl<F: FnMut() -> Option<u8>> TableBytes<F> {
    fn byte(&mut self) -> Result<u8, CoderError> {
        if self.at >= self.len {
            return Err(table_error(self.at, PAST));
        }
        let b = (self.next)().ok_or(table_error(self.at, PAST))?;
        self.at = self.at.saturating_add(1);
        Ok(b)
    }

    /// A varint (at most 10 bytes; shortest form, as every payload varint).
    fn varint(&mut self) -> Result<u64, CoderError> {
        let at = self.at;
        let mut bytes = [0u8; 10];
        let mut n = 0usize;
        for slot in bytes.iter_mut() {
            let b = self.byte()?;
            *slot = b;
            n = n.saturating_add(1);
            if b & 0x80 == 0 {
                break;
            }
        }
        varint::get(bytes.get(..n).unwrap_or_default())
            .map(|(v, _)| v)
            .map_err(|reason| table_error(at, reason))
    }
}

/// Reads and checks a payload's block table (docs/FORMAT.md, "Type 4")
/// from `next`, which yields the payload's bytes in order (None: no more,
/// or the caller's reader failed): every entry, then every stream range
/// against the payload's `len` bytes and every constant block's empty
/// stream, before any stream is decoded. The in-memory decoder and the
/// streamed reader (`format::stream`) share it. Memory: one entry per
/// block, and a block's entry takes at least two payload bytes, so the
/// table is bounded by the payload.
pub(crate) fn parse_table(
    m: u64,
    len: usize,
    next: impl FnMut() -> Option<u8>,
) -> Result<Vec<Entry>, CoderError> {
    let mut src = TableBytes { next, at: 0, len };
    let log = src.byte()?;
    if !(MIN_BLOCK_LOG..=MAX_BLOCK_LOG).contains(&log) {
        return Err(table_error(0, "block_log is outside 16..=40"));
    }
    let size = 1u64 << log;
    let nb = block_count(m, log);
    if nb > (len / 2) as u64 {
        return Err(table_error(1, PAST));
    }
    let mut entries = Vec::with_capacity(nb as usize);
    let mut lens = Vec::with_capacity(nb as usize);
    for b in 0..nb {
        let mode_at = src.at;
        let mode = Mode::from_id(src.byte()?)
            .ok_or(table_error(mode_at, "block mode is neither 0 (runs) nor 1 (bytes)"))?;
        let ones = src.varint()?;
        let bits = m.saturating_sub(b.saturating_mul(size)).min(size);
        if ones > bits {
            return Err(table_error(mode_at, "a block declares more ones than it has bits"));
        }
        let entry = Entry {
            mode,
            ones,
            bits,
            start: 0,
            end: 0,
        };
        if entry.is_constant() && mode != Mode::Runs {
            return Err(table_error(mode_at, "a constant block must have mode 0"));
        }
        let stream_len = if b.saturating_add(1) < nb {
            Some(src.varint()?)
        } else {
            None
        };
        entries.push(entry);
        lens.push((stream_len, src.at));
    }
    let mut pos = src.at;
    for (e, &(stream_len, len_at)) in entries.iter_mut().zip(&lens) {
        let end = match stream_len {
            Some(l) => usize::try_from(l)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .filter(|&end| end <= len)
                .ok_or(table_error(len_at, "block lengths exceed the payload"))?,
            None => len,
        };
        if e.is_constant() && end != pos {
            return Err(table_error(len_at, "a constant block must have an empty stream"));
        }
        e.start = pos;
        e.end = end;
        pos = end;
    }
    Ok(entries)
}

/// [`parse_table`] of a payload in memory.
pub(crate) fn read_table(payload: &[u8], m: u64) -> Result<Vec<Entry>, CoderError> {
    let mut bytes = payload.iter().copied();
    parse_table(m, payload.len(), || bytes.next())
}

/// Decodes a type-4 payload into `words`, which must hold exactly ⌈m/64⌉
/// words; whatever they held is overwritten (each block's thread writes
/// its own words, so the caller need not clear them first). On up to one
/// thread per block (at most the machine's cores). On an error their
/// content is unspecified.
///
/// Memory beyond `words`: one 32 KiB decode table per thread in flight and
/// about 160 bytes per block (`tests/alloc_static.rs`). With `std` each
/// thread keeps its table's buffer after the call, for its next block.
///
/// With the `simd` feature, on a machine with AVX-512, groups of four or
/// more large mode-1 blocks decode together in vectors (when there are
/// four such blocks per thread): the same words and the same errors,
/// faster ([`decode_portable`] never does this).
///
/// # Errors
/// Any [`CoderError`]: the payload is not exactly what [`encode_with`]
/// produces for some m-bit array and some choice.
pub fn decode(payload: &[u8], m: u64, words: &mut [u64]) -> Result<(), CoderError> {
    let blocks = payload
        .first()
        .filter(|l| (MIN_BLOCK_LOG..=MAX_BLOCK_LOG).contains(l))
        .map_or(1, |&l| block_count(m, l));
    decode_work(payload, m, words, threads_for(blocks), true).map(|_| ())
}

/// [`decode`] with an explicit thread count.
///
/// # Errors
/// As [`decode`].
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn decode_with_threads(
    payload: &[u8],
    m: u64,
    words: &mut [u64],
    threads: usize,
) -> Result<(), CoderError> {
    decode_work(payload, m, words, threads, true).map(|_| ())
}

/// [`decode_with_threads`] with the portable block decoder only, never
/// the group decoder (the `simd` feature's): for comparisons and the fuzz
/// targets. The results are the same, bit for bit and error for error.
/// With `simd`, on a machine with AVX-512, each block's decode table is
/// still filled with 64-byte stores, here as in every decoder: the same
/// entries as the portable fill (a test compares the two fills entry by
/// entry across densities).
///
/// # Errors
/// As [`decode`].
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn decode_portable(
    payload: &[u8],
    m: u64,
    words: &mut [u64],
    threads: usize,
) -> Result<(), CoderError> {
    decode_work(payload, m, words, threads, false).map(|_| ())
}

/// [`decode`] on the calling thread, returning the decoder's work in coding
/// steps (one per byte in mode 1, as type 1 in mode 0, one per constant
/// block): docs/HARDENING.md, "Cost".
///
/// # Errors
/// As [`decode`].
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn decode_counting(payload: &[u8], m: u64, words: &mut [u64]) -> Result<u64, CoderError> {
    decode_work(payload, m, words, 1, true)
}

fn decode_work(
    payload: &[u8],
    m: u64,
    words: &mut [u64],
    threads: usize,
    vectors: bool,
) -> Result<u64, CoderError> {
    super::check_output(m, words)?;
    let entries = read_table(payload, m)?;
    // Blocks are 2^log ≥ 2^16 bits, whole words: split the output into
    // per-block slices (they add up to ⌈m/64⌉ words, checked above).
    let mut blocks: Vec<Job<'_>> = Vec::with_capacity(entries.len());
    let mut rest = words;
    for (b, e) in (0u64..).zip(entries) {
        let wn = e.words();
        let (head, tail) = rest.split_at_mut_checked(wn).unwrap_or_default();
        rest = tail;
        blocks.push((b, e, head, e.stream(payload)));
    }
    let jobs = group_jobs(&mut blocks, threads, vectors);
    let run = |job: &mut &mut [Job<'_>]| run_job(job);
    #[cfg(feature = "std")]
    if threads > 1 && jobs.len() >= 2 {
        return super::decode_jobs_threaded(jobs, threads, run);
    }
    let _ = threads;
    let mut jobs = jobs;
    jobs.iter_mut()
        .try_fold(0u64, |n, job| Ok(n.saturating_add(run(job)?)))
}

/// A block to decode: its index, table entry, output words and stream.
type Job<'a> = (u64, Entry, &'a mut [u64], &'a [u8]);

/// The blocks as the units the threads take, in block order: one block
/// each, or (with the `simd` feature, on a machine with AVX-512) groups
/// of consecutive 8-lane mode-1 blocks that the vector decoder takes
/// together, when there are enough of them for every thread to get a
/// group: the vectors need four blocks in flight, and fewer decode slower
/// than the portable decoder. A run of such blocks is cut into groups of
/// [`GROUP`](super::bytes_simd::GROUP), the last taking the one to three
/// left over. Each unit is a slice of `blocks`: 16 bytes per unit.
fn group_jobs<'s, 'a>(
    blocks: &'s mut [Job<'a>],
    threads: usize,
    vectors: bool,
) -> Vec<&'s mut [Job<'a>]> {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    let (group, fits) = {
        use super::bytes_simd::{available, fits, GROUP};
        let fits = |b: &Job<'_>| b.1.mode == Mode::Bytes && fits(b.1.bits, b.1.ones);
        let eligible = blocks.iter().filter(|b| fits(b)).count();
        let on = vectors && eligible >= GROUP.saturating_mul(threads.max(1)) && available();
        (if on { GROUP } else { 0 }, fits)
    };
    #[cfg(not(all(feature = "simd", target_arch = "x86_64")))]
    let (group, fits) = (0usize, |_: &Job<'_>| false);
    let _ = (threads, vectors);
    let mut jobs = Vec::with_capacity(blocks.len());
    let mut rest = blocks;
    while !rest.is_empty() {
        let run = if group > 0 {
            rest.iter().take_while(|b| fits(b)).count()
        } else {
            0
        };
        // A run of 4–7 is one group; a longer one gives a group of 4 and
        // stays at least 4 long.
        let take = match run {
            r if group > 0 && r >= group.saturating_mul(2) => group,
            r if group > 0 && r >= group => r,
            _ => 1,
        };
        let (head, tail) = core::mem::take(&mut rest).split_at_mut(take);
        jobs.push(head);
        rest = tail;
    }
    jobs
}

/// Decodes a unit of [`group_jobs`]: its steps, or the first error in
/// block order.
fn run_job(job: &mut [Job<'_>]) -> Result<u64, CoderError> {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if job.len() >= super::bytes_simd::GROUP {
        return decode_group(job);
    }
    job.iter_mut()
        .try_fold(0u64, |n, b| Ok(n.saturating_add(decode_block(b.0, &b.1, b.2, b.3)?)))
}

/// Decodes a group of blocks with the vector decoder, then makes each
/// block's result as [`decode_block`] does: the first error in block
/// order, or the steps.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
fn decode_group(group: &mut [Job<'_>]) -> Result<u64, CoderError> {
    use super::bytes_simd::Member;
    let mut members: Vec<Member<'_>> = group
        .iter_mut()
        .map(|b| Member {
            data: b.3,
            bits: b.1.bits,
            ones: b.1.ones,
            words: &mut *b.2,
        })
        .collect();
    let results = super::bytes_simd::decode_group(&mut members);
    drop(members);
    group
        .iter()
        .zip(results)
        .try_fold(0u64, |n, (b, r)| Ok(n.saturating_add(bytes_result(b.0, &b.1, b.2, r)?)))
}

/// Writes a constant block: `bits` 0s, or 1s (the bits past them in the
/// last word stay 0).
fn constant_block(words: &mut [u64], bits: u64, ones: bool) {
    words.fill(0);
    if ones {
        block::fill_ones(words, 0, bits);
    }
}

/// Decodes block `b` (its entry `e`, its stream) into `words` (overwritten) and
/// checks its count of ones; returns its coding steps. Errors carry payload
/// offsets (the stream starts at `e.start`).
pub(crate) fn decode_block(
    b: u64,
    e: &Entry,
    words: &mut [u64],
    stream: &[u8],
) -> Result<u64, CoderError> {
    if e.is_constant() {
        constant_block(words, e.bits, e.ones != 0);
        return Ok(1);
    }
    match e.mode {
        Mode::Runs => {
            let (steps, ones) = block::decode_block_fixed(stream, e.bits, e.ones, words)
                .map_err(|err| err.shifted(e.start))?;
            check_ones(b, e, ones)?;
            Ok(steps)
        }
        Mode::Bytes => {
            let r = bytes::decode_block(stream, e.bits, e.ones, words);
            bytes_result(b, e, words, r)
        }
    }
}

/// Block `b`'s decoded count of ones against its entry's.
fn check_ones(b: u64, e: &Entry, decoded: u64) -> Result<(), CoderError> {
    if decoded != e.ones {
        return Err(CoderError::CountMismatch {
            block: b,
            declared: e.ones,
            decoded,
        });
    }
    Ok(())
}

/// A mode-1 block's result as its coder (the portable or the vector one)
/// gave it for `words`, made block `b`'s: payload offsets, and the count of
/// ones checked.
fn bytes_result(
    b: u64,
    e: &Entry,
    words: &[u64],
    r: Result<u64, CoderError>,
) -> Result<u64, CoderError> {
    let steps = r.map_err(|err| err.shifted(e.start))?;
    check_ones(b, e, block::count_ones_range(words, 0, e.bits))?;
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::coder::tests::{splitmix, GARBAGE};

    /// m bits; block i of 2^16 has density `dens[i % dens.len()]`.
    fn array(m: u64, dens: &[f64], seed: u64) -> Vec<u64> {
        let mut s = seed;
        let mut w = vec![0u64; m.div_ceil(64) as usize];
        for i in 0..m {
            let d = dens[((i >> 16) as usize) % dens.len()];
            if ((splitmix(&mut s) >> 11) as f64) < d * (1u64 << 53) as f64 {
                w[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        w
    }

    fn round_trip(w: &[u64], m: u64, choice: Choice) -> Vec<u8> {
        let mut out = Vec::new();
        encode_with(w, m, &mut out, 1, choice);
        for threads in [1, 2, 3] {
            // Zeroed words, then garbage: the decoder overwrites them.
            let fill = [0, u64::MAX, GARBAGE][threads - 1];
            let mut back = vec![fill; w.len()];
            decode_with_threads(&out, m, &mut back, threads).unwrap();
            assert!(back == w, "m={m} {choice:?} threads={threads}");
        }
        out
    }

    #[test]
    fn every_mode_block_size_and_constant_block_round_trips() {
        let dens = [0.0, 0.003, 0.13, 0.5, 1.0, 0.9];
        for m in [1u64, 100, 65_536, 65_537, 6 * 65_536 + 77, 20 * 65_536] {
            let w = array(m, &dens, m);
            for mode in [None, Some(Mode::Runs), Some(Mode::Bytes)] {
                for block_log in [None, Some(16), Some(17)] {
                    round_trip(&w, m, Choice { block_log, mode });
                }
            }
        }
    }

    #[test]
    fn encoder_picks_bytes_for_dense_blocks_and_larger_blocks_when_sparse() {
        assert_eq!(mode_for(1 << 20, 1 << 16), Mode::Bytes);
        assert_eq!(mode_for(1 << 20, (1 << 16) - 1), Mode::Runs);
        assert_eq!(mode_for(1 << 20, (1 << 20) - (1 << 16)), Mode::Bytes);
        // 10^9 bits at density 0.001 code to ~1.43 MB: two blocks (2^29),
        // the fewest that two threads can share.
        let m = 1_000_000_000u64;
        let per_sub = (1u64 << 23) / 1000;
        let sub = vec![per_sub; block_count(m, 23) as usize];
        assert_eq!(pick_block_log(m, &sub), 29);
        // 10^8 bits at density 0.001 (~143 KB): one block.
        let m = 100_000_000u64;
        let sub = vec![per_sub; block_count(m, 23) as usize];
        assert_eq!(pick_block_log(m, &sub), 27);
        // 2.8·10^7 bits at density 0.133 (~2 MB): two blocks of 2^24.
        let m = 28_000_000u64;
        let sub = vec![(1u64 << 23) * 133 / 1000; block_count(m, 23) as usize];
        assert_eq!(pick_block_log(m, &sub), 24);
        // The 17.5 MB filter (density 0.133, ~9.9 MB coded): 2^24-bit
        // blocks (9 of them) carry ~1.1 MB each; 2^23 (17) would not.
        let m = 140_000_000u64;
        let sub = vec![(1u64 << 23) * 133 / 1000; block_count(m, 23) as usize];
        assert_eq!(pick_block_log(m, &sub), 24);
        // Small arrays keep the default (one block).
        assert_eq!(pick_block_log(80_000, &[40_000]), 23);
    }

    #[test]
    fn the_size_estimate_is_the_entropy() {
        for (x, want) in [(1u64, 0.0), (2, 1.0), (3, 1.584_962_5), (1000, 9.965_784), (1 << 40, 40.0)] {
            let got = log2_q16(x) as f64 / 65_536.0;
            assert!((got - want).abs() < 2e-5, "log2({x}) = {got}, want {want}");
        }
        // 2^20 bits at density 1/8: H = 0.543564 bits per bit.
        let est = coded_bits_estimate(1 << 20, 1 << 17) as f64;
        assert!((est / (1u64 << 20) as f64 - 0.543_564).abs() < 1e-4, "{est}");
    }

    #[test]
    fn table_errors_are_found_before_any_stream_is_decoded() {
        let m = 3 * 65_536;
        let w = array(m, &[0.2, 0.0, 0.6], 3);
        let good = round_trip(&w, m, Choice { block_log: Some(16), mode: None });
        let mut back = vec![0u64; w.len()];
        let err = |p: &[u8]| {
            let mut b = vec![0u64; w.len()];
            decode_with_threads(p, m, &mut b, 1).unwrap_err()
        };
        // block_log out of range, empty payload.
        for log in [15u8, 41] {
            let mut p = good.clone();
            p[0] = log;
            assert!(matches!(err(&p), CoderError::BlockTable { offset: 0, .. }));
        }
        assert!(matches!(err(&[]), CoderError::BlockTable { offset: 0, .. }));
        // Mode 2.
        let mut p = good.clone();
        p[1] = 2;
        assert!(matches!(err(&p), CoderError::BlockTable { offset: 1, .. }));
        // Block 1 is constant (all 0): mode 1 there is refused.
        let entries = read_table(&good, m).unwrap();
        assert_eq!(entries[1].ones, 0);
        let mode_at = {
            let mut at = 1;
            at += 1;
            at += varint::get(&good[at..]).unwrap().1;
            at += varint::get(&good[at..]).unwrap().1;
            at
        };
        let mut p = good.clone();
        p[mode_at] = 1;
        assert!(matches!(err(&p), CoderError::BlockTable { offset, .. } if offset == mode_at));
        // A truncated table.
        assert!(matches!(err(&good[..3]), CoderError::BlockTable { .. }));
        // The good payload decodes.
        decode_with_threads(&good, m, &mut back, 1).unwrap();
    }

    #[test]
    fn the_vector_and_portable_decoders_agree_on_payloads_and_errors() {
        // Eight full blocks of 2^22 bits and a partial one, in mode 1: on
        // an AVX-512 machine one thread takes two groups of four (and two
        // threads one group each), then the partial block alone.
        let m = (8u64 << 22) + 12_345;
        let w = array(m, &[0.133, 0.3, 0.5, 0.07, 0.9], 21);
        let choice = Choice {
            block_log: Some(22),
            mode: Some(Mode::Bytes),
        };
        let good = round_trip(&w, m, choice);
        let entries = read_table(&good, m).unwrap();
        assert_eq!(entries.len(), 9);
        assert!(entries.iter().all(|e| e.mode == Mode::Bytes));
        let agree = |p: &[u8]| {
            let mut want = vec![0u64; w.len()];
            let r = decode_portable(p, m, &mut want, 1);
            for threads in [1, 2, 3] {
                let mut got = vec![GARBAGE; w.len()];
                assert_eq!(decode_with_threads(p, m, &mut got, threads), r, "{threads}");
                if r.is_ok() {
                    assert!(got == want, "{threads}");
                }
            }
            r
        };
        assert_eq!(agree(&good), Ok(()));
        // Damage in blocks 6 and 1 (the second group and the first): the
        // error is block 1's, as the portable decoder reports it.
        let mut bad = good.clone();
        for b in [6, 1] {
            let e = entries[b];
            bad[(e.start + e.end) / 2] ^= 0x24;
            bad[e.start + 70] ^= 0x81;
        }
        let r = agree(&bad);
        assert!(r.is_err());
        // The payload cut short: the last (partial) block's stream ends
        // early, after two groups that decode whole.
        let mut cut = good.clone();
        cut.truncate(good.len() - 5);
        assert!(agree(&cut).is_err());
    }

    #[test]
    fn a_wrong_count_of_ones_is_refused() {
        // One block of 2^16 bits at density 0.3 in bytes mode: declare one
        // more 1 than it has. The nibble tables change with the count, so
        // the stream then fails one way or another: never a success.
        let m = 65_536;
        let w = array(m, &[0.3], 9);
        for mode in [Mode::Bytes, Mode::Runs] {
            let good = round_trip(&w, m, Choice { block_log: Some(16), mode: Some(mode) });
            let (ones, used) = varint::get(&good[2..]).unwrap();
            let mut p = vec![good[0], good[1]];
            varint::put(&mut p, ones + 1);
            p.extend_from_slice(&good[2 + used..]);
            let mut back = vec![0u64; w.len()];
            assert!(decode_with_threads(&p, m, &mut back, 1).is_err(), "{mode:?}");
        }
        // A stream that decodes cleanly to another count: the array coded
        // with the tables of `ones + 1` (the encoder takes any table).
        let ones = block::count_ones_range(&w, 0, m);
        let mut stream = Vec::new();
        bytes::encode_block(&w, m, ones + 1, &mut stream, &mut Vec::new());
        let mut p = vec![16u8, 1];
        varint::put(&mut p, ones + 1);
        p.extend_from_slice(&stream);
        let mut back = vec![0u64; w.len()];
        let r = decode_with_threads(&p, m, &mut back, 1);
        assert!(
            matches!(r, Err(CoderError::CountMismatch { block: 0, declared, decoded }) if declared == ones + 1 && decoded == ones),
            "{r:?}"
        );
    }
}
