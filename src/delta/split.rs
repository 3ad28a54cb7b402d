//! Splitting an XOR delta by the base filter's bits, and joining it back.
//!
//! A conditional delta (filter type 3) codes the XOR bits at the base's
//! 0 positions and those at its 1 positions as two separate arrays ("parts"),
//! each in increasing position order. The receiver holds the base, so it
//! knows which positions each part covers. The two parts have very different
//! densities (a key added flips 0s, a key removed flips 1s, and the base has
//! far fewer 1s than 0s), so coding them apart costs
//! log2 C(m0, d0) + log2 C(m1, d1) bits instead of log2 C(m, d).

use crate::prelude::*;
use crate::coder::{Blocks, CoderError, BLOCK_BITS};
/// Which of the base's bits a part covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Positions where the base is 0 (the part comes first on the wire).
    Zeros,
    /// Positions where the base is 1.
    Ones,
}

/// The positions of word `i` of an m-bit `base` that belong to each side,
/// [zeros, ones], and the number of filter bits in the word (padding bits
/// past m belong to neither side).
#[inline]
fn word_masks(base: &[u64], m: u64, i: usize) -> ([u64; 2], u64) {
    let w = base.get(i).copied().unwrap_or(0);
    // Bits of the filter in this word: m − 64·i, clamped to [0, 64].
    let width = m.saturating_sub((i as u64).saturating_mul(64)).min(64);
    let valid = low_mask(width);
    ([!w & valid, w & valid], width)
}

/// The positions of word `i` of an m-bit `base` that belong to `side`.
fn side_mask(base: &[u64], m: u64, i: usize, side: Side) -> u64 {
    let ([zeros, ones], _) = word_masks(base, m, i);
    match side {
        Side::Zeros => zeros,
        Side::Ones => ones,
    }
}

/// A mask of the low `count` bits (all 64 for `count` >= 64).
#[inline(always)]
fn low_mask(count: u64) -> u64 {
    // 64 − c <= 64; a shift by 64 (c = 0) is None, so no branch on c's
    // value is needed (a conditional move).
    let c = count.min(64) as u32;
    u64::MAX.checked_shr(64u32.wrapping_sub(c)).unwrap_or(0)
}

/// Number of bits in the part of `side` (the count of the base's 0s or 1s).
pub(crate) fn part_len(base: &[u64], m: u64, side: Side) -> u64 {
    (0..base.len())
        .map(|i| u64::from(side_mask(base, m, i, side).count_ones()))
        .sum()
}

/// Gathers the bits of `xor` at the positions of `side` into a packed array
/// (the software equivalent of the `pext` instruction, word by word).
pub(crate) fn gather(xor: &[u64], base: &[u64], m: u64, side: Side) -> (Vec<u64>, u64) {
    let len = part_len(base, m, side);
    let mut out = vec![0u64; len.div_ceil(64) as usize];
    let mut at = 0u64;
    for (i, &x) in xor.iter().enumerate() {
        let mask = side_mask(base, m, i, side);
        if mask == u64::MAX {
            // The whole word belongs to the side: its bits go in as they are.
            put_bits(&mut out, at, x);
            at = at.wrapping_add(64);
            continue;
        }
        let mut hits = x & mask;
        while hits != 0 {
            let bit = hits.trailing_zeros();
            let rank = u64::from((mask & low_mask(u64::from(bit))).count_ones());
            // at + rank < len <= m: no overflow, and t / 64 < out.len().
            let t = at.wrapping_add(rank);
            if let Some(w) = out.get_mut((t / 64) as usize) {
                *w |= 1 << (t % 64);
            }
            hits &= hits.wrapping_sub(1);
        }
        at = at.wrapping_add(u64::from(mask.count_ones()));
    }
    debug_assert_eq!(at, len);
    (out, len)
}

/// ORs the 64 bits of `value` into `out` from bit `at` (which the caller
/// keeps within `out`).
fn put_bits(out: &mut [u64], at: u64, value: u64) {
    let i = (at / 64) as usize;
    let shift = (at % 64) as u32;
    if let Some(w) = out.get_mut(i) {
        *w |= value << shift;
    }
    if shift != 0 {
        if let Some(w) = out.get_mut(i.wrapping_add(1)) {
            // 0 < shift < 64: a valid shift.
            *w |= value >> 64u32.wrapping_sub(shift);
        }
    }
}

/// `SELECT_IN_BYTE[b][j]`: the position of the j-th (from 0) set bit of
/// byte `b`, or 8 if `b` has at most j set bits. Evaluated at compile time,
/// so an out-of-range index or overflow here would fail the build, not a
/// decode.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut t = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        let mut bit = 0;
        while bit < 8 {
            if b & (1 << bit) != 0 {
                t[b][j] = bit as u8;
                j += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
};

/// Places the low `popcount(mask)` bits of `src` at the set positions of
/// `mask`, lowest first (the software `pdep`): [`place`] with the mask's
/// prefix, the form the tests check against a bit-at-a-time reference.
#[cfg(test)]
fn deposit(src: u64, mask: u64) -> u64 {
    let prefix = byte_prefix(mask);
    place(src & low_mask(prefix >> 56), mask, prefix)
}

/// The deposit of a `src` with two set bits or more (and none past
/// popcount(mask)), given the mask's [`byte_prefix`]. It walks whichever of
/// src's 1s and 0s are fewer, one branch-free select per bit (at most 32
/// per word), and takes no step at all for a mask of all ones (a base word
/// of 0s) or a source of all 1s, so a conditional delta costs time in
/// proportion to its changed bits, not to m (docs/HARDENING.md, "Cost").
fn deposit_many(src: u64, mask: u64, prefix: u64) -> u64 {
    if mask == u64::MAX {
        return src;
    }
    let need = (prefix >> 56) as u32;
    if src.count_ones() > need / 2 {
        mask & !deposit_sparse(!src & low_mask(u64::from(need)), mask, prefix)
    } else {
        deposit_sparse(src, mask, prefix)
    }
}

/// 1 in the low bit of every byte, and in the high bit of every byte (SWAR).
const B: u64 = 0x0101_0101_0101_0101;
const H: u64 = 0x8080_8080_8080_8080;

/// Ones in every byte of `x`, as a cumulative sum: byte b of the result
/// holds the number of set bits in bytes 0..=b of `x` (at most 64, so no
/// byte overflows into the next).
fn byte_prefix(x: u64) -> u64 {
    let s = x.wrapping_sub((x >> 1) & 0x5555_5555_5555_5555);
    let s = (s & 0x3333_3333_3333_3333).wrapping_add((s >> 2) & 0x3333_3333_3333_3333);
    let s = s.wrapping_add(s >> 4) & 0x0F0F_0F0F_0F0F_0F0F;
    s.wrapping_mul(B)
}

/// Position of the j-th (from 0) set bit of `mask`, whose [`byte_prefix`]
/// is `prefix`; j must be below popcount(mask) (else the answer is some
/// position, never a panic). Broadword select: the target byte is the first
/// whose cumulative count exceeds j (a SWAR comparison and a
/// trailing-zeros count), and a table selects inside the byte.
fn select_in_word(mask: u64, prefix: u64, j: u32) -> u32 {
    // Byte b's flag (its top bit) is set when prefix_b > j: 127 − j (which
    // is 127 XOR j for j < 64) is at least 64 and prefix_b at most 64, so
    // no byte's sum carries into the next.
    let gt = prefix.wrapping_add(u64::from((j & 63) ^ 127).wrapping_mul(B)) & H;
    // The cumulative counts only grow, so the first flagged byte holds the
    // j-th set bit: its flag is bit 8·byte + 7, and `& 0x38` gives 8·byte
    // (and 0 when no byte is flagged, j >= popcount(mask): trailing_zeros
    // is then 64).
    let shift = gt.trailing_zeros() & 0x38;
    // Set bits in the bytes below `byte` (prefix shifted up one byte).
    let below = ((prefix << 8) >> shift) as u32 & 0xFF;
    let b = ((mask >> shift) & 0xFF) as usize;
    let sel = SELECT_IN_BYTE
        .get(b)
        // The rank inside the byte is below 8 for a valid j; the mask keeps
        // the index in the row without a branch for any j (a branch here
        // would be taken at random for the 0 chunks the scatter selects in).
        .and_then(|row| row.get((j.wrapping_sub(below) & 7) as usize))
        .copied()
        .unwrap_or(0);
    shift.wrapping_add(u32::from(sel)) & 63
}

/// The deposit of one set bit of `src` at a time: the j-th bit of src goes to
/// the j-th set bit of mask.
fn deposit_sparse(mut src: u64, mask: u64, prefix: u64) -> u64 {
    let mut out = 0u64;
    while src != 0 {
        out |= 1u64 << select_in_word(mask, prefix, src.trailing_zeros());
        src &= src.wrapping_sub(1);
    }
    out
}

/// `count` (≤ 64) bits of `words` from bit `at`, as the low bits of a u64
/// (a funnel shift: no branch on the bit offset, which is as good as random
/// in the scatter).
#[inline(always)]
fn bits_at(words: &[u64], at: u64, count: u32) -> u64 {
    let i = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let lo = words.get(i).copied().unwrap_or(0) >> shift;
    // Two shifts, by 1 and by 63 − shift (both below 64), put the next
    // word's low bits above the 64 − shift taken from this one, and shift
    // them out entirely when shift is 0. Bits past `count` are masked off,
    // so reading the next word when the bits end in this one is harmless.
    let hi = (words.get(i.wrapping_add(1)).copied().unwrap_or(0) << 1) << 63u32.wrapping_sub(shift);
    (lo | hi) & low_mask(u64::from(count))
}

/// One part's bits, read front to back from any starting bit, decoding one
/// coder block at a time into a buffer of its own (at most
/// [`BLOCK_BITS`]/8 bytes).
pub(crate) struct PartReader<'b, 'a> {
    /// The part's blocks; `None` for a part of no bits.
    blocks: Option<&'b Blocks<'a>>,
    buf: Vec<u64>,
    /// The block to decode when `buf` runs out.
    next: usize,
    /// Bits to skip at the front of the next block decoded (the starting
    /// bit's offset in its block; 0 after the first block).
    skip: u64,
    /// Bits in `buf`, and the next one to read (at <= bits).
    bits: u64,
    at: u64,
}

impl<'b, 'a> PartReader<'b, 'a> {
    /// A reader whose first bit is bit `start` of the part.
    pub(crate) fn new(blocks: Option<&'b Blocks<'a>>, start: u64) -> Self {
        PartReader {
            blocks,
            buf: Vec::new(),
            next: usize::try_from(start / BLOCK_BITS).unwrap_or(usize::MAX),
            skip: start % BLOCK_BITS,
            bits: 0,
            at: 0,
        }
    }

    /// The next `n` (<= 64) bits of the part, as the low bits of a u64.
    ///
    /// # Errors
    /// The error of the block that holds them, which is decoded here; asking
    /// past the part's end is reported as a stream that ends early.
    #[inline]
    pub(crate) fn take(&mut self, n: u32) -> Result<u64, CoderError> {
        // at <= bits: no wrap.
        if u64::from(n) <= self.bits.wrapping_sub(self.at) {
            let v = bits_at(&self.buf, self.at, n);
            self.at = self.at.wrapping_add(u64::from(n));
            Ok(v)
        } else {
            self.take_across(n.min(64))
        }
    }

    /// [`Self::take`] where the bits run into the next block.
    #[cold]
    fn take_across(&mut self, n: u32) -> Result<u64, CoderError> {
        let mut v = 0u64;
        let mut have = 0u32;
        while have < n {
            if self.at == self.bits {
                self.load()?;
                continue;
            }
            // have < n <= 64 and at < bits: 0 < t <= n − have, so the loop
            // ends, and the shift by have is below 64.
            let t = u64::from(n.wrapping_sub(have)).min(self.bits.wrapping_sub(self.at)) as u32;
            v |= bits_at(&self.buf, self.at, t) << have;
            have = have.wrapping_add(t);
            self.at = self.at.wrapping_add(u64::from(t));
        }
        Ok(v)
    }

    /// Decodes the next block into the buffer. A start exactly at the end of
    /// its block leaves nothing to read in it (the next read loads the next
    /// block, or fails if there is none); a start past it is an error.
    fn load(&mut self) -> Result<(), CoderError> {
        let Some(blocks) = self.blocks else {
            return Err(CoderError::UnexpectedEnd { offset: 0 });
        };
        self.bits = blocks.decode_into(self.next, &mut self.buf)?;
        self.next = self.next.saturating_add(1);
        let skip = core::mem::take(&mut self.skip);
        self.at = skip.min(self.bits);
        if skip > self.bits {
            return Err(CoderError::UnexpectedEnd {
                offset: blocks.payload_len(),
            });
        }
        Ok(())
    }
}

/// Scatters the two parts of a conditional delta over `base` into `out`, the
/// result's words (base XOR the change) of the m-bit filter from word `w0`
/// on (the inverse of [`gather`]): word i takes the next popcount of its
/// base 0s from `zeros` and of its base 1s from `ones`, and deposits each at
/// its mask's positions. Writing the result rather than the XOR spares the
/// apply a pass over m (an unchanged word is a copy of the base's). Both
/// readers start at the first part bit word `w0` takes. Every word of `out` is
/// written. On error, the side whose block failed (the first word in
/// filter order that needs a bad block, zeros before ones in one word).
///
/// One pass over the words, both sides at once: a word's chunk of each
/// part is read with a funnel shift, and a chunk of at most one set bit
/// (most words of a sparse change) is placed by one broadword select whose
/// result is masked off when the chunk is 0, without a branch. Only chunks
/// of two bits or more take [`deposit_many`]. Where changes are rare, words
/// without one skip the reads and selects (the batches of
/// [`scatter_full_words`]). The work is one step per word plus one per changed
/// bit past the first in a word, never more than a deposit per word
/// (docs/HARDENING.md, "Cost").
pub(crate) fn scatter(
    base: &[u64],
    m: u64,
    w0: usize,
    out: &mut [u64],
    zeros: &mut PartReader<'_, '_>,
    ones: &mut PartReader<'_, '_>,
) -> Result<(), (Side, CoderError)> {
    // Words below m / 64 hold 64 filter bits (no padding to mask off).
    let full = usize::try_from(m / 64).unwrap_or(usize::MAX);
    let mut j = 0usize;
    while j < out.len() {
        let i = w0.saturating_add(j);
        // As many words as both readers' decoded blocks can serve.
        let words = base.get(i..full.max(i)).unwrap_or_default();
        let rest = out.get_mut(j..).unwrap_or_default();
        let done = scatter_full_words(words, rest, zeros, ones);
        j = j.saturating_add(done);
        let i = w0.saturating_add(j);
        let Some(o) = out.get_mut(j) else { break };
        // One word by the general path: the filter's last word, or one
        // whose part bits run into a block not decoded yet.
        let ([z, one], _) = word_masks(base, m, i);
        let (pz, po) = (byte_prefix(z), byte_prefix(one));
        // The cumulative count in a prefix's top byte is the popcount.
        let a = zeros
            .take((pz >> 56) as u32)
            .map_err(|e| (Side::Zeros, e))?;
        let b = ones.take((po >> 56) as u32).map_err(|e| (Side::Ones, e))?;
        // Padding bits past m are 0 in the base and in both deposits.
        *o = one ^ (place(a, z, pz) | place(b, one, po));
        j = j.saturating_add(1);
    }
    Ok(())
}

/// The byte prefix (see [`byte_prefix`]) of a word of all ones: 8, 16, ...,
/// 64. For a full word w, byte_prefix(!w) is this minus
/// byte_prefix(w), byte by byte without borrows.
const FULL_PREFIX: u64 = 0x4038_3028_2018_1008;

/// The inner loop of [`scatter`]: full filter words `base` (64 bits each)
/// into `out`, while each reader's current block holds the word's part
/// bits. Returns the number of words done; the readers are moved past
/// their bits.
///
/// Words go in batches of [`BATCH`], each by one of two loops, chosen by
/// how many words of the previous batch took a change: the branch-free
/// loop of [`dense_batch`] where many do (a branch on "this word changes"
/// would go either way at random), and the skipping loop of
/// [`sparse_batch`] where few do (the branch is then predicted, and a word
/// without a change costs a popcount and two compares instead of two reads
/// and two selects). On the 17.5 MB filter (`cond_apply_time` with
/// CHURN=0.0005 and 0.005), the skipping batches took the conditional apply
/// of a 0.05% key churn from 14.9–15.3 ms to 9.3–13.4 ms, and of a 0.5%
/// churn from 16.1–20.2 ms to 12.8–15.5 ms; at 5% it did not move.
fn scatter_full_words(
    base: &[u64],
    out: &mut [u64],
    zeros: &mut PartReader<'_, '_>,
    ones: &mut PartReader<'_, '_>,
) -> usize {
    let mut cur = Cursor {
        zb: zeros.buf.as_slice(),
        za: zeros.at,
        zbits: zeros.bits,
        ob: ones.buf.as_slice(),
        oa: ones.at,
        obits: ones.bits,
        // Not known yet: a position below the readers' makes the first
        // sparse batch look for them.
        nz: 0,
        no: 0,
    };
    let mut done = 0usize;
    // Start with the branch-free loop; it is never much slower.
    let mut changed = BATCH;
    loop {
        let end = done.saturating_add(BATCH).min(out.len()).min(base.len());
        let (Some(o), Some(w)) = (out.get_mut(done..end), base.get(done..end)) else {
            break;
        };
        if o.is_empty() {
            break;
        }
        let (n, c) = if changed.saturating_mul(8) < BATCH {
            sparse_batch(&mut cur, w, o)
        } else {
            dense_batch(&mut cur, w, o)
        };
        done = done.saturating_add(n);
        changed = c;
        if n < o.len() {
            // A reader's block ends inside this batch.
            break;
        }
    }
    zeros.at = cur.za;
    ones.at = cur.oa;
    done
}

/// Words per batch of [`scatter_full_words`].
const BATCH: usize = 64;

/// Both readers' decoded blocks and positions, for the batches.
struct Cursor<'s> {
    zb: &'s [u64],
    za: u64,
    zbits: u64,
    ob: &'s [u64],
    oa: u64,
    obits: u64,
    /// The next set bit of each part at or after its reader, found by a
    /// sparse batch and kept while the reader has not passed it (a batch
    /// that looked it up again would scan the same run of 0s each time).
    nz: u64,
    no: u64,
}

impl Cursor<'_> {
    /// For full base word `w`: its byte prefixes (ones, zeros) and its part
    /// bit counts (ones, zeros), or `None` if a reader's block ends before
    /// the word's bits do.
    #[inline(always)]
    fn word(&self, w: u64) -> Option<(u64, u64, u64, u64)> {
        let po = byte_prefix(w);
        let pz = FULL_PREFIX.wrapping_sub(po);
        let (co, cz) = (po >> 56, pz >> 56);
        // at <= bits throughout, so the differences do not wrap.
        if cz > self.zbits.wrapping_sub(self.za) || co > self.obits.wrapping_sub(self.oa) {
            return None;
        }
        Some((po, pz, co, cz))
    }

    /// Moves the readers past `zeros` and `ones` part bits if they all
    /// come before each part's next set bit (so the words they belong to do
    /// not change); else false, with nothing done. nz <= zbits and
    /// no <= obits, so bits passed this way lie in the readers' blocks.
    #[inline(always)]
    fn skip(&mut self, zeros: u64, ones: u64) -> bool {
        // Positions below 2^56, counts at most 64·GROUP: no overflow.
        let (ez, eo) = (self.za.wrapping_add(zeros), self.oa.wrapping_add(ones));
        if ez > self.nz || eo > self.no {
            return false;
        }
        self.za = ez;
        self.oa = eo;
        true
    }

    /// Places word `w`'s chunks of both parts and moves past them.
    #[inline(always)]
    fn place_word(&mut self, w: u64, (po, pz, co, cz): (u64, u64, u64, u64)) -> u64 {
        let a = bits_at(self.zb, self.za, cz as u32);
        let b = bits_at(self.ob, self.oa, co as u32);
        // za + cz <= zbits, oa + co <= obits (checked by `word`): no overflow.
        self.za = self.za.wrapping_add(cz);
        self.oa = self.oa.wrapping_add(co);
        place(a, !w, pz) | place(b, w, po)
    }
}

/// The branch-free loop: every word is read and placed. Returns the words
/// done and how many of them changed.
fn dense_batch(cur: &mut Cursor<'_>, base: &[u64], out: &mut [u64]) -> (usize, usize) {
    let (mut done, mut changed) = (0usize, 0usize);
    for (o, &w) in out.iter_mut().zip(base) {
        let Some(counts) = cur.word(w) else { break };
        let change = cur.place_word(w, counts);
        *o = w ^ change;
        changed = changed.wrapping_add(usize::from(change != 0));
        done = done.wrapping_add(1);
    }
    (done, changed)
}

/// The skipping loop: the next set bit of each part is known, and a word
/// whose chunks end before both is copied from the base without reading
/// them. Whole groups of [`GROUP`] such words go at once: one popcount sum
/// over the group (a fixed-size loop the compiler unrolls and vectorises)
/// moves both readers past it, so a run of unchanged words costs about two
/// cycles a word, not a byte-prefix count and two compares each.
fn sparse_batch(cur: &mut Cursor<'_>, base: &[u64], out: &mut [u64]) -> (usize, usize) {
    if cur.za > cur.nz || cur.za == 0 {
        cur.nz = next_one(cur.zb, cur.za, cur.zbits);
    }
    if cur.oa > cur.no || cur.oa == 0 {
        cur.no = next_one(cur.ob, cur.oa, cur.obits);
    }
    let (mut done, mut changed) = (0usize, 0usize);
    for (ws, os) in base.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
        if let (Ok(group), Ok(dst)) = (<&[u64; GROUP]>::try_from(ws), <&mut [u64; GROUP]>::try_from(&mut *os)) {
            // At most 64·GROUP ones: no overflow.
            let ones: u64 = group.iter().map(|w| u64::from(w.count_ones())).sum();
            if cur.skip(GROUP_BITS.wrapping_sub(ones), ones) {
                // A fixed-size copy, inlined (a slice copy is a call to
                // memmove, 7% of a sparse apply's time for 64 bytes each).
                *dst = *group;
                done = done.wrapping_add(GROUP);
                continue;
            }
        }
        for (o, &w) in os.iter_mut().zip(ws) {
            let Some(counts @ (_, _, co, cz)) = cur.word(w) else {
                return (done, changed);
            };
            if cur.skip(cz, co) {
                *o = w;
            } else {
                *o = w ^ cur.place_word(w, counts);
                changed = changed.wrapping_add(1);
                if cur.za > cur.nz {
                    cur.nz = next_one(cur.zb, cur.za, cur.zbits);
                }
                if cur.oa > cur.no {
                    cur.no = next_one(cur.ob, cur.oa, cur.obits);
                }
            }
            done = done.wrapping_add(1);
        }
    }
    (done, changed)
}

/// Words that [`sparse_batch`] skips at once when none of them changes.
const GROUP: usize = 8;

/// Filter bits in a group.
const GROUP_BITS: u64 = 64 * GROUP as u64;

/// The position of the first set bit of `words` at or after `from`, or
/// `bits` if there is none before it (bits past `bits` are 0). The run
/// coder's encoder has the same scan (`block::next_bit`), written for its
/// own arrays with unchecked indexing; a panic-free version shared by both
/// made that encoder 5% slower (202–215 against 191–202 MB/s, alternating),
/// so the decoder side keeps this one.
fn next_one(words: &[u64], from: u64, bits: u64) -> u64 {
    let mut i = (from / 64) as usize;
    let mut w = words.get(i).copied().unwrap_or(0) & (u64::MAX << (from % 64));
    if w == 0 {
        // Runs of 0 words go eight at a time (an OR the compiler
        // vectorises): the zeros part of a sparse change is mostly 0s.
        i = i.wrapping_add(1);
        while let Some(group) = words
            .get(i..i.wrapping_add(GROUP))
            .and_then(|g| <&[u64; GROUP]>::try_from(g).ok())
        {
            if group.iter().fold(0, |a, &x| a | x) != 0 {
                break;
            }
            i = i.wrapping_add(GROUP);
        }
        w = words.get(i).copied().unwrap_or(0);
    }
    loop {
        if w != 0 {
            // i < words.len() <= 2^17: no overflow.
            let at = ((i as u64) << 6).wrapping_add(u64::from(w.trailing_zeros()));
            return at.min(bits);
        }
        i = i.wrapping_add(1);
        match words.get(i) {
            Some(&x) => w = x,
            None => return bits,
        }
    }
}

/// Places the low `popcount(mask)` bits of `src` (it has no others) at the
/// set positions of `mask`, lowest first (the software `pdep`), given the
/// mask's [`byte_prefix`]: without a branch when src has at most one set
/// bit, else by [`deposit_many`].
#[inline(always)]
fn place(src: u64, mask: u64, prefix: u64) -> u64 {
    if src & src.wrapping_sub(1) != 0 {
        return deposit_many(src, mask, prefix);
    }
    // src is 0 or a single bit: select its position (for src = 0, j = 64
    // selects some position, which the mask below drops).
    let at = select_in_word(mask, prefix, src.trailing_zeros());
    (1u64 << at) & 0u64.wrapping_sub(u64::from(src != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(s: &mut u64) -> u64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *s
    }

    fn words(m: u64, s: &mut u64, sparse: bool) -> Vec<u64> {
        let mut w: Vec<u64> = (0..m.div_ceil(64))
            .map(|_| {
                let v = lcg(s);
                if sparse {
                    v & lcg(s) & lcg(s)
                } else {
                    v
                }
            })
            .collect();
        if !m.is_multiple_of(64) {
            if let Some(last) = w.last_mut() {
                *last &= (1u64 << (m % 64)) - 1;
            }
        }
        w
    }

    /// The coded payload of a part, or none for a part of no bits.
    fn coded(part: &[u64], len: u64) -> Vec<u8> {
        let mut out = Vec::new();
        if len > 0 {
            crate::coder::encode(part, len, &mut out);
        }
        out
    }

    /// Scatters words [w0, w1) of the filter from the coded parts.
    fn scatter_range(
        base: &[u64],
        m: u64,
        (w0, w1): (usize, usize),
        parts: [(&[u8], u64); 2],
        out: &mut [u64],
    ) -> Result<(), (Side, CoderError)> {
        let [zb, ob] = parts.map(|(bytes, len)| (len > 0).then(|| Blocks::new(bytes, len).unwrap()));
        let rank: u64 = base[..w0].iter().map(|w| u64::from(w.count_ones())).sum();
        let mut z = PartReader::new(zb.as_ref(), w0 as u64 * 64 - rank);
        let mut o = PartReader::new(ob.as_ref(), rank);
        scatter(base, m, w0, &mut out[w0..w1], &mut z, &mut o)?;
        // The scatter writes the result; the tests compare XORs.
        for (o, b) in out[w0..w1].iter_mut().zip(&base[w0..w1]) {
            *o ^= b;
        }
        Ok(())
    }

    /// Gather, code, then scatter (from any word on, as the threads do) is
    /// the identity, and the two parts together hold every XOR bit once.
    #[test]
    fn gather_scatter_round_trip() {
        let mut s = 7u64;
        for m in [1u64, 63, 64, 65, 130, 1000, 4097] {
            for (sparse, runs) in [(false, false), (true, false), (true, true), (false, true)] {
                let mut base = words(m, &mut s, sparse);
                if runs {
                    // Whole words of one value take deposit's shortcut,
                    // between mixed words.
                    for (i, w) in base.iter_mut().enumerate() {
                        match i % 5 {
                            0 | 1 => *w = 0,
                            3 => *w = u64::MAX,
                            _ => {}
                        }
                    }
                    if m % 64 != 0 {
                        if let Some(last) = base.last_mut() {
                            *last &= (1u64 << (m % 64)) - 1;
                        }
                    }
                }
                let xor = words(m, &mut s, !sparse);
                let (zp, zl) = gather(&xor, &base, m, Side::Zeros);
                let (op, ol) = gather(&xor, &base, m, Side::Ones);
                assert_eq!(zl + ol, m);
                let (zc, oc) = (coded(&zp, zl), coded(&op, ol));
                let n = base.len();
                // One range, and cuts at every third word.
                let mut cuts: Vec<usize> = (0..n).step_by(3).collect();
                cuts.push(n);
                for bounds in [vec![0, n], cuts] {
                    let mut out = vec![0u64; n];
                    for pair in bounds.windows(2) {
                        scatter_range(&base, m, (pair[0], pair[1]), [(&zc, zl), (&oc, ol)], &mut out)
                            .unwrap();
                    }
                    assert_eq!(out, xor, "m={m} sparse={sparse} runs={runs}");
                }
            }
        }
    }

    /// A change so sparse that the skipping batches run, skip whole groups
    /// of words and scan long runs of 0 part words: changes at the first and
    /// last word of groups and batches, on either side, alone in their
    /// group, next to one another, and none for hundreds of words.
    #[test]
    fn sparse_changes_skip_groups_and_runs() {
        let mut s = 11u64;
        let m = 64 * 3000 + 37;
        let check = |base: &[u64], xor: &[u64], bounds: &[usize]| {
            let (zp, zl) = gather(xor, base, m, Side::Zeros);
            let (op, ol) = gather(xor, base, m, Side::Ones);
            let (zc, oc) = (coded(&zp, zl), coded(&op, ol));
            let mut out = vec![u64::MAX; base.len()];
            for pair in bounds.windows(2) {
                scatter_range(base, m, (pair[0], pair[1]), [(&zc, zl), (&oc, ol)], &mut out)
                    .unwrap();
            }
            assert_eq!(out, xor, "ranges {bounds:?}");
        };
        let base = words(m, &mut s, false);
        let n = base.len();
        let mut xor = vec![0u64; n];
        // (word, a change at its last base 0, at its last base 1): the
        // groups of 1015 and 1023 hold no other change, so a skip that
        // overran its last part bit by one would miss it.
        for (word, zero, one) in [
            (0, true, true),
            (7, false, true),
            (8, true, false),
            (63, true, true),
            (64, true, false),
            (65, false, true),
            (72, true, true),
            (200, false, true),
            (1000, true, false),
            (1015, false, true),
            (1023, true, false),
            (2999, true, true),
        ] {
            let w: u64 = base[word];
            if zero {
                xor[word] |= 1 << (63 - (!w).leading_zeros());
            }
            if one {
                xor[word] |= 1 << (63 - w.leading_zeros());
            }
        }
        xor[n - 1] |= 1 << 36;
        for bounds in [vec![0, n], vec![0, 5, 8, 100, 1001, n], vec![0, 1500, n]] {
            check(&base, &xor, &bounds);
        }
        // And at random: a few changed bits anywhere (so at every offset in
        // a group, a batch and a run of 0 part words), random cuts.
        for _ in 0..200 {
            let sparse = lcg(&mut s).is_multiple_of(2);
            let base = words(m, &mut s, sparse);
            let mut xor = vec![0u64; n];
            for _ in 0..1 + lcg(&mut s) % 6 {
                let bit = lcg(&mut s) % m;
                xor[(bit / 64) as usize] |= 1 << (bit % 64);
            }
            let cut = (lcg(&mut s) % n as u64) as usize;
            check(&base, &xor, &[0, cut, n]);
        }
    }

    /// Across coder blocks: a part longer than one block, read from a start
    /// in its second block and from one exactly on the block boundary.
    #[test]
    fn scatter_starts_inside_later_blocks() {
        let m = BLOCK_BITS + 4096;
        let mut s = 3u64;
        // An all-zero base but for a few words: the zeros part spans two
        // blocks.
        let mut base = vec![0u64; m.div_ceil(64) as usize];
        base[5] = 0xFF;
        base[(BLOCK_BITS / 64) as usize + 3] = u64::MAX;
        let xor = words(m, &mut s, true);
        let (zp, zl) = gather(&xor, &base, m, Side::Zeros);
        let (op, ol) = gather(&xor, &base, m, Side::Ones);
        let (zc, oc) = (coded(&zp, zl), coded(&op, ol));
        let n = base.len();
        // Word 131,072 starts 8 bits before the zeros part's block boundary
        // (word 5 holds 8 of the base's ones), word 131,073 after it; word
        // 131,076 is the first after the base's last ones.
        for cut in [1usize, 131_072, 131_073, 131_076, n - 1] {
            let mut out = vec![0u64; n];
            scatter_range(&base, m, (0, cut), [(&zc, zl), (&oc, ol)], &mut out).unwrap();
            scatter_range(&base, m, (cut, n), [(&zc, zl), (&oc, ol)], &mut out).unwrap();
            assert_eq!(out, xor, "cut {cut}");
        }
    }

    /// The ones part across a block boundary too (a base of density 3/4, so
    /// its ones part is longer than a block while its zeros part is not),
    /// with changes of every chunk size: the fast path hands each reader's
    /// block crossing to the checked path and resumes after it.
    #[test]
    fn scatter_crosses_blocks_of_either_part() {
        let m = BLOCK_BITS + BLOCK_BITS / 2 + 77;
        let mut s = 9u64;
        for (dense_base, xor_kind) in [(true, 0), (false, 1), (true, 1), (true, 2), (false, 2)] {
            let base: Vec<u64> = words(m, &mut s, false)
                .into_iter()
                .zip(words(m, &mut s, false))
                .map(|(a, b)| if dense_base { a | b } else { a & b })
                .collect();
            let mut base = base;
            if let Some(last) = base.last_mut() {
                *last &= (1u64 << (m % 64)) - 1;
            }
            // 0: density 1/8, 1: 1/2 (every word changes: the branch-free
            // batches); 2: about one change per 4,096 bits with dense
            // patches (the skipping batches, switching to the branch-free
            // ones and back, across the blocks).
            let xor = match xor_kind {
                0 | 1 => words(m, &mut s, xor_kind == 0),
                _ => {
                    let mut x: Vec<u64> = (0..base.len())
                        .map(|i| {
                            let v = lcg(&mut s);
                            if i % 50_000 < 300 {
                                v
                            } else if v.is_multiple_of(64) {
                                1 << (v >> 58)
                            } else {
                                0
                            }
                        })
                        .collect();
                    if let Some(last) = x.last_mut() {
                        *last &= (1u64 << (m % 64)) - 1;
                    }
                    x
                }
            };
            let (zp, zl) = gather(&xor, &base, m, Side::Zeros);
            let (op, ol) = gather(&xor, &base, m, Side::Ones);
            let longer = if dense_base { ol } else { zl };
            assert!(longer > BLOCK_BITS, "{longer}");
            let (zc, oc) = (coded(&zp, zl), coded(&op, ol));
            let n = base.len();
            for cut in [1usize, n / 3, n / 2 + 1, n - 1] {
                let mut out = vec![0u64; n];
                scatter_range(&base, m, (0, cut), [(&zc, zl), (&oc, ol)], &mut out).unwrap();
                scatter_range(&base, m, (cut, n), [(&zc, zl), (&oc, ol)], &mut out).unwrap();
                assert!(out == xor, "cut {cut} dense_base {dense_base} xor {xor_kind}");
            }
        }
    }

    /// Every block of a part is decoded, even one that holds no change: a
    /// corrupt last block behind the last change is an error, whichever
    /// range (thread) it falls in.
    #[test]
    fn a_corrupt_block_after_the_last_change_is_found() {
        let m = 2 * BLOCK_BITS + 4096;
        let base = vec![0u64; m.div_ceil(64) as usize];
        // Changes only in the first 1,000 words: the zeros part's second and
        // third blocks are all 0.
        let mut xor = vec![0u64; base.len()];
        for (i, w) in xor.iter_mut().take(1000).enumerate() {
            *w = 1 << (i % 64);
        }
        let (zp, zl) = gather(&xor, &base, m, Side::Zeros);
        assert_eq!(zl, m);
        let mut zc = coded(&zp, zl);
        // The last block's first state, set below L: BadState when decoded.
        let (len0, used0) = crate::wire::varint::get(&zc).unwrap();
        let (len1, used1) = crate::wire::varint::get(&zc[used0..]).unwrap();
        let last = used0 + used1 + (len0 + len1) as usize;
        zc[last..last + 4].copy_from_slice(&[0, 0, 0, 0]);
        let n = base.len();
        for bounds in [vec![0, n], vec![0, 10, n], vec![0, n / 2, n]] {
            let mut out = vec![0u64; n];
            let got: Result<(), _> = bounds.windows(2).try_for_each(|pair| {
                scatter_range(&base, m, (pair[0], pair[1]), [(&zc, zl), (&[], 0)], &mut out)
            });
            assert!(
                matches!(got, Err((Side::Zeros, CoderError::BadState { .. }))),
                "{bounds:?}: {got:?}"
            );
        }
    }

    /// A reader asked for more than its part holds reports a stream that
    /// ends early (never a panic or a loop).
    #[test]
    fn reading_past_a_part_is_an_error() {
        let part = vec![u64::MAX; 2];
        let bytes = coded(&part, 100);
        let blocks = Blocks::new(&bytes, 100).unwrap();
        let mut r = PartReader::new(Some(&blocks), 0);
        assert_eq!(r.take(64).unwrap(), u64::MAX);
        assert_eq!(r.take(36).unwrap(), (1 << 36) - 1);
        assert!(matches!(r.take(1), Err(CoderError::UnexpectedEnd { .. })));
        let mut empty = PartReader::new(None, 0);
        assert_eq!(empty.take(0).unwrap(), 0);
        assert!(matches!(empty.take(1), Err(CoderError::UnexpectedEnd { .. })));
        // A start past the end.
        let mut late = PartReader::new(Some(&blocks), 100);
        assert!(late.take(1).is_err());
    }

    #[test]
    fn select_finds_every_set_bit() {
        let mut s = 5u64;
        for round in 0..5_000 {
            let mut mask = lcg(&mut s);
            match round % 4 {
                0 => mask &= lcg(&mut s) & lcg(&mut s),
                1 => mask |= lcg(&mut s),
                2 => mask = u64::MAX,
                _ => {}
            }
            let prefix = byte_prefix(mask);
            let mut rest = mask;
            let mut j = 0;
            while rest != 0 {
                assert_eq!(select_in_word(mask, prefix, j), rest.trailing_zeros(), "{mask:#x} {j}");
                rest &= rest - 1;
                j += 1;
            }
            assert_eq!(prefix >> 56, u64::from(mask.count_ones()));
        }
    }

    /// The bit-at-a-time pdep the table version replaces.
    fn deposit_reference(mut src: u64, mut mask: u64) -> u64 {
        let mut out = 0;
        while mask != 0 {
            let low = mask & mask.wrapping_neg();
            if src & 1 != 0 {
                out |= low;
            }
            src >>= 1;
            mask ^= low;
        }
        out
    }

    #[test]
    fn deposit_matches_the_bitwise_reference() {
        let mut s = 11u64;
        for round in 0..20_000 {
            // Masks and sources of every density, including 0 and all ones.
            let mut mask = lcg(&mut s);
            let mut src = lcg(&mut s);
            match round % 5 {
                0 => mask &= lcg(&mut s) & lcg(&mut s),
                1 => mask |= lcg(&mut s),
                2 => src = !0,
                3 => src &= lcg(&mut s) & lcg(&mut s),
                _ => {}
            }
            let need = mask.count_ones();
            let src = if need == 64 { src } else { src & ((1u64 << need) - 1) };
            assert_eq!(
                deposit(src, mask),
                deposit_reference(src, mask),
                "src {src:#x} mask {mask:#x}"
            );
        }
        assert_eq!(deposit(0, 0), 0);
        assert_eq!(deposit(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(deposit(1 << 63, u64::MAX), 1 << 63);
    }

    #[test]
    fn deposit_and_bits_at() {
        assert_eq!(deposit(0b101, 0b1011_0000), 0b1000_0000 | 0b0001_0000);
        assert_eq!(deposit(u64::MAX, 0xF0F0), 0xF0F0);
        assert_eq!(deposit(0, u64::MAX), 0);
        let w = [0xFFFF_0000_0000_0000u64, 0x0000_0000_0000_00FF];
        assert_eq!(bits_at(&w, 56, 16), 0xFFFF);
        assert_eq!(bits_at(&w, 60, 4), 0xF);
        assert_eq!(bits_at(&w, 0, 64), w[0]);
        assert_eq!(bits_at(&w, 64, 9), 0xFF);
        assert_eq!(bits_at(&w, 3, 0), 0);
        // A read inside one word must not touch the next one.
        let v = [0x0Fu64, u64::MAX];
        assert_eq!(bits_at(&v, 0, 8), 0x0F);
        assert_eq!(bits_at(&v, 8, 56), 0);
        assert_eq!(bits_at(&v, 60, 4), 0);
    }
}
