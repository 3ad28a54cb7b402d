//! `Publisher` and `Subscriber`: the crate's `sync` module, with its
//! ordering, identities and refusals unchanged.

use crate::errors::{self, sync_error, HeldBefore};
use crate::input::{maybe_detach, type_name, with_bytes};
use crate::kinds::{
    any_to_py, py_to_any, PyBloom, PyCounting, PyKind, PyPartitioned, PyRibbon, PyScalable,
    PySparse, PySquid,
};
use crate::limits::{self, Limits};
use crate::sign;
use crate::BIG;
use compressed_bloom::ed25519_dalek::{SigningKey, VerifyingKey};
use compressed_bloom::format::sign_frame;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::ribbon::RibbonFilter;
use compressed_bloom::kinds::scalable::ScalableBloomFilter;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::SquidDigest;
use compressed_bloom::{
    AnyFilter, BloomFilter, Coding, CountingBloomFilter, DecodeLimits, Publisher, PublisherOptions,
    Subscriber, SyncError, Update, UpdateKind,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyType};

/// Bytes of work a filter of any kind stands for (see [`PyKind::work`]).
fn any_work(f: &AnyFilter) -> usize {
    match f {
        AnyFilter::Standard(f) => f.work(),
        AnyFilter::Partitioned(f) => f.work(),
        AnyFilter::Counting(f) => f.work(),
        AnyFilter::Scalable(f) => f.work(),
        AnyFilter::Sparse(f) => f.work(),
        AnyFilter::Ribbon(f) => f.work(),
        AnyFilter::Squid(f) => f.work(),
        _ => usize::MAX,
    }
}

/// One published frame: ``frame`` (``bytes``), ``kind`` (``"full"`` or
/// ``"delta"``), ``is_full``, and ``identity`` ``(stream, epoch, seq)``,
/// the version it is (a full frame) or produces (a delta).
#[pyclass(module = "compressed_bloom", name = "Update", frozen, get_all)]
pub(crate) struct PyUpdate {
    frame: Py<PyBytes>,
    kind: &'static str,
    is_full: bool,
    identity: (u64, u64, u64),
}

#[pymethods]
impl PyUpdate {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Update(kind={:?}, identity={:?}, frame=<{} bytes>)",
            self.kind,
            self.identity,
            self.frame.bind(py).as_bytes().len()
        )
    }
}

impl PyUpdate {
    fn new(py: Python<'_>, u: Update) -> Self {
        let full = u.kind == UpdateKind::Full;
        PyUpdate {
            frame: PyBytes::new(py, &u.frame).unbind(),
            kind: if full { "full" } else { "delta" },
            is_full: full,
            identity: errors::id_tuple(u.id),
        }
    }
}

/// The sending side: each ``publish()`` sends the smaller of a delta
/// against the last published version and a full frame (a full frame
/// every ``full_every`` updates, so that receivers that missed one catch
/// up), numbered ``(stream, epoch, seq)``.
///
/// ``Publisher(filter, *, stream=0, epoch=None, full_every=16,
/// coding="auto", signing_key=None)`` follows ``filter``: change it
/// (``add``, ``update``, ``remove``, ``|=``) between updates. ``epoch``
/// defaults to the clock in microseconds; a publisher restarted without its
/// state must use a larger epoch than before, or subscribers refuse it as
/// stale. ``signing_key`` (a 32-byte secret key, ``generate_key()``) signs
/// every frame, for subscribers given its public key;
/// ``set_signing_key()`` changes it.
#[pyclass(module = "compressed_bloom", name = "Publisher")]
pub(crate) struct PyPublisher {
    filter: Py<PyAny>,
    inner: Publisher<AnyFilter>,
    /// The key frames are signed with, if any (the crate's publisher does
    /// not hand it back).
    key: Option<SigningKey>,
}

#[pymethods]
impl PyPublisher {
    #[new]
    #[pyo3(signature = (filter, *, stream=0, epoch=None, full_every=16, coding="auto",
        signing_key=None))]
    fn new(
        filter: &Bound<'_, PyAny>,
        stream: u64,
        epoch: Option<u64>,
        full_every: u32,
        coding: &str,
        signing_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let start = py_to_any(filter, "filter")?;
        let key = signing_key
            .map(|k| sign::signing_key(k, "signing_key"))
            .transpose()?;
        if full_every == 0 {
            return Err(PyValueError::new_err(
                "full_every must be at least 1 (1 sends only full frames)",
            ));
        }
        let c = Coding::from_name(coding).ok_or_else(|| {
            PyValueError::new_err(format!(
                "coding must be one of auto, adaptive, static, raw; not {coding:?}"
            ))
        })?;
        let squid = matches!(start, AnyFilter::Squid(_));
        if !c.applies_to(start.kind(), squid) {
            return Err(PyValueError::new_err(format!(
                "coding: the {} kind has no {coding} coding",
                start.kind().name()
            )));
        }
        let opts = PublisherOptions {
            stream,
            epoch,
            full_every,
            coding: c,
            signing_key: key.clone(),
        };
        Ok(PyPublisher {
            filter: filter.clone().unbind(),
            inner: Publisher::new(start, opts),
            key,
        })
    }

    /// Signs the updates from the next one on with ``key`` (a 32-byte
    /// secret key), or sends them unsigned (None). To rotate keys without
    /// a refused update, subscribers first hold the old and the new public
    /// key, then the publisher moves to the new key, then subscribers drop
    /// the old one.
    fn set_signing_key(&mut self, key: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let key = key.map(|k| sign::signing_key(k, "key")).transpose()?;
        self.inner.set_signing_key(key.clone());
        self.key = key;
        Ok(())
    }

    /// The 32-byte public key of the key frames are signed with, or None
    /// if they go unsigned.
    #[getter]
    fn public_key(&self, py: Python<'_>) -> Option<Py<PyBytes>> {
        self.key
            .as_ref()
            .map(|k| PyBytes::new(py, k.verifying_key().as_bytes()).unbind())
    }

    /// The filter this publisher follows (the object given, not a copy).
    #[getter]
    fn filter(&self, py: Python<'_>) -> Py<PyAny> {
        self.filter.clone_ref(py)
    }

    /// Follows another filter from the next ``publish()`` on: how a kind
    /// built from its whole set (sparse, ribbon) changes. A filter of other
    /// parameters or another kind goes as a full frame.
    #[setter]
    fn set_filter(&mut self, filter: &Bound<'_, PyAny>) -> PyResult<()> {
        py_to_any(filter, "filter")?;
        self.filter = filter.clone().unbind();
        Ok(())
    }

    /// The identity the next update will carry.
    #[getter]
    fn next_identity(&self) -> (u64, u64, u64) {
        errors::id_tuple(self.inner.next_id())
    }

    /// The frame for the filter as it is now: an ``Update``.
    fn publish(&mut self, py: Python<'_>) -> PyResult<PyUpdate> {
        let now = py_to_any(self.filter.bind(py), "filter")?;
        let big = any_work(&now) > BIG;
        if let Some(f) = self.inner.filter_mut() {
            *f = now;
        }
        let inner = &mut self.inner;
        let u = maybe_detach(py, big, || inner.publish());
        Ok(PyUpdate::new(py, u))
    }

    /// A full frame of the last published version, for a subscriber that
    /// raised ``NeedFullError``; None before the first ``publish()``.
    /// Signed with the current signing key, if there is one.
    fn full_frame(&self, py: Python<'_>) -> Option<PyUpdate> {
        let big = self.inner.filter().is_some_and(|f| any_work(f) > BIG);
        let (inner, key) = (&self.inner, &self.key);
        maybe_detach(py, big, || {
            let mut u = inner.full_frame()?;
            // The crate's full_frame() does not sign; a subscriber that
            // takes only signed frames needs this one signed too. A frame
            // that comes back signed already is left as it is.
            if let Some(key) = key {
                let unsigned = compressed_bloom::inspect(&u.frame, &DecodeLimits::unlimited())
                    .is_ok_and(|h| h.signer.is_none());
                if unsigned {
                    // Our own whole frame: signing it cannot fail.
                    if let Ok(signed) = sign_frame(&u.frame, key) {
                        u.frame = signed;
                    }
                }
            }
            Some(u)
        })
        .map(|u| PyUpdate::new(py, u))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (stream, epoch, seq) = errors::id_tuple(self.inner.next_id());
        Ok(format!(
            "<Publisher stream={stream} epoch={epoch} next_seq={seq} filter={}>",
            self.filter.bind(py).repr()?
        ))
    }
}

/// A subscriber of one kind, or of any kind.
enum Sub {
    Any(Subscriber<AnyFilter>),
    Standard(Subscriber<BloomFilter>),
    Partitioned(Subscriber<PartitionedBloomFilter>),
    Counting(Subscriber<CountingBloomFilter>),
    Scalable(Subscriber<ScalableBloomFilter>),
    Sparse(Subscriber<SparseFilter>),
    Ribbon(Subscriber<RibbonFilter>),
    Squid(Subscriber<SquidDigest>),
}

/// Runs `$e` with `$s` bound to the subscriber inside any variant.
macro_rules! each_sub {
    ($sub:expr, $s:ident => $e:expr) => {
        match $sub {
            Sub::Any($s) => $e,
            Sub::Standard($s) => $e,
            Sub::Partitioned($s) => $e,
            Sub::Counting($s) => $e,
            Sub::Scalable($s) => $e,
            Sub::Sparse($s) => $e,
            Sub::Ribbon($s) => $e,
            Sub::Squid($s) => $e,
        }
    };
}

/// A filter of one kind as the [`AnyFilter`] that holds it.
trait IntoAny {
    fn into_any(self) -> AnyFilter;
    fn any_work(&self) -> usize;
}

macro_rules! into_any {
    ($($ty:ty => $variant:ident),*) => {$(
        impl IntoAny for $ty {
            fn into_any(self) -> AnyFilter {
                AnyFilter::$variant(self)
            }
            fn any_work(&self) -> usize {
                self.work()
            }
        }
    )*};
}
into_any!(BloomFilter => Standard, PartitionedBloomFilter => Partitioned,
    CountingBloomFilter => Counting, ScalableBloomFilter => Scalable,
    SparseFilter => Sparse, RibbonFilter => Ribbon, SquidDigest => Squid);

impl IntoAny for AnyFilter {
    fn into_any(self) -> AnyFilter {
        self
    }
    fn any_work(&self) -> usize {
        any_work(self)
    }
}

/// The receiving side: ``receive(frame)`` takes full frames and deltas in
/// order and returns ``"full"`` or ``"delta"``; it refuses, with the held
/// filter unchanged:
///
/// * ``GapError``: a delta that does not follow the version held (one was
///   missed, or nothing is held yet): wait for, or ask for, a full frame;
/// * ``WrongBaseError``: a delta made from another filter;
/// * ``StaleError``: a duplicate, replayed or late frame;
/// * ``WrongKindError``: a frame of another kind than ``kind``;
/// * ``WrongStreamError``, ``UnorderedError``; and ``DecodeError`` or
///   ``LimitError`` for an invalid frame;
/// * with ``verifying_keys``: ``UnsignedError``, ``UnknownKeyError`` (signed
///   by a key it does not hold) and ``BadSignatureError`` (altered or
///   forged), each a ``SignatureError``, checked before the frame's order.
///
/// ``Subscriber(kind=None, *, stream=None, max_bytes=None, limits=None,
/// verifying_keys=None)``: ``kind`` is a filter class or kind name (None
/// takes every kind); ``stream`` follows one stream (else the first
/// identified frame's); ``verifying_keys``, 32-byte public keys, makes it
/// take only frames signed by one of them (None or empty: any frame).
#[pyclass(module = "compressed_bloom", name = "Subscriber")]
pub(crate) struct PySubscriber {
    inner: Sub,
    /// The public keys given (the crate's subscriber does not hand them
    /// back).
    keys: Vec<VerifyingKey>,
}

/// A subscriber of kind `$variant` with `$limits`, following `$stream`.
macro_rules! make_sub {
    ($variant:ident, $stream:expr, $limits:expr) => {
        Sub::$variant(match $stream {
            Some(s) => Subscriber::following(s, $limits),
            None => Subscriber::new($limits),
        })
    };
}

/// The kind name a subscriber's `kind` argument names: a name, a filter
/// class, or None for any.
fn kind_arg(kind: Option<&Bound<'_, PyAny>>) -> PyResult<&'static str> {
    let Some(kind) = kind else {
        return Ok("any");
    };
    if let Ok(s) = kind.cast::<PyString>() {
        let name = s.to_cow()?;
        const NAMES: [&str; 8] = [
            "any",
            "standard",
            "partitioned",
            "counting",
            "scalable",
            "sparse",
            "ribbon",
            "squid",
        ];
        return NAMES.into_iter().find(|n| *n == name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "kind must be one of {}, or a filter class; not {name:?}",
                NAMES.join(", ")
            ))
        });
    }
    if let Ok(t) = kind.cast::<PyType>() {
        let py = kind.py();
        macro_rules! class {
            ($($class:ident => $name:literal),*) => {$(
                if t.is(&py.get_type::<$class>()) {
                    return Ok($name);
                }
            )*};
        }
        class!(PyBloom => "standard", PyPartitioned => "partitioned", PyCounting => "counting",
            PyScalable => "scalable", PySparse => "sparse", PyRibbon => "ribbon", PySquid => "squid");
    }
    Err(PyTypeError::new_err(format!(
        "kind must be a kind name or a filter class, not {}",
        type_name(kind)
    )))
}

#[pymethods]
impl PySubscriber {
    #[new]
    #[pyo3(signature = (kind=None, *, stream=None, max_bytes=None, limits=None,
        verifying_keys=None))]
    fn new(
        kind: Option<&Bound<'_, PyAny>>,
        stream: Option<u64>,
        max_bytes: Option<u64>,
        limits: Option<PyRef<'_, Limits>>,
        verifying_keys: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let keys = verifying_keys
            .map(|k| sign::verifying_keys(k, "verifying_keys"))
            .transpose()?
            .unwrap_or_default();
        let l: DecodeLimits = limits::resolve(max_bytes, limits.as_deref());
        let inner = match kind_arg(kind)? {
            "standard" => make_sub!(Standard, stream, l),
            "partitioned" => make_sub!(Partitioned, stream, l),
            "counting" => make_sub!(Counting, stream, l),
            "scalable" => make_sub!(Scalable, stream, l),
            "sparse" => make_sub!(Sparse, stream, l),
            "ribbon" => make_sub!(Ribbon, stream, l),
            "squid" => make_sub!(Squid, stream, l),
            _ => make_sub!(Any, stream, l),
        };
        let mut sub = PySubscriber {
            inner,
            keys: Vec::new(),
        };
        sub.use_keys(keys);
        Ok(sub)
    }

    /// The public keys frames must be signed by (``bytes``, 32 each); an
    /// empty list takes unsigned frames too. Setting it (an iterable of
    /// public keys, or None) keeps the filter held: rotate by setting the
    /// old and the new key, then the new one alone.
    #[getter]
    fn verifying_keys<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        self.keys
            .iter()
            .map(|k| PyBytes::new(py, k.as_bytes()))
            .collect()
    }

    #[setter]
    fn set_verifying_keys(&mut self, keys: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let keys = keys
            .map(|k| sign::verifying_keys(k, "verifying_keys"))
            .transpose()?
            .unwrap_or_default();
        self.use_keys(keys);
        Ok(())
    }

    /// Takes the next frame (``bytes``, ``bytearray`` or ``memoryview``):
    /// returns ``"full"`` or ``"delta"``, what it applied. Raises a
    /// ``SyncError`` subclass for a frame out of order or (with
    /// ``verifying_keys``) not signed by one of them, ``DecodeError`` for an
    /// invalid one; the held filter is then unchanged.
    fn receive(&mut self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let before = HeldBefore {
            any: each_sub!(&self.inner, s => s.filter().is_some()),
            version: each_sub!(&self.inner, s => s.version()),
        };
        let work = each_sub!(&self.inner, s => s.filter().map_or(0, |f| f.any_work()));
        let inner = &mut self.inner;
        let (result, got) = with_bytes(frame, "frame", |bytes, fixed| {
            maybe_detach(py, fixed && (work > BIG || bytes.len() > BIG), || {
                let r = each_sub!(inner, s => s.receive(bytes));
                // The identity of a delta refused as NeedFull, to tell a gap
                // from a delta for another base (the frame passed the
                // checks that come before, so its header reads).
                let got = match &r {
                    Err(SyncError::NeedFull { .. }) => {
                        compressed_bloom::inspect(bytes, &DecodeLimits::unlimited())
                            .ok()
                            .and_then(|h| h.identity)
                    }
                    _ => None,
                };
                (r, got)
            })
        })?;
        match result {
            Ok(UpdateKind::Full) => Ok("full"),
            Ok(UpdateKind::Delta) => Ok("delta"),
            Err(e) => Err(sync_error(py, e, before, got)),
        }
    }

    /// A copy of the filter held, as its kind's class; None before the
    /// first full frame.
    #[getter]
    fn filter(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        each_sub!(&self.inner, s => s.filter().cloned().map(|f| any_to_py(py, f.into_any(), None)))
            .transpose()
    }

    /// The version held ``(stream, epoch, seq)``, if its frame carried one.
    #[getter]
    fn version(&self) -> Option<(u64, u64, u64)> {
        each_sub!(&self.inner, s => s.version()).map(errors::id_tuple)
    }

    /// The digest of the filter held (what a delta must name as its base).
    #[getter]
    fn digest(&self) -> Option<u64> {
        each_sub!(&self.inner, s => s.digest())
    }

    /// The kind taken (``"any"`` for every kind).
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.inner {
            Sub::Any(_) => "any",
            Sub::Standard(_) => "standard",
            Sub::Partitioned(_) => "partitioned",
            Sub::Counting(_) => "counting",
            Sub::Scalable(_) => "scalable",
            Sub::Sparse(_) => "sparse",
            Sub::Ribbon(_) => "ribbon",
            Sub::Squid(_) => "squid",
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<Subscriber kind={} version={:?}{}>",
            self.kind(),
            self.version(),
            if self.keys.is_empty() {
                String::new()
            } else {
                format!(" verifying_keys={}", self.keys.len())
            }
        )
    }
}

impl PySubscriber {
    /// Takes only frames signed by one of `keys` (none: any frame).
    fn use_keys(&mut self, keys: Vec<VerifyingKey>) {
        each_sub!(&mut self.inner, s => s.set_verifying_keys(keys.iter().copied()));
        self.keys = keys;
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUpdate>()?;
    m.add_class::<PyPublisher>()?;
    m.add_class::<PySubscriber>()
}
