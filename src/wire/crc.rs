//! The frame checksum, CRC-32C (Castagnoli; docs/FORMAT.md section 2):
//! hardware-accelerated through the `crc32c` crate with `std`, table-driven
//! through the `crc` crate without it. Both compute the same function
//! (checked below and by every golden vector).

/// CRC-32C of `data`.
#[cfg(feature = "std")]
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// CRC-32C of `data`.
#[cfg(not(feature = "std"))]
pub fn crc32c(data: &[u8]) -> u32 {
    const CASTAGNOLI: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    CASTAGNOLI.checksum(data)
}

#[cfg(test)]
mod tests {
    #[test]
    fn check_value_and_both_implementations_agree() {
        assert_eq!(super::crc32c(b"123456789"), 0xE306_9283);
        let table = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
        let mut x = 1u64;
        for len in [0usize, 1, 7, 64, 1000, 4097] {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (x >> 56) as u8
                })
                .collect();
            assert_eq!(table.checksum(&data), super::crc32c(&data), "len {len}");
        }
    }
}
