//! The type-4 (static-coded) decoder's memory beyond its output, as a
//! function of the thread count and the number of blocks: each decoding
//! thread holds one decode table (32 KiB, in either mode), and the block table costs a few words per block. One test in
//! this binary, so the counting allocator sees only its allocations.

use compressed_bloom::coder::static_coded::{decode_with_threads, encode_with, Choice};
use compressed_bloom::{BloomFilter, FilterParams};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

/// The larger decode table: 4096 u64 entries (src/coder/block.rs).
const TABLE: usize = 32 * 1024;
/// Table entry, stream range and per-block job.
const PER_BLOCK: usize = 160;
/// Small vectors and thread bookkeeping.
const SLACK: usize = 16 * 1024;

#[test]
fn static_decode_memory_is_output_plus_a_table_per_thread_and_a_little_per_block() {
    let m = 1u64 << 26; // 8 MiB of output
    let mut report = Vec::new();
    // Density 0.058 (run mode) and 0.21 (byte mode).
    for keys in [2_000_000u32, 8_000_000] {
        let mut f = BloomFilter::new(FilterParams::new(m, 2, 5)).unwrap();
        for i in 0..keys {
            f.insert(&i.to_le_bytes());
        }
        for log in [16u8, 23] {
            let blocks = (m >> log) as usize;
            let mut payload = Vec::new();
            let choice = Choice {
                block_log: Some(log),
                mode: None,
            };
            encode_with(f.as_words(), m, &mut payload, 2, choice);
            for threads in [1usize, 2, 8] {
                let mut words = vec![0u64; m.div_ceil(64) as usize];
                let peak = peak_of(|| {
                    decode_with_threads(&payload, m, &mut words, threads).unwrap();
                });
                assert!(words == f.as_words());
                let bound = threads.min(blocks) * TABLE + blocks * PER_BLOCK + SLACK;
                assert!(
                    peak <= bound,
                    "{keys} keys, 2^{log}-bit blocks, {threads} threads: {peak} bytes beyond the output, bound {bound}"
                );
                report.push((keys, log, threads, peak));
            }
        }
    }
    println!("type-4 decode overhead beyond the 8 MiB output (keys, block_log, threads, bytes): {report:?}");
}
