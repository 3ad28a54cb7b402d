//! Numeric helpers shared by the optimiser and the reports: binary entropy,
//! log-factorials and log-binomials that stay accurate for m up to 2^53, and
//! the standard normal quantile used for the size safety margin.
//!
//! Nothing here is used by the decoder: the wire format's model is integer-only
//! (see `coder::model`), so these floating-point routines may differ in the
//! last ulp between platforms without breaking interoperability.

use std::f64::consts::{LN_2, PI};

/// Binary entropy H(p) in bits, with H(0) = H(1) = 0.
pub fn binary_entropy(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return 0.0;
    }
    -(p * p.log2() + (1.0 - p) * (1.0 - p).log2())
}

/// ln(n!) for a non-negative integer given as `f64`.
///
/// Exact summation below 256, Stirling's series with four correction terms
/// above it (relative error below 1e-15 there).
pub fn ln_factorial(n: f64) -> f64 {
    if n < 2.0 {
        return 0.0;
    }
    if n < 256.0 {
        let mut acc = 0.0;
        let mut i = 2.0;
        while i <= n {
            acc += f64::ln(i);
            i += 1.0;
        }
        return acc;
    }
    let inv = 1.0 / n;
    let inv2 = inv * inv;
    n * n.ln() - n
        + 0.5 * (2.0 * PI * n).ln()
        + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
}

/// log2 C(m, x): the information content of an m-bit array with x ones, i.e.
/// the entropy bound any coder of such arrays is measured against.
pub fn log2_binomial(m: u64, x: u64) -> f64 {
    if x == 0 || x >= m {
        return 0.0;
    }
    let (m, x) = (m as f64, x as f64);
    (ln_factorial(m) - ln_factorial(x) - ln_factorial(m - x)) / LN_2
}

/// log2 C(m, y) for a real y in [0, m], by the same series (used by the
/// optimiser at quantiles that are not integers).
pub fn log2_binomial_real(m: f64, y: f64) -> f64 {
    if y <= 0.0 || y >= m {
        return 0.0;
    }
    // ln Γ(y + 1) interpolated through ln_factorial on non-integers: the
    // Stirling series is valid for real arguments >= 256; below that the
    // interpolation error is far below a bit and only affects tiny filters.
    let lf = |v: f64| -> f64 {
        if v >= 256.0 {
            ln_factorial(v)
        } else {
            let lo = v.floor();
            let frac = v - lo;
            ln_factorial(lo) + frac * (lo + 1.0).ln()
        }
    };
    (lf(m) - lf(y) - lf(m - y)) / LN_2
}

/// The quantile function of the standard normal distribution, Φ⁻¹(p), for
/// p in (0, 1): Acklam's rational approximation (relative error below
/// 1.2e-9, ample for a safety margin).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p.is_nan() || p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let plow = 0.02425;
    if p < plow {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - plow {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_known_values() {
        assert_eq!(binary_entropy(0.0), 0.0);
        assert_eq!(binary_entropy(1.0), 0.0);
        assert!((binary_entropy(0.5) - 1.0).abs() < 1e-15);
        // H(0.11) = 0.49991..., a textbook value.
        assert!((binary_entropy(0.11) - 0.499_915_958).abs() < 1e-8);
    }

    #[test]
    fn log_factorial_matches_direct_sum_across_the_switch() {
        for n in [255.0, 256.0, 300.0, 1000.0] {
            let direct: f64 = (2..=(n as u64)).map(|i| (i as f64).ln()).sum();
            let rel = (ln_factorial(n) - direct).abs() / direct;
            assert!(rel < 1e-13, "n={n} rel={rel}");
        }
    }

    #[test]
    fn log2_binomial_small_cases_exact() {
        assert!((log2_binomial(10, 3) - 120f64.log2()).abs() < 1e-12);
        assert!((log2_binomial(64, 32) - 1.832_624_140_942_590_5e18f64.log2()).abs() < 1e-9);
        assert_eq!(log2_binomial(5, 0), 0.0);
        assert_eq!(log2_binomial(5, 5), 0.0);
    }

    #[test]
    fn normal_quantile_known_values() {
        assert!(normal_quantile(0.5).abs() < 1e-12);
        // Reference values from the exact quantile; Acklam is good to ~1e-9 relative.
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-8);
        assert!((normal_quantile(0.9999) - 3.719_016_485_455_709).abs() < 1e-8);
        assert!((normal_quantile(1e-6) + 4.753_424_308_822_899).abs() < 1e-7);
    }
}
