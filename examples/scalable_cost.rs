//! What growing costs: a scalable filter (kind 3) that starts planned for
//! 1,000 keys and receives n, against a standard filter planned for the n
//! keys known in advance at the scalable filter's measured rate. Bytes are
//! whole frames; rates are measured on 10^6 keys never inserted.
//!
//!     cargo run --release --example scalable_cost

use compressed_bloom::format::encode_scalable;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::{encode, plan, BloomFilter, FilterParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("| n | bound | layers | scalable bytes (bits/key) | measured f | standard plan for n at that f: bytes (bits/key) | growth overhead |");
    println!("|---|---|---|---|---|---|---|");
    for (n, bound) in [
        (10_000u64, 0.01),
        (100_000, 0.01),
        (100_000, 0.001),
        (1_000_000, 0.01),
    ] {
        // R=0.5 or R=0.8 to compare tightening ratios (default 0.9).
        let r: f64 = std::env::var("R")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.9);
        let mut f = ScalableBloomFilter::new(
            ScalablePolicy {
                tightening: r,
                ..ScalablePolicy::new(1_000, bound)
            },
            1,
        )?;
        for i in 0..n {
            f.insert(format!("key-{i}").as_bytes());
        }
        let bytes = encode_scalable(&f).len();
        let probes = 1_000_000u64;
        let hits = (0..probes)
            .filter(|i| f.contains(format!("probe-{i}").as_bytes()))
            .count();
        let measured = hits as f64 / probes as f64;
        let p = plan::plan_for_fpr(n, measured.max(1e-9), &plan::Constraints::default())?;
        let mut g = BloomFilter::new(FilterParams::new(p.m, p.k, 1))?;
        for i in 0..n {
            g.insert(format!("key-{i}").as_bytes());
        }
        let std_bytes = encode(&g).len();
        println!(
            "| {n} | {bound} | {} | {bytes} ({:.2}) | {measured:.5} | {std_bytes} ({:.2}) | {:+.1}% |",
            f.layers().len(),
            bytes as f64 * 8.0 / n as f64,
            std_bytes as f64 * 8.0 / n as f64,
            (bytes as f64 / std_bytes as f64 - 1.0) * 100.0
        );
    }
    Ok(())
}
