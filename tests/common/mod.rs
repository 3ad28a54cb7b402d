//! Shared test helpers.

use quickcheck::{Gen, QuickCheck};

/// A QuickCheck runner with a fixed seed, so failures reproduce. Vectors
/// have at most 100 elements (quickcheck's default size); integers span
/// their whole range.
pub fn qc(tests: u64, seed: u64) -> QuickCheck {
    QuickCheck::new()
        .rng(Gen::from_size_and_seed(100, seed))
        .tests(tests)
        .max_tests(tests * 10)
}
