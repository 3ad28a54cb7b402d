//! Layers of a scalable filter sized by the planner: each layer is planned
//! for its compressed size, under the policy's memory cap of
//! `max_bits_per_key` bits per key. The kind (`kinds::scalable`) decides
//! when a layer opens; this module chooses its m and k.

use super::{plan_for_fpr, Constraints};
use crate::kinds::scalable::{LayerPlanner, ScalableBloomFilter, ScalableError, ScalablePolicy};

/// The planner used by [`ScalableBloomFilter::new`] and
/// [`ScalableBloomFilter::insert`]: layer i is [`plan_for_fpr`] for the
/// policy's capacity and rate of layer i, with at most
/// `policy.max_bits_per_key` bits per key.
#[derive(Clone, Copy, Debug, Default)]
pub struct CompressedLayers;

impl LayerPlanner for CompressedLayers {
    fn layer(&self, policy: &ScalablePolicy, i: u32) -> Result<(u64, u32), ScalableError> {
        let cap = policy.capacity(i);
        let cons = Constraints::default().with_max_bits_per_key(policy.max_bits_per_key, cap);
        let p =
            plan_for_fpr(cap, policy.layer_fpr(i), &cons).map_err(|e| ScalableError::Layer {
                layer: u64::from(i),
                reason: e.to_string(),
            })?;
        Ok((p.m, p.k))
    }
}

impl ScalableBloomFilter {
    /// An empty filter with its first layer open, its layers sized by
    /// [`CompressedLayers`].
    ///
    /// # Errors
    /// A policy out of range, or a first layer that cannot be planned.
    ///
    /// # Examples
    /// ```
    /// use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
    /// let mut f = ScalableBloomFilter::new(ScalablePolicy::new(1_000, 0.01), 7)?;
    /// for i in 0..10_000u32 {
    ///     f.insert(&i.to_le_bytes());
    /// }
    /// assert!(f.layers().len() >= 4);
    /// assert!(f.contains(&5u32.to_le_bytes()));
    /// assert!(f.formula_fpr() < 0.01);
    /// # Ok::<(), compressed_bloom::kinds::scalable::ScalableError>(())
    /// ```
    pub fn new(policy: ScalablePolicy, seed: u64) -> Result<Self, ScalableError> {
        Self::with_planner(policy, seed, &CompressedLayers)
    }

    /// An empty filter whose first layer holds `capacity` keys and whose
    /// rate stays below `fpr` however many keys arrive: the default policy
    /// ([`ScalablePolicy::new`]: layers that double, each at 0.9 times the
    /// rate of the one before).
    ///
    /// ```
    /// use compressed_bloom::kinds::scalable::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::with_capacity_and_rate(1_000, 0.01, 7)?;
    /// for i in 0..5_000u32 {
    ///     f.try_insert(&i.to_le_bytes())?;
    /// }
    /// assert!(f.formula_fpr() < 0.01);
    /// # Ok::<(), compressed_bloom::kinds::scalable::ScalableError>(())
    /// ```
    ///
    /// # Errors
    /// As [`ScalableBloomFilter::new`]: a capacity of 0 or a rate outside
    /// (0, 1).
    pub fn with_capacity_and_rate(
        capacity: u64,
        fpr: f64,
        seed: u64,
    ) -> Result<Self, ScalableError> {
        Self::new(ScalablePolicy::new(capacity, fpr), seed)
    }

    /// Inserts a key, as [`ScalableBloomFilter::try_insert_with`] with
    /// [`CompressedLayers`].
    ///
    /// # Errors
    /// A new layer was needed and could not be planned (64 layers, or no
    /// memory); the key is then not inserted.
    pub fn try_insert(&mut self, key: &[u8]) -> Result<(), ScalableError> {
        self.try_insert_with(key, &CompressedLayers)
    }

    /// [`try_insert`](Self::try_insert), ignoring a failure to open the
    /// next layer (a 65th, or one whose tightened rate the policy's
    /// `max_bits_per_key` cannot reach): the key then goes into the full
    /// newest layer, which fills past its capacity, and the bound
    /// Σ f_i < fpr no longer holds. Use `try_insert` to see the failure.
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_with(key, &CompressedLayers);
    }

    /// The false-positive rate from the layers' fills:
    /// 1 − Π (1 − fill_i^k_i).
    pub fn formula_fpr(&self) -> f64 {
        1.0 - self
            .layers()
            .iter()
            .map(|l| 1.0 - l.filter.expected_fpr())
            .product::<f64>()
    }
}
