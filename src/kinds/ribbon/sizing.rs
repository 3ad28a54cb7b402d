//! How a ribbon filter's keys are split into shards and how many rows each
//! shard gets: the trade between build time and frame size. A decoder
//! needs none of this (the frame records every shard's rows and seed), but
//! the rule decides the bytes an encoder sends, so the golden vectors hold
//! it.
//!
//! The elimination's cost per key is the backlog of equations waiting for
//! a free row. A shard's last 127 rows take no start row, so its start
//! rows carry n / (rows − 127) keys each: above 1, equations pile up along
//! the shard (about 28 steps per key for 4,000 keys at 0.9% spare); below
//! 1, the backlog stays short. More spare rows also make a failed try
//! rarer; most failed tries are found before the elimination, for the cost
//! of generating their equations. The ignored test `success_rates` in
//! `build.rs` prints how often a first try succeeds: 107 in 200 for 4,000
//! keys at 0.9% spare (74 of the 93 failures found before the
//! elimination), 173 in 200 for 16,000 keys at 2% (26 of 27).
//! Measured on 10^6 keys (`cd benches/compare && cargo run --release --
//! ribbon`, docs/BENCHMARKS.md), [`Build::Fast`] builds in about two
//! thirds of [`Build::Compact`]'s time, for 1% more bytes.

use super::BAND;

/// Which way a ribbon filter is built: both give a frame any decoder
/// reads and the same false-positive rate; they differ in build time and
/// in bytes. The default is the smaller frame, since a frame is sent more
/// often than it is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Build {
    /// Shards of about 4,000 keys with 0.9% spare rows: frames about
    /// 1.05% over log2(1/f) bits per key at f = 2^-r (fractional rates
    /// add up to 0.086 bits, 1.1% at f = 0.01); a shard takes 1.7 tries
    /// on average (433 for the 250 shards of 10^6 keys), most failed ones
    /// found before the elimination.
    #[default]
    Compact,
    /// Shards of about 16,000 keys with 2% spare rows: about two thirds
    /// of the build time of [`Build::Compact`], for frames about 1% larger
    /// (2.0% over log2(1/f) at f = 2^-r, 3.2% at f = 0.01).
    Fast,
}

impl Build {
    /// Keys a shard is planned for.
    pub(crate) const fn shard_keys(self) -> u64 {
        match self {
            Build::Fast => 16_000,
            Build::Compact => 4_000,
        }
    }

    /// Spare rows per thousand keys before any retry.
    const fn spare_per_mille(self) -> u64 {
        match self {
            Build::Fast => 20,
            Build::Compact => 9,
        }
    }

    /// Rows planned for a shard of `n` keys before any retry: n plus the
    /// spare, and at least 128 (one band); 0 for no keys. Each failed try
    /// then adds ⌈rows/1000⌉ ([`Build::retry_rows`]).
    pub(crate) fn planned_rows(self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        n.saturating_add(n.saturating_mul(self.spare_per_mille()) / 1000)
            .max(BAND)
    }

    /// The rows of the next try after a failure with `rows`.
    pub(crate) const fn retry_rows(rows: u64) -> u64 {
        rows.saturating_add(rows.div_ceil(1000))
    }

    /// Rows per key to expect, retries included: the spare plus what the
    /// failed tries add (measured at 10^6 keys by `benches/compare
    /// ribbon`; tests/kinds/ribbon.rs holds it at 10^4 and 2·10^5 keys).
    /// A frame's bits per key are about this times the mean column count.
    pub const fn rows_per_key(self) -> f64 {
        match self {
            Build::Fast => 1.0201,
            Build::Compact => 1.0100,
        }
    }
}
