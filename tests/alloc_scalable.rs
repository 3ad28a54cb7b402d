//! The scalable kind's memory bound under the default limits
//! (docs/HARDENING.md, "Cost per frame byte"): a decoded frame holds its
//! layers' bits, ⌈m/8⌉ bytes for the header's m = Σ m_i, plus rounding to
//! words and a few dozen bytes for each of at most 64 layers, and the
//! decoder's per-thread tables. Measured at the two worst frames the
//! format allows under it: the most layers (64, of one bit each, where the
//! per-layer costs weigh most per frame byte), and m at the default
//! `max_m` (2^32 bits, 512 MiB) split into 64 layers. One test in this
//! binary, so the counting allocator sees only its allocations.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

use compressed_bloom::kinds::scalable::encode_scalable;
use compressed_bloom::kinds::scalable::{layer_seed, Layer, ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::{decode_any, AnyFilter, BloomFilter, DecodeLimits, FilterParams};

/// 64 layers of `sizes` bits (k = 2), the first holding `keys` keys.
fn frame(sizes: &[u64], keys: u32) -> Vec<u8> {
    let seed = 5;
    let layers = sizes
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let mut filter =
                BloomFilter::new(FilterParams::new(m, 2, layer_seed(seed, i as u64))).unwrap();
            if i == 0 {
                for key in 0..keys {
                    filter.insert(&key.to_le_bytes());
                }
            }
            Layer {
                filter,
                capacity: 1000,
            }
        })
        .collect();
    let f = ScalableBloomFilter::from_parts(ScalablePolicy::new(1000, 0.01), seed, layers).unwrap();
    encode_scalable(&f)
}

#[test]
fn scalable_frames_hold_their_bits_plus_a_little_per_layer() {
    let lim = DecodeLimits::default();
    // The per-thread decode tables (32 KiB each, 2 here) and small vectors,
    // as tests/alloc_limit.rs allows, and per layer its words' rounding
    // (under 8 bytes) and its record: 128 bytes each is generous.
    let allowance = |m: u64| (m.div_ceil(8) as usize) + 128 * 1024 + 64 * 128;
    // The most layers, one bit each.
    let tiny = frame(&[1; 64], 0);
    // m = 2^32 in 64 layers, the first with 10^6 keys so that the frame
    // is within the expansion limit (4096 bytes per frame byte).
    let mut sizes = vec![1u64 << 26; 64];
    sizes[0] = (1 << 32) - 63 * (1 << 26);
    let big = frame(&sizes, 1_000_000);
    for (name, f, m) in [
        ("64 one-bit layers", &tiny, 64u64),
        ("m = 2^32", &big, 1 << 32),
    ] {
        let mut ok = false;
        let peak = peak_of(|| ok = matches!(decode_any(f, &lim), Ok(AnyFilter::Scalable(_))));
        assert!(ok, "{name}: decodes under the default limits");
        println!(
            "{name}: {} frame bytes, peak {peak} bytes for {} bytes of bits",
            f.len(),
            m.div_ceil(8)
        );
        assert!(
            peak <= allowance(m),
            "{name}: peak {peak}, allowance {}",
            allowance(m)
        );
    }
}
