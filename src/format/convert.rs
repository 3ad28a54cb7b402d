//! Conversions between [`AnyFilter`] and each kind's own type, so that a
//! caller holding one can ask for the other without matching on the kind
//! (`AnyFilter::from(filter)`, `BloomFilter::try_from(any)`).

use super::any::AnyFilter;
use crate::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::kinds::partitioned::PartitionedBloomFilter;
use crate::kinds::ribbon::RibbonFilter;
use crate::kinds::scalable::ScalableBloomFilter;
use crate::kinds::sparse::SparseFilter;
use crate::squid::SquidDigest;

/// `From<$ty> for AnyFilter` and `TryFrom<AnyFilter> for $ty`; the
/// `TryFrom` error hands back the filter of the other kind.
macro_rules! conversions {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for AnyFilter {
            fn from(f: $ty) -> Self {
                AnyFilter::$variant(f)
            }
        }

        impl TryFrom<AnyFilter> for $ty {
            type Error = AnyFilter;

            fn try_from(any: AnyFilter) -> Result<Self, AnyFilter> {
                match any {
                    AnyFilter::$variant(f) => Ok(f),
                    other => Err(other),
                }
            }
        }
    )*};
}

conversions!(
    Standard(BloomFilter),
    Counting(CountingBloomFilter),
    Partitioned(PartitionedBloomFilter),
    Scalable(ScalableBloomFilter),
    Sparse(SparseFilter),
    Ribbon(RibbonFilter),
    Squid(SquidDigest),
);
