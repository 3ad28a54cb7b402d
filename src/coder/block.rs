//! One block of the bit array through the interleaved rANS coder.
//!
//! Stream layout (all little-endian): S initial decoder states (u32 each),
//! then 16-bit renormalisation words in the order the decoder reads them.
//! Coding operation j (a bucket or escape symbol, or a uniform chunk of low
//! bits) uses state j mod S.
//!
//! rANS invariants (L = 2^16, PROB_BITS = 12, 16-bit words):
//! * I1: between operations every state x satisfies L <= x < 2^32.
//! * I2 (decode): x' = f·(x >> 12) + (x mod 2^12 − start) >= 16·f >= 16 > 0,
//!   and x' < 2^32; if x' < L one word is read: (x' << 16 | w) is in
//!   [2^16, 2^32), restoring I1 with a single read.
//! * I3 (encode): before coding with frequency f the state is brought below
//!   f·2^20 by emitting its low 16 bits at most once (x < 2^32 and f >= 1 so
//!   one shift suffices); then x' = (x / f)·2^12 + x mod f + start < 2^32.
//! * I4: the encoder starts every state at L, so a correct decode ends with
//!   every state back at L and every word consumed; anything else is corrupt.

use crate::prelude::*;
use super::model::{Model, FIRST_STAGE, PROB_BITS, PROB_SCALE};
use super::CoderError;

const RANS_L: u32 = 1 << 16;
/// A state x may take frequency f only if x < f << X_MAX_SHIFT (I3).
const X_MAX_SHIFT: u32 = 16 - PROB_BITS + 16;
const _: () = assert!(
    PROB_BITS <= 16,
    "16-bit renormalisation needs PROB_BITS <= 16"
);

/// Blocks of at least this many bits use 4 interleaved states, smaller ones 1
/// (each state costs 4 bytes of flush).
pub(crate) const INTERLEAVE_MIN_BITS: u64 = 1 << 20;

/// Number of interleaved rANS states for a block of `bits` bits.
pub(crate) fn lanes_for(bits: u64) -> usize {
    if bits >= INTERLEAVE_MIN_BITS {
        4
    } else {
        1
    }
}

/// Position of the first bit equal to `value` in [from, end), or `end`.
#[inline]
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn next_bit(words: &[u64], from: u64, end: u64, value: bool) -> u64 {
    if from >= end {
        return end;
    }
    let flip = if value { 0 } else { u64::MAX };
    let mut wi = (from >> 6) as usize;
    let mut w = (words[wi] ^ flip) & (u64::MAX << (from & 63));
    loop {
        if w != 0 {
            let p = ((wi as u64) << 6) + u64::from(w.trailing_zeros());
            return p.min(end);
        }
        wi += 1;
        if (wi as u64) << 6 >= end {
            return end;
        }
        w = words[wi] ^ flip;
    }
}

/// Calls `apply` with (word, mask of bits in the range) for every word that
/// bits [from, from + len) touch (words past the slice are skipped, never a
/// panic).
#[inline]
fn for_range(words: &mut [u64], from: u64, len: u64, apply: impl Fn(&mut u64, u64)) {
    let mut pos = from;
    let end = from.saturating_add(len);
    while pos < end {
        let lo = pos & 63;
        // 1 <= n <= 64 - lo: the differences are positive and pos grows.
        let n = 64u64.wrapping_sub(lo).min(end.wrapping_sub(pos));
        let mask = if n == 64 {
            u64::MAX
        } else {
            (1u64 << n).wrapping_sub(1) << lo
        };
        if let Some(w) = words.get_mut((pos >> 6) as usize) {
            apply(w, mask);
        }
        pos = pos.wrapping_add(n);
    }
}

/// Sets bits [from, from + len) to one (the decoder checked that the range
/// lies in the block).
#[inline]
pub(crate) fn fill_ones(words: &mut [u64], from: u64, len: u64) {
    for_range(words, from, len, |w, mask| *w |= mask);
}

/// Flips bits [from, from + len).
#[inline]
fn flip_range(words: &mut [u64], from: u64, len: u64) {
    for_range(words, from, len, |w, mask| *w ^= mask);
}

/// Number of ones in bits [from, to) of `words` (bits past the slice count
/// as zeros).
#[inline]
pub(crate) fn count_ones_range(words: &[u64], from: u64, to: u64) -> u64 {
    if from >= to {
        return 0;
    }
    // to > from >= 0, so to − 1 does not wrap; (x & 63) <= 63.
    let last = to.wrapping_sub(1);
    let (fw, tw) = ((from >> 6) as usize, (last >> 6) as usize);
    let head = u64::MAX << (from & 63);
    let tail = u64::MAX >> (63u64.wrapping_sub(last & 63));
    let word = |i: usize| words.get(i).copied().unwrap_or(0);
    if fw == tw {
        return u64::from((word(fw) & head & tail).count_ones());
    }
    // At most 2^34 words of 64 ones each (a block of 2^40 bits): the sum
    // fits easily.
    let middle = super::popcount::count_ones(words.get(fw.wrapping_add(1)..tw).unwrap_or_default());
    u64::from((word(fw) & head).count_ones())
        .wrapping_add(middle)
        .wrapping_add(u64::from((word(tw) & tail).count_ones()))
}

/// The model schedule shared by encoder and decoder: the model is rebuilt
/// before the first symbol coded at a position >= the next threshold
/// (16, 32, 64, ... bits), from the position and the count of ones before it.
struct Schedule {
    threshold: u64,
    counted_to: u64,
    ones: u64,
}

impl Schedule {
    fn new() -> Self {
        Schedule {
            threshold: FIRST_STAGE,
            counted_to: 0,
            ones: 0,
        }
    }

    /// A schedule that never rebuilds (the static model of format type 4).
    fn never() -> Self {
        Schedule {
            threshold: u64::MAX,
            counted_to: 0,
            ones: 0,
        }
    }

    /// Returns the new model if one is due at `pos`.
    #[inline]
    fn due(&mut self, words: &[u64], pos: u64) -> Option<Model> {
        if pos < self.threshold {
            return None;
        }
        // ones <= pos <= 2^23 (the schedule runs only in type 1's blocks;
        // type 4's fixed model never rebuilds) and the threshold stays
        // below 2^25.
        self.ones = self
            .ones
            .wrapping_add(count_ones_range(words, self.counted_to, pos));
        self.counted_to = pos;
        while self.threshold <= pos {
            self.threshold = self.threshold.saturating_mul(2);
        }
        Some(Model::build(pos, self.ones))
    }
}

#[inline]
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn op(model: &Model, sym: usize) -> u32 {
    u32::from(model.start[sym]) << 16 | u32::from(model.freq[sym])
}

/// Encodes bits [0, bits) of `words` (a block, word-aligned) and appends the
/// stream to `out`.
#[cfg(test)]
pub(crate) fn encode_block(words: &[u64], bits: u64, out: &mut Vec<u8>) {
    encode_block_with(words, bits, out, &mut Scratch::default());
}

/// Buffers reused across the blocks one thread encodes (allocating them per
/// block costs a page fault per 4 KiB touched).
#[derive(Default)]
pub(crate) struct Scratch {
    ops: Vec<u32>,
    rev: Vec<u16>,
}

/// [`encode_block`] with caller-owned scratch buffers.
pub(crate) fn encode_block_with(
    words: &[u64],
    bits: u64,
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) {
    encode_block_paths(words, bits, out, scratch, true, None);
}

/// Encodes a block with the static model `build(bits, ones)` throughout
/// (format type 4, mode 0), `ones` being the block's count of 1s.
pub(crate) fn encode_block_fixed(
    words: &[u64],
    bits: u64,
    ones: u64,
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) {
    let model = Model::build(bits, ones);
    encode_block_paths(words, bits, out, scratch, true, Some(&model));
}

/// [`encode_block_with`], with the fast path on or off (`fast`): the bytes
/// are the same either way (the tests compare them).
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn encode_block_paths(
    words: &[u64],
    bits: u64,
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
    fast: bool,
    fixed: Option<&Model>,
) {
    let lanes = lanes_for(bits);
    // Forward pass: turn the block into coding operations with the adaptive
    // model, exactly as the decoder will see it. Each loop iteration codes
    // one symbol: an escape (escape_len majority bits) or a run ended by a
    // minority bit (virtual at the block end).
    // About 1.07 operations per one at the densities the planner picks
    // (one per 7 bits at density 0.13); reserve that to avoid regrowth.
    let ops = &mut scratch.ops;
    ops.clear();
    // A fixed model (type 4) codes blocks of up to 2^40 bits, mostly
    // sparse ones: reserve at most 2^20 operations there and let the
    // vector grow with what the block really needs.
    let expected = if fixed.is_some() {
        (bits / 6).min(1 << 20)
    } else {
        bits / 6
    };
    ops.reserve(expected as usize + 64);
    let mut pos = 0u64;
    let (mut sched, mut model) = match fixed {
        Some(m) => (Schedule::never(), m.clone()),
        None => (Schedule::new(), Model::build(0, 0)),
    };
    let mut next = next_bit(words, 0, bits, model.minority_is_one);
    loop {
        if let Some(m) = sched.due(words, pos) {
            model = m;
            next = next_bit(words, pos, bits, model.minority_is_one);
        }
        if fast && model.t == 0 && next < bits {
            fast_forward(
                words,
                bits,
                &model,
                sched.threshold,
                ops,
                &mut pos,
                &mut next,
            );
            if pos >= sched.threshold {
                continue;
            }
        }
        let run = next - pos;
        if run >= model.escape_len {
            ops.push(op(&model, model.buckets as usize));
            pos += model.escape_len;
            continue;
        }
        ops.push(op(&model, (run >> model.t) as usize));
        let mut low = run & ((1u64 << model.t) - 1);
        let mut width = model.t;
        while width > 0 {
            let c = width.min(PROB_BITS);
            let v = (low & ((1 << c) - 1)) as u32;
            let f = 1u32 << (PROB_BITS - c);
            ops.push((v * f) << 16 | f);
            low >>= c;
            width -= c;
        }
        if next == bits {
            break;
        }
        pos = next + 1;
        next = next_bit(words, pos, bits, model.minority_is_one);
    }
    rans_encode(ops, lanes, &mut scratch.rev, out);
}

/// The backward pass: rANS-encodes coding operations (start << 16 | freq),
/// operation j on lane j mod `lanes`, and appends the stream (initial
/// decoder states, then words in reading order) to `out`.
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn rans_encode(ops: &[u32], lanes: usize, rev: &mut Vec<u16>, out: &mut Vec<u8>) {
    // rANS is last-in first-out. Every operation emits at most one word (I3),
    // so the buffer cannot overflow.
    let mut states = [RANS_L; 4];
    rev.clear();
    rev.resize(ops.len() + 2 * lanes, 0);
    let mut n = 0usize;
    // With four lanes: the operations past the last multiple of 4 first
    // (highest j), then whole rounds, lane 3 down to lane 0, in registers.
    // With one lane every operation takes the first loop.
    let whole = if lanes == 4 {
        ops.len() - ops.len() % 4
    } else {
        0
    };
    for j in (whole..ops.len()).rev() {
        states[j % lanes] = encode_step(states[j % lanes], ops[j], rev, &mut n);
    }
    let [mut x0, mut x1, mut x2, mut x3] = states;
    for round in ops[..whole].chunks_exact(4).rev() {
        x3 = encode_step(x3, round[3], rev, &mut n);
        x2 = encode_step(x2, round[2], rev, &mut n);
        x1 = encode_step(x1, round[1], rev, &mut n);
        x0 = encode_step(x0, round[0], rev, &mut n);
    }
    states = [x0, x1, x2, x3];
    rev.truncate(n);
    for lane in (0..lanes).rev() {
        rev.push((states[lane] >> 16) as u16);
        rev.push(states[lane] as u16);
    }
    out.reserve(rev.len() * 2);
    for w in rev.iter().rev() {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// One rANS encode step (I3) of `op` = start << 16 | freq on state `x`,
/// writing at most one word to `rev[*n]`.
#[inline(always)]
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn encode_step(x: u32, op: u32, rev: &mut [u16], n: &mut usize) -> u32 {
    let freq = op & 0xffff;
    let start = op >> 16;
    // Branch-free: write the low word unconditionally, keep it only if the
    // state must shrink.
    let emit = x >= freq << X_MAX_SHIFT;
    rev[*n] = x as u16;
    *n += usize::from(emit);
    let x = x >> (u32::from(emit) << 4);
    let q = div_by_freq(x, freq);
    (q << PROB_BITS) + (x - q * freq) + start
}

/// The encoder's forward pass for the common case (t = 0): walks the
/// minority bits of the block in batches of 16 words and appends one
/// operation per symbol from a per-run table, until the next symbol would start at or past
/// `threshold` (a model rebuild) or no one is left before the block end
/// (the general loop codes the final run). On return `*next` is the first one
/// at or after `*pos`, as the general loop expects.
#[inline(never)]
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn fast_forward(
    words: &[u64],
    bits: u64,
    model: &Model,
    threshold: u64,
    ops: &mut Vec<u32>,
    pos: &mut u64,
    next: &mut u64,
) {
    let esc_len = model.escape_len;
    let esc_op = op(model, model.buckets as usize);
    let mut run_op = [0u32; super::model::MAX_BUCKETS];
    for (r, o) in run_op.iter_mut().enumerate().take(model.buckets as usize) {
        *o = op(model, r);
    }
    let mut p = *pos;
    // Ones are flattened 16 words at a time into absolute positions with a
    // fixed 16 extractions per word (no data-dependent loop exit; a word with
    // more than 16 ones, rare at the densities this path serves, takes a
    // short extra loop), then emitted in one loop over the batch.
    const BATCH: usize = 16;
    let mut buf = [0u64; BATCH * 64 + 16];
    let word_end = bits.div_ceil(64) as usize;
    let mut wi = (*next >> 6) as usize;
    let mut first = u64::MAX << (*next & 63);
    let flip = if model.minority_is_one { 0 } else { u64::MAX };
    while wi < word_end {
        let batch_end = (wi + BATCH).min(word_end);
        let mut n = 0usize;
        for (j, &word) in words.iter().enumerate().take(batch_end).skip(wi) {
            // Minority bits as 1s: the words inverted where 0 is the
            // minority (padding past `bits` then reads as 1s, which the
            // emit loop ignores).
            let mut w = (word ^ flip) & first;
            first = u64::MAX;
            let base = (j as u64) << 6;
            let cnt = w.count_ones() as usize;
            for slot in &mut buf[n..n + 16] {
                *slot = base + u64::from(w.trailing_zeros());
                w &= w.wrapping_sub(1);
            }
            for slot in buf.iter_mut().take(n + cnt).skip(n + 16) {
                *slot = base + u64::from(w.trailing_zeros());
                w &= w.wrapping_sub(1);
            }
            n += cnt;
        }
        let mut i = 0;
        while i < n {
            let one = buf[i];
            if one >= bits {
                // Ones past the block end (padding a caller left set) are
                // ignored, as in the general loop.
                break;
            }
            if p >= threshold {
                *pos = p;
                *next = one;
                return;
            }
            let run = one - p;
            if run >= esc_len {
                ops.push(esc_op);
                p += esc_len;
                continue;
            }
            ops.push(run_op[run as usize]);
            p = one + 1;
            i += 1;
        }
        wi = batch_end;
    }
    // No one left in the block: the general loop codes the final run.
    *pos = p;
    *next = bits;
}

/// Exact ⌊x / d⌋ for x < 2^32 and 1 <= d <= 2^12 by multiplication
/// (Granlund–Montgomery: with l = ⌈log2 d⌉ and r = ⌈2^(32+l) / d⌉,
/// ⌊x·r / 2^(32+l)⌋ = ⌊x / d⌋ for every x < 2^32).
#[inline]
// Encoder: it codes the caller's own filter, never received bytes. Indices
// and sums are bounded by the block (<= 2^40 bits) as commented inline.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn div_by_freq(x: u32, d: u32) -> u32 {
    let (r, s) = RECIPROCALS[d as usize];
    ((u128::from(x) * u128::from(r)) >> s) as u32
}

/// (r, 32 + l) for every frequency d in 1..=2^12 (index 0 unused).
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // const evaluation: any error fails the build
static RECIPROCALS: [(u64, u32); PROB_SCALE as usize + 1] = {
    let mut t = [(0u64, 0u32); PROB_SCALE as usize + 1];
    let mut d = 1u64;
    while d <= PROB_SCALE as u64 {
        t[d as usize] = reciprocal(d, 32);
        d += 1;
    }
    t
};

/// (r, s) with ⌊x·r / 2^s⌋ = ⌊x / d⌋ for every x < 2^n (Granlund and
/// Montgomery: l = ⌈log2 d⌉, s = n + l, r = ⌈2^s / d⌉; r·d − 2^s < d ≤ 2^l,
/// so the error x·(r·d − 2^s)/(d·2^s) stays below 1/d and the floor is
/// exact). r < 2^64 when n + l ≤ 64 + ⌊log2 d⌋, as for n = 32 and d ≤ 2^12
/// here and n = 63, d < 2^24 in the byte coder. d = 0 is taken as 1.
// Encoders only (their own filter): the shifts are below 128.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) const fn reciprocal(d: u64, n: u32) -> (u64, u32) {
    let d = if d == 0 { 1 } else { d };
    let l = 64 - (d - 1).leading_zeros();
    let s = n + l;
    ((1u128 << s).div_ceil(d as u128) as u64, s)
}

/// Reads 16-bit words from a block stream, reporting where it ran out.
struct Words<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Words<'_> {
    /// The two bytes at the read position, if the stream has them.
    #[inline]
    fn peek(&self) -> Option<u32> {
        let b = self.data.get(self.pos..)?.first_chunk::<2>()?;
        Some(u32::from(u16::from_le_bytes(*b)))
    }

    #[inline]
    fn next(&mut self) -> Result<u32, CoderError> {
        let w = self
            .peek()
            .ok_or(CoderError::UnexpectedEnd { offset: self.pos })?;
        // Two bytes were there: pos + 2 <= data.len().
        self.pos = self.pos.wrapping_add(2);
        Ok(w)
    }

    /// Renormalises a decoder state (I2) without a data-dependent branch:
    /// reads a word only when x < L, and fails as soon as that read would
    /// pass the end of the stream.
    #[inline]
    fn renorm(&mut self, x: u32) -> Result<u32, CoderError> {
        let need = x < RANS_L;
        let w = match self.peek() {
            Some(w) => w,
            None if need => return Err(CoderError::UnexpectedEnd { offset: self.pos }),
            None => 0,
        };
        let sh = u32::from(need) << 4;
        let mask = 0u32.wrapping_sub(u32::from(need)) & 0xffff;
        // A word is consumed only if it was there: pos + 2 <= data.len().
        self.pos = self.pos.wrapping_add(usize::from(need) << 1);
        // Shifted only when x < 2^16: the result is below 2^32 (I2).
        Ok(x << sh | (w & mask))
    }
}

/// The decoder's hot loop for the common case: runs of majority bits ended
/// by a minority bit, no low bits (t = 0), with `LANES` interleaved states
/// (4, or 1 for blocks below [`INTERLEAVE_MIN_BITS`]); it writes a 1 at each
/// minority bit (the caller flips the range where 0 is the minority).
/// Decodes the next `LANES` operations (one per lane, `states[0]` first, see
/// [`next_lane`]), then applies them. It runs only while `LANES` symbols
/// cannot reach `limit` (the next model rebuild or the block end: each
/// symbol advances at most escape_len = L bits) and while the input holds
/// the 8 bytes that cover the at most `LANES` renormalisations, so none of
/// the general loop's per-symbol checks can fail inside it; the general loop
/// takes over near either edge. Returns the number of symbols it decoded.
///
/// Overflow (any input, not only valid streams): a state is a u32, so
/// f·(x >> 12) + bias <= f·((x >> 12) + 1) − 1 <= 2^12·2^20 − 1 (bias < f <=
/// 2^12), and a state is shifted left by 16 only when it is below 2^16 (I2).
/// Positions: p + span <= limit <= 2^40 (a block) before each round, and a round
/// advances p by at most span; `at` <= data.len() − 8 before a round reads.
#[inline(never)]
#[allow(clippy::arithmetic_side_effects, clippy::too_many_arguments)]
fn fast_runs<const LANES: usize>(
    states: &mut [u32; 4],
    table: &[u64; PROB_SCALE as usize],
    model: &Model,
    input: &mut Words<'_>,
    words: &mut [u64],
    pos: &mut u64,
    limit: u64,
    minority: &mut u64,
) -> u64 {
    const { assert!(LANES == 1 || LANES == 4) };
    let span = LANES as u64 * (model.escape_len + 1);
    let mut steps = 0u64;
    let mut xs = [0u32; LANES];
    for (x, s) in xs.iter_mut().zip(states.iter()) {
        *x = *s;
    }
    let mut p = *pos;
    let mut placed = 0u64;
    let data = input.data;
    let mut at = input.pos;
    while p + span <= limit {
        // The (at most LANES <= 4) words this round can read, in one load.
        let Some(chunk) = data.get(at..).and_then(|r| r.first_chunk::<8>()) else {
            break;
        };
        let chunk = u64::from_le_bytes(*chunk);
        let mut reads = 0u32;
        let mut es = [0u64; LANES];
        for (x, e) in xs.iter_mut().zip(es.iter_mut()) {
            *e = slot_entry(table, *x);
            let y = ((*e as u32 >> 7) & 0x1fff) * (*x >> PROB_BITS) + ((*e as u32 >> 20) & 0xfff);
            // I2: read the next word of the chunk only if y < L.
            *x = if y < RANS_L {
                let w = (chunk >> (reads << 4)) as u32 & 0xffff;
                reads += 1;
                y << 16 | w
            } else {
                y
            };
        }
        steps += LANES as u64;
        at += (reads as usize) << 1;
        for e in es {
            // A bucket symbol s: s majority bits, then a minority bit at
            // p + s (bit 63 of the entry). The escape sets nothing and
            // advances escape_len (p + s < limit <= bits keeps the index in
            // bounds).
            let bit = p + (e & 127);
            if let Some(w) = words.get_mut((bit >> 6) as usize) {
                *w |= (e >> 63) << (bit & 63);
            }
            placed += e >> 63;
            p += (e >> 32) & 0x7fff_ffff;
        }
    }
    for (s, x) in states.iter_mut().zip(xs) {
        *s = x;
    }
    *pos = p;
    *minority += placed;
    input.pos = at;
    steps
}

/// [`fast_runs`] for one lane count.
type FastRuns = fn(
    &mut [u32; 4],
    &[u64; PROB_SCALE as usize],
    &Model,
    &mut Words<'_>,
    &mut [u64],
    &mut u64,
    u64,
    &mut u64,
) -> u64;

/// The decode table entry for state `x`'s slot (x mod 2^12 indexes a
/// 2^12-entry table, so the lookup cannot miss and compiles to a plain load).
#[inline(always)]
fn slot_entry(table: &[u64; PROB_SCALE as usize], x: u32) -> u64 {
    table
        .get((x & (PROB_SCALE - 1)) as usize)
        .copied()
        .unwrap_or(0)
}

/// Moves to the next lane: the states rotate so that the lane of the next
/// operation is always `states[0]`, followed by the lanes after it in order
/// (with one lane nothing moves). No lane index is kept, so none can be out
/// of range, and [`fast_runs`] can start at any operation.
#[inline]
fn next_lane(states: &mut [u32; 4], lanes: usize) {
    if lanes == 4 {
        let [a, b, c, d] = *states;
        *states = [b, c, d, a];
    }
}

/// One rANS decode step (I2): state `x` whose slot fell in a symbol of
/// frequency `f`, at `bias` = slot − start within it.
///
/// Overflow (any input, not only valid streams): a state is a u32, so
/// f·(x >> 12) + bias <= f·((x >> 12) + 1) − 1 <= 2^12·2^20 − 1 (bias < f <=
/// 2^12), and a state is shifted left by 16 only when it is below 2^16 (I2).
#[inline]
#[allow(clippy::arithmetic_side_effects)]
fn decode_step(x: u32, f: u32, bias: u32, input: &mut Words<'_>) -> Result<u32, CoderError> {
    input.renorm(f * (x >> PROB_BITS) + bias)
}

/// Decodes one block stream into `words` (bits [0, bits); whatever they
/// held is overwritten).
/// `base` is the stream's offset in the payload, for error reports. Returns
/// the number of coding steps (symbols and uniform chunks) it decoded: the
/// decoder's work, which docs/HARDENING.md bounds by 5 steps per output
/// bit plus one per block.
pub(crate) fn decode_block(
    data: &[u8],
    bits: u64,
    words: &mut [u64],
    base: usize,
) -> Result<u64, CoderError> {
    decode_block_inner(data, bits, words, true, None)
        .map(|(steps, _)| steps)
        .map_err(|e| e.shifted(base))
}

/// Decodes a block coded with the static model `build(bits, ones)` (format
/// type 4, mode 0) into `words` (overwritten). Returns the coding steps
/// and the number of 1 bits it wrote (the caller compares it with `ones`).
/// Offsets in errors are relative to the stream.
pub(crate) fn decode_block_fixed(
    data: &[u8],
    bits: u64,
    ones: u64,
    words: &mut [u64],
) -> Result<(u64, u64), CoderError> {
    let model = Model::build(bits, ones);
    decode_block_inner(data, bits, words, true, Some(&model))
}

/// Overflow: states as in [`decode_step`]. Positions: the loop keeps
/// pos < bits <= 2^40 (2^23 in type 1, up to 2^40 in type 4) at the top
/// of each symbol; a run has at most 7 + t <= 47 bits, so pos + run and
/// pos + escape_len cannot overflow, and
/// pos advances only after they are checked against `remaining`. The initial
/// states took 4 bytes each, so `input.pos` >= 4 where that is subtracted.
/// With `fast` off, every symbol takes the general loop (the reference the
/// fast paths must agree with).
#[allow(clippy::arithmetic_side_effects)]
fn decode_block_inner(
    data: &[u8],
    bits: u64,
    words: &mut [u64],
    fast: bool,
    fixed: Option<&Model>,
) -> Result<(u64, u64), CoderError> {
    // The decoder writes only the minority bits: clear the block first, on
    // its own thread rather than on the caller's before the threads start
    // (type 1's blocks are 1 MiB, so their words are still in cache when
    // the decode writes them).
    words.fill(0);
    let mut steps = 0u64;
    // Minority bits written (each at its own position), from which the
    // count of ones follows.
    let mut minority = 0u64;
    let lanes = lanes_for(bits);
    let mut input = Words { data, pos: 0 };
    let mut states = [RANS_L; 4];
    // The length first (docs/FORMAT.md 3.1: a stream shorter than the
    // states is UnexpectedEnd, whatever its first bytes hold), then each
    // state.
    if data.len() < 4 * lanes {
        return Err(CoderError::UnexpectedEnd { offset: data.len() });
    }
    for s in states.iter_mut().take(lanes) {
        let lo = input.next()?;
        let hi = input.next()?;
        *s = lo | hi << 16;
        if *s < RANS_L {
            // I1 must hold for the initial states too.
            return Err(CoderError::BadState {
                offset: input.pos - 4,
            });
        }
    }
    let mut table = Box::new([0u64; PROB_SCALE as usize]);
    let mut pos = 0u64;
    let (mut sched, mut model) = match fixed {
        Some(m) => (Schedule::never(), m.clone()),
        None => (Schedule::new(), Model::build(0, 0)),
    };
    model.fill_decode_table(&mut table);
    // Operation j uses lane j mod lanes, whose state is states[0] when
    // operation j is decoded (see `next_lane`).
    loop {
        if let Some(m) = sched.due(words, pos) {
            // Late stages often quantise to the same tables: keep the old one.
            if !m.same_tables(&model) {
                m.fill_decode_table(&mut table);
            }
            model = m;
        }
        if fast && model.t == 0 {
            // The fast paths write a 1 at every minority bit. Where 0 is the
            // minority, the range they decoded is then flipped: it held only
            // those 1s (the output starts zeroed and each bit is written
            // once), so the flip leaves the minority 0s and the majority 1s.
            let start = pos;
            let limit = sched.threshold.min(bits);
            let run: FastRuns = if lanes == 4 {
                fast_runs::<4>
            } else {
                fast_runs::<1>
            };
            steps += run(
                &mut states,
                &table,
                &model,
                &mut input,
                words,
                &mut pos,
                limit,
                &mut minority,
            );
            if !model.minority_is_one {
                flip_range(words, start, pos - start);
            }
        }
        steps += 1;
        // One symbol on the current lane.
        let x = states[0];
        let e = slot_entry(&table, x) as u32;
        let sym = e & 127;
        states[0] = decode_step(x, (e >> 7) & 0x1fff, e >> 20, &mut input)?;
        next_lane(&mut states, lanes);
        let remaining = bits - pos;
        if sym == model.buckets {
            if model.escape_len > remaining {
                return Err(CoderError::RunPastEnd {
                    offset: input.pos,
                    position: pos + model.escape_len,
                });
            }
            if !model.minority_is_one {
                fill_ones(words, pos, model.escape_len);
            }
            pos += model.escape_len;
            continue;
        }
        let mut run = u64::from(sym) << model.t;
        let mut width = model.t;
        let mut shift = 0u32;
        while width > 0 {
            // A uniform chunk of c low bits: frequency f = 2^(12 − c), value
            // slot / f, bias slot mod f.
            let c = width.min(PROB_BITS);
            let x = states[0];
            let slot = x & (PROB_SCALE - 1);
            let f = 1u32 << (PROB_BITS - c);
            states[0] = decode_step(x, f, slot & (f - 1), &mut input)?;
            next_lane(&mut states, lanes);
            steps += 1;
            run += u64::from(slot / f) << shift;
            shift += c;
            width -= c;
        }
        if run > remaining {
            return Err(CoderError::RunPastEnd {
                offset: input.pos,
                position: pos + run,
            });
        }
        if !model.minority_is_one {
            fill_ones(words, pos, run);
        }
        pos += run;
        if pos == bits {
            break;
        }
        if model.minority_is_one {
            if let Some(w) = words.get_mut((pos >> 6) as usize) {
                *w |= 1u64 << (pos & 63);
            }
        }
        minority += 1;
        pos += 1;
    }
    if input.pos != data.len() {
        return Err(CoderError::TrailingData { offset: input.pos });
    }
    // Every lane is back at L (lanes not in use never left it).
    if states.iter().any(|&s| s != RANS_L) {
        return Err(CoderError::BadState { offset: input.pos });
    }
    // With a changing model the minority value can change between stages;
    // the count is used only with the fixed model.
    let ones = if model.minority_is_one {
        minority
    } else {
        bits - minority
    };
    Ok((steps, ones))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(words: &[u64], bits: u64) {
        let mut out = Vec::new();
        encode_block(words, bits, &mut out);
        let mut back = vec![0u64; words.len()];
        decode_block(&out, bits, &mut back, 0).unwrap();
        assert_eq!(back, words, "bits={bits}");
    }

    #[test]
    fn run_past_end_reports_where_the_run_would_reach() {
        // A 10-bit block under the initial model (p = 1/2: buckets 0..3, and
        // an escape of 4 bits). Streams the encoder never writes, built by
        // hand: the third escape would reach bit 12; after two escapes a
        // bucket 3 run would reach bit 11.
        let m = Model::build(0, 0);
        assert_eq!((m.buckets, m.escape_len), (4, 4));
        let esc = op(&m, 4);
        let cases = [
            (vec![esc, esc, esc], 12u64),
            (vec![esc, esc, op(&m, 3)], 11),
        ];
        for (ops, reach) in cases {
            let mut stream = Vec::new();
            rans_encode(&ops, 1, &mut Vec::new(), &mut stream);
            let mut words = vec![0u64; 1];
            let got = decode_block(&stream, 10, &mut words, 7);
            assert!(
                matches!(got, Err(CoderError::RunPastEnd { position, offset }) if position == reach && offset >= 7),
                "{got:?}"
            );
        }
    }

    #[test]
    fn initial_states_below_l_are_refused_and_l_is_accepted() {
        // One lane: the stream starts with the state as a little-endian u32.
        let stream = |x: u32| x.to_le_bytes().to_vec();
        let mut w = vec![0u64; 1];
        assert_eq!(
            decode_block(&stream(RANS_L - 1), 10, &mut w, 0),
            Err(CoderError::BadState { offset: 0 })
        );
        // x = L satisfies I1. Its slot (0) is bucket 0 of the fair-coin
        // model (f = 2048), so the next state is 2048·16 = 2^15 < L and needs
        // the word after the state, which is missing.
        assert_eq!(
            decode_block(&stream(RANS_L), 10, &mut w, 0),
            Err(CoderError::UnexpectedEnd { offset: 4 })
        );
    }

    /// splitmix64 bits of density `d`, with the density changing along the
    /// block when `drift` (so the minority flips between model stages).
    fn bits_of(bits: u64, d: f64, drift: bool, seed: u64) -> Vec<u64> {
        let mut s = seed;
        let mut w = vec![0u64; bits.div_ceil(64) as usize];
        for i in 0..bits {
            let z = crate::coder::tests::splitmix(&mut s);
            let here = if drift { d * (2.0 * i as f64 / bits as f64) } else { d };
            if (z >> 11) as f64 / (1u64 << 53) as f64 <= here {
                w[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        w
    }

    /// The fast paths (one lane and four; minority 1 or 0) write the same
    /// bytes and decode the same bits as the general loops alone.
    #[test]
    fn fast_paths_agree_with_the_general_loops() {
        for bits in [1000u64, 70_001, 1 << 20, (1 << 20) + 4_321] {
            for (d, drift) in [(0.02, false), (0.13, false), (0.45, false), (0.55, false), (0.87, false), (0.999, false), (0.5, true)] {
                let w = bits_of(bits, d, drift, bits ^ (d * 1e3) as u64);
                // The adaptive model (type 1) and the static one (type 4,
                // mode 0), each with the fast paths on and off.
                let ones = count_ones_range(&w, 0, bits);
                let fixed = Model::build(bits, ones);
                for model in [None, Some(&fixed)] {
                    let (mut fast, mut slow) = (Vec::new(), Vec::new());
                    encode_block_paths(&w, bits, &mut fast, &mut Scratch::default(), true, model);
                    encode_block_paths(&w, bits, &mut slow, &mut Scratch::default(), false, model);
                    assert!(fast == slow, "bits={bits} d={d} drift={drift}: encoders differ");
                    for path in [true, false] {
                        let mut back = vec![0u64; w.len()];
                        let (_, got) = decode_block_inner(&fast, bits, &mut back, path, model).unwrap();
                        assert!(back == w, "bits={bits} d={d} drift={drift} fast={path}");
                        if model.is_some() {
                            assert_eq!(got, ones, "bits={bits} d={d} drift={drift} fast={path}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dense_patch_in_a_sparse_block() {
        // The encoder's fast path flattens the ones of 16 words at a time;
        // a sparse block (ones the minority, t = 0) with 16 or more words of
        // all ones fills its whole batch buffer.
        let bits = 1u64 << 16;
        let mut w: Vec<u64> = (0..bits / 64)
            .map(|i| 0x0101_0101_0101_0101u64.rotate_left(i as u32))
            .collect();
        for x in &mut w[512..512 + 20] {
            *x = u64::MAX;
        }
        round_trip(&w, bits);
        // The same with the patch straddling a batch boundary.
        let mut w2: Vec<u64> = (0..bits / 64).map(|i| 1u64 << (i % 64)).collect();
        for x in &mut w2[300..300 + 33] {
            *x = u64::MAX;
        }
        round_trip(&w2, bits);
    }

    #[test]
    fn runs_ending_exactly_at_block_end() {
        // Sparse blocks whose last one is followed by a whole number of
        // escapes, for lane counts 1 and 4 and word-aligned ends: the final
        // escape lands exactly on the block end.
        for bits in [1u64 << 20, (1 << 20) + 64, 4096, 4160] {
            for gap in 1..200u64 {
                let mut w = vec![0u64; bits.div_ceil(64) as usize];
                let mut i = 0;
                while i < bits - gap {
                    w[(i / 64) as usize] |= 1 << (i % 64);
                    i += 7 + (i % 5);
                }
                let last = bits - gap - 1;
                w[(last / 64) as usize] |= 1 << (last % 64);
                round_trip(&w, bits);
            }
        }
    }

    #[test]
    fn reciprocal_division_is_exact() {
        let mut s = 0x1234_5678_9abc_def0u64;
        for d in 1..=PROB_SCALE {
            let probe = |x: u32| assert_eq!(div_by_freq(x, d), x / d, "x={x} d={d}");
            probe(0);
            probe(u32::MAX);
            probe(u32::MAX - 1);
            for q in [1u32, 2, 1000, u32::MAX / d] {
                let base = q.wrapping_mul(d);
                probe(base);
                probe(base.wrapping_sub(1));
                probe(base.wrapping_add(1));
            }
            for _ in 0..64 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                probe(s as u32);
            }
        }
    }

    #[test]
    fn ones_range_counts() {
        let words = [u64::MAX, 0xF0F0_F0F0_F0F0_F0F0, 1];
        for from in 0..192u64 {
            for to in from..=192u64 {
                let naive = (from..to)
                    .filter(|&i| words[(i / 64) as usize] >> (i % 64) & 1 == 1)
                    .count() as u64;
                assert_eq!(count_ones_range(&words, from, to), naive);
            }
        }
    }
}
