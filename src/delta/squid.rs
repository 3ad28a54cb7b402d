//! A Squid digest's delta: a delta of its mask (a standard filter with
//! Squid's hashing) through the common delta path, with the header's
//! `count` following the delta's declared n.

use super::DeltaHeader;
use crate::format::{DecodeError, DecodeLimits};
use crate::squid::SquidDigest;

impl SquidDigest {
    /// Applies a delta frame (plain or conditional) to the mask, checked as
    /// [`super::apply`] checks it; the header's `count` becomes the
    /// delta's declared n (clamped to Squid's 32-bit field). On error
    /// nothing changes.
    ///
    /// # Errors
    /// Any [`DecodeError`] of the delta.
    pub fn apply_delta(&mut self, frame: &[u8], limits: &DecodeLimits) -> Result<(), DecodeError> {
        let (filter, cblock) = self.parts_mut();
        super::apply(filter, frame, limits)?;
        let count = i32::try_from(filter.len()).unwrap_or(i32::MAX);
        cblock.set_i32(8, count);
        Ok(())
    }

    /// [`SquidDigest::apply_delta`] for a receiver that holds the mask's
    /// digest: a delta for another base is refused before the mask is
    /// read. Returns the result's digest.
    pub(crate) fn apply_delta_checked(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
    ) -> Result<u64, DecodeError> {
        let (filter, cblock) = self.parts_mut();
        let got = super::apply_checked(filter, held, frame, d)?;
        let count = i32::try_from(filter.len()).unwrap_or(i32::MAX);
        cblock.set_i32(8, count);
        Ok(got)
    }
}
