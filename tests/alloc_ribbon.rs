//! A hostile ribbon frame (valid header and CRC, wrong length or counts)
//! is refused before the decoder allocates anything near what it declares.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

use compressed_bloom::wire::varint;
use compressed_bloom::{decode_any, DecodeLimits};

fn frame(m: u64, k: u64, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xCB, 0xF1, 3, 0, 1, 0, 5];
    for v in [0, m, k, 0, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

#[test]
fn hostile_frames_allocate_in_proportion_to_their_length() {
    let lim = DecodeLimits::unlimited();
    // 2^20 blocks of 63 columns declared (1 GiB of words) behind 1 KiB.
    let mut p = vec![128, 0, 1];
    varint::put(&mut p, 128 << 20);
    p.push(0);
    p.resize(1024, 0);
    let big = frame(128 << 20, 63, &p);
    // 2^50 shards declared in a 1 KiB payload.
    let mut q = vec![128, 0];
    varint::put(&mut q, 1 << 50);
    q.resize(1024 + 5, 0);
    let shards = frame(128 * 8, 1, &q);
    for f in [&big, &shards] {
        let peak = peak_of(|| assert!(decode_any(f, &lim).is_err()));
        assert!(peak <= 64 * 1024, "peak {peak}");
    }
}
