//! Round trips of whole frames over parameters and densities.

use crate::common;

use compressed_bloom::{
    decode, decode_from_buf, encode, encode_as, encode_into, max_encoded_len, BloomFilter,
    DecodeError, DecodeLimits, EncodeError, FilterParams, FilterType, MAX_K,
};
use quickcheck::{Arbitrary, Gen};

/// A filter with an arbitrary bit pattern (not necessarily from keys), so
/// every density from all-zero to all-one is covered.
#[derive(Clone, Debug)]
struct AnyFilter(BloomFilter);

impl Arbitrary for AnyFilter {
    fn arbitrary(g: &mut Gen) -> Self {
        // Blocks of 2^20 bits and more are coded with four lanes, smaller
        // ones with one: both, with their fast paths.
        let m = match u8::arbitrary(g) % 5 {
            0 => u64::from(u8::arbitrary(g)) + 1,
            1 => u64::from(u16::arbitrary(g)) + 1,
            2 => (1 << 20) + u64::from(u32::arbitrary(g)) % (2 << 20),
            _ => u64::from(u32::arbitrary(g)) % 1_000_000 + 1,
        };
        let k = u32::arbitrary(g) % MAX_K + 1;
        let seed = u64::arbitrary(g);
        // Density in 1/1024 steps, with the extremes weighted up.
        let d = match u8::arbitrary(g) % 8 {
            0 => 0,
            1 => 1024,
            2 => u32::arbitrary(g) % 8,
            _ => u32::arbitrary(g) % 1025,
        };
        // Sometimes the density rises from 0 to 2d along the array, so the
        // minority bit changes from one model stage to the next.
        let drift = u8::arbitrary(g) % 4 == 0;
        let mut state = u64::arbitrary(g) | 1;
        let mut bytes = vec![0u8; m.div_ceil(8) as usize];
        for i in 0..m {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let here = if drift {
                (u64::from(d) * 2 * i / m).min(1024)
            } else {
                u64::from(d)
            };
            if (state >> 54) < here {
                bytes[(i / 8) as usize] |= 1 << (i % 8);
            }
        }
        let n = u64::arbitrary(g);
        AnyFilter(BloomFilter::from_bytes(FilterParams::new(m, k, seed), n, &bytes).unwrap())
    }
}

#[test]
fn decode_encode_is_identity_and_never_larger_than_raw() {
    fn prop(f: AnyFilter) -> bool {
        let f = f.0;
        let frame = encode(&f);
        let raw = encode_as(&f, FilterType::Raw);
        // Without limits: a nearly empty array of millions of bits expands
        // past the default limit, which is the limits' job (tests/hostile/frames.rs),
        // not the round trip's.
        let unlimited = DecodeLimits::unlimited();
        frame.len() <= raw.len()
            && frame.len() <= max_encoded_len(&f)
            && decode(&frame, &unlimited).as_ref() == Ok(&f)
            && decode(&raw, &unlimited).as_ref() == Ok(&f)
    }
    common::qc(200, 0x5EED_0001).quickcheck(prop as fn(AnyFilter) -> bool);
}

#[test]
fn streamed_bits_and_raw_frames_match_the_buffered_ones() {
    use compressed_bloom::format::stream::{write_bits, write_raw_frame};
    fn prop(f: AnyFilter) -> bool {
        let f = f.0;
        let (mut bits, mut frame) = (Vec::new(), Vec::new());
        let nb = write_bits(&f, &mut bits).unwrap();
        let nf = write_raw_frame(&f, &mut frame).unwrap();
        bits == f.to_bytes()
            && frame == encode_as(&f, FilterType::Raw)
            && nb == bits.len() as u64
            && nf == frame.len() as u64
    }
    common::qc(100, 0x5EED_0005).quickcheck(prop as fn(AnyFilter) -> bool);
}

/// A filter (m, k, seed) holding the keys 0..n as little-endian u32s.
fn filled(m: u64, k: u32, seed: u64, n: u32) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
    for i in 0..n {
        f.insert(&i.to_le_bytes());
    }
    f
}

#[test]
fn slice_and_buf_apis_agree() {
    let f = filled(50_000, 3, 1, 3000);
    let frame = encode(&f);
    let mut small = vec![0u8; frame.len() - 1];
    assert_eq!(
        encode_into(&f, &mut small),
        Err(EncodeError::OutputTooSmall {
            required: frame.len(),
            available: frame.len() - 1,
        })
    );
    let mut exact = vec![0u8; frame.len()];
    assert_eq!(encode_into(&f, &mut exact), Ok(frame.len()));
    assert_eq!(exact, frame);
    // Two frames back to back in one buffer, and a chained buffer.
    let mut two = bytes::BytesMut::new();
    compressed_bloom::encode_to_buf(&f, &mut two).unwrap();
    compressed_bloom::encode_to_buf(&f, &mut two).unwrap();
    let mut b = two.freeze();
    let limits = DecodeLimits::default();
    assert_eq!(decode_from_buf(&mut b, &limits).unwrap(), f);
    assert_eq!(decode_from_buf(&mut b, &limits).unwrap(), f);
    assert!(b.is_empty());
    use bytes::Buf;
    let (a, c) = frame.split_at(frame.len() / 3);
    let mut chain = a.chain(c);
    assert_eq!(decode_from_buf(&mut chain, &limits).unwrap(), f);
    assert_eq!(chain.remaining(), 0);
    // A partial frame consumes nothing.
    let mut part = &frame[..frame.len() - 1];
    assert!(matches!(
        decode_from_buf(&mut part, &limits),
        Err(DecodeError::Truncated { .. })
    ));
    assert_eq!(part.len(), frame.len() - 1);
    // A chained buffer holding more than one frame: the first decodes and
    // the rest stays, in place.
    let tail = [0xAAu8; 5];
    let mut chain = a.chain(c).chain(&tail[..]);
    assert_eq!(decode_from_buf(&mut chain, &limits).unwrap(), f);
    assert_eq!(chain.remaining(), tail.len());
    assert_eq!(chain.chunk(), tail);
    // A chained buffer one byte short is truncated, with the counts.
    let mut short = a.chain(&c[..c.len() - 1]);
    assert_eq!(
        decode_from_buf(&mut short, &limits),
        Err(DecodeError::Truncated {
            needed: frame.len() as u64,
            available: frame.len() as u64 - 1,
        })
    );
}

/// A `Buf` that shows at most `step` bytes at a time and keeps the default
/// `chunks_vectored`, which exposes only the current chunk.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl bytes::Buf for Trickle<'_> {
    fn remaining(&self) -> usize {
        self.data.len()
    }
    fn chunk(&self) -> &[u8] {
        &self.data[..self.data.len().min(self.step)]
    }
    fn advance(&mut self, n: usize) {
        self.data = &self.data[n..];
    }
}

#[test]
fn chained_buffers_are_gathered_across_chunks() {
    use bytes::Buf;
    let f = filled(30_000, 2, 4, 2000);
    let frame = encode(&f);
    let limits = DecodeLimits::default();
    // Chunks shorter than the header, so the header itself is gathered.
    for first in [1usize, 5, 10, 63] {
        let (a, rest) = frame.split_at(first);
        let (b, c) = rest.split_at(7);
        let mut chain = a.chain(b).chain(c);
        assert_eq!(decode_from_buf(&mut chain, &limits).unwrap(), f, "{first}");
        assert_eq!(chain.remaining(), 0);
    }
    // A buffer that holds the whole frame but shows only 100 bytes of it at
    // a time (and no vectored view): the frame cannot be gathered without
    // consuming, so it is reported as truncated at what was visible, and
    // nothing is consumed.
    let mut trickle = Trickle {
        data: &frame,
        step: 100,
    };
    assert_eq!(
        decode_from_buf(&mut trickle, &limits),
        Err(DecodeError::Truncated {
            needed: frame.len() as u64,
            available: 100,
        })
    );
    assert_eq!(trickle.remaining(), frame.len());
}

#[test]
fn buf_mut_output_must_have_room_for_the_whole_frame() {
    let f = filled(20_000, 2, 9, 1000);
    let frame = encode(&f);
    // `&mut [u8]` is a BufMut whose remaining_mut() is its length.
    let mut exact = vec![0u8; frame.len()];
    assert_eq!(
        compressed_bloom::encode_to_buf(&f, &mut &mut exact[..]),
        Ok(frame.len())
    );
    assert_eq!(exact, frame);
    let mut small = vec![0u8; frame.len() - 1];
    assert_eq!(
        compressed_bloom::encode_to_buf(&f, &mut &mut small[..]),
        Err(compressed_bloom::EncodeError::OutputTooSmall {
            required: frame.len(),
            available: frame.len() - 1,
        })
    );
    assert!(small.iter().all(|&b| b == 0), "nothing is written on error");
}

#[test]
fn trailing_bytes_are_counted() {
    let f = BloomFilter::new(FilterParams::new(1000, 3, 0)).unwrap();
    let frame = encode(&f);
    for extra in [1usize, 2, 7, 300] {
        let mut data = frame.clone();
        data.resize(frame.len() + extra, 0);
        assert_eq!(
            decode(&data, &DecodeLimits::default()),
            Err(DecodeError::TrailingBytes {
                offset: frame.len() as u64,
                count: extra as u64,
            })
        );
    }
}

/// The static coder's choices a property draws: the block size (the
/// encoder's, or 2^16 / 2^17 so that several blocks appear in small arrays)
/// and the mode of every non-constant block (by density, or forced).
fn static_choice(mode: u8, log: u8) -> compressed_bloom::coder::static_coded::Choice {
    use compressed_bloom::coder::static_coded::{Choice, Mode};
    Choice {
        block_log: [None, Some(16), Some(17)][usize::from(log % 3)],
        mode: [None, Some(Mode::Runs), Some(Mode::Bytes)][usize::from(mode % 3)],
    }
}

#[test]
fn static_frames_round_trip_in_memory_and_streamed() {
    use compressed_bloom::format::{encode_static, stream::read_frame};
    fn prop(f: AnyFilter) -> bool {
        let f = f.0;
        let frame = encode_static(&f);
        let raw = encode_as(&f, FilterType::Raw);
        let unlimited = DecodeLimits::unlimited();
        let h = compressed_bloom::inspect(&frame, &unlimited).unwrap();
        // Type 4 is a version-3 type; the raw fallback stays version 1.
        let version_ok = match h.filter_type {
            FilterType::StaticCoded => frame[2] == 3,
            FilterType::Raw => frame == raw,
            _ => false,
        };
        version_ok
            && frame.len() <= raw.len()
            && decode(&frame, &unlimited).as_ref() == Ok(&f)
            && read_frame(&frame[..], &unlimited).ok().as_ref() == Some(&f)
    }
    common::qc(150, 0x5EED_0006).quickcheck(prop as fn(AnyFilter) -> bool);
}

#[test]
fn static_payloads_round_trip_under_every_choice_and_thread_count() {
    use compressed_bloom::coder::static_coded::{
        decode_counting, decode_with_threads, encode_with,
    };
    fn prop(f: AnyFilter, mode: u8, log: u8) -> bool {
        let f = f.0;
        let m = f.m();
        let mut payload = Vec::new();
        encode_with(f.as_words(), m, &mut payload, 2, static_choice(mode, log));
        let mut ok = true;
        // Into cleared words, then into words holding garbage: the decoder
        // overwrites every word.
        for (threads, fill) in [(1, 0), (3, u64::MAX), (1, 0x5a5a_a5a5_0ff0_f00f)] {
            let mut back = vec![fill; f.as_words().len()];
            ok &= decode_with_threads(&payload, m, &mut back, threads) == Ok(())
                && back == f.as_words();
        }
        // The decoder's work: at most one step per byte in mode 1, the run
        // coder's 5 per bit in mode 0, one per constant block
        // (docs/HARDENING.md, "Cost").
        let mut back = vec![0u64; f.as_words().len()];
        let steps = decode_counting(&payload, m, &mut back).unwrap();
        ok && steps <= 5 * m + m / 65_536 + 1
    }
    common::qc(150, 0x5EED_0007).quickcheck(prop as fn(AnyFilter, u8, u8) -> bool);
}

#[test]
fn static_frames_refuse_every_truncation_and_bit_flip() {
    let f = filled(20_000, 3, 2, 1500);
    let frame = compressed_bloom::format::encode_static(&f);
    assert_eq!(frame[3], 4, "type 4");
    common::assert_corruptions_refused(&frame, &DecodeLimits::default(), "static");
}

/// Arrays of 4 to 9 full blocks of 2^22 bits, or 4 to 6 of 2^23, coded in
/// mode 1, sometimes with a shorter last one (of 2^22 bits or more, so
/// with 8 lanes, when the blocks are 2^23), each block at its own density:
/// the blocks the AVX-512 decoder (the `simd` feature, on machines that
/// have it) takes in groups of 4 to 7. Sometimes damaged (bytes XORed);
/// decoded on 1 to 3 threads.
#[derive(Clone, Debug)]
struct Grouped {
    log: u8,
    m: u64,
    words: Vec<u64>,
    damage: Vec<(u32, u8)>,
    threads: usize,
}

impl Arbitrary for Grouped {
    fn arbitrary(g: &mut Gen) -> Self {
        let log = 22 + u8::arbitrary(g) % 2;
        let full = 4 + u64::from(u8::arbitrary(g) % if log == 22 { 6 } else { 3 });
        let tail = match u8::arbitrary(g) % 3 {
            0 => 0,
            1 => u64::from(u16::arbitrary(g)),
            _ => (1 << log) - 1 - u64::from(u16::arbitrary(g)),
        };
        let m = (full << log) + tail;
        let mut s = u64::arbitrary(g) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        // Each bit 1 with probability j/16 (mode 1 serves minority
        // densities from 1/16).
        let dens: Vec<u8> = (0..=full).map(|_| 1 + u8::arbitrary(g) % 15).collect();
        let n = m.div_ceil(64) as usize;
        let mut words: Vec<u64> = (0..n)
            .map(|i| {
                let j = dens[(i >> (log - 6)).min(dens.len() - 1)];
                common::density::word(j, &mut next)
            })
            .collect();
        if m % 64 != 0 {
            words[n - 1] &= (1u64 << (m % 64)) - 1;
        }
        let damage = if bool::arbitrary(g) {
            Vec::new()
        } else {
            Vec::<(u32, u8)>::arbitrary(g).into_iter().take(4).collect()
        };
        Grouped {
            log,
            m,
            words,
            damage,
            threads: 1 + usize::from(u8::arbitrary(g) % 3),
        }
    }
}

#[test]
fn grouped_blocks_decode_as_the_portable_decoder() {
    use compressed_bloom::coder::static_coded::{
        decode_portable, decode_with_threads, encode_with, Choice, Mode,
    };
    fn prop(g: Grouped) -> bool {
        let choice = Choice {
            block_log: Some(g.log),
            mode: Some(Mode::Bytes),
        };
        let mut payload = Vec::new();
        encode_with(&g.words, g.m, &mut payload, 2, choice);
        let len = payload.len();
        for &(at, x) in &g.damage {
            payload[at as usize % len] ^= x;
        }
        let mut want = vec![0u64; g.words.len()];
        let r = decode_portable(&payload, g.m, &mut want, 1);
        let mut got = vec![u64::MAX; g.words.len()];
        let same = decode_with_threads(&payload, g.m, &mut got, g.threads) == r
            && (r.is_err() || got == want);
        let whole = !g.damage.is_empty() || (r == Ok(()) && want == g.words);
        same && whole
    }
    common::qc(12, 0x5EED_0009).quickcheck(prop as fn(Grouped) -> bool);
}

/// `Coding::Auto` takes type 4 where it decodes faster, arrays of at least
/// 2^20 bits with a minority density of at least 1/16, and type 1 for
/// sparser (or denser) arrays; every choice decodes to the same filter,
/// within a hair of the other coding's size.
#[test]
fn auto_coding_takes_static_coding_from_a_sixteenth_density() {
    use compressed_bloom::{format, Coding, FilterType};
    let m = 1u64 << 21;
    for (n, expected) in [
        (21_000u64, FilterType::Coded),     // density 0.010
        (105_000, FilterType::Coded),       // 0.049
        (168_000, FilterType::StaticCoded), // 0.077
        (420_000, FilterType::StaticCoded), // 0.181
        (6_300_000, FilterType::Coded),     // 0.950: minority 0.050
    ] {
        let mut f =
            compressed_bloom::BloomFilter::new(compressed_bloom::FilterParams::new(m, 1, 5))
                .unwrap();
        for i in 0..n {
            f.insert(&i.to_le_bytes());
        }
        let auto = format::encode_with(&f, Coding::Auto);
        let h = compressed_bloom::inspect(&auto, &Default::default()).unwrap();
        assert_eq!(
            h.filter_type,
            expected,
            "n = {n}, density {}",
            f.fill_ratio()
        );
        assert_eq!(
            compressed_bloom::decode(&auto, &DecodeLimits::default()).unwrap(),
            f
        );
        let other = format::encode_with(
            &f,
            if expected == FilterType::Coded {
                Coding::Static
            } else {
                Coding::Adaptive
            },
        );
        // Both codings sit within 0.1% (plus block overheads) of each other.
        let (a, o) = (auto.len() as f64, other.len() as f64);
        assert!((a - o).abs() <= 0.001 * o + 64.0, "n = {n}: {a} vs {o}");
    }
}

/// Below 2^20 bits, `Coding::Auto` sends the smaller of the type-1 and
/// type-4 frames (type 1 on ties) wherever type 4 would be considered,
/// so a small dense filter never pays type 4's fixed costs; sparse arrays
/// keep type 1 as above.
#[test]
fn auto_coding_sends_the_smaller_frame_below_a_million_bits() {
    use compressed_bloom::{format, Coding, FilterType};
    let mut static_smaller = 0;
    for (m, k) in [
        (140_000u64, 2u32),
        (480_000, 3),
        (1_000_000, 1),
        ((1 << 20) - 1, 4),
    ] {
        for per_mille in [1u64, 30, 70, 130, 300, 500] {
            let n = m * per_mille / 1000 / u64::from(k);
            let mut f =
                compressed_bloom::BloomFilter::new(compressed_bloom::FilterParams::new(m, k, 3))
                    .unwrap();
            for i in 0..n {
                f.insert(&i.to_le_bytes());
            }
            let auto = format::encode_with(&f, Coding::Auto);
            let adaptive = format::encode_with(&f, Coding::Adaptive);
            let fixed = format::encode_with(&f, Coding::Static);
            assert_eq!(
                compressed_bloom::decode(&auto, &DecodeLimits::default()).unwrap(),
                f
            );
            let ones = f.count_ones();
            let h = compressed_bloom::inspect(&auto, &Default::default()).unwrap();
            if ones.min(m - ones) * 16 < m {
                assert_eq!(
                    auto, adaptive,
                    "m = {m}, n = {n}: sparse arrays take type 1"
                );
                continue;
            }
            let smaller = adaptive.len().min(fixed.len());
            assert_eq!(auto.len(), smaller, "m = {m}, n = {n}");
            if h.filter_type == FilterType::StaticCoded {
                assert!(
                    fixed.len() < adaptive.len(),
                    "m = {m}, n = {n}: ties take type 1"
                );
                static_smaller += 1;
            } else {
                assert_eq!(auto, adaptive, "m = {m}, n = {n}");
            }
        }
    }
    println!("type 4 smaller in {static_smaller} of the dense cases");
}
