//! Random words at a density in sixteenths, shared by the grouped-decoder
//! property (`tests/frames/roundtrip.rs`) and the `static_vectors` fuzz
//! target.

/// A word whose bits are each 1 with probability j/16 (j < 16): four
/// random words from `next`, read bit by bit as a 4-bit number, compared
/// with j (bit-sliced).
pub fn word(j: u8, mut next: impl FnMut() -> u64) -> u64 {
    let r = [next(), next(), next(), next()];
    let (mut lt, mut eq) = (0u64, u64::MAX);
    for b in (0..4).rev() {
        if j >> b & 1 == 1 {
            lt |= eq & !r[b];
            eq &= r[b];
        } else {
            eq &= !r[b];
        }
    }
    lt
}
