//! Splitting an XOR delta by the base filter's bits, and joining it back.
//!
//! A conditional delta (filter type 3) codes the XOR bits at the base's
//! 0 positions and those at its 1 positions as two separate arrays ("parts"),
//! each in increasing position order. The receiver holds the base, so it
//! knows which positions each part covers. The two parts have very different
//! densities (a key added flips 0s, a key removed flips 1s, and the base has
//! far fewer 1s than 0s), so coding them apart costs
//! log2 C(m0, d0) + log2 C(m1, d1) bits instead of log2 C(m, d).

#[allow(unused_imports)]
use crate::prelude::*;
/// Which of the base's bits a part covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Positions where the base is 0 (the part comes first on the wire).
    Zeros,
    /// Positions where the base is 1.
    Ones,
}

/// The positions of word `i` of an m-bit `base` that belong to `side`
/// (padding bits past m never do).
fn side_mask(base: &[u64], m: u64, i: usize, side: Side) -> u64 {
    let w = base.get(i).copied().unwrap_or(0);
    let w = match side {
        Side::Zeros => !w,
        Side::Ones => w,
    };
    // Bits of the filter in this word: m − 64·i, clamped to [0, 64].
    let in_word = m.saturating_sub((i as u64).saturating_mul(64));
    w & low_mask(in_word)
}

/// A mask of the low `count` bits (all 64 for `count` >= 64).
fn low_mask(count: u64) -> u64 {
    if count >= 64 {
        u64::MAX
    } else {
        (1u64 << count).wrapping_sub(1)
    }
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
/// `mask`, lowest first (the software `pdep`). It walks whichever of src's
/// 1s and 0s are fewer, at one table step per bit plus at most 8 byte steps:
/// at most 40 steps per word, and none for a chunk of all 0s or all 1s, so a
/// conditional delta costs time in proportion to its changed bits, not to
/// m (docs/HARDENING.md, "Cost").
fn deposit(src: u64, mask: u64) -> u64 {
    let need = mask.count_ones();
    let src = src & low_mask(u64::from(need));
    if src.count_ones() > need / 2 {
        mask & !deposit_sparse(!src & low_mask(u64::from(need)), mask)
    } else {
        deposit_sparse(src, mask)
    }
}

/// [`deposit`] one set bit of `src` at a time: the j-th bit of src goes to
/// the j-th set bit of mask, found by skipping whole bytes of the mask and
/// selecting inside the byte by table.
fn deposit_sparse(mut src: u64, mask: u64) -> u64 {
    let mut out = 0u64;
    // The mask byte being searched and the mask's set bits below it.
    let mut byte = 0u32;
    let mut below = 0u32;
    while src != 0 {
        let j = src.trailing_zeros();
        loop {
            if byte >= 8 {
                // src has no more bits than mask (deposit masks it), so
                // this is unreachable; stopping is the safe answer.
                return out;
            }
            // byte < 8: the shift is below 64.
            let b = ((mask >> byte.wrapping_mul(8)) & 0xFF) as usize;
            let c = b.count_ones();
            // below + c <= 64 and j < 64: no overflow.
            if below.wrapping_add(c) > j {
                let sel = SELECT_IN_BYTE
                    .get(b)
                    .and_then(|row| row.get(j.wrapping_sub(below) as usize))
                    .copied()
                    .unwrap_or(8);
                // sel < 8 because the byte has more than j − below set bits.
                out |= 1u64 << (byte.wrapping_mul(8).wrapping_add(u32::from(sel)) & 63);
                break;
            }
            below = below.wrapping_add(c);
            byte = byte.wrapping_add(1);
        }
        src &= src.wrapping_sub(1);
    }
    out
}

/// `count` (≤ 64) bits of `words` from bit `at`, as the low bits of a u64.
fn bits_at(words: &[u64], at: u64, count: u32) -> u64 {
    if count == 0 {
        return 0;
    }
    let i = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let lo = words.get(i).copied().unwrap_or(0) >> shift;
    // shift < 64 and count <= 64: the sums and differences below cannot
    // overflow, and 64 − shift is a valid shift when shift != 0.
    let hi = if shift != 0 && shift.wrapping_add(count) > 64 {
        words.get(i.wrapping_add(1)).copied().unwrap_or(0) << 64u32.wrapping_sub(shift)
    } else {
        0
    };
    (lo | hi) & low_mask(u64::from(count))
}

/// Scatters a part, fed in order one decoded block at a time, into the XOR
/// array `out` (zeroed on entry): the inverse of [`gather`]. Works word by
/// word of the filter: word i takes the next popcount(mask_i) bits of the
/// part and deposits them at the mask's positions.
pub(crate) struct Scatter<'a> {
    base: &'a [u64],
    m: u64,
    side: Side,
    /// The filter word being filled.
    word: usize,
    /// Its mask and how many part bits it takes.
    mask: u64,
    need: u32,
    /// Part bits gathered for it so far.
    chunk: u64,
    have: u32,
}

impl<'a> Scatter<'a> {
    pub(crate) fn new(base: &'a [u64], m: u64, side: Side) -> Self {
        let mut s = Scatter {
            base,
            m,
            side,
            word: 0,
            mask: 0,
            need: 0,
            chunk: 0,
            have: 0,
        };
        s.load(0);
        s
    }

    /// Moves to the first word at or after `i` that takes part bits.
    fn load(&mut self, mut i: usize) {
        while i < self.base.len() {
            let mask = side_mask(self.base, self.m, i, self.side);
            if mask != 0 {
                self.word = i;
                self.mask = mask;
                self.need = mask.count_ones();
                self.chunk = 0;
                self.have = 0;
                return;
            }
            // i < base.len(): no overflow.
            i = i.wrapping_add(1);
        }
        self.word = self.base.len();
        self.need = 0;
    }

    /// Feeds the next `bits` bits of the part (in `block`) into `out`. The
    /// caller feeds exactly the part's length in total, so every bit has a
    /// place; any excess is ignored.
    pub(crate) fn feed(&mut self, block: &[u64], bits: u64, out: &mut [u64]) {
        let mut at = 0u64;
        while at < bits && self.need != 0 {
            // A whole word of the side with nothing gathered yet (the base
            // word is all of the side's value): its 64 part bits are the
            // word itself, no deposit needed. This is the common case of a
            // sparse base's zeros, and of an adversary's all-ones part.
            if self.need == 64 && self.have == 0 {
                let mut i = self.word;
                // at + 64 <= bits and i < base.len() inside the loop.
                while bits.wrapping_sub(at) >= 64
                    && side_mask(self.base, self.m, i, self.side) == u64::MAX
                {
                    let chunk = bits_at(block, at, 64);
                    if chunk != 0 {
                        if let Some(w) = out.get_mut(i) {
                            *w |= chunk;
                        }
                    }
                    at = at.wrapping_add(64);
                    i = i.wrapping_add(1);
                }
                if i != self.word {
                    self.load(i);
                    continue;
                }
            }
            // have < need <= 64 between calls and at < bits: the differences
            // are positive, and have + take <= need, at + take <= bits.
            let take =
                u64::from(self.need.wrapping_sub(self.have)).min(bits.wrapping_sub(at)) as u32;
            self.chunk |= bits_at(block, at, take) << self.have;
            self.have = self.have.wrapping_add(take);
            at = at.wrapping_add(u64::from(take));
            if self.have == self.need {
                if self.chunk != 0 {
                    if let Some(w) = out.get_mut(self.word) {
                        *w |= deposit(self.chunk, self.mask);
                    }
                }
                // word < base.len() while need != 0: no overflow.
                self.load(self.word.wrapping_add(1));
            }
        }
    }

    /// True once every position of the side has received its bit.
    pub(crate) fn is_complete(&self) -> bool {
        self.need == 0
    }
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
        if m % 64 != 0 {
            if let Some(last) = w.last_mut() {
                *last &= (1u64 << (m % 64)) - 1;
            }
        }
        w
    }

    /// Gather then scatter (fed in uneven pieces) is the identity, and the
    /// two parts together hold every XOR bit once.
    #[test]
    fn gather_scatter_round_trip() {
        let mut s = 7u64;
        for m in [1u64, 63, 64, 65, 130, 1000, 4097] {
            for (sparse, runs) in [(false, false), (true, false), (true, true), (false, true)] {
                let mut base = words(m, &mut s, sparse);
                if runs {
                    // Whole words of one value take the word-at-a-time paths
                    // of gather and scatter, between mixed words.
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
                let mut out = vec![0u64; xor.len()];
                let mut total = 0;
                for side in [Side::Zeros, Side::Ones] {
                    let (part, len) = gather(&xor, &base, m, side);
                    total += len;
                    let mut sc = Scatter::new(&base, m, side);
                    assert_eq!(sc.is_complete(), len == 0, "m={m} {side:?}");
                    let mut at = 0u64;
                    let mut piece = 1u64;
                    while at < len {
                        // Pieces start on word boundaries, as blocks do.
                        let bits = (piece * 64).min(len - at);
                        let first = (at / 64) as usize;
                        sc.feed(&part[first..], bits, &mut out);
                        at += bits;
                        piece += 1;
                    }
                    assert!(sc.is_complete(), "m={m} {side:?}");
                }
                assert_eq!(total, m);
                assert_eq!(out, xor, "m={m} sparse={sparse} runs={runs}");
            }
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
