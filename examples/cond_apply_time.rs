//! Time to apply a conditional delta on the 17.5 MB filter (m = 1.4·10^8,
//! n = 10^7, k = 2) after 5% of the keys changed (or the fraction in the
//! environment variable CHURN): median of 9 applies.
//!
//!     cargo run --release --example cond_apply_time
use compressed_bloom::{delta, BloomFilter, DecodeLimits, FilterParams};
use std::time::Instant;

fn main() {
    let p = FilterParams::new(140_000_000, 2, 1);
    let (mut old, mut new) = (BloomFilter::new(p).unwrap(), BloomFilter::new(p).unwrap());
    // Keys changed: 5% by default, or CHURN (a fraction) from the
    // environment.
    let churn: f64 = std::env::var("CHURN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.05);
    let shift = (churn * 10_000_000.0) as u64;
    for i in 0..10_000_000u64 {
        old.insert(&i.to_le_bytes());
        new.insert(&(i + shift).to_le_bytes());
    }
    let only = std::env::args().nth(1);
    for (name, frame) in [
        (
            "conditional",
            delta::encode_delta_conditional(&old, &new).unwrap(),
        ),
        ("plain", delta::encode_delta_plain(&old, &new).unwrap()),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut times = Vec::new();
        for _ in 0..9 {
            let mut base = old.clone();
            let t = Instant::now();
            delta::apply(&mut base, &frame, &DecodeLimits::unlimited()).unwrap();
            times.push(t.elapsed().as_secs_f64());
            assert_eq!(base, new);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{name}: {} bytes, median apply {:.1} ms",
            frame.len(),
            times[4] * 1e3
        );
    }
}
