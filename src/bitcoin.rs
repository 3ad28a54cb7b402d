//! Bitcoin's filters, byte for byte.
//!
//! * [`Bip37Filter`]: BIP37 `filterload` filters, the Bloom filters SPV
//!   wallets send to full nodes. Import a `filterload` payload
//!   ([`Bip37Filter::from_filterload`]), query it as Bitcoin Core does
//!   ([`Bip37Filter::contains`]), send it in this crate's frames (often
//!   smaller: docs/BENCHMARKS.md) and export the same payload again
//!   ([`Bip37Filter::to_filterload`]). Its frames are standard frames with
//!   hash scheme 4 (docs/FORMAT.md).
//!
//! Everything here builds without `std` but for
//! [`Bip37Filter::with_capacity`], Core's sizing, which needs `f64::ln`.

pub use crate::kinds::bip37::{Bip37Error, Bip37Filter};
