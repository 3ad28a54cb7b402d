//! The crate's errors as the exceptions of `compressed_bloom._errors`:
//! every variant is mapped here, by name, so that no error reaches Python
//! as a bare `RuntimeError` or a panic.

use compressed_bloom::filter::FilterError;
use compressed_bloom::kinds::ribbon::RibbonError;
use compressed_bloom::kinds::scalable::ScalableError;
use compressed_bloom::kinds::squid::SquidError;
use compressed_bloom::plan::PlanError;
use compressed_bloom::{DecodeError, SyncError, UpdateId};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict};

/// The Python module that defines the exception classes, imported once.
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// An exception of class `class` (a name in `compressed_bloom._errors`)
/// with message `msg` and the attributes `fill` sets.
pub(crate) fn raise(
    py: Python<'_>,
    class: &str,
    msg: String,
    fill: impl FnOnce(&Bound<'_, PyDict>) -> PyResult<()>,
) -> PyErr {
    let made = (|| {
        let module = ERRORS.get_or_try_init(py, || {
            py.import("compressed_bloom._errors").map(Bound::unbind)
        })?;
        let cls = module.bind(py).getattr(class)?;
        let kwargs = PyDict::new(py);
        fill(&kwargs)?;
        cls.call((msg,), Some(&kwargs))
    })();
    match made {
        Ok(exc) => PyErr::from_value(exc),
        // The package is broken (its _errors module missing): say so
        // rather than hide it.
        Err(e) => e,
    }
}

/// An update identity as Python sees it: `(stream, epoch, seq)`.
pub(crate) fn id_tuple(id: UpdateId) -> (u64, u64, u64) {
    (id.stream, id.epoch, id.seq)
}

/// A frame the crate refused, as `DecodeError` or the subclass that names
/// the refusal: `LimitError` for a limit, `WrongKindError` for a frame of
/// another kind, `WrongBaseError` for a delta made from another filter, a
/// `SignatureError` for a frame `verify` refused. `offset` is the byte the
/// crate names, where it names one.
pub(crate) fn decode_error(py: Python<'_>, e: DecodeError) -> PyErr {
    use DecodeError as D;
    let msg = e.to_string();
    match e {
        D::LimitExceeded {
            what,
            requested,
            limit,
        } => raise(py, "LimitError", msg, |d| {
            d.set_item("reason", "limit_exceeded")?;
            d.set_item("what", what)?;
            d.set_item("requested", requested)?;
            d.set_item("limit", limit)
        }),
        D::WrongKind { found, expected } => raise(py, "WrongKindError", msg, |d| {
            d.set_item("reason", "wrong_kind")?;
            d.set_item("found", found.name())?;
            d.set_item("expected", expected.name())
        }),
        D::WrongBase { expected, actual } => raise(py, "WrongBaseError", msg, |d| {
            d.set_item("reason", "wrong_base")?;
            d.set_item("expected", expected)?;
            d.set_item("actual", actual)
        }),
        D::ParamsMismatch { .. } => raise(py, "WrongBaseError", msg, |d| {
            d.set_item("reason", "params_mismatch")
        }),
        D::Unsigned => signature_error(py, "UnsignedError", "unsigned", msg, None),
        D::UnknownKey { key_id } => {
            signature_error(py, "UnknownKeyError", "unknown_key", msg, Some(key_id))
        }
        D::BadSignature { key_id } => {
            signature_error(py, "BadSignatureError", "bad_signature", msg, Some(key_id))
        }
        other => {
            let (reason, offset): (&str, Option<u64>) = match &other {
                D::Truncated { .. } => ("truncated", None),
                D::BadMagic { .. } => ("bad_magic", None),
                D::UnsupportedVersion { .. } => ("unsupported_version", None),
                D::UnknownFilterType { .. } => ("unknown_filter_type", None),
                D::UnknownHashScheme { .. } => ("unknown_hash_scheme", None),
                D::UnsupportedKind { .. } => ("unsupported_kind", None),
                D::UnknownMetadata { offset, .. } => ("unknown_metadata", Some(*offset as u64)),
                D::ReservedBits { offset, .. } => ("reserved_bits", Some(*offset as u64)),
                D::BadVarint { offset, .. } => ("bad_varint", Some(*offset as u64)),
                D::InvalidField { offset, .. } => ("invalid_field", Some(*offset as u64)),
                D::ChecksumMismatch { .. } => ("checksum_mismatch", None),
                D::TrailingBytes { offset, .. } => ("trailing_bytes", Some(*offset)),
                D::Payload { offset, .. } => ("payload", Some(*offset as u64)),
                D::Sparse { offset, .. } => ("sparse_payload", Some(*offset as u64)),
                D::Ribbon { offset, .. } => ("ribbon_payload", Some(*offset as u64)),
                D::Scalable { offset, .. } => ("scalable_payload", Some(*offset as u64)),
                D::Counting { offset, .. } => ("counting_payload", Some(*offset as u64)),
                D::Squid { offset, .. } => ("squid_header", Some(*offset as u64)),
                D::NotSquid => ("not_squid", None),
                D::Filter(_) => ("invalid_filter", None),
                D::WrongFrameType { .. } => ("wrong_frame_type", None),
                D::ResultMismatch { .. } => ("result_mismatch", None),
                _ => ("other", None),
            };
            raise(py, "DecodeError", msg, |d| {
                d.set_item("reason", reason)?;
                d.set_item("offset", offset)?;
                if let D::Truncated { needed, available } = other {
                    d.set_item("needed", needed)?;
                    d.set_item("available", available)?;
                }
                Ok(())
            })
        }
    }
}

/// A frame not signed by a key the receiver trusts, as the
/// `SignatureError` subclass `class` (`UnsignedError`, `UnknownKeyError`,
/// `BadSignatureError`), with the frame's key id as `key_id` (`bytes`)
/// where it has one. `verify` and a subscriber raise the same classes:
/// each is a `SyncError` and a `DecodeError`.
fn signature_error(
    py: Python<'_>,
    class: &str,
    reason: &str,
    msg: String,
    key_id: Option<[u8; 8]>,
) -> PyErr {
    raise(py, class, msg, |d| {
        d.set_item("reason", reason)?;
        if let Some(id) = key_id {
            d.set_item("key_id", PyBytes::new(py, &id))?;
        }
        Ok(())
    })
}

/// What a subscriber held before a refused frame, to tell a gap from a
/// delta for another base (the crate reports both as `NeedFull`).
#[derive(Clone, Copy)]
pub(crate) struct HeldBefore {
    /// Whether a filter was held at all.
    pub(crate) any: bool,
    /// Its version, if its frame carried one.
    pub(crate) version: Option<UpdateId>,
}

/// A subscriber's refusal, as the `SyncError` subclass that names it; an
/// invalid frame as its `DecodeError`. `got` is the refused frame's
/// identity, if it has one.
pub(crate) fn sync_error(
    py: Python<'_>,
    e: SyncError,
    before: HeldBefore,
    got: Option<UpdateId>,
) -> PyErr {
    let msg = e.to_string();
    match e {
        SyncError::Decode(d) => decode_error(py, d),
        SyncError::NeedFull { reason } => {
            // A gap: nothing held, or a delta that does not follow the
            // version held. Otherwise the order was right and the delta's
            // base (digest or parameters) is another filter's.
            let gap = !before.any
                || match (before.version, got) {
                    (Some(held), Some(got)) => {
                        got.epoch != held.epoch || Some(got.seq) != held.seq.checked_add(1)
                    }
                    _ => false,
                };
            let class = if gap { "GapError" } else { "WrongBaseError" };
            raise(py, class, msg, |d| {
                d.set_item("reason", if gap { "gap" } else { "wrong_base" })?;
                d.set_item("detail", reason)
            })
        }
        SyncError::Stale { held, got } => raise(py, "StaleError", msg, |d| {
            d.set_item("held", id_tuple(held))?;
            d.set_item("got", id_tuple(got))
        }),
        SyncError::WrongStream { expected, found } => raise(py, "WrongStreamError", msg, |d| {
            d.set_item("expected", expected)?;
            d.set_item("found", found)
        }),
        SyncError::Unordered { held } => raise(py, "UnorderedError", msg, |d| {
            d.set_item("held", id_tuple(held))
        }),
        SyncError::Unsigned => signature_error(py, "UnsignedError", "unsigned", msg, None),
        SyncError::UnknownKey { key_id } => {
            signature_error(py, "UnknownKeyError", "unknown_key", msg, Some(key_id))
        }
        SyncError::BadSignature { key_id } => {
            signature_error(py, "BadSignatureError", "bad_signature", msg, Some(key_id))
        }
        _ => raise(py, "SyncError", msg, |_| Ok(())),
    }
}

/// Parameters the crate refused, as `ValueError` naming the parameter
/// (`MemoryError` when the array cannot be allocated).
pub(crate) fn filter_error(e: FilterError) -> PyErr {
    let msg = e.to_string();
    match e {
        FilterError::InvalidM { .. } | FilterError::NotPartitionable { .. } => {
            PyValueError::new_err(format!("m: {msg}"))
        }
        FilterError::InvalidK { .. } => PyValueError::new_err(format!("k: {msg}")),
        FilterError::ParamsMismatch { .. } => PyValueError::new_err(format!("other: {msg}")),
        FilterError::OutOfMemory { .. } => PyMemoryError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

/// A planner's refusal: `ValueError` naming the argument, `PlanError` when
/// no plan meets the target, `BuildError` when the plan cannot be built.
pub(crate) fn plan_error(py: Python<'_>, e: PlanError) -> PyErr {
    let msg = e.to_string();
    match e {
        PlanError::InvalidArgument { name, .. } => PyValueError::new_err(format!("{name}: {msg}")),
        PlanError::Build { .. } => raise(py, "BuildError", msg, |_| Ok(())),
        _ => raise(py, "PlanError", msg, |_| Ok(())),
    }
}

/// A ribbon build that failed (the rate was checked before).
pub(crate) fn ribbon_error(py: Python<'_>, e: RibbonError) -> PyErr {
    raise(py, "BuildError", e.to_string(), |_| Ok(()))
}

/// A scalable policy out of range (`ValueError` naming the field), or a
/// layer that cannot be opened (`BuildError`).
pub(crate) fn scalable_error(py: Python<'_>, e: ScalableError) -> PyErr {
    match e {
        ScalableError::Policy { field } => PyValueError::new_err(format!("{field}: {e}")),
        other => raise(py, "BuildError", other.to_string(), |_| Ok(())),
    }
}

/// A Squid digest Squid would refuse, as `DecodeError` (or `LimitError`
/// for a mask above the receiver's limit).
pub(crate) fn squid_error(py: Python<'_>, e: SquidError) -> PyErr {
    let msg = e.to_string();
    match e {
        SquidError::TooLarge { bits, limit } => raise(py, "LimitError", msg, |d| {
            d.set_item("reason", "limit_exceeded")?;
            d.set_item("what", "squid mask bits")?;
            d.set_item("requested", bits)?;
            d.set_item("limit", limit)
        }),
        _ => raise(py, "DecodeError", msg, |d| d.set_item("reason", "squid")),
    }
}
