//! `decode_from_buf` on a chained `Buf` copies the frame once: it holds
//! the output, the frame's copy and the decoder's own tables, measured at
//! the worst frames the default limits accept for it (docs/HARDENING.md,
//! "Bounded memory"). One test in this binary, so the counting allocator
//! sees only its allocations.

use bytes::Buf;
use compressed_bloom::{coder, decode_from_buf, encode, BloomFilter, DecodeLimits, FilterParams};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

/// One decode table per decoding thread: 4096 u64 entries.
const TABLE: usize = 32 * 1024;
/// Per coder block, the block table's range and the job a thread takes
/// (tests/alloc_threads.rs: about 100 bytes measured, 128 allowed).
const PER_BLOCK: usize = 128;
/// The 128-byte header peek, thread handles and small vectors
/// (tests/alloc_threads.rs allows the same 16 KiB).
const SLACK: usize = 16 * 1024;

#[path = "common/raw_frame.rs"]
mod raw_frame;
use raw_frame::raw_frame;

/// The worst frames `decode_from_buf` takes under the default limits, each
/// split across two chunks of a chained `Buf`:
///
/// * the largest: a raw frame of m = 2^32 (`max_m`), 512 MiB of payload,
///   whose output is the most the limits allow (512 MiB). A standard
///   frame is at most raw size (a coded payload must be shorter,
///   docs/FORMAT.md section 2.3, step 4), so no frame the limits accept
///   makes output + frame larger;
/// * the one with the most decoder overhead: the same m coded (type 1),
///   an empty filter of 512 coder blocks (the most blocks, and one table
///   per decoding thread), a frame of about 11.8 KB below the expansion
///   floor.
///
/// Each holds at most output + frame + a 32 KiB table per thread + 128
/// bytes per block + 16 KiB, and at least output + frame (the copy is
/// real: nothing else explains that much).
#[test]
fn a_chained_buf_costs_one_copy_of_the_worst_frames() {
    let m = 1u64 << 32;
    let output = (m / 8) as usize;
    let limits = DecodeLimits::default();
    assert_eq!(limits.max_m, m);
    let coded = encode(&BloomFilter::new(FilterParams::new(m, 2, 0)).unwrap());
    let raw = raw_frame(m);
    let blocks = coder::block_count(m) as usize;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(blocks);
    for (name, frame, tables) in [
        ("raw", &raw, 0),
        (
            "coded, 512 empty blocks",
            &coded,
            threads * TABLE + blocks * PER_BLOCK,
        ),
    ] {
        let (a, b) = frame.split_at(frame.len() / 3);
        let mut ones = None;
        let peak = peak_of(|| {
            let mut chain = a.chain(b);
            let got = decode_from_buf(&mut chain, &limits).unwrap();
            assert_eq!(chain.remaining(), 0);
            ones = Some(got.count_ones());
        });
        assert_eq!(ones, Some(0));
        let bound = output + frame.len() + tables + SLACK;
        println!(
            "{name}: frame {} bytes, peak {peak} = output {output} + frame + {} bytes (bound {bound})",
            frame.len(),
            peak as i64 - (output + frame.len()) as i64
        );
        assert!(peak <= bound, "{name}: peak {peak}, bound {bound}");
        assert!(
            peak >= output + frame.len(),
            "{name}: the copy is real: {peak} < {output} + {}",
            frame.len()
        );
    }
}
