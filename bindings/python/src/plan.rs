//! `plan()`: the crate's planner (`plan::recommend`, `plan::for_kind`),
//! and the `Plan` it returns, which builds the filter it planned.

use crate::errors::plan_error;
use crate::input::{maybe_detach, type_name, Keys};
use crate::kinds::any_to_py;
use crate::limits::kind_by_name;
use compressed_bloom::kinds::ribbon::Build;
use compressed_bloom::plan::{for_kind, recommend, Choice, Constraints, Needs, Target};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A planned filter: the kind chosen and its parameters, with what they
/// are expected to cost. ``build(keys)`` makes the filter.
#[pyclass(module = "compressed_bloom", name = "Plan", frozen)]
pub(crate) struct PyPlan {
    choice: Choice,
    /// The other kinds, best first, those that meet the needs first.
    others: Vec<Choice>,
}

#[pymethods]
impl PyPlan {
    /// The kind: ``"standard"``, ``"partitioned"``, ``"counting"``,
    /// ``"scalable"``, ``"sparse"`` or ``"ribbon"``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.choice.kind.name()
    }
    /// Keys planned for.
    #[getter]
    fn n(&self) -> u64 {
        self.choice.plan.n
    }
    /// Bits (for the ribbon kind the expected rows; for the scalable kind
    /// the layers' total at n keys).
    #[getter]
    fn m(&self) -> u64 {
        self.choice.plan.m
    }
    /// Hash positions per key (for the ribbon kind the lower column count).
    #[getter]
    fn k(&self) -> u32 {
        self.choice.plan.k
    }
    /// The false-positive rate expected at n keys.
    #[getter]
    fn fpr(&self) -> f64 {
        self.choice.plan.fpr
    }
    /// Bits of filter per key.
    #[getter]
    fn bits_per_key(&self) -> f64 {
        self.choice.plan.bits_per_key
    }
    /// Bits on the wire per key, expected.
    #[getter]
    fn compressed_bits_per_key(&self) -> f64 {
        self.choice.plan.compressed_bits_per_key
    }
    /// The frame's expected size in bytes.
    #[getter]
    fn expected_bytes(&self) -> f64 {
        self.choice.plan.expected_bytes
    }
    /// The size the frame stays within (with the plan's confidence).
    #[getter]
    fn bound_bytes(&self) -> u64 {
        self.choice.plan.bound_bytes
    }
    /// The first of the receiver's needs this kind lacks, or None.
    #[getter]
    fn lacks(&self) -> Option<&'static str> {
        self.choice.lacks
    }
    /// The other kinds' plans, those that meet the needs first, each group
    /// best first: what the choice was weighed against.
    #[getter]
    fn alternatives(&self) -> Vec<PyPlan> {
        self.others
            .iter()
            .map(|c| PyPlan {
                choice: c.clone(),
                others: Vec::new(),
            })
            .collect()
    }

    /// The planned filter holding ``keys`` (an iterable of ``bytes`` or
    /// ``str``), of the kind planned, with its m, k and seed.
    #[pyo3(signature = (keys=None))]
    fn build(&self, py: Python<'_>, keys: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let built = match keys {
            Some(keys) => {
                let keys = Keys::collect(keys, "keys")?;
                let slices = keys.slices();
                maybe_detach(py, keys.big(), || self.choice.build(&slices))
            }
            None => self.choice.build(std::iter::empty::<&[u8]>()),
        }
        .map_err(|e| plan_error(py, e))?;
        any_to_py(py, built, Some(self.choice.plan.fpr))
    }

    fn __repr__(&self) -> String {
        let p = &self.choice.plan;
        format!(
            "Plan(kind={:?}, n={}, m={}, k={}, fpr={:.3e}, expected_bytes={:.0}, bound_bytes={})",
            self.kind(),
            p.n,
            p.m,
            p.k,
            p.fpr,
            p.expected_bytes,
            p.bound_bytes
        )
    }
}

/// The needs from Python: None, one name, or an iterable of names.
fn parse_needs(needs: Option<&Bound<'_, PyAny>>) -> PyResult<Needs> {
    let mut out = Needs::STATIC;
    let Some(needs) = needs else {
        return Ok(out);
    };
    let names: Vec<String> = if let Ok(s) = needs.cast::<PyString>() {
        vec![s.to_cow()?.into_owned()]
    } else {
        let iter = needs.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "needs must be a name or an iterable of names, not {}",
                type_name(needs)
            ))
        })?;
        iter.map(|n| n?.extract::<String>())
            .collect::<PyResult<_>>()?
    };
    for name in names {
        match name.as_str() {
            "deltas" => out.deltas = true,
            "union" => out.union = true,
            "deletion" => out.deletion = true,
            "growth" => out.growth = true,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "needs: {name:?} is not one of deltas, union, deletion, growth"
                )))
            }
        }
    }
    Ok(out)
}

/// Plans a filter for ``n`` keys: for a false-positive rate ``fpr`` (the
/// smallest frame) or a frame budget ``max_bytes`` (the lowest rate),
/// exactly one of them. ``needs`` names what the receiver does besides
/// asking about keys: ``"deltas"``, ``"union"``, ``"deletion"``,
/// ``"growth"`` (a name or an iterable of names). Every kind is planned,
/// the kinds that lack a need set aside, and the best of the rest chosen;
/// ``kind`` plans one kind instead.
///
/// Raises ``ValueError`` naming a bad argument, ``PlanError`` when no kind
/// meets the target and needs.
#[pyfunction]
#[pyo3(signature = (n, fpr=None, max_bytes=None, needs=None, *, kind=None, seed=0,
    fast=false, max_m=None, max_k=None, confidence=None))]
#[allow(clippy::too_many_arguments)] // keyword arguments, as Python callers give them
fn plan(
    py: Python<'_>,
    n: u64,
    fpr: Option<f64>,
    max_bytes: Option<u64>,
    needs: Option<&Bound<'_, PyAny>>,
    kind: Option<&str>,
    seed: u64,
    fast: bool,
    max_m: Option<u64>,
    max_k: Option<u32>,
    confidence: Option<f64>,
) -> PyResult<PyPlan> {
    let target = match (fpr, max_bytes) {
        (Some(f), None) => Target::Fpr(f),
        (None, Some(b)) => Target::Bytes(b),
        _ => {
            return Err(PyValueError::new_err(
                "fpr, max_bytes: give exactly one (a false-positive rate or a frame budget)",
            ))
        }
    };
    let mut cons = Constraints {
        seed,
        ribbon_build: if fast { Build::Fast } else { Build::Compact },
        ..Constraints::default()
    };
    if let Some(m) = max_m {
        cons.max_m = m;
    }
    if let Some(k) = max_k {
        cons.max_k = k;
    }
    if let Some(c) = confidence {
        cons.confidence = c;
    }
    let needs_given = needs.is_some();
    let needs = parse_needs(needs)?;
    let kind = kind.map(|k| kind_by_name(k, "kind")).transpose()?;
    let (choice, others) = match kind {
        // One kind, as asked: its own planner.
        Some(kind) if !needs_given => (
            for_kind(kind, n, target, &cons).map_err(|e| plan_error(py, e))?,
            Vec::new(),
        ),
        // One kind that must meet the needs: the recommendation's plan of
        // that kind, refused if it lacks one.
        Some(kind) => {
            let (best, rest) = recommend(n, target, needs, &cons).map_err(|e| plan_error(py, e))?;
            let mut all = vec![best];
            all.extend(rest);
            let pos = all.iter().position(|c| c.kind == kind).ok_or_else(|| {
                crate::errors::raise(
                    py,
                    "PlanError",
                    format!("the {} kind cannot be planned for this target", kind.name()),
                    |_| Ok(()),
                )
            })?;
            let chosen = all.remove(pos);
            if let Some(lack) = chosen.lacks {
                return Err(crate::errors::raise(
                    py,
                    "PlanError",
                    format!("the {} kind lacks {lack}", kind.name()),
                    |_| Ok(()),
                ));
            }
            (chosen, all)
        }
        None => recommend(n, target, needs, &cons).map_err(|e| plan_error(py, e))?,
    };
    Ok(PyPlan { choice, others })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlan>()?;
    m.add_function(wrap_pyfunction!(plan, m)?)
}
