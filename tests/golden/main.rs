//! Golden vectors: committed frames that reference decoders written from
//! docs/FORMAT.md alone decoded. The crate must decode each to the same
//! content, rebuild it byte for byte, and refuse its corruptions. One
//! module per format version or kind.

#[path = "../common/mod.rs"]
mod common;

mod bip158;
mod bip37;
mod counting;
mod ribbon;
mod scalable;
mod signed;
mod standard;
mod static_coded;
mod static_rule;
mod v3;
