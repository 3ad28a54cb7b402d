//! The planner: which kind, m and k for n keys and a target rate or frame
//! budget, and the planned filter built.

use crate::error::*;
use crate::filter::cb_filter;
use crate::{cb_kind, key_list};
use compressed_bloom::plan::{for_kind, recommend, Choice, Constraints, Needs, PlanError, Target};

/// The receiver takes deltas (`cb_plan_recommend`'s `needs`).
pub const CB_NEEDS_DELTAS: u32 = 1;
/// The receiver ORs filters together.
pub const CB_NEEDS_UNION: u32 = 2;
/// The sender removes keys (a counting filter).
pub const CB_NEEDS_DELETION: u32 = 4;
/// More keys arrive than planned for (a scalable filter).
pub const CB_NEEDS_GROWTH: u32 = 8;

/// A plan: the filter to build for n keys and a target, and what its
/// frame is expected to cost. Made by `cb_plan_for_kind` or
/// `cb_plan_recommend`; `cb_filter_from_plan` builds it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct cb_plan {
    /// The kind (a `cb_kind` value, 0 to 5).
    pub kind: u32,
    /// The keys planned for.
    pub n: u64,
    /// Bits of the filter (ribbon: its expected rows; scalable: the total
    /// of the layers it opens for n keys).
    pub m: u64,
    /// Hash positions per key (ribbon: its lower column count; scalable:
    /// the largest layer's).
    pub k: u32,
    /// The expected false-positive rate at n keys.
    pub fpr: f64,
    /// The expected frame size in bytes, all overhead included.
    pub expected_bytes: f64,
    /// The planner's bound on the frame size in bytes (`Plan::bound_bytes`
    /// of the Rust API: not exceeded with probability 0.9999).
    pub bound_bytes: u64,
    /// The target the plan was made for: a rate (0 if a budget) ...
    pub target_fpr: f64,
    /// ... or a frame budget in bytes (0 if a rate).
    pub target_bytes: u64,
    /// The hash seed the filter will use.
    pub seed: u64,
}

fn target(fpr: f64, budget: u64) -> Result<Target, Fail> {
    match (fpr, budget) {
        (f, 0) if f > 0.0 && f < 1.0 => Ok(Target::Fpr(f)),
        (f, b) if f == 0.0 && b > 0 => Ok(Target::Bytes(b)),
        _ => Err(Fail::invalid(format!(
            "give a rate in (0, 1) and a budget of 0, or a rate of 0 and a budget of 1 or more \
             (got fpr = {fpr}, budget_bytes = {budget})"
        ))),
    }
}

fn cons(seed: u64) -> Constraints {
    Constraints {
        seed,
        ..Constraints::default()
    }
}

impl From<PlanError> for Fail {
    fn from(e: PlanError) -> Fail {
        let code = match e {
            PlanError::InvalidArgument { .. } => cb_error::CB_ERROR_INVALID_ARGUMENT,
            _ => cb_error::CB_ERROR_INFEASIBLE,
        };
        Fail::new(code, e.to_string())
    }
}

fn plan_of(c: &Choice, fpr: f64, budget: u64, seed: u64) -> cb_plan {
    cb_plan {
        kind: cb_kind::of_wire(c.kind) as u32,
        n: c.plan.n,
        m: c.plan.m,
        k: c.plan.k,
        fpr: c.plan.fpr,
        expected_bytes: c.plan.expected_bytes,
        bound_bytes: c.plan.bound_bytes,
        target_fpr: fpr,
        target_bytes: budget,
        seed,
    }
}

fn wire_kind(kind: u32) -> Result<compressed_bloom::FilterKind, Fail> {
    match cb_kind::from_raw(kind)? {
        cb_kind::CB_KIND_SQUID => Err(Fail::invalid(
            "a Squid digest is sized by Squid's rule (cb_filter_new_squid), not planned",
        )),
        k => Ok(k.wire()),
    }
}

/// Plans a filter of `kind` for `n` keys into `*plan`: for a target rate
/// `fpr` (in (0, 1), with `budget_bytes` 0) the smallest frame that
/// reaches it; for a frame budget (`budget_bytes` >= 1, with `fpr` 0) the
/// lowest rate whose frame fits it. The filter will use `seed`.
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` (both targets or neither, a kind
/// out of range or `CB_KIND_SQUID`); `CB_ERROR_INFEASIBLE` when no filter
/// of the kind meets the target.
///
/// # Safety
/// `plan` is NULL or points to a writable `cb_plan`.
#[no_mangle]
pub unsafe extern "C" fn cb_plan_for_kind(
    kind: u32,
    n: u64,
    fpr: f64,
    budget_bytes: u64,
    seed: u64,
    plan: *mut cb_plan,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(plan, "plan")? };
        let kind = wire_kind(kind)?;
        let choice = for_kind(kind, n, target(fpr, budget_bytes)?, &cons(seed))?;
        *o = plan_of(&choice, fpr, budget_bytes, seed);
        Ok(())
    })
}

/// Plans every kind for `n` keys and the target (as `cb_plan_for_kind`),
/// sets aside the kinds that lack one of `needs` (`CB_NEEDS_*` flags ORed
/// together, 0 for a static set sent whole), and puts the best of the
/// rest in `*plan`: the smallest frame for a rate, the lowest rate for a
/// budget.
///
/// Errors: as `cb_plan_for_kind`; `CB_ERROR_INFEASIBLE` when no kind meets
/// the needs (deletion and growth together, say).
///
/// # Safety
/// `plan` is NULL or points to a writable `cb_plan`.
#[no_mangle]
pub unsafe extern "C" fn cb_plan_recommend(
    n: u64,
    fpr: f64,
    budget_bytes: u64,
    needs: u32,
    seed: u64,
    plan: *mut cb_plan,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(plan, "plan")? };
        if needs & !0xF != 0 {
            return Err(Fail::invalid(format!(
                "needs = {needs:#x}: only the CB_NEEDS_* flags (0xF) are defined"
            )));
        }
        let needs = Needs {
            deltas: needs & CB_NEEDS_DELTAS != 0,
            union: needs & CB_NEEDS_UNION != 0,
            deletion: needs & CB_NEEDS_DELETION != 0,
            growth: needs & CB_NEEDS_GROWTH != 0,
        };
        let (choice, _) = recommend(n, target(fpr, budget_bytes)?, needs, &cons(seed))?;
        *o = plan_of(&choice, fpr, budget_bytes, seed);
        Ok(())
    })
}

/// Builds the planned filter holding the `count` keys (key `i` is
/// `key_lens[i]` bytes at `keys[i]`; count 0 with NULL arrays for an
/// empty filter) into `*out`. Sparse and ribbon filters take their whole
/// set here; the others can take more keys with `cb_filter_add`.
///
/// The plan is made again from its kind, n, target and seed (the fields a
/// `cb_plan_*` call filled), so a plan edited by hand is planned afresh.
///
/// Errors: as `cb_plan_for_kind`; `CB_ERROR_INFEASIBLE` when the planned
/// filter cannot be built (a ribbon set over its budget, say).
///
/// # Safety
/// `plan` is NULL or readable; `keys` and `key_lens` are NULL or point to
/// `count` entries, each key to `key_lens[i]` readable bytes; `out` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_from_plan(
    plan: *const cb_plan,
    keys: *const *const u8,
    key_lens: *const usize,
    count: usize,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a readable plan of plain numbers.
        let p = unsafe { *handle(plan, "plan")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        // SAFETY: the arrays hold `count` valid keys (contract).
        let keys = unsafe { key_list(keys, key_lens, count)? };
        let kind = wire_kind(p.kind)?;
        let choice = for_kind(
            kind,
            p.n,
            target(p.target_fpr, p.target_bytes)?,
            &cons(p.seed),
        )?;
        let f = choice.build(keys)?;
        give(o, cb_filter::new(f));
        Ok(())
    })
}
