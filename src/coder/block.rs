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

/// Sets bits [from, from + len) to one.
#[inline]
fn fill_ones(words: &mut [u64], from: u64, len: u64) {
    let mut pos = from;
    let end = from + len;
    while pos < end {
        let wi = (pos >> 6) as usize;
        let lo = pos & 63;
        let n = (64 - lo).min(end - pos);
        let mask = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << lo
        };
        words[wi] |= mask;
        pos += n;
    }
}

/// Appends the coding operations (start << 16 | freq) for `run` majority
/// bits followed by a (possibly virtual) minority bit.
#[inline]
fn push_run(ops: &mut Vec<u32>, model: &Model, mut run: u64) {
    let esc = model.buckets as usize;
    while run >= model.escape_len {
        ops.push(u32::from(model.start[esc]) << 16 | u32::from(model.freq[esc]));
        run -= model.escape_len;
    }
    let j = (run >> model.t) as usize;
    ops.push(u32::from(model.start[j]) << 16 | u32::from(model.freq[j]));
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
}

/// Encodes bits [0, bits) of `words` (a block, word-aligned) and appends the
/// stream to `out`.
pub(crate) fn encode_block(words: &[u64], bits: u64, out: &mut Vec<u8>) {
    let lanes = lanes_for(bits);
    // Forward pass: turn the block into coding operations with the adaptive
    // model, exactly as the decoder will see it.
    let mut ops: Vec<u32> = Vec::with_capacity((bits / 8) as usize + 16);
    let mut pos = 0u64;
    let mut ones = 0u64;
    let mut threshold = FIRST_STAGE;
    let mut model = Model::build(0, 0);
    loop {
        if pos >= threshold {
            model = Model::build(pos, ones);
            while threshold <= pos {
                threshold *= 2;
            }
        }
        let next = next_bit(words, pos, bits, model.minority_is_one);
        let run = next - pos;
        push_run(&mut ops, &model, run);
        if !model.minority_is_one {
            ones += run;
        }
        if next == bits {
            break;
        }
        if model.minority_is_one {
            ones += 1;
        }
        pos = next + 1;
    }
    // Backward pass: rANS is last-in first-out.
    let mut states = [RANS_L; 4];
    let mut rev: Vec<u16> = Vec::with_capacity(ops.len() / 2 + 8);
    for (j, &op) in ops.iter().enumerate().rev() {
        let lane = j % lanes;
        let freq = op & 0xffff;
        let start = op >> 16;
        let mut x = states[lane];
        // I3: one emission brings x below freq·2^20.
        if x >= freq << X_MAX_SHIFT {
            rev.push(x as u16);
            x >>= 16;
        }
        x = ((x / freq) << PROB_BITS) + (x % freq) + start;
        states[lane] = x;
    }
    for lane in (0..lanes).rev() {
        rev.push((states[lane] >> 16) as u16);
        rev.push(states[lane] as u16);
    }
    out.reserve(rev.len() * 2);
    for w in rev.iter().rev() {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Reads 16-bit words from a block stream, reporting where it ran out.
struct Words<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Words<'_> {
    #[inline]
    fn next(&mut self) -> Result<u32, CoderError> {
        match self.data.get(self.pos..self.pos + 2) {
            Some(b) => {
                self.pos += 2;
                Ok(u32::from(u16::from_le_bytes([b[0], b[1]])))
            }
            None => Err(CoderError::UnexpectedEnd { offset: self.pos }),
        }
    }
}

/// Decodes one block stream into `words` (zeroed on entry; bits [0, bits)).
/// `base` is the stream's offset in the payload, for error reports.
pub(crate) fn decode_block(
    data: &[u8],
    bits: u64,
    words: &mut [u64],
    base: usize,
) -> Result<(), CoderError> {
    decode_block_inner(data, bits, words).map_err(|e| e.shifted(base))
}

fn decode_block_inner(data: &[u8], bits: u64, words: &mut [u64]) -> Result<(), CoderError> {
    let lanes = lanes_for(bits);
    let mut input = Words { data, pos: 0 };
    let mut states = [RANS_L; 4];
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
    let mut table = Box::new([0u32; PROB_SCALE as usize]);
    let mut pos = 0u64;
    let mut ones = 0u64;
    let mut threshold = FIRST_STAGE;
    let mut model = Model::build(0, 0);
    model.fill_decode_table(&mut table);
    let mut lane = 0usize;
    // One rANS decode step on the current lane; returns the slot.
    macro_rules! step {
        ($freq_bias:expr) => {{
            let x = states[lane];
            let slot = x & (PROB_SCALE - 1);
            let (f, bias) = ($freq_bias)(slot);
            let mut x = f * (x >> PROB_BITS) + bias;
            if x < RANS_L {
                x = x << 16 | input.next()?;
            }
            states[lane] = x;
            lane += 1;
            if lane == lanes {
                lane = 0;
            }
            slot
        }};
    }
    loop {
        if pos >= threshold {
            model = Model::build(pos, ones);
            model.fill_decode_table(&mut table);
            while threshold <= pos {
                threshold *= 2;
            }
        }
        // Decode one run: escapes, then a bucket, then the low bits.
        let mut run = 0u64;
        let remaining = bits - pos;
        loop {
            let mut sym = 0u32;
            step!(|slot: u32| {
                let e = table[slot as usize];
                sym = e & 127;
                ((e >> 7) & 0x1fff, e >> 20)
            });
            if sym == model.buckets {
                run += model.escape_len;
                if run > remaining {
                    return Err(CoderError::RunPastEnd {
                        offset: input.pos,
                        position: pos + run,
                    });
                }
            } else {
                run += u64::from(sym) << model.t;
                break;
            }
        }
        let mut width = model.t;
        let mut shift = 0u32;
        while width > 0 {
            let c = width.min(PROB_BITS);
            let f = 1u32 << (PROB_BITS - c);
            let slot = step!(|slot: u32| (f, slot & (f - 1)));
            run += u64::from(slot >> (PROB_BITS - c)) << shift;
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
            ones += run;
        }
        pos += run;
        if pos == bits {
            break;
        }
        if model.minority_is_one {
            words[(pos >> 6) as usize] |= 1u64 << (pos & 63);
            ones += 1;
        }
        pos += 1;
    }
    if input.pos != data.len() {
        return Err(CoderError::TrailingData { offset: input.pos });
    }
    if states.iter().take(lanes).any(|&s| s != RANS_L) {
        return Err(CoderError::BadState { offset: input.pos });
    }
    Ok(())
}
