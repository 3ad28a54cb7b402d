//! Key hashing and bit positions.
//!
//! Every implementation of the format must set exactly the same bits for the
//! same key, so this module is specified byte for byte in `docs/FORMAT.md`
//! (section "Hashing"):
//!
//! 1. `h = XXH3-128(key, seed)` (the 128-bit XXH3 with a 64-bit seed);
//!    `h1 = low 64 bits of h`, `h2 = high 64 bits of h`.
//! 2. Kirsch–Mitzenmacher enhanced double hashing in Z/2^64:
//!    `g_i = h1 + i·h2 + (i³ − i)/6  (mod 2^64)`, for i = 0..k−1.
//! 3. Position `i` is `⌊g_i · m / 2^64⌋` (a 64×64→128-bit multiply keeping the
//!    high half), which maps onto `[0, m)` for any m without the low-bit
//!    modulo bias of `g mod m` and without a division.
//!
//! All arithmetic is on fixed-width unsigned integers, so results do not
//! depend on the platform's word size or endianness.

use xxhash_rust::xxh3::xxh3_128_with_seed;

/// Identifies the hash-to-position scheme on the wire.
///
/// Only one scheme exists in format version 1; the id travels so a future
/// scheme can be added without ambiguity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashScheme {
    /// XXH3-128 with a 64-bit seed, enhanced double hashing, multiply-shift
    /// reduction. Wire id 1.
    Xxh3EnhancedDouble,
}

impl HashScheme {
    /// The scheme's one-byte id in the frame header.
    pub const fn id(self) -> u8 {
        match self {
            HashScheme::Xxh3EnhancedDouble => 1,
        }
    }

    /// The scheme with wire id `id`, if this version knows it.
    pub const fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(HashScheme::Xxh3EnhancedDouble),
            _ => None,
        }
    }
}

/// The two 64-bit base hashes of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHash {
    /// Low 64 bits of XXH3-128(key, seed).
    pub h1: u64,
    /// High 64 bits of XXH3-128(key, seed).
    pub h2: u64,
}

impl KeyHash {
    /// Hashes `key` with `seed`.
    #[inline]
    pub fn new(key: &[u8], seed: u64) -> Self {
        let h = xxh3_128_with_seed(key, seed);
        KeyHash {
            h1: h as u64,
            h2: (h >> 64) as u64,
        }
    }

    /// The k bit positions in `[0, m)` of this key (m must be at least 1).
    #[inline]
    pub fn positions(self, m: u64, k: u32) -> Positions {
        Positions {
            a: self.h1,
            b: self.h2,
            i: 0,
            k,
            m,
        }
    }
}

/// Iterator over the k positions of one key; see the module docs.
#[derive(Clone, Debug)]
pub struct Positions {
    a: u64,
    b: u64,
    i: u32,
    k: u32,
    m: u64,
}

impl Iterator for Positions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.i >= self.k {
            return None;
        }
        let pos = reduce(self.a, self.m);
        // a_{i+1} = a_i + b_i and b_{i+1} = b_i + (i + 1) give
        // a_i = h1 + i·h2 + (i³ − i)/6, all modulo 2^64.
        self.i += 1;
        self.a = self.a.wrapping_add(self.b);
        self.b = self.b.wrapping_add(u64::from(self.i));
        Some(pos)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.k - self.i) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Positions {}

/// Maps a 64-bit value uniformly onto `[0, m)`: `⌊x·m / 2^64⌋`.
///
/// Each output has either ⌊2^64/m⌋ or ⌈2^64/m⌉ preimages, so the relative
/// deviation from uniform is at most m/2^64 (below 2^-24 for m < 2^40), and
/// unlike `x mod m` it uses the high bits of x.
#[inline]
pub fn reduce(x: u64, m: u64) -> u64 {
    ((u128::from(x) * u128::from(m)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_matches_incremental() {
        let kh = KeyHash::new(b"closed form", 99);
        let m = u64::MAX;
        let got: Vec<u64> = kh.positions(m, 40).collect();
        for (i, &p) in got.iter().enumerate() {
            let i = i as u64;
            let cubic = (i * i * i - i) / 6;
            let g = kh
                .h1
                .wrapping_add(i.wrapping_mul(kh.h2))
                .wrapping_add(cubic);
            assert_eq!(p, reduce(g, m));
        }
    }

    #[test]
    fn reduce_stays_in_range() {
        for m in [1u64, 2, 3, 7, 1000, u64::MAX] {
            for x in [0u64, 1, u64::MAX / 2, u64::MAX] {
                assert!(reduce(x, m) < m);
            }
        }
        assert_eq!(reduce(u64::MAX, 10), 9);
        assert_eq!(reduce(0, 10), 0);
    }

    #[test]
    fn scheme_ids_round_trip() {
        assert_eq!(
            HashScheme::from_id(HashScheme::Xxh3EnhancedDouble.id()),
            Some(HashScheme::Xxh3EnhancedDouble)
        );
        assert_eq!(HashScheme::from_id(0), None);
        assert_eq!(HashScheme::from_id(2), None);
    }
}
