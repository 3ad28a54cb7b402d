//! Which kind to send: the planner's answer for every kind at once.
//!
//! Each kind's planner answers "how small, or how low a rate, for n keys";
//! which kind to ask depends on what the receiver will do with the filter
//! besides asking it about keys. A ribbon filter is the smallest frame for
//! a set sent whole (about log2(1/f) bits per key against 1.44·log2(1/f)
//! for a Bloom filter), but it is a solved linear system: a changed set is
//! solved again and sent whole, two of them cannot be ORed, no key can be
//! taken out and none added. Each of those needs is met by a Bloom kind
//! (section 8 of docs/FORMAT.md), at the Bloom kinds' price on the wire.
//! [`recommend`] plans every kind, rules out the ones that lack a need,
//! and takes the best of the rest on the planner's own numbers.

use super::kinds::{plan_scalable, plan_scalable_for_size};
use super::receiver::{plan_kind, PlanKind, Target};
use super::{Constraints, Plan, PlanError};
use crate::format::FilterKind;
use crate::kinds::ribbon::plan as ribbon;
use crate::kinds::scalable::ScalablePolicy;

/// What the receiver does with a filter besides asking it about keys. The
/// default, nothing, is a static set: sent whole, replaced whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Needs {
    /// Takes deltas: the change since the frame it holds, sent as a delta
    /// frame (types 2 and 3) rather than a new full frame.
    pub deltas: bool,
    /// ORs filters of the same parameters together (the union of their
    /// sets).
    pub union: bool,
    /// Takes keys out (a counting filter's counters).
    pub deletion: bool,
    /// Adds more keys than the filter was planned for (a scalable filter
    /// opens layers as they arrive).
    pub growth: bool,
}

impl Needs {
    /// A static set: no delta, union, deletion or growth.
    pub const STATIC: Needs = Needs {
        deltas: false,
        union: false,
        deletion: false,
        growth: false,
    };

    /// The needs by name, "deltas, union" (or "none").
    fn words(self) -> String {
        let words: Vec<&str> = [
            (self.deltas, "deltas"),
            (self.union, "union"),
            (self.deletion, "deletion"),
            (self.growth, "growth"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect();
        if words.is_empty() {
            "no needs".into()
        } else {
            words.join(" and ")
        }
    }

    /// The first need `kind` cannot meet, by name ("deltas", "union",
    /// "deletion", "growth"), or None if it meets them all.
    fn lacked_by(self, kind: FilterKind) -> Option<&'static str> {
        // (deltas, union, deletion, growth) per kind. Standard, partitioned
        // and sparse hold the same bits (sparse as their positions), so a
        // union is the OR of the bits; counting and scalable filters have
        // deltas (sections 8.1 and 8.3) but no OR of two filters.
        let (deltas, union, deletion, growth) = match kind {
            FilterKind::Standard | FilterKind::Partitioned | FilterKind::Sparse => {
                (true, true, false, false)
            }
            FilterKind::Counting => (true, false, true, false),
            FilterKind::Scalable => (true, false, false, true),
            _ => (false, false, false, false),
        };
        [
            (self.deltas && !deltas, "deltas"),
            (self.union && !union, "union"),
            (self.deletion && !deletion, "deletion"),
            (self.growth && !growth, "growth"),
        ]
        .into_iter()
        .find_map(|(missing, name)| missing.then_some(name))
    }
}

/// One kind's plan in a [`recommend`] answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The kind.
    pub kind: FilterKind,
    /// Its plan for the target, as its own planner makes it (the smallest
    /// frame for a rate, the lowest rate for a budget). For the ribbon
    /// kind m is the expected rows and k the lower column count r (what
    /// its frame header carries); for the scalable kind, the layers a
    /// filter with [`SCALABLE_INITIAL_CAPACITY`] opens for the n keys, m
    /// their total, k the largest, and f their rate at n keys, which is
    /// below the bound (the target) the filter keeps as it grows.
    pub plan: Plan,
    /// The first need of the receiver this kind cannot meet, or None.
    pub lacks: Option<&'static str>,
    /// What [`Choice::build`] needs besides the plan: the seed, the
    /// ribbon build and the scalable policy the plan assumed.
    pub(super) seed: u64,
    pub(super) ribbon_build: super::Build,
    pub(super) policy: Option<ScalablePolicy>,
    /// The frame budget planned for, if any: a ribbon build checks its
    /// frame against it, as its plan is an expectation.
    pub(super) budget: Option<u64>,
}

/// The first layer's capacity [`recommend`] plans a scalable filter with,
/// and `cbloom build --type scalable`'s default `--initial-capacity`: the
/// plan is the filter that build makes. A filter grown from small layers
/// holds n keys in several layers, each at a tighter rate, so at n keys
/// its rate is below the bound and its frame larger than one layer's.
pub const SCALABLE_INITIAL_CAPACITY: u64 = 1000;

/// The kinds in the order ties are broken: the simplest first.
const KINDS: [FilterKind; 6] = [
    FilterKind::Standard,
    FilterKind::Partitioned,
    FilterKind::Sparse,
    FilterKind::Counting,
    FilterKind::Scalable,
    FilterKind::Ribbon,
];

/// The kind to send `n` keys as, for `target`, to a receiver with `needs`:
/// every kind is planned ([`super::for_kind`]'s plans; the ribbon kind's
/// expected frame, [`crate::kinds::ribbon::plan`]; the scalable kind's
/// policy [`ScalablePolicy::new`] with a first layer of
/// [`SCALABLE_INITIAL_CAPACITY`] keys), the kinds
/// that lack a need are set aside, and of the rest the one with the
/// smallest expected frame (a target rate) or the lowest rate (a byte
/// budget) is returned, ties to the simpler kind (standard, partitioned,
/// sparse, counting, scalable, ribbon). The second value is every other
/// kind that could be planned, those that meet the needs first, each
/// group best first: what the choice is weighed against.
///
/// Memory at the receiver is not weighed here ([`super::default_plan`]
/// does that for one kind): a standard filter's smallest frame may hold
/// far more bits than its sparse twin with the same frame.
///
/// # Errors
/// Invalid arguments; [`PlanError::Infeasible`] when no kind both meets
/// the needs and can be planned for the target (deletion and growth
/// together, say: no kind has both).
///
/// # Examples
/// ```
/// use compressed_bloom::plan::{recommend, Constraints, Needs, Target};
/// use compressed_bloom::FilterKind;
/// let cons = Constraints::default();
/// let (choice, _) = recommend(100_000, Target::Fpr(0.001), Needs::STATIC, &cons)?;
/// assert_eq!(choice.kind, FilterKind::Ribbon);
/// let deltas = Needs { deltas: true, ..Needs::STATIC };
/// let (choice, others) = recommend(100_000, Target::Fpr(0.001), deltas, &cons)?;
/// assert_ne!(choice.kind, FilterKind::Ribbon);
/// assert!(others.iter().any(|c| c.kind == FilterKind::Ribbon && c.lacks == Some("deltas")));
/// # Ok::<(), compressed_bloom::plan::PlanError>(())
/// ```
pub fn recommend(
    n: u64,
    target: Target,
    needs: Needs,
    cons: &Constraints,
) -> Result<(Choice, Vec<Choice>), PlanError> {
    cons.validate()?;
    match target {
        Target::Fpr(f) if !(f > 0.0 && f < 1.0) => {
            return Err(super::invalid("fpr", f, "a rate in (0, 1)"))
        }
        Target::Bytes(0) => return Err(super::invalid("bytes", 0.0, "a budget of 1 or more")),
        _ => {}
    }
    let mut choices: Vec<Choice> = KINDS
        .iter()
        .filter_map(|&kind| {
            let mut choice = for_kind(kind, n, target, cons).ok()?;
            choice.lacks = needs.lacked_by(kind);
            Some(choice)
        })
        .collect();
    // Stable: equal scores keep the order of KINDS.
    let score = |c: &Choice| match target {
        Target::Fpr(_) => c.plan.expected_bytes,
        Target::Bytes(_) => c.plan.fpr,
    };
    choices.sort_by(|a, b| {
        a.lacks
            .is_some()
            .cmp(&b.lacks.is_some())
            .then(score(a).total_cmp(&score(b)))
    });
    match choices.first() {
        Some(first) if first.lacks.is_none() => {
            let first = choices.remove(0);
            Ok((first, choices))
        }
        _ => Err(PlanError::Infeasible {
            reason: format!("no filter kind has {} for n = {n}", needs.words()),
        }),
    }
}

/// The plan for `n` keys in a filter of `kind` that meets `target`, as a
/// [`Choice`] that builds the filter ([`Choice::build`],
/// [`Choice::empty`]). Every kind is planned by its own planner:
///
/// * standard, partitioned, counting and sparse: the smallest frame for a
///   rate, the lowest rate for a budget; a budget plan holds for any key
///   count up to n;
/// * scalable: the layers a filter whose first layer holds
///   [`SCALABLE_INITIAL_CAPACITY`] keys opens for n keys
///   ([`super::plan_scalable`]); the policy's bound is the target rate, or
///   under a budget the lowest bound whose frame fits;
/// * ribbon: the expected frame of a filter built the
///   [`Constraints::ribbon_build`] way; m is the expected rows and k the
///   lower column count r, what its header carries.
///
/// # Errors
/// Invalid arguments; a target no plan within `cons` reaches.
///
/// # Examples
/// ```
/// use compressed_bloom::plan::{for_kind, Constraints, Target};
/// use compressed_bloom::FilterKind;
/// let cons = Constraints::default();
/// let sparse = for_kind(FilterKind::Sparse, 10_000, Target::Fpr(1e-4), &cons)?;
/// let ribbon = for_kind(FilterKind::Ribbon, 10_000, Target::Fpr(1e-4), &cons)?;
/// assert!(sparse.plan.fpr <= 1e-4 && ribbon.plan.fpr <= 1e-4);
/// assert!(ribbon.plan.expected_bytes < sparse.plan.expected_bytes);
/// let filter = ribbon.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
/// assert!(filter.contains(&7u32.to_le_bytes()));
/// # Ok::<(), compressed_bloom::plan::PlanError>(())
/// ```
pub fn for_kind(
    kind: FilterKind,
    n: u64,
    target: Target,
    cons: &Constraints,
) -> Result<Choice, PlanError> {
    let bloom = |k: PlanKind| plan_kind(k, n, target, cons);
    let mut policy = None;
    // The kinds the planner has a model for: the bit arrays through their
    // shared model (PlanKind's table), then scalable and ribbon. A kind
    // without one is refused (a table, not a match, so that a new kind
    // needs no arm here until it has a model).
    let plan = if let Ok(k) = PlanKind::of(kind) {
        bloom(k)
    } else if kind == FilterKind::Scalable {
        let capacity = SCALABLE_INITIAL_CAPACITY;
        let (plan, chosen) = match target {
            Target::Fpr(f) => {
                let p = ScalablePolicy::new(capacity, f);
                plan_scalable(n, &p, cons).map(|plan| (plan, p))
            }
            Target::Bytes(z) => {
                let loosest = ScalablePolicy::new(capacity, 0.5);
                plan_scalable_for_size(n, z, &loosest, cons)
                    .map(|(plan, fpr)| (plan, ScalablePolicy { fpr, ..loosest }))
            }
        }?;
        policy = Some(chosen);
        Ok(plan)
    } else if kind == FilterKind::Ribbon {
        ribbon_plan(n, target, cons)
    } else {
        Err(PlanError::Build {
            kind,
            reason: "the planner has no model for this kind".into(),
        })
    }?;
    Ok(Choice {
        kind,
        plan,
        lacks: None,
        seed: cons.seed,
        ribbon_build: cons.ribbon_build,
        policy,
        budget: match target {
            Target::Bytes(z) => Some(z),
            Target::Fpr(_) => None,
        },
    })
}

/// The ribbon kind's expected frame as a [`Plan`]: m the rows, k the lower
/// columns r. Its frame does not vary with the keys beyond the few rows
/// of retries, so the bound is the expected size (`cbloom build --type
/// ribbon --bytes` builds, checks the frame, and lowers the rate until it
/// fits).
fn ribbon_plan(n: u64, target: Target, cons: &Constraints) -> Result<Plan, PlanError> {
    let est = match target {
        Target::Fpr(f) => ribbon::for_fpr_with(n, f, cons.ribbon_build),
        Target::Bytes(z) => ribbon::for_bytes_with(n, z, cons.ribbon_build),
    }
    .map_err(|e| PlanError::Infeasible {
        reason: e.to_string(),
    })?;
    let (r, _) = crate::kinds::ribbon::columns_for(est.fpr).map_err(|e| PlanError::Infeasible {
        reason: e.to_string(),
    })?;
    let rows = ribbon::expected_rows_with(n, cons.ribbon_build);
    Ok(Plan {
        n,
        m: rows,
        k: r,
        fpr: est.fpr,
        bits_per_key: rows as f64 / n.max(1) as f64,
        compressed_bits_per_key: est.bits_per_key,
        expected_bytes: est.frame_bytes as f64,
        bound_bytes: est.frame_bytes,
        confidence: cons.confidence,
        coded: false,
        delta_fraction: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(name: &str) -> Needs {
        let mut n = Needs::STATIC;
        match name {
            "deltas" => n.deltas = true,
            "union" => n.union = true,
            "deletion" => n.deletion = true,
            "growth" => n.growth = true,
            _ => {}
        }
        n
    }

    /// Static sets go as ribbon filters; each need picks a kind that has
    /// it; and the choice is never worse, on the planner's numbers, than
    /// any other kind that meets the needs.
    #[test]
    fn the_choice_meets_the_needs_and_beats_the_rest() {
        let cons = Constraints::default();
        for n in [10_000u64, 1_000_000] {
            for target in [
                Target::Fpr(0.01),
                Target::Fpr(1e-6),
                Target::Bytes(n),
                Target::Bytes(3 * n),
            ] {
                for name in ["static", "deltas", "union", "deletion", "growth"] {
                    let (c, rest) = recommend(n, target, needs(name), &cons).unwrap();
                    let want: &[FilterKind] = match name {
                        "static" => &[FilterKind::Ribbon],
                        "deltas" | "union" => &[
                            FilterKind::Standard,
                            FilterKind::Partitioned,
                            FilterKind::Sparse,
                        ],
                        "deletion" => &[FilterKind::Counting],
                        _ => &[FilterKind::Scalable],
                    };
                    assert!(
                        want.contains(&c.kind),
                        "{n} {target:?} {name}: {:?}",
                        c.kind
                    );
                    assert_eq!(c.lacks, None);
                    match target {
                        Target::Fpr(f) => assert!(c.plan.fpr <= f * 1.0001),
                        Target::Bytes(z) => assert!(c.plan.bound_bytes <= z),
                    }
                    for o in rest.iter().filter(|o| o.lacks.is_none()) {
                        match target {
                            Target::Fpr(_) => {
                                assert!(c.plan.expected_bytes <= o.plan.expected_bytes)
                            }
                            Target::Bytes(_) => assert!(c.plan.fpr <= o.plan.fpr),
                        }
                    }
                    // Every kind is there, the ribbon kind lacking any need.
                    assert_eq!(rest.len(), 5, "{n} {target:?} {name}");
                    let ribbon = rest
                        .iter()
                        .chain([&c])
                        .find(|o| o.kind == FilterKind::Ribbon);
                    assert_eq!(ribbon.unwrap().lacks.is_some(), name != "static");
                }
            }
        }
    }

    #[test]
    fn needs_no_kind_has_are_refused() {
        let both = Needs {
            deletion: true,
            growth: true,
            ..Needs::STATIC
        };
        let r = recommend(1000, Target::Fpr(0.01), both, &Constraints::default());
        assert!(matches!(r, Err(PlanError::Infeasible { .. })));
        for bad in [Target::Fpr(0.0), Target::Fpr(1.0), Target::Bytes(0)] {
            assert!(recommend(1000, bad, Needs::STATIC, &Constraints::default()).is_err());
        }
    }
}
