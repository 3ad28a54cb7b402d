//! Filter kinds beyond the standard Bloom filter (docs/FORMAT.md section 8):
//! each has its own in-memory type, and where the standard coder does not
//! fit, its own payload coding. Kinds sit between [`crate::filter`] and
//! [`crate::format`]: they use the filter, the coder and the wire
//! primitives, and `format` frames them ([`crate::format::decode_any`]).

pub mod partitioned;
pub mod sparse;
internal_modules!(bits);
internal_modules!(counting);
internal! {
    pub use bits::KindDeltaError;
}
pub use counting::CountingError;
pub mod scalable;
pub mod ribbon;
