//! BIP158 basic block filters, byte for byte: the Golomb-coded sets that
//! Bitcoin full nodes serve to light clients (BIP157/158), held as this
//! crate's sparse kind under hash scheme 3.
//!
//! A block's filter is the set of its scripts (every output script but
//! empty and `OP_RETURN` ones, and every script its inputs spend), each
//! hashed with SipHash-2-4 keyed by the block hash's first 16 bytes and
//! mapped onto `[0, N·784931)`: [`HashScheme::Bip158SipHash`]. BIP158
//! sends the sorted values as Golomb-Rice codes (P = 19, most significant
//! bit first) after N as a `CompactSize`; this crate's frame carries the
//! same values as a sparse position list (docs/FORMAT.md sections 1.2 and
//! 8.4) with the block hash in metadata record 3, so that a filter can be
//! checked, signed and published like any other, and its BIP158 bytes
//! given back exactly.
//!
//! Two distinct scripts can hash to the same value (for N scripts about
//! N/1.6·10^6 such pairs are expected per block): BIP158 then codes a
//! difference of 0. A sparse list holds each position once, so the values
//! that occur more than once travel beside it (the payload's repeat
//! list) and the export codes them again.
//!
//! Byte order: every hash here (block hash, filter hash, filter header)
//! is in *internal* order, as SHA-256d outputs it; block explorers and
//! Bitcoin Core's RPC print them reversed.
//!
//! Deviations from what Bitcoin Core accepts, both on byte strings Core
//! never produces: non-zero padding bits after the last code, and values
//! at or past N·784931, are refused on import, so that the export is
//! exactly the import.

// The kind on the wire: the sparse frame with the block hash and the
// repeats, and `Kind` (above the frame layer, which it uses).
mod kind;
// The frame functions, for the crate's tests, tools and CLI; the API is
// the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{encode_bip158, decode_bip158};
}

use crate::filter::FilterParams;
use crate::wire::compact_size::{self, CompactSizeError};
use crate::wire::limits::DecodeLimits;
use crate::hash::{reduce, siphash24, HashScheme};
use crate::kinds::sparse::{EliasFano, SparseFilter};
use crate::prelude::*;
use sha2::{Digest, Sha256};
use thiserror::Error;

const M: u64 = Bip158Filter::M;
const P: u32 = Bip158Filter::P;
const MAX_ELEMENTS: u64 = Bip158Filter::MAX_ELEMENTS;
/// The fewest bits a value's code takes: its terminating zero and P bits.
const MIN_CODE_BITS: u64 = P as u64 + 1;
/// Length of a block hash, a filter hash and a filter header.
pub(crate) const HASH_LEN: usize = 32;

/// The m of a filter of `n` scripts: `max(n, 1)·M` (m is at least 1 in
/// every frame; a filter of no scripts answers false whatever m is).
/// `None` past u64.
pub(crate) const fn range_for(n: u64) -> Option<u64> {
    let n = if n == 0 { 1 } else { n };
    n.checked_mul(M)
}

/// Why BIP158 bytes, or a frame's BIP158 filter, were refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bip158Error {
    /// N is missing, truncated, or not in the shortest `CompactSize` form
    /// (Bitcoin Core refuses non-canonical sizes).
    #[error("bad CompactSize for N at byte {offset}: {reason}")]
    BadCompactSize {
        /// Byte offset of the size.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// N is above Bitcoin Core's `MAX_SIZE`, above what the bytes can hold
    /// (each value takes at least P + 1 = 20 bits), or its values would
    /// take more memory than the limits allow.
    #[error("{n} elements declared, at most {limit} fit")]
    TooManyElements {
        /// The declared N.
        n: u64,
        /// The most the input or the limits admit.
        limit: u64,
    },
    /// The Golomb-Rice stream ends inside value `index`.
    #[error("value {index} runs past the end of the filter (bit {bit})")]
    Truncated {
        /// Which value (0-based).
        index: u64,
        /// Bit offset in the stream where it ran out.
        bit: u64,
    },
    /// Value `index` is at or past N·M.
    #[error("value {index} is at or past N·M = {range}")]
    ValueOutOfRange {
        /// Which value (0-based).
        index: u64,
        /// N·M.
        range: u64,
    },
    /// Whole bytes follow the last value.
    #[error("{bytes} bytes after the last value")]
    TrailingData {
        /// How many.
        bytes: u64,
    },
    /// The bits after the last value, in its byte, are not all zero (Bitcoin
    /// Core writes zeros there; a filter that differs cannot be given back
    /// byte for byte).
    #[error("non-zero padding after the last value")]
    NonZeroPadding,
    /// A frame's repeat list is malformed: out of order, past m, listing a
    /// value its positions lack, or not adding up to n with them.
    #[error("repeat list: {reason}")]
    BadRepeats {
        /// What is wrong.
        reason: &'static str,
    },
}

/// A BIP158 basic block filter: the block's hash, the distinct values of
/// its scripts as a sparse list, and the values that occur more than once.
///
/// # Examples
/// ```
/// use compressed_bloom::bitcoin::Bip158Filter;
/// use compressed_bloom::DecodeLimits;
/// let block_hash = [7u8; 32];
/// let outputs = [&b"\x00\x14pay to witness key hash.."[..], b"\x6a\x04data"];
/// let spent: [&[u8]; 1] = [b"\x51"];
/// let f = Bip158Filter::from_scripts(block_hash, outputs, spent)?;
/// assert_eq!(f.len(), 2); // OP_RETURN outputs are left out
/// assert!(f.contains(b"\x51"));
/// let bytes = f.to_bip158_bytes();
/// let back = Bip158Filter::from_bip158_bytes(block_hash, &bytes, &DecodeLimits::default())?;
/// assert_eq!(back, f);
/// # Ok::<(), compressed_bloom::bitcoin::Bip158Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bip158Filter {
    block_hash: [u8; HASH_LEN],
    set: SparseFilter,
    repeats: Vec<u64>,
}

impl Bip158Filter {
    /// BIP158's range multiplier M: the values lie in `[0, N·M)`, for a
    /// false positive rate of 1/M per query script.
    pub const M: u64 = 784_931;
    /// BIP158's Golomb-Rice parameter P: each value's low 19 bits are sent
    /// as they are.
    pub const P: u32 = 19;
    /// The largest N Bitcoin Core reads (`MAX_SIZE`, 2^25).
    pub const MAX_ELEMENTS: u64 = 0x0200_0000;

    /// The basic filter of a block whose hash (internal order) is
    /// `block_hash`, from its scripts as BIP158 takes them: every output
    /// script of `outputs` but the empty ones and those whose first byte
    /// is `OP_RETURN` (0x6a), and every script in `spent` (the outputs the
    /// block's inputs spend) but the empty ones; each distinct script once.
    ///
    /// # Errors
    /// [`Bip158Error::TooManyElements`] past Bitcoin Core's 2^25 scripts.
    pub fn from_scripts<K: AsRef<[u8]>>(
        block_hash: [u8; HASH_LEN],
        outputs: impl IntoIterator<Item = K>,
        spent: impl IntoIterator<Item = K>,
    ) -> Result<Self, Bip158Error> {
        let mut scripts: Vec<K> = outputs
            .into_iter()
            .filter(|s| s.as_ref().first().is_some_and(|&b| b != 0x6a))
            .chain(spent.into_iter().filter(|s| !s.as_ref().is_empty()))
            .collect();
        scripts.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
        scripts.dedup_by(|a, b| a.as_ref() == b.as_ref());
        let n = scripts.len() as u64;
        let range = range_for(n)
            .filter(|_| n <= MAX_ELEMENTS)
            .ok_or(Bip158Error::TooManyElements {
                n,
                limit: MAX_ELEMENTS,
            })?;
        let (k0, k1) = sip_key(&block_hash);
        let mut values: Vec<u64> = scripts
            .iter()
            .map(|s| reduce(siphash24(k0, k1, s.as_ref()), range))
            .collect();
        values.sort_unstable();
        Self::from_sorted(block_hash, n, &values)
    }

    /// The filter of `block_hash` (internal order) from its BIP158 bytes:
    /// N as a `CompactSize`, then N Golomb-Rice codes. Reads each input
    /// bit once; holds at most 16 bytes per value, N at most one value per
    /// 20 bits of input, and refuses a list over `limits`' memory (⌈max_m
    /// / 8⌉ bytes) before allocating it.
    ///
    /// # Errors
    /// A [`Bip158Error`] naming the first problem.
    pub fn from_bip158_bytes(
        block_hash: [u8; HASH_LEN],
        bytes: &[u8],
        limits: &DecodeLimits,
    ) -> Result<Self, Bip158Error> {
        let mut reader = MsbBits { data: &[], at: 0 };
        Self::import(block_hash, bytes, limits, &mut reader)
    }

    /// [`Bip158Filter::from_bip158_bytes`] with `reader` left where the
    /// import stopped: its bit count is the importer's work.
    fn import<'a>(
        block_hash: [u8; HASH_LEN],
        bytes: &'a [u8],
        limits: &DecodeLimits,
        reader: &mut MsbBits<'a>,
    ) -> Result<Self, Bip158Error> {
        let (n, used) = read_compact_size(bytes)?;
        let stream = bytes.get(used..).unwrap_or_default();
        if n > MAX_ELEMENTS {
            return Err(Bip158Error::TooManyElements {
                n,
                limit: MAX_ELEMENTS,
            });
        }
        let bits = (stream.len() as u64).saturating_mul(8);
        let fit = bits / MIN_CODE_BITS;
        let memory = limits.max_m.div_ceil(8) / 16;
        if n > fit.min(memory) {
            return Err(Bip158Error::TooManyElements {
                n,
                limit: fit.min(memory),
            });
        }
        let range = range_for(n).unwrap_or(M);
        reader.data = stream;
        let mut values = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
        let mut last = 0u64;
        for index in 0..n {
            // The value is last + d < range: the quotient d >> P is at most
            // (range − 1 − last) >> P, so a long run of ones stops there.
            let room = range.saturating_sub(1).saturating_sub(last);
            let out_of_range = Bip158Error::ValueOutOfRange { index, range };
            let q = reader
                .unary(room >> P)
                .ok_or(Bip158Error::Truncated { index, bit: reader.at })?;
            if q > room >> P {
                return Err(out_of_range);
            }
            let low = reader
                .bits(P)
                .ok_or(Bip158Error::Truncated { index, bit: reader.at })?;
            let d = (q << P) | low;
            if d > room {
                return Err(out_of_range);
            }
            last = last.saturating_add(d);
            values.push(last);
        }
        let used_bytes = reader.at.div_ceil(8);
        let extra = (stream.len() as u64).saturating_sub(used_bytes);
        if extra > 0 {
            return Err(Bip158Error::TrailingData { bytes: extra });
        }
        if !reader.padding_is_zero() {
            return Err(Bip158Error::NonZeroPadding);
        }
        Self::from_sorted(block_hash, n, &values)
    }

    /// The filter of `n` sorted values (`n` of them, below `range_for(n)`).
    fn from_sorted(
        block_hash: [u8; HASH_LEN],
        n: u64,
        values: &[u64],
    ) -> Result<Self, Bip158Error> {
        let range = range_for(n).unwrap_or(M);
        let repeats: Vec<u64> = values
            .windows(2)
            .filter_map(|w| match w {
                [a, b] if a == b => Some(*b),
                _ => None,
            })
            .collect();
        let distinct = (values.len() as u64).saturating_sub(repeats.len() as u64);
        let too_many = Bip158Error::TooManyElements {
            n,
            limit: MAX_ELEMENTS,
        };
        let mut set = EliasFano::with_len(distinct, range).map_err(|_| too_many.clone())?;
        let mut prev = None;
        for &v in values {
            if prev != Some(v) && !set.push(v) {
                return Err(too_many);
            }
            prev = Some(v);
        }
        set.finish();
        Ok(Bip158Filter {
            block_hash,
            set: SparseFilter::from_parts(Self::params_for(range), n, set),
            repeats,
        })
    }

    /// The filter of a frame's parts: its block hash, its sparse list
    /// (under scheme 3) and its repeat list, checked against each other.
    pub(crate) fn from_parts(
        block_hash: [u8; HASH_LEN],
        set: SparseFilter,
        repeats: Vec<u64>,
    ) -> Result<Self, Bip158Error> {
        let bad = |reason| Err(Bip158Error::BadRepeats { reason });
        if set.count_ones().checked_add(repeats.len() as u64) != Some(set.len()) {
            return bad("the distinct values and the repeats do not add up to n");
        }
        if repeats.iter().any(|&r| !set.set_contains(r)) {
            return bad("a repeated value is not among the values");
        }
        Ok(Bip158Filter {
            block_hash,
            set,
            repeats,
        })
    }

    /// The parameters of a filter over `[0, range)`: k = 1, seed 0, hash
    /// scheme 3.
    const fn params_for(range: u64) -> FilterParams {
        FilterParams {
            m: range,
            k: 1,
            seed: 0,
            scheme: HashScheme::Bip158SipHash,
        }
    }

    /// The filter's BIP158 bytes: N as a `CompactSize`, then the sorted
    /// values' differences as Golomb-Rice codes (P = 19), most significant
    /// bit first, zero-padded to a byte. Equal to what Bitcoin Core
    /// serves for the block.
    pub fn to_bip158_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        compact_size::put(&mut out, self.len());
        let mut bits = MsbWriter {
            out: &mut out,
            acc: 0,
            n: 0,
        };
        let mut last = 0u64;
        for v in self.values() {
            let d = v.saturating_sub(last);
            last = v;
            let mut q = d >> P;
            while q > 0 {
                let ones = q.min(32);
                bits.put(u64::MAX, ones as u32);
                q = q.saturating_sub(ones);
            }
            bits.put(0, 1);
            bits.put(d, P);
        }
        bits.finish();
        out
    }

    /// The sorted values, repeats included (N of them).
    fn values(&self) -> impl Iterator<Item = u64> + '_ {
        let mut repeats = self.repeats.iter().copied().peekable();
        self.set.positions().flat_map(move |p| {
            let mut times = 1usize;
            while repeats.next_if_eq(&p).is_some() {
                times = times.saturating_add(1);
            }
            core::iter::repeat_n(p, times)
        })
    }

    /// Whether `script` may be one of the block's scripts, as a BIP158
    /// client answers: false when N = 0, else whether its value is one of
    /// the filter's (false positives at rate about 1/784931).
    pub fn contains(&self, script: &[u8]) -> bool {
        if self.is_empty() {
            return false;
        }
        let (k0, k1) = sip_key(&self.block_hash);
        let v = reduce(siphash24(k0, k1, script), self.set.params().m);
        self.set.set_contains(v)
    }

    /// The block hash, in internal byte order (the reverse of the hex that
    /// explorers print).
    pub fn block_hash(&self) -> &[u8; HASH_LEN] {
        &self.block_hash
    }

    /// N: the number of distinct scripts.
    pub fn len(&self) -> u64 {
        self.set.len()
    }

    /// Whether the block has no scripts for the filter.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values that occur more than once (a value present t times is
    /// listed t − 1 times), sorted.
    pub fn repeats(&self) -> &[u64] {
        &self.repeats
    }

    /// The filter as a sparse list under hash scheme 3.
    pub(crate) fn sparse(&self) -> &SparseFilter {
        &self.set
    }

    /// The filter hash: SHA-256d of [`Bip158Filter::to_bip158_bytes`]
    /// (internal order).
    pub fn filter_hash(&self) -> [u8; HASH_LEN] {
        sha256d(&[&self.to_bip158_bytes()])
    }

    /// The filter header (BIP157): SHA-256d of the filter hash followed by
    /// the previous block's filter header `prev` (32 zero bytes for the
    /// genesis block), all in internal order.
    pub fn filter_header(&self, prev: &[u8; HASH_LEN]) -> [u8; HASH_LEN] {
        sha256d(&[&self.filter_hash(), prev])
    }
}

internal! {
/// [`Bip158Filter::from_bip158_bytes`], also returning the bits of the
/// Golomb-Rice stream it read: each bit is read once, so the work is at
/// most 8 per input byte, and a refusal stops where the input broke a
/// rule (a unary run as soon as it passes the range).
pub fn import_work(
    block_hash: [u8; HASH_LEN],
    bytes: &[u8],
    limits: &DecodeLimits,
) -> (Result<Bip158Filter, Bip158Error>, u64) {
    let mut reader = MsbBits { data: &[], at: 0 };
    let result = Bip158Filter::import(block_hash, bytes, limits, &mut reader);
    (result, reader.at)
}
}

/// BIP158's SipHash key: the block hash's first two 64-bit words, read
/// little-endian.
fn sip_key(block_hash: &[u8; HASH_LEN]) -> (u64, u64) {
    let word = |i: usize| {
        let mut w = [0u8; 8];
        if let Some(bytes) = block_hash.get(i..i.saturating_add(8)) {
            w.copy_from_slice(bytes);
        }
        u64::from_le_bytes(w)
    };
    (word(0), word(8))
}

/// SHA-256 of SHA-256 of the concatenated `parts`.
fn sha256d(parts: &[&[u8]]) -> [u8; HASH_LEN] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    Sha256::digest(h.finalize()).into()
}

/// Reads the `CompactSize` N at the front of `data`, refusals in this
/// importer's terms.
fn read_compact_size(data: &[u8]) -> Result<(u64, usize), Bip158Error> {
    compact_size::get(data).map_err(|e| Bip158Error::BadCompactSize {
        offset: 0,
        reason: match e {
            CompactSizeError::Truncated { available: 0, .. } => "no bytes",
            CompactSizeError::Truncated { .. } => "truncated",
            CompactSizeError::NonCanonical { .. } => {
                "non-canonical: a shorter form holds the value"
            }
        },
    })
}

/// Reads bits most significant first, as Bitcoin Core's `BitStreamReader`.
struct MsbBits<'a> {
    data: &'a [u8],
    /// Bits read so far.
    at: u64,
}

impl MsbBits<'_> {
    fn bit(&mut self) -> Option<bool> {
        let byte = self.data.get(usize::try_from(self.at / 8).ok()?)?;
        let bit = (byte >> 7u64.saturating_sub(self.at % 8)) & 1 == 1;
        self.at = self.at.saturating_add(1);
        Some(bit)
    }

    /// Ones up to the first zero (consumed): the count, or `max + 1` as
    /// soon as it passes `max` (the caller refuses it), or `None` at the
    /// end of the data.
    fn unary(&mut self, max: u64) -> Option<u64> {
        let mut q = 0u64;
        while self.bit()? {
            q = q.saturating_add(1);
            if q > max {
                return Some(q);
            }
        }
        Some(q)
    }

    /// `count` bits (at most 64) as a number, first bit most significant.
    fn bits(&mut self, count: u32) -> Option<u64> {
        let mut v = 0u64;
        for _ in 0..count {
            v = (v << 1) | u64::from(self.bit()?);
        }
        Some(v)
    }

    /// Whether the bits after `at` in its byte are all zero.
    fn padding_is_zero(&mut self) -> bool {
        while !self.at.is_multiple_of(8) {
            if self.bit() != Some(false) {
                return false;
            }
        }
        true
    }
}

/// Writes bits most significant first, as Bitcoin Core's
/// `BitStreamWriter`.
struct MsbWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Pending bits in the low `n` bits.
    acc: u64,
    n: u32,
}

impl MsbWriter<'_> {
    /// The low `count` bits of `v` (at most 32), most significant first.
    fn put(&mut self, v: u64, count: u32) {
        let mask = (1u64 << count).wrapping_sub(1);
        self.acc = (self.acc << count) | (v & mask);
        self.n = self.n.saturating_add(count);
        while self.n >= 8 {
            self.n = self.n.saturating_sub(8);
            self.out.push((self.acc >> self.n) as u8);
        }
        self.acc &= (1u64 << self.n).wrapping_sub(1);
    }

    /// Pads the last byte with zeros.
    fn finish(mut self) {
        if self.n > 0 {
            let pad = 8u32.saturating_sub(self.n);
            self.put(0, pad);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared reader's refusals, in this importer's terms.
    #[test]
    fn compact_size_refusals_are_bip158_errors() {
        let reason = |b: &[u8]| match read_compact_size(b) {
            Err(Bip158Error::BadCompactSize { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert!(reason(&[0xfd, 0xfc, 0x00]).starts_with("non-canonical"));
        assert!(reason(&[0xff, 1, 0, 0, 0, 0, 0, 0, 0]).starts_with("non-canonical"));
        assert_eq!(reason(&[0xfe, 1, 2]), "truncated");
        assert_eq!(reason(&[]), "no bytes");
    }

    /// Two scripts with the same value code a difference of 0, which the
    /// export writes again: `[v, v]` and `[a, b, b]`, built by hand.
    #[test]
    fn repeated_values_survive_import_and_export() {
        for values in [vec![5u64, 5], vec![1, 1_000_000, 1_000_000]] {
            let n = values.len() as u64;
            let f = Bip158Filter::from_sorted([1; 32], n, &values).unwrap();
            assert_eq!(f.repeats().len(), 1);
            assert_eq!(f.values().collect::<Vec<_>>(), values);
            let bytes = f.to_bip158_bytes();
            let back = Bip158Filter::from_bip158_bytes([1; 32], &bytes, &DecodeLimits::default()).unwrap();
            assert_eq!(back, f);
            assert_eq!(back.to_bip158_bytes(), bytes);
        }
    }
}
