//! What growing costs: a scalable filter (kind 3) that starts planned for
//! 1,000 keys and receives n, against a standard filter planned for the n
//! keys known in advance at the scalable filter's measured rate. Bytes are
//! whole frames; rates are measured on 10^6 keys never inserted. Three
//! tightening ratios: 0.9 (the default), 0.8 and 0.5.

use compressed_bloom::kinds::scalable::encode_scalable;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::{encode, plan, BloomFilter, FilterParams};

/// (frame bytes, layers, measured f, bytes of the standard plan at that f).
fn measure(n: u64, bound: f64, tightening: f64) -> (usize, usize, f64, usize) {
    let policy = ScalablePolicy {
        tightening,
        ..ScalablePolicy::new(1_000, bound)
    };
    let mut f = ScalableBloomFilter::new(policy, 1).unwrap();
    for i in 0..n {
        f.insert(format!("key-{i}").as_bytes());
    }
    let bytes = encode_scalable(&f).len();
    let probes = 1_000_000u64;
    let hits = (0..probes)
        .filter(|i| f.contains(format!("probe-{i}").as_bytes()))
        .count();
    let measured = hits as f64 / probes as f64;
    let p = plan::plan_for_fpr(n, measured.max(1e-9), &plan::Constraints::default()).unwrap();
    let mut g = BloomFilter::new(FilterParams::new(p.m, p.k, 1)).unwrap();
    for i in 0..n {
        g.insert(format!("key-{i}").as_bytes());
    }
    (bytes, f.layers().len(), measured, encode(&g).len())
}

pub fn run() {
    println!("| n | bound | layers | scalable bytes (bits/key) | measured f | standard for n at that f | overhead | at tightening 0.8 | at 0.5 |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (n, bound) in [
        (10_000u64, 0.01),
        (100_000, 0.01),
        (100_000, 0.001),
        (1_000_000, 0.01),
    ] {
        let (bytes, layers, measured, std_bytes) = measure(n, bound, 0.9);
        let over = |b: usize, s: usize| format!("{:+.0}%", (b as f64 / s as f64 - 1.0) * 100.0);
        let (b8, _, _, s8) = measure(n, bound, 0.8);
        let (b5, _, _, s5) = measure(n, bound, 0.5);
        println!(
            "| {n} | {bound} | {layers} | {bytes} ({:.2}) | {measured:.5} | {std_bytes} ({:.2}) | {} | {} | {} |",
            bytes as f64 * 8.0 / n as f64,
            std_bytes as f64 * 8.0 / n as f64,
            over(bytes, std_bytes),
            over(b8, s8),
            over(b5, s5),
        );
    }
}
