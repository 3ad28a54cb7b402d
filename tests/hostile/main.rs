//! Bytes from an adversary, through every decoder: each failure class has
//! its typed error, declared sizes are checked before anything is
//! allocated, and every input the fuzzers found stays an error.

mod frames;
mod fuzz_regressions;
mod static_coded;
