//! Bitcoin's filters, byte for byte: BIP158 basic block filters (the
//! Golomb-coded sets full nodes serve to light clients).
//!
//! Each is a filter kind of this crate under a hash scheme of its own
//! (docs/FORMAT.md section 1), so it travels in frames like any other
//! (checked, signed, published), decodes through
//! [`decode_any`](crate::decode_any) and [`decode_as`](crate::decode_as),
//! and is given back in Bitcoin's own bytes exactly.

pub use crate::kinds::bip158::{Bip158Error, Bip158Filter};
