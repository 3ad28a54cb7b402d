//! Resource limits for decoding frames from untrusted peers, and the
//! format's own ranges for m and k.

/// Largest number of hash positions per key the format allows.
pub const MAX_K: u32 = 64;

/// Largest number of bits a filter may have (2^56 bits = 8 PiB): far beyond
/// memory, but it keeps `m` and byte counts well inside `u64` arithmetic.
pub const MAX_M: u64 = 1 << 56;

/// Bounds checked against every header-declared size *before* anything is
/// allocated or decoded.
///
/// The defaults are meant for frames from strangers: a decoded filter of
/// 512 MiB at most (`max_m` = 2^32 bits, and ⌈max_m/8⌉ bytes of memory
/// for every kind), frames up to 1 GiB, any k the format allows, and a full
/// frame may decode to at most [`DEFAULT_MAX_EXPANSION`] times its own
/// length. What each kind holds, checked against ⌈max_m/8⌉ bytes before
/// anything is allocated (docs/FORMAT.md section 2.3, step 3):
///
/// * standard, partitioned: the m-bit array, ⌈m/8⌉ bytes (m ≤ 2^32);
/// * counting: the 4-bit counters and, while decoding, the map,
///   ⌈m/2⌉ + ⌈m/8⌉ bytes (m ≤ 858,993,458 by default);
/// * scalable: its layers' bits, ⌈m/8⌉ bytes for the header's m = Σ m_i
///   (plus rounding to words and a few dozen bytes for each of at most 64
///   layers);
/// * sparse: 64 bytes per payload byte (the Elias–Fano list of at most
///   8 positions per payload byte), so a payload of at most 8 MiB.
/// * ribbon: 16 bytes per payload byte (one 24-byte record per shard of
///   at least 2 payload bytes, 16 bytes per solution word), so a payload
///   of at most 32 MiB.
///
/// The work a frame may ask for is bounded through the same limits: with
/// an expansion limit, a counting frame may take at most
/// `max_expansion / 32` value decisions per frame byte, or
/// `max_decisions_per_byte` if set (docs/FORMAT.md
/// section 8.1, "Work"); docs/HARDENING.md tabulates the worst CPU and
/// memory per frame byte of every kind. Tighten them for the traffic you
/// expect:
///
/// ```
/// use compressed_bloom::DecodeLimits;
/// let limits = DecodeLimits { max_m: 1 << 24, max_expansion: Some(64), ..DecodeLimits::default() };
/// assert!(limits.max_m < DecodeLimits::default().max_m);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Largest m (bits) accepted by the kinds that hold an array of m
    /// positions, and ⌈max_m/8⌉ the most bytes any decoded frame may hold
    /// (see above for each kind's size).
    pub max_m: u64,
    /// Largest k accepted (at most 64 in any case).
    pub max_k: u32,
    /// Largest whole frame, in bytes.
    pub max_frame_len: u64,
    /// If set, the bit array a full frame decodes to may be at most this
    /// many times the frame's length (a guard against small frames that
    /// declare a huge, all-zero filter): a frame is refused when
    /// ⌈m/8⌉ > max_expansion · frame length. Deltas are exempt: they decode
    /// into the size of the base the receiver already holds.
    pub max_expansion: Option<u64>,
    /// If set, the most value decisions a counting frame may take per
    /// frame byte (docs/FORMAT.md section 8.1, "Work"), whatever
    /// `max_expansion` is; if not, `max_expansion / 32`, and no bound
    /// without an expansion limit. A receiver that raises the expansion
    /// limit for memory's sake keeps the CPU bound with it: `cbloom` lets
    /// any frame decode to 1 GiB, and holds every frame to 128 decisions
    /// per byte.
    pub max_decisions_per_byte: Option<u64>,
    /// The filter kinds this receiver accepts (by wire id; all by default).
    /// A frame of another kind is refused at its kind byte, before anything
    /// is allocated, with an error that names the kind.
    pub kinds: KindSet,
}

/// A set of filter kinds, by wire id (bit `id` set = kind `id` accepted).
/// Kind ids are defined in `format::FilterKind`; this type only holds bits
/// so that the limits stay below the format in the module layering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindSet(pub u64);

impl KindSet {
    /// Every kind.
    pub const ALL: KindSet = KindSet(u64::MAX);

    /// The set holding only the kinds with these wire ids (ids of 64 or
    /// more are ignored).
    pub fn of(ids: &[u8]) -> KindSet {
        KindSet(
            ids.iter()
                .filter(|&&id| id < 64)
                .fold(0, |set, &id| set | (1u64 << id)),
        )
    }

    /// Whether kind id `id` is in the set.
    pub const fn contains(self, id: u8) -> bool {
        id < 64 && self.0 & (1u64 << id) != 0
    }
}

/// The default expansion limit, 4096: every plan of [`crate::plan`] under
/// default constraints decodes within it. The largest expansion the planner
/// produces, scanned over n = 1 to 10^7 keys and budgets of 0.5 to 64
/// transmitted bits per key, is 3,884 (n = 100 at 21.75 bits per key: m =
/// 2^23, k = 1; `tests/filter/optimiser.rs` checks the bound). Filters sparser
/// than any plan exceed it: a k = 1 filter sent at b bits per key has
/// m/n ≈ 2^(b − 1.44) and expands about 2^(b − 1.44)/b times (19,000 at
/// b = 20). A receiver that expects them raises the limit explicitly.
pub const DEFAULT_MAX_EXPANSION: u64 = 4096;

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_m: 1 << 32,
            max_k: MAX_K,
            max_frame_len: 1 << 30,
            max_expansion: Some(DEFAULT_MAX_EXPANSION),
            max_decisions_per_byte: None,
            kinds: KindSet::ALL,
        }
    }
}

impl DecodeLimits {
    /// No limits beyond what the format itself allows (for trusted input,
    /// such as files this process wrote).
    pub fn unlimited() -> Self {
        DecodeLimits {
            max_m: MAX_M,
            max_k: MAX_K,
            max_frame_len: u64::MAX,
            max_expansion: None,
            max_decisions_per_byte: None,
            kinds: KindSet::ALL,
        }
    }
}
