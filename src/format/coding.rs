//! How a full frame's bit array is coded: the caller's choice, or `auto`,
//! which takes the fastest-decoding coding whose frame stays within the
//! size the planner guarantees (docs/FORMAT.md section 3, "Choosing a
//! coding").

use super::header::FilterKind;

/// The payload coding of a full frame.
///
/// Not every kind has every coding. [`Coding::applies_to`] says which
/// ones a kind has, and the CLI refuses the others before it reads a key;
/// [`crate::Kind::encode_frame`] given a coding the kind lacks writes the
/// kind's `Auto` frame instead. What each kind writes:
///
/// | kind | `Auto` | `Adaptive` | `Static` | `Raw` |
/// |---|---|---|---|---|
/// | standard, partitioned | type 4 or 1 (below), or 0 | type 1 | type 4 | type 0 |
/// | Squid digest | type 1, or 0 if smaller | type 1 | lacks: `Auto` | type 0 |
/// | counting | coded counters, or raw if smaller | coded counters | lacks: `Auto` | raw counters |
/// | scalable | each layer coded or raw, the smaller | as `Auto` | lacks: `Auto` | every layer raw |
/// | sparse | Rice-coded positions | as `Auto` | lacks: `Auto` | lacks: `Auto` |
/// | ribbon | the solution, uncoded | lacks: `Auto` | lacks: `Auto` | the solution |
///
/// A ribbon filter's solution is incompressible (its bits are as likely 0
/// as 1), so its only form is raw; the sparse kind's positions are its
/// coding, with no raw form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Coding {
    /// The default: the faster-decoding coding within the planner's size
    /// guarantee. Static coding (type 4) where the kind has it, the array's
    /// minority density min(x, m − x)/m is at least 1/16 (where type 4
    /// codes a byte per step and decodes faster than type 1; sparser arrays
    /// have few runs, which type 1 decodes faster), and its payload stays
    /// within the bound the planner's guarantee is built on
    /// (`coder::payload_bits_bound` at the array's count of ones);
    /// otherwise adaptive coding (type 1). Arrays of fewer than 2^20
    /// bits take the smaller of the two (type 1 on ties). Raw when coding does not shrink the array. A frame planned
    /// for a byte budget fits it either way.
    #[default]
    Auto,
    /// Type 1: the adaptive rANS coder, the smallest on small filters and
    /// readable by decoders of format version 1.
    Adaptive,
    /// Type 4: static coding with per-block counts (format version 3),
    /// for standard and partitioned filters.
    Static,
    /// Type 0: the bit array uncoded.
    Raw,
}

impl Coding {
    /// Every coding, `auto` first.
    pub const ALL: [Coding; 4] = [Coding::Auto, Coding::Adaptive, Coding::Static, Coding::Raw];

    /// The name the CLI takes: `auto`, `adaptive`, `static` or `raw`.
    pub const fn name(self) -> &'static str {
        match self {
            Coding::Auto => "auto",
            Coding::Adaptive => "adaptive",
            Coding::Static => "static",
            Coding::Raw => "raw",
        }
    }

    /// The coding named `name` (as [`Coding::name`] gives it).
    pub fn from_name(name: &str) -> Option<Self> {
        Coding::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether a full frame of `kind` (a Squid digest if `squid`) can be
    /// written with this coding, as the table on [`Coding`] gives it
    /// (`auto` always can). Type 4 is defined for the standard and
    /// partitioned kinds only (Squid digests, a standard filter with
    /// Squid's header, have no static-coded frame); adaptive for every kind
    /// with a coded form, so not the ribbon kind; raw for every kind but
    /// the sparse one, whose positions are always Rice-coded.
    pub const fn applies_to(self, kind: FilterKind, squid: bool) -> bool {
        match self {
            Coding::Auto => true,
            Coding::Adaptive => !matches!(kind, FilterKind::Ribbon),
            Coding::Static => {
                matches!(kind, FilterKind::Standard | FilterKind::Partitioned) && !squid
            }
            Coding::Raw => !matches!(kind, FilterKind::Sparse),
        }
    }
}

impl core::fmt::Display for Coding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Below this many bits, `auto` codes a dense array both ways and sends
/// the smaller payload: coding a small array twice costs well under a
/// millisecond, decoding either takes about as long, and type 4's fixed
/// costs are a visible share of a small frame (about 10 bytes of the
/// paper's 9,920-byte filter, m = 140,000, where type 1 is smaller).
/// Above it, type 4's speed is worth its few bytes.
pub(crate) const AUTO_SMALLER_BELOW: u64 = 1 << 20;

/// Whether a static-coded payload of `len` bytes for an m-bit array with
/// `ones` one bits is within the bound the planner's guarantee rests on.
/// Without `std` (no planner, and no logarithms for the bound) any payload
/// smaller than raw is taken.
#[cfg(feature = "std")]
pub(crate) fn static_within_bound(len: usize, m: u64, ones: u64) -> bool {
    let bound_bits = crate::coder::payload_bits_bound(m, crate::math::log2_binomial(m, ones));
    (len as f64) * 8.0 <= bound_bits
}

/// See the `std` version: without it, any payload smaller than raw is taken.
#[cfg(not(feature = "std"))]
pub(crate) fn static_within_bound(_len: usize, _m: u64, _ones: u64) -> bool {
    true
}
