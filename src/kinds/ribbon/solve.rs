//! Back substitution: from a shard's band in echelon form to its solution,
//! block by block and column by column (the interleaved words of
//! docs/FORMAT.md section 8.5).
//!
//! Going from the last row to the first, each column keeps the solutions
//! of the 128 rows after the current one as two u64 halves; the current
//! row's solution is the parity of their AND with its coefficients, XOR
//! its right-hand side, and rows without a pivot take 0. That is a few
//! operations per row and column, the same in every column, so with
//! AVX-512 eight columns go through one register. Over 8000 blocks (the
//! rows of 10^6 keys) that takes 12 ms against 15–21 one column at a time
//! for 9 columns (f = 2^-8), and 16 ms against 35–45 for 21 columns
//! (2^-20), on a 2-vCPU AVX-512 Xeon (the ignored test `solve_time`).

use super::build::{Row, ROWS};
use crate::prelude::*;

/// Back substitution over `blocks` blocks for `cols` columns (at most 64):
/// appends, block by block, `cols` words whose bit i is the solution of row
/// 128·block + i in that column.
pub(super) fn solve(band: &[Row], blocks: usize, cols: u32, out: &mut Vec<u128>) {
    let cols = cols.min(64) as usize;
    let first = out.len();
    out.resize(first.saturating_add(blocks.saturating_mul(cols)), 0);
    let dst = out.get_mut(first..).unwrap_or_default();
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if let Some(v4) = pulp::x86::V4::try_new() {
        return wide::solve(v4, band, blocks, cols, dst);
    }
    // With x86-64-v3, `count_ones` is one instruction rather than a dozen.
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if let Some(v3) = pulp::x86::V3::try_new() {
        return v3.vectorize(
            #[inline(always)]
            || narrow(band, blocks, cols, dst),
        );
    }
    narrow(band, blocks, cols, dst);
}

/// One column at a time: its solution bit is one `count_ones` of the AND of
/// its window with the row's coefficients.
#[inline(always)]
fn narrow(band: &[Row], blocks: usize, cols: usize, out: &mut [u128]) {
    let mut lo = [0u64; 64];
    let mut hi = [0u64; 64];
    let rows = blocks.saturating_mul(ROWS);
    for i in (0..rows).rev() {
        let r = band.get(i).copied().unwrap_or_default();
        // The coefficients of rows i + 1 … i + 127.
        let (clo, chi) = (r.lo.wrapping_shr(1) | r.hi.wrapping_shl(63), r.hi.wrapping_shr(1));
        let mut rhs = r.rhs;
        for (l, h) in lo.iter_mut().zip(hi.iter_mut()).take(cols) {
            let bit = (u64::from(((*l & clo) ^ (*h & chi)).count_ones()) ^ rhs) & 1;
            rhs = rhs.wrapping_shr(1);
            *h = h.wrapping_shl(1) | l.wrapping_shr(63);
            *l = l.wrapping_shl(1) | bit;
        }
        if i % ROWS == 0 {
            let at = (i / ROWS).saturating_mul(cols);
            if let Some(dst) = out.get_mut(at..at.saturating_add(cols)) {
                for ((d, &l), &h) in dst.iter_mut().zip(lo.iter()).zip(hi.iter()) {
                    *d = u128::from(l) | (u128::from(h) << 64);
                }
            }
        }
    }
}

/// Eight columns per AVX-512 register (pulp's safe wrappers; the CPU is
/// checked at run time). The parity of a lane is folded with shifts: this
/// CPU family's `vpopcntq` is an extension not every AVX-512 part has.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
mod wide {
    use super::{Row, ROWS};
    use pulp::x86::V4;

    /// Columns per register.
    const LANES: usize = 8;

    /// Dispatches on the number of registers the columns need, so that
    /// each count's state is a fixed array the compiler keeps in registers.
    pub(super) fn solve(v4: V4, band: &[Row], blocks: usize, cols: usize, out: &mut [u128]) {
        match cols.div_ceil(LANES) {
            0 | 1 => run::<1>(v4, band, blocks, cols, out),
            2 => run::<2>(v4, band, blocks, cols, out),
            3 => run::<3>(v4, band, blocks, cols, out),
            4 => run::<4>(v4, band, blocks, cols, out),
            5 => run::<5>(v4, band, blocks, cols, out),
            6 => run::<6>(v4, band, blocks, cols, out),
            7 => run::<7>(v4, band, blocks, cols, out),
            _ => run::<8>(v4, band, blocks, cols, out),
        }
    }

    /// Back substitution with `G` registers of columns.
    fn run<const G: usize>(v4: V4, band: &[Row], blocks: usize, cols: usize, out: &mut [u128]) {
        v4.vectorize(
            #[inline(always)]
            || {
                let f = v4.avx512f;
                let zero = f._mm512_setzero_si512();
                let one = f._mm512_set1_epi64(1);
                let (mut lo, mut hi) = ([zero; G], [zero; G]);
                // Lane c of register g shifts the right-hand side by 8g + c.
                let shifts: [_; G] = core::array::from_fn(|g| {
                    pulp::cast(core::array::from_fn::<u64, LANES, _>(|c| {
                        g.wrapping_mul(LANES).wrapping_add(c) as u64
                    }))
                });
                let rows = blocks.saturating_mul(ROWS);
                for i in (0..rows).rev() {
                    let r = band.get(i).copied().unwrap_or_default();
                    let clo = f._mm512_set1_epi64((r.lo.wrapping_shr(1) | r.hi.wrapping_shl(63)) as i64);
                    let chi = f._mm512_set1_epi64(r.hi.wrapping_shr(1) as i64);
                    let rhs = f._mm512_set1_epi64(r.rhs as i64);
                    for ((l, h), s) in lo.iter_mut().zip(hi.iter_mut()).zip(shifts.iter()) {
                        let mut x = f._mm512_xor_si512(
                            f._mm512_and_si512(*l, clo),
                            f._mm512_and_si512(*h, chi),
                        );
                        x = f._mm512_xor_si512(x, f._mm512_srli_epi64::<32>(x));
                        x = f._mm512_xor_si512(x, f._mm512_srli_epi64::<16>(x));
                        x = f._mm512_xor_si512(x, f._mm512_srli_epi64::<8>(x));
                        x = f._mm512_xor_si512(x, f._mm512_srli_epi64::<4>(x));
                        x = f._mm512_xor_si512(x, f._mm512_srli_epi64::<2>(x));
                        x = f._mm512_xor_si512(x, f._mm512_srli_epi64::<1>(x));
                        let bit = f._mm512_and_si512(
                            f._mm512_xor_si512(x, f._mm512_srlv_epi64(rhs, *s)),
                            one,
                        );
                        *h = f._mm512_or_si512(
                            f._mm512_slli_epi64::<1>(*h),
                            f._mm512_srli_epi64::<63>(*l),
                        );
                        *l = f._mm512_or_si512(f._mm512_slli_epi64::<1>(*l), bit);
                    }
                    if i % ROWS == 0 {
                        let at = (i / ROWS).saturating_mul(cols);
                        if let Some(dst) = out.get_mut(at..at.saturating_add(cols)) {
                            let l: [[u64; LANES]; G] = lo.map(pulp::cast);
                            let h: [[u64; LANES]; G] = hi.map(pulp::cast);
                            for ((d, &l), &h) in dst
                                .iter_mut()
                                .zip(l.as_flattened())
                                .zip(h.as_flattened())
                            {
                                *d = u128::from(l) | (u128::from(h) << 64);
                            }
                        }
                    }
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A band of random rows (bit 0 of each stored row set, a quarter of
    /// the rows without a pivot): the substitution does not care whether
    /// it came from an elimination.
    fn band(rows: usize, seed: u64) -> Vec<Row> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            super::super::hash::mix(x)
        };
        (0..rows)
            .map(|_| {
                let (lo, hi, rhs) = (next() | 1, next(), next());
                if lo & 6 == 0 {
                    Row::default()
                } else {
                    Row { lo, hi, rhs, start: 0 }
                }
            })
            .collect()
    }

    /// The AVX-512 path gives the one-column-at-a-time words at every
    /// column count (where the CPU has AVX-512; elsewhere both calls take
    /// the same path).
    #[test]
    fn every_path_gives_the_same_words() {
        for cols in [1usize, 7, 8, 9, 21, 33, 63, 64] {
            let b = band(5 * ROWS, cols as u64);
            let mut want = vec![0u128; 5 * cols];
            narrow(&b, 5, cols, &mut want);
            let mut got = Vec::new();
            solve(&b, 5, cols as u32, &mut got);
            assert_eq!(got, want, "{cols} columns");
        }
    }

    /// Time of each path over 8000 blocks (about the rows of 10^6 keys) at
    /// 9 and 21 columns (prints; run with `--release -- --ignored
    /// --nocapture`).
    #[test]
    #[ignore]
    fn solve_time() {
        let blocks = 8000;
        let b = band(blocks * ROWS, 1);
        for cols in [9usize, 21] {
            let mut out = vec![0u128; blocks * cols];
            let t = std::time::Instant::now();
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            if let Some(v3) = pulp::x86::V3::try_new() {
                v3.vectorize(|| narrow(&b, blocks, cols, &mut out));
            } else {
                narrow(&b, blocks, cols, &mut out);
            }
            #[cfg(not(all(feature = "simd", target_arch = "x86_64")))]
            narrow(&b, blocks, cols, &mut out);
            let one = t.elapsed();
            let mut wide = Vec::new();
            let t = std::time::Instant::now();
            solve(&b, blocks, cols as u32, &mut wide);
            println!("{cols} columns: one at a time {one:?}, dispatched {:?}", t.elapsed());
            assert_eq!(wide, out);
        }
    }
}
