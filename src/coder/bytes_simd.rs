//! Type 4's byte decoder (mode 1) with AVX-512, four blocks at a time.
//!
//! The portable decoder ([`super::bytes`]) is bound by its instruction
//! count: about 30 scalar instructions per byte, at about 900 MB/s on one
//! core. Here the 8 lanes of a block are the 8 64-bit lanes of one
//! vector, and one round decodes a byte on each. Nothing is gathered: each
//! lane's two 12-bit slots sit in its first two u16s, and a binary search
//! over the block's 16 nibble starts finds all 16 nibbles of the round at
//! once (the first two pivots are the same for every slot, start_8 then
//! start_4 or start_12; the last two come by `vpermw` from the starts,
//! held in one register). The same permute gives each nibble's frequency
//! and start, and `vpmaddwd` makes the lane's F = f_h·f_l and rank
//! rank_h·f_l + rank_l. The renormalisation words of a round are
//! consecutive in the stream, one per lane that needs one, in lane order
//! (docs/FORMAT.md, "Type 4"), so `vpexpandq` deals the next eight words
//! out to those lanes. A round depends on the one before (the states and
//! the stream position), and one block alone leaves the vector units idle
//! most of the time (344 MB/s in a prototype); four blocks interleaved
//! fill them. Shuffles bound the loop (Zen 5 runs fewer of them per cycle
//! than other vector operations): 7 per block and round here, against 19
//! in a first version that widened and narrowed between u16 and u64 lanes
//! (1255–1260 against 1110–1131 MB/s, one thread, the 17.5 MB filter).
//!
//! This path runs only the fast rounds, while every block of the group
//! has a whole round's reads (32 bytes) left; each block then goes on in
//! the portable decoder from where the vectors left it
//! ([`super::bytes::resume8`]), which decodes its last bytes and makes
//! every end check. The arithmetic is the portable decoder's, lane for
//! lane (the same products, below 2^63 for any input), so the two agree
//! on every byte and every error (tests below, and the fuzz targets).
//!
//! The intrinsics come through `pulp`'s safe wrappers, which detect the
//! CPU's features at run time: the crate has no `unsafe` code of its own.

use core::arch::x86_64::{__m256i, __m512i};

use pulp::x86::V4;

use super::bytes::{begin, decode_block, lanes_for, resume8, Nibbles, Progress};
use super::CoderError;

/// Blocks decoded together: 3 blocks decode at 1002 MB/s, 4 at 1144 and
/// 6 at 1166 (prototype, the 17.5 MB filter's density).
pub(crate) const GROUP: usize = 4;

/// One block of a group: its stream, bit count, count of ones and output
/// words (as [`decode_block`] takes them).
pub(crate) struct Member<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) bits: u64,
    pub(crate) ones: u64,
    pub(crate) words: &'a mut [u64],
}

/// Whether this machine runs the vector decoder (AVX-512 F, DQ, VL and
/// BW, detected once).
pub(crate) fn available() -> bool {
    V4::is_available()
}

/// A block's registers and place while the vectors decode it.
struct Kernel<'a> {
    /// The 8 states.
    x: __m512i,
    /// Stream offset of the next renormalisation word.
    pos: usize,
    data: &'a [u8],
    /// The block's whole words, as bytes.
    out: &'a mut [u8],
    /// The 16 nibble starts and frequencies, as u16s (the first 16 of
    /// 32).
    start: __m512i,
    freq: __m512i,
    /// start_8, start_4 and start_12 in every u16: the first two levels
    /// of the search, whose pivots need no permute.
    start8: __m512i,
    start4: __m512i,
    start12: __m512i,
}

/// Decodes a group of mode-1 blocks of one size with 8 lanes each, and
/// returns each block's result as [`decode_block`] would (the same steps,
/// or the same error). Falls back to [`decode_block`] for each block when
/// the machine lacks AVX-512, the blocks differ in size or lane count, or
/// a block's initial states are bad.
pub(crate) fn decode_group(group: &mut [Member<'_>; GROUP]) -> [Result<u64, CoderError>; GROUP] {
    let bits = group.first().map_or(0, |m| m.bits);
    let same = lanes_for(bits) == 8
        && group
            .iter()
            .all(|m| m.bits == bits && 0 < m.ones && m.ones < m.bits);
    let starts = group.each_ref().map(|m| begin::<8>(m.data));
    let (Some(v4), [Ok(a), Ok(b), Ok(c), Ok(d)]) = (V4::try_new().filter(|_| same), starts)
    else {
        return group
            .each_mut()
            .map(|m| decode_block(m.data, m.bits, m.ones, m.words));
    };
    let mut at = [a, b, c, d];
    let full_words = (bits / 64) as usize;
    {
        let mut states = at.iter();
        let mut kernels = group.each_mut().map(|m| {
            let nib = Nibbles::build(m.bits, m.ones);
            // Every start and frequency is below 2^12.
            let narrow = |v: &[u32; 16]| -> __m512i {
                let mut w = [0u16; 32];
                for (d, &x) in w.iter_mut().zip(v) {
                    *d = x as u16;
                }
                pulp::cast(w)
            };
            let every = |i: usize| -> __m512i {
                pulp::cast([nib.start.get(i).map_or(0, |&x| x as u16); 32])
            };
            let fast = m.words.get_mut(..full_words).unwrap_or_default();
            let start = states.next();
            Kernel {
                x: pulp::cast(start.map_or([0; 8], |p| p.xs)),
                pos: start.map_or(usize::MAX, |p| p.pos),
                data: m.data,
                out: bytemuck::cast_slice_mut(fast),
                start: narrow(&nib.start),
                freq: narrow(&nib.freq),
                start8: every(8),
                start4: every(4),
                start12: every(12),
            }
        });
        let rounds = run(v4, &mut kernels, full_words);
        for (p, k) in at.iter_mut().zip(&kernels) {
            *p = Progress {
                xs: pulp::cast(k.x),
                pos: k.pos,
                words: rounds,
            };
        }
    }
    let mut states = at.into_iter();
    group.each_mut().map(|m| match states.next() {
        Some(p) => resume8(p, m.data, m.bits, m.ones, m.words),
        None => decode_block(m.data, m.bits, m.ones, m.words),
    })
}

/// The fast rounds of every kernel, in lockstep, while each has 32 bytes
/// of stream left; returns the rounds made (words written per block).
///
/// Overflow: `r < full_words` words of the block; `pos` grows by at most
/// 32 per round and only while 32 bytes are left, so it stays within the
/// stream.
#[allow(clippy::arithmetic_side_effects)]
fn run(v4: V4, kernels: &mut [Kernel<'_>; GROUP], full_words: usize) -> usize {
    v4.vectorize(
        #[inline(always)]
        || {
            let f = v4.avx512f;
            let bw = v4.avx512bw;
            let dq = v4.avx512dq;
            let m12 = f._mm512_set1_epi64(0xfff);
            let m12_hi = f._mm512_set1_epi64(0xfff << 16);
            let m16 = f._mm512_set1_epi64(0xffff);
            let one = f._mm512_set1_epi64(1);
            let nib_lo = f._mm512_set1_epi64(0xf);
            let nib_hi = f._mm512_set1_epi64(0xf0);
            let low = f._mm512_set1_epi64(1 << 31);
            let bit = |b: i16| f._mm512_set1_epi16(b);
            let (eight, four, two, one_) = (bit(8), bit(4), bit(2), bit(1));
            let mut r = 0usize;
            'rounds: while r < full_words {
                for k in kernels.iter() {
                    if k.data.len().saturating_sub(k.pos) < 32 {
                        break 'rounds;
                    }
                }
                for k in kernels.iter_mut() {
                    let Some(chunk) = k.data.get(k.pos..).and_then(|d| d.first_chunk::<32>()) else {
                        break 'rounds;
                    };
                    let x = k.x;
                    // Each lane's low and high slots as its first two u16s
                    // (the other two 0): one search finds all 16 nibbles
                    // of the round, and every result stays in its lane.
                    let s = f._mm512_or_si512(
                        f._mm512_and_si512(x, m12),
                        f._mm512_and_si512(f._mm512_slli_epi64::<4>(x), m12_hi),
                    );
                    // The nibble: the largest v with start_v ≤ slot (start_0
                    // is 0, and the starts increase: every f_v ≥ 1). The
                    // first pivot is start_8 for every slot, the second
                    // start_4 or start_12; then a permute picks them. The
                    // zero u16s find nibble 0.
                    let k1 = bw._mm512_cmple_epu16_mask(k.start8, s);
                    let v = bw._mm512_maskz_mov_epi16(k1, eight);
                    let pivot = bw._mm512_mask_blend_epi16(k1, k.start4, k.start12);
                    let v = bw._mm512_mask_mov_epi16(
                        v,
                        bw._mm512_cmple_epu16_mask(pivot, s),
                        f._mm512_or_si512(v, four),
                    );
                    let mut v = v;
                    for b in [two, one_] {
                        let c = f._mm512_or_si512(v, b);
                        let t = bw._mm512_permutexvar_epi16(c, k.start);
                        v = bw._mm512_mask_mov_epi16(v, bw._mm512_cmple_epu16_mask(t, s), c);
                    }
                    // Per lane: fr = f_l, f_h and rank = rank_l, rank_h as
                    // its first two u16s. F = f_h·f_l and R = rank_h·f_l +
                    // rank_l, each one vpmaddwd against (1, f_l) or (0,
                    // f_l) (every value below 2^12, so the signed 16-bit
                    // products are exact; F, R < 2^24, and the lane's
                    // upper u32 is 0·0 + 0·0).
                    let fr = bw._mm512_permutexvar_epi16(v, k.freq);
                    let rank = bw._mm512_sub_epi16(s, bw._mm512_permutexvar_epi16(v, k.start));
                    let fl_hi = f._mm512_slli_epi64::<16>(f._mm512_and_si512(fr, m16));
                    let big_f = bw._mm512_madd_epi16(fr, fl_hi);
                    let big_r = bw._mm512_madd_epi16(rank, f._mm512_or_si512(fl_hi, one));
                    // The byte: l | h·16, from v = l | h·2^16.
                    let byte = f._mm512_or_si512(
                        f._mm512_and_si512(v, nib_lo),
                        f._mm512_and_si512(f._mm512_srli_epi64::<12>(v), nib_hi),
                    );
                    let bytes: [u8; 16] = pulp::cast(f._mm512_cvtepi64_epi8(byte));
                    // x' = F·⌊x / 2^24⌋ + R = f_l·(f_h·⌊x / 2^24⌋ + rank_h) +
                    // rank_l, as the portable `step` (below 2^63 for any
                    // state below 2^63).
                    let q = f._mm512_srli_epi64::<24>(x);
                    let y = f._mm512_add_epi64(dq._mm512_mullo_epi64(big_f, q), big_r);
                    if let (Some(o), Some(b)) = (
                        k.out.get_mut(r * 8..).and_then(|o| o.first_chunk_mut::<8>()),
                        bytes.first_chunk::<8>(),
                    ) {
                        *o = *b;
                    }
                    // I1: a lane whose state fell below 2^31 takes the next
                    // word; the words go to those lanes in lane order.
                    let need = f._mm512_cmplt_epu64_mask(y, low);
                    let w: __m256i = pulp::cast(*chunk);
                    let w = f._mm512_maskz_expand_epi64(need, f._mm512_cvtepu32_epi64(w));
                    let renormed = f._mm512_or_si512(f._mm512_slli_epi64::<32>(y), w);
                    k.x = f._mm512_mask_mov_epi64(y, need, renormed);
                    k.pos += 4 * need.count_ones() as usize;
                }
                r += 1;
            }
            r
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::coder::bytes::encode_block;
    use crate::coder::tests::{splitmix, GARBAGE};

    /// The smallest block with 8 lanes.
    const BITS: u64 = 1 << 22;

    /// A block of BITS bits, each 1 with probability `density`.
    fn block(density: f64, seed: u64) -> (Vec<u64>, u64) {
        let mut s = seed;
        let cut = (density * (1u64 << 53) as f64) as u64;
        let w: Vec<u64> = (0..BITS / 64)
            .map(|_| (0..64).fold(0u64, |w, i| w | u64::from((splitmix(&mut s) >> 11) < cut) << i))
            .collect();
        let ones = w.iter().map(|x| u64::from(x.count_ones())).sum();
        (w, ones)
    }

    /// Four blocks at the given densities, encoded: (words, ones, stream).
    fn group_of(densities: [f64; GROUP], seed: u64) -> Vec<(Vec<u64>, u64, Vec<u8>)> {
        densities
            .iter()
            .zip(0u64..)
            .map(|(&d, i)| {
                let (w, ones) = block(d, seed ^ i);
                let mut out = Vec::new();
                encode_block(&w, BITS, ones, &mut out, &mut Vec::new());
                (w, ones, out)
            })
            .collect()
    }

    /// Decodes four streams as a group and one by one with the portable
    /// decoder (both into words holding garbage), and checks that they
    /// agree block by block: the same steps and words, or the same error.
    /// Returns the group's results.
    fn agree(streams: &[(&[u8], u64); GROUP]) -> [Result<u64, CoderError>; GROUP] {
        let n = (BITS / 64) as usize;
        let mut vec_words: Vec<Vec<u64>> = (0..GROUP).map(|_| vec![GARBAGE; n]).collect();
        let mut it = vec_words.iter_mut();
        let mut group: [Member<'_>; GROUP] = streams.map(|(data, ones)| Member {
            data,
            bits: BITS,
            ones,
            words: it.next().unwrap(),
        });
        let got = decode_group(&mut group);
        for (i, ((data, ones), r)) in streams.iter().zip(&got).enumerate() {
            let mut words = vec![GARBAGE; n];
            let want = decode_block(data, BITS, *ones, &mut words);
            assert_eq!(r, &want, "block {i}");
            if want.is_ok() {
                assert!(vec_words[i] == words, "block {i}: words differ");
            }
        }
        got
    }

    #[test]
    fn groups_decode_as_the_portable_decoder_at_every_density() {
        if !available() {
            eprintln!("no AVX-512 here: the group decoder falls back (checked below)");
        }
        // Mode 1 serves minority densities from 1/16; the four blocks of
        // a group have their own tables.
        for (densities, seed) in [
            ([0.0625, 0.133, 0.3, 0.5], 1u64),
            ([0.6, 0.75, 0.9, 0.9375], 2),
            ([0.133, 0.133, 0.134, 0.132], 3),
        ] {
            let g = group_of(densities, seed);
            let got = agree(&core::array::from_fn(|i| (&g[i].2[..], g[i].1)));
            for (r, (w, _, _)) in got.iter().zip(&g) {
                assert_eq!(r, &Ok(BITS / 8));
                let _ = w;
            }
            // And the words are the blocks (agree checked them against
            // the portable decoder; here against the source).
            let n = (BITS / 64) as usize;
            let mut words: Vec<Vec<u64>> = (0..GROUP).map(|_| vec![0; n]).collect();
            let mut it = words.iter_mut();
            let mut group: [Member<'_>; GROUP] = core::array::from_fn(|i| Member {
                data: &g[i].2,
                bits: BITS,
                ones: g[i].1,
                words: it.next().unwrap(),
            });
            let _ = decode_group(&mut group);
            for (i, (w, _, _)) in g.iter().enumerate() {
                assert!(words[i] == *w, "{densities:?}: block {i}");
            }
        }
    }

    #[test]
    fn corrupt_streams_fail_as_in_the_portable_decoder() {
        let g = group_of([0.2, 0.4, 0.5, 0.133], 9);
        let clean: Vec<&[u8]> = g.iter().map(|b| &b.2[..]).collect();
        let ones: Vec<u64> = g.iter().map(|b| b.1).collect();
        let mut s = 77u64;
        // Each case damages block `victim` and leaves the others whole,
        // so the vectors stop where that block's stream does.
        for case in 0..24 {
            let victim = case % GROUP;
            let mut bad = clean[victim].to_vec();
            let len = bad.len();
            match case / GROUP {
                // Cut short: mid-stream, a round's reads from the end, one
                // word, three bytes (1–3 bytes: TrailingData or
                // UnexpectedEnd as the portable decoder finds them).
                0 => bad.truncate(len / 2),
                1 => bad.truncate(len - 29),
                2 => bad.truncate(len - 4),
                3 => bad.truncate(len - 3),
                // A flipped byte in the middle, and one after the states.
                4 => bad[len / 2] ^= 1 << (splitmix(&mut s) % 8),
                _ => bad[64 + (splitmix(&mut s) % 64) as usize] ^= 0x40,
            }
            let streams: [(&[u8], u64); GROUP] = core::array::from_fn(|i| {
                if i == victim {
                    (&bad[..], ones[i])
                } else {
                    (clean[i], ones[i])
                }
            });
            let got = agree(&streams);
            // A shortened stream always fails; a flipped byte may still
            // decode (to other bytes: the count of ones is the caller's
            // check), alike in both decoders.
            if case / GROUP < 4 {
                assert!(got[victim].is_err(), "case {case}: {:?}", got[victim]);
            }
        }
        // A stream too short for its states, and a bad initial state: the
        // whole group goes to the portable decoder, with the same results.
        let short = &clean[1][..40];
        let _ = agree(&[(clean[0], ones[0]), (short, ones[1]), (clean[2], ones[2]), (clean[3], ones[3])]);
        let mut bad_state = clean[2].to_vec();
        bad_state[8..16].copy_from_slice(&1u64.to_le_bytes());
        let got = agree(&[(clean[0], ones[0]), (clean[1], ones[1]), (&bad_state, ones[2]), (clean[3], ones[3])]);
        assert_eq!(got[2], Err(CoderError::BadState { offset: 8 }));
        // A wrong count of ones gives a different table: decoded bytes
        // differ or the stream fails its end checks, alike in both.
        let _ = agree(&[(clean[0], ones[0] + 1), (clean[1], ones[1]), (clean[2], ones[2] - 7), (clean[3], ones[3])]);
    }
}
