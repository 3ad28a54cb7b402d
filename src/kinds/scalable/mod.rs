//! The scalable (growing) kind (kind 3, docs/FORMAT.md section 8.3): a
//! filter for a key count not known in advance (Almeida, Baquero, Preguiça
//! and Hutchison, "Scalable Bloom Filters"). Keys go into the newest
//! layer; when it holds its capacity, a new layer opens, `growth` times
//! larger, with a false-positive rate `tightening` times lower. Layer i is
//! planned for `capacity_i = initial_capacity · growth^i` keys at
//! `f_i = fpr · (1 − tightening) · tightening^i`, so the rate over all
//! layers stays below `fpr` (the union bound: Σ f_i < fpr) however many
//! layers open.
//!
//! Each layer is a standard filter with its own m, k and seed (the
//! filter's seed plus the layer index, so the layers hash independently),
//! sized by the planner for its *compressed* size under a memory cap of
//! `max_bits_per_key` bits per key; one frame carries every layer, each
//! coded or raw; a delta works layer by layer.
//!
//! ## From a plan to the wire and back
//! Plan for 10,000 keys at f = 0.01, build, send as a frame, decode, and
//! publish to a subscriber:
//!
//! ```
//! use compressed_bloom::plan::{self, Constraints, Needs, Target};
//! use compressed_bloom::{decode_as, encode_any, AnyFilter, DecodeLimits, FilterKind};
//! use compressed_bloom::{Publisher, PublisherOptions, Subscriber};
//! let needs = Needs { growth: true, ..Needs::STATIC };
//! let (choice, _) = plan::recommend(10_000, Target::Fpr(0.01), needs, &Constraints::default())?;
//! let filter = choice.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
//! assert_eq!(filter.kind(), FilterKind::Scalable);
//! let frame = encode_any(&filter);
//! let received: AnyFilter = decode_as(&frame, &DecodeLimits::default())?;
//! assert_eq!(received, filter);
//! let mut publisher = Publisher::new(filter, PublisherOptions::default());
//! let mut subscriber = Subscriber::<AnyFilter>::default();
//! subscriber.receive(&publisher.publish().frame)?;
//! assert!(subscriber.filter().is_some_and(|f| f.contains(&7u32.to_le_bytes())));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;
// Each frame and delta function, for the crate's tests, tools and CLI;
// the API is the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{encode_scalable, encode_scalable_raw, decode_scalable, encode_delta_scalable, apply_scalable};
}

use crate::prelude::*;
use crate::kinds::bits::{put_bits, read_bits_work, split_digests, BitsError};
use crate::coder;
use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::wire::varint;
use thiserror::Error;

/// Chooses each layer's shape as a scalable filter grows. The kind knows
/// when a layer opens and what capacity and rate the policy gives it; the
/// m and k that reach that rate come from a planner above it
/// (the planner's `plan::CompressedLayers` sizes each layer for its
/// compressed size).
pub trait LayerPlanner {
    /// The m and k of layer `i` of a filter with `policy`: sized for
    /// `policy.capacity(i)` keys at the policy's rate for layer `i`.
    ///
    /// # Errors
    /// [`ScalableError::Layer`] when no such layer can be planned.
    fn layer(&self, policy: &ScalablePolicy, i: u32) -> Result<(u64, u32), ScalableError>;
}

internal! {
/// Most layers a scalable filter may have (a frame with more is refused).
pub const MAX_LAYERS: u64 = 64;
}

/// How a scalable filter grows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalablePolicy {
    /// Keys the first layer is planned for (at least 1).
    pub initial_capacity: u64,
    /// The bound on the false-positive rate over all layers, in (0, 1).
    pub fpr: f64,
    /// Each layer's rate is this times the previous one's, in (0, 1).
    pub tightening: f64,
    /// Each layer's capacity is this times the previous one's (at least 1).
    pub growth: u64,
    /// The memory cap of a layer, in bits per key of its capacity.
    pub max_bits_per_key: f64,
}

impl ScalablePolicy {
    /// Growth 2 and tightening 0.9 (Almeida et al. suggest 0.8 to 0.9 for
    /// growth 2; `benches/compare`'s `scalable` measured 0.9 the cheapest of
    /// 0.5, 0.8 and 0.9 on the wire at 10^5 and 10^6 keys) for a first layer
    /// of `initial_capacity` keys and an overall bound `fpr`, with layers
    /// of at most 64 bits per key.
    pub fn new(initial_capacity: u64, fpr: f64) -> Self {
        ScalablePolicy {
            initial_capacity,
            fpr,
            tightening: 0.9,
            growth: 2,
            max_bits_per_key: 64.0,
        }
    }

    /// Checks the ranges documented on the fields.
    ///
    /// # Errors
    /// [`ScalableError::Policy`] naming the field.
    pub fn validate(&self) -> Result<(), ScalableError> {
        let bad = |field| Err(ScalableError::Policy { field });
        if self.initial_capacity == 0 {
            return bad("initial_capacity");
        }
        if !(self.fpr > 0.0 && self.fpr < 1.0) {
            return bad("fpr");
        }
        if !(self.tightening > 0.0 && self.tightening < 1.0) {
            return bad("tightening");
        }
        if self.growth == 0 {
            return bad("growth");
        }
        if !(self.max_bits_per_key >= 1.0 && self.max_bits_per_key.is_finite()) {
            return bad("max_bits_per_key");
        }
        Ok(())
    }

    /// Layer i's capacity (saturating).
    pub fn capacity(&self, i: u32) -> u64 {
        self.initial_capacity
            .saturating_mul(self.growth.checked_pow(i).unwrap_or(u64::MAX))
    }

    /// Layer i's false-positive target.
    #[cfg(feature = "std")]
    pub fn layer_fpr(&self, i: u32) -> f64 {
        self.fpr * (1.0 - self.tightening) * self.tightening.powi(i as i32)
    }
}

/// Why a scalable filter or its payload is refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScalableError {
    /// A policy field is out of range.
    #[error("scalable policy: {field} is out of range")]
    Policy {
        /// The field.
        field: &'static str,
    },
    /// A layer could not be planned or built.
    #[error("layer {layer}: {reason}")]
    Layer {
        /// Layer index.
        layer: u64,
        /// What went wrong.
        reason: String,
    },
    /// The payload is malformed.
    #[error("{what} at payload byte {offset}")]
    Payload {
        /// What is wrong.
        what: &'static str,
        /// Payload offset.
        offset: usize,
    },
    /// A layer's coded bits are malformed.
    #[error("layer {layer}: {source}")]
    Coded {
        /// Layer index.
        layer: u64,
        /// The coder's error.
        source: coder::CoderError,
    },
    /// A layer's bits are invalid.
    #[error("layer {layer}: {source}")]
    Bits {
        /// Layer index.
        layer: u64,
        /// What is wrong.
        source: FilterError,
    },
}

/// One layer: a standard filter and the number of keys it was planned for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The layer's bits (its own m, k and seed).
    pub filter: BloomFilter,
    /// Keys the layer takes before the next one opens.
    pub capacity: u64,
}

/// A scalable Bloom filter: layers that open as keys arrive.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalableBloomFilter {
    seed: u64,
    policy: ScalablePolicy,
    layers: Vec<Layer>,
}

impl Eq for ScalableBloomFilter {}

internal! {
/// The seed of layer i: the filter's seed plus i (mod 2^64).
pub fn layer_seed(seed: u64, i: u64) -> u64 {
    seed.wrapping_add(i)
}
}

impl ScalableBloomFilter {
    /// An empty filter with its first layer open, each layer's m and k
    /// chosen by `planner`.
    ///
    /// # Errors
    /// A policy out of range, or a first layer that cannot be planned.
    pub fn with_planner<P: LayerPlanner + ?Sized>(
        policy: ScalablePolicy,
        seed: u64,
        planner: &P,
    ) -> Result<Self, ScalableError> {
        policy.validate()?;
        let mut f = ScalableBloomFilter {
            seed,
            policy,
            layers: Vec::new(),
        };
        f.open_layer(planner)?;
        Ok(f)
    }

    /// A filter from its parts (as decoded).
    ///
    /// # Errors
    /// A policy out of range, no layer or too many, or a layer whose seed
    /// is not the filter's seed plus its index.
    pub fn from_parts(
        policy: ScalablePolicy,
        seed: u64,
        layers: Vec<Layer>,
    ) -> Result<Self, ScalableError> {
        policy.validate()?;
        if layers.is_empty() || layers.len() as u64 > MAX_LAYERS {
            return Err(ScalableError::Payload {
                what: "a scalable filter has 1 to 64 layers",
                offset: 0,
            });
        }
        for (i, l) in layers.iter().enumerate() {
            if l.filter.params().seed != layer_seed(seed, i as u64) {
                return Err(ScalableError::Layer {
                    layer: i as u64,
                    reason: "its seed is not the filter's seed plus its index".into(),
                });
            }
        }
        Ok(ScalableBloomFilter {
            seed,
            policy,
            layers,
        })
    }

    fn open_layer<P: LayerPlanner + ?Sized>(&mut self, planner: &P) -> Result<(), ScalableError> {
        let i = self.layers.len() as u64;
        let err = |reason: String| ScalableError::Layer { layer: i, reason };
        if i >= MAX_LAYERS {
            return Err(err("no more than 64 layers".into()));
        }
        // i < 64, so the index fits a u32.
        let cap = self.policy.capacity(i as u32);
        let (m, k) = planner.layer(&self.policy, i as u32)?;
        let params = FilterParams::new(m, k, layer_seed(self.seed, i));
        let filter = BloomFilter::new(params).map_err(|e| err(e.to_string()))?;
        self.layers.push(Layer {
            filter,
            capacity: cap,
        });
        Ok(())
    }

    /// Inserts a key into the newest layer, opening a new one first (its m
    /// and k chosen by `planner`) if the newest holds its capacity. A key
    /// already present is not inserted again (so repeated keys do not fill
    /// layers).
    ///
    /// # Errors
    /// A new layer was needed and could not be planned (64 layers, or no
    /// memory); the key is then not inserted.
    pub fn try_insert_with<P: LayerPlanner + ?Sized>(
        &mut self,
        key: &[u8],
        planner: &P,
    ) -> Result<(), ScalableError> {
        if self.contains(key) {
            return Ok(());
        }
        if self
            .layers
            .last()
            .is_none_or(|l| l.filter.len() >= l.capacity)
        {
            self.open_layer(planner)?;
        }
        if let Some(l) = self.layers.last_mut() {
            l.filter.insert(key);
        }
        Ok(())
    }

    /// [`try_insert_with`](Self::try_insert_with), ignoring a failure to
    /// open the next layer (a 65th, or one whose tightened rate the
    /// policy's `max_bits_per_key` cannot reach): the key then goes into
    /// the full newest layer, which fills past its capacity, and the
    /// module's bound Σ f_i < fpr no longer holds.
    pub fn insert_with<P: LayerPlanner + ?Sized>(&mut self, key: &[u8], planner: &P) {
        if self.try_insert_with(key, planner).is_err() {
            if let Some(l) = self.layers.last_mut() {
                l.filter.insert(key);
            }
        }
    }

    /// Whether the key may be in the set (any layer).
    pub fn contains(&self, key: &[u8]) -> bool {
        self.layers.iter().any(|l| l.filter.contains(key))
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The growth policy.
    pub fn policy(&self) -> &ScalablePolicy {
        &self.policy
    }

    /// The filter's seed (layer i hashes with seed + i).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Keys inserted (the sum of the layers' counts).
    pub fn len(&self) -> u64 {
        self.layers
            .iter()
            .fold(0u64, |a, l| a.saturating_add(l.filter.len()))
    }

    /// Whether no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total bits over the layers.
    pub fn total_bits(&self) -> u64 {
        self.layers
            .iter()
            .fold(0u64, |a, l| a.saturating_add(l.filter.m()))
    }

    /// Largest k over the layers.
    pub fn max_k(&self) -> u32 {
        self.layers.iter().map(|l| l.filter.k()).max().unwrap_or(1)
    }

    /// One bits over the layers.
    pub fn count_ones(&self) -> u64 {
        self.layers
            .iter()
            .fold(0u64, |a, l| a.saturating_add(l.filter.count_ones()))
    }

    /// The content digest (docs/FORMAT.md section 8.3): XXH3-64 (seed 0)
    /// of the layers' [`BloomFilter::digest`]s, each as u64 LE, in order.
    pub fn digest(&self) -> u64 {
        let mut bytes = Vec::with_capacity(self.layers.len().saturating_mul(8));
        for l in &self.layers {
            bytes.extend_from_slice(&l.filter.digest().to_le_bytes());
        }
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }
}

/// Writes the policy: initial capacity and growth (varints), then the
/// overall rate, the tightening and the memory cap as IEEE-754 binary64
/// bit patterns, little-endian.
fn put_policy(out: &mut Vec<u8>, p: &ScalablePolicy) {
    varint::put(out, p.initial_capacity);
    varint::put(out, p.growth);
    for x in [p.fpr, p.tightening, p.max_bits_per_key] {
        out.extend_from_slice(&x.to_bits().to_le_bytes());
    }
}

/// Appends a whole layer: m, k, n, capacity (varints), then its bits.
fn put_layer(out: &mut Vec<u8>, l: &Layer, raw: bool) {
    let p = l.filter.params();
    for v in [p.m, u64::from(p.k), l.filter.len(), l.capacity] {
        varint::put(out, v);
    }
    put_bits(out, l.filter.as_words(), p.m, raw);
}

internal! {
/// The full payload (type 1): policy, layer count, layers (each coded when
/// that is smaller, or every layer raw if `raw`).
pub fn encode_payload(f: &ScalableBloomFilter, raw: bool) -> Vec<u8> {
    let mut out = Vec::new();
    put_policy(&mut out, &f.policy);
    varint::put(&mut out, f.layers.len() as u64);
    for l in &f.layers {
        put_layer(&mut out, l, raw);
    }
    out
}
}

internal! {
/// The delta payload (type 2) from `old` to `new`, which must share seed
/// and policy and extend `old`'s layers (same m and k for each old layer):
/// the two digests, the result's layer count, for each old layer its new
/// n and the XOR of its bits, then the new layers whole.
///
/// # Errors
/// [`ScalableError::Layer`] if `new` does not extend `old`.
pub fn encode_delta_payload(
    old: &ScalableBloomFilter,
    new: &ScalableBloomFilter,
) -> Result<Vec<u8>, ScalableError> {
    let same_policy = old.policy == new.policy && old.seed == new.seed;
    if !same_policy || new.layers.len() < old.layers.len() {
        return Err(ScalableError::Layer {
            layer: 0,
            reason: "the new filter does not extend the old one (seed, policy or layers differ)"
                .into(),
        });
    }
    let mut out = Vec::new();
    out.extend_from_slice(&old.digest().to_le_bytes());
    out.extend_from_slice(&new.digest().to_le_bytes());
    varint::put(&mut out, new.layers.len() as u64);
    for (i, (o, n)) in old.layers.iter().zip(&new.layers).enumerate() {
        if o.filter.params() != n.filter.params() || o.capacity != n.capacity {
            return Err(ScalableError::Layer {
                layer: i as u64,
                reason: "a layer of the old filter changed its parameters".into(),
            });
        }
        varint::put(&mut out, n.filter.len());
        let xor: Vec<u64> = o
            .filter
            .as_words()
            .iter()
            .zip(n.filter.as_words())
            .map(|(a, b)| a ^ b)
            .collect();
        put_bits(&mut out, &xor, n.filter.m(), false);
    }
    for l in new.layers.get(old.layers.len()..).unwrap_or_default() {
        put_layer(&mut out, l, false);
    }
    Ok(out)
}
}

/// A cursor over a payload that reports where it failed.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    /// The decoder's work so far: the layers' coding steps, plus one per
    /// layer read.
    work: u64,
}

impl<'a> Reader<'a> {
    fn fail<T>(&self, what: &'static str) -> Result<T, ScalableError> {
        Err(self.error(what))
    }

    fn error(&self, what: &'static str) -> ScalableError {
        ScalableError::Payload {
            what,
            offset: self.at,
        }
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, ScalableError> {
        let rest = self.data.get(self.at..).unwrap_or_default();
        match varint::get(rest) {
            Ok((v, used)) => {
                self.at = self.at.saturating_add(used);
                Ok(v)
            }
            Err(_) => self.fail(what),
        }
    }

    fn bytes(&mut self, len: u64, what: &'static str) -> Result<&'a [u8], ScalableError> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| self.at.checked_add(l))
            .filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            return self.fail(what);
        };
        let out = self.data.get(self.at..end).unwrap_or_default();
        self.at = end;
        Ok(out)
    }

    fn f64(&mut self, what: &'static str) -> Result<f64, ScalableError> {
        let b = self.bytes(8, what)?;
        let b: [u8; 8] = b.try_into().map_err(|_| ScalableError::Payload {
            what,
            offset: self.at,
        })?;
        Ok(f64::from_bits(u64::from_le_bytes(b)))
    }

    /// A layer's bits (type, length, bytes) for an m-bit array, as words.
    fn bits(&mut self, m: u64, layer: u64) -> Result<Vec<u64>, ScalableError> {
        let at = self.at;
        let rest = self.data.get(at..).unwrap_or_default();
        let (words, used, steps) = read_bits_work(rest, m).map_err(|e| match e {
            BitsError::Type(_) => ScalableError::Payload {
                what: "layer type is 0 (raw) or 1 (coded)",
                offset: at,
            },
            BitsError::Length(what) => ScalableError::Payload { what, offset: at },
            BitsError::Coded(source) => ScalableError::Coded { layer, source },
            BitsError::Padding => ScalableError::Bits {
                layer,
                source: FilterError::PaddingBitsSet { m },
            },
            BitsError::NoMemory => ScalableError::Bits {
                layer,
                source: FilterError::OutOfMemory { bytes: m.div_ceil(8) },
            },
        })?;
        self.at = at.saturating_add(used);
        self.work = self.work.saturating_add(steps);
        Ok(words)
    }

    /// A whole layer of index i, of at most `room` bits (what is left of
    /// the header's m): checked before anything is allocated.
    fn layer(&mut self, i: u64, seed: u64, room: u64) -> Result<Layer, ScalableError> {
        self.work = self.work.saturating_add(1);
        let m = self.varint("bad layer m")?;
        if m > room {
            return self.fail("the layers hold more bits than the header's m");
        }
        let k = self.varint("bad layer k")?;
        let n = self.varint("bad layer n")?;
        let capacity = self.varint("bad layer capacity")?;
        let k = u32::try_from(k).unwrap_or(0);
        let params = FilterParams::new(m, k, layer_seed(seed, i));
        params
            .validate()
            .map_err(|source| ScalableError::Bits { layer: i, source })?;
        let words = self.bits(m, i)?;
        Ok(Layer {
            filter: BloomFilter::from_words_unchecked(params, n, words),
            capacity,
        })
    }
}

internal! {
/// What the header declares, which the layers must add up to.
#[derive(Clone, Copy, Debug)]
pub struct Declared {
    /// m: the sum of the layers' m.
    pub m: u64,
    /// k: the largest layer k.
    pub k: u32,
    /// n: the sum of the layers' n.
    pub n: u64,
    /// The filter's seed.
    pub seed: u64,
}
}

fn check_totals(f: &ScalableBloomFilter, d: &Declared, at: usize) -> Result<(), ScalableError> {
    // Σ n_i exactly: a sum past 2^64 − 1 matches no header (`len` would
    // saturate to u64::MAX and match n = u64::MAX).
    let n = f
        .layers
        .iter()
        .try_fold(0u64, |a, l| a.checked_add(l.filter.len()));
    if f.total_bits() != d.m || f.max_k() != d.k || n != Some(d.n) {
        return Err(ScalableError::Payload {
            what: "the layers' m, k or n do not add up to the header's",
            offset: at,
        });
    }
    Ok(())
}

internal! {
/// Decodes a full payload (type 1). The header's m (the sum of the layers'
/// m) was checked against the limits before this allocates anything.
///
/// # Errors
/// Any malformed part.
pub fn decode_payload(payload: &[u8], d: &Declared) -> Result<ScalableBloomFilter, ScalableError> {
    decode_payload_work(payload, d).map(|(f, _)| f)
}
}

internal! {
/// [`decode_payload`], also returning the decoder's work: the layers'
/// coding steps (each bounded as the standard kind's, 5 per output bit
/// plus one per block) plus one per layer (at most 64). The header's m
/// bounds the output bits under the receiver's expansion limit, so the
/// work is in proportion to the frame; the hostile tests hold it there.
///
/// # Errors
/// As [`decode_payload`].
pub fn decode_payload_work(
    payload: &[u8],
    d: &Declared,
) -> Result<(ScalableBloomFilter, u64), ScalableError> {
    let mut r = Reader {
        data: payload,
        at: 0,
        work: 0,
    };
    let policy = ScalablePolicy {
        initial_capacity: r.varint("bad initial capacity")?,
        growth: r.varint("bad growth")?,
        fpr: r.f64("bad fpr")?,
        tightening: r.f64("bad tightening")?,
        max_bits_per_key: r.f64("bad max bits per key")?,
    };
    policy.validate()?;
    let count = r.varint("bad layer count")?;
    if count == 0 || count > MAX_LAYERS {
        return r.fail("a scalable filter has 1 to 64 layers");
    }
    let mut layers = Vec::new();
    let mut bits = 0u64;
    for i in 0..count {
        // The layers may not hold more than the header declared (the
        // limits were checked against it).
        let l = r.layer(i, d.seed, d.m.saturating_sub(bits))?;
        bits = bits.saturating_add(l.filter.m());
        layers.push(l);
    }
    if r.at != payload.len() {
        return r.fail("bytes after the last layer");
    }
    let f = ScalableBloomFilter::from_parts(policy, d.seed, layers)?;
    check_totals(&f, d, r.at)?;
    Ok((f, r.work))
}
}

internal! {
/// Why a scalable delta does not apply.
pub type ScalableDeltaError = crate::kinds::bits::KindDeltaError<ScalableError>;
}

internal! {
/// Applies a delta payload to `base` (in place; unchanged on any error).
///
/// # Errors
/// The wrong base, a malformed payload, or a result that does not match.
pub fn apply_delta_payload(
    base: &mut ScalableBloomFilter,
    payload: &[u8],
    d: &Declared,
    held: Option<u64>,
) -> Result<(), ScalableDeltaError> {
    let mut r = Reader {
        data: payload,
        at: 0,
        work: 0,
    };
    let (want_base, want_result, _) = split_digests(payload).ok_or(ScalableError::Payload {
        what: "a delta starts with two digests",
        offset: 0,
    })?;
    r.at = 16;
    // A receiver that keeps the base's digest saves the pass over it.
    let actual = held.unwrap_or_else(|| base.digest());
    if actual != want_base {
        return Err(ScalableDeltaError::WrongBase {
            expected: want_base,
            actual,
        });
    }
    let count = r.varint("bad layer count")?;
    let old = base.layers.len() as u64;
    if count < old || count > MAX_LAYERS {
        return Err(r
            .error("the result has at least the base's layers and at most 64")
            .into());
    }
    // Decode everything first; the base changes only once it all parsed.
    let mut changes = Vec::new();
    let mut bits = 0u64;
    for (i, l) in base.layers.iter().enumerate() {
        let n = r.varint("bad layer n")?;
        let xor = r.bits(l.filter.m(), i as u64)?;
        bits = bits.saturating_add(l.filter.m());
        changes.push((n, xor));
    }
    if bits > d.m {
        return Err(r.error("the layers hold more bits than the header's m").into());
    }
    let mut added = Vec::new();
    for i in old..count {
        let l = r.layer(i, base.seed, d.m.saturating_sub(bits))?;
        bits = bits.saturating_add(l.filter.m());
        added.push(l);
    }
    if r.at != payload.len() {
        return Err(r.error("bytes after the last layer").into());
    }
    let mut result = base.clone();
    for (l, (n, xor)) in result.layers.iter_mut().zip(&changes) {
        l.filter.xor_words(xor);
        l.filter.set_len(*n);
    }
    result.layers.extend(added);
    check_totals(&result, d, r.at)?;
    let got = result.digest();
    if got != want_result {
        return Err(ScalableDeltaError::ResultMismatch {
            expected: want_result,
            actual: got,
        });
    }
    *base = result;
    Ok(())
}
}
