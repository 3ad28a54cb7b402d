//! BIP158 filters from strangers, both ways in: arbitrary BIP158 bytes
//! given to the importer, and arbitrary scheme-3 payloads (repeats, then
//! positions) behind a valid header, block hash record and CRC-32C, so
//! the fuzzer reaches the payload decoder the checksum guards. Whatever is
//! accepted must come back whole (the BIP158 bytes exactly; a frame's
//! filter through its export and its own frame) and answer queries; refusals are typed errors, never panics;
//! memory stays within 16 bytes per value the input can hold plus a
//! constant.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::bitcoin::Bip158Filter;
use compressed_bloom::format::varint;
use compressed_bloom::kinds::bip158::{decode_bip158, encode_bip158};
use compressed_bloom::DecodeLimits;
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/counting_alloc.rs"]
mod counting_alloc;

const CONSTANT: usize = 64 * 1024;

#[derive(Arbitrary, Debug)]
struct Input {
    block_hash: [u8; 32],
    bip158: Vec<u8>,
    /// The frame's n (BIP158's N): small, so that payloads can hold it.
    n: u16,
    payload: Vec<u8>,
    queries: Vec<Vec<u8>>,
}

fuzz_target!(|input: Input| {
    let lim = DecodeLimits::default();
    let mut imported = None;
    let peak = counting_alloc::peak_of(|| {
        imported = Some(Bip158Filter::from_bip158_bytes(input.block_hash, &input.bip158, &lim))
    });
    // At most one value per 20 bits of input, 16 bytes each while held.
    let bound = input.bip158.len().saturating_mul(8).saturating_add(CONSTANT);
    assert!(peak <= bound, "peak {peak} for {} bytes", input.bip158.len());
    if let Some(Ok(f)) = imported {
        assert_eq!(f.to_bip158_bytes(), input.bip158, "an import exports as it was");
        let frame = encode_bip158(&f);
        assert_eq!(decode_bip158(&frame, &lim).as_ref(), Ok(&f));
        for q in &input.queries {
            let _ = f.contains(q);
        }
    }

    let n = u64::from(input.n);
    let m = n.max(1) * Bip158Filter::M;
    let mut frame = vec![0xCB, 0xF1, 3, 1, 3, 0x02, 4];
    for v in [0, m, 1, n, 34] {
        varint::put(&mut frame, v);
    }
    frame.extend_from_slice(&[3, 32]);
    frame.extend_from_slice(&input.block_hash);
    varint::put(&mut frame, input.payload.len() as u64);
    frame.extend_from_slice(&input.payload);
    let crc = crc32c::crc32c(&frame);
    frame.extend_from_slice(&crc.to_le_bytes());
    let mut decoded = None;
    let peak = counting_alloc::peak_of(|| decoded = Some(decode_bip158(&frame, &lim)));
    let bound = frame.len().saturating_mul(80).saturating_add(CONSTANT);
    assert!(peak <= bound, "peak {peak} for a {}-byte frame", frame.len());
    if let Some(Ok(f)) = decoded {
        for q in &input.queries {
            let _ = f.contains(q);
        }
        // The encoder may pick another Rice parameter than the frame's:
        // the filter, not the bytes, must come back.
        let again = encode_bip158(&f);
        assert_eq!(decode_bip158(&again, &lim).as_ref(), Ok(&f));
        let bytes = f.to_bip158_bytes();
        assert_eq!(
            Bip158Filter::from_bip158_bytes(input.block_hash, &bytes, &lim).as_ref(),
            Ok(&f)
        );
    }
});
