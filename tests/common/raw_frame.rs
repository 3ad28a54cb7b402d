//! The largest standard frame a receiver can be sent for m bits: raw
//! (type 0), version 1, an empty filter, for the allocation tests that
//! measure the worst frames the limits accept.

use compressed_bloom::wire::varint;

/// A raw (type 0) version-1 frame of an empty standard filter of `m`
/// bits. The payload is the zeroed memory of `vec!` (pages the test never
/// writes, so the input costs the process almost nothing).
pub fn raw_frame(m: u64) -> Vec<u8> {
    let mut head = vec![0xCB, 0xF1, 1, 0, 1, 0];
    for v in [0, m, 2, 0, m.div_ceil(8)] {
        varint::put(&mut head, v);
    }
    let len = head.len() + m.div_ceil(8) as usize + 4;
    let mut f = vec![0u8; len];
    f[..head.len()].copy_from_slice(&head);
    let crc = crc32c::crc32c(&f[..len - 4]);
    f[len - 4..].copy_from_slice(&crc.to_le_bytes());
    f
}
