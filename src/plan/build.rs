//! From a plan to a filter: [`Choice::build`] makes the kind the planner
//! chose, with the plan's m, k and seed (and, for the ribbon and scalable
//! kinds, the build and policy the plan assumed), so that a caller never
//! matches on the kind to call its constructor.

use super::{Choice, PlanError};
use crate::filter::{BloomFilter, FilterParams};
use crate::format::FilterKind;
use crate::kind::AnyFilter;
use crate::kinds::counting::CountingBloomFilter;
use crate::kinds::partitioned::PartitionedBloomFilter;
use crate::kinds::ribbon::Build;
use crate::kinds::ribbon::RibbonFilter;
use crate::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use crate::kinds::sparse::SparseFilter;
use crate::KeyHash;

/// log2(1/f) of the lowest rate a ribbon filter has, 2^-64 (63 columns,
/// every block with a 64th).
const LOWEST_RATE_BITS: f64 = 64.0;

internal! {
/// The ribbon filter of the lowest rate whose frame fits `budget` bytes,
/// with its frame, from key hashes made with `seed`. A ribbon frame's size
/// is known only once built (the retries add a few rows per shard), so a
/// budget is met by building: a frame costs about rows per key · n ·
/// log2(1/f) bits, so the first try is a little below that, and each
/// next one lowers the bits by 0.25% (a few tries at most). A budget past
/// what the lowest rate, 2^-64, needs builds at that rate.
///
/// # Errors
/// [`PlanError::Infeasible`] when not even f = 1/2 fits, naming the size
/// it would take.
pub fn ribbon_within(
    hashes: &[KeyHash],
    seed: u64,
    budget: u64,
    how: Build,
) -> Result<(RibbonFilter, Vec<u8>), PlanError> {
    let fail = |e: crate::kinds::ribbon::RibbonError| PlanError::Build {
        kind: FilterKind::Ribbon,
        reason: e.to_string(),
    };
    let n = hashes.len().max(1) as f64;
    let mut bits = (budget as f64 * 8.0 - 200.0) / n / (how.rows_per_key() + 0.002);
    let mut tries = 0;
    while bits >= 1.0 && tries < 40 {
        let f =
            RibbonFilter::from_hashes_with(hashes, (-bits.min(LOWEST_RATE_BITS)).exp2(), seed, how)
                .map_err(fail)?;
        let frame = crate::kinds::ribbon::encode_ribbon(&f);
        if frame.len() as u64 <= budget {
            return Ok((f, frame));
        }
        bits = bits.min(LOWEST_RATE_BITS) * 0.9975;
        tries += 1;
    }
    let least = crate::kinds::ribbon::plan::for_fpr_with(hashes.len() as u64, 0.5, how)
        .map(|e| format!(" (at f = 1/2 it takes about {} bytes)", e.frame_bytes))
        .unwrap_or_default();
    Err(PlanError::Infeasible {
        reason: format!(
            "no ribbon filter of {} keys fits in {budget} bytes{least}",
            hashes.len()
        ),
    })
}
}

impl Choice {
    /// The planned filter holding `keys`, of the kind this choice names.
    ///
    /// # Errors
    /// [`PlanError::Build`] when the kind's constructor refuses the plan
    /// (no memory for m bits, say) or a scalable filter cannot open a layer
    /// it needs.
    ///
    /// # Examples
    /// ```
    /// use compressed_bloom::plan::{recommend, Constraints, Needs, Target};
    /// use compressed_bloom::FilterKind;
    /// let deletion = Needs { deletion: true, ..Needs::STATIC };
    /// let (choice, _) = recommend(1_000, Target::Fpr(0.01), deletion, &Constraints::default())?;
    /// assert_eq!(choice.kind, FilterKind::Counting);
    /// let filter = choice.build((0..1_000u32).map(|i| i.to_le_bytes()))?;
    /// assert_eq!(filter.kind(), FilterKind::Counting);
    /// assert!(filter.contains(&7u32.to_le_bytes()));
    /// # Ok::<(), compressed_bloom::plan::PlanError>(())
    /// ```
    pub fn build<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<AnyFilter, PlanError> {
        let fail = |reason: String| PlanError::Build {
            kind: self.kind,
            reason,
        };
        match self.kind {
            FilterKind::Sparse => SparseFilter::from_keys(self.params(), keys)
                .map(AnyFilter::Sparse)
                .map_err(|e| fail(e.to_string())),
            FilterKind::Ribbon => {
                let hashes: Vec<KeyHash> = keys
                    .into_iter()
                    .map(|k| KeyHash::new(k.as_ref(), self.seed))
                    .collect();
                match self.budget {
                    Some(budget) => ribbon_within(&hashes, self.seed, budget, self.ribbon_build)
                        .map(|(f, _)| AnyFilter::Ribbon(f)),
                    None => {
                        let how = self.ribbon_build;
                        RibbonFilter::from_hashes_with(&hashes, self.plan.fpr, self.seed, how)
                            .map(AnyFilter::Ribbon)
                            .map_err(|e| fail(e.to_string()))
                    }
                }
            }
            FilterKind::Scalable => {
                let mut filter = self.empty()?;
                if let AnyFilter::Scalable(f) = &mut filter {
                    for key in keys {
                        f.try_insert(key.as_ref())
                            .map_err(|e| fail(e.to_string()))?;
                    }
                }
                Ok(filter)
            }
            _ => {
                let mut filter = self.empty()?;
                for key in keys {
                    let key = key.as_ref();
                    match &mut filter {
                        AnyFilter::Standard(f) => f.insert(key),
                        AnyFilter::Partitioned(f) => f.insert(key),
                        AnyFilter::Counting(f) => f.insert(key),
                        _ => {}
                    }
                }
                Ok(filter)
            }
        }
    }

    /// The planned filter with no keys yet, for the kinds that take keys
    /// one at a time: standard, partitioned, counting and scalable.
    ///
    /// # Errors
    /// [`PlanError::Build`] for the sparse and ribbon kinds, which are
    /// built from their whole set ([`Choice::build`]), or when the kind's
    /// constructor refuses the plan.
    pub fn empty(&self) -> Result<AnyFilter, PlanError> {
        let fail = |reason: String| PlanError::Build {
            kind: self.kind,
            reason,
        };
        let params = self.params();
        match self.kind {
            FilterKind::Standard => BloomFilter::new(params).map(AnyFilter::Standard),
            FilterKind::Partitioned => {
                PartitionedBloomFilter::new(params).map(AnyFilter::Partitioned)
            }
            FilterKind::Counting => CountingBloomFilter::new(params).map(AnyFilter::Counting),
            FilterKind::Scalable => {
                let policy = self
                    .policy
                    .unwrap_or_else(|| ScalablePolicy::new(self.plan.n.max(1), self.plan.fpr));
                return ScalableBloomFilter::new(policy, self.seed)
                    .map(AnyFilter::Scalable)
                    .map_err(|e| fail(e.to_string()));
            }
            _ => {
                return Err(fail(
                    "this kind is built from its whole set of keys: use Choice::build".into(),
                ))
            }
        }
        .map_err(|e| fail(e.to_string()))
    }

    /// As [`Choice::build`], as the kind's own type `F`
    /// ([`BloomFilter`], [`RibbonFilter`], …).
    ///
    /// # Errors
    /// As [`Choice::build`], and [`PlanError::Build`] when the choice is of
    /// another kind than `F`.
    pub fn build_as<F, K>(&self, keys: impl IntoIterator<Item = K>) -> Result<F, PlanError>
    where
        F: TryFrom<AnyFilter, Error = AnyFilter>,
        K: AsRef<[u8]>,
    {
        F::try_from(self.build(keys)?).map_err(|other| PlanError::Build {
            kind: other.kind(),
            reason: format!(
                "the plan is for the {} kind, not the type asked for",
                other.kind().name()
            ),
        })
    }

    /// The plan's m, k and seed, with the default hash scheme.
    fn params(&self) -> FilterParams {
        FilterParams::new(self.plan.m, self.plan.k, self.seed)
    }
}
