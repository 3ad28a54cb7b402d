//! Signed frames (docs/FORMAT.md section 6, tag 2): `sign`, `verify` and
//! `public_key`, and the key arguments of `Publisher` and `Subscriber`.
//! Keys are raw Ed25519 keys as `bytes`: a 32-byte secret (RFC 8032's
//! seed) and a 32-byte public key. `generate_key` is in `__init__.py`,
//! where it takes its randomness from `os.urandom`.

use crate::errors::decode_error;
use crate::input::{maybe_detach, type_name, with_bytes};
use crate::kinds::FrameInfo;
use crate::limits::{self, Limits};
use crate::BIG;
use compressed_bloom::ed25519_dalek::{SigningKey, VerifyingKey};
use compressed_bloom::format::{sign_frame, verify_frame};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// Bytes in a secret key and in a public key.
const KEY_LEN: usize = 32;

/// The 32 bytes of the key `obj` (bytes-like), or a `ValueError` naming
/// `name` and `what` it should be.
fn key_bytes(obj: &Bound<'_, PyAny>, name: &str, what: &str) -> PyResult<[u8; KEY_LEN]> {
    with_bytes(obj, name, |b, _| {
        <[u8; KEY_LEN]>::try_from(b).map_err(|_| b.len())
    })?
    .map_err(|len| {
        PyValueError::new_err(format!(
            "{name} must be {KEY_LEN} bytes ({what}), not {len}"
        ))
    })
}

/// The signing key of the secret `obj` (32 bytes).
pub(crate) fn signing_key(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<SigningKey> {
    Ok(SigningKey::from_bytes(&key_bytes(
        obj,
        name,
        "an Ed25519 secret key",
    )?))
}

/// The public keys of the iterable `obj`, each 32 bytes and a valid
/// Ed25519 point.
pub(crate) fn verifying_keys(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<VerifyingKey>> {
    let one = obj.cast::<PyBytes>().is_ok()
        || obj.cast::<PyByteArray>().is_ok()
        || obj.cast::<PyMemoryView>().is_ok()
        || obj.cast::<PyString>().is_ok();
    if one {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an iterable of public keys, not a single {} (wrap it in a list)",
            type_name(obj)
        )));
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be an iterable of public keys, not {}",
            type_name(obj)
        ))
    })?;
    let mut keys = Vec::new();
    for (i, item) in iter.enumerate() {
        let at = format!("{name}[{i}]");
        let bytes = key_bytes(&item?, &at, "an Ed25519 public key")?;
        let key = VerifyingKey::from_bytes(&bytes)
            .map_err(|_| PyValueError::new_err(format!("{at} is not an Ed25519 public key")))?;
        keys.push(key);
    }
    Ok(keys)
}

/// ``frame`` (one whole frame: ``bytes``, ``bytearray`` or ``memoryview``)
/// signed by ``key``, a 32-byte Ed25519 secret key (``generate_key()``):
/// the same frame, version 3, with the key's id in its header and the
/// signature after its CRC. It decodes as the unsigned frame does. A
/// frame already signed is signed anew.
///
/// Raises ``ValueError`` for a key of another length, ``DecodeError`` if
/// ``frame`` is not one whole valid frame.
#[pyfunction]
fn sign(py: Python<'_>, frame: &Bound<'_, PyAny>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
    let key = signing_key(key, "key")?;
    let signed = with_bytes(frame, "frame", |bytes, fixed| {
        maybe_detach(py, fixed && bytes.len() > BIG, || sign_frame(bytes, &key))
    })?
    .map_err(|e| decode_error(py, e))?;
    Ok(PyBytes::new(py, &signed).unbind())
}

/// Checks that ``frame`` (one whole frame) is signed by one of ``keys``
/// (32-byte public keys) and returns its header as ``inspect`` does, with
/// ``signer`` set. The frame's checks come first (header, limits, length,
/// CRC), then one Ed25519 verification; no payload byte is decoded.
///
/// Raises ``UnsignedError``, ``UnknownKeyError`` (signed by none of
/// ``keys``) or ``BadSignatureError`` (altered, or forged), each a
/// ``SignatureError`` and a ``DecodeError``; ``DecodeError`` or
/// ``LimitError`` for an invalid frame; ``ValueError`` for a key that is
/// not 32 bytes or not an Ed25519 public key.
#[pyfunction]
#[pyo3(signature = (frame, keys, *, max_bytes=None, limits=None))]
fn verify(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    keys: &Bound<'_, PyAny>,
    max_bytes: Option<u64>,
    limits: Option<PyRef<'_, Limits>>,
) -> PyResult<FrameInfo> {
    let keys = verifying_keys(keys, "keys")?;
    let limits = limits::resolve(max_bytes, limits.as_deref());
    let h = with_bytes(frame, "frame", |bytes, fixed| {
        maybe_detach(py, fixed && bytes.len() > BIG, || {
            verify_frame(bytes, &keys, &limits)
        })
    })?
    .map_err(|e| decode_error(py, e))?;
    Ok(FrameInfo::new(py, &h))
}

/// The 32-byte public key of the 32-byte secret key ``secret``: what
/// receivers give ``verify`` and ``Subscriber(verifying_keys=...)``.
#[pyfunction]
fn public_key(py: Python<'_>, secret: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
    let key = signing_key(secret, "secret")?;
    Ok(PyBytes::new(py, key.verifying_key().as_bytes()).unbind())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sign, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(public_key, m)?)
}
