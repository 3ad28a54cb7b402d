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
/// The defaults are meant for frames from strangers, and take every frame
/// this crate's writers make with their defaults (the `cbloom` CLI, the
/// `sync::Publisher`, every kind, empty or full): a decoded
/// filter of 512 MiB at most (`max_m` = 2^32 bits, and ⌈max_m/8⌉ bytes of
/// memory for every kind), frames up to 1 GiB, any k the format allows,
/// and a full frame may decode to [`DEFAULT_MAX_EXPANSION`] times its own
/// length, or up to [`DEFAULT_EXPANSION_FLOOR`] (512 MiB, the memory limit)
/// if its m-bit array is at most [`FLOOR_MAX_EXPANSION`] (2^16) times its
/// length, as every coded (type 1) array is.
/// What each kind holds, checked against ⌈max_m/8⌉ bytes before anything
/// is allocated (docs/FORMAT.md section 2.3, step 3):
///
/// * standard, partitioned: the m-bit array, ⌈m/8⌉ bytes (m ≤ 2^32);
/// * counting: the 4-bit counters and, while decoding, the map,
///   ⌈m/2⌉ + ⌈m/8⌉ bytes (m ≤ 858,993,458 by default);
/// * scalable: its layers' bits, ⌈m/8⌉ bytes for the header's m = Σ m_i
///   (plus rounding to words and a few dozen bytes for each of at most 64
///   layers);
/// * sparse: its Elias–Fano list of the w positions the payload declares,
///   about w · (2 + log2(m/w)) bits, computed exactly from w and m when w
///   is read and before the list is allocated (docs/FORMAT.md section 8.4,
///   step 3): a 10^7-key frame of 14.4 MB holds 16 MB.
/// * ribbon: 16 bytes per payload byte (one 24-byte record per shard of
///   at least 2 payload bytes, 16 bytes per solution word), so a payload
///   of at most 32 MiB.
///
/// **Why the floor.** An empty or nearly empty filter is legitimately tiny
/// on the wire and large in memory: a `sync::Publisher` of a
/// standard filter planned for 10^7 keys at f = 0.001 (m = 622,401,978)
/// sends a first frame of 1,746 bytes that decodes to 78 MB (expansion
/// 44,560), and a counting one 389 MB (expansion 221,780). A ratio alone
/// would refuse what the publisher legitimately declared, so by default
/// output up to the floor is bounded by the format's own reach instead
/// (2^16 bytes of array per frame byte, which every coded array stays
/// within) and by the memory limit: a hostile small frame makes a receiver
/// allocate at most ⌈max_m/8⌉ bytes and 2^16 bytes of array (5 · 2^16 for
/// counting) per frame byte, and its CPU is the
/// frame's decode plus filling and hashing that output (measured in
/// docs/HARDENING.md, "Cost per frame byte"). The work a payload may ask
/// for per frame byte stays bounded, floor or not: a counting frame takes
/// at most `max_expansion / 32` value decisions per frame byte, or
/// `max_decisions_per_byte` if set (docs/FORMAT.md section 8.1, "Work").
///
/// A receiver that expects smaller filters states it, which is the
/// tightest bound: `max_m` (and `kinds`) for the filters it takes, and
/// `expansion_floor` (0 holds every full frame to the ratio alone) for
/// what a small frame may cost:
///
/// ```
/// use compressed_bloom::DecodeLimits;
/// let limits = DecodeLimits {
///     max_m: 1 << 24,
///     max_expansion: Some(64),
///     expansion_floor: 0,
///     ..DecodeLimits::default()
/// };
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
    /// If set, the most output a full frame may decode to per byte of
    /// frame, above [`DecodeLimits::expansion_floor`]: a frame is refused
    /// when its output (what the kind holds, as for the memory limit) is
    /// above both `max_expansion` · frame length and the floor. Deltas are
    /// exempt (they decode into the size of the base the receiver already
    /// holds), except what a scalable delta adds. It also bounds the work
    /// a counting frame may ask for: `max_expansion / 32` value decisions
    /// per frame byte, whatever the floor.
    pub max_expansion: Option<u64>,
    /// If set, the most value decisions a counting frame may take per
    /// frame byte (docs/FORMAT.md section 8.1, "Work"), whatever
    /// `max_expansion` is; if not, `max_expansion / 32`, and no bound
    /// without an expansion limit. A receiver that raises the expansion
    /// limit for memory's sake keeps the CPU bound with it: `cbloom` lets
    /// any frame decode to 1 GiB, and holds every frame to 128 decisions
    /// per byte.
    pub max_decisions_per_byte: Option<u64>,
    /// Output, in bytes, that a full frame may decode to beyond
    /// `max_expansion` times its length, as long as its m-bit array is at
    /// most [`FLOOR_MAX_EXPANSION`] (2^16) bytes per frame byte, as a coded
    /// array always is: the expansion limit applies in full only above it
    /// ([`DecodeLimits::admits_output`]).
    /// [`DEFAULT_EXPANSION_FLOOR`] by default, so that the empty filter a
    /// publisher declares is taken; 0 holds every frame to the ratio alone.
    pub expansion_floor: u64,
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
/// default constraints decodes within it once keys are in the filter. The
/// largest expansion the planner produces, scanned over n = 1 to 10^7 keys
/// and budgets of 0.5 to 64 transmitted bits per key, is 3,884 (n = 100 at
/// 21.75 bits per key: m = 2^23, k = 1; `tests/filter/optimiser.rs` checks
/// the bound). Filters sparser than any plan exceed it (a k = 1 filter
/// sent at b bits per key has m/n ≈ 2^(b − 1.44) and expands about
/// 2^(b − 1.44)/b times: 19,000 at b = 20), and so does a planned filter
/// that holds few keys yet; the default limits take both up to
/// [`DEFAULT_EXPANSION_FLOOR`] of output.
pub const DEFAULT_MAX_EXPANSION: u64 = 4096;

/// The default [`DecodeLimits::expansion_floor`]: 512 MiB, the default
/// memory limit (⌈max_m/8⌉ for max_m = 2^32). Every full frame the crate's
/// writers make under default settings is within it; the largest measured
/// in `tests/cli/follow.rs`, an empty counting filter planned for 10^7
/// keys at f = 0.001, decodes to 389 MB (counters and map).
pub const DEFAULT_EXPANSION_FLOOR: u64 = 1 << 29;

/// Bytes of a filter's m-bit array per frame byte that the expansion floor
/// reaches at most: 2^16, what a coded (type 1) array can reach and no
/// more. Each of its 2^23-bit blocks holds at least 16 bytes of coder
/// state (4 for a block under 2^20 bits, 2^17 bits at most) and every
/// block but the last a length varint, and the frame adds its header and
/// CRC, so a type-1 array is always under 2^16 bytes per frame byte; the
/// counting kind's counters and map are 5/8 byte per position, 5 · 2^16
/// bytes per frame byte at most. A frame whose coding lets a few bytes
/// declare much more (static-coded constant blocks: 2 bytes for up to 2^40
/// bits) is held to the ratio: 512 blocks of 2^23 bits alternately all
/// zeros and all ones static-code to 2,325 bytes for 512 MiB (230,912
/// bytes per frame byte), which the default limits refuse.
pub const FLOOR_MAX_EXPANSION: u64 = 1 << 16;

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_m: 1 << 32,
            max_k: MAX_K,
            max_frame_len: 1 << 30,
            max_expansion: Some(DEFAULT_MAX_EXPANSION),
            max_decisions_per_byte: None,
            expansion_floor: DEFAULT_EXPANSION_FLOOR,
            kinds: KindSet::ALL,
        }
    }
}

impl DecodeLimits {
    /// The default expansion ratio, [`Self::max_expansion`]: 4096 output
    /// bytes per frame byte.
    pub const DEFAULT_MAX_EXPANSION: u64 = DEFAULT_MAX_EXPANSION;
    /// The default output below which the ratio is not applied,
    /// [`Self::expansion_floor`]: 512 MiB.
    pub const DEFAULT_EXPANSION_FLOOR: u64 = DEFAULT_EXPANSION_FLOOR;
    /// Under the floor, the most an m-bit array may expand per frame
    /// byte: 2^16.
    pub const FLOOR_MAX_EXPANSION: u64 = FLOOR_MAX_EXPANSION;

    /// Whether the expansion limit admits `output` bytes (what the kind
    /// holds) decoded from a full frame of `frame_len` bytes whose m-bit
    /// array (its one bit per position: ⌈m/8⌉ bytes; for kinds without
    /// one, the output) is `array` bytes: output ≤ `max_expansion` ·
    /// frame_len, or output ≤ `expansion_floor` with array ≤
    /// [`FLOOR_MAX_EXPANSION`] · frame_len. Always without an expansion
    /// limit. Compared exactly in integers (products saturate past 2^64).
    pub fn admits_output(&self, output: u64, array: u64, frame_len: u64) -> bool {
        match self.max_expansion {
            None => true,
            Some(ratio) => {
                output <= frame_len.saturating_mul(ratio)
                    || (output <= self.expansion_floor
                        && array <= frame_len.saturating_mul(FLOOR_MAX_EXPANSION))
            }
        }
    }

    /// No limits beyond what the format itself allows (for trusted input,
    /// such as files this process wrote).
    pub fn unlimited() -> Self {
        DecodeLimits {
            max_m: MAX_M,
            max_k: MAX_K,
            max_frame_len: u64::MAX,
            max_expansion: None,
            max_decisions_per_byte: None,
            expansion_floor: u64::MAX,
            kinds: KindSet::ALL,
        }
    }
}
