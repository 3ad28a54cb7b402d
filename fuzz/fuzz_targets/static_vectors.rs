//! Type-4 payloads of four to nine full blocks of 2^22 bits in mode 1 (and
//! sometimes a last, shorter block): the blocks the vector decoder (the
//! `simd` feature, on AVX-512 machines) takes four to seven at a time (on
//! two threads from eight blocks on). Each
//! block's density is the input's; then the payload is damaged (bytes
//! XORed, its end cut, a block's stream shortened). The in-memory decoder
//! on one and on two threads and the portable decoder must agree, words
//! for words or error for error, and an undamaged payload must decode to
//! its array.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::coder::static_coded::{self, Choice, Mode};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/density.rs"]
mod density;

#[derive(Arbitrary, Debug)]
struct Input {
    /// 4 + n mod 6 full blocks.
    blocks: u8,
    /// Bits of a last, partial block (n mod 2^16; 0: none).
    tail: u16,
    /// Each block's density, in sixteenths (1 + n mod 15).
    densities: [u8; 10],
    seed: u64,
    /// (offset, XOR) pairs applied to the payload.
    damage: Vec<(u32, u8)>,
    /// Bytes cut off the payload's end (n mod 64; 0 keeps it whole).
    cut: u8,
}

const BLOCK_LOG: u8 = 22;

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fuzz_target!(|input: Input| {
    let full = 4 + u64::from(input.blocks % 6);
    let tail = u64::from(input.tail);
    let m = (full << BLOCK_LOG) + tail;
    let n = m.div_ceil(64) as usize;
    let mut s = input.seed;
    let mut words = Vec::with_capacity(n);
    for i in 0..n {
        let block = (i as u64 * 64) >> BLOCK_LOG;
        let j = 1 + input.densities[block.min(9) as usize] % 15;
        words.push(density::word(j, || splitmix(&mut s)));
    }
    if tail % 64 != 0 {
        if let Some(last) = words.last_mut() {
            *last &= (1u64 << (tail % 64)) - 1;
        }
    }
    let mut payload = Vec::new();
    let choice = Choice {
        block_log: Some(BLOCK_LOG),
        mode: Some(Mode::Bytes),
    };
    static_coded::encode_with(&words, m, &mut payload, 1, choice);
    let whole = input.damage.is_empty() && input.cut % 64 == 0;
    let len = payload.len();
    for &(at, x) in &input.damage {
        payload[at as usize % len] ^= x;
    }
    payload.truncate(len - (usize::from(input.cut % 64)).min(len));
    let mut a = vec![0x5a5a_5a5a_5a5a_5a5au64; n];
    let mut b = vec![0u64; n];
    let mut c = vec![!0u64; n];
    let ra = static_coded::decode_with_threads(&payload, m, &mut a, 1);
    let rb = static_coded::decode_portable(&payload, m, &mut b, 1);
    let rc = static_coded::decode_with_threads(&payload, m, &mut c, 2);
    assert_eq!(ra, rb);
    assert_eq!(ra, rc);
    if ra.is_ok() {
        assert!(a == b && a == c);
    }
    if whole {
        assert_eq!(ra, Ok(()));
        assert!(a == words);
    }
});
