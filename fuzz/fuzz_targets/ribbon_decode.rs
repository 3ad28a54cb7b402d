//! Arbitrary ribbon payloads (kind 5) behind a valid header and a valid
//! CRC-32C, so the fuzzer reaches the payload parser the checksum guards:
//! the band width, the upper-block count, the shard table (counts, rows,
//! running sums) and the solution length. Whatever decodes must answer
//! queries without panicking and re-encode to the same frame; memory stays
//! within the expansion limit plus a constant.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::format::varint;
use compressed_bloom::kinds::ribbon::decode_ribbon;
use compressed_bloom::kinds::ribbon::encode_ribbon;
use compressed_bloom::DecodeLimits;
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/counting_alloc.rs"]
mod counting_alloc;

const CONSTANT: usize = 64 * 1024;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Rows (m): small, so that short payloads can hold the words.
    m: u16,
    /// Lower columns (k), 1..=64.
    k: u8,
    n: u32,
    seed: u64,
    payload: Vec<u8>,
    queries: Vec<Vec<u8>>,
}

fuzz_target!(|input: Input| {
    let m = u64::from(input.m) + 1;
    let k = u64::from(input.k % 64) + 1;
    let mut f = vec![0xCB, 0xF1, 3, 0, 1, 0, 5];
    for v in [
        input.seed,
        m,
        k,
        u64::from(input.n),
        input.payload.len() as u64,
    ] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(&input.payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    let lim = DecodeLimits::default();
    let mut decoded = None;
    let peak = counting_alloc::peak_of(|| decoded = Some(decode_ribbon(&f, &lim)));
    let bound = f.len().saturating_mul(16).saturating_add(CONSTANT);
    assert!(peak <= bound, "peak {peak} for a {}-byte frame", f.len());
    if let Some(Ok(r)) = decoded {
        for q in &input.queries {
            let _ = r.contains(q);
        }
        let _ = r.expected_fpr();
        assert_eq!(encode_ribbon(&r), f, "a decoded frame re-encodes as it was");
    }
});
