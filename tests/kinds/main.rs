//! The filter kinds beside the standard one (docs/FORMAT.md section 8):
//! round trips through frames, false-positive rates against their
//! formulas, plans that keep their budgets, deltas, hostile payloads, and
//! Squid's cache digests against an independent implementation.

#[path = "../common/mod.rs"]
mod common;

mod bip158;
mod bip37;
mod counting;
mod partitioned_sparse;
mod ribbon;
mod scalable;
mod squid;
