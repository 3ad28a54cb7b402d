//! Mode 1 of the static coder (format type 4): one rANS step per byte.
//!
//! Where the minority density is high (from about 1/16 up to 1/2) a run
//! coder spends a coding step on every few bits. Here each step codes a
//! whole byte: the pair of its nibbles, each drawn from one 16-symbol table
//! that follows from the block's declared density (the bits of a Bloom
//! filter are independent, so a nibble with c ones has probability
//! p^c·(1 − p)^(4−c), and a byte is the product of its two nibbles). The
//! two 12-bit tables make a 24-bit slot space in which a byte owns the
//! rectangle of its nibbles' slot ranges, so one table of 4096 entries (32
//! KiB, in L1) decodes both nibbles; a byte table at 16-bit precision would
//! lose 0.015% to rounding at density 0.13, and at 24 bits would not fit in
//! cache. States are 64-bit with 32-bit renormalisation (the 24-bit
//! precision needs the room), and up to 8 lanes interleave.
//! `docs/FORMAT.md`, "Type 4", is the normative description.

use crate::prelude::*;
use super::block::reciprocal;
use super::CoderError;

/// Lower bound of a state (I1: L ≤ x < L·2^32).
const L: u64 = 1 << 31;
/// Byte b (bits 8b … 8b + 7) of a word is byte `b ^ NATIVE` of the word in
/// memory: 0 on little-endian machines, 7 on big-endian ones. The fast
/// loops read and write the bytes in memory, one load or store each, where
/// shifts of the word cost two or three instructions more.
const NATIVE: usize = if cfg!(target_endian = "big") { 7 } else { 0 };
/// Slot bits per nibble table.
const NIB_BITS: u32 = 12;
/// Slot bits of a byte: the two nibble tables side by side.
const SLOT_BITS: u32 = 2 * NIB_BITS;
/// Nibble frequencies sum to this.
const NIB_SCALE: u32 = 1 << NIB_BITS;

/// Interleaved states for a mode-1 block of `bits` bits: 8 from 2^22 bits,
/// 4 from 2^20, 2 from 2^13, else 1. Each lane costs 8 bytes of stream
/// (about 4 of them overhead), which small blocks cannot afford; more lanes
/// hide the latency of a step (two table loads, two multiplies). Measured
/// on the 17.5 MB filter (density 0.133, one thread): 8 lanes 628–631 MB/s,
/// 4 lanes 587–593, 2 lanes 389–393.
pub(crate) fn lanes_for(bits: u64) -> usize {
    if bits >= 1 << 22 {
        8
    } else if bits >= 1 << 20 {
        4
    } else if bits >= 1 << 13 {
        2
    } else {
        1
    }
}

/// The 16-symbol nibble table of a block with `ones` 1s among `bits` bits
/// (0 < ones < bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Nibbles {
    /// Frequency of each nibble value, in [1, 4095], summing to 4096.
    pub freq: [u32; 16],
    /// Cumulative frequency before each nibble value.
    pub start: [u32; 16],
}

impl Nibbles {
    /// Builds the table (docs/FORMAT.md, "Type 4", mode 1).
    ///
    /// Overflow: p < 2^32 (ones < bits) and every a_j, b_j ≤ 2^32, so the
    /// products are below 2^64 and are taken in u128 anyway; each w_c ≤ 2^32
    /// and w·4096 + 2^31 < 2^45. The top nibble's weight is at least 2^28
    /// (its bits are the majority, each of probability ≥ 1/2), so the others
    /// sum to at most 4096 − 256 + 15 (each rounds up by at most one unit),
    /// and the top's frequency, 4096 minus that sum, is at least 241.
    #[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
    pub(crate) fn build(bits: u64, ones: u64) -> Nibbles {
        debug_assert!(0 < ones && ones < bits);
        const ONE: u128 = 1 << 32;
        let p = ((u128::from(ones) << 32) / u128::from(bits.max(1))).max(1);
        let (mut a, mut b) = ([ONE; 5], [ONE; 5]);
        for j in 0..4 {
            a[j + 1] = (a[j] * p) >> 32;
            b[j + 1] = (b[j] * (ONE - p)) >> 32;
        }
        let w: [u128; 5] = core::array::from_fn(|c| (a[c] * b[4 - c]) >> 32);
        let top = if ones.saturating_mul(2) <= bits { 0 } else { 15 };
        let mut freq = [0u32; 16];
        let mut others = 0u32;
        for (v, f) in freq.iter_mut().enumerate() {
            if v != top {
                let c = (v as u32).count_ones() as usize;
                *f = (((w[c] * u128::from(NIB_SCALE) + (1 << 31)) >> 32) as u32).max(1);
                others += *f;
            }
        }
        freq[top] = NIB_SCALE - others;
        let mut start = [0u32; 16];
        let mut acc = 0;
        for (s, &f) in start.iter_mut().zip(&freq) {
            *s = acc;
            acc += f;
        }
        Nibbles { freq, start }
    }

    /// Writes the 4096-entry decode table into `buf[..4096]`, which must
    /// hold [`TABLE_PAD`] more entries (the words past 4096 may change):
    /// for each 12-bit slot, the nibble's frequency, the slot's rank within
    /// the nibble's range, the nibble as a low nibble and as a high one,
    /// and the frequency again (see [`step`]).
    /// 32 KiB, in L1. Separate 16-bit fields cost a load each instead of
    /// shifts and masks (587–593 against 523–532 MB/s for a packed u32 on
    /// the 17.5 MB filter).
    ///
    /// Within a nibble's range only the rank changes, by one per slot, so
    /// the range is its first entry plus multiples of `step`: a running
    /// sum, which the compiler turns into two-entry vector adds and
    /// 16-byte stores. Small blocks pay for the build (about a sixth of a
    /// decode at m = 10^4).
    ///
    /// Overflow: the frequencies are in [1, 4095] and sum to 4096, so `at`
    /// stays at most 4096, and a rank (below 4096) never carries out of
    /// its 16 bits.
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects)]
    fn fill_table(&self, buf: &mut [u64]) {
        let (firsts, step) = (self.firsts(), rank_step());
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if super::bytes_simd::fill_table(&firsts, &self.freq, step, buf) {
            return;
        }
        fill_ranges(&firsts, &self.freq, step, buf);
    }

    /// Each nibble's first table entry (rank 0), as u64s.
    fn firsts(&self) -> [u64; 16] {
        core::array::from_fn(|v| {
            let freq = self.freq.get(v).map_or(0, |&f| f as u16);
            bytemuck::cast(Slot {
                freq,
                rank: 0,
                freq2: freq,
                lo: v as u8,
                hi: (v as u8) << 4,
            })
        })
    }
}

/// What one more rank adds to a table entry, as a u64.
fn rank_step() -> u64 {
    bytemuck::cast(Slot {
        rank: 1,
        ..Slot::default()
    })
}

/// The portable part of [`Nibbles::fill_table`]: nibble v's range of
/// `freq[v]` entries starts with `firsts[v]` and grows by `step`.
///
/// Overflow: as in [`Nibbles::fill_table`].
#[allow(clippy::arithmetic_side_effects)]
fn fill_ranges(firsts: &[u64; 16], freq: &[u32; 16], step: u64, buf: &mut [u64]) {
    let mut at = 0usize;
    for (&first, &f) in firsts.iter().zip(freq) {
        let mut e = first;
        let span = buf.get_mut(at..at + f as usize).unwrap_or_default();
        for slot in span {
            *slot = e;
            e = e.wrapping_add(step);
        }
        at += f as usize;
    }
}

/// Entries a table buffer holds past the table's 4096: a fill in chunks
/// of 8 entries may write up to 7 past a range (see
/// `bytes_simd::fill_table`).
pub(crate) const TABLE_PAD: usize = 8;

/// A decode table's buffer: the 4096 entries, and room for a fill's
/// overshoot. Pod, so that a fill writes it as u64s; aligned to 8 bytes,
/// so that viewing it as u64s cannot fail (a [`Slot`]'s fields need only
/// 2, and an allocator may give no more than the type asks for: a bump
/// allocator in a `no_std` build, say, where the cast would then panic).
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(8))]
struct TableBuf {
    table: [Slot; NIB_SCALE as usize],
    pad: [Slot; TABLE_PAD],
}
const _: () = assert!(core::mem::align_of::<TableBuf>() >= core::mem::align_of::<u64>());

impl TableBuf {
    /// The buffer as u64s (each a [`Slot`]'s bytes), for a fill.
    fn words(&mut self) -> &mut [u64] {
        bytemuck::cast_slice_mut(core::slice::from_mut(self))
    }
}

#[cfg(feature = "std")]
std::thread_local! {
    /// Each thread's decode table buffer, kept between blocks and calls:
    /// no allocation per block, and no zeroing (a fill writes every
    /// entry).
    static TABLE: core::cell::RefCell<Option<Box<TableBuf>>> =
        const { core::cell::RefCell::new(None) };
}

/// A new, zeroed table buffer.
fn table_buf() -> Box<TableBuf> {
    Box::new(bytemuck::Zeroable::zeroed())
}

/// The decode table of a block whose nibble table is `nib`, built in the
/// calling thread's buffer (with `std`; a new one the first time, when the
/// thread's is in use, or without `std`). Hand it back with
/// [`give_back`]. (A closure over the decode, the first form, made the
/// compiler lay out the 8-lane loop differently: 922–927 against 947–953
/// MB/s on a 2-block filter.)
fn table_for(nib: &Nibbles) -> Box<TableBuf> {
    #[cfg(feature = "std")]
    let mut buf = TABLE
        .try_with(|c| c.try_borrow_mut().ok().and_then(|mut b| b.take()))
        .ok()
        .flatten()
        .unwrap_or_else(table_buf);
    #[cfg(not(feature = "std"))]
    let mut buf = table_buf();
    nib.fill_table(buf.words());
    buf
}

/// Keeps a buffer from [`table_for`] for the thread's next block.
fn give_back(buf: Box<TableBuf>) {
    #[cfg(feature = "std")]
    let _ = TABLE.try_with(|c| {
        if let Ok(mut b) = c.try_borrow_mut() {
            *b = Some(buf);
        }
    });
    #[cfg(not(feature = "std"))]
    drop(buf);
}

/// A decode table entry (see [`Nibbles::fill_table`]): 8 bytes, so that
/// an index scales by 8 in the address; `repr(C)` and Pod, so that the
/// table is built as u64s (the fields in the order the compiler gave them
/// before: the decode loop's loads stay as they were).
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Slot {
    freq: u16,
    rank: u16,
    /// `freq` again: a value the compiler cannot tell is `freq` (see
    /// [`step`]).
    freq2: u16,
    /// The nibble, as the byte's low nibble.
    lo: u8,
    /// The nibble, as the byte's high nibble.
    hi: u8,
}

/// Bytes of a block of `bits` bits.
fn byte_len(bits: u64) -> u64 {
    bits.div_ceil(8)
}

/// Byte `j` of a block's words (little-endian bytes of each word).
#[inline]
fn byte_of(words: &[u64], j: u64) -> u8 {
    let w = words.get((j >> 3) as usize).copied().unwrap_or(0);
    (w >> ((j & 7) << 3)) as u8
}

/// Per byte value: what its encode step needs.
#[derive(Clone, Copy, Default)]
struct EncSym {
    /// F = f_h·f_l.
    f: u64,
    /// A state at or above F·2^39 emits a word first (I1 after the step).
    emit_at: u64,
    /// Reciprocal of F: ⌊x / F⌋ = ⌊⌊2x·r / 2^64⌋ / 2^lf⌋ for every x < 2^63
    /// (see `block::reciprocal` with n = 63: s = 63 + lf).
    rf: u64,
    lf: u32,
    /// The reciprocal of f_l, valid for numerators below 2^24.
    rl: u64,
    sl: u32,
    /// 2^12 − f_l: the slot of rank r is base + r + ⌊r / f_l⌋·(2^12 − f_l)
    /// (the rank's high part ⌊r / f_l⌋ moves whole rows of 2^12 slots, its
    /// low part r mod f_l = r − ⌊r / f_l⌋·f_l stays in the row).
    gap: u64,
    /// start_h·2^12 + start_l.
    base: u64,
    /// Pads the entry to 64 bytes, so that a byte's entry is found by a
    /// shift rather than a multiply.
    _pad: u64,
}

/// Encodes bits [0, bits) of `words` (0 < ones < bits, `ones` being their
/// count of 1s) as a mode-1 stream appended to `out`; bits past `bits` in
/// the last byte are taken as 0. `rev` is scratch.
pub(crate) fn encode_block(
    words: &[u64],
    bits: u64,
    ones: u64,
    out: &mut Vec<u8>,
    rev: &mut Vec<u32>,
) {
    encode_inner(words, bits, ones, out, rev, true);
}

/// [`encode_block`], optionally without clearing the last byte's bits past
/// the block (for the test of the decoder's check).
// Encoder: it codes the caller's own filter, never received bytes. Indices
// are below the block's byte count and lane count; the state arithmetic is
// bounded as commented inline (docs/FORMAT.md, "Type 4").
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
fn encode_inner(
    words: &[u64],
    bits: u64,
    ones: u64,
    out: &mut Vec<u8>,
    rev: &mut Vec<u32>,
    mask_padding: bool,
) {
    let nib = Nibbles::build(bits, ones);
    let mut syms = [EncSym::default(); 256];
    for (v, s) in syms.iter_mut().enumerate() {
        let (h, l) = (v >> 4, v & 15);
        let f = u64::from(nib.freq[h]) * u64::from(nib.freq[l]);
        let fl = u64::from(nib.freq[l]);
        let (rf, sf) = reciprocal(f, 63);
        let (rl, sl) = reciprocal(fl, 24);
        let base = u64::from(nib.start[h]) << NIB_BITS | u64::from(nib.start[l]);
        *s = EncSym {
            f,
            emit_at: f << (63 - SLOT_BITS),
            rf,
            lf: sf - 63,
            rl,
            sl,
            gap: u64::from(NIB_SCALE) - fl,
            base,
            _pad: 0,
        };
    }
    match lanes_for(bits) {
        8 => encode_lanes::<8>(words, bits, &syms, out, rev, mask_padding),
        4 => encode_lanes::<4>(words, bits, &syms, out, rev, mask_padding),
        2 => encode_lanes::<2>(words, bits, &syms, out, rev, mask_padding),
        _ => encode_lanes::<1>(words, bits, &syms, out, rev, mask_padding),
    }
}

/// The backward pass of [`encode_inner`] with `LANES` states (a divisor of
/// 8, so byte k of every word is on lane k mod LANES).
// Encoder: it codes the caller's own filter, never received bytes. Indices
// are below the block's byte count and the lane count; the state arithmetic
// is bounded in `encode_step` (docs/FORMAT.md, "Type 4").
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
fn encode_lanes<const LANES: usize>(
    words: &[u64],
    bits: u64,
    syms: &[EncSym; 256],
    out: &mut Vec<u8>,
    rev: &mut Vec<u32>,
    mask_padding: bool,
) {
    let n = byte_len(bits) as usize;
    rev.clear();
    // Emitted words go to a small buffer first (branch-free: every step
    // writes one slot and keeps it only when it emits), flushed to `rev`
    // after each word: memory in proportion to the output, not the block.
    let mut buf = [0u32; EMIT_BUF];
    let mut k = 0usize;
    let mut xs = [L; LANES];
    // The bytes of the last, partial word first (the last byte with its
    // bits past the block cleared), then the words wholly inside the
    // block, last byte first. LANES divides 8, so byte k of a word is on
    // lane k mod LANES.
    let full = (bits / 64) as usize * 8;
    for j in (full..n).rev() {
        let mut byte = byte_of(words, j as u64);
        if mask_padding && j == n - 1 && !bits.is_multiple_of(8) {
            byte &= (1u8 << (bits % 8)) - 1;
        }
        encode_step(&syms[usize::from(byte)], &mut xs[j % LANES], &mut buf, &mut k);
    }
    rev.extend_from_slice(&buf[..k]);
    k = 0;
    // Chunks of CHUNK_WORDS words (8 steps each, at most one emitted word
    // per step) between flushes: the inner loop makes no call, so the
    // compiler keeps the states in registers through it (with a flush
    // check after every word, the call on its rare path made it split each
    // new state into partial sums kept on the stack).
    for chunk in words[..full / 8].rchunks(CHUNK_WORDS) {
        let bytes: &[u8] = bytemuck::cast_slice(chunk);
        for w in bytes.rchunks_exact(8) {
            // Written out so that every lane index is a constant and the
            // states stay in registers.
            let mut code = |lane: usize, b: usize| {
                let s = &syms[usize::from(w[b ^ NATIVE])];
                encode_step(s, &mut xs[lane], &mut buf, &mut k);
            };
            code(7 % LANES, 7);
            code(6 % LANES, 6);
            code(5 % LANES, 5);
            code(4 % LANES, 4);
            code(3 % LANES, 3);
            code(2 % LANES, 2);
            code(1 % LANES, 1);
            code(0, 0);
        }
        rev.extend_from_slice(&buf[..k]);
        k = 0;
    }
    let emitted = rev.len();
    out.reserve(8 * LANES + emitted * 4);
    for x in &xs {
        out.extend_from_slice(&x.to_le_bytes());
    }
    for w in rev.iter().rev() {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Slots of the encoder's emit buffer (at most one word per byte, flushed
/// after every [`CHUNK_WORDS`] words: 2 KiB).
const EMIT_BUF: usize = 8 * CHUNK_WORDS;

/// Words the encoder codes between flushes of its emit buffer.
const CHUNK_WORDS: usize = 64;
const _: () = assert!(EMIT_BUF.is_power_of_two());

/// One encode step of a byte with symbol `s` on state `x` (I1: L ≤ x <
/// 2^63 before and after), writing the word it may emit to `buf[*k]`.
// Encoder: it codes the caller's own filter; *k stays below EMIT_BUF at
// every write (the caller flushes after every EMIT_BUF steps, and *k grows
// by at most one per step), and the state arithmetic is bounded as
// commented inline.
#[inline(always)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
fn encode_step(s: &EncSym, x: &mut u64, buf: &mut [u32; EMIT_BUF], k: &mut usize) {
    // Shrink x below F·2^39 < 2^63 so that the step's result q·2^24 + slot
    // stays below 2^63 (branch-free: the word is written always and kept
    // only when emitted).
    let emit = *x >= s.emit_at;
    // *k < EMIT_BUF, a power of two: the mask changes nothing and spares a
    // bounds check (and its panic path's registers) on every step.
    buf[*k & (EMIT_BUF - 1)] = *x as u32;
    *k += usize::from(emit);
    let y = *x >> (u32::from(emit) << 5);
    // y < 2^63, so 2y fits in 64 bits.
    let q = (((u128::from(y << 1) * u128::from(s.rf)) >> 64) as u64) >> s.lf;
    let r = y - q * s.f;
    let a = (r * s.rl) >> s.sl;
    // q ≥ 2^31 / F > 2^7 whether or not a word was emitted, so the new
    // state is ≥ 2^31; the slot, base + r + a·(2^12 − f_l), is below 2^24.
    *x = (q << SLOT_BITS) + s.base + r + a * s.gap;
}

/// Reads the stream's u32 words.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    /// Renormalises state `x` (I1): reads a word when x < L, and fails if
    /// none is left.
    ///
    /// Overflow: x < L means x·2^32 + w < 2^63.
    #[inline]
    #[allow(clippy::arithmetic_side_effects)]
    fn renorm(&mut self, x: u64) -> Result<u64, CoderError> {
        if x >= L {
            return Ok(x);
        }
        let w = self
            .data
            .get(self.pos..)
            .and_then(|r| r.first_chunk::<4>())
            .ok_or(CoderError::UnexpectedEnd { offset: self.pos })?;
        // Four bytes were there: pos + 4 <= data.len().
        self.pos += 4;
        Ok(x << 32 | u64::from(u32::from_le_bytes(*w)))
    }
}

/// One decode step on state `x` whose low slot index is `low mod 2^12`
/// (`low` is `x`, or what the one- and two-lane loop keeps apart, see
/// [`decode_lanes`]): the byte and the state before
/// renormalisation, x' = f_l·(f_h·⌊x / 2^24⌋ + rank_h) + rank_l, which is
/// F·⌊x / 2^24⌋ + rank with F = f_h·f_l and rank = rank_h·f_l + rank_l.
///
/// Overflow (any input): x < 2^63 (I1 after renormalisation, checked for the
/// initial states), so ⌊x / 2^24⌋ < 2^39; with rank_h < f_h ≤ 2^12 and
/// rank_l < f_l ≤ 2^12 the result is at most F·(⌊x / 2^24⌋ + 1) − 1 < 2^63.
///
/// `short` picks the order of the arithmetic. With 8 lanes the loop is
/// bound by its instruction count and takes the form above (two
/// multiplies). With 1 or 2 lanes it is bound by one lane's chain of
/// dependent operations and takes (f_l·q)·f_h + (rank_h·f_l + rank_l): the
/// low slot's index is one instruction shorter than the high slot's, so
/// the chain is index, load, multiply, multiply, add (one add shorter),
/// and the third multiply is off it. The compiler would factor f_l back
/// out of that sum; it cannot when the second f_l is `freq2`, a separate
/// load. At m = 10^4, density 0.49 (2 lanes): 373–378 against 355–359
/// MB/s.
#[inline(always)]
#[allow(clippy::arithmetic_side_effects)]
fn step(table: &[Slot; NIB_SCALE as usize], x: u64, low: u64, short: bool) -> (u64, u64) {
    let at = |i: u64| table.get((i & 0xfff) as usize).copied().unwrap_or_default();
    let eh = at(x >> NIB_BITS);
    let el = at(low);
    let (fh, fl, q) = (u64::from(eh.freq), u64::from(el.freq), x >> SLOT_BITS);
    let y = if short {
        fl * q * fh + (u64::from(eh.rank) * u64::from(el.freq2) + u64::from(el.rank))
    } else {
        fl * (fh * q + u64::from(eh.rank)) + u64::from(el.rank)
    };
    (u64::from(eh.hi | el.lo), y)
}

/// Decodes a mode-1 stream of a block of `bits` bits into `words`
/// (overwritten) and returns its coding steps (one per byte). The caller
/// checks the count of ones.
pub(crate) fn decode_block(
    data: &[u8],
    bits: u64,
    ones: u64,
    words: &mut [u64],
) -> Result<u64, CoderError> {
    match lanes_for(bits) {
        8 => decode_lanes::<8>(data, bits, ones, words),
        4 => decode_lanes::<4>(data, bits, ones, words),
        2 => decode_lanes::<2>(data, bits, ones, words),
        _ => decode_lanes::<1>(data, bits, ones, words),
    }
}

/// [`decode_block`] with `LANES` interleaved states (1, 2, 4 or 8: a divisor
/// of 8, so byte k of every word is on lane k mod LANES).
///
/// Overflow: byte and word indices are below the block's ⌈bits/8⌉ ≤ 2^37
/// bytes; `at` advances by at most 4 bytes per step and stays within the
/// data (checked before each round's reads).
///
/// Never inlined: the fast loop needs every register, and code its callers
/// add around it (clearing constant blocks, for one) made the compiler
/// keep three more values on the stack, 888 against 975 MB/s on the
/// 17.5 MB filter, one thread. Out of line it decodes as fast as before
/// (905–916 against 883–913, alternating). One call per block.
#[inline(never)]
fn decode_lanes<const LANES: usize>(
    data: &[u8],
    bits: u64,
    ones: u64,
    words: &mut [u64],
) -> Result<u64, CoderError> {
    resume(begin::<LANES>(data)?, data, bits, ones, words)
}

/// [`decode_block`] for an 8-lane block whose first `at.words` words a
/// caller has decoded already ([`super::bytes_simd`]), from the states and
/// stream position it reached.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[inline(never)]
pub(crate) fn resume8(
    at: Progress<8>,
    data: &[u8],
    bits: u64,
    ones: u64,
    words: &mut [u64],
) -> Result<u64, CoderError> {
    resume(at, data, bits, ones, words)
}

/// The block's decode from `at`: its table (in the thread's buffer), then
/// [`finish`].
#[inline(always)]
fn resume<const LANES: usize>(
    at: Progress<LANES>,
    data: &[u8],
    bits: u64,
    ones: u64,
    words: &mut [u64],
) -> Result<u64, CoderError> {
    let table = table_for(&Nibbles::build(bits, ones));
    let r = finish(at, &table.table, data, bits, words);
    give_back(table);
    r
}

/// Where a block's decoder stands: its lanes' states, the stream offset
/// of its next renormalisation word, and the words written so far.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Progress<const LANES: usize> {
    pub(crate) xs: [u64; LANES],
    pub(crate) pos: usize,
    pub(crate) words: usize,
}

/// Reads and checks a stream's initial states (docs/FORMAT.md, "Type 4":
/// the length first, then each state in lane order).
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn begin<const LANES: usize>(data: &[u8]) -> Result<Progress<LANES>, CoderError> {
    const { assert!(LANES == 1 || LANES == 2 || LANES == 4 || LANES == 8) };
    let mut pos = 0usize;
    if data.len() < 8 * LANES {
        return Err(CoderError::UnexpectedEnd { offset: data.len() });
    }
    let mut xs = [0u64; LANES];
    for x in xs.iter_mut() {
        let b = data
            .get(pos..)
            .and_then(|r| r.first_chunk::<8>())
            .ok_or(CoderError::UnexpectedEnd { offset: pos })?;
        *x = u64::from_le_bytes(*b);
        if !(L..1 << 63).contains(x) {
            return Err(CoderError::BadState { offset: pos });
        }
        pos += 8;
    }
    Ok(Progress { xs, pos, words: 0 })
}

/// The rest of [`decode_lanes`] from `at`: fast rounds while the stream
/// surely holds a round's reads, then one byte at a time with every check,
/// then the end checks.
///
/// Overflow: byte and word indices are below the block's ⌈bits/8⌉ ≤ 2^37
/// bytes; `at` advances by at most 4 bytes per step and stays within the
/// data (checked before each round's reads).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects)]
fn finish<const LANES: usize>(
    at: Progress<LANES>,
    table: &[Slot; NIB_SCALE as usize],
    data: &[u8],
    bits: u64,
    words: &mut [u64],
) -> Result<u64, CoderError> {
    let mut xs = at.xs;
    let mut input = Input { data, pos: at.pos };
    // With one or two lanes the loop waits on each lane's chain of
    // operations, from one state to the next. The low slot's index is on
    // that chain: each lane keeps it apart (`lows`), chosen between the
    // renormalisation word and the unrenormalised state (x mod 2^12 is
    // either's) as soon as the comparison is known, instead of taken from
    // the state after the state's own choice: one operation shorter, and
    // 393–394 against 377–379 MB/s at m = 10^4 (density 0.49), 474–480
    // against 457–461 at 10^5, alternating.
    let short = LANES <= 2;
    let mut lows = xs;
    let n = byte_len(bits);
    let full_words = (n / 8) as usize;
    let mut wi = at.words;
    // Fast rounds: a whole output word (8 steps, at most 8 reads = 32 bytes)
    // while the input surely holds every read a round can make. The output
    // word is a plain iterator item, not a checked index: with a check, the
    // compiler moved the nibble lookups behind it and spilled every slot
    // index to the stack (42 stack accesses per round, 16% slower).
    {
        // The bytes are stored through a byte view of the words ([`NATIVE`]):
        // 866–878 against 775–785 MB/s for a shift and an OR per byte into
        // the word, on the 17.5 MB filter, one thread. The round's reads
        // are counted in words, which lets the compiler add the
        // comparison's carry (881–908 MB/s).
        let fast = words.get_mut(wi..full_words).unwrap_or_default();
        let out: &mut [u8] = bytemuck::cast_slice_mut(fast);
        // The round's test is one comparison with a precomputed limit (the
        // checked slice below then cannot fail): two instructions against
        // five for a test per read; 901–910 against 893–900 MB/s.
        let limit = data.len().saturating_sub(32);
        for o in out.chunks_exact_mut(8) {
            if input.pos > limit {
                break;
            }
            let Some(chunk) = data
                .get(input.pos..input.pos.wrapping_add(32))
                .and_then(|r| r.first_chunk::<32>())
            else {
                break;
            };
            let Some(o) = o.first_chunk_mut::<8>() else {
                break;
            };
            let mut at = 0usize;
            for k in 0..8 {
                // k mod LANES < LANES and k ^ NATIVE < 8: no lookup can
                // miss.
                let (Some(x), Some(o), Some(low)) = (
                    xs.get_mut(k % LANES),
                    o.get_mut(k ^ NATIVE),
                    lows.get_mut(k % LANES),
                ) else {
                    continue;
                };
                let (byte, y) = step(table, *x, if short { *low } else { *x }, short);
                *o = byte as u8;
                // I1: take the next word of the chunk only if y < L (at most 8
                // reads per round: `at`, counted in words, is <= 7 here).
                let need = y < L;
                let w = chunk
                    .get(at * 4..)
                    .and_then(|r| r.first_chunk::<4>())
                    .map_or(0, |b| u32::from_le_bytes(*b));
                *x = if need { y << 32 | u64::from(w) } else { y };
                if short {
                    *low = if need { u64::from(w) } else { y };
                }
                at += usize::from(need);
            }
            input.pos += at * 4;
            wi += 1;
        }
    }
    // The rest, one byte at a time with every check. A word's first byte
    // overwrites it and the others are ORed in, so every word of the block
    // is written (the fast rounds wrote all of theirs; the block's ⌈bits/8⌉
    // bytes end in its last word).
    let mut j = (wi as u64) * 8;
    while j < n {
        let Some(x) = xs.get_mut((j % LANES as u64) as usize) else {
            break;
        };
        let (byte, y) = step(table, *x, *x, short);
        *x = input.renorm(y)?;
        if let Some(o) = words.get_mut((j >> 3) as usize) {
            if j & 7 == 0 {
                *o = byte;
            } else {
                *o |= byte << ((j & 7) << 3);
            }
        }
        j += 1;
    }
    // Bits past the block's end in its last byte must be 0.
    if !bits.is_multiple_of(8) {
        let last = byte_of(words, n - 1);
        let past = last >> (bits % 8);
        if past != 0 {
            return Err(CoderError::RunPastEnd {
                offset: input.pos,
                position: (n - 1) * 8 + 7 - u64::from(last.leading_zeros()),
            });
        }
    }
    if input.pos != data.len() {
        return Err(CoderError::TrailingData { offset: input.pos });
    }
    if xs.iter().any(|&x| x != L) {
        return Err(CoderError::BadState { offset: input.pos });
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::coder::tests::{splitmix, GARBAGE};

    fn random_bits(bits: u64, density: f64, seed: u64) -> (Vec<u64>, u64) {
        let mut s = seed;
        let mut w = vec![0u64; bits.div_ceil(64) as usize];
        for i in 0..bits {
            if (splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64 <= density {
                w[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        let ones = w.iter().map(|x| u64::from(x.count_ones())).sum();
        (w, ones)
    }

    #[test]
    fn nibble_tables_are_valid_at_every_density() {
        for bits in [2u64, 9, 1000, 1 << 23, 1 << 40] {
            for ones in [1, bits / 1000, bits / 16, bits / 3, bits / 2, bits - bits / 5, bits - 1] {
                if ones == 0 || ones >= bits {
                    continue;
                }
                let t = Nibbles::build(bits, ones);
                assert_eq!(t.freq.iter().sum::<u32>(), NIB_SCALE, "{bits} {ones}");
                assert!(t.freq.iter().all(|&f| (1..NIB_SCALE).contains(&f)));
                // The top nibble keeps at least 241 units (the bound in build).
                let top = if ones * 2 <= bits { 0 } else { 15 };
                assert!(t.freq[top] >= 241, "{bits} {ones} {}", t.freq[top]);
            }
        }
    }

    #[test]
    fn decode_tables_hold_every_slot_whichever_fill_builds_them() {
        // Each entry against the definition: slot s belongs to the nibble
        // v with start_v <= s < start_v + f_v, at rank s - start_v. The
        // machine's fill (AVX-512 where it has it) and the portable one,
        // into buffers holding garbage, and the table read back through
        // `table_for` twice (the thread's buffer reused).
        for (bits, ones) in [(1000u64, 63), (1 << 20, 139_000), (1 << 20, 1 << 19), (70_000, 60_000)] {
            let nib = Nibbles::build(bits, ones);
            let check = |t: &[Slot]| {
                assert_eq!(t.len(), NIB_SCALE as usize);
                for (s, e) in t.iter().enumerate() {
                    let v = (0..16).rev().find(|&v| nib.start[v] as usize <= s).unwrap();
                    let f = nib.freq[v] as u16;
                    assert_eq!((e.freq, e.freq2, e.lo, e.hi), (f, f, v as u8, (v as u8) << 4), "{s}");
                    assert_eq!(usize::from(e.rank), s - nib.start[v] as usize, "{s}");
                }
            };
            let table = |b: &[u64]| -> Vec<Slot> { bytemuck::cast_slice(&b[..NIB_SCALE as usize]).to_vec() };
            let mut buf = vec![GARBAGE; NIB_SCALE as usize + TABLE_PAD];
            nib.fill_table(&mut buf);
            check(&table(&buf));
            let firsts: [u64; 16] = core::array::from_fn(|v| buf[nib.start[v] as usize]);
            let mut portable = vec![GARBAGE; NIB_SCALE as usize + TABLE_PAD];
            fill_ranges(&firsts, &nib.freq, rank_step(), &mut portable);
            check(&table(&portable));
            for _ in 0..2 {
                let t = table_for(&nib);
                check(&t.table);
                give_back(t);
            }
        }
        // Every decoder, the portable ones too, fills its tables with the
        // machine's fill: across densities (255 steps and both extremes,
        // at four block sizes) it must equal the portable fill entry for
        // entry (the first loop checked the first entries against the
        // definition).
        for bits in [1000u64, 70_000, 1 << 20, 1 << 24] {
            let steps = (1..256u64).map(|i| bits * i / 256);
            for ones in steps.chain([1, bits - 1]).filter(|&o| 0 < o && o < bits) {
                let nib = Nibbles::build(bits, ones);
                let mut want = vec![GARBAGE; NIB_SCALE as usize + TABLE_PAD];
                fill_ranges(&nib.firsts(), &nib.freq, rank_step(), &mut want);
                let mut got = vec![!GARBAGE; NIB_SCALE as usize + TABLE_PAD];
                nib.fill_table(&mut got);
                assert!(got[..NIB_SCALE as usize] == want[..NIB_SCALE as usize], "bits {bits} ones {ones}");
            }
        }
    }

    #[test]
    fn reciprocals_divide_exactly_at_the_edges() {
        for d in [1u64, 2, 3, 4095, 4096, 4097, 65_535, (1 << 24) - 1, 4095 * 4095] {
            let (r, s) = reciprocal(d, 63);
            for x in [0u64, 1, d - 1, d, d + 1, (1 << 63) - 1, (1 << 63) - 1 - d, 123_456_789_012_345] {
                assert_eq!(((u128::from(x) * u128::from(r)) >> s) as u64, x / d, "{x} / {d}");
            }
            if d < 4097 {
                let (r, s) = reciprocal(d, 24);
                for x in [0u64, d - 1, d, (1 << 24) - 1, (1 << 24) - 1 - d] {
                    assert_eq!((x * r) >> s, x / d, "{x} / {d}");
                }
            }
        }
    }

    #[test]
    fn round_trips_at_every_lane_count_and_density() {
        let mut rev = Vec::new();
        for bits in [1u64, 7, 8, 63, 64, 100, 8191, 8192, 70_001, (1 << 20) + 13] {
            for density in [0.001, 0.06, 0.3, 0.5, 0.7, 0.97] {
                let (w, ones) = random_bits(bits, density, bits ^ density.to_bits());
                if ones == 0 || ones == bits {
                    continue;
                }
                let mut out = Vec::new();
                encode_block(&w, bits, ones, &mut out, &mut rev);
                // Words holding garbage: the decoder overwrites them.
                let mut back = vec![GARBAGE; w.len()];
                let steps = decode_block(&out, bits, ones, &mut back).unwrap();
                assert_eq!(back, w, "{bits} {density}");
                assert_eq!(steps, bits.div_ceil(8));
                // A corrupt stream never passes as the same block with
                // the same length.
                let mut bad = out.clone();
                let last = bad.len() - 1;
                bad[last] ^= 0x10;
                let mut again = vec![0u64; w.len()];
                if decode_block(&bad, bits, ones, &mut again).is_ok() {
                    assert_ne!(again, w);
                }
            }
        }
    }

    #[test]
    fn size_is_near_the_entropy_bound() {
        // 2^20 bits at density 0.133 (the 17.5 MB filter's), with a
        // static model: log2 C(B, x) plus ½·log2 of B for the model, plus
        // the flush (8 lanes, each at most 64 bits of which about 31
        // carry no data), plus the 12-bit quantisation, which a direct
        // computation of the two tables' KL divergence puts at ~0.002%.
        let bits = 1u64 << 20;
        let (w, ones) = random_bits(bits, 0.133, 7);
        let mut out = Vec::new();
        encode_block(&w, bits, ones, &mut out, &mut Vec::new());
        let bound = crate::math::log2_binomial(bits, ones) / 8.0;
        let excess = out.len() as f64 - bound;
        assert!(excess < bound * 0.0001 + 8.0 * 8.0 + 4.0, "{} vs {bound}", out.len());
    }

    #[test]
    fn the_encoder_ignores_bits_past_the_block_in_its_last_word() {
        // 60 bits: the last byte (bits 56..59, then 60..63 past the end)
        // lies in a word the encoder reads whole. Bits 61 and 63 set past
        // the end must not be coded.
        for bits in [57u64, 60, 63, 121] {
            let w: Vec<u64> = vec![0x0f0f_0f0f_0f0f_0f0f | 1 << 63; bits.div_ceil(64) as usize];
            let mut clean = w.clone();
            let last = clean.len() - 1;
            clean[last] &= (1u64 << (bits % 64)) - 1;
            let ones: u64 = clean.iter().map(|x| u64::from(x.count_ones())).sum();
            let mut out = Vec::new();
            encode_block(&w, bits, ones, &mut out, &mut Vec::new());
            let mut back = vec![0u64; w.len()];
            decode_block(&out, bits, ones, &mut back).unwrap();
            assert_eq!(back, clean, "{bits}");
        }
    }

    #[test]
    fn bits_past_the_end_and_bad_states_are_refused() {
        // A 12-bit block with two ones whose stream (padding not cleared)
        // carries bit 13 in its last byte, past the block.
        let w = vec![1u64 | 1 << 13];
        let ones = 2;
        let mut out = Vec::new();
        encode_inner(&w, 12, ones, &mut out, &mut Vec::new(), false);
        let mut back = vec![0u64; 1];
        assert!(matches!(
            decode_block(&out, 12, ones, &mut back),
            Err(CoderError::RunPastEnd { position: 13, .. })
        ));
        // The same block with its padding cleared decodes (to one 1: the
        // count of ones is the caller's check).
        out.clear();
        encode_block(&w, 12, ones, &mut out, &mut Vec::new());
        let mut back = vec![0u64; 1];
        decode_block(&out, 12, ones, &mut back).unwrap();
        assert_eq!(back, vec![1]);
        // Initial state below 2^31 or at 2^63.
        let mut bad = out.clone();
        bad[..8].copy_from_slice(&(L - 1).to_le_bytes());
        assert!(matches!(
            decode_block(&bad, 12, ones, &mut back),
            Err(CoderError::BadState { offset: 0 })
        ));
        bad[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
        assert!(matches!(
            decode_block(&bad, 12, ones, &mut back),
            Err(CoderError::BadState { offset: 0 })
        ));
        assert!(matches!(
            decode_block(&out[..5], 12, ones, &mut back),
            Err(CoderError::UnexpectedEnd { offset: 5 })
        ));
    }
}
