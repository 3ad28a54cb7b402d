//! What compression does to a Squid cache digest, and what the same bytes
//! buy when the filter is planned for its compressed size (the paper's
//! point, on the system it was written for).
//!
//! For each n: a Squid digest of n URLs at Squid's default of 5 bits per
//! entry (capacity = n, as Squid sizes it), its frame (coded if that is
//! smaller) against the entropy bound, and a filter re-planned by
//! `plan_for_size` for the digest's own byte count. Both false-hit rates
//! are measured on 10^6 URLs that were never added, beside the formula's.

use compressed_bloom::math::log2_binomial;
use compressed_bloom::kinds::squid::{Method, SquidDigest};
use compressed_bloom::{encode, plan, BloomFilter, FilterParams};

const PROBES: u64 = 1_000_000;

fn url(i: u64) -> Vec<u8> {
    format!("http://host{}.example.net/objects/{i}.html", i % 977).into_bytes()
}

pub fn run() {
    println!(
        "| n | Squid digest bytes | fill | frame bytes | entropy bound | digest false hits (formula) | \
         re-planned m, k | re-planned frame bytes | re-planned false hits (formula) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in [10_000u64, 100_000, 1_000_000] {
        let mut d = SquidDigest::new(n, SquidDigest::DEFAULT_BITS_PER_ENTRY).unwrap();
        for i in 0..n {
            d.add(Method::GET, &url(i));
        }
        let squid_bytes = d.to_squid_bytes().len() as u64;
        let frame = compressed_bloom::kinds::squid::encode_squid(&d);
        let f = d.filter();
        let ones = f.count_ones();
        let bound = log2_binomial(f.m(), ones) / 8.0;
        let fill = ones as f64 / f.m() as f64;
        let hits = (n..n + PROBES)
            .filter(|&i| d.contains(Method::GET, &url(i)))
            .count() as f64
            / PROBES as f64;
        // The same number of bytes on the wire, planned for compression.
        let p = plan::plan_for_size(n, squid_bytes, &plan::Constraints::default()).unwrap();
        let mut g = BloomFilter::new(FilterParams::new(p.m, p.k, 1)).unwrap();
        for i in 0..n {
            g.insert(&url(i));
        }
        let g_frame = encode(&g).len();
        let g_hits =
            (n..n + PROBES).filter(|&i| g.contains(&url(i))).count() as f64 / PROBES as f64;
        println!(
            "| {n} | {squid_bytes} | {fill:.3} | {} | {bound:.0} | {hits:.5} ({:.5}) | {}, {} | {g_frame} | {g_hits:.5} ({:.5}) |",
            frame.len(),
            fill.powi(4),
            p.m,
            p.k,
            p.fpr
        );
    }
}
