//! Type 4's byte decoder (mode 1) with AVX-512, four to seven blocks at a
//! time.
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
//! This path runs only the fast rounds: each block's kernel stops on its
//! own, when its whole words are done or fewer than a round's reads (32
//! bytes) are left, and the others go on; each block then goes on in
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

/// The most blocks in a group: a run of eligible blocks is cut into
/// groups of [`GROUP`], and the last takes the one to three left over
/// (the array's last block, shorter than the others, among them), so that
/// no block of the run is left to the portable decoder.
pub(crate) const MAX_GROUP: usize = 2 * GROUP - 1;

/// One block of a group: its stream, bit count, count of ones and output
/// words (as [`decode_block`] takes them).
pub(crate) struct Member<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) bits: u64,
    pub(crate) ones: u64,
    pub(crate) words: &'a mut [u64],
}

/// Whether a block of `bits` bits with `ones` ones, in mode 1, can be one
/// of a group (8 lanes, not constant).
pub(crate) fn fits(bits: u64, ones: u64) -> bool {
    lanes_for(bits) == 8 && 0 < ones && ones < bits
}

/// Whether this machine runs the vector decoder: `pulp`'s x86-64-v4 level
/// (AVX-512 F, CD, BW, DQ and VL, with the x86-64-v3 set), detected once.
pub(crate) fn available() -> bool {
    V4::is_available()
}

/// Fills a decode table buffer (`bytes::Nibbles::fill_table`'s entries:
/// nibble v's range of `freq[v]` entries starts with `firsts[v]` and
/// grows by `step`) with 64-byte stores, eight entries at a time; a range's
/// last chunk may write up to 7 entries past it, which the next range, or
/// the buffer's padding, takes. Returns false, having written nothing,
/// when the machine lacks AVX-512, the frequencies do not sum to 4096, or
/// `buf` is shorter than 4096 + 7 entries. At m = 10^4 the build was
/// about a seventh of a decode with 16-byte stores.
///
/// Overflow: the frequencies sum to 4096, so `at` ≤ 4096 and a range's
/// chunks end below 4096 + 8; a rank (below 4096) never carries out of
/// its 16 bits.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn fill_table(firsts: &[u64; 16], freq: &[u32; 16], step: u64, buf: &mut [u64]) -> bool {
    // Ranges that tile the 4096 entries, and room for the overshoot: every
    // chunk below is then within `buf`.
    let tiles = freq.iter().map(|&f| u64::from(f)).sum::<u64>() == 4096;
    let Some(v4) = V4::try_new().filter(|_| tiles && buf.len() >= 4096 + 7) else {
        return false;
    };
    v4.vectorize(
        #[inline(always)]
        || {
            let f = v4.avx512f;
            let ramp: __m512i = pulp::cast(core::array::from_fn::<u64, 8, _>(|i| i as u64 * step));
            let eight = f._mm512_set1_epi64((8 * step) as i64);
            let mut at = 0usize;
            for (&first, &n) in firsts.iter().zip(freq) {
                let n = n as usize;
                let mut e = f._mm512_add_epi64(f._mm512_set1_epi64(first as i64), ramp);
                let span = buf.get_mut(at..at + n.div_ceil(8) * 8).unwrap_or_default();
                for chunk in span.chunks_exact_mut(8) {
                    if let Ok(c) = <&mut [u64; 8]>::try_from(chunk) {
                        *c = pulp::cast(e);
                    }
                    e = f._mm512_add_epi64(e, eight);
                }
                at += n;
            }
        },
    );
    true
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
    /// Rounds the block has (its whole words), and rounds made.
    rounds: usize,
    done: usize,
    /// Still decoding: rounds and a round's reads (32 bytes) left.
    active: bool,
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

/// Decodes a group of mode-1 blocks with 8 lanes each (from [`GROUP`] to
/// [`MAX_GROUP`] of them, of any sizes) and returns each block's result,
/// in order, as [`decode_block`] would give it (the same steps, or the
/// same error). Falls back to [`decode_block`] for every block when the
/// machine lacks AVX-512, a block does not [`fits`] (or its output is
/// short of its words), the group is too large, or a block's initial
/// states are bad or its stream is too short to hold them.
pub(crate) fn decode_group(group: &mut [Member<'_>]) -> Vec<Result<u64, CoderError>> {
    let starts: Vec<_> = group.iter().map(|m| begin::<8>(m.data)).collect();
    // Every block's whole words are in its output (the vectors write them
    // all before the portable decoder takes over).
    let ok = group.len() <= MAX_GROUP
        && group
            .iter()
            .all(|m| fits(m.bits, m.ones) && m.words.len() as u64 >= m.bits / 64)
        && starts.iter().all(Result::is_ok);
    let v4 = V4::try_new().filter(|_| ok);
    let Some(v4) = v4 else {
        return group
            .iter_mut()
            .map(|m| decode_block(m.data, m.bits, m.ones, m.words))
            .collect();
    };
    let mut at: Vec<Progress<8>> = starts.into_iter().flatten().collect();
    {
        let mut kernels: Vec<Kernel<'_>> = group
            .iter_mut()
            .zip(&at)
            .map(|(m, start)| {
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
                let rounds = (m.bits / 64) as usize;
                let fast = m.words.get_mut(..rounds).unwrap_or_default();
                Kernel {
                    x: pulp::cast(start.xs),
                    pos: start.pos,
                    data: m.data,
                    out: bytemuck::cast_slice_mut(fast),
                    rounds,
                    done: 0,
                    active: true,
                    start: narrow(&nib.start),
                    freq: narrow(&nib.freq),
                    start8: every(8),
                    start4: every(4),
                    start12: every(12),
                }
            })
            .collect();
        run(v4, &mut kernels);
        for (p, k) in at.iter_mut().zip(&kernels) {
            *p = Progress {
                xs: pulp::cast(k.x),
                pos: k.pos,
                words: k.done,
            };
        }
    }
    // `at` holds one progress per member: `starts` was all Ok.
    group
        .iter_mut()
        .zip(at)
        .map(|(m, p)| resume8(p, m.data, m.bits, m.ones, m.words))
        .collect()
}

/// The fast rounds of the kernels, interleaved: each goes on while it has
/// rounds and a round's reads (32 bytes) left.
///
/// Overflow: `done < rounds`, the block's whole words; `pos` grows by at
/// most 32 per round and only while 32 bytes are left, so it stays within
/// the stream.
#[allow(clippy::arithmetic_side_effects)]
fn run(v4: V4, kernels: &mut [Kernel<'_>]) {
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
            let mut active = kernels.len();
            while active > 0 {
                for k in kernels.iter_mut() {
                    if !k.active {
                        continue;
                    }
                    let chunk = k.data.get(k.pos..).and_then(|d| d.first_chunk::<32>());
                    let (Some(chunk), true) = (chunk, k.done < k.rounds) else {
                        k.active = false;
                        active -= 1;
                        continue;
                    };
                    let r = k.done;
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
                    let mut v = bw._mm512_mask_mov_epi16(
                        v,
                        bw._mm512_cmple_epu16_mask(pivot, s),
                        f._mm512_or_si512(v, four),
                    );
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
                    k.done += 1;
                }
            }
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

    /// Decodes streams (bit counts, streams, counts of ones) as a group
    /// and one by one with the portable decoder (both into words holding
    /// garbage), and checks that they agree block by block: the same
    /// steps and words, or the same error. Returns the group's results
    /// and words.
    fn agree(streams: &[(u64, &[u8], u64)]) -> (Vec<Result<u64, CoderError>>, Vec<Vec<u64>>) {
        let mut vec_words: Vec<Vec<u64>> = streams
            .iter()
            .map(|&(bits, _, _)| vec![GARBAGE; bits.div_ceil(64) as usize])
            .collect();
        let mut group: Vec<Member<'_>> = streams
            .iter()
            .zip(vec_words.iter_mut())
            .map(|(&(bits, data, ones), words)| Member {
                data,
                bits,
                ones,
                words,
            })
            .collect();
        let got = decode_group(&mut group);
        assert_eq!(got.len(), streams.len());
        drop(group);
        for (i, (&(bits, data, ones), r)) in streams.iter().zip(&got).enumerate() {
            let mut words = vec![GARBAGE; bits.div_ceil(64) as usize];
            let want = decode_block(data, bits, ones, &mut words);
            assert_eq!(r, &want, "block {i}");
            if want.is_ok() {
                assert!(vec_words[i] == words, "block {i}: words differ");
            }
        }
        (got, vec_words)
    }

    #[test]
    fn groups_decode_as_the_portable_decoder_at_every_density() {
        if !available() {
            eprintln!("no AVX-512 here: the group decoder falls back (checked below)");
        }
        // Mode 1 serves minority densities from 1/16; the blocks of a
        // group have their own tables.
        for (densities, seed) in [
            ([0.0625, 0.133, 0.3, 0.5], 1u64),
            ([0.6, 0.75, 0.9, 0.9375], 2),
            ([0.133, 0.133, 0.134, 0.132], 3),
        ] {
            let g = group_of(densities, seed);
            let streams: Vec<(u64, &[u8], u64)> = g.iter().map(|b| (BITS, &b.2[..], b.1)).collect();
            let (got, words) = agree(&streams);
            for (i, (r, (w, _, _))) in got.iter().zip(&g).enumerate() {
                assert_eq!(r, &Ok(BITS / 8));
                assert!(words[i] == *w, "{densities:?}: block {i}");
            }
        }
    }

    #[test]
    fn groups_of_blocks_of_other_sizes_decode_each_to_its_end() {
        // Seven blocks (the most in a group): full ones and shorter ones,
        // as the last block of an array is, down to the smallest with 8
        // lanes and one whose bits end inside a word. The short ones stop
        // early; the others go on in the vectors.
        let sizes = [BITS, BITS + 64 * 999, BITS, 3 * BITS / 2 + 13, BITS, 2 * BITS, BITS + 8];
        let mut rev = Vec::new();
        let blocks: Vec<(u64, Vec<u64>, u64, Vec<u8>)> = sizes
            .iter()
            .zip(0u64..)
            .map(|(&bits, i)| {
                let (mut w, _) = block(0.2 + 0.05 * i as f64, 40 + i);
                w.resize(bits.div_ceil(64) as usize, 0x0123_4567_89ab_cdef ^ i);
                if bits % 64 != 0 {
                    let last = w.len() - 1;
                    w[last] &= (1u64 << (bits % 64)) - 1;
                }
                let ones = w.iter().map(|x| u64::from(x.count_ones())).sum();
                let mut out = Vec::new();
                encode_block(&w, bits, ones, &mut out, &mut rev);
                (bits, w, ones, out)
            })
            .collect();
        let streams: Vec<(u64, &[u8], u64)> = blocks.iter().map(|b| (b.0, &b.3[..], b.2)).collect();
        let (got, words) = agree(&streams);
        for (i, (r, b)) in got.iter().zip(&blocks).enumerate() {
            assert_eq!(r, &Ok(b.0.div_ceil(8)), "block {i}");
            assert!(words[i] == b.1, "block {i}");
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
            let streams: Vec<(u64, &[u8], u64)> = (0..GROUP)
                .map(|i| (BITS, if i == victim { &bad[..] } else { clean[i] }, ones[i]))
                .collect();
            let (got, _) = agree(&streams);
            // A shortened stream always fails; a flipped byte may still
            // decode (to other bytes: the count of ones is the caller's
            // check), alike in both decoders.
            if case / GROUP < 4 {
                assert!(got[victim].is_err(), "case {case}: {:?}", got[victim]);
            }
        }
        // A stream too short for its states, and a bad initial state: the
        // whole group goes to the portable decoder, with the same results.
        let with = |i: usize, data: &'_ [u8], ones_i: u64| -> Vec<(u64, Vec<u8>, u64)> {
            (0..GROUP)
                .map(|j| {
                    if j == i {
                        (BITS, data.to_vec(), ones_i)
                    } else {
                        (BITS, clean[j].to_vec(), ones[j])
                    }
                })
                .collect()
        };
        let run = |v: &[(u64, Vec<u8>, u64)]| {
            let streams: Vec<(u64, &[u8], u64)> = v.iter().map(|b| (b.0, &b.1[..], b.2)).collect();
            agree(&streams).0
        };
        let _ = run(&with(1, &clean[1][..40], ones[1]));
        let mut bad_state = clean[2].to_vec();
        bad_state[8..16].copy_from_slice(&1u64.to_le_bytes());
        let got = run(&with(2, &bad_state, ones[2]));
        assert_eq!(got[2], Err(CoderError::BadState { offset: 8 }));
        // A wrong count of ones gives a different table: decoded bytes
        // differ or the stream fails its end checks, alike in both.
        let _ = run(&with(0, clean[0], ones[0] + 1));
        let _ = run(&with(2, clean[2], ones[2] - 7));
    }
}
