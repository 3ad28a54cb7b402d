//! What `cbloom decode` holds for a counting frame: the decoded counters
//! (m/2 bytes) and, while they are decoded, the map of nonzero counters
//! (m/8 bytes), then the raw frame written from the counters without a
//! copy of them or of the frame. One test in this binary, so the counting
//! allocator sees only its allocations.

use compressed_bloom::format::stream;
use compressed_bloom::kinds::counting::decode_counting;
use compressed_bloom::kinds::counting::encode_counting;
use compressed_bloom::kinds::counting::encode_counting_raw;
use compressed_bloom::{CountingBloomFilter, DecodeLimits, FilterParams};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

#[test]
fn counting_decode_to_a_raw_frame_holds_the_counters_and_the_map() {
    let m = 20_000_000u64;
    let mut f = CountingBloomFilter::new(FilterParams::new(m, 3, 5)).unwrap();
    for i in 0..2_000_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let frame = encode_counting(&f);
    let mut written = 0;
    let peak = peak_of(|| {
        let c = decode_counting(&frame, &DecodeLimits::default()).unwrap();
        written = stream::write_counting_raw_frame(&c, std::io::sink()).unwrap();
    });
    // Counters m/2 bytes, the map m/8, and 1 MiB for the coder's tables
    // and the writer's chunk: 0.625 m + 1 MiB. A frame built in memory
    // (its payload and the frame, m/2 each) would add m bytes.
    let bound = (m / 2 + m / 8) as usize + (1 << 20);
    println!(
        "decode + write: peak {peak} bytes for m = {m} ({:.1} bytes per frame byte; frame {} bytes)",
        peak as f64 / frame.len() as f64,
        frame.len()
    );
    assert!(peak <= bound, "peak {peak} bytes, bound {bound}");
    assert_eq!(written as usize, encode_counting_raw(&f).len());
}
