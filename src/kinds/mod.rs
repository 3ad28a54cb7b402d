//! Filter kinds beyond the standard Bloom filter (docs/FORMAT.md section 8):
//! each has its own in-memory type, and where the standard coder does not
//! fit, its own payload coding. Kinds sit between [`crate::filter`] and
//! [`crate::format`]: they use the filter, the coder and the wire
//! primitives, and `format` frames them ([`crate::decode_any`]).

internal_modules!(bits);
internal! {
    pub use bits::KindDeltaError;
}
pub use counting::CountingError;

/// The registry: every kind this build holds in memory, as
/// `Variant(module::Type)` with the doc of its [`AnyFilter`](crate::AnyFilter)
/// variant, handed to `$callback`. The order is the order of dispatch: a
/// full frame goes to the first kind whose
/// [`Kind::accepts`](crate::Kind::accepts) takes its header, so a Squid
/// digest (a standard frame with Squid's record) and a BIP37 filter (one
/// with BIP37's record) come before the standard kind, and a BIP158
/// filter (a sparse frame with the block hash) before the sparse kind.
/// The list declares each kind's module (`kinds/<module>/`), and
/// `kind::any` builds [`AnyFilter`](crate::AnyFilter), its dispatch and
/// its conversions from it. Adding a kind is its folder, a line here and
/// its wire id in `wire::kind_id` (docs/ARCHITECTURE.md).
macro_rules! for_each_kind {
    ($callback:ident) => {
        $callback! {
            /// A Squid cache digest: a standard filter with Squid's hashing
            /// and Squid's header (metadata tag 1).
            Squid(squid::SquidDigest),
            /// A BIP37 `filterload` filter: a standard filter with BIP37's
            /// hashing (scheme 4) and its nFlags (metadata tag 4).
            Bip37(bip37::Bip37Filter),
            /// [`FilterKind::Standard`](crate::FilterKind::Standard).
            Standard(standard::BloomFilter),
            /// [`FilterKind::Counting`](crate::FilterKind::Counting).
            Counting(counting::CountingBloomFilter),
            /// [`FilterKind::Partitioned`](crate::FilterKind::Partitioned).
            Partitioned(partitioned::PartitionedBloomFilter),
            /// [`FilterKind::Scalable`](crate::FilterKind::Scalable).
            Scalable(scalable::ScalableBloomFilter),
            /// A BIP158 basic block filter: a sparse filter with BIP158's
            /// hashing and the block hash (metadata tag 3).
            Bip158(bip158::Bip158Filter),
            /// [`FilterKind::Sparse`](crate::FilterKind::Sparse).
            Sparse(sparse::SparseFilter),
            /// [`FilterKind::Ribbon`](crate::FilterKind::Ribbon).
            Ribbon(ribbon::RibbonFilter),
        }
    };
}
pub(crate) use for_each_kind;

/// `pub mod <module>;` for each kind in the registry.
macro_rules! kind_modules {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$ty:ident),)*) => {
        $(pub mod $module;)*
    };
}
for_each_kind!(kind_modules);
