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
//!
//! Scheme 2 ([`HashScheme::SquidMd5`], format version 3) is Squid's cache
//! digest hashing, so that digests Squid sends can be held and queried
//! as they are: `h = MD5(key)`, cut into four big-endian 32-bit words
//! `w_0..w_3`, and position `i` is `w_i mod m` (k = 4, m < 2^32, seed 0).
//! Squid's key is its method id as one byte followed by the URL
//! ([`crate::kinds::squid::store_key`]).

use md5::{Digest, Md5};
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// Identifies the hash-to-position scheme on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashScheme {
    /// XXH3-128 with a 64-bit seed, enhanced double hashing, multiply-shift
    /// reduction. Wire id 1.
    Xxh3EnhancedDouble,
    /// Squid's cache digest hashing: MD5 of the key, four big-endian 32-bit
    /// words, each modulo m. Requires k = 4, m < 2^32 and seed 0. Wire id
    /// 2, format version 3.
    SquidMd5,
}

impl HashScheme {
    /// The scheme's one-byte id in the frame header.
    pub const fn id(self) -> u8 {
        match self {
            HashScheme::Xxh3EnhancedDouble => 1,
            HashScheme::SquidMd5 => 2,
        }
    }

    /// The scheme with wire id `id`, if this version knows it.
    pub const fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(HashScheme::Xxh3EnhancedDouble),
            2 => Some(HashScheme::SquidMd5),
            _ => None,
        }
    }

    /// The lowest format version that defines this scheme.
    pub const fn min_version(self) -> u8 {
        match self {
            HashScheme::Xxh3EnhancedDouble => 1,
            HashScheme::SquidMd5 => 3,
        }
    }

    /// A short name for messages and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            HashScheme::Xxh3EnhancedDouble => "xxh3",
            HashScheme::SquidMd5 => "squid-md5",
        }
    }

    /// The 128-bit hash of `key` under this scheme (`seed` is ignored by
    /// [`HashScheme::SquidMd5`], whose filters have seed 0).
    #[inline]
    pub fn hash(self, key: &[u8], seed: u64) -> KeyHash {
        match self {
            HashScheme::Xxh3EnhancedDouble => KeyHash::new(key, seed),
            HashScheme::SquidMd5 => {
                let d: [u8; 16] = Md5::digest(key).into();
                let (hi, lo) = d.split_at(8);
                KeyHash {
                    h1: u64::from_be_bytes(hi.try_into().unwrap_or([0; 8])),
                    h2: u64::from_be_bytes(lo.try_into().unwrap_or([0; 8])),
                }
            }
        }
    }
}

/// The two 64-bit base hashes of a key.
///
/// For [`HashScheme::SquidMd5`], `h1` is the MD5 digest's first eight
/// bytes read big-endian (Squid's words 0 and 1) and `h2` its last eight
/// (words 2 and 3).
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
            squid: false,
        }
    }

    /// The k bit positions in `[0, m)` of this key under `scheme`: for
    /// [`HashScheme::SquidMd5`], word `i` of the digest modulo m (k ≤ 4:
    /// the positions stop after the fourth word).
    #[inline]
    pub fn positions_for(self, scheme: HashScheme, m: u64, k: u32) -> Positions {
        match scheme {
            HashScheme::Xxh3EnhancedDouble => self.positions(m, k),
            HashScheme::SquidMd5 => Positions {
                a: self.h1,
                b: self.h2,
                i: 0,
                k: k.min(4),
                m,
                squid: true,
            },
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
    /// Squid's words (scheme 2) instead of enhanced double hashing.
    squid: bool,
}

impl Iterator for Positions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.i >= self.k {
            return None;
        }
        if self.squid {
            // The next word is the top half of a; shift the 128 bits left.
            let word = self.a >> 32;
            self.a = (self.a << 32) | (self.b >> 32);
            self.b <<= 32;
            self.i += 1;
            return Some(word % self.m.max(1));
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

internal! {
/// Maps a 64-bit value uniformly onto `[0, m)`: `⌊x·m / 2^64⌋`.
///
/// Each output has either ⌊2^64/m⌋ or ⌈2^64/m⌉ preimages, so the relative
/// deviation from uniform is at most m/2^64 (below 2^-24 for m < 2^40), and
/// unlike `x mod m` it uses the high bits of x.
#[inline]
pub fn reduce(x: u64, m: u64) -> u64 {
    ((u128::from(x) * u128::from(m)) >> 64) as u64
}
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
        assert_eq!(
            HashScheme::from_id(HashScheme::SquidMd5.id()),
            Some(HashScheme::SquidMd5)
        );
        assert_eq!(HashScheme::from_id(0), None);
        assert_eq!(HashScheme::from_id(3), None);
    }

    /// RFC 1321's test vector MD5("abc") = 900150983cd24fb0d6963f7d28e17f72,
    /// cut into Squid's four big-endian words by hand.
    #[test]
    fn squid_words_are_big_endian_md5_words() {
        let h = HashScheme::SquidMd5.hash(b"abc", 0);
        assert_eq!(h.h1, 0x9001_5098_3cd2_4fb0);
        assert_eq!(h.h2, 0xd696_3f7d_28e1_7f72);
        let m = 1u64 << 32;
        let got: Vec<u64> = h.positions_for(HashScheme::SquidMd5, m, 4).collect();
        assert_eq!(got, [0x9001_5098, 0x3cd2_4fb0, 0xd696_3f7d, 0x28e1_7f72]);
        let got: Vec<u64> = h.positions_for(HashScheme::SquidMd5, 1000, 4).collect();
        assert_eq!(
            got,
            [
                0x9001_5098 % 1000,
                0x3cd2_4fb0 % 1000,
                0xd696_3f7d % 1000,
                0x28e1_7f72 % 1000
            ]
        );
    }
}
