//! What a ribbon frame built the default ([`Build::Compact`]) way is
//! expected to cost, for the planner and `cbloom plan`: rows are about
//! n·1.01 (the 0.9% spare a shard starts with plus its retries), each with
//! r or r + 1 columns as [`super::filter::columns_for`] splits them, plus
//! the header, the shard table and the CRC.

use super::filter::columns_for;
use super::sizing::Build;
use super::RibbonError;


/// The expected cost of a ribbon frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The false-positive rate planned for.
    pub fpr: f64,
    /// Frame bits per key, expected.
    pub bits_per_key: f64,
    /// Frame bytes, expected.
    pub frame_bytes: u64,
}

/// Rows expected for n keys built the [`Build::Compact`] way, and at least
/// one band of 128.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn expected_rows(n: u64) -> u64 {
    expected_rows_with(n, Build::Compact)
}

/// Rows expected for n keys built the way `how` says, and at least one
/// band of 128.
pub fn expected_rows_with(n: u64, how: Build) -> u64 {
    (n as f64 * how.rows_per_key()).round().max(128.0) as u64
}

/// The expected frame for n keys at rate `fpr`, built the
/// [`Build::Compact`] way.
///
/// # Errors
/// [`RibbonError::Params`] for a rate outside (2^-64, 1/2].
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn for_fpr(n: u64, fpr: f64) -> Result<Estimate, RibbonError> {
    for_fpr_with(n, fpr, Build::Compact)
}

/// The expected frame for n keys at rate `fpr`, built the way `how` says
/// (its shards and spare rows).
///
/// # Errors
/// As [`for_fpr`].
pub fn for_fpr_with(n: u64, fpr: f64, how: Build) -> Result<Estimate, RibbonError> {
    let (r, u) = columns_for(fpr)?;
    let rows = (n as f64 * how.rows_per_key()).max(128.0);
    let shards = n.div_ceil(how.shard_keys()).max(1) as f64;
    // Header (about 20 bytes with the CRC), prefix, 3 bytes per shard.
    let overhead = 24.0 + 3.0 * shards;
    let bytes = (rows * (f64::from(r) + u) / 8.0 + overhead).ceil();
    Ok(Estimate {
        fpr,
        bits_per_key: bytes * 8.0 / n.max(1) as f64,
        frame_bytes: bytes as u64,
    })
}

/// The lowest rate whose expected frame fits in `bytes` (bisection on
/// log2(1/f); `cbloom build --type ribbon --bytes` then checks the real
/// frame and lowers the rate until it fits).
///
/// # Errors
/// [`RibbonError::Params`] if even f = 1/2 does not fit.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn for_bytes(n: u64, bytes: u64) -> Result<Estimate, RibbonError> {
    for_bytes_with(n, bytes, Build::Compact)
}

/// As [`for_bytes`], for frames built the way `how` says.
///
/// # Errors
/// As [`for_bytes`].
pub fn for_bytes_with(n: u64, bytes: u64, how: Build) -> Result<Estimate, RibbonError> {
    let fits =
        |bits: f64| for_fpr_with(n, (-bits).exp2(), how).is_ok_and(|e| e.frame_bytes <= bytes);
    if !fits(1.0) {
        return Err(RibbonError::Params {
            reason: "the budget does not hold a ribbon filter at f = 1/2",
        });
    }
    let (mut lo, mut hi) = (1.0f64, 63.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    for_fpr_with(n, (-lo).exp2(), how)
}
