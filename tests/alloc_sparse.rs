//! The sparse kind decodes m = 2^40 bits (128 GiB as an array) with 10^6
//! keys in memory proportional to the keys. One test in this
//! binary, so the counting allocator sees only its allocations.

use compressed_bloom::kinds::sparse::decode_sparse;
use compressed_bloom::kinds::sparse::encode_sparse;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::{DecodeLimits, FilterParams};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

#[test]
fn sparse_decode_memory_is_proportional_to_the_keys() {
    let n = 1_000_000u64;
    let p = FilterParams::new(1 << 40, 1, 11);
    let f = SparseFilter::from_keys(p, (0..n).map(|i| i.to_le_bytes())).unwrap();
    let frame = encode_sparse(&f);
    let mut got = None;
    let peak = peak_of(|| {
        got = Some(decode_sparse(&frame, &DecodeLimits::default()).unwrap());
    });
    let got = got.unwrap();
    assert_eq!(got, f);
    // Elias–Fano: l = ⌊log2(2^40 / 10^6)⌋ = 20 low bits and at most 3 upper
    // bits per position (w + 2^40 >> 20 + 1 upper bits, w ≈ 10^6), plus a
    // select sample (8 bytes) per 256 zeros: under 23 bits = 2.9 bytes per
    // key, against 2^37 bytes for the bit array.
    let bound = n as usize * 29 / 10 + 64 * 1024;
    println!(
        "decode peak {peak} bytes for {n} keys ({:.2} bytes per key; frame {} bytes; held {} bytes)",
        peak as f64 / n as f64,
        frame.len(),
        got.heap_bytes()
    );
    assert!(peak <= bound, "{peak} > {bound}");
    assert!(got.contains(&5u64.to_le_bytes()));
}
