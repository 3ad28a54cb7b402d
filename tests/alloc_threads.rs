//! The decoder's memory beyond its output, as a function of the thread
//! count: each decoding thread holds one 32 KiB table, and the
//! block table costs a few words per block. Also the one copy
//! `decode_from_buf` makes of a frame spread over chained buffers. One test
//! in this binary, so the counting allocator sees only its allocations.

use bytes::Buf;
use compressed_bloom::{coder, decode_from_buf, encode, BloomFilter, DecodeLimits, FilterParams};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

/// One decode table: 4096 u64 entries (src/coder/block.rs).
const TABLE: usize = 32 * 1024;
/// Block table and per-block job: two ranges, a length and a job tuple.
const PER_BLOCK: usize = 128;
/// Small vectors and thread bookkeeping.
const SLACK: usize = 16 * 1024;

#[test]
fn decode_memory_is_output_plus_a_table_per_thread() {
    let m = 1u64 << 26; // 8 blocks of 2^23 bits, 8 MiB of output
    let blocks = coder::block_count(m) as usize;
    let mut f = BloomFilter::new(FilterParams::new(m, 2, 5)).unwrap();
    for i in 0..2_000_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let mut payload = Vec::new();
    coder::encode(f.as_words(), m, &mut payload);
    let output = (m / 8) as usize;
    let mut report = Vec::new();
    for threads in [1usize, 2, 8] {
        let mut words = vec![0u64; m.div_ceil(64) as usize];
        let peak = peak_of(|| {
            coder::decode_with_threads(&payload, m, &mut words, threads).unwrap();
        });
        assert_eq!(words, f.as_words());
        // The output was allocated outside; what remains is the overhead.
        let bound = threads.min(blocks) * TABLE + blocks * PER_BLOCK + SLACK;
        assert!(
            peak <= bound,
            "{threads} threads: {peak} bytes beyond the output, bound {bound}"
        );
        report.push((threads, peak));
    }
    println!("decode overhead beyond the {output}-byte output: {report:?}");

    // decode_from_buf on a chained Buf copies the frame once: the peak is
    // the output plus the frame plus the header peek, not more.
    let frame = encode(&f);
    let (a, b) = frame.split_at(frame.len() / 3);
    let limits = DecodeLimits::default();
    let peak = peak_of(|| {
        let mut chain = a.chain(b);
        let got = decode_from_buf(&mut chain, &limits).unwrap();
        assert_eq!(got.count_ones(), f.count_ones());
    });
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(blocks);
    let bound = output + frame.len() + 4096 + threads * TABLE + blocks * PER_BLOCK + SLACK;
    assert!(peak <= bound, "chained decode peak {peak}, bound {bound}");
    assert!(
        peak >= output + frame.len(),
        "the copy is real: {peak} < {} + {}",
        output,
        frame.len()
    );
    println!(
        "chained Buf decode peak {peak} bytes = output {output} + frame {} + {}",
        frame.len(),
        peak - output - frame.len()
    );
}
