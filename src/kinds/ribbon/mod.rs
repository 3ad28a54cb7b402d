//! The Ribbon filter (kind 5; Dillinger & Walzer, "Ribbon filter:
//! practically smaller than Bloom and Xor", 2021): a static set answered by
//! a linear system over GF(2). Each key is one equation, "the XOR of the
//! solution rows its 128-bit coefficient row selects equals its
//! fingerprint"; the sender solves the system once, and the solution is
//! what travels. A non-member matches its own random fingerprint with
//! probability 2^-r, where r is the number of solution columns where its
//! equation lands, so the frame costs about log2(1/f) bits per key, against
//! 1.44·log2(1/f) for a Bloom filter at the same rate.
//!
//! Why the pieces are as they are (docs/FORMAT.md section 8.5 is the
//! contract; this module is one implementation of it):
//! * keys are spread over **shards** of a few thousand keys, each sized
//!   for the keys it actually got and laid end to end over the rows: a
//!   single band over a million keys needs about 3% spare rows to succeed,
//!   a shard sized to its own count about 1%, and 2% buys a build in
//!   about two thirds of the time ([`Build`] chooses);
//! * the columns vary: the last `upper` blocks of 128 rows have r + 1
//!   columns and the others r, so any rate between 2^-r and 2^-(r+1) is
//!   reachable and bits per key track log2(1/f) rather than its ceiling
//!   ([`filter`]);
//! * everything a query needs is derived from the crate's XXH3-128 key hash
//!   (section 1) and a one-byte construction seed per shard ([`hash`]), so
//!   a failed shard is retried without hashing the keys again;
//! * the solution is stored interleaved, one 128-bit word per block and
//!   column, so a query is two AND-and-parity steps per column (and stops
//!   at the first column that differs from the fingerprint: two on
//!   average for a non-member), and the payload is the queryable
//!   structure: decoding is a length check and a copy ([`payload`]).
//!
//! ## From a plan to the wire and back
//! Plan for 10,000 keys at f = 0.01, build, send as a frame, decode, and
//! publish to a subscriber:
//!
//! ```
//! use compressed_bloom::plan::{self, Constraints, Needs, Target};
//! use compressed_bloom::{decode_as, encode_any, AnyFilter, DecodeLimits, FilterKind};
//! use compressed_bloom::{Publisher, PublisherOptions, Subscriber};
//! let needs = Needs::STATIC;
//! let (choice, _) = plan::recommend(10_000, Target::Fpr(0.01), needs, &Constraints::default())?;
//! let filter = choice.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
//! assert_eq!(filter.kind(), FilterKind::Ribbon);
//! let frame = encode_any(&filter);
//! let received: AnyFilter = decode_as(&frame, &DecodeLimits::default())?;
//! assert_eq!(received, filter);
//! let mut publisher = Publisher::new(filter, PublisherOptions::default());
//! let mut subscriber = Subscriber::<AnyFilter>::default();
//! subscriber.receive(&publisher.publish().frame)?;
//! assert!(subscriber.filter().is_some_and(|f| f.contains(&7u32.to_le_bytes())));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;
// Each frame and delta function, for the crate's tests, tools and CLI;
// the API is the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{encode_ribbon, decode_ribbon};
}

internal_modules!(build);
internal_modules!(filter);
internal_modules!(hash);
internal_modules!(payload);
#[cfg(feature = "std")]
internal_modules!(plan);
mod sizing;
mod solve;

pub use filter::RibbonFilter;
internal! {
    pub use filter::columns_for;
}
internal! {
    pub use build::Shard;
}
pub use sizing::Build;

use thiserror::Error;

internal! {
/// Rows per block and the width of a coefficient row (the band width w).
pub const BAND: u64 = 128;
}

internal! {
/// Largest number of lower columns r (the upper blocks have r + 1 ≤ 64).
pub const MAX_COLUMNS: u32 = 63;
}

/// Why a Ribbon payload was rejected, or a filter could not be built.
/// Offsets are bytes from the start of the payload.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RibbonError {
    /// The payload ends inside its prefix.
    #[error("the prefix ends at payload byte {offset}")]
    Truncated {
        /// Where input ran out.
        offset: usize,
    },
    /// A band width other than 128.
    #[error("band width {width} (only 128 is defined)")]
    BandWidth {
        /// The byte found.
        width: u8,
    },
    /// A varint of the prefix is malformed.
    #[error("bad varint for {field} at payload byte {offset}")]
    BadVarint {
        /// Which field.
        field: &'static str,
        /// Where it starts.
        offset: usize,
    },
    /// More upper blocks than blocks, or upper blocks when r = 64 (they
    /// would need 65 columns).
    #[error("{upper} upper blocks of {blocks}")]
    Upper {
        /// Declared upper blocks.
        upper: u64,
        /// Blocks in the filter (⌈m / 128⌉).
        blocks: u64,
    },
    /// No shards, or more shards than the payload can describe.
    #[error("{shards} shards declared, between 1 and {limit} fit")]
    Shards {
        /// Declared shard count.
        shards: u64,
        /// The largest count the payload's bytes allow.
        limit: u64,
    },
    /// A shard with keys has fewer rows than one band.
    #[error("shard {shard} has {rows} rows (0, or at least 128)")]
    ShardRows {
        /// Which shard.
        shard: u64,
        /// Its rows.
        rows: u64,
    },
    /// The shards' rows do not add up to m.
    #[error("the shards hold {found} rows, the header declares {rows}")]
    RowSum {
        /// Sum of the shards' rows (saturating).
        found: u64,
        /// m.
        rows: u64,
    },
    /// The solution is not exactly 16·(⌈m/128⌉·r + upper) bytes.
    #[error("the solution holds {found} bytes, the parameters need {expected}")]
    Length {
        /// Bytes after the prefix.
        found: u64,
        /// Bytes the parameters imply.
        expected: u64,
    },
    /// Parameters out of range for building (rate, columns or size).
    #[error("cannot build: {reason}")]
    Params {
        /// What is wrong.
        reason: &'static str,
    },
    /// A shard's system had no solution with any of the 256 construction
    /// seeds (each try also adds a block, so this is not seen in practice).
    #[error("shard {shard} found no solution in 256 seeds")]
    Unsolvable {
        /// The shard.
        shard: u64,
    },
}
