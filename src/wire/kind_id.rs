//! The wire's names for what a frame holds: its filter type (how the
//! payload represents the filter) and its kind (docs/FORMAT.md sections 2
//! and 8). Plain ids, below every layer that reads or writes them, so that
//! a kind's folder can state its own frame rules in their terms.

/// How the payload represents the bit array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FilterType {
    /// The packed bit array, ⌈m/8⌉ bytes, bit i in byte i/8 at bit i%8.
    Raw,
    /// The bit array through the adaptive rANS run coder (`coder`).
    Coded,
    /// The XOR of two versions of a filter, coded like [`FilterType::Coded`],
    /// after the digests of both versions (`delta`).
    Delta,
    /// The XOR of two versions coded *given the base*: the XOR bits where the
    /// base is 0 and those where it is 1 are coded as two separate arrays,
    /// whose densities differ (format version 2; `delta`).
    ConditionalDelta,
    /// The bit array through the static coder (`coder::static_coded`):
    /// each block's count of ones is sent, so its model is built once, and
    /// dense blocks code a byte per step. Faster to decode than
    /// [`FilterType::Coded`] at every density (format version 3, kinds
    /// standard and partitioned).
    StaticCoded,
}

impl FilterType {
    /// Wire id.
    pub const fn id(self) -> u8 {
        match self {
            FilterType::Raw => 0,
            FilterType::Coded => 1,
            FilterType::Delta => 2,
            FilterType::ConditionalDelta => 3,
            FilterType::StaticCoded => 4,
        }
    }

    /// The type with wire id `id`, if format `version` defines it.
    pub const fn from_id(id: u8, version: u8) -> Option<Self> {
        let ty = match id {
            0 => FilterType::Raw,
            1 => FilterType::Coded,
            2 => FilterType::Delta,
            3 => FilterType::ConditionalDelta,
            4 => FilterType::StaticCoded,
            _ => return None,
        };
        if ty.min_version() <= version {
            Some(ty)
        } else {
            None
        }
    }

    /// The first format version that defines this type; frames of this type
    /// without version-3 features carry it in their version byte.
    pub const fn min_version(self) -> u8 {
        match self {
            FilterType::Raw | FilterType::Coded | FilterType::Delta => 1,
            FilterType::ConditionalDelta => 2,
            FilterType::StaticCoded => 3,
        }
    }

    /// Whether frames of this type carry a change to a filter (they are
    /// applied with [`crate::delta::apply`], not decoded alone).
    pub const fn is_delta(self) -> bool {
        matches!(self, FilterType::Delta | FilterType::ConditionalDelta)
    }

    /// Lower-case name used by the CLI and JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            FilterType::Raw => "raw",
            FilterType::Coded => "coded",
            FilterType::Delta => "delta",
            FilterType::ConditionalDelta => "conditional-delta",
            FilterType::StaticCoded => "static",
        }
    }
}

/// Declares [`FilterKind`] from one line per kind: its wire id, its name
/// and what it holds. The line here is one of the two places a new kind is
/// registered (the other is `kinds::for_each_kind!`).
macro_rules! filter_kinds {
    ($($(#[$doc:meta])* $variant:ident = $id:literal $name:literal,)*) => {
        /// The filter's kind: its array, its hash functions and how the
        /// receiver holds it (the version-3 kind byte; versions 1 and 2 hold
        /// only [`FilterKind::Standard`]). docs/FORMAT.md section 8
        /// specifies each.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum FilterKind {
            $($(#[$doc])* $variant,)*
        }

        impl FilterKind {
            /// Every kind, in wire-id order.
            pub const ALL: &'static [FilterKind] = &[$(FilterKind::$variant,)*];

            /// Wire id.
            pub const fn id(self) -> u8 {
                match self {
                    $(FilterKind::$variant => $id,)*
                }
            }

            /// The kind with wire id `id`, if the format assigns it.
            pub const fn from_id(id: u8) -> Option<Self> {
                match id {
                    $($id => Some(FilterKind::$variant),)*
                    _ => None,
                }
            }

            /// Lower-case name used by the CLI and JSON output.
            pub const fn name(self) -> &'static str {
                match self {
                    $(FilterKind::$variant => $name,)*
                }
            }
        }
    };
}

filter_kinds! {
    /// The bit array of docs/FORMAT.md section 1: k positions per key in
    /// one m-bit array. Wire id 0.
    Standard = 0 "standard",
    /// 4-bit saturating counters (paper §V). Wire id 1.
    Counting = 1 "counting",
    /// k disjoint sub-arrays of m/k bits, one position in each. Wire id 2.
    Partitioned = 2 "partitioned",
    /// Layers of standard filters that grow as keys arrive. Wire id 3.
    Scalable = 3 "scalable",
    /// The sorted positions of the one bits, held without the m-bit
    /// array. Wire id 4.
    Sparse = 4 "sparse",
    /// A Ribbon filter: a solved linear system over GF(2), for a static
    /// set in about log2(1/f) bits per key. Wire id 5.
    Ribbon = 5 "ribbon",
}

impl FilterKind {
    /// Whether this build decodes frames of this kind: every kind the
    /// format assigns has a decoder here.
    pub const fn is_supported(self) -> bool {
        true
    }

    /// The name the format assigns to kind id `id` (for error messages).
    pub const fn assigned_name(id: u8) -> Option<&'static str> {
        match Self::from_id(id) {
            Some(k) => Some(k.name()),
            None => None,
        }
    }
}
