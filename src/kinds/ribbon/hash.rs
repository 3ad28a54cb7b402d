//! From a key's hash to its equation (docs/FORMAT.md section 8.5, "Key to
//! equation"). The key is hashed once, as for every kind:
//! `(h1, h2) = XXH3-128(key, seed)` (section 1). Then
//!
//! * the shard is `⌊h1 · S / 2^64⌋` (S shards);
//! * within a shard with construction seed `c` (one byte) and `t` possible
//!   start rows, with `z = h2 XOR ((c + 1) · 0xD6E8FEB86659FD93 mod 2^64)`
//!   and `v_j = mix(z + j · 0x9E3779B97F4A7C15 mod 2^64)` for j = 0..3
//!   (`mix` is MurmurHash3's 64-bit finaliser): the start row is
//!   `⌊v_0 · t / 2^64⌋`, the coefficient row is `v_1 | v_2 << 64` with its
//!   bit 0 set, and the fingerprint is `v_3` (bit j is the right-hand side
//!   of column j).
//!
//! Only h1 chooses the shard and only h2 the equation, so the two are
//! independent; keys with equal h2 in one shard get the same equation and
//! the same fingerprint, so a duplicate key never makes a system
//! unsolvable. Changing `c` changes every equation of the shard without
//! hashing the keys again, which is what a retry after a failed
//! construction needs.

use crate::hash::{reduce, KeyHash};

/// Odd multiplier that spreads the construction seed over 64 bits.
pub const SEED_MULTIPLIER: u64 = 0xD6E8_FEB8_6659_FD93;
/// The step between the four mixed values (2^64 / φ, odd).
pub const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// MurmurHash3's 64-bit finaliser: a bijection on u64 whose output bits
/// each depend on every input bit, so consecutive inputs give unrelated
/// outputs.
#[inline]
pub const fn mix(mut v: u64) -> u64 {
    v ^= v >> 33;
    v = v.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    v ^= v >> 33;
    v = v.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    v ^= v >> 33;
    v
}

/// One key's equation within its shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Equation {
    /// The first row the coefficient row covers, in `[0, t)`.
    pub start: u64,
    /// Bit i is the coefficient of row `start + i`; bit 0 is always 1.
    pub coef: u128,
    /// Bit j is the right-hand side in column j.
    pub fingerprint: u64,
}

/// The shard of a key among `shards` (at least 1).
#[inline]
pub fn shard_of(h: KeyHash, shards: u64) -> u64 {
    reduce(h.h1, shards)
}

/// `z`: the key's h2 under construction seed `cseed`.
#[inline]
pub fn seeded(h: KeyHash, cseed: u8) -> u64 {
    seeded_h2(h.h2, cseed)
}

/// [`seeded`] from h2 alone (all a shard's equations need of a key).
#[inline]
pub fn seeded_h2(h2: u64, cseed: u8) -> u64 {
    h2 ^ (u64::from(cseed).wrapping_add(1)).wrapping_mul(SEED_MULTIPLIER)
}

/// The start row of a key with seeded hash `z` (see [`seeded`]) among
/// `starts` possible start rows: `v_0` reduced.
#[inline]
pub fn start_of(z: u64, starts: u64) -> u64 {
    reduce(mix(z), starts)
}

/// The coefficient row (low half, high half; bit 0 set) and the
/// fingerprint of a key with seeded hash `z`: `v_1`, `v_2`, `v_3`.
#[inline]
pub fn row_of(z: u64) -> (u64, u64, u64) {
    (
        mix(z.wrapping_add(STEP)) | 1,
        mix(z.wrapping_add(STEP.wrapping_mul(2))),
        mix(z.wrapping_add(STEP.wrapping_mul(3))),
    )
}

/// The equation of a key in a shard with construction seed `cseed` and
/// `starts` possible start rows (its rows − 127).
#[inline]
pub fn equation(h: KeyHash, cseed: u8, starts: u64) -> Equation {
    let z = seeded(h, cseed);
    let (lo, hi, fingerprint) = row_of(z);
    Equation {
        start: start_of(z, starts),
        coef: u128::from(lo) | (u128::from(hi) << 64),
        fingerprint,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 is the finaliser's fixed point, and distinct inputs give distinct
    /// outputs.
    #[test]
    fn mix_is_a_bijection_on_small_inputs() {
        assert_eq!(mix(0), 0);
        let mut seen: Vec<u64> = (0..4096u64).map(mix).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 4096);
    }

    #[test]
    fn equation_fields_are_in_range() {
        for i in 0..1000u64 {
            let h = KeyHash::new(&i.to_le_bytes(), 3);
            for starts in [1u64, 2, 129, 1 << 40] {
                let e = equation(h, (i % 256) as u8, starts);
                assert!(e.start < starts);
                assert_eq!(e.coef & 1, 1);
            }
            assert!(shard_of(h, 7) < 7);
        }
    }
}
