//! Bits per counter of the counting kind on the wire (docs/FORMAT.md
//! section 8.1) against the entropy of the counter distribution, for
//! m/n = 8..32 and k = 1..6 at m = 10^6 counters, keys `key-0…`.

use compressed_bloom::kinds::counting::encode_counting;
use compressed_bloom::{CountingBloomFilter, FilterParams};

pub fn run() {
    let m = 1_000_000u64;
    let ks = 1..=6u32;
    println!("Whole frame in bits per counter (over the entropy -Σ p_v log2 p_v of the 16 counter values); the raw nibbles are 4.");
    println!();
    print!("| m/n |");
    for k in ks.clone() {
        print!(" k = {k} |");
    }
    println!();
    println!("|---|{}", "---|".repeat(ks.clone().count()));
    let mut worst: f64 = 0.0;
    for bits_per_key in [8u64, 12, 16, 24, 32] {
        let n = m / bits_per_key;
        print!("| {bits_per_key} |");
        for k in ks.clone() {
            let mut f = CountingBloomFilter::new(FilterParams::new(m, k, 5)).unwrap();
            for i in 0..n {
                f.insert(format!("key-{i}").as_bytes());
            }
            let frame = encode_counting(&f);
            let entropy: f64 = f
                .histogram()
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
            print!(" {per:.3} ({:+.2}%) |", over * 100.0);
        }
        println!();
    }
    println!();
    println!(
        "Worst: {:+.2}% over the entropy, header included.",
        worst * 100.0
    );
}
