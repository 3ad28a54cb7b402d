//! The optimiser against its neighbours and against brute force.

use compressed_bloom::plan::{
    expected_frame_bytes, fpr_finite, frame_bound_bytes, plan_delta_for_size, plan_for_fpr,
    plan_for_size, standard_for_size, Constraints,
};

fn grid() -> Vec<(u64, u64, Constraints)> {
    let mut v = Vec::new();
    for &(n, z) in &[
        (10_000u64, 10_000u64),
        (10_000, 20_000),
        (10_000, 5_000),
        (1_000, 900),
        (100, 300),
        (1_000_000, 1_000_000),
    ] {
        for cap in [None, Some(16.0), Some(40.0)] {
            for max_k in [64u32, 3] {
                for confidence in [0.5, 0.9999] {
                    let mut c = Constraints {
                        max_k,
                        confidence,
                        ..Constraints::default()
                    };
                    if let Some(b) = cap {
                        c = c.with_max_bits_per_key(b, n);
                    }
                    v.push((n, z, c));
                }
            }
        }
    }
    v
}

#[test]
fn size_plan_beats_its_neighbours() {
    for (n, z, c) in grid() {
        let p = plan_for_size(n, z, &c).unwrap();
        let ctx = format!("n={n} z={z} {c:?} -> m={} k={}", p.m, p.k);
        // The size bound holds and the caps are honoured.
        assert!(p.bound_bytes <= z, "{ctx}: bound {}", p.bound_bytes);
        assert!(
            frame_bound_bytes(n, p.m, p.k, None, &c) <= z as f64,
            "{ctx}"
        );
        assert!(p.m <= c.max_m && p.k <= c.max_k, "{ctx}");
        // m + 1 breaks the budget or the cap.
        assert!(
            p.m == c.max_m || frame_bound_bytes(n, p.m + 1, p.k, None, &c) > z as f64,
            "{ctx}: m + 1 still fits"
        );
        // k − 1 and k + 1, each with the largest m that fits, are no better.
        for k in [p.k.wrapping_sub(1), p.k + 1] {
            if k == 0 || k > c.max_k {
                continue;
            }
            let fits = |m: u64| frame_bound_bytes(n, m, k, None, &c) <= z as f64;
            if !fits(1) {
                continue;
            }
            let (mut lo, mut hi) = (1u64, c.max_m.min(1 << 40));
            if fits(hi) {
                lo = hi;
            } else {
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if fits(mid) {
                        lo = mid
                    } else {
                        hi = mid
                    }
                }
            }
            assert!(
                fpr_finite(lo, n, k) >= p.fpr,
                "{ctx}: k={k} m={lo} gives {} < {}",
                fpr_finite(lo, n, k),
                p.fpr
            );
        }
    }
}

#[test]
fn size_plan_matches_brute_force_on_small_instances() {
    // Exhaustive over every (m, k) with m <= 4000: no monotonicity assumed.
    for &(n, z) in &[(50u64, 60u64), (80, 90), (200, 150), (30, 200)] {
        let c = Constraints {
            max_m: 4000,
            max_k: 12,
            ..Constraints::default()
        };
        let p = plan_for_size(n, z, &c).unwrap();
        let mut best = f64::INFINITY;
        for k in 1..=12 {
            for m in 1..=4000u64 {
                if frame_bound_bytes(n, m, k, None, &c) <= z as f64 {
                    best = best.min(fpr_finite(m, n, k));
                }
            }
        }
        assert_eq!(p.fpr, best, "n={n} z={z}: plan m={} k={}", p.m, p.k);
    }
}

#[test]
fn compression_beats_the_standard_filter_as_the_paper_says() {
    // Table I's setting: 8 bits per key on the wire.
    let n = 10_000;
    let z = 10_000;
    let c = Constraints::default();
    let p = plan_for_size(n, z, &c).unwrap();
    let s = standard_for_size(n, z, 0).unwrap();
    assert!(p.fpr < s.fpr, "{} vs standard {}", p.fpr, s.fpr);
    assert!(p.k < s.k);
    assert!(p.coded);
}

#[test]
fn fpr_plan_is_smallest_among_neighbours() {
    let c = Constraints::default();
    for &(n, f) in &[
        (10_000u64, 0.02),
        (10_000, 0.00045),
        (1_000, 0.1),
        (100_000, 1e-4),
    ] {
        let p = plan_for_fpr(n, f, &c).unwrap();
        assert!(p.fpr <= f);
        assert!(fpr_finite(p.m - 1, n, p.k) > f, "m − 1 would do");
        for k in [p.k - 1, p.k + 1] {
            if k == 0 {
                continue;
            }
            // Smallest m reaching f with this k.
            let (mut lo, mut hi) = (0u64, 1u64 << 40);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fpr_finite(mid, n, k) <= f {
                    hi = mid
                } else {
                    lo = mid
                }
            }
            assert!(
                expected_frame_bytes(n, hi, k, None, 0) >= p.expected_bytes,
                "n={n} f={f}: k={k} cheaper"
            );
        }
    }
}

#[test]
fn delta_plan_respects_budget() {
    let c = Constraints::default().with_max_bits_per_key(64.0, 10_000);
    let p = plan_delta_for_size(10_000, 0.05, 2_100, &c).unwrap();
    assert!(p.bound_bytes <= 2_100);
    assert_eq!(p.delta_fraction, Some(0.05));
    // Section IV: more array bits and fewer hashes than the standard 8/5.
    assert!(p.bits_per_key > 8.0 && p.k < 5, "{p:?}");
}

/// The size bound against real frames: 100 independent filters (fresh seeds)
/// built to each plan all fit the budget. The bound holds with probability at
/// least 0.9999 per frame, so P(any of 100 exceeds) is at most 1% if the model
/// is right; a failure here means the size model is optimistic.
#[test]
fn planned_frames_fit_their_budget_in_practice() {
    use compressed_bloom::{delta, encode, BloomFilter, FilterParams};
    let n = 10_000u64;
    let c = Constraints::default().with_max_bits_per_key(64.0, n);
    // No memory cap for the full filter, so the byte budget is what binds.
    let full = plan_for_size(n, 10_000, &Constraints::default()).unwrap();
    let dplan = plan_delta_for_size(n, 0.05, 2_150, &c).unwrap();
    let mut worst = (0usize, 0usize);
    for trial in 0..100u64 {
        let build = |p: &compressed_bloom::plan::Plan, lo: u64| {
            let mut f = BloomFilter::new(FilterParams::new(p.m, p.k, trial)).unwrap();
            for i in lo..lo + n {
                f.insert(&i.to_le_bytes());
            }
            f
        };
        let frame = encode(&build(&full, 0));
        assert!(
            frame.len() <= 10_000,
            "trial {trial}: {} bytes",
            frame.len()
        );
        let d = delta::encode_delta(&build(&dplan, 0), &build(&dplan, 500)).unwrap();
        assert!(d.len() <= 2_150, "trial {trial}: delta {} bytes", d.len());
        worst = (worst.0.max(frame.len()), worst.1.max(d.len()));
    }
    println!(
        "largest frames: {} / 10000 bytes, delta {} / 2150 bytes",
        worst.0, worst.1
    );
}

/// The default expansion limit accepts every plan the planner makes under
/// default constraints (docs/HARDENING.md, "Expansion"): the largest
/// expansion ⌈m/8⌉ / frame bytes, over n = 1 to 10^7 keys and budgets of 1
/// to 64 transmitted bits per key, stays below the default, with a margin
/// of 5% for frames smaller than their expected size.
#[test]
fn the_default_expansion_limit_admits_every_plan() {
    let cap = compressed_bloom::DecodeLimits::DEFAULT_MAX_EXPANSION as f64;
    let mut worst = 0.0f64;
    for n in [1u64, 100, 10_000, 1_000_000, 10_000_000] {
        for quarter in 4..=256u32 {
            let bits_per_key = f64::from(quarter) / 4.0;
            let budget = ((bits_per_key * n as f64 / 8.0) as u64).max(40);
            let Ok(p) = plan_for_size(n, budget, &Constraints::default()) else {
                continue;
            };
            let expansion = p.m.div_ceil(8) as f64 / p.expected_bytes;
            worst = worst.max(expansion);
        }
    }
    // The scan's worst case (n = 100, 21.75 bits per key, m = 2^23, k = 1).
    assert!(worst > 3_800.0, "worst expansion {worst}");
    assert!(worst * 1.05 <= cap, "worst expansion {worst} vs cap {cap}");
}

/// Plans keep their promise at the edges:
/// * a target far below what m ≤ 2^56 can reach at k = 1 is infeasible,
///   not m ≈ 2^54 with "fpr 0" (the finite rate must not round
///   1 − (1 − 1/m)^n to 0; the true rate there is about 5.6e-17 > 1e-17);
/// * the scalable planners check their constraints (a confidence of 1
///   must not give a byte bound of 0 through NaN, which any budget fits);
/// * the scalable size search treats a rate some layer cannot reach under
///   the policy's bits per key as not fitting, instead of failing.
#[test]
fn plans_at_the_edges_keep_their_promises() {
    use compressed_bloom::kinds::scalable::ScalablePolicy;
    use compressed_bloom::plan::kinds::{plan_scalable, plan_scalable_for_size};
    use compressed_bloom::plan::PlanError;
    let k1 = Constraints {
        max_k: 1,
        ..Constraints::default()
    };
    match plan_for_fpr(1, 1e-17, &k1) {
        Err(PlanError::Infeasible { .. }) => {}
        other => panic!("{other:?}"),
    }
    // The finite rate of a very sparse filter is not 0: about kn/m.
    let f = fpr_finite(1 << 54, 1, 1);
    assert!((f * (1u64 << 54) as f64 - 1.0).abs() < 1e-9, "{f}");
    let policy = ScalablePolicy::new(1000, 0.01);
    let certain = Constraints {
        confidence: 1.0,
        ..Constraints::default()
    };
    assert!(matches!(
        plan_scalable(10_000, &policy, &certain),
        Err(PlanError::InvalidArgument { .. })
    ));
    assert!(matches!(
        plan_scalable_for_size(10_000, 0, &policy, &certain),
        Err(PlanError::InvalidArgument { .. })
    ));
    let tight = ScalablePolicy {
        max_bits_per_key: 16.0,
        ..policy
    };
    let (plan, fpr) =
        plan_scalable_for_size(1000, 100_000, &tight, &Constraints::default()).unwrap();
    assert!(plan.bound_bytes <= 100_000, "{}", plan.bound_bytes);
    assert!(fpr > 0.0 && fpr < 0.5, "{fpr}");
}
