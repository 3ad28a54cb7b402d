//! Resource limits for decoding frames from untrusted peers.

/// Bounds checked against every header-declared size *before* anything is
/// allocated or decoded.
///
/// The defaults are conservative for network use: a 512 MiB filter at most
/// (m <= 2^32 bits), frames up to 1 GiB, any k the format allows, and no
/// expansion-ratio limit. Tighten them for the traffic you expect:
///
/// ```
/// use compressed_bloom::DecodeLimits;
/// let limits = DecodeLimits { max_m: 1 << 24, max_expansion: Some(64), ..DecodeLimits::default() };
/// assert!(limits.max_m < DecodeLimits::default().max_m);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Largest m (bits) accepted; the decoded filter needs ⌈m/64⌉·8 bytes.
    pub max_m: u64,
    /// Largest k accepted (at most 64 in any case).
    pub max_k: u32,
    /// Largest whole frame, in bytes.
    pub max_frame_len: u64,
    /// If set, the decoded bit array may be at most this many times the
    /// frame's length (a guard against small frames that declare a huge,
    /// all-zero filter).
    pub max_expansion: Option<u64>,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_m: 1 << 32,
            max_k: crate::filter::MAX_K,
            max_frame_len: 1 << 30,
            max_expansion: None,
        }
    }
}

impl DecodeLimits {
    /// No limits beyond what the format itself allows (for trusted input,
    /// such as files this process wrote).
    pub fn unlimited() -> Self {
        DecodeLimits {
            max_m: crate::filter::MAX_M,
            max_k: crate::filter::MAX_K,
            max_frame_len: u64::MAX,
            max_expansion: None,
        }
    }
}
