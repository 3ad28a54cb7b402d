//! Measured false-positive rates against the finite formula, fixed keys.

use compressed_bloom::plan::{fpr_finite, zero_count_variance, zero_fraction};
use compressed_bloom::{BloomFilter, FilterParams};

const N: u64 = 10_000;
const QUERIES: u64 = 1_000_000;

fn measure(bits_per_key: u64, k: u32, seed: u64) -> (f64, f64, f64) {
    let m = bits_per_key * N;
    let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
    for i in 0..N {
        f.insert(format!("member:{i}").as_bytes());
    }
    // Non-members: a disjoint key space.
    let hits = (0..QUERIES)
        .filter(|i| f.contains(format!("stranger:{i}").as_bytes()))
        .count();
    let measured = hits as f64 / QUERIES as f64;
    let expected = fpr_finite(m, N, k);
    // Standard deviation of the measured rate, from two sources:
    // * the queries: Binomial(Q, f) gives f(1 − f)/Q;
    // * the filter itself: its fill ρ = 1 − X/m varies (Var X in closed form,
    //   `zero_count_variance`), and f ≈ ρ^k, so by the delta method
    //   sd_filter ≈ k·ρ^{k−1}·sd(ρ).
    let rho = 1.0 - zero_fraction(m, N, k);
    let sd_rho = zero_count_variance(m, N, k).sqrt() / m as f64;
    let sd_filter = f64::from(k) * rho.powi(k as i32 - 1) * sd_rho;
    let sd_query = (expected * (1.0 - expected) / QUERIES as f64).sqrt();
    let sd = (sd_filter * sd_filter + sd_query * sd_query).sqrt();
    (measured, expected, sd)
}

#[test]
fn measured_fpr_agrees_with_theory_within_4_sd() {
    for (bpk, k) in [(8u64, 6u32), (14, 2), (92, 1), (28, 4)] {
        let (measured, expected, sd) = measure(bpk, k, 0x5EED);
        let z = (measured - expected) / sd;
        println!(
            "m/n={bpk:>3} k={k}: measured {measured:.6} theory {expected:.6} sd {sd:.2e} z={z:+.2}"
        );
        assert!(
            z.abs() <= 4.0,
            "m/n={bpk} k={k}: {measured} vs {expected} ({z:+.2} sd)"
        );
    }
}
