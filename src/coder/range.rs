//! An adaptive binary range coder (docs/FORMAT.md section 8.1.2): the
//! carry-propagating range coder of LZMA, with bit probabilities estimated
//! from counts. The counting kind codes its counter values with it, as
//! unary decisions each with its own adaptive model, so the cost follows
//! the empirical distribution of the values (mostly 1s and 2s).
//!
//! A model starts at counts (1, 1); the probability of a 0 is
//! `clamp(⌊c0 · 4096 / (c0 + c1)⌋, 1, 4095)` of 4096; after each bit its
//! count grows by one, and when `c0 + c1` reaches 4096 both are halved
//! (rounding up), so a model follows a slowly drifting source.

use crate::prelude::*;
/// Bits of probability precision.
const PROB_BITS: u32 = 12;
/// Halve a model's counts when their sum reaches this.
const COUNT_LIMIT: u32 = 1 << PROB_BITS;
/// Renormalise when the range falls below this.
const TOP: u32 = 1 << 24;

/// An adaptive model of one binary decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitModel {
    c0: u32,
    c1: u32,
}

impl Default for BitModel {
    fn default() -> Self {
        BitModel { c0: 1, c1: 1 }
    }
}

impl BitModel {
    /// The probability of a 0, in 1..=4095 of 4096.
    fn p0(self) -> u32 {
        // c0 + c1 <= 4096 and c0 < 4096: no overflow, no division by 0.
        let total = self.c0.saturating_add(self.c1).max(1);
        (self.c0 << PROB_BITS)
            .checked_div(total)
            .unwrap_or(1)
            .clamp(1, COUNT_LIMIT - 1)
    }

    fn update(&mut self, bit: bool) {
        if bit {
            self.c1 = self.c1.saturating_add(1);
        } else {
            self.c0 = self.c0.saturating_add(1);
        }
        if self.c0.saturating_add(self.c1) >= COUNT_LIMIT {
            self.c0 = self.c0.div_ceil(2);
            self.c1 = self.c1.div_ceil(2);
        }
    }
}

/// Range encoder writing to a byte vector.
pub struct Encoder<'a> {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: &'a mut Vec<u8>,
}

impl<'a> Encoder<'a> {
    /// An encoder appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Encoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out,
        }
    }

    /// Codes `bit` with `model` and updates the model.
    pub fn encode(&mut self, model: &mut BitModel, bit: bool) {
        let bound = (self.range >> PROB_BITS).saturating_mul(model.p0());
        if bit {
            self.low = self.low.saturating_add(u64::from(bound));
            self.range = self.range.saturating_sub(bound);
        } else {
            self.range = bound;
        }
        model.update(bit);
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    fn shift_low(&mut self) {
        if self.low < 0xFF00_0000 || self.low > 0xFFFF_FFFF {
            let carry = (self.low >> 32) as u8;
            let mut temp = self.cache;
            loop {
                self.out.push(temp.wrapping_add(carry));
                temp = 0xFF;
                self.cache_size = self.cache_size.saturating_sub(1);
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.cache_size = self.cache_size.saturating_add(1);
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    /// Writes the last bytes (five shifts of `low`).
    pub fn finish(mut self) {
        for _ in 0..5 {
            self.shift_low();
        }
    }
}

/// Why a range-coded stream is malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeError {
    /// The stream is shorter than the values it must hold.
    Truncated,
    /// The first byte is not 0, or the code is not below the range.
    Corrupt,
    /// Bytes are left after the last value.
    Trailing,
}

/// Range decoder over a byte slice.
pub struct Decoder<'a> {
    code: u32,
    range: u32,
    data: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    /// Starts decoding `data`: its first byte must be 0, and the next four
    /// are the initial code (big-endian).
    ///
    /// # Errors
    /// Fewer than five bytes, or a corrupt start.
    pub fn new(data: &'a [u8]) -> Result<Self, RangeError> {
        let Some((&first, rest)) = data.split_first() else {
            return Err(RangeError::Truncated);
        };
        let code = rest.first_chunk::<4>().ok_or(RangeError::Truncated)?;
        let code = u32::from_be_bytes(*code);
        if first != 0 || code == u32::MAX {
            return Err(RangeError::Corrupt);
        }
        Ok(Decoder {
            code,
            range: u32::MAX,
            data,
            at: 5,
        })
    }

    /// Decodes one bit with `model` and updates the model.
    ///
    /// # Errors
    /// The stream ends, or the code leaves the range (corrupt input).
    pub fn decode(&mut self, model: &mut BitModel) -> Result<bool, RangeError> {
        let bound = (self.range >> PROB_BITS).saturating_mul(model.p0());
        let bit = if self.code < bound {
            self.range = bound;
            false
        } else {
            self.code = self.code.saturating_sub(bound);
            self.range = self.range.saturating_sub(bound);
            true
        };
        model.update(bit);
        while self.range < TOP {
            let byte = *self.data.get(self.at).ok_or(RangeError::Truncated)?;
            self.at = self.at.saturating_add(1);
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(byte);
        }
        if self.code >= self.range {
            return Err(RangeError::Corrupt);
        }
        Ok(bit)
    }

    /// Checks that every byte was used.
    ///
    /// # Errors
    /// [`RangeError::Trailing`] otherwise.
    pub fn finish(self) -> Result<(), RangeError> {
        if self.at == self.data.len() {
            Ok(())
        } else {
            Err(RangeError::Trailing)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bits: &[(usize, bool)], contexts: usize) {
        let mut out = Vec::new();
        let mut enc = Encoder::new(&mut out);
        let mut models = vec![BitModel::default(); contexts];
        for &(c, b) in bits {
            enc.encode(&mut models[c], b);
        }
        enc.finish();
        let mut dec = Decoder::new(&out).unwrap();
        let mut models = vec![BitModel::default(); contexts];
        for &(c, b) in bits {
            assert_eq!(dec.decode(&mut models[c]).unwrap(), b);
        }
        // The decoder reads exactly what the encoder wrote.
        dec.finish().unwrap();
        // One byte less is truncated or wrong; one more is trailing.
        let mut longer = out.clone();
        longer.push(0);
        let mut dec = Decoder::new(&longer).unwrap();
        let mut models = vec![BitModel::default(); contexts];
        for &(c, _) in bits {
            dec.decode(&mut models[c]).unwrap();
        }
        assert_eq!(dec.finish(), Err(RangeError::Trailing));
    }

    #[test]
    fn round_trips_and_uses_every_byte() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [0usize, 1, 2, 10, 1000, 100_000] {
            for skew in [1u64, 4, 64, 4096] {
                let bits: Vec<(usize, bool)> = (0..len)
                    .map(|_| {
                        let r = next();
                        ((r % 3) as usize, (r >> 20) % skew == 0)
                    })
                    .collect();
                round_trip(&bits, 3);
            }
        }
    }

    /// A skewed stationary source costs close to its entropy: p(1) = 1/16
    /// has H = 0.3373 bits; 10^6 bits allow the adaptation a few hundred.
    #[test]
    fn cost_is_near_the_entropy() {
        let mut x = 99u64;
        let mut out = Vec::new();
        let mut enc = Encoder::new(&mut out);
        let mut model = BitModel::default();
        let n = 1_000_000;
        for _ in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            enc.encode(&mut model, (x >> 33).is_multiple_of(16));
        }
        enc.finish();
        let h = -(1.0 / 16.0f64) * (1.0 / 16.0f64).log2() - (15.0 / 16.0f64) * (15.0 / 16.0f64).log2();
        let bits = out.len() as f64 * 8.0;
        assert!(bits < h * n as f64 * 1.005, "{bits} bits, entropy {}", h * n as f64);
    }
}
