//! `compressed_bloom._native`: the Python skin over the `compressed_bloom`
//! crate. It translates types and errors and nothing else: planning,
//! hashing, coding, frames, deltas and the publisher/subscriber rules all
//! stay in the core crate, so a fix there fixes Python too.
//!
//! The package's `__init__.py` re-exports everything here under
//! `compressed_bloom`, next to the exception classes (`_errors.py`), which
//! are plain Python so that their hierarchy (with the multiple inheritance
//! that lets one refusal be both a `SyncError` and a `DecodeError`) reads
//! as Python users expect.
//!
//! Threads: every call whose input or filter is over [`BIG`] bytes runs
//! with the GIL released (`Python::detach`), so that other Python threads
//! go on meanwhile.

mod errors;
mod input;
mod kinds;
mod limits;
mod plan;
mod sign;
mod sync;

use pyo3::prelude::*;

/// Work above this many bytes (a frame, a filter's array, a batch of keys)
/// runs with the GIL released; below it, releasing and taking back the GIL
/// would cost more than it frees.
pub(crate) const BIG: usize = 64 * 1024;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    kinds::register(m)?;
    limits::register(m)?;
    plan::register(m)?;
    sign::register(m)?;
    sync::register(m)?;
    Ok(())
}
