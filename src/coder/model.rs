//! The adaptive probability model, in integer arithmetic only.
//!
//! Encoder and decoder rebuild the model in lockstep from what both have seen
//! (the bit position and the count of ones so far), so no table travels. The
//! model is the paper's i.i.d. bit model, re-expressed over *runs*:
//!
//! * the minority bit value has probability p (KT estimate
//!   p = (2c + 1)/(2b + 2) for c minority bits among b bits seen);
//! * a run of r majority bits ended by a minority bit has probability
//!   (1 − p)^r·p, which factorises exactly into a *bucket* j = ⌊r / 2^t⌋
//!   with geometric weights, the t low bits of r (close to uniform because
//!   p·2^t ≤ 1/16), and an *escape* symbol for "2^t·L majority bits, run goes
//!   on" (memorylessness makes the escape reusable).
//!
//! All quantities are fixed-point (Q32 probabilities, 12-bit frequencies)
//! with floor rounding, so every implementation builds bit-identical tables:
//! `docs/FORMAT.md`, section "Model", is the normative description.

/// Frequencies sum to 2^PROB_BITS.
pub(crate) const PROB_BITS: u32 = 12;
/// Total frequency.
pub(crate) const PROB_SCALE: u32 = 1 << PROB_BITS;
/// At most this many bucket symbols (the escape is one more).
pub(crate) const MAX_BUCKETS: usize = 96;
/// The first model rebuild happens at this many bits; then at every doubling.
pub(crate) const FIRST_STAGE: u64 = 16;

// The decode table packs (symbol, frequency, bias) into the low 32 bits:
// symbol < 2^7, frequency <= 2^12 (13 bits), bias < 2^12.
const _: () = assert!(MAX_BUCKETS < 128);
const _: () = assert!(PROB_BITS == 12);

/// One stage of the model: everything needed to code runs until the next
/// rebuild.
#[derive(Clone, Debug)]
pub(crate) struct Model {
    /// True when 1 is the minority value (runs are of zeros, ended by a one).
    pub minority_is_one: bool,
    /// Bucket width is 2^t majority bits; the t low bits are coded uniformly.
    pub t: u32,
    /// Number of bucket symbols L; symbol L is the escape.
    pub buckets: u32,
    /// Majority bits one escape stands for: L·2^t.
    pub escape_len: u64,
    /// Frequency of each symbol (buckets then escape), summing to 2^12.
    pub freq: [u16; MAX_BUCKETS + 1],
    /// Cumulative frequency before each symbol.
    pub start: [u16; MAX_BUCKETS + 1],
}

impl Model {
    /// The model after `bits` bits of which `ones` were ones.
    ///
    /// Overflow: the coder calls this with `bits` <= 2^40 (a position in a
    /// type-1 block of at most [`BLOCK_BITS`](super::BLOCK_BITS) = 2^23
    /// bits, or a type-4 block's size) and `ones` <= `bits`, whatever the
    /// input bytes are. Then 2c + 1 <= 2^41 and the Q32 numerator fits in
    /// u128;
    /// p < 2^32, and p·2^(t+1) <= 2^29 while t grows; g < 2^32, so every
    /// product of two Q32 values fits in u64; weights and `rem` only shrink.
    /// Overflow checks stay on in tests and fuzz builds, which would turn any
    /// counter-example into a crash.
    #[allow(clippy::arithmetic_side_effects)]
    pub(crate) fn build(bits: u64, ones: u64) -> Model {
        debug_assert!(ones <= bits);
        let minority_is_one = ones.saturating_mul(2) <= bits;
        let minority = if minority_is_one { ones } else { bits - ones };
        // p in Q32, in (0, 2^31]: (2c + 1)/(2b + 2) with 2c + 1 <= b + 1.
        let num = (u128::from(minority) * 2 + 1) << 32;
        let den = u128::from(bits) * 2 + 2;
        let p = (num / den) as u64;
        let p = p.max(1);
        // Largest t with p·2^t <= 2^28 (i.e. p·2^t <= 1/16), at most 40.
        let mut t = 0u32;
        while t < 40 && (p << (t + 1)) <= 1 << 28 {
            t += 1;
        }
        // g = (1 − p)^(2^t) in Q32 by t squarings, floor each time.
        let mut g = (1u64 << 32) - p;
        for _ in 0..t {
            g = (g * g) >> 32;
        }
        // Bucket weights: w_j = g^j − g^(j+1) (Q32), until the remaining mass
        // (the escape) is at most 1/16 or MAX_BUCKETS buckets exist.
        let mut weights = [0u64; MAX_BUCKETS + 1];
        let mut rem: u64 = 1 << 32;
        let mut buckets = 0usize;
        // At most MAX_BUCKETS buckets, then the escape in the last slot.
        for w in weights.iter_mut().take(MAX_BUCKETS) {
            let next = (rem * g) >> 32;
            *w = rem - next;
            rem = next;
            buckets += 1;
            if rem <= 1 << 28 {
                break;
            }
        }
        let nsym = buckets + 1;
        let weights = weights.get_mut(..nsym).unwrap_or_default();
        if let Some(escape) = weights.last_mut() {
            *escape = rem;
        }
        let freq = quantize(weights);
        let mut f = [0u16; MAX_BUCKETS + 1];
        let mut s = [0u16; MAX_BUCKETS + 1];
        let mut acc = 0u32;
        for ((f, s), &q) in f.iter_mut().zip(&mut s).zip(&freq).take(nsym) {
            *f = q as u16;
            *s = acc as u16;
            acc += q;
        }
        debug_assert_eq!(acc, PROB_SCALE);
        Model {
            minority_is_one,
            t,
            buckets: buckets as u32,
            escape_len: (buckets as u64) << t,
            freq: f,
            start: s,
        }
    }

    /// True when `other` codes every symbol exactly as `self` does.
    pub(crate) fn same_tables(&self, other: &Model) -> bool {
        self.minority_is_one == other.minority_is_one
            && self.t == other.t
            && self.buckets == other.buckets
            && self.freq == other.freq
    }

    /// Fills the 2^12-entry decode table. Entry layout (u64):
    /// bits 0–6 symbol, 7–19 frequency, 20–31 bias = slot − start(symbol);
    /// bits 32–62 the bits a t = 0 symbol advances (s + 1 for bucket s,
    /// escape_len for the escape) and bit 63 set for bucket symbols (they end
    /// with a minority bit). The last two serve the decoder's fast path.
    pub(crate) fn fill_decode_table(&self, table: &mut [u64; PROB_SCALE as usize]) {
        let symbols = self.freq.iter().zip(&self.start).enumerate();
        for (sym, (&f, &st)) in symbols.take((self.buckets as usize).saturating_add(1)) {
            let (adv, bucket) = if sym == self.buckets as usize {
                (self.escape_len & 0x7fff_ffff, 0u64)
            } else {
                ((sym as u64).saturating_add(1), 1u64)
            };
            let hi = (adv | bucket << 31) << 32;
            // The frequencies sum to 2^12 and start is their running sum, so
            // the symbols' slots tile the table exactly.
            let slots = usize::from(st)..usize::from(st).saturating_add(usize::from(f));
            for (bias, slot) in (0u64..).zip(table.get_mut(slots).unwrap_or_default()) {
                *slot = sym as u64 | u64::from(f) << 7 | bias << 20 | hi;
            }
        }
    }
}

/// Scales Q32 weights to frequencies summing to exactly 2^12, each >= 1:
/// round to nearest, then move the difference onto the largest frequency
/// (ties: lowest index), one unit at a time, never below 1.
///
/// Overflow: at most 97 weights of at most 2^32 each, so each scaled weight
/// is below 2^13 and their sum below 2^20.
#[allow(clippy::arithmetic_side_effects)]
fn quantize(weights: &[u64]) -> [u32; MAX_BUCKETS + 1] {
    let mut freq = [0u32; MAX_BUCKETS + 1];
    let mut sum = 0u32;
    for (f, &w) in freq.iter_mut().zip(weights) {
        // w <= 2^32 so w·2^12 + 2^31 < 2^45: no overflow.
        *f = (((w * u64::from(PROB_SCALE) + (1 << 31)) >> 32) as u32).max(1);
        sum += *f;
    }
    let used = freq.get_mut(..weights.len()).unwrap_or_default();
    while sum != PROB_SCALE {
        // The largest frequency, lowest index on ties.
        let mut best: Option<&mut u32> = None;
        for f in used.iter_mut() {
            if best.as_ref().is_none_or(|b| *f > **b) {
                best = Some(f);
            }
        }
        let Some(best) = best else {
            break; // no symbols: unreachable, the model has at least two
        };
        if sum > PROB_SCALE {
            // The largest frequency is >= 2^12 / 97 > 1, so this never
            // takes a frequency below 1.
            *best -= 1;
            sum -= 1;
        } else {
            *best += 1;
            sum += 1;
        }
    }
    freq
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_breaks_ties_toward_the_lowest_index() {
        // Three weights of ⌊2^32/3⌋ round to 1365 each (sum 4095); the
        // missing unit goes to the largest, the first of three equal ones.
        let w = (1u64 << 32) / 3;
        assert_eq!(&quantize(&[w, w, w])[..3], &[1366, 1365, 1365]);
        // Four of ⌊2^32/3⌋ round to 1365 each (sum 5460): 1364 units come off
        // one at a time, always from the currently largest, lowest first.
        let f = quantize(&[w, w, w, w]);
        assert_eq!(f[..4].iter().sum::<u32>(), PROB_SCALE);
        assert_eq!(&f[..4], &[1024, 1024, 1024, 1024]);
    }

    fn check(m: &Model) {
        let total: u32 = m.freq[..=m.buckets as usize]
            .iter()
            .map(|&f| u32::from(f))
            .sum();
        assert_eq!(total, PROB_SCALE);
        assert!(m.freq[..=m.buckets as usize].iter().all(|&f| f >= 1));
        assert!(m.buckets >= 1 && m.buckets as usize <= MAX_BUCKETS);
    }

    #[test]
    fn initial_model_is_fair_coin() {
        let m = Model::build(0, 0);
        check(&m);
        assert!(m.minority_is_one);
        assert_eq!(m.t, 0);
        // p = 1/2: buckets 1/2, 1/4, 1/8, 1/16 and escape 1/16.
        assert_eq!(m.buckets, 4);
        assert_eq!(&m.freq[..5], &[2048, 1024, 512, 256, 256]);
    }

    #[test]
    fn models_valid_across_densities() {
        for bits in [1u64, 7, 16, 100, 1000, 1 << 20, 1 << 23] {
            for ones in [0, 1, bits / 100, bits / 7, bits / 2, bits - bits / 3, bits] {
                let m = Model::build(bits, ones);
                check(&m);
                assert_eq!(m.minority_is_one, ones * 2 <= bits);
            }
        }
    }

    #[test]
    fn sparse_models_use_wide_buckets() {
        let m = Model::build(1 << 23, 100);
        check(&m);
        assert!(m.t > 0);
        // p·2^t in (1/32, 1/16]: p = 201 / (2^24 + 2).
        let p = 201.0 / ((1u64 << 24) as f64 + 2.0);
        let scaled = p * (1u64 << m.t) as f64;
        assert!(
            scaled <= 1.0 / 16.0 && scaled > 1.0 / 32.0 - 1e-9,
            "{scaled}"
        );
    }

    #[test]
    fn decode_table_inverts_start_freq() {
        let m = Model::build(1000, 133);
        let mut table = [0u64; PROB_SCALE as usize];
        m.fill_decode_table(&mut table);
        for (slot, &e) in table.iter().enumerate() {
            let sym = (e & 127) as usize;
            let f = (e >> 7) & 0x1fff;
            let bias = (e >> 20) & 0xfff;
            assert_eq!(u64::from(m.freq[sym]), f);
            assert_eq!(u64::from(m.start[sym]) + bias, slot as u64);
            let bucket = sym < m.buckets as usize;
            assert_eq!(e >> 63 == 1, bucket);
            let adv = (e >> 32) & 0x7fff_ffff;
            assert_eq!(
                adv,
                if bucket {
                    sym as u64 + 1
                } else {
                    m.escape_len & 0x7fff_ffff
                }
            );
        }
    }
}
