//! What signing costs (docs/FORMAT.md section 6, tag 2): Ed25519 signing
//! and verification of a frame against decoding it, for a delta of about
//! 100 bytes and for the 10^7-key filter (m = 1.4·10^8, k = 2: 17.5 MB of
//! bits) as its default frame and raw. Medians of repeated runs, printed
//! as a Markdown table (docs/BENCHMARKS.md, "Signed frames").
//!
//!     cargo bench --bench signing

use compressed_bloom::ed25519_dalek::SigningKey;
use compressed_bloom::format::{sign_frame, verify_frame};
use compressed_bloom::{
    apply_delta, decode_any, delta, encode_with, BloomFilter, Coding, DecodeLimits, FilterParams,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[runs / 2]
}

fn ms(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1} µs")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

fn main() {
    let key = SigningKey::from_bytes(&[3; 32]);
    let keys = [key.verifying_key()];
    let limits = DecodeLimits::default();
    let mut f = BloomFilter::new(FilterParams::new(140_000_000, 2, 0)).unwrap();
    for i in 0..10_000_000u64 {
        f.insert(&i.to_le_bytes());
    }
    println!("| frame | bytes | sign | verify | decode (delta: apply) | verify / decode |");
    println!("|---|---|---|---|---|---|");
    // One key added, to a filter of 10^4 keys (a delta of about 100
    // bytes) and to the 10^7-key filter.
    let mut small = BloomFilter::new(FilterParams::new(100_000, 3, 0)).unwrap();
    for i in 0..10_000u64 {
        small.insert(&i.to_le_bytes());
    }
    for (name, base) in [("delta, m = 10^5", &small), ("delta, m = 1.4·10^8", &f)] {
        let mut g = base.clone();
        g.insert(b"one more key");
        let d = delta::encode_delta(base, &g).unwrap();
        let signed_d = sign_frame(&d, &key).unwrap();
        let sign = median(201, || drop(black_box(sign_frame(black_box(&d), &key))));
        let verify = median(201, || {
            verify_frame(black_box(&signed_d), &keys, &limits).unwrap();
        });
        let runs = if base.params().m > 1_000_000 { 11 } else { 201 };
        let apply = median(runs, || {
            let mut b = base.clone();
            apply_delta(&mut b, black_box(&signed_d), &limits).unwrap();
        });
        // The copy of the base each run starts from is not the apply's.
        let clone = median(runs, || drop(black_box(base.clone())));
        let apply = apply.saturating_sub(clone);
        println!(
            "| {name}, one key added | {} | {} | {} | {} | {:.3} |",
            signed_d.len(),
            ms(sign),
            ms(verify),
            ms(apply),
            verify.as_secs_f64() / apply.as_secs_f64()
        );
    }
    for (name, coding) in [
        ("full, default coding", Coding::Auto),
        ("full, raw", Coding::Raw),
    ] {
        let frame = encode_with(&f, coding);
        let signed = sign_frame(&frame, &key).unwrap();
        let sign = median(9, || drop(black_box(sign_frame(black_box(&frame), &key))));
        let verify = median(9, || {
            verify_frame(black_box(&signed), &keys, &limits).unwrap();
        });
        let decode = median(9, || {
            drop(black_box(decode_any(black_box(&signed), &limits).unwrap()))
        });
        println!(
            "| {name} | {} | {} | {} | {} | {:.2} |",
            signed.len(),
            ms(sign),
            ms(verify),
            ms(decode),
            verify.as_secs_f64() / decode.as_secs_f64()
        );
    }
}
