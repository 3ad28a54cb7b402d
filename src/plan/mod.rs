//! The optimiser: choose m (bits) and k (hash positions) for a filter that is
//! sent, not only stored (Mitzenmacher, "Compressed Bloom Filters", §II–IV).
//!
//! With an ideal coder an m-bit filter whose bits are 0 with probability p
//! costs m·H(p) bits on the wire, and for a fixed transmitted size z the
//! uncompressed optimum k = ln2·m/n (p = 1/2) is the *worst* choice. This
//! module searches integer k and integer m against the real frame:
//!
//! * the exact frame header length (varints included) and CRC;
//! * for deltas, the frame `delta::encode_delta` sends: the conditional delta
//!   (two coded parts) or the plain one, whichever is smaller;
//! * the coder's overhead bound over log2 C(m, x): per 2^23-bit block the
//!   rANS flush, the adaptive model's learning, the end-of-block symbol and
//!   the block's length, plus 0.04% of the bound for the model's 12-bit
//!   frequencies;
//! * the encoder's fallback to the uncompressed type when coding does not pay;
//! * a safety margin: the number of zero bits X has a closed-form variance,
//!   so instead of the paper's blanket 0.99·z the plan keeps the frame under
//!   the budget with probability at least `confidence` (normal approximation
//!   of X at the one-sided quantile, with Var X from the exact pairwise
//!   probability that two given bits both stay zero).
//!
//! All functions are pure; invalid numbers (zero, NaN, infinities, out of
//! range) give a [`PlanError`], never a panic.

use crate::coder;
use crate::filter::{MAX_K, MAX_M};
use crate::format::{header, varint};
pub use crate::kinds::ribbon::Build;

internal_modules!(kinds);
internal! {
    pub use kinds::{plan_scalable, plan_scalable_for_size};
}
internal_modules!(receiver);
pub use receiver::{default_plan, plan_for_receiver, DefaultPlan, Target};
internal! {
    pub use receiver::PlanKind;
}
mod recommend;
pub use recommend::{for_kind, recommend, Choice, Needs};
internal! {
    pub use recommend::SCALABLE_INITIAL_CAPACITY;
}
mod build;
internal! {
pub use build::ribbon_within;
}
mod scalable;
use crate::math::{binary_entropy, log2_binomial_real, normal_quantile};
pub use scalable::CompressedLayers;
use std::f64::consts::LN_2;
use thiserror::Error;

/// Why no plan could be made.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum PlanError {
    /// An argument is NaN, infinite or outside its documented range.
    #[error("invalid argument `{name}` = {value}: {expected}")]
    InvalidArgument {
        /// Which argument.
        name: &'static str,
        /// Its value as given.
        value: f64,
        /// The accepted range.
        expected: &'static str,
    },
    /// No (m, k) within the caps meets the target.
    #[error("no filter within the caps meets the target: {reason}")]
    Infeasible {
        /// What could not be met.
        reason: String,
    },
    /// The planned filter could not be built ([`Choice::build`]).
    #[error("cannot build the planned {} filter: {reason}", kind.name())]
    Build {
        /// The kind planned.
        kind: crate::format::FilterKind,
        /// Why.
        reason: String,
    },
}

/// Caps and margins shared by every search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constraints {
    /// Upper bound on m (memory of the uncompressed filter), in bits.
    pub max_m: u64,
    /// Upper bound on k (lookup cost).
    pub max_k: u32,
    /// Probability with which the frame must stay within the byte budget,
    /// in [0.5, 1).
    pub confidence: f64,
    /// Seed the filter will use (its varint length is part of the frame).
    pub seed: u64,
    /// How a ribbon filter is built, which sets its expected rows: the
    /// ribbon estimate assumes it, and [`Choice::build`] builds that way.
    pub ribbon_build: Build,
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            max_m: MAX_M,
            max_k: MAX_K,
            confidence: 0.9999,
            seed: 0,
            ribbon_build: Build::Compact,
        }
    }
}

impl Constraints {
    /// Caps m at `bits_per_key · n` (at least 1 bit).
    pub fn with_max_bits_per_key(mut self, bits_per_key: f64, n: u64) -> Self {
        let cap = (bits_per_key * n.max(1) as f64).floor();
        if cap.is_finite() && cap >= 1.0 {
            self.max_m = self.max_m.min(cap as u64);
        } else if cap.is_finite() {
            self.max_m = 1;
        }
        self
    }

    pub(crate) fn validate(&self) -> Result<(), PlanError> {
        if self.max_m == 0 {
            return Err(invalid("max_m", 0.0, "at least 1 bit"));
        }
        if self.max_k == 0 {
            return Err(invalid("max_k", 0.0, "at least 1"));
        }
        if !(self.confidence >= 0.5 && self.confidence < 1.0) {
            return Err(invalid(
                "confidence",
                self.confidence,
                "a probability in [0.5, 1)",
            ));
        }
        Ok(())
    }

    fn m_cap(&self) -> u64 {
        self.max_m.min(MAX_M)
    }

    fn k_cap(&self) -> u32 {
        self.max_k.min(MAX_K)
    }
}

fn invalid(name: &'static str, value: f64, expected: &'static str) -> PlanError {
    PlanError::InvalidArgument {
        name,
        value,
        expected,
    }
}

/// A chosen filter configuration and what it is expected to cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Keys the filter is sized for.
    pub n: u64,
    /// Bits of the (uncompressed, in-memory) filter.
    pub m: u64,
    /// Hash positions per key.
    pub k: u32,
    /// False-positive rate: for a standard filter the finite formula
    /// (1 − (1 − 1/m)^{kn})^k; a kind's plan ([`kinds`]) uses its own.
    pub fpr: f64,
    /// m / n.
    pub bits_per_key: f64,
    /// Expected transmitted bits per key (expected frame size · 8 / n).
    pub compressed_bits_per_key: f64,
    /// Expected frame size in bytes, all overhead included.
    pub expected_bytes: f64,
    /// Frame size (bytes) not exceeded with probability >= `confidence`.
    pub bound_bytes: u64,
    /// The confidence the bound was computed for.
    pub confidence: f64,
    /// Whether the frame is expected to use the coded (not raw) type.
    pub coded: bool,
    /// For delta plans, the fraction of keys that change between versions.
    pub delta_fraction: Option<f64>,
}

internal! {
/// False-positive rate, asymptotic form (1 − e^{−kn/m})^k.
pub fn fpr_asymptotic(m: u64, n: u64, k: u32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let t = f64::from(k) * n as f64 / m as f64;
    (-(-t).exp_m1()).powi(k as i32)
}
}

internal! {
/// False-positive rate, finite form (1 − (1 − 1/m)^{kn})^k.
pub fn fpr_finite(m: u64, n: u64, k: u32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    // 1 − a as −expm1(kn·ln(1 − 1/m)): `1.0 − a` rounds to 0 once
    // kn/m < 2^−54 and would plan too sparse an m for a tiny target.
    if m == 1 {
        return 1.0;
    }
    let kn = f64::from(k) * n as f64;
    (-(kn * (-1.0 / m as f64).ln_1p()).exp_m1()).powi(k as i32)
}
}

internal! {
/// Expected fraction of zero bits, (1 − 1/m)^{kn}.
pub fn zero_fraction(m: u64, n: u64, k: u32) -> f64 {
    if n == 0 {
        return 1.0;
    }
    if m == 1 {
        return 0.0;
    }
    let kn = f64::from(k) * n as f64;
    (kn * (-1.0 / m as f64).ln_1p()).exp()
}
}

internal! {
/// Variance of the number of zero bits X after kn uniform throws into m bits:
/// Var X = m·a(1 − a) + m(m − 1)(b − a²), a = (1 − 1/m)^{kn}, b = (1 − 2/m)^{kn},
/// evaluated as b − a² = a²·expm1(kn·ln(1 − 1/(m − 1)²)) to avoid cancellation.
pub fn zero_count_variance(m: u64, n: u64, k: u32) -> f64 {
    if n == 0 || m <= 1 {
        return 0.0;
    }
    let mf = m as f64;
    let kn = f64::from(k) * n as f64;
    let a = zero_fraction(m, n, k);
    if m == 2 {
        // b = 0^{kn} = 0 for kn >= 1.
        return (mf * a * (1.0 - a) - mf * (mf - 1.0) * a * a).max(0.0);
    }
    let d = (mf - 1.0) * (mf - 1.0);
    let b_minus_a2 = a * a * (kn * (-1.0 / d).ln_1p()).exp_m1();
    (mf * a * (1.0 - a) + mf * (mf - 1.0) * b_minus_a2).max(0.0)
}
}

internal! {
/// Probability q that a bit of the XOR delta is 1 when a fraction c of the n
/// keys is replaced (§IV): q = 2p(1 − p^c), p the zero fraction.
pub fn delta_density(m: u64, n: u64, k: u32, c: f64) -> f64 {
    let p = zero_fraction(m, n, k);
    if p <= 0.0 {
        return 0.0;
    }
    2.0 * p * (1.0 - p.powf(c))
}
}

internal! {
/// A point (m/n, k) evaluated the way the paper's tables are.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Keys.
    pub n: u64,
    /// Bits.
    pub m: u64,
    /// Hash positions.
    pub k: u32,
    /// m/n.
    pub bits_per_key: f64,
    /// Asymptotic zero fraction p = e^{−kn/m}.
    pub p_zero: f64,
    /// (1 − p)^k.
    pub fpr_asymptotic: f64,
    /// Finite-m false-positive rate.
    pub fpr: f64,
    /// Ideal compressed bits per key, (m/n)·H(p) (the paper's z/n).
    pub compressed_bits_per_key: f64,
    /// Expected frame bytes of the filter with this crate's format and coder.
    pub expected_bytes: f64,
    /// Delta figures when a change fraction was given.
    pub delta: Option<DeltaEvaluation>,
}
}

internal! {
/// Delta figures for an [`Evaluation`].
#[derive(Clone, Debug, PartialEq)]
pub struct DeltaEvaluation {
    /// Fraction of keys replaced.
    pub c: f64,
    /// Density of the XOR, q = 2p(1 − p^c).
    pub q: f64,
    /// Ideal compressed delta bits per key, (m/n)·H(q).
    pub bits_per_key: f64,
    /// Ideal compressed delta bits per changed key, (m/(cn))·H(q).
    pub bits_per_changed_key: f64,
    /// Ideal bits per key of the delta coded given the base (this crate's
    /// conditional delta): (m/n)·[p·H(q0) + (1 − p)·H(q1)], with q0 = 1 − p^c
    /// the density of changes among the base's 0s and
    /// q1 = p(1 − p^c)/(1 − p) among its 1s. Never above `bits_per_key`.
    pub conditional_bits_per_key: f64,
    /// Expected delta frame bytes (the smaller of the conditional and the
    /// plain delta, as `delta::encode_delta` sends).
    pub expected_bytes: f64,
}
}

internal! {
/// Evaluates f and the transmitted sizes at a given (m, k) for n keys, and
/// the delta sizes if `delta_fraction` is given.
///
/// # Errors
/// m or k out of range, n = 0 with a delta fraction, c outside (0, 1].
pub fn evaluate(
    n: u64,
    m: u64,
    k: u32,
    delta_fraction: Option<f64>,
) -> Result<Evaluation, PlanError> {
    if m == 0 || m > MAX_M {
        return Err(invalid("m", m as f64, "1..=2^56 bits"));
    }
    if k == 0 || k > MAX_K {
        return Err(invalid("k", f64::from(k), "1..=64"));
    }
    let nf = n.max(1) as f64;
    let bpk = m as f64 / nf;
    let p = if n == 0 {
        1.0
    } else {
        (-(f64::from(k)) * n as f64 / m as f64).exp()
    };
    let delta = match delta_fraction {
        None => None,
        Some(c) => {
            check_fraction(c)?;
            let q = 2.0 * p * (1.0 - p.powf(c));
            let zb = bpk * binary_entropy(q);
            let q0 = 1.0 - p.powf(c);
            let q1 = if p < 1.0 { p * q0 / (1.0 - p) } else { 0.0 };
            let cond = bpk * (p * binary_entropy(q0) + (1.0 - p) * binary_entropy(q1));
            Some(DeltaEvaluation {
                c,
                q,
                bits_per_key: zb,
                bits_per_changed_key: zb / c,
                conditional_bits_per_key: cond,
                expected_bytes: SizeModel::delta(m, n, k, c, 0).expected_frame_bytes(),
            })
        }
    };
    Ok(Evaluation {
        n,
        m,
        k,
        bits_per_key: bpk,
        p_zero: p,
        fpr_asymptotic: fpr_asymptotic(m, n, k),
        fpr: fpr_finite(m, n, k),
        compressed_bits_per_key: bpk * binary_entropy(p),
        expected_bytes: SizeModel::filter(m, n, k, 0).expected_frame_bytes(),
        delta,
    })
}
}

fn check_fraction(c: f64) -> Result<(), PlanError> {
    if !(c > 0.0 && c <= 1.0) {
        return Err(invalid("delta_fraction", c, "a fraction in (0, 1]"));
    }
    Ok(())
}

/// One coded array of a conditional delta: its length and the mean and
/// deviation of its count of ones.
#[derive(Clone, Copy, Debug)]
struct Part {
    bits: f64,
    mean: f64,
    sd: f64,
}

impl Part {
    /// Coded bytes of the part with `ones` ones (the coder's bound).
    fn bytes(&self, ones: f64) -> f64 {
        if self.bits < 1.0 {
            return 0.0;
        }
        let bits = self.bits.round() as u64;
        (coder::payload_bits_bound(bits, log2_binomial_real(self.bits, ones)) / 8.0).ceil()
    }

    /// Bits the coded size grows per extra one, d/dx log2 C(bits, x).
    fn slope(&self) -> f64 {
        let x = self.mean.clamp(0.5, (self.bits / 2.0).max(0.5));
        ((self.bits - x) / x).max(1.0).log2()
    }
}

/// The two parts of a conditional delta when a fraction c of the keys is
/// replaced: of the m·p zeros of the base, m·p·(1 − p^c) turn to 1 (a new
/// key hits them); as many of its m·(1 − p) ones turn to 0. Each count is
/// treated as binomial (conservative: the real counts vary less, because the
/// number of changed keys is fixed).
fn conditional_parts(m: u64, n: u64, k: u32, c: f64) -> [Part; 2] {
    let mf = m as f64;
    let p = zero_fraction(m, n, k);
    let flips = mf * p * (1.0 - p.powf(c));
    let part = |bits: f64| {
        let mean = flips.min(bits);
        let q = if bits > 0.0 { mean / bits } else { 0.0 };
        Part {
            bits,
            mean,
            sd: (mean * (1.0 - q)).max(0.0).sqrt(),
        }
    };
    [part(mf * p), part(mf * (1.0 - p))]
}

/// The size of a frame carrying an m-bit array whose count of ones is
/// (approximately normally) distributed with the given mean and deviation.
#[derive(Clone, Copy, Debug)]
struct SizeModel {
    m: u64,
    n: u64,
    k: u32,
    seed: u64,
    mean_ones: f64,
    sd_ones: f64,
    /// A delta: `mean_ones`/`sd_ones` describe the plain XOR (always coded,
    /// after two 8-byte digests), and `parts` the conditional delta's two
    /// arrays. The encoder sends the smaller of the two.
    delta: Option<[Part; 2]>,
}

impl SizeModel {
    fn filter(m: u64, n: u64, k: u32, seed: u64) -> Self {
        let mf = m as f64;
        SizeModel {
            m,
            n,
            k,
            seed,
            mean_ones: mf * (1.0 - zero_fraction(m, n, k)),
            sd_ones: zero_count_variance(m, n, k).sqrt(),
            delta: None,
        }
    }

    /// The XOR of two versions: ones ~ Binomial(m, q) (the bits of a delta
    /// are treated as independent; exact only asymptotically).
    fn delta(m: u64, n: u64, k: u32, c: f64, seed: u64) -> Self {
        let q = delta_density(m, n, k, c);
        let mf = m as f64;
        SizeModel {
            m,
            n,
            k,
            seed,
            mean_ones: mf * q,
            sd_ones: (mf * q * (1.0 - q)).sqrt(),
            delta: Some(conditional_parts(m, n, k, c)),
        }
    }

    /// Payload bytes when the array has `ones` ones: the coded size bound or
    /// the raw array, whichever the encoder would pick; for a delta, the
    /// plain delta's payload.
    fn payload_bytes(&self, ones: f64) -> f64 {
        let coded =
            coder::payload_bits_bound(self.m, log2_binomial_real(self.m as f64, ones)) / 8.0;
        if self.delta.is_some() {
            coded + crate::delta::DIGESTS_LEN as f64
        } else {
            coded.min(self.m.div_ceil(8) as f64)
        }
    }

    /// Payload bytes of the conditional delta with `ones[i]` ones in part i:
    /// digests, the two layout varints, and both coded parts.
    fn conditional_payload_bytes(parts: &[Part; 2], ones: [f64; 2]) -> f64 {
        let first = parts[0].bytes(ones[0]);
        let varints = varint::len(parts[1].bits.round() as u64) + varint::len(first as u64);
        crate::delta::DIGESTS_LEN as f64 + varints as f64 + first + parts[1].bytes(ones[1])
    }

    fn frame_bytes(&self, payload: f64) -> f64 {
        let p = payload.ceil();
        p + header::frame_overhead(self.seed, self.m, self.k, self.n, p as u64) as f64
    }

    fn expected_frame_bytes(&self) -> f64 {
        let plain = self.frame_bytes(self.payload_bytes(self.mean_ones));
        match &self.delta {
            Some(parts) => plain.min(self.frame_bytes(Self::conditional_payload_bytes(
                parts,
                [parts[0].mean, parts[1].mean],
            ))),
            None => plain,
        }
    }

    /// Frame size not exceeded with probability >= confidence: the coded size
    /// grows as the count of ones approaches m/2, so take the one-sided
    /// quantile of the count on that side (clamped at m/2). For a delta, the
    /// smaller of the plain and conditional bounds (the encoder sends the
    /// smaller frame, which is at most either). The conditional size depends
    /// on two counts: they are moved together along the direction in which
    /// the (linearised) size grows fastest, by z deviations of the size.
    fn bound_frame_bytes(&self, z: f64) -> f64 {
        let half = self.m as f64 / 2.0;
        let ones = if self.mean_ones <= half {
            (self.mean_ones + z * self.sd_ones).min(half)
        } else {
            (self.mean_ones - z * self.sd_ones).max(half)
        };
        let plain = self.frame_bytes(self.payload_bytes(ones));
        let Some(parts) = &self.delta else {
            return plain;
        };
        let w = parts.map(|p| p.slope() * p.sd);
        let norm = (w[0] * w[0] + w[1] * w[1]).sqrt();
        // z >= 0 and the weights are >= 0, so the step never lowers a count.
        let shifted = |i: usize| {
            let p = &parts[i];
            let step = if norm > 0.0 {
                z * p.sd * w[i] / norm
            } else {
                0.0
            };
            (p.mean + step).min(p.bits / 2.0)
        };
        let cond = self.frame_bytes(Self::conditional_payload_bytes(
            parts,
            [shifted(0), shifted(1)],
        ));
        plain.min(cond)
    }

    fn coded(&self) -> bool {
        self.delta.is_some() || self.payload_bytes(self.mean_ones) < self.m.div_ceil(8) as f64
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Filter,
    Delta(f64),
}

impl Kind {
    fn model(self, m: u64, n: u64, k: u32, seed: u64) -> SizeModel {
        match self {
            Kind::Filter => SizeModel::filter(m, n, k, seed),
            Kind::Delta(c) => SizeModel::delta(m, n, k, c, seed),
        }
    }
}

fn make_plan(kind: Kind, n: u64, m: u64, k: u32, cons: &Constraints) -> Plan {
    let model = kind.model(m, n, k, cons.seed);
    let z = normal_quantile(cons.confidence);
    let expected = model.expected_frame_bytes();
    Plan {
        n,
        m,
        k,
        fpr: fpr_finite(m, n, k),
        bits_per_key: m as f64 / n.max(1) as f64,
        compressed_bits_per_key: expected * 8.0 / n.max(1) as f64,
        expected_bytes: expected,
        bound_bytes: model.bound_frame_bytes(z) as u64,
        confidence: cons.confidence,
        coded: model.coded(),
        delta_fraction: match kind {
            Kind::Filter => None,
            Kind::Delta(c) => Some(c),
        },
    }
}

/// Largest m in [1, cap] with `ok(m)`, assuming `ok` is monotone (true then
/// false); None if `ok(1)` fails.
fn largest_m(cap: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
    if !ok(1) {
        return None;
    }
    let (mut lo, mut hi) = (1u64, cap);
    if ok(hi) {
        return Some(hi);
    }
    // Invariant: ok(lo) && !ok(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// Smallest m in [1, cap] with `ok(m)` for a monotone (false then true) `ok`.
fn smallest_m(cap: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
    if !ok(cap) {
        return None;
    }
    let (mut lo, mut hi) = (0u64, cap);
    // Invariant: !ok(lo) (lo = 0 stands for "no filter") && ok(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

fn plan_size(kind: Kind, n: u64, budget: u64, cons: &Constraints) -> Result<Plan, PlanError> {
    cons.validate()?;
    let z = normal_quantile(cons.confidence);
    let fits =
        |m: u64, k: u32| kind.model(m, n, k, cons.seed).bound_frame_bytes(z) <= budget as f64;
    if n == 0 {
        // Every m has f = 0: the smallest filter (m = 1, k = 1) is the
        // sensible plan, not the largest array the budget could carry.
        if !fits(1, 1) {
            return Err(too_small(budget));
        }
        return Ok(make_plan(kind, n, 1, 1, cons));
    }
    let mut best: Option<(f64, u32, u64)> = None;
    for k in 1..=cons.k_cap() {
        let Some(m) = largest_m(cons.m_cap(), |m| fits(m, k)) else {
            continue;
        };
        let f = fpr_finite(m, n, k);
        // Strictly better only: ties keep the smaller k (cheaper lookups).
        if best.is_none_or(|(bf, _, _)| f < bf) {
            best = Some((f, k, m));
        }
    }
    let (_, k, m) = best.ok_or_else(|| too_small(budget))?;
    Ok(make_plan(kind, n, m, k, cons))
}

fn too_small(budget: u64) -> PlanError {
    PlanError::Infeasible {
        reason: format!("a budget of {budget} bytes cannot hold even a 1-bit filter frame"),
    }
}

fn plan_fpr(kind: Kind, n: u64, target: f64, cons: &Constraints) -> Result<Plan, PlanError> {
    cons.validate()?;
    if !(target > 0.0 && target < 1.0) {
        return Err(invalid("fpr", target, "a probability in (0, 1)"));
    }
    if n == 0 {
        return Ok(make_plan(kind, n, 1, 1, cons));
    }
    let mut best: Option<(f64, u32, u64)> = None;
    for k in 1..=cons.k_cap() {
        let Some(m) = smallest_m(cons.m_cap(), |m| fpr_finite(m, n, k) <= target) else {
            continue;
        };
        let size = kind.model(m, n, k, cons.seed).expected_frame_bytes();
        if best.is_none_or(|(bs, _, _)| size < bs) {
            best = Some((size, k, m));
        }
    }
    let (_, k, m) = best.ok_or_else(|| PlanError::Infeasible {
        reason: format!(
            "false-positive rate {target:e} needs more than the cap of {} bits on m for n = {n}",
            cons.m_cap()
        ),
    })?;
    Ok(make_plan(kind, n, m, k, cons))
}

internal! {
/// Frame size in bytes that a filter of n keys with (m, k), or its delta at
/// change fraction `delta_fraction`, stays within with probability at least
/// `cons.confidence` (the quantity [`plan_for_size`] keeps under the budget).
pub fn frame_bound_bytes(
    n: u64,
    m: u64,
    k: u32,
    delta_fraction: Option<f64>,
    cons: &Constraints,
) -> f64 {
    let kind = delta_fraction.map_or(Kind::Filter, Kind::Delta);
    kind.model(m, n, k, cons.seed)
        .bound_frame_bytes(normal_quantile(cons.confidence))
}
}

internal! {
/// Expected frame size in bytes of a filter of n keys with (m, k), or of its
/// delta at change fraction `delta_fraction`.
pub fn expected_frame_bytes(n: u64, m: u64, k: u32, delta_fraction: Option<f64>, seed: u64) -> f64 {
    let kind = delta_fraction.map_or(Kind::Filter, Kind::Delta);
    kind.model(m, n, k, seed).expected_frame_bytes()
}
}

/// The filter with the lowest false-positive rate whose frame stays within
/// `budget_bytes` with probability >= `cons.confidence`.
///
/// # Errors
/// Invalid constraints, or a budget too small for any frame.
///
/// # Examples
/// ```
/// use compressed_bloom::plan::{plan_for_size, Constraints};
/// let plan = plan_for_size(10_000, 10_000, &Constraints::default())?;
/// // Compression lets a 10 kB frame beat the standard 8-bits-per-key filter
/// // (f = 0.0216 with k = 6) with far fewer hash positions.
/// assert!(plan.fpr < 0.0216 && plan.k < 6 && plan.bound_bytes <= 10_000);
/// # Ok::<(), compressed_bloom::plan::PlanError>(())
/// ```
pub fn plan_for_size(n: u64, budget_bytes: u64, cons: &Constraints) -> Result<Plan, PlanError> {
    plan_size(Kind::Filter, n, budget_bytes, cons)
}

/// The smallest expected frame whose filter has a false-positive rate at most
/// `target_fpr`.
///
/// # Errors
/// Invalid arguments, or no m within `cons.max_m` reaches the target.
pub fn plan_for_fpr(n: u64, target_fpr: f64, cons: &Constraints) -> Result<Plan, PlanError> {
    plan_fpr(Kind::Filter, n, target_fpr, cons)
}

/// Like [`plan_for_size`], but the budget is for the delta frame sent after a
/// fraction `c` of the keys changed (§IV).
///
/// # Errors
/// As [`plan_for_size`], and c outside (0, 1].
pub fn plan_delta_for_size(
    n: u64,
    c: f64,
    budget_bytes: u64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    check_fraction(c)?;
    plan_size(Kind::Delta(c), n, budget_bytes, cons)
}

/// Like [`plan_for_fpr`], minimising the expected delta frame at change
/// fraction `c`.
///
/// # Errors
/// As [`plan_for_fpr`], and c outside (0, 1].
pub fn plan_delta_for_fpr(
    n: u64,
    c: f64,
    target_fpr: f64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    check_fraction(c)?;
    plan_fpr(Kind::Delta(c), n, target_fpr, cons)
}

internal! {
/// The standard (uncompressed-optimal) filter for the same byte budget, for
/// comparison: m fills the raw frame, k is the best integer near ln2·m/n.
///
/// # Errors
/// A budget too small for a raw frame.
pub fn standard_for_size(n: u64, budget_bytes: u64, seed: u64) -> Result<Plan, PlanError> {
    let raw_fits = |m: u64| {
        m.div_ceil(8) + header::frame_overhead(seed, m, 1, n, m.div_ceil(8)) as u64 <= budget_bytes
    };
    let m = largest_m(MAX_M, raw_fits).ok_or_else(|| too_small(budget_bytes))?;
    Ok(raw_standard(n, m, seed))
}
}

/// The standard filter of m bits (sent raw) with the best integer k for
/// (m, n), its sizes those of the raw frame.
fn raw_standard(n: u64, m: u64, seed: u64) -> Plan {
    let k = best_k_uncompressed(m, n);
    let cons = Constraints {
        seed,
        ..Constraints::default()
    };
    let mut plan = make_plan(Kind::Filter, n, m, k, &cons);
    raw_sizes(&mut plan, seed);
    plan
}

internal! {
/// The standard filter (sent raw) with the smallest m whose best integer k
/// reaches `target_fpr`, for comparison with [`plan_for_fpr`].
///
/// # Errors
/// Invalid target, or none within 2^56 bits.
pub fn standard_for_fpr(n: u64, target_fpr: f64, seed: u64) -> Result<Plan, PlanError> {
    if !(target_fpr > 0.0 && target_fpr < 1.0) {
        return Err(invalid("fpr", target_fpr, "a probability in (0, 1)"));
    }
    let m = smallest_m(MAX_M, |m| {
        fpr_finite(m, n, best_k_uncompressed(m, n)) <= target_fpr
    })
    .ok_or_else(|| PlanError::Infeasible {
        reason: "target below what 2^56 bits can reach".into(),
    })?;
    Ok(raw_standard(n, m, seed))
}
}

internal! {
/// The standard filter (k the best integer near ln2·m/n) with the largest m
/// whose *delta* at change fraction `c` fits `budget_bytes`, with the delta's
/// sizes: the first column of the paper's Tables VI and VII.
///
/// # Errors
/// c outside (0, 1], or a budget too small for any delta frame.
pub fn standard_delta_for_size(
    n: u64,
    c: f64,
    budget_bytes: u64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    check_fraction(c)?;
    cons.validate()?;
    let z = normal_quantile(cons.confidence);
    let fits = |m: u64| {
        let k = best_k_uncompressed(m, n);
        SizeModel::delta(m, n, k, c, cons.seed).bound_frame_bytes(z) <= budget_bytes as f64
    };
    let m = largest_m(cons.m_cap(), fits).ok_or_else(|| too_small(budget_bytes))?;
    Ok(make_plan(
        Kind::Delta(c),
        n,
        m,
        best_k_uncompressed(m, n),
        cons,
    ))
}
}

internal! {
/// The standard filter reaching `target_fpr` (smallest m, best integer k),
/// with the sizes of its delta at change fraction `c`.
///
/// # Errors
/// Invalid arguments, or no m within 2^56 bits reaches the target.
pub fn standard_delta_for_fpr(
    n: u64,
    c: f64,
    target_fpr: f64,
    cons: &Constraints,
) -> Result<Plan, PlanError> {
    check_fraction(c)?;
    cons.validate()?;
    let s = standard_for_fpr(n, target_fpr, cons.seed)?;
    Ok(make_plan(Kind::Delta(c), n, s.m, s.k, cons))
}
}

fn raw_sizes(plan: &mut Plan, seed: u64) {
    let raw = plan.m.div_ceil(8);
    let bytes = raw + header::frame_overhead(seed, plan.m, plan.k, plan.n, raw) as u64;
    plan.expected_bytes = bytes as f64;
    plan.bound_bytes = bytes;
    plan.compressed_bits_per_key = bytes as f64 * 8.0 / plan.n.max(1) as f64;
    plan.coded = false;
}

internal! {
/// The integer k minimising the finite false-positive rate for (m, n),
/// i.e. ⌊ln2·m/n⌋ or ⌈ln2·m/n⌉ (clamped to 1..=MAX_K).
pub fn best_k_uncompressed(m: u64, n: u64) -> u32 {
    if n == 0 {
        return 1;
    }
    let x = LN_2 * m as f64 / n as f64;
    let lo = (x.floor() as u32).clamp(1, MAX_K);
    let hi = (lo + 1).min(MAX_K);
    if fpr_finite(m, n, hi) < fpr_finite(m, n, lo) {
        hi
    } else {
        lo
    }
}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variance_matches_small_exact_enumeration() {
        // m = 3 bits, kn = 2 throws: enumerate the 9 equally likely outcomes.
        // Zeros = 2 when both throws hit the same bit (3 of 9), else 1.
        // E[X] = (2·3 + 1·6)/9 = 4/3, E[X²] = (4·3 + 1·6)/9 = 2, Var = 2 − 16/9 = 2/9.
        let v = zero_count_variance(3, 2, 1);
        assert!((v - 2.0 / 9.0).abs() < 1e-12, "{v}");
        assert!((zero_fraction(3, 2, 1) * 3.0 - 4.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn rejects_nonsense() {
        let c = Constraints::default();
        assert!(plan_for_fpr(10, f64::NAN, &c).is_err());
        assert!(plan_for_fpr(10, 0.0, &c).is_err());
        assert!(plan_for_fpr(10, 1.0, &c).is_err());
        assert!(plan_delta_for_size(10, f64::INFINITY, 100, &c).is_err());
        assert!(plan_delta_for_size(10, 0.0, 100, &c).is_err());
        let bad = Constraints {
            confidence: f64::NAN,
            ..c
        };
        assert!(plan_for_size(10, 100, &bad).is_err());
        assert!(matches!(
            plan_for_size(10, 3, &c),
            Err(PlanError::Infeasible { .. })
        ));
    }

    #[test]
    fn empty_set_plans() {
        let c = Constraints::default().with_max_bits_per_key(1000.0, 1);
        let p = plan_for_size(0, 100, &c).unwrap();
        assert_eq!(p.fpr, 0.0);
        assert!(p.bound_bytes <= 100);
        let p = plan_for_fpr(0, 0.01, &c).unwrap();
        assert_eq!(p.m, 1);
    }
}
