//! The standard filter and its mathematics: hash positions against
//! independent vectors, properties of the in-memory filter, measured
//! false-positive rates against the formula, the optimiser against its
//! neighbours, and the paper's tables recomputed.

#[path = "../common/mod.rs"]
mod common;

mod fpr;
mod hashing;
mod optimiser;
mod paper_tables;
mod properties;
