//! `format::stream::write_frame_bits` never holds the array: beyond the
//! frame it was given, its memory is at most one coder block per thread and one more,
//! one decode table per thread and the block table. One test in this
//! binary, so the counting allocator sees only its allocations.

use compressed_bloom::coder::static_coded::Choice;
use compressed_bloom::format::{self, stream, FilterType};
use compressed_bloom::{BloomFilter, DecodeLimits, FilterParams};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

/// The larger decode table: 4096 u64 entries (src/coder/block.rs).
const TABLE: usize = 32 * 1024;
/// Block table entry and per-block bookkeeping.
const PER_BLOCK: usize = 160;
/// Channels, thread bookkeeping and small vectors.
const SLACK: usize = 32 * 1024;

#[test]
fn streamed_bits_hold_a_block_per_thread_not_the_array() {
    let m = 1u64 << 26; // 8 MiB array
    let mut f = BloomFilter::new(FilterParams::new(m, 2, 5)).unwrap();
    for i in 0..4_000_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut report = Vec::new();
    // Type 1 (2^23-bit blocks) and type 4 with 2^20-bit blocks.
    let frames = [
        (
            "coded",
            format::encode_as(&f, FilterType::Coded),
            1usize << 23,
        ),
        (
            "static",
            format::encode_static_with(
                &f,
                Choice {
                    block_log: Some(20),
                    mode: None,
                },
            ),
            1 << 20,
        ),
    ];
    for (name, frame, block_bits) in frames {
        let blocks = (m as usize).div_ceil(block_bits);
        let threads = cores.min(blocks);
        let mut written = 0u64;
        let peak = peak_of(|| {
            let (_, n) =
                stream::write_frame_bits(&frame, &DecodeLimits::unlimited(), std::io::sink())
                    .unwrap();
            written = n;
        });
        assert_eq!(written, m / 8);
        let bound = (threads + 1) * block_bits / 8 + threads * TABLE + blocks * PER_BLOCK + SLACK;
        assert!(
            peak <= bound,
            "{name}: {peak} bytes beyond the frame at {threads} threads, bound {bound}"
        );
        // With fewer threads than a quarter of the blocks, well below the array.
        if 4 * threads <= blocks {
            assert!(peak < (m / 8) as usize, "{name}: {peak}");
        }
        report.push((name, threads, peak));
    }
    println!(
        "write_frame_bits memory beyond the frame, 8 MiB array (type, threads, bytes): {report:?}"
    );
    // In the same test: the counting allocator must see one at a time.
    streamed_bits_cost_only_the_block_table_per_block();
}

/// The cost that grows with the block count: the frame's block table (one
/// entry per block, about 72 bytes with its parse), nothing per block in
/// the streamer itself, whose slots are as many as its buffers. An all-zero
/// 2^28-bit array in 2^16-bit blocks: 4,096 constant blocks in a 16 KB
/// frame.
fn streamed_bits_cost_only_the_block_table_per_block() {
    let m = 1u64 << 28;
    let f = BloomFilter::new(FilterParams::new(m, 2, 5)).unwrap();
    let frame = format::encode_static_with(
        &f,
        Choice {
            block_log: Some(16),
            mode: None,
        },
    );
    let blocks = (m >> 16) as usize;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(blocks);
    let peak = peak_of(|| {
        stream::write_frame_bits(&frame, &DecodeLimits::unlimited(), std::io::sink()).unwrap();
    });
    // 80 bytes a block: the table's entry and its parse, with room.
    let bound = (threads + 1) * (1 << 16) / 8 + threads * TABLE + blocks * 80 + SLACK;
    assert!(
        peak <= bound,
        "{blocks} blocks, {threads} threads: {peak} bytes beyond the frame, bound {bound}"
    );
    println!(
        "{blocks} constant blocks: {peak} bytes beyond the {}-byte frame",
        frame.len()
    );
}
