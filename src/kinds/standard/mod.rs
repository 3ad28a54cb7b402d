//! The standard kind: [`BloomFilter`], k positions per key in one m-bit
//! array. The type lives in `filter`, below the frame layer, since the
//! other kinds are built from it; this folder holds its place in the
//! registry and its [`Kind`](crate::Kind) implementation.

// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;

pub use crate::filter::BloomFilter;
