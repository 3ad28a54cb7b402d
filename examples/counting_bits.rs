//! Bits per counter of the counting kind on the wire (docs/FORMAT.md
//! section 8.1) against 4 (the raw nibbles) and against the entropy of the
//! counter distribution, for m/n = 8..32 and k = 1..6 at m = 10^6.
//!
//!     cargo run --release --example counting_bits

use compressed_bloom::format::encode_counting;
use compressed_bloom::{CountingBloomFilter, FilterParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m = 1_000_000u64;
    println!(
        "| m/n | k | bits/counter (frame) | entropy bits/counter | over entropy | saturated |"
    );
    println!("|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    for bits_per_key in [8u64, 12, 16, 24, 32] {
        let n = m / bits_per_key;
        for k in 1..=6u32 {
            let mut f = CountingBloomFilter::new(FilterParams::new(m, k, 5))?;
            for i in 0..n {
                f.insert(format!("key-{i}").as_bytes());
            }
            let frame = encode_counting(&f);
            let hist = f.histogram();
            let entropy: f64 = hist
                .iter()
                .filter(|&&h| h > 0)
                .map(|&h| {
                    let p = h as f64 / m as f64;
                    -p * p.log2()
                })
                .sum();
            let per = frame.len() as f64 * 8.0 / m as f64;
            let over = per / entropy - 1.0;
            worst = worst.max(over);
            println!(
                "| {bits_per_key} | {k} | {per:.4} | {entropy:.4} | {:+.2}% | {} |",
                over * 100.0,
                hist[15]
            );
        }
    }
    println!(
        "\nworst: {:+.2}% over the entropy (whole frame, header included)",
        worst * 100.0
    );
    Ok(())
}
