//! Plans a receiver can hold.
//!
//! The wire optimum can be very sparse: at f = 0.001 the smallest standard
//! frame has k = 1 and m/n ≈ 1000, 1.25 GB of bits for 10^7 keys, against
//! a 14.3 MB frame. Every bit of that array has to be allocated by whoever
//! builds or queries the filter. The plans here give up at most a small
//! fraction of the frame (the *slack*, 3% by default) for the least memory
//! the receiver holds:
//!
//! * for a target rate, the frame may be up to `1 + slack` times the
//!   smallest one;
//! * for a byte budget, the rate may be what the smallest-frame plan
//!   reaches with `budget / (1 + slack)` bytes.
//!
//! Among the plans that meet that, the one with the smallest receiver
//! memory ([`receiver_bytes`]) is chosen: m is capped by bisection (a
//! larger cap never gives a larger frame or a higher rate, so the search
//! is monotone). For a bit array that memory is m/8 bytes (m/2 for 4-bit
//! counters); the sparse kind holds its positions (about
//! 2 + log2(m/w) bits each, w positions), so where the optimum is very
//! sparse it carries the same frame in memory close to the frame's size.

use super::{kinds, plan_for_fpr, plan_for_size, Constraints, Plan, PlanError};
use crate::format::FilterKind;

/// The frame (or, under a budget, the rate) a default plan may give up
/// against the smallest-frame plan: 3%.
pub const DEFAULT_SLACK: f64 = 0.03;

internal! {
/// The planner's models: the kinds whose size follows from m, k and the
/// fill (the public functions take a [`FilterKind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanKind {
    /// One m-bit array.
    Standard,
    /// k sub-arrays of m/k bits.
    Partitioned,
    /// 4-bit counters.
    Counting,
    /// Sorted positions of the one bits.
    Sparse,
}
}

impl PlanKind {
    /// Each model and the wire kind it plans.
    const ALL: [(PlanKind, FilterKind); 4] = [
        (PlanKind::Standard, FilterKind::Standard),
        (PlanKind::Partitioned, FilterKind::Partitioned),
        (PlanKind::Counting, FilterKind::Counting),
        (PlanKind::Sparse, FilterKind::Sparse),
    ];

    /// The model of `kind`, or [`PlanError::Build`] for a kind these
    /// planners have none for (scalable and ribbon have their own,
    /// through [`for_kind`](super::for_kind)).
    pub fn of(kind: FilterKind) -> Result<PlanKind, PlanError> {
        PlanKind::ALL
            .iter()
            .find(|(_, k)| *k == kind)
            .map(|(p, _)| *p)
            .ok_or_else(|| PlanError::Build {
                kind,
                reason: "the receiver planner has bit-array models only (standard, partitioned, counting, sparse)".into(),
            })
    }

    /// The wire kind this model plans.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI
    pub fn filter_kind(self) -> FilterKind {
        PlanKind::ALL
            .iter()
            .find(|(p, _)| *p == self)
            .map_or(FilterKind::Standard, |(_, k)| *k)
    }
}

/// The models of `kinds`.
fn models(kinds: &[FilterKind]) -> Result<Vec<PlanKind>, PlanError> {
    kinds.iter().map(|&k| PlanKind::of(k)).collect()
}

/// What to plan for: a frame budget in bytes or a false-positive target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The frame's byte budget (the bound must fit it).
    Bytes(u64),
    /// The false-positive rate to reach.
    Fpr(f64),
}

/// Bytes a receiver holds for a filter of this plan: ⌈m/8⌉ for the bit
/// arrays, ⌈m/2⌉ for counters, and for the sparse kind its expected
/// positions at 2 + ⌈log2(m/w)⌉ bits each (an Elias–Fano list).
pub fn receiver_bytes(kind: PlanKind, p: &Plan) -> f64 {
    match kind {
        PlanKind::Standard | PlanKind::Partitioned => p.m.div_ceil(8) as f64,
        PlanKind::Counting => p.m.div_ceil(2) as f64,
        PlanKind::Sparse => {
            let w = p.m as f64 * (1.0 - super::zero_fraction(p.m, p.n, p.k));
            if w < 1.0 {
                return 0.0;
            }
            w * (2.0 + (p.m as f64 / w).log2().ceil().max(0.0)) / 8.0
        }
    }
}

/// The smallest-frame (or lowest-rate) plan of one kind, with the caps of
/// `cons` only. Under a byte budget the plan holds for any key count up to
/// n, not only n: a dense array (more ones than zeros at n keys) codes to
/// more bytes with fewer keys, up to its raw size at half fill, so a dense
/// plan is made again with m small enough for the raw array to fit.
///
/// # Errors
/// As the kind's own planner.
pub fn plan_kind(
    kind: PlanKind,
    n: u64,
    target: Target,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    let p = plan_kind_at_n(kind, n, target, cons)?;
    let Target::Bytes(budget) = target else {
        return Ok(p);
    };
    let dense = super::zero_fraction(p.m, p.n, p.k) < 0.5;
    if !dense || kind == PlanKind::Sparse {
        return Ok(p);
    }
    // Raw bits per frame byte: 8 for bit arrays, 2 for 4-bit counters;
    // the header (with the kind byte) and checksum come off the budget.
    let per_byte = if kind == PlanKind::Counting { 2 } else { 8 };
    let overhead = crate::format::header::frame_overhead(
        cons.seed,
        budget.saturating_mul(per_byte),
        crate::filter::MAX_K,
        n,
        budget,
    ) as u64
        + 1;
    let cap = budget
        .saturating_sub(overhead)
        .saturating_mul(per_byte)
        .max(1);
    let capped = Constraints {
        max_m: cons.max_m.min(cap),
        ..*cons
    };
    plan_kind_at_n(kind, n, target, &capped)
}

fn plan_kind_at_n(
    kind: PlanKind,
    n: u64,
    target: Target,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    match (kind, target) {
        (PlanKind::Standard, Target::Bytes(z)) => plan_for_size(n, z, cons),
        (PlanKind::Standard, Target::Fpr(f)) => plan_for_fpr(n, f, cons),
        (PlanKind::Partitioned, Target::Bytes(z)) => kinds::plan_partitioned_for_size(n, z, cons),
        (PlanKind::Partitioned, Target::Fpr(f)) => kinds::plan_partitioned_for_fpr(n, f, cons),
        (PlanKind::Counting, Target::Bytes(z)) => kinds::plan_counting_for_size(n, z, cons),
        (PlanKind::Counting, Target::Fpr(f)) => kinds::plan_counting_for_fpr(n, f, cons),
        (PlanKind::Sparse, Target::Bytes(z)) => kinds::plan_sparse_for_size(n, z, cons),
        (PlanKind::Sparse, Target::Fpr(f)) => kinds::plan_sparse_for_fpr(n, f, cons),
    }
}

/// Bytes of the raw (type 0) frame of a `kind` filter of m bits, k hash
/// positions and n keys: the packed array (⌈m/8⌉ bytes, ⌈m/2⌉ for 4-bit
/// counters), the header (with the kind byte of the version-3 kinds) and
/// the checksum. It does not depend on the keys.
///
/// # Errors
/// [`PlanError::InvalidArgument`] for the sparse kind, which has no raw
/// frame.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn raw_frame_bytes(
    kind: PlanKind,
    n: u64,
    m: u64,
    k: u32,
    seed: u64,
) -> Result<u64, PlanError> {
    let (payload, kind_byte) = match kind {
        PlanKind::Standard => (m.div_ceil(8), 0),
        PlanKind::Partitioned => (m.div_ceil(8), 1),
        PlanKind::Counting => (m.div_ceil(2), 1),
        PlanKind::Sparse => {
            return Err(super::invalid(
                "kind",
                8.0,
                "a kind with a raw frame (standard, partitioned, counting)",
            ))
        }
    };
    let overhead = crate::format::header::frame_overhead(seed, m, k, n, payload) as u64;
    Ok(payload.saturating_add(overhead).saturating_add(kind_byte))
}

/// The plan of `kind` sent raw (type 0, `cbloom build --raw`). A raw frame
/// is the packed array whatever the keys, so the trade-off the coded plans
/// weigh is gone: under a byte budget m is the largest array whose raw
/// frame fits (its bound is its size, at any confidence) and k the one
/// with the lowest rate for it; for a target rate m is the smallest array
/// some k brings to the target. The caps of `cons` apply. The plan's sizes
/// are the raw frame's and `coded` is false.
///
/// # Errors
/// The sparse kind (no raw frame); invalid arguments; a budget under the
/// smallest raw frame; a target no m within `cons.max_m` reaches.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn plan_kind_raw(
    kind: PlanKind,
    n: u64,
    target: Target,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    cons.validate()?;
    raw_frame_bytes(kind, n, 1, 1, cons.seed)?;
    // The plan with the lowest rate of m ≤ cap: the kind's own budget
    // search with no budget at all.
    let lowest_at = |cap: u64| {
        let capped = Constraints {
            max_m: cap,
            ..*cons
        };
        plan_kind_at_n(kind, n, Target::Bytes(u64::MAX), &capped)
    };
    let cap = match target {
        Target::Bytes(budget) => {
            // k only changes the header by its varint (1 byte up to 127).
            let fits = |m: u64| {
                raw_frame_bytes(kind, n, m, crate::filter::MAX_K, cons.seed)
                    .is_ok_and(|b| b <= budget)
            };
            super::largest_m(cons.m_cap(), fits).ok_or_else(|| PlanError::Infeasible {
                reason: format!(
                    "a budget of {budget} bytes is under the smallest raw frame ({} bytes)",
                    raw_frame_bytes(kind, n, 1, 1, cons.seed).unwrap_or(0)
                ),
            })?
        }
        Target::Fpr(f) => {
            if !(f > 0.0 && f < 1.0) {
                return Err(super::invalid("fpr", f, "a probability in (0, 1)"));
            }
            let reaches = |cap: u64| lowest_at(cap).is_ok_and(|p| p.fpr <= f);
            super::smallest_m(cons.m_cap(), reaches).ok_or_else(|| PlanError::Infeasible {
                reason: format!(
                    "false-positive rate {f:e} needs more than the cap of {} bits on m for n = {n}",
                    cons.m_cap()
                ),
            })?
        }
    };
    let mut p = lowest_at(cap)?;
    let bytes = raw_frame_bytes(kind, n, p.m, p.k, cons.seed)?;
    p.expected_bytes = bytes as f64;
    p.bound_bytes = bytes;
    p.compressed_bits_per_key = bytes as f64 * 8.0 / n.max(1) as f64;
    p.coded = false;
    Ok(p)
}

/// How good a plan must be to stand in for the smallest-frame one.
#[derive(Clone, Copy, Debug)]
struct Bar {
    target: Target,
    /// Fpr mode: the largest expected frame; bytes mode: the highest rate.
    limit: f64,
}

impl Bar {
    fn met(&self, p: &Plan) -> bool {
        match self.target {
            Target::Fpr(_) => p.expected_bytes <= self.limit,
            Target::Bytes(_) => p.fpr <= self.limit,
        }
    }
}

/// The bar of `slack` against the best plan over `kinds`.
fn bar(
    kinds: &[PlanKind],
    n: u64,
    target: Target,
    slack: f64,
    cons: &Constraints,
) -> Result<Bar, PlanError> {
    let mut limit = f64::INFINITY;
    let mut last_err = None;
    for &kind in kinds {
        let r = match target {
            Target::Fpr(_) => plan_kind(kind, n, target, cons).map(|p| p.expected_bytes),
            Target::Bytes(z) => {
                // The rate the smallest-frame plan reaches with slack less
                // budget (or the whole budget if that holds no frame).
                let less = (z as f64 / (1.0 + slack)).floor() as u64;
                plan_kind(kind, n, Target::Bytes(less), cons)
                    .or_else(|_| plan_kind(kind, n, target, cons))
                    .map(|p| p.fpr)
            }
        };
        match r {
            Ok(v) => limit = limit.min(v),
            Err(e) => last_err = Some(e),
        }
    }
    if limit.is_finite() {
        let limit = match target {
            Target::Fpr(_) => limit * (1.0 + slack),
            Target::Bytes(_) => limit,
        };
        Ok(Bar { target, limit })
    } else {
        Err(last_err.unwrap_or(PlanError::Infeasible {
            reason: "no filter kind to plan".into(),
        }))
    }
}

/// The plan of `kind` with the least memory that meets `bar`: the
/// smallest m cap (bisection) under which the kind's planner still meets
/// it. None if even the uncapped plan misses the bar.
fn least_memory(
    kind: PlanKind,
    n: u64,
    bar: &Bar,
    cons: &Constraints,
) -> Result<Option<Plan>, PlanError> {
    let full = plan_kind(kind, n, bar.target, cons)?;
    if !bar.met(&full) {
        return Ok(None);
    }
    if kind == PlanKind::Sparse {
        // Its memory follows the positions, not m.
        return Ok(Some(full));
    }
    let capped = |cap: u64| {
        let c = Constraints {
            max_m: cap,
            ..*cons
        };
        plan_kind(kind, n, bar.target, &c)
            .ok()
            .filter(|p| bar.met(p))
    };
    // Invariant: capped(hi) meets the bar; capped(lo) does not (lo = 0
    // stands for "no filter").
    let (mut lo, mut hi, mut best) = (0u64, full.m, full);
    while hi - lo > 1 && hi - lo > hi / 1000 {
        let mid = lo + (hi - lo) / 2;
        match capped(mid) {
            Some(p) => {
                hi = mid;
                best = p;
            }
            None => lo = mid,
        }
    }
    Ok(Some(best))
}

/// The plan with the least receiver memory, over `kinds`, whose frame
/// (target rate) or rate (byte budget) is within `slack` of the best plan
/// over those kinds, and its kind. Ties keep the earlier kind in `kinds`.
///
/// # Errors
/// Invalid arguments, or no kind can be planned.
///
/// # Examples
/// ```
/// use compressed_bloom::plan::{plan_for_fpr, plan_for_receiver, Constraints, Target};
/// use compressed_bloom::FilterKind;
/// let cons = Constraints::default();
/// let wire = plan_for_fpr(1_000_000, 0.001, &cons)?;
/// let (kind, p) = plan_for_receiver(
///     &[FilterKind::Standard, FilterKind::Sparse], 1_000_000, Target::Fpr(0.001), 0.03, &cons)?;
/// assert!(p.expected_bytes <= wire.expected_bytes * 1.03);
/// // The smallest frame is sparse here: its positions take far less
/// // memory than its m bits.
/// assert_eq!(kind, FilterKind::Sparse);
/// # Ok::<(), compressed_bloom::plan::PlanError>(())
/// ```
pub fn plan_for_receiver(
    kinds: &[FilterKind],
    n: u64,
    target: Target,
    slack: f64,
    cons: &Constraints,
) -> Result<(FilterKind, Plan), PlanError> {
    let (kind, plan) = receiver_plan(&models(kinds)?, n, target, slack, cons)?;
    Ok((kind.filter_kind(), plan))
}

/// [`plan_for_receiver`] over the planner's models.
fn receiver_plan(
    kinds: &[PlanKind],
    n: u64,
    target: Target,
    slack: f64,
    cons: &Constraints,
) -> Result<(PlanKind, Plan), PlanError> {
    if !(slack >= 0.0 && slack.is_finite()) {
        return Err(super::invalid("slack", slack, "a fraction of 0 or more"));
    }
    let bar = bar(kinds, n, target, slack, cons)?;
    let mut best: Option<(f64, PlanKind, Plan)> = None;
    for &kind in kinds {
        let Ok(Some(p)) = least_memory(kind, n, &bar, cons) else {
            continue;
        };
        let mem = receiver_bytes(kind, &p);
        if best.as_ref().is_none_or(|(bm, _, _)| mem < *bm) {
            best = Some((mem, kind, p));
        }
    }
    best.map(|(_, k, p)| (k, p))
        .ok_or_else(|| PlanError::Infeasible {
            reason: "no filter kind meets the target".into(),
        })
}

/// Points of the trade-off between frame and receiver memory for one
/// kind: the plan under each cap on m/n of `caps` (bits per key), the
/// smallest-frame plan last. Caps that give no plan are left out.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn tradeoff(
    kind: PlanKind,
    n: u64,
    target: Target,
    caps: &[f64],
    cons: &Constraints,
) -> Vec<Plan> {
    let mut out: Vec<Plan> = caps
        .iter()
        .filter_map(|&c| {
            let capped = cons.with_max_bits_per_key(c, n);
            plan_kind(kind, n, target, &capped).ok()
        })
        .collect();
    if let Ok(p) = plan_kind(kind, n, target, cons) {
        out.push(p);
    }
    out.dedup_by(|a, b| a.m == b.m && a.k == b.k);
    out
}

/// Receiver memory a default plan may take, as a multiple of its frame:
/// past it, the plan gives up more than the slack on the wire.
/// At 32, a counting filter of 10^5 keys at f = 0.001 takes k = 2 and 3.1
/// MB for a frame 12% over the smallest (k = 1 would take 50 MB), and a
/// standard one of 10^7 keys k = 2 and 78 MB for a frame 10% over.
pub const DEFAULT_MEMORY_RATIO: f64 = 32.0;

/// Receiver memory a default plan within the slack may take whatever its
/// frame: 1 MiB.
pub const DEFAULT_MEMORY_FLOOR: f64 = 1048576.0;

/// A default plan and how it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultPlan {
    /// The kind chosen.
    pub kind: FilterKind,
    /// The plan.
    pub plan: Plan,
    /// The smallest-frame plan of the first kind asked for, uncapped.
    pub wire: Plan,
    /// Whether the memory cap cost more than the slack.
    pub over_slack: bool,
}

/// The plan `cbloom` makes when no memory cap is given. `kinds[0]` is the
/// kind asked for; further kinds (the sparse one for a standard filter)
/// are taken only when the first cannot meet the slack within
/// 32 times its frame (`DEFAULT_MEMORY_RATIO`). If no kind can, the first
/// kind is capped at that memory and gives up more than the slack.
///
/// # Errors
/// Invalid arguments, or no kind can be planned.
pub fn default_plan(
    kinds: &[FilterKind],
    n: u64,
    target: Target,
    cons: &Constraints,
) -> Result<DefaultPlan, PlanError> {
    let kinds = &models(kinds)?[..];
    let first = *kinds.first().ok_or_else(|| PlanError::Infeasible {
        reason: "no filter kind to plan".into(),
    })?;
    let wire = plan_kind(first, n, target, cons)?;
    let fits = |kind: PlanKind, p: &Plan| {
        receiver_bytes(kind, p)
            <= (DEFAULT_MEMORY_RATIO * p.expected_bytes).max(DEFAULT_MEMORY_FLOOR)
    };
    let (kind, plan) = receiver_plan(&kinds[..1], n, target, DEFAULT_SLACK, cons)?;
    if fits(kind, &plan) {
        return Ok(DefaultPlan {
            kind: kind.filter_kind(),
            plan,
            wire,
            over_slack: false,
        });
    }
    if kinds.len() > 1 {
        let (kind, plan) = receiver_plan(kinds, n, target, DEFAULT_SLACK, cons)?;
        if fits(kind, &plan) {
            return Ok(DefaultPlan {
                kind: kind.filter_kind(),
                plan,
                wire,
                over_slack: false,
            });
        }
    }
    // Cap the first kind's memory at the ratio times the smallest frame.
    let bits_per_byte = match first {
        PlanKind::Counting => 2.0,
        _ => 8.0,
    };
    let cap = (DEFAULT_MEMORY_RATIO * wire.expected_bytes * bits_per_byte).floor() as u64;
    let capped = Constraints {
        max_m: cons.max_m.min(cap.max(1)),
        ..*cons
    };
    match plan_kind(first, n, target, &capped) {
        Ok(p) => Ok(DefaultPlan {
            kind: first.filter_kind(),
            plan: p,
            wire,
            over_slack: true,
        }),
        Err(_) => Ok(DefaultPlan {
            kind: kind.filter_kind(),
            plan,
            wire,
            over_slack: false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw plan's frame is the array: under a budget, the largest one
    /// that fits (one more unit of m would not); for a rate, the smallest
    /// m some k brings to it. The sparse kind has no raw frame.
    #[test]
    fn raw_plans_are_the_arrays_that_fit() {
        let cons = Constraints::default();
        let n = 10_000;
        for kind in [
            PlanKind::Standard,
            PlanKind::Partitioned,
            PlanKind::Counting,
        ] {
            let p = plan_kind_raw(kind, n, Target::Bytes(12_000), &cons).unwrap();
            assert!(!p.coded);
            assert_eq!(
                p.bound_bytes,
                raw_frame_bytes(kind, n, p.m, p.k, 0).unwrap()
            );
            assert!(p.bound_bytes <= 12_000, "{kind:?} {p:?}");
            let unit = if kind == PlanKind::Partitioned {
                u64::from(p.k)
            } else {
                1
            };
            // A byte more of array (eight units of m) does not fit: the
            // search took the largest m that fits.
            let more = raw_frame_bytes(kind, n, p.m + unit * 8, p.k, 0).unwrap();
            assert!(more > 12_000, "{kind:?} {p:?}");
            let q = plan_kind_raw(kind, n, Target::Fpr(0.001), &cons).unwrap();
            assert!(q.fpr <= 0.001, "{kind:?} {q:?}");
            let fewer = Constraints {
                max_m: q.m - unit,
                ..cons
            };
            let less = plan_kind_raw(kind, n, Target::Bytes(u64::MAX), &fewer).unwrap();
            assert!(less.fpr > 0.001, "{kind:?} {less:?}");
        }
        assert!(matches!(
            plan_kind_raw(PlanKind::Sparse, n, Target::Fpr(0.01), &cons),
            Err(PlanError::InvalidArgument { .. })
        ));
    }

    /// Under a budget, the frame bound holds at every key count up to n.
    #[test]
    fn budget_plans_hold_below_n() {
        let cons = Constraints::default();
        for (n, budget) in [
            (1_000_000u64, 300_000u64),
            (10_000, 2_000),
            (300_000, 100_000),
        ] {
            for kind in [PlanKind::Standard, PlanKind::Partitioned] {
                let p = plan_kind(kind, n, Target::Bytes(budget), &cons).unwrap();
                for fewer in [n / 20, n / 5, n / 3, n / 2, 3 * n / 4, n] {
                    let b = super::super::frame_bound_bytes(fewer, p.m, p.k, None, &cons);
                    assert!(
                        b <= budget as f64 + 1.0,
                        "{kind:?} {n} {budget}: {fewer} keys need {b}"
                    );
                }
            }
        }
    }
}
