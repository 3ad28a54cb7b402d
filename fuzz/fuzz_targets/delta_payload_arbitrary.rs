//! Arbitrary delta payloads behind a valid header, base digest and CRC, so
//! the fuzzer reaches the part layout, the coder and the scatter of both
//! delta types (a raw-bytes target rarely gets past the checksum). An error
//! leaves the base unchanged; success yields the digest the frame promised.
//!
//! Input: byte 0 picks the type (even: plain, type 2; odd: conditional,
//! type 3), bytes 1..9 are the result digest, the rest is the payload after
//! the digests. `tools/fuzz_seeds.sh` makes seeds from real deltas.
#![no_main]

use compressed_bloom::format::varint;
use compressed_bloom::{delta, BloomFilter, DecodeLimits, FilterParams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&ty, rest)) = data.split_first() else {
        return;
    };
    if rest.len() < 8 {
        return;
    }
    let (result_digest, tail) = rest.split_at(8);
    let p = FilterParams::new(4096, 3, 7);
    let mut base = BloomFilter::new(p).unwrap();
    for i in 0..200u32 {
        base.insert(format!("key-{i}").as_bytes());
    }
    let (version, id) = if ty % 2 == 0 { (1, 2) } else { (2, 3) };
    let mut frame = vec![0xCB, 0xF1, version, id, 1, 0];
    let payload_len = 16 + tail.len() as u64;
    for v in [7, 4096, 3, 200, payload_len] {
        varint::put(&mut frame, v);
    }
    frame.extend_from_slice(&delta::digest(&base).to_le_bytes());
    frame.extend_from_slice(result_digest);
    frame.extend_from_slice(tail);
    let crc = crc32c::crc32c(&frame);
    frame.extend_from_slice(&crc.to_le_bytes());

    let before = base.clone();
    let limits = DecodeLimits::default();
    match delta::apply(&mut base, &frame, &limits) {
        Ok(()) => {
            assert_eq!(base.params(), before.params());
            assert_eq!(delta::digest(&base).to_le_bytes(), result_digest);
        }
        Err(_) => assert_eq!(base, before),
    }
    // Summaries decode the same bytes without the base: never a panic.
    let _ = delta::summarize(&frame, &limits);
});
