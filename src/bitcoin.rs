//! Bitcoin's filters, byte for byte.
//!
//! * [`Bip158Filter`]: BIP158 basic block filters, the Golomb-coded sets
//!   full nodes serve to light clients. Build a block's filter from its
//!   scripts ([`Bip158Filter::from_scripts`]), import BIP158 bytes
//!   ([`Bip158Filter::from_bip158_bytes`]), query it as a client does,
//!   chain its filter header ([`Bip158Filter::filter_header`]) and export
//!   the same bytes ([`Bip158Filter::to_bip158_bytes`]). Its frames are
//!   sparse frames with hash scheme 3 and the block hash (docs/FORMAT.md).
//! * [`Bip37Filter`]: BIP37 `filterload` filters, the Bloom filters SPV
//!   wallets send to full nodes. Import a `filterload` payload
//!   ([`Bip37Filter::from_filterload`]), query it as Bitcoin Core does
//!   ([`Bip37Filter::contains`]), send it in this crate's frames (often
//!   smaller: docs/BENCHMARKS.md) and export the same payload again
//!   ([`Bip37Filter::to_filterload`]). Its frames are standard frames with
//!   hash scheme 4 (docs/FORMAT.md).
//!
//! Each travels in frames like any other (checked, signed, published) and
//! decodes through [`decode_any`](crate::decode_any) and
//! [`decode_as`](crate::decode_as). Everything here builds without `std`
//! but for [`Bip37Filter::with_capacity`], Core's sizing, which needs
//! `f64::ln`.

pub use crate::kinds::bip158::{Bip158Error, Bip158Filter};
pub use crate::kinds::bip37::{Bip37Error, Bip37Filter};
