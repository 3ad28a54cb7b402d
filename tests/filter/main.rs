//! The standard filter and its mathematics: hash positions against
//! independent vectors, properties of the in-memory filter, measured
//! false-positive rates against the formula, the optimiser against its
//! neighbours, the paper's tables recomputed, and plans built into filters
//! of every kind.

#[path = "../common/mod.rs"]
mod common;

mod fpr;
mod hashing;
mod optimiser;
mod paper_tables;
mod plan_build;
mod properties;
