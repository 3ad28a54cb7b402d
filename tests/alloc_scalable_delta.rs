//! The memory of a scalable delta that adds layers (docs/HARDENING.md,
//! "Expansion"): `compressed_bloom::kinds::scalable::apply_scalable` holds what such a delta may add,
//! ⌈(m − the base's bits)/8⌉ bytes, to the expansion rule before it
//! decodes anything, and applying it holds the added layers, the decoded
//! XOR of each base layer and the copy of the base the result is built in.
//! One test in this binary, so the counting allocator sees only its
//! allocations.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

use compressed_bloom::kinds::scalable::apply_scalable;
use compressed_bloom::kinds::scalable::encode_delta_scalable;
use compressed_bloom::kinds::scalable::{layer_seed, Layer, ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::{coder, BloomFilter, DecodeLimits, FilterParams};

const SEED: u64 = 7;

/// A scalable filter of empty layers of `sizes` bits (k = 2).
fn layers(sizes: &[u64]) -> ScalableBloomFilter {
    let layers = sizes
        .iter()
        .enumerate()
        .map(|(i, &m)| Layer {
            filter: BloomFilter::new(FilterParams::new(m, 2, layer_seed(SEED, i as u64))).unwrap(),
            capacity: 1000,
        })
        .collect();
    ScalableBloomFilter::from_parts(ScalablePolicy::new(1000, 0.01), SEED, layers).unwrap()
}

/// The worst deltas that add layers under the default limits: the result
/// at m = 2^32 (`max_m`, 512 MiB of bits) in 64 layers, its new layers
/// empty and coded, so the frame is as short as the format allows for
/// what it adds (about 11 KB for 512 MiB: 2^16 bytes per frame byte at
/// most, which the expansion floor admits up to 512 MiB).
///
/// * From a one-layer base of 2^20 bits, the delta adds the most it can,
///   512 MiB less 128 KiB;
/// * from a base of 2^31 bits (256 MiB) in one layer, it adds 256 MiB and
///   the base's part weighs most: the XOR of the base layer is decoded
///   whole before the base is copied and changed.
///
/// Applying holds at most the added bytes, twice the base's bytes (its
/// decoded XOR and the copy the result is built in), the decoder's tables
/// (32 KiB per thread, 128 bytes per coder block, 16 KiB) and 128 bytes
/// per layer (rounding to words, its record); at least the added bytes.
#[test]
fn a_delta_that_adds_layers_holds_what_it_adds_and_the_base_twice() {
    let limits = DecodeLimits::default();
    let m = limits.max_m;
    assert_eq!(m, 1 << 32);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for base_bits in [1u64 << 20, 1 << 31] {
        let old = layers(&[base_bits]);
        let mut sizes = vec![base_bits];
        let rest = m - base_bits;
        sizes.extend((0..63).map(|i| rest / 63 + u64::from(i < rest % 63)));
        assert_eq!(sizes.iter().sum::<u64>(), m);
        let frame = {
            let new = layers(&sizes);
            encode_delta_scalable(&old, &new).unwrap()
        };
        let added = (m - base_bits).div_ceil(8) as usize;
        let base = base_bits.div_ceil(8) as usize;
        assert!(
            added as u64 > 4096 * frame.len() as u64,
            "above the ratio, so only the floor admits it"
        );
        let blocks: u64 = sizes.iter().map(|&b| coder::block_count(b)).sum();
        let tables = threads * 32 * 1024 + blocks as usize * 128 + 16 * 1024;
        let bound = added + 2 * base + tables + 64 * 128;
        let mut got = old.clone();
        let mut ok = false;
        let peak = peak_of(|| ok = apply_scalable(&mut got, &frame, &limits).is_ok());
        assert!(ok, "base of {base_bits} bits: the delta applies");
        assert_eq!(got.total_bits(), m);
        println!(
            "base {base} bytes, delta {} bytes adding {added}: peak {peak} bytes = added + 2 · base + {} (bound {bound})",
            frame.len(),
            peak as i64 - (added + 2 * base) as i64
        );
        assert!(peak >= added, "peak {peak} below the added {added}");
        assert!(peak <= bound, "peak {peak}, bound {bound}");
    }
}
