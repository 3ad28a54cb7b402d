//! Plans for the partitioned and sparse kinds (docs/FORMAT.md section 8):
//! the best m and k for a frame budget or a false-positive target, as for
//! the standard filter, with each kind's own false-positive formula and
//! frame size.
//!
//! * Partitioned: the same bit array on the wire (the standard size
//!   model, plus the version-3 kind byte), m a multiple of k, and
//!   f = (1 − (1 − 1/s)^n)^k with s = m/k.
//! * Sparse: Rice-coded gaps. With w one bits, gaps are close to geometric
//!   with p = w/m, so the best Rice parameter r costs
//!   w·(1 + r) + w·c/(1 − c) bits, c = (1 − p)^(2^r); the bound adds z
//!   standard deviations of both w and the unary parts. The budget sets
//!   the false-positive rate directly: f ≈ (w/m)^k.

use super::{
    fpr_finite, invalid, largest_m, normal_quantile, smallest_m, too_small, zero_count_variance,
    zero_fraction, Constraints, Plan, PlanError, SizeModel,
};
use crate::format::header;
use crate::kinds::partitioned::PartitionedBloomFilter;
use crate::kinds::sparse::MAX_RICE;
use crate::wire::varint;
use crate::FilterParams;

/// Bytes a version-3 frame without identity adds to the version-1 header:
/// the kind byte.
const KIND_BYTE: f64 = 1.0;

/// Expected Rice-coded bits of `w` uniformly placed positions in m bits at
/// parameter r, and their variance from the unary parts.
fn rice_bits(w: f64, m: f64, r: u32) -> (f64, f64) {
    if w <= 0.0 {
        return (0.0, 0.0);
    }
    let p = (w / m).min(1.0);
    let c = (-p).ln_1p().mul_add(2f64.powi(r as i32), 0.0).exp();
    let c = c.min(1.0 - 1e-12);
    let mean = w * (1.0 + f64::from(r)) + w * c / (1.0 - c);
    let var = w * c / ((1.0 - c) * (1.0 - c));
    (mean, var)
}

/// The encoder's Rice parameter for w positions in m bits (docs/FORMAT.md
/// section 8.4), and the expected bits and their variance at it.
fn best_rice(w: f64, m: f64) -> (u32, f64, f64) {
    let mean_gap = ((m - w) / w.max(1.0)).max(0.0);
    let center = if mean_gap < 1.0 {
        0
    } else {
        mean_gap.log2().floor() as u32
    };
    let (lo, hi) = (
        center.saturating_sub(3),
        (center + 3).min(u32::from(MAX_RICE)),
    );
    (lo..=hi)
        .map(|r| {
            let (b, v) = rice_bits(w, m, r);
            (r, b, v)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0, 0.0))
}

/// Frame bytes of a sparse filter with `w` one bits (expected value, or a
/// bound `z` deviations of the unary parts above).
fn sparse_frame_bytes(m: u64, n: u64, k: u32, seed: u64, w: f64, z: f64) -> f64 {
    let (_, bits, var) = best_rice(w, m as f64);
    let payload = varint::len(w.round() as u64) as f64
        + if w >= 0.5 { 1.0 } else { 0.0 }
        + ((bits + z * var.sqrt()) / 8.0).ceil();
    payload + header::frame_overhead(seed, m, k, n, payload as u64) as f64 + KIND_BYTE
}

/// The expected one bits and their sd for a filter of n keys.
fn ones(m: u64, n: u64, k: u32) -> (f64, f64) {
    (
        m as f64 * (1.0 - zero_fraction(m, n, k)),
        zero_count_variance(m, n, k).sqrt(),
    )
}

fn sparse_plan(n: u64, m: u64, k: u32, cons: &Constraints) -> Plan {
    let z = normal_quantile(cons.confidence);
    let (mean, sd) = ones(m, n, k);
    let expected = sparse_frame_bytes(m, n, k, cons.seed, mean, 0.0);
    let bound = sparse_frame_bytes(m, n, k, cons.seed, mean + z * sd, z);
    plan(n, m, k, fpr_finite(m, n, k), expected, bound, true, cons)
}

#[allow(clippy::too_many_arguments)]
fn plan(
    n: u64,
    m: u64,
    k: u32,
    fpr: f64,
    expected: f64,
    bound: f64,
    coded: bool,
    cons: &Constraints,
) -> Plan {
    Plan {
        n,
        m,
        k,
        fpr,
        bits_per_key: m as f64 / n.max(1) as f64,
        compressed_bits_per_key: expected * 8.0 / n.max(1) as f64,
        expected_bytes: expected,
        bound_bytes: bound.ceil() as u64,
        confidence: cons.confidence,
        coded,
        delta_fraction: None,
    }
}

/// Largest k the sparse planner tries: beyond a few positions per key the
/// positions list stops being sparse.
const SPARSE_MAX_K: u32 = 8;

internal! {
/// The sparse filter (k ≤ 8) with the lowest false-positive rate whose
/// frame stays within `budget_bytes` with probability ≥ `cons.confidence`.
/// `cons.max_m` does not bound a sparse filter's memory (it holds
/// positions, not m bits), but it still caps m here, like the other plans.
///
/// # Errors
/// Invalid constraints, or a budget too small for any frame.
///
/// # Examples
/// ```
/// use compressed_bloom::plan::{kinds::plan_sparse_for_size, Constraints};
/// // 2.6 bytes per key: f close to 2^-19 with k = 1.
/// let p = plan_sparse_for_size(100_000, 260_000, &Constraints::default())?;
/// assert_eq!(p.k, 1);
/// assert!(p.fpr < 2.5e-6 && p.bound_bytes <= 260_000, "{p:?}");
/// # Ok::<(), compressed_bloom::plan::PlanError>(())
/// ```
pub fn plan_sparse_for_size(
    n: u64,
    budget_bytes: u64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    let k_max = cons.k_cap().min(SPARSE_MAX_K);
    let at = |m, k| sparse_plan(n, m, k, cons);
    lowest_fpr_within(n, budget_bytes, cons, k_max, |_| 1, at, |_| true)
}
}

internal! {
/// The smallest expected sparse frame (k ≤ 8) whose false-positive rate is
/// at most `target_fpr`.
///
/// # Errors
/// Invalid arguments, or no m within `cons.max_m` reaches the target.
pub fn plan_sparse_for_fpr(n: u64, target_fpr: f64, cons: &Constraints) -> Result<Plan, PlanError> {
    let k_max = cons.k_cap().min(SPARSE_MAX_K);
    let fpr_at = |m, k| fpr_finite(m, n, k);
    let at = |m, k| sparse_plan(n, m, k, cons);
    smallest_frame_for(
        n,
        target_fpr,
        cons,
        k_max,
        |_| 1,
        fpr_at,
        at,
        |m| vec![m],
        |_| true,
    )
}
}

fn partitioned_plan(n: u64, m: u64, k: u32, cons: &Constraints) -> Plan {
    let model = SizeModel::filter(m, n, k, cons.seed);
    let z = normal_quantile(cons.confidence);
    let fpr = PartitionedBloomFilter::formula_fpr(&FilterParams::new(m, k, cons.seed), n);
    plan(
        n,
        m,
        k,
        fpr,
        model.expected_frame_bytes() + KIND_BYTE,
        model.bound_frame_bytes(z) + KIND_BYTE,
        model.coded(),
        cons,
    )
}

internal! {
/// The partitioned filter with the lowest false-positive rate whose frame
/// stays within `budget_bytes` with probability ≥ `cons.confidence` (m a
/// multiple of k).
///
/// # Errors
/// Invalid constraints, or a budget too small for any frame.
pub fn plan_partitioned_for_size(
    n: u64,
    budget_bytes: u64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    let at = |m, k| partitioned_plan(n, m, k, cons);
    lowest_fpr_within(n, budget_bytes, cons, cons.k_cap(), u64::from, at, |_| true)
}
}

internal! {
/// The smallest expected partitioned frame whose false-positive rate is at
/// most `target_fpr`.
///
/// # Errors
/// Invalid arguments, or no m within `cons.max_m` reaches the target.
pub fn plan_partitioned_for_fpr(
    n: u64,
    target_fpr: f64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    let fpr_at = |m, k| PartitionedBloomFilter::formula_fpr(&FilterParams::new(m, k, 0), n);
    let at = |m, k| partitioned_plan(n, m, k, cons);
    smallest_frame_for(
        n,
        target_fpr,
        cons,
        cons.k_cap(),
        u64::from,
        fpr_at,
        at,
        |m| vec![m],
        |_| true,
    )
}
}

/// The counter distribution of a counting filter of n keys: counter
/// values are close to Poisson with mean λ = kn/m, and 15 holds
/// everything from 15 up (saturation).
fn counter_distribution(m: u64, n: u64, k: u32) -> [f64; 16] {
    let lambda = f64::from(k) * n as f64 / m.max(1) as f64;
    let mut p = [0.0f64; 16];
    let mut term = (-lambda).exp();
    let mut below = 0.0;
    for (v, slot) in p.iter_mut().enumerate().take(15) {
        if v > 0 {
            term *= lambda / v as f64;
        }
        *slot = term;
        below += term;
    }
    p[15] = (1.0 - below).max(0.0);
    p
}

/// Expected frame bytes of a counting filter (docs/FORMAT.md section
/// 8.1), and a bound `z` standard deviations above: the zero/non-zero
/// map costs m·H(p0) bits (or ⌈m/8⌉ raw), each non-zero counter's value
/// its conditional entropy; the deviation counts the spread of the number
/// of non-zero counters and of the values' code lengths.
fn counting_frame_bytes(m: u64, n: u64, k: u32, seed: u64, z: f64) -> (f64, f64) {
    let p = counter_distribution(m, n, k);
    let mf = m as f64;
    let p0 = p[0];
    let (mean_w, sd_w) = ones(m, n, k);
    // The map is the standard bit array: the coder's own size bound, or raw.
    let bitmap = |w: f64| {
        (crate::coder::payload_bits_bound(m, crate::math::log2_binomial_real(mf, w)) / 8.0)
            .min(m.div_ceil(8) as f64)
    };
    // The values given non-zero: entropy and the spread of code lengths.
    let nz = (1.0 - p0).max(f64::MIN_POSITIVE);
    let (mut hv, mut hv2) = (0.0, 0.0);
    for &q in &p[1..] {
        if q > 0.0 {
            let c = q / nz;
            let bits = -c.log2();
            hv += c * bits;
            hv2 += c * bits * bits;
        }
    }
    let sd_v = (hv2 - hv * hv).max(0.0).sqrt();
    // Range coder: 5 bytes of flush, and each of the 14 adaptive models
    // pays about log2 of its count in learning.
    let values = |w: f64| w * hv / 8.0 + 5.0 + 14.0 * w.max(2.0).log2() / 16.0;
    let half = mf / 2.0;
    let w_hi = if mean_w <= half {
        (mean_w + z * sd_w).min(half)
    } else {
        (mean_w - z * sd_w).max(half)
    };
    // The type byte and the bitmap length's varint (at most 5 bytes here).
    let coded = 1.0 + 5.0 + bitmap(mean_w) + values(mean_w);
    let spread = z * mean_w.sqrt() * sd_v / 8.0;
    let coded_hi = 1.0 + 5.0 + bitmap(w_hi) + values(mean_w + z * sd_w) + spread;
    let raw = m.div_ceil(2) as f64;
    let frame = |payload: f64| {
        payload + header::frame_overhead(seed, m, k, n, payload as u64) as f64 + KIND_BYTE
    };
    (frame(coded.min(raw)), frame(coded_hi.ceil().min(raw)))
}

/// Whether a counting frame of this plan decodes under the default
/// expansion limit (its ⌈m/2⌉ + ⌈m/8⌉ output bytes at most
/// [`DEFAULT_MAX_EXPANSION`](crate::wire::limits::DEFAULT_MAX_EXPANSION)
/// times the frame, with 10% to spare): very sparse counter arrays code to
/// almost nothing, and a receiver with default limits would refuse them.
fn counting_decodable(p: &Plan) -> bool {
    let out = p.m.div_ceil(2) + p.m.div_ceil(8);
    out as f64 <= crate::wire::limits::DEFAULT_MAX_EXPANSION as f64 * p.expected_bytes * 0.9
}

fn counting_plan(n: u64, m: u64, k: u32, cons: &Constraints) -> Plan {
    let z = normal_quantile(cons.confidence);
    let (expected, bound) = counting_frame_bytes(m, n, k, cons.seed, z);
    let coded = expected < m.div_ceil(2) as f64;
    plan(n, m, k, fpr_finite(m, n, k), expected, bound, coded, cons)
}

internal! {
/// The counting filter (kind 1) with the lowest false-positive rate whose
/// frame stays within `budget_bytes` with probability ≥ `cons.confidence`
/// and decodes under the default expansion limit.
/// Its false-positive rate is the standard filter's (the bit view is the
/// same); it costs more bytes, for the counts.
///
/// # Errors
/// Invalid constraints, or a budget too small for any frame.
pub fn plan_counting_for_size(
    n: u64,
    budget_bytes: u64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    let at = |m, k| counting_plan(n, m, k, cons);
    lowest_fpr_within(
        n,
        budget_bytes,
        cons,
        cons.k_cap(),
        |_| 1,
        at,
        counting_decodable,
    )
}
}

internal! {
/// The smallest expected counting frame whose false-positive rate is at
/// most `target_fpr`.
///
/// # Errors
/// Invalid arguments, or no m within `cons.max_m` reaches the target.
pub fn plan_counting_for_fpr(
    n: u64,
    target_fpr: f64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    let fpr_at = |m, k| fpr_finite(m, n, k);
    let at = |m, k| counting_plan(n, m, k, cons);
    // Past the smallest m, a larger, sparser array may code smaller.
    let widen = |m: u64| vec![m, m + m / 4, m + m / 2, 2 * m, 3 * m, 4 * m];
    smallest_frame_for(
        n,
        target_fpr,
        cons,
        cons.k_cap(),
        |_| 1,
        fpr_at,
        at,
        widen,
        counting_decodable,
    )
}
}

/// The layers a scalable filter (kind 3) opens for `n` keys under `policy`
/// (each planned as [`ScalableBloomFilter`](crate::kinds::scalable::ScalableBloomFilter)
/// plans it when `cons.max_k` is the default: the filter opens its layers
/// under the default constraints and the policy's bits per key, so a
/// smaller `max_k` here plans layers it would not open; `cons.max_m` is
/// not applied to the layers), summed into one plan: m is the layers' total, k the largest
/// layer k, `fpr` 1 − Π(1 − f_i) with each layer at its expected count, and
/// the sizes are the layers' frames (each layer's plan, less the frame
/// header it does not have) plus the policy and the frame's own header.
///
/// # Errors
/// A policy out of range, more than 64 layers, or a layer that cannot be
/// planned.
pub fn plan_scalable(
    n: u64,
    policy: &crate::kinds::scalable::ScalablePolicy,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    use crate::kinds::scalable::MAX_LAYERS;
    cons.validate()?;
    policy
        .validate()
        .map_err(|_| invalid("policy", policy.fpr, "a valid scalable policy"))?;
    let z = normal_quantile(cons.confidence);
    let (mut left, mut i) = (n, 0u32);
    let (mut m, mut k, mut expected, mut var, mut keep) = (0u64, 1u32, 0.0f64, 0.0f64, 1.0f64);
    loop {
        let cap = policy.capacity(i);
        let layer_cons = Constraints {
            max_k: cons.max_k,
            ..Constraints::default()
        }
        .with_max_bits_per_key(policy.max_bits_per_key, cap);
        let p = super::plan_for_fpr(cap, policy.layer_fpr(i), &layer_cons)?;
        let count = left.min(cap);
        // The layer's bits at its expected count: a layer's descriptor is
        // four varints, a type byte and a length varint (about 12 bytes).
        let model = super::SizeModel::filter(p.m, count, p.k, 0);
        let overhead = header::frame_overhead(0, p.m, p.k, count, 0) as f64;
        let bytes = model.expected_frame_bytes() - overhead + 12.0;
        let sd = (model.bound_frame_bytes(z) - model.expected_frame_bytes()).max(0.0) / z.max(1e-9);
        expected += bytes;
        var += sd * sd;
        m = m.saturating_add(p.m);
        k = k.max(p.k);
        keep *= 1.0 - fpr_finite(p.m, count, p.k);
        left -= count;
        i += 1;
        if left == 0 {
            break;
        }
        if u64::from(i) >= MAX_LAYERS {
            return Err(PlanError::Infeasible {
                reason: format!("{n} keys need more than 64 layers under this policy"),
            });
        }
    }
    // The policy (2 varints, 3 binary64) and the layer count.
    let payload = expected + 28.0;
    let frame =
        |p: f64| p + header::frame_overhead(cons.seed, m, k, n, p as u64) as f64 + KIND_BYTE;
    Ok(plan(
        n,
        m,
        k,
        1.0 - keep,
        frame(payload),
        frame(payload + z * var.sqrt()).ceil(),
        true,
        cons,
    ))
}

/// The scalable filter with the lowest overall bound whose frame for `n`
/// keys stays within `budget_bytes` (with the policy's other settings):
/// the bound is searched on a log scale between 10^-12 and 0.5.
///
/// # Errors
/// A budget too small for the loosest bound, or a policy out of range.
pub fn plan_scalable_for_size(
    n: u64,
    budget_bytes: u64,
    policy: &crate::kinds::scalable::ScalablePolicy,
    cons: &Constraints,
) -> Result<(Plan, f64), PlanError> {
    let at = |f: f64| {
        let p = crate::kinds::scalable::ScalablePolicy { fpr: f, ..*policy };
        plan_scalable(n, &p, cons)
    };
    let (mut lo, mut hi) = (1e-12f64.ln(), 0.5f64.ln());
    let loosest = at(hi.exp())?;
    if loosest.bound_bytes > budget_bytes {
        // Not a frame too small for any filter: too small for the layers
        // n keys open even at the loosest bound.
        return Err(PlanError::Infeasible {
            reason: format!(
                "a budget of {budget_bytes} bytes is under the smallest scalable frame for \
                 {n} keys with an initial capacity of {}: {} bytes at the loosest bound, \
                 f < 0.5",
                policy.initial_capacity, loosest.bound_bytes
            ),
        });
    }
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        // A rate the policy's bits per key cannot reach for some layer
        // does not fit, as one over the budget does; other errors stop.
        let fits = match at(mid.exp()) {
            Ok(p) => p.bound_bytes <= budget_bytes,
            Err(PlanError::Infeasible { .. }) => false,
            Err(e) => return Err(e),
        };
        if fits {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok((at(hi.exp())?, hi.exp()))
}

/// The budget search every kind shares: for each k up to `k_max`, the
/// largest m (a multiple of `unit(k)`, within the cap) whose plan fits the
/// budget and passes `extra`, and of those the plan with the lowest f. No
/// keys plan m = 1, k = 1.
fn lowest_fpr_within(
    n: u64,
    budget_bytes: u64,
    cons: &Constraints,
    k_max: u32,
    unit: impl Fn(u32) -> u64,
    plan_at: impl Fn(u64, u32) -> Plan,
    extra: impl Fn(&Plan) -> bool,
) -> Result<Plan, PlanError> {
    cons.validate()?;
    if n == 0 {
        let p = plan_at(1, 1);
        return if p.bound_bytes <= budget_bytes {
            Ok(p)
        } else {
            Err(too_small(budget_bytes))
        };
    }
    let mut best: Option<Plan> = None;
    for k in 1..=k_max {
        let u = unit(k).max(1);
        let steps = cons.m_cap() / u;
        if steps == 0 {
            break;
        }
        let fits = |s: u64| {
            let p = plan_at(s * u, k);
            p.bound_bytes <= budget_bytes && extra(&p)
        };
        let Some(s) = largest_m(steps, fits) else {
            continue;
        };
        let p = plan_at(s * u, k);
        if best.as_ref().is_none_or(|b| p.fpr < b.fpr) {
            best = Some(p);
        }
    }
    best.ok_or_else(|| too_small(budget_bytes))
}

/// The target search every kind shares: for each k up to `k_max`, the
/// smallest m (a multiple of `unit(k)`) whose `fpr_at` meets the target,
/// and the candidates `widen` adds past it; of the plans that pass
/// `extra`, the one with the smallest expected frame.
#[allow(clippy::too_many_arguments)]
fn smallest_frame_for(
    n: u64,
    target_fpr: f64,
    cons: &Constraints,
    k_max: u32,
    unit: impl Fn(u32) -> u64,
    fpr_at: impl Fn(u64, u32) -> f64,
    plan_at: impl Fn(u64, u32) -> Plan,
    widen: impl Fn(u64) -> Vec<u64>,
    extra: impl Fn(&Plan) -> bool,
) -> Result<Plan, PlanError> {
    cons.validate()?;
    if !(target_fpr > 0.0 && target_fpr < 1.0) {
        return Err(invalid("fpr", target_fpr, "a probability in (0, 1)"));
    }
    if n == 0 {
        return Ok(plan_at(1, 1));
    }
    let mut best: Option<Plan> = None;
    for k in 1..=k_max {
        let u = unit(k).max(1);
        let steps = cons.m_cap() / u;
        if steps == 0 {
            break;
        }
        let Some(s) = smallest_m(steps, |s| fpr_at(s * u, k) <= target_fpr) else {
            continue;
        };
        for m in widen(s * u).into_iter().filter(|&x| x <= cons.m_cap()) {
            let p = plan_at(m, k);
            if extra(&p)
                && best
                    .as_ref()
                    .is_none_or(|b| p.expected_bytes < b.expected_bytes)
            {
                best = Some(p);
            }
        }
    }
    best.ok_or_else(|| PlanError::Infeasible {
        reason: format!(
            "false-positive rate {target_fpr:e} needs more than the cap of {} bits on m for n = {n}",
            cons.m_cap()
        ),
    })
}
