//! Counting the 1 bits of a word array, fast on the baseline target.
//!
//! Every decoded block is checked against its declared count of ones
//! (docs/FORMAT.md), and the static encoder counts each block's ones before
//! it codes it. The baseline x86-64 target has no `popcnt` instruction, so
//! `u64::count_ones` is a dozen shifts, masks and adds per word; summed over
//! a 17.5 MB filter that pass took 5% of a byte-mode decode.
//!
//! This is the Harley–Seal method: a tree of carry-save adders folds 16
//! vectors into one "sixteens" vector plus running ones, twos, fours and
//! eights, so only one vector in 16 is popcounted. Each vector is
//! [`W`] words, a plain array the compiler turns into SIMD registers (SSE2 on
//! the baseline); no `unsafe` and no target features.

/// Words per vector: two 128-bit registers on the baseline target.
const W: usize = 4;

type V = [u64; W];

/// A vector from its lanes. (`f` gets each index below [`W`], so the
/// closures below index their arrays in bounds; written as indexing, the
/// compiler makes SIMD of them, which it did not of a zip: 18.7 against
/// 36 GB/s.)
#[inline(always)]
fn lanes(f: impl Fn(usize) -> u64) -> V {
    core::array::from_fn(f)
}

/// Carry-save adder: per bit, `(carry, sum)` of `a + b + c`.
#[inline(always)]
#[allow(clippy::indexing_slicing)]
fn csa(a: V, b: V, c: V) -> (V, V) {
    let u = lanes(|i| a[i] ^ b[i]);
    (
        lanes(|i| (a[i] & b[i]) | (u[i] & c[i])),
        lanes(|i| u[i] ^ c[i]),
    )
}

#[inline(always)]
#[allow(clippy::indexing_slicing)]
fn add(a: V, b: V) -> V {
    lanes(|i| a[i].wrapping_add(b[i]))
}

#[inline(always)]
fn ones_in(v: V) -> V {
    v.map(|x| u64::from(x.count_ones()))
}

/// The number of 1 bits in `words`.
pub(crate) fn count_ones(words: &[u64]) -> u64 {
    let mut chunks = words.chunks_exact(16 * W);
    let zero = [0u64; W];
    let (mut ones, mut twos, mut fours, mut eights) = (zero, zero, zero, zero);
    // Each lane counts at most 64 per 16·W words: no overflow below 2^58 words.
    let mut sixteens = zero;
    for c in &mut chunks {
        // i < 16: i·W is within the chunk.
        let v = |i: usize| -> V {
            c.get(i.wrapping_mul(W)..)
                .and_then(|r| r.first_chunk::<W>())
                .copied()
                .unwrap_or(zero)
        };
        let (twos_a, o) = csa(ones, v(0), v(1));
        let (twos_b, o) = csa(o, v(2), v(3));
        let (fours_a, t) = csa(twos, twos_a, twos_b);
        let (twos_a, o) = csa(o, v(4), v(5));
        let (twos_b, o) = csa(o, v(6), v(7));
        let (fours_b, t) = csa(t, twos_a, twos_b);
        let (eights_a, f) = csa(fours, fours_a, fours_b);
        let (twos_a, o) = csa(o, v(8), v(9));
        let (twos_b, o) = csa(o, v(10), v(11));
        let (fours_a, t) = csa(t, twos_a, twos_b);
        let (twos_a, o) = csa(o, v(12), v(13));
        let (twos_b, o) = csa(o, v(14), v(15));
        let (fours_b, t) = csa(t, twos_a, twos_b);
        let (eights_b, f) = csa(f, fours_a, fours_b);
        let (s, e) = csa(eights, eights_a, eights_b);
        (ones, twos, fours, eights) = (o, t, f, e);
        let n = ones_in(s);
        sixteens = add(sixteens, n);
    }
    let sum = |v: V| -> u64 { ones_in(v).iter().sum() };
    let rest: u64 = chunks
        .remainder()
        .iter()
        .map(|w| u64::from(w.count_ones()))
        .sum();
    // Weights 16, 8, 4, 2, 1: at most 64·len in all, so no overflow.
    (sixteens.iter().sum::<u64>() << 4)
        .wrapping_add(sum(eights) << 3)
        .wrapping_add(sum(fours) << 2)
        .wrapping_add(sum(twos) << 1)
        .wrapping_add(sum(ones))
        .wrapping_add(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::coder::tests::splitmix;

    #[test]
    fn agrees_with_count_ones_at_every_length_and_density() {
        let mut s = 7;
        // Lengths around the chunk size (64 words) and its multiples, with
        // sparse, dense and all-ones words, so that every weight (ones to
        // sixteens) carries.
        for len in (0..200).chain([1023, 1024, 1025, 4096 + 17]) {
            for density in 0..4 {
                let words: Vec<u64> = (0..len)
                    .map(|_| {
                        let r = splitmix(&mut s);
                        match density {
                            0 => r & splitmix(&mut s) & splitmix(&mut s),
                            1 => r,
                            2 => r | splitmix(&mut s),
                            _ => u64::MAX,
                        }
                    })
                    .collect();
                let naive: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
                assert_eq!(count_ones(&words), naive, "len {len} density {density}");
            }
        }
    }
}
