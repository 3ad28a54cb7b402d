//! Bytes from Python: frames and keys as `bytes`, `bytearray`,
//! `memoryview` (or any object with the buffer protocol), and keys as
//! `str` (UTF-8).
//!
//! The stable ABI of Python 3.9 has no buffer protocol (it entered the
//! limited API in 3.11), so `bytes` and `bytearray` are read in place
//! through their own accessors, and a `memoryview` through the `bytes` or
//! `bytearray` it views when it spans the whole object (what
//! `memoryview(b)` gives). Any other buffer (a slice of a view, an
//! `array.array`, an mmap) is copied once with `memoryview.tobytes()`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// Where the bytes of an argument are.
enum Source<'py> {
    /// A `bytes` object: immutable, read in place.
    Bytes(Bound<'py, PyBytes>),
    /// A `bytearray`: read in place with the GIL held.
    ByteArray(Bound<'py, PyByteArray>),
}

/// The object whose bytes `obj` are: itself for `bytes` and `bytearray`,
/// the viewed object for a `memoryview` spanning all of one, else a copy
/// (`memoryview(obj).tobytes()`); `None` if `obj` has no bytes at all
/// (`str` included: its bytes are an encoding, asked for explicitly).
fn source<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Source<'py>>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(Source::Bytes(b.clone())));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(Source::ByteArray(b.clone())));
    }
    if obj.cast::<PyString>().is_ok() {
        return Ok(None);
    }
    let view = match obj.cast::<PyMemoryView>() {
        Ok(v) => v.clone(),
        Err(_) => match PyMemoryView::from(obj) {
            Ok(v) => v,
            Err(_) => return Ok(None),
        },
    };
    let whole = view.getattr("c_contiguous")?.is_truthy()?;
    let inner = view.getattr("obj")?;
    let nbytes: usize = view.getattr("nbytes")?.extract()?;
    if whole && inner.len().ok() == Some(nbytes) {
        if let Ok(b) = inner.cast::<PyBytes>() {
            return Ok(Some(Source::Bytes(b.clone())));
        }
        if let Ok(b) = inner.cast::<PyByteArray>() {
            return Ok(Some(Source::ByteArray(b.clone())));
        }
    }
    let copy = view.call_method0("tobytes")?.cast_into::<PyBytes>()?;
    Ok(Some(Source::Bytes(copy)))
}

/// Runs `f` on the bytes of `obj` (`bytes`, `bytearray`, `memoryview` or
/// another buffer), read in place where the stable ABI allows (see the
/// module docs). `f`'s second argument says whether the bytes cannot
/// change while it runs, so that the GIL may be released: true for
/// `bytes`. A `bytearray` could be changed by another thread once the GIL
/// is released, so it is read with the GIL held.
///
/// # Errors
/// `TypeError` naming `name` for anything else.
pub(crate) fn with_bytes<R>(
    obj: &Bound<'_, PyAny>,
    name: &str,
    f: impl FnOnce(&[u8], bool) -> R,
) -> PyResult<R> {
    match source(obj)? {
        Some(Source::Bytes(b)) => Ok(f(b.as_bytes(), true)),
        Some(Source::ByteArray(b)) => Ok(bytearray_bytes(&b, |bytes| f(bytes, false))),
        None => Err(PyTypeError::new_err(format!(
            "{name} must be bytes, bytearray or memoryview, not {}",
            type_name(obj)
        ))),
    }
}

/// Runs `f` on the bytes of a `bytearray`, in place, with the GIL held.
#[allow(unsafe_code)] // reads the bytearray's buffer in place; argument below
fn bytearray_bytes<R>(b: &Bound<'_, PyByteArray>, f: impl FnOnce(&[u8]) -> R) -> R {
    // SAFETY: `PyByteArray::as_bytes` is sound while nothing resizes or
    // writes the bytearray during the borrow. `f` is this crate's code: it
    // runs Rust only (hashing, decoding), never Python code that could
    // touch the bytearray, and the GIL stays held (no `detach` is reached
    // with a bytearray: callers get `false` for "may release"), so no
    // other Python thread runs meanwhile.
    f(unsafe { b.as_bytes() })
}

/// The name of `obj`'s type, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Runs `f` on the bytes of the key `obj`: `bytes`, `str` (as UTF-8),
/// `bytearray` or `memoryview`.
///
/// # Errors
/// `TypeError` for any other type.
pub(crate) fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(f(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let s = s.to_cow()?;
        return Ok(f(s.as_bytes()));
    }
    match source(obj)? {
        Some(Source::Bytes(b)) => Ok(f(b.as_bytes())),
        Some(Source::ByteArray(b)) => Ok(bytearray_bytes(&b, f)),
        None => Err(key_type_error(obj)),
    }
}

/// The `TypeError` for a key of another type.
fn key_type_error(obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "a key must be bytes, str, bytearray or memoryview, not {}",
        type_name(obj)
    ))
}

/// One key of a batch: a `bytes` object read in place, or the UTF-8 of a
/// `str` (or the copy of a small buffer).
enum Held<'py> {
    Bytes(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

/// The keys of an iterable, collected so that they can be hashed with the
/// GIL released: `bytes` are kept as references, others copied.
pub(crate) struct Keys<'py> {
    held: Vec<Held<'py>>,
    /// Bytes of key data, for deciding whether to release the GIL.
    total: usize,
}

impl<'py> Keys<'py> {
    /// The keys of `iterable`.
    ///
    /// # Errors
    /// `TypeError` naming `name` if it is a single key (`bytes`, `str`)
    /// or not iterable, or if an item is not a key; any error the
    /// iteration raises.
    pub(crate) fn collect(iterable: &Bound<'py, PyAny>, name: &str) -> PyResult<Self> {
        if iterable.cast::<PyBytes>().is_ok() || iterable.cast::<PyString>().is_ok() {
            return Err(PyTypeError::new_err(format!(
                "{name} must be an iterable of keys, not a single {} (wrap it in a list)",
                type_name(iterable)
            )));
        }
        let iter = iterable.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "{name} must be an iterable of keys, not {}",
                type_name(iterable)
            ))
        })?;
        let mut held = Vec::with_capacity(iterable.len().unwrap_or(0));
        let mut total = 0usize;
        for item in iter {
            let item = item?;
            let h = match item.cast_into::<PyBytes>() {
                Ok(b) => Held::Bytes(b),
                Err(e) => Held::Owned(with_key(&e.into_inner(), <[u8]>::to_vec)?),
            };
            total = total.saturating_add(match &h {
                Held::Bytes(b) => b.as_bytes().len(),
                Held::Owned(v) => v.len(),
            });
            held.push(h);
        }
        Ok(Keys { held, total })
    }

    /// The keys' bytes, in order.
    pub(crate) fn slices(&self) -> Vec<&[u8]> {
        self.held
            .iter()
            .map(|h| match h {
                Held::Bytes(b) => b.as_bytes(),
                Held::Owned(v) => v.as_slice(),
            })
            .collect()
    }

    /// Whether hashing them is worth releasing the GIL: key bytes plus
    /// 16 bytes a key of per-key work, over [`crate::BIG`].
    pub(crate) fn big(&self) -> bool {
        self.total
            .saturating_add(self.held.len().saturating_mul(16))
            > crate::BIG
    }
}

/// Runs `f` with the GIL released if `release`, else with it held.
pub(crate) fn maybe_detach<T: Send>(
    py: Python<'_>,
    release: bool,
    f: impl FnOnce() -> T + Send,
) -> T {
    if release {
        py.detach(f)
    } else {
        f()
    }
}
