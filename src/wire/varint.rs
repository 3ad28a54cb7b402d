//! Unsigned LEB128 varints, canonical form only.
//!
//! Seven bits per byte, least significant group first, high bit set on every
//! byte but the last. A value has exactly one accepted encoding: at most 10
//! bytes, the 10th byte at most 1, and no final 0x00 group after the first
//! byte (so every frame has one byte sequence and one CRC).

use crate::prelude::*;
/// Appends `v` to `out`.
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Encoded length of `v` in bytes (1..=10).
pub const fn len(v: u64) -> usize {
    // leading_zeros of a non-zero value is at most 63: no underflow.
    let bits = 64usize.saturating_sub((v | 1).leading_zeros() as usize);
    bits.div_ceil(7)
}

/// Reads one varint from the front of `data`: the value and the bytes used.
///
/// # Errors
/// A static reason: input ends inside the varint, more than 64 bits, or a
/// non-canonical (over-long) encoding.
pub fn get(data: &[u8]) -> Result<(u64, usize), &'static str> {
    let mut v = 0u64;
    // i < 10, so the shift 7·i <= 63 and the length i + 1 cannot overflow.
    for (i, shift) in (0..10usize).zip((0..64u32).step_by(7)) {
        let b = *data.get(i).ok_or("input ends inside a varint")?;
        let group = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return Err("varint exceeds 64 bits");
        }
        v |= group << shift;
        if b & 0x80 == 0 {
            if i > 0 && b == 0 {
                return Err("varint is not in canonical (shortest) form");
            }
            return Ok((v, i.saturating_add(1)));
        }
    }
    Err("varint exceeds 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_lengths() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put(&mut b, v);
            assert_eq!(b.len(), len(v), "{v}");
            assert_eq!(get(&b), Ok((v, b.len())));
        }
        assert_eq!(len(u64::MAX), 10);
    }

    #[test]
    fn rejects_bad_encodings() {
        assert!(get(&[]).is_err());
        assert!(get(&[0x80]).is_err());
        assert!(get(&[0x80, 0x00]).is_err(), "over-long zero");
        assert!(get(&[0xff; 10]).is_err());
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert!(get(&over).is_err(), "65th bit");
    }
}
