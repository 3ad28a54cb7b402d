//! `Limits`: the crate's `DecodeLimits`, and the `max_bytes` shorthand
//! every decoding call takes.

use compressed_bloom::format::KindSet;
use compressed_bloom::{DecodeLimits, FilterKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// What a decoder accepts from a frame, checked against the header before
/// anything is allocated. The defaults are the crate's, meant for frames
/// from strangers: a decoded filter of at most 512 MiB (``max_m`` = 2**32
/// bits), frames up to 1 GiB, and a bounded expansion of frame bytes to
/// filter bytes.
///
/// ``max_bytes`` (here and on every decoding call) caps the memory a
/// decoded filter may hold: it sets ``max_m`` to ``8 * max_bytes``.
/// ``kinds`` restricts the kinds accepted (names such as ``"standard"``).
#[pyclass(module = "compressed_bloom", name = "Limits", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct Limits {
    pub(crate) inner: DecodeLimits,
}

/// The wire kind named `name`, or a `ValueError` naming the parameter.
pub(crate) fn kind_by_name(name: &str, param: &str) -> PyResult<FilterKind> {
    FilterKind::ALL
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = FilterKind::ALL.iter().map(|k| k.name()).collect();
            PyValueError::new_err(format!(
                "{param} must be one of {}, not {name:?}",
                names.join(", ")
            ))
        })
}

#[pymethods]
impl Limits {
    #[new]
    #[pyo3(signature = (*, max_bytes=None, max_m=None, max_k=None, max_frame_len=None,
        max_expansion=Some(compressed_bloom::DecodeLimits::DEFAULT_MAX_EXPANSION),
        expansion_floor=None, max_decisions_per_byte=None, kinds=None))]
    #[allow(clippy::too_many_arguments)] // one keyword argument per field, as in Rust
    fn new(
        max_bytes: Option<u64>,
        max_m: Option<u64>,
        max_k: Option<u32>,
        max_frame_len: Option<u64>,
        max_expansion: Option<u64>,
        expansion_floor: Option<u64>,
        max_decisions_per_byte: Option<u64>,
        kinds: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let mut inner = DecodeLimits::default();
        if let Some(m) = max_m {
            inner.max_m = m;
        }
        if let Some(k) = max_k {
            inner.max_k = k;
        }
        if let Some(len) = max_frame_len {
            inner.max_frame_len = len;
        }
        inner.max_expansion = max_expansion;
        if let Some(floor) = expansion_floor {
            inner.expansion_floor = floor;
        }
        inner.max_decisions_per_byte = max_decisions_per_byte;
        if let Some(names) = kinds {
            let ids = names
                .iter()
                .map(|n| kind_by_name(n, "kinds").map(FilterKind::id))
                .collect::<PyResult<Vec<u8>>>()?;
            inner.kinds = KindSet::of(&ids);
        }
        Ok(Limits {
            inner: apply_max_bytes(inner, max_bytes),
        })
    }

    /// No limits beyond the format's own: for trusted input only, such as
    /// files this process wrote.
    #[staticmethod]
    fn unlimited() -> Self {
        Limits {
            inner: DecodeLimits::unlimited(),
        }
    }

    /// Largest m (bits) accepted; ``max_m / 8`` bytes is the most any
    /// decoded filter may hold.
    #[getter]
    fn max_m(&self) -> u64 {
        self.inner.max_m
    }
    /// Largest k accepted.
    #[getter]
    fn max_k(&self) -> u32 {
        self.inner.max_k
    }
    /// Largest whole frame, in bytes.
    #[getter]
    fn max_frame_len(&self) -> u64 {
        self.inner.max_frame_len
    }
    /// The most bytes of filter a full frame may decode to per frame byte
    /// (above ``expansion_floor``), or None for no ratio.
    #[getter]
    fn max_expansion(&self) -> Option<u64> {
        self.inner.max_expansion
    }
    /// Bytes of output any full frame may decode to beyond the ratio.
    #[getter]
    fn expansion_floor(&self) -> u64 {
        self.inner.expansion_floor
    }
    /// The most value decisions a counting frame may take per byte.
    #[getter]
    fn max_decisions_per_byte(&self) -> Option<u64> {
        self.inner.max_decisions_per_byte
    }
    /// The names of the kinds accepted.
    #[getter]
    fn kinds(&self) -> Vec<&'static str> {
        FilterKind::ALL
            .iter()
            .copied()
            .filter(|k| self.inner.kinds.contains(k.id()))
            .map(FilterKind::name)
            .collect()
    }

    fn __repr__(&self) -> String {
        let l = &self.inner;
        format!(
            "Limits(max_m={}, max_k={}, max_frame_len={}, max_expansion={}, expansion_floor={}, kinds={:?})",
            l.max_m,
            l.max_k,
            l.max_frame_len,
            l.max_expansion.map_or("None".into(), |x| x.to_string()),
            l.expansion_floor,
            self.kinds()
        )
    }
}

/// `limits` with `max_bytes` applied: `max_m` at most `8 * max_bytes`.
fn apply_max_bytes(mut limits: DecodeLimits, max_bytes: Option<u64>) -> DecodeLimits {
    if let Some(b) = max_bytes {
        limits.max_m = limits.max_m.min(b.saturating_mul(8));
    }
    limits
}

/// The limits of a decoding call: `limits` (default: the crate's) with
/// `max_bytes` applied.
pub(crate) fn resolve(max_bytes: Option<u64>, limits: Option<&Limits>) -> DecodeLimits {
    let base = limits.map_or_else(DecodeLimits::default, |l| l.inner);
    apply_max_bytes(base, max_bytes)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Limits>()
}
