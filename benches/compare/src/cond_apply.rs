//! Time to apply a conditional delta and a plain delta on the 17.5 MB
//! filter (m = 1.4·10^8, n = 10^7, k = 2) after 5%, 0.5% and 0.05% of the
//! keys changed: the median of 9 applies each.

use compressed_bloom::{delta, BloomFilter, DecodeLimits, FilterParams};
use std::time::Instant;

fn median_apply(old: &BloomFilter, new: &BloomFilter, frame: &[u8]) -> f64 {
    let mut times = Vec::new();
    for _ in 0..9 {
        let mut base = old.clone();
        let t = Instant::now();
        delta::apply(&mut base, frame, &DecodeLimits::unlimited()).unwrap();
        times.push(t.elapsed().as_secs_f64());
        assert_eq!(&base, new);
    }
    times.sort_by(f64::total_cmp);
    times[4]
}

pub fn run() {
    println!("| keys changed | delta bytes (conditional) | conditional ms | plain ms | conditional / plain |");
    println!("|---|---|---|---|---|");
    let p = FilterParams::new(140_000_000, 2, 1);
    for churn in [0.05, 0.005, 0.0005] {
        let (mut old, mut new) = (BloomFilter::new(p).unwrap(), BloomFilter::new(p).unwrap());
        let shift = (churn * 10_000_000.0) as u64;
        for i in 0..10_000_000u64 {
            old.insert(&i.to_le_bytes());
            new.insert(&(i + shift).to_le_bytes());
        }
        let cond = delta::encode_delta_conditional(&old, &new).unwrap();
        let plain = delta::encode_delta_plain(&old, &new).unwrap();
        let tc = median_apply(&old, &new, &cond);
        let tp = median_apply(&old, &new, &plain);
        println!(
            "| {}% | {} | {:.1} | {:.1} | {:.2}× |",
            churn * 100.0,
            cond.len(),
            tc * 1e3,
            tp * 1e3,
            tc / tp
        );
    }
}
