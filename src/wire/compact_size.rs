//! Bitcoin's `CompactSize`, the length prefix of BIP37's `filterload` and
//! BIP158's filters: one byte below 0xFD; else 0xFD and a u16, 0xFE and a
//! u32, or 0xFF and a u64, little-endian. Bitcoin Core reads only the
//! shortest form ("non-canonical ReadCompactSize()"), and so does this.

use crate::prelude::*;

/// Why a `CompactSize` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactSizeError {
    /// The input ends inside it: `needed` bytes, `available` given.
    Truncated {
        /// Bytes the size takes.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// A longer form than `value` needs, `bytes` long.
    NonCanonical {
        /// The value read.
        value: u64,
        /// Bytes it took.
        bytes: usize,
    },
}

/// The `CompactSize` at the start of `bytes`, and the bytes it took.
///
/// # Errors
/// [`CompactSizeError`]: the input ends inside it, or it is not in its
/// shortest form.
pub fn get(bytes: &[u8]) -> Result<(u64, usize), CompactSizeError> {
    let first = *bytes.first().ok_or(CompactSizeError::Truncated {
        needed: 1,
        available: 0,
    })?;
    let (width, min) = match first {
        0xfd => (2, 0xfd),
        0xfe => (4, 0x1_0000),
        0xff => (8, 0x1_0000_0000),
        b => return Ok((u64::from(b), 1)),
    };
    let end = 1usize.saturating_add(width);
    let field = bytes.get(1..end).ok_or(CompactSizeError::Truncated {
        needed: end as u64,
        available: bytes.len() as u64,
    })?;
    let mut buf = [0u8; 8];
    buf.iter_mut().zip(field).for_each(|(d, s)| *d = *s);
    let value = u64::from_le_bytes(buf);
    if value < min {
        return Err(CompactSizeError::NonCanonical { value, bytes: end });
    }
    Ok((value, end))
}

/// Appends `v` as a `CompactSize` in its shortest form.
pub fn put(out: &mut Vec<u8>, v: u64) {
    if v < 0xfd {
        out.push(v as u8);
    } else if v <= 0xffff {
        out.push(0xfd);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= 0xffff_ffff {
        out.push(0xfe);
        out.extend_from_slice(&(v as u32).to_le_bytes());
    } else {
        out.push(0xff);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_size_round_trips_and_refuses_long_forms() {
        for v in [0u64, 1, 0xfc, 0xfd, 0xffff, 0x1_0000, 0xffff_ffff, 0x1_0000_0000] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(get(&out), Ok((v, out.len())));
        }
        assert_eq!(
            get(&[0xfd, 0xfc, 0x00]),
            Err(CompactSizeError::NonCanonical { value: 0xfc, bytes: 3 })
        );
        assert_eq!(
            get(&[0xfe, 0xff, 0xff, 0, 0]),
            Err(CompactSizeError::NonCanonical { value: 0xffff, bytes: 5 })
        );
        assert_eq!(
            get(&[0xff, 1, 0, 0, 0, 0, 0, 0, 0]),
            Err(CompactSizeError::NonCanonical { value: 1, bytes: 9 })
        );
        assert_eq!(
            get(&[0xfd, 0x01]),
            Err(CompactSizeError::Truncated { needed: 3, available: 2 })
        );
        assert_eq!(get(&[]), Err(CompactSizeError::Truncated { needed: 1, available: 0 }));
    }
}
