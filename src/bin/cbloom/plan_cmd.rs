//! `cbloom plan`: the optimiser's answers as a table, JSON, or an SVG plot.

use crate::CliResult;
use clap::Args;
use compressed_bloom::kinds::ribbon::plan as ribbon_plan;
use compressed_bloom::plan::receiver::{self, PlanKind, Target};
use compressed_bloom::plan::{self, Choice, Constraints, Needs, Plan, PlanError};
use compressed_bloom::FilterKind;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct PlanArgs {
    /// Number of keys (`1e6` is accepted).
    #[arg(long, value_parser = crate::parse_count, allow_negative_numbers = true)]
    n: u64,
    /// Byte budget for the frame (header and checksum included).
    #[arg(long, group = "mode", value_parser = crate::parse_count, allow_negative_numbers = true)]
    bytes: Option<u64>,
    /// Target false-positive rate, in (0, 1).
    #[arg(long, group = "mode", value_parser = crate::parse_probability, allow_negative_numbers = true)]
    fpr: Option<f64>,
    /// Evaluate this m/n (with --k).
    #[arg(long, group = "mode", requires = "k", value_parser = crate::parse_positive, allow_negative_numbers = true)]
    bits_per_key: Option<f64>,
    /// k for --bits-per-key.
    #[arg(long, requires = "bits_per_key", value_parser = crate::parse_small_count, allow_negative_numbers = true)]
    k: Option<u32>,
    /// Cap on m / n (memory).
    #[arg(long, value_parser = crate::parse_positive, allow_negative_numbers = true)]
    max_bits_per_key: Option<f64>,
    /// Cap on k (lookup cost).
    #[arg(long, default_value_t = compressed_bloom::MAX_K, value_parser = parse_max_k, allow_negative_numbers = true)]
    max_k: u32,
    /// Probability that the frame stays within --bytes.
    #[arg(long, default_value_t = 0.9999, value_parser = parse_confidence, allow_negative_numbers = true)]
    confidence: f64,
    /// Plan the delta sent after this fraction of keys changed.
    #[arg(long, value_parser = parse_fraction, allow_negative_numbers = true)]
    delta_fraction: Option<f64>,
    /// Hash seed (its varint is part of the frame).
    #[arg(long, default_value_t = 0, value_parser = crate::parse_count, allow_negative_numbers = true)]
    seed: u64,
    /// What the receiver does besides querying (comma-separated):
    /// `static` (replaced whole), `delta`, `union`, `counting` (removes
    /// keys), `growth`. Shows the kind to send and every kind's plan.
    /// (--plot draws one kind's curves: not with --needs.)
    #[arg(long, value_enum, value_delimiter = ',', conflicts_with_all = ["delta_fraction", "bits_per_key", "plot"])]
    needs: Vec<NeedArg>,
    /// The kind `build --type` would be given (standard, partitioned,
    /// counting or sparse): its plan, and the trade-off row that build
    /// takes. Default: the plan `build` makes without --type.
    #[arg(long = "type", value_enum, conflicts_with_all = ["needs", "bits_per_key"])]
    kind: Option<crate::kinds::KindArg>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Draw an SVG: with --bytes the paper's Figure 1 (f against k for the
    /// standard and the compressed filter), with --fpr the best f against
    /// transmitted bits per key, with --delta-fraction f against k for the
    /// delta budget, with --bits-per-key f against k at that m/n.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// One value of `--needs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum NeedArg {
    /// Nothing besides queries: the set is sent whole and replaced whole.
    Static,
    /// Deltas: the change since the last frame.
    #[value(alias = "deltas")]
    Delta,
    /// ORs two filters of the same parameters.
    Union,
    /// Removes keys.
    #[value(alias = "deletion")]
    Counting,
    /// Adds keys beyond --n.
    Growth,
}

/// The library's needs for the `--needs` values.
fn needs_of(args: &[NeedArg]) -> Needs {
    let mut n = Needs::STATIC;
    for a in args {
        match a {
            NeedArg::Static => {}
            NeedArg::Delta => n.deltas = true,
            NeedArg::Union => n.union = true,
            NeedArg::Counting => n.deletion = true,
            NeedArg::Growth => n.growth = true,
        }
    }
    n
}

/// The names of what a receiver needs, for the table's title.
fn needs_words(n: Needs) -> String {
    let words: Vec<&str> = [
        (n.deltas, "deltas"),
        (n.union, "unions"),
        (n.deletion, "deletion"),
        (n.growth, "growth"),
    ]
    .iter()
    .filter_map(|&(on, w)| on.then_some(w))
    .collect();
    if words.is_empty() {
        "a static set (sent whole, replaced whole)".to_string()
    } else {
        words.join(", ")
    }
}

/// How to build the chosen kind (`build` plans it again from the target,
/// with its own receiver-memory defaults).
fn build_hint(c: &Choice, target: Target) -> String {
    let size = match target {
        Target::Fpr(f) => format!("--fpr {f}"),
        Target::Bytes(z) => format!("--bytes {z}"),
    };
    match c.kind {
        FilterKind::Scalable => format!(
            "cbloom build --type scalable {size} --initial-capacity {}",
            plan::SCALABLE_INITIAL_CAPACITY
        ),
        k => format!("cbloom build --type {} {size}", k.name()),
    }
}

fn choice_json(c: &Choice, receiver: Option<f64>) -> serde_json::Value {
    let mut v = plan_json(&c.plan);
    v["kind"] = json!(c.kind.name());
    v["lacks"] = json!(c.lacks);
    if let Some(r) = receiver {
        v["receiver_bytes"] = json!(r);
    }
    v
}

/// `cbloom plan --needs`: the kind to send and every kind's plan.
fn recommend(a: &PlanArgs, cons: &Constraints) -> CliResult {
    let target = match (a.bytes, a.fpr) {
        (Some(z), _) => Target::Bytes(z),
        (None, Some(f)) => Target::Fpr(f),
        _ => return Err("--needs takes --bytes or --fpr".into()),
    };
    let needs = needs_of(&a.needs);
    let (chosen, others) = plan::recommend(a.n, target, needs, cons)?;
    let by_budget = matches!(target, Target::Bytes(_));
    if a.json {
        let v = json!({
            "needs": {
                "deltas": needs.deltas,
                "union": needs.union,
                "deletion": needs.deletion,
                "growth": needs.growth,
            },
            "recommended": choice_json(&chosen, None),
            "build": build_hint(&chosen, target),
            "alternatives": others.iter().map(|c| choice_json(c, None)).collect::<Vec<_>>(),
        });
        outln!("{v}");
        return Ok(());
    }
    match target {
        Target::Bytes(z) => outln!("n = {} keys, frame budget {z} bytes", a.n),
        Target::Fpr(f) => outln!(
            "n = {} keys, target false-positive rate {}",
            a.n,
            fmt_rate(f)
        ),
    }
    outln!("the receiver needs: {}", needs_words(needs));
    outln!();
    outln!(
        "  {:<12} {:>12} {:>14} {:>10} {:>10}  {}",
        "kind",
        "f",
        "frame bytes",
        "bits/key",
        if by_budget { "f vs" } else { "frame vs" },
        "meets the needs"
    );
    for (i, c) in std::iter::once(&chosen).chain(&others).enumerate() {
        let vs = if by_budget {
            c.plan.fpr / chosen.plan.fpr
        } else {
            c.plan.expected_bytes / chosen.plan.expected_bytes
        };
        outln!(
            "{} {:<12} {:>12} {:>14.0} {:>10.3} {:>9.2}×  {}",
            if i == 0 { "*" } else { " " },
            c.kind.name(),
            fmt_fpr(c.plan.fpr),
            c.plan.expected_bytes,
            c.plan.compressed_bits_per_key,
            vs,
            match c.lacks {
                None => "yes".to_string(),
                Some(l) => format!("no: no {l}"),
            }
        );
    }
    if let Some(c) = std::iter::once(&chosen)
        .chain(&others)
        .find(|c| c.kind == FilterKind::Scalable)
    {
        let bound = match target {
            Target::Fpr(f) => format!("f < {f}"),
            Target::Bytes(_) => "its bound".to_string(),
        };
        outln!(
            "  (scalable: f at n keys, {} keys in layers from --initial-capacity {}; \
             {bound} holds as keys are added)",
            c.plan.n,
            plan::SCALABLE_INITIAL_CAPACITY
        );
    }
    outln!();
    outln!(
        "recommended: {} (marked *), {} of the kinds that meet the needs",
        chosen.kind.name(),
        if by_budget {
            "the lowest f within the budget"
        } else {
            "the smallest frame at the target f"
        },
    );
    outln!("  {}", build_hint(&chosen, target));
    Ok(())
}

pub(crate) fn run(a: &PlanArgs) -> CliResult {
    let mut cons = Constraints {
        max_k: a.max_k,
        confidence: a.confidence,
        seed: a.seed,
        ..Constraints::default()
    };
    if let Some(r) = a.max_bits_per_key {
        cons = cons.with_max_bits_per_key(r, a.n);
    }
    if let (Some(bpk), Some(k)) = (a.bits_per_key, a.k) {
        return evaluate(a, bpk, k);
    }
    if !a.needs.is_empty() {
        return recommend(a, &cons);
    }
    use crate::kinds::KindArg;
    match (a.kind, a.delta_fraction) {
        (Some(KindArg::Scalable | KindArg::Ribbon), _) => {
            return Err(crate::UsageError(
                "plan --type takes standard, partitioned, counting or sparse; the scalable \
                 and ribbon kinds are planned with --needs growth and --needs static"
                    .into(),
            )
            .into())
        }
        (Some(k), Some(_)) if k != KindArg::Standard => {
            return Err(crate::UsageError(
                "--delta-fraction plans the standard kind's delta (--type standard)".into(),
            )
            .into())
        }
        _ => {}
    }
    // With --type, the kind's plan as `build --type` makes it (a dense
    // budget plan made again for fewer keys).
    let of_kind = |target: Target| -> Option<Result<Plan, PlanError>> {
        let k = a.kind.filter(|_| a.delta_fraction.is_none())?;
        Some(receiver::plan_kind(k.plan_kind(), a.n, target, &cons))
    };
    let (chosen, standard, title) = match (a.bytes, a.fpr) {
        (Some(z), _) => {
            let p = match (a.delta_fraction, of_kind(Target::Bytes(z))) {
                (_, Some(p)) => p?,
                (Some(c), None) => plan::plan_delta_for_size(a.n, c, z, &cons)?,
                (None, None) => plan::plan_for_size(a.n, z, &cons)?,
            };
            let s = match a.delta_fraction {
                Some(c) => plan::standard_delta_for_size(a.n, c, z, &cons)?,
                None => plan::standard_for_size(a.n, z, a.seed)?,
            };
            (
                p,
                s,
                format!(
                    "n = {} keys, frame budget {z} bytes, confidence {}",
                    a.n, a.confidence
                ),
            )
        }
        (_, Some(f)) => {
            let p = match (a.delta_fraction, of_kind(Target::Fpr(f))) {
                (_, Some(p)) => p,
                (Some(c), None) => plan::plan_delta_for_fpr(a.n, c, f, &cons),
                (None, None) => plan::plan_for_fpr(a.n, f, &cons),
            };
            let p = match (p, a.max_bits_per_key) {
                (Err(PlanError::Infeasible { .. }), Some(r)) => {
                    return Err(cap_error(r, a.n, f).into())
                }
                (p, _) => p?,
            };
            let s = match a.delta_fraction {
                Some(c) => plan::standard_delta_for_fpr(a.n, c, f, &cons)?,
                None => plan::standard_for_fpr(a.n, f, a.seed)?,
            };
            (
                p,
                s,
                format!(
                    "n = {} keys, target false-positive rate {}",
                    a.n,
                    fmt_rate(f)
                ),
            )
        }
        _ => return Err("give --bytes, --fpr, or --bits-per-key with --k".into()),
    };
    if let Some(budget) = a.bytes {
        check_useful(budget, a.n, chosen.fpr, &cons, a.max_bits_per_key)?;
    }
    if let Some(path) = &a.plot {
        let fig = match (a.bytes, a.fpr, a.delta_fraction) {
            (Some(z), _, Some(c)) => delta_figure(a.n, c, z, &chosen, &cons),
            (Some(z), _, None) => budget_figure(a.n, z, &chosen, &cons),
            (None, Some(f), _) => fpr_figure(a.n, f, &chosen, &cons),
            _ => return Err("--plot needs --bytes, --fpr or --bits-per-key".into()),
        };
        draw(path, &fig)?;
    }
    let trade = match (a.delta_fraction, a.max_bits_per_key) {
        (None, None) => Some(tradeoff(a, &chosen, &cons)?),
        _ => None,
    };
    // A static set can also go as a ribbon filter (kind 5, no deltas).
    let ribbon = match (a.delta_fraction, a.bytes, a.fpr) {
        (Some(_), _, _) => None,
        (None, Some(z), _) => ribbon_plan::for_bytes(a.n, z).ok(),
        (None, None, Some(f)) => ribbon_plan::for_fpr(a.n, f).ok(),
        _ => None,
    };
    if a.json {
        let mut v = plan_json(&chosen);
        v["standard"] = plan_json(&standard);
        if let Some(t) = &trade {
            v["tradeoff"] = json!(t
                .rows
                .iter()
                .map(|(kind, p)| {
                    let mut r = plan_json(p);
                    r["kind"] = json!(kind_name(*kind));
                    r["receiver_bytes"] = json!(receiver::receiver_bytes(*kind, p));
                    r
                })
                .collect::<Vec<_>>());
            v["default"] = json!(t.default);
            v["default_note"] = json!(t.note);
        }
        if let Some(r) = ribbon {
            v["ribbon"] = json!({
                "fpr": r.fpr,
                "transmitted_bits_per_key": r.bits_per_key,
                "expected_bytes": r.frame_bytes,
            });
        }
        outln!("{v}");
        return Ok(());
    }
    outln!("{title}");
    if let Some(c) = a.delta_fraction {
        outln!(
            "sizes are for the delta frame sent after {:.2}% of the keys change; \
             the standard filter uses k = ln2·m/n",
            c * 100.0
        );
    }
    outln!();
    // Columns as wide as their widest cell, two spaces apart at least.
    let width = |cells: &[String]| cells.iter().map(String::len).max().unwrap_or(0).max(12) + 2;
    let frame_type = |p: &Plan| match (p.delta_fraction, p.coded) {
        (Some(_), _) => "delta".to_string(),
        (None, true) => "coded".to_string(),
        (None, false) => "raw".to_string(),
    };
    let rows: [(&str, Cell); 8] = [
        ("array bits per key m/n", &|p| {
            format!("{:.3}", p.bits_per_key)
        }),
        ("transmitted bits per key z/n", &|p| {
            format!("{:.3}", p.compressed_bits_per_key)
        }),
        ("hash functions k", &|p| p.k.to_string()),
        ("false-positive rate f", &|p| fmt_fpr(p.fpr)),
        ("m (bits)", &|p| p.m.to_string()),
        ("expected frame (bytes)", &|p| {
            format!("{:.0}", p.expected_bytes)
        }),
        ("frame bound (bytes)", &|p| p.bound_bytes.to_string()),
        ("frame type", &frame_type),
    ];
    let (left, right): (Vec<String>, Vec<String>) = rows
        .iter()
        .map(|(_, cell)| (cell(&standard), cell(&chosen)))
        .unzip();
    let (wl, wr) = (width(&left), width(&right));
    outln!("{:<30}{:>wl$}{:>wr$}", "", "standard", "compressed");
    for ((name, _), (l, r)) in rows.iter().zip(left.iter().zip(&right)) {
        outln!("{name:<30}{l:>wl$}{r:>wr$}");
    }
    if standard.fpr > 0.0 && a.bytes.is_some() {
        outln!("\n{}", comparison(&chosen, &standard));
    }
    if let Some(t) = &trade {
        print_tradeoff(t, &chosen, a.bytes.is_some())?;
    }
    if a.bytes.is_some() && plan::zero_fraction(chosen.m, chosen.n, chosen.k) < 0.5 {
        outln!(
            "\nthe compressed plan is dense (more ones than zeros): with fewer than {} keys its \
             frame grows, up to the raw array at half fill; build plans m for any count up to \
             --n instead",
            a.n
        );
    }
    if let Some(r) = ribbon {
        outln!(
            "\nfor a static set (sent whole, no deltas), a ribbon filter: f = {:.6} at \
             {:.3} bits per key, about {} bytes (cbloom build --type ribbon)",
            r.fpr,
            r.bits_per_key,
            r.frame_bytes
        );
    }
    if let Some(path) = &a.plot {
        note!("plot written to {}", path.display());
    }
    Ok(())
}

/// The frame against the receiver's memory: the plan under a ladder of
/// caps on m/n, the sparse kind's plan, and which of them `build` takes.
struct Tradeoff {
    rows: Vec<(PlanKind, Plan)>,
    /// Index of the row `build` takes by default.
    default: usize,
    /// The note `build` prints on that plan, if any.
    note: Option<String>,
}

fn kind_name(k: PlanKind) -> &'static str {
    match k {
        PlanKind::Sparse => "sparse",
        PlanKind::Counting => "counting",
        PlanKind::Partitioned => "partitioned",
        _ => "standard",
    }
}

fn tradeoff(a: &PlanArgs, wire: &Plan, cons: &Constraints) -> CliResult<Tradeoff> {
    let target = match (a.bytes, a.fpr) {
        (Some(z), _) => Target::Bytes(z),
        (None, Some(f)) => Target::Fpr(f),
        _ => return Err("give --bytes or --fpr".into()),
    };
    let caps: Vec<f64> = (1..=40)
        .map(|i| 2f64.powi(i))
        .take_while(|&c| c < wire.bits_per_key)
        .collect();
    // The kinds `build` weighs for the same flags, and its plan.
    let asked = crate::filters::asked_kinds(a.kind, compressed_bloom::Coding::Auto);
    let first = asked[0];
    let mut rows: Vec<(PlanKind, Plan)> = if first == PlanKind::Sparse {
        Vec::new()
    } else {
        receiver::tradeoff(first, a.n, target, &caps, cons)
            .into_iter()
            .map(|p| (first, p))
            .collect()
    };
    let (model, d) = crate::filters::default_plan(&asked, a.n, target, cons)?;
    if asked.contains(&PlanKind::Sparse) {
        if let Ok(p) = receiver::plan_kind(PlanKind::Sparse, a.n, target, cons) {
            rows.push((PlanKind::Sparse, p));
        }
    }
    let note = crate::filters::memory_note(&asked, model, &d, target);
    let default = match rows
        .iter()
        .position(|(k, p)| *k == model && p.m == d.plan.m && p.k == d.plan.k)
    {
        Some(i) => i,
        None => {
            rows.push((model, d.plan));
            rows.len() - 1
        }
    };
    Ok(Tradeoff {
        rows,
        default,
        note,
    })
}

fn print_tradeoff(t: &Tradeoff, wire: &Plan, by_budget: bool) -> CliResult {
    outln!(
        "\nframe against receiver memory (build takes the row marked *; \
         --max-bits-per-key or --type picks another):"
    );
    outln!(
        "  {:<9} {:>12} {:>4} {:>12} {:>14} {:>10} {:>11}",
        "kind",
        "m/n",
        "k",
        "f",
        "frame bytes",
        if by_budget { "f vs best" } else { "vs best" },
        "memory"
    );
    for (i, (kind, p)) in t.rows.iter().enumerate() {
        // Under a budget every frame fits: the price is in the rate.
        let (mine, best) = if by_budget {
            (p.fpr, wire.fpr)
        } else {
            (p.expected_bytes, wire.expected_bytes)
        };
        // With no keys every rate is 0: no worse than the best.
        let vs = if mine == best {
            0.0
        } else {
            (mine / best - 1.0) * 100.0
        };
        let vs = if vs.is_finite() {
            format!("{vs:>+9.2}%")
        } else {
            format!("{:>10}", "-")
        };
        if by_budget && i != t.default && p.fpr > 10.0 * wire.fpr {
            continue;
        }
        outln!(
            "{} {:<9} {:>12.2} {:>4} {:>12} {:>14.0} {} {:>11}",
            if i == t.default { "*" } else { " " },
            kind_name(*kind),
            p.bits_per_key,
            p.k,
            fmt_fpr(p.fpr),
            p.expected_bytes,
            vs,
            human_bytes(receiver::receiver_bytes(*kind, p))
        );
    }
    if let Some(note) = &t.note {
        outln!("{note}");
    }
    Ok(())
}

/// A rate given on the command line (a target, a bound), as short as it
/// reads back: `0.01`, and below 10^-4 `1e-300`, not 300 decimals.
pub(crate) fn fmt_rate(f: f64) -> String {
    if f >= 1e-4 || f == 0.0 {
        format!("{f}")
    } else {
        format!("{f:e}")
    }
}

/// A rate as people read it: fixed point down to 10^-4, scientific below.
pub(crate) fn fmt_fpr(f: f64) -> String {
    if f == 0.0 {
        "0".to_string()
    } else if f >= 1e-4 {
        format!("{f:.6}")
    } else {
        format!("{f:.4e}")
    }
}

/// "The compressed filter's f is 27.2% lower with 4 fewer hash functions",
/// worded for every case: lower, higher or equal f; fewer, more or the same
/// number of hash functions.
fn comparison(chosen: &Plan, standard: &Plan) -> String {
    let ratio = chosen.fpr / standard.fpr;
    let f = if (ratio - 1.0).abs() < 5e-4 {
        "the same f".to_string()
    } else if ratio < 1.0 {
        format!("an f {:.1}% lower", (1.0 - ratio) * 100.0)
    } else {
        format!("an f {:.1}% higher", (ratio - 1.0) * 100.0)
    };
    let k = match chosen.k.cmp(&standard.k) {
        std::cmp::Ordering::Less => {
            let d = standard.k - chosen.k;
            format!("{d} fewer hash function{}", if d == 1 { "" } else { "s" })
        }
        std::cmp::Ordering::Greater => {
            let d = chosen.k - standard.k;
            format!("{d} more hash function{}", if d == 1 { "" } else { "s" })
        }
        std::cmp::Ordering::Equal => "the same number of hash functions".into(),
    };
    format!(
        "the compressed filter has {f} than the standard filter ({} against {}) with {k} (k = {} against {})",
        fmt_fpr(chosen.fpr),
        fmt_fpr(standard.fpr),
        chosen.k,
        standard.k
    )
    .replace("the same f than", "the same f as")
}

/// One column's value of a table row.
type Cell<'a> = &'a dyn Fn(&Plan) -> String;

fn plan_json(p: &Plan) -> serde_json::Value {
    json!({
        "n": p.n,
        "m": p.m,
        "k": p.k,
        "bits_per_key": p.bits_per_key,
        "compressed_bits_per_key": p.compressed_bits_per_key,
        "fpr": p.fpr,
        "expected_bytes": p.expected_bytes,
        "bound_bytes": p.bound_bytes,
        "confidence": p.confidence,
        "coded": p.coded,
        "delta_fraction": p.delta_fraction,
    })
}

fn evaluate(a: &PlanArgs, bpk: f64, k: u32) -> CliResult {
    let m = (bpk * a.n.max(1) as f64).round() as u64;
    let e = plan::evaluate(a.n, m, k, a.delta_fraction)?;
    if let Some(path) = &a.plot {
        draw(path, &evaluate_figure(a.n, e.m, e.k, e.fpr))?;
        note!("plot written to {}", path.display());
    }
    if a.json {
        let mut v = json!({
            "n": e.n, "m": e.m, "k": e.k,
            "bits_per_key": e.bits_per_key,
            "compressed_bits_per_key": e.compressed_bits_per_key,
            "fpr": e.fpr,
            "fpr_asymptotic": e.fpr_asymptotic,
            "p_zero": e.p_zero,
            "expected_bytes": e.expected_bytes,
        });
        if let Some(d) = &e.delta {
            v["delta"] = json!({
                "c": d.c, "q": d.q,
                "bits_per_key": d.bits_per_key,
                "bits_per_changed_key": d.bits_per_changed_key,
                "expected_bytes": d.expected_bytes,
            });
        }
        outln!("{v}");
        return Ok(());
    }
    outln!(
        "n = {}, m = {} (m/n = {:.4}), k = {}",
        e.n,
        e.m,
        e.bits_per_key,
        e.k
    );
    outln!("zero fraction p = e^(-kn/m)        {:.6}", e.p_zero);
    outln!("false-positive rate (asymptotic)  {:.6}", e.fpr_asymptotic);
    outln!("false-positive rate (finite m)    {:.6}", e.fpr);
    outln!(
        "compressed bits per key z/n       {:.4}",
        e.compressed_bits_per_key
    );
    outln!("expected frame bytes              {:.0}", e.expected_bytes);
    if let Some(d) = &e.delta {
        outln!("delta after c = {}: density q     {:.6}", d.c, d.q);
        outln!("delta bits per key z/n            {:.4}", d.bits_per_key);
        outln!(
            "delta bits per changed key z/(cn) {:.3}",
            d.bits_per_changed_key
        );
        outln!("expected delta frame bytes        {:.0}", d.expected_bytes);
    }
    Ok(())
}

/// Bytes for people: "1.25 GB", "80.0 MB", "512 B".
pub(crate) fn human_bytes(b: f64) -> String {
    let units = [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    for (name, size) in units {
        if b >= size {
            return format!("{:.2} {name}", b / size);
        }
    }
    format!("{b:.0} B")
}

/// A planner's error in the command line's words: the library names its
/// arguments (`max_k`, `delta_fraction`), the user typed flags.
/// An infeasible plan is said by its reason alone: "no filter within the
/// caps" is wrong where no cap was given.
pub(crate) fn plan_error(e: PlanError) -> Box<dyn std::error::Error> {
    let (name, value, expected) = match &e {
        PlanError::InvalidArgument {
            name,
            value,
            expected,
        } => (name, value, expected),
        PlanError::Infeasible { reason } => return reason.clone().into(),
        _ => return e.into(),
    };
    let flag = match *name {
        "max_k" => "--max-k",
        "delta_fraction" => "--delta-fraction",
        "confidence" => "--confidence",
        "fpr" => "--fpr",
        "bytes" => "--bytes",
        "max_m" => "--max-bits-per-key",
        "k" => "--k",
        "m" => "--bits-per-key (times --n, the bits m)",
        _ => return e.into(),
    };
    format!("{flag} {value} is out of range: {expected}").into()
}

/// The least m/n at which some k reaches `fpr` for n keys (the classic
/// optimum, k near ln2·m/n): what a cap on bits per key must allow.
pub(crate) fn least_bits_per_key(n: u64, fpr: f64) -> f64 {
    plan::standard_for_fpr(n, fpr, 0).map_or(f64::NAN, |p| p.bits_per_key)
}

/// A target rate that --max-bits-per-key leaves out of reach, said so.
pub(crate) fn cap_error(cap: f64, n: u64, fpr: f64) -> String {
    format!(
        "--fpr {fpr} cannot be reached within --max-bits-per-key {cap} (m at most {} bits \
         for {n} keys): it needs at least {:.2} bits per key",
        Constraints::default().with_max_bits_per_key(cap, n).max_m,
        least_bits_per_key(n, fpr)
    )
}

/// `--max-k`: a whole number of 1 or more (the planner tries k up to it,
/// and at most 64).
pub(crate) fn parse_max_k(s: &str) -> Result<u32, String> {
    match crate::parse_small_count(s)? {
        0 => Err(format!(
            "`{s}` is below 1: the planner needs at least one hash position"
        )),
        k => Ok(k),
    }
}

/// `--confidence`: a probability in [0.5, 1).
pub(crate) fn parse_confidence(s: &str) -> Result<f64, String> {
    let x = crate::parse_probability(s)?;
    if x >= 0.5 {
        Ok(x)
    } else {
        Err(format!(
            "`{s}` is below 0.5: the confidence is a probability in [0.5, 1)"
        ))
    }
}

/// `--delta-fraction`: the share of the keys that change, in (0, 1].
pub(crate) fn parse_fraction(s: &str) -> Result<f64, String> {
    let x = crate::parse_positive(s)?;
    if x <= 1.0 {
        Ok(x)
    } else {
        Err(format!(
            "`{s}` is over 1: the fraction of keys changed is in (0, 1]"
        ))
    }
}

/// Refuses a byte budget whose best plan is no filter at all (f ≥ 0.5), with
/// the bytes that would give f = 0.01; when a --max-bits-per-key `cap`
/// is what leaves no useful filter, that flag is blamed instead.
pub(crate) fn check_useful(
    budget: u64,
    n: u64,
    fpr: f64,
    cons: &Constraints,
    cap: Option<f64>,
) -> CliResult {
    if n == 0 || fpr < 0.5 {
        return Ok(());
    }
    if let Some(r) = cap {
        let uncapped = Constraints {
            max_m: compressed_bloom::MAX_M,
            ..*cons
        };
        if let Ok(p) = plan::plan_for_size(n, budget, &uncapped) {
            if p.fpr < 0.5 {
                return Err(format!(
                    "--max-bits-per-key {r} caps m at {} bits for {n} keys, which leaves no \
                     useful filter (its best false-positive rate is {fpr:.6}); without the cap \
                     the {budget}-byte frame reaches f = {} (f = 0.01 needs at least {:.2} bits \
                     per key)",
                    cons.max_m,
                    fmt_fpr(p.fpr),
                    least_bits_per_key(n, 0.01)
                )
                .into());
            }
        }
    }
    let hint = plan::plan_for_fpr(n, 0.01, cons)
        .map(|p| format!("; about {:.0} bytes give f = 0.01", p.expected_bytes))
        .unwrap_or_default();
    Err(format!(
        "a {budget}-byte frame cannot hold a useful filter for {n} keys (its best false-positive rate is {fpr:.6}){hint}"
    )
    .into())
}

/// Plot layout, in pixels: the chart's size and the areas around the
/// plotting area (tests/cli/robust.rs renders every mode and checks that
/// curves and points stay inside it).
const PLOT_W: u32 = 800;
const PLOT_H: u32 = 560;
const MARGIN: u32 = 15;
const X_LABELS: u32 = 45;
const Y_LABELS: u32 = 80;

/// One curve of a figure: its label, colour and points.
type Curve = (String, plotters::style::RGBColor, Vec<(f64, f64)>);

/// What `--plot` draws: one or more curves (label, colour, points), the
/// plan's point, and the axes' names.
struct Figure {
    title: String,
    x_desc: &'static str,
    y_desc: &'static str,
    curves: Vec<Curve>,
    point: (f64, f64),
    point_label: String,
    /// A horizontal line (the target rate), if any.
    hline: Option<f64>,
    /// The x axis counts (k): labelled as whole numbers.
    integer_x: bool,
}

/// The paper's Figure 1: f against k at a fixed transmitted size z, for
/// the standard filter (m = z, continuous k) and the compressed one: at
/// each integer k the largest m within the caps whose frame bound fits the
/// budget, as the planner searches, so the plan's point lies on the curve.
/// The k axis reaches past the plan's k.
fn budget_figure(n: u64, budget: u64, chosen: &Plan, cons: &Constraints) -> Figure {
    let n_f = n.max(1) as f64;
    let z_bits = budget as f64 * 8.0;
    let f_of = |m: f64, k: f64| (1.0 - (-k * n_f / m).exp()).powf(k);
    let k_max = (2.0 * std::f64::consts::LN_2 * z_bits / n_f)
        .clamp(4.0, 40.0)
        .max(f64::from(chosen.k) + 1.0);
    let ks: Vec<f64> = (0..=400)
        .map(|i| 1.0 + (k_max - 1.0) * f64::from(i) / 400.0)
        .collect();
    let m_cap = cons.max_m.min(compressed_bloom::MAX_M);
    let compressed: Vec<(f64, f64)> = (1..=(k_max as u32).min(cons.max_k).min(64))
        .filter_map(|k| {
            let fits = |m: u64| plan::frame_bound_bytes(n, m, k, None, cons) <= budget as f64;
            if !fits(1) {
                return None;
            }
            let (mut lo, mut hi) = (1u64, m_cap);
            if fits(hi) {
                lo = hi;
            }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fits(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Some((f64::from(k), plan::fpr_finite(lo, n, k)))
        })
        .collect();
    Figure {
        title: format!(
            "False-positive rate vs k at {:.2} transmitted bits per key (n = {n})",
            z_bits / n_f
        ),
        x_desc: "number of hash functions k",
        y_desc: "false-positive rate f",
        curves: vec![
            (
                "standard (m = z)".into(),
                plotters::style::RED,
                ks.iter().map(|&k| (k, f_of(z_bits, k))).collect(),
            ),
            (
                if m_cap < compressed_bloom::MAX_M {
                    format!("compressed (largest m ≤ {m_cap} that fits)")
                } else {
                    "compressed (largest m that fits)".into()
                },
                plotters::style::BLUE,
                compressed,
            ),
        ],
        point: (f64::from(chosen.k), chosen.fpr),
        point_label: format!("plan: k = {}, m/n = {:.1}", chosen.k, chosen.bits_per_key),
        hline: None,
        integer_x: true,
    }
}

/// For a target rate: the best f the planner reaches at each transmitted
/// size z/n, for the standard filter (sent raw, k = ln2·m/n) and the
/// compressed plan, with the target as a line and the plan as a point.
fn fpr_figure(n: u64, target: f64, chosen: &Plan, cons: &Constraints) -> Figure {
    let n_f = n.max(1) as f64;
    let z_hi = (chosen.compressed_bits_per_key * 1.6).max(4.0);
    let zs: Vec<f64> = (1..=60).map(|i| z_hi * f64::from(i) / 60.0).collect();
    let budget = |z: f64| (z * n_f / 8.0).ceil() as u64;
    let compressed: Vec<(f64, f64)> = zs
        .iter()
        .filter_map(|&z| {
            let p = plan::plan_for_size(n, budget(z), cons).ok()?;
            Some((p.compressed_bits_per_key, p.fpr))
        })
        .collect();
    let standard: Vec<(f64, f64)> = zs
        .iter()
        .filter_map(|&z| {
            let p = plan::standard_for_size(n, budget(z), cons.seed).ok()?;
            Some((p.compressed_bits_per_key, p.fpr))
        })
        .collect();
    Figure {
        title: format!("Best false-positive rate vs transmitted bits per key (n = {n})"),
        x_desc: "transmitted bits per key z/n",
        y_desc: "false-positive rate f",
        curves: vec![
            ("standard, sent raw".into(), plotters::style::RED, standard),
            ("compressed plan".into(), plotters::style::BLUE, compressed),
        ],
        point: (chosen.compressed_bits_per_key, chosen.fpr),
        point_label: format!(
            "plan: {:.2} bits per key, k = {}",
            chosen.compressed_bits_per_key, chosen.k
        ),
        hline: Some(target),
        integer_x: false,
    }
}

/// For a delta budget: f against k, each k with the largest m whose delta
/// frame (after the fraction c of the keys changed) fits the budget.
fn delta_figure(n: u64, c: f64, budget: u64, chosen: &Plan, cons: &Constraints) -> Figure {
    let k_max = (f64::from(chosen.k) + 3.0).max(8.0) as u32;
    let mut pts = Vec::new();
    for k in 1..=k_max {
        let fits = |m: u64| plan::frame_bound_bytes(n, m, k, Some(c), cons) <= budget as f64;
        if !fits(1) {
            continue;
        }
        let (mut lo, mut hi) = (1u64, 1u64 << 40);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        pts.push((f64::from(k), plan::fpr_finite(lo, n, k)));
    }
    Figure {
        title: format!(
            "False-positive rate vs k for a {budget}-byte delta after {:.1}% of {n} keys change",
            c * 100.0
        ),
        x_desc: "number of hash functions k",
        y_desc: "false-positive rate f",
        curves: vec![(
            "largest m whose delta fits".into(),
            plotters::style::BLUE,
            pts,
        )],
        point: (f64::from(chosen.k), chosen.fpr),
        point_label: format!("plan: k = {}, m/n = {:.1}", chosen.k, chosen.bits_per_key),
        hline: None,
        integer_x: true,
    }
}

/// For `--bits-per-key`: f against k at that m/n (the uncompressed
/// filter's classic curve), with the evaluated k.
fn evaluate_figure(n: u64, m: u64, k: u32, fpr: f64) -> Figure {
    let k_max = (f64::from(k) + 4.0).max(12.0);
    let pts = (0..=200)
        .map(|i| {
            let kk = 1.0 + (k_max - 1.0) * f64::from(i) / 200.0;
            (
                kk,
                (1.0 - (-kk * n.max(1) as f64 / m as f64).exp()).powf(kk),
            )
        })
        .collect();
    Figure {
        title: format!(
            "False-positive rate vs k at m/n = {:.2} (n = {n})",
            m as f64 / n.max(1) as f64
        ),
        x_desc: "number of hash functions k",
        y_desc: "false-positive rate f",
        curves: vec![("f = (1 − e^(−kn/m))^k".into(), plotters::style::BLUE, pts)],
        point: (f64::from(k), fpr),
        point_label: format!("k = {k}"),
        hline: None,
        integer_x: true,
    }
}

/// Draws a figure as an SVG file. Both axes are fitted to the curves and
/// the point (the y axis on a log scale), so nothing falls on an edge.
fn draw(path: &std::path::Path, fig: &Figure) -> CliResult {
    use plotters::prelude::*;
    let integer_x = fig.integer_x;
    let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let all = fig
        .curves
        .iter()
        .flat_map(|(_, _, pts)| pts.iter().copied())
        .chain(std::iter::once(fig.point))
        .chain(fig.hline.map(|y| (fig.point.0, y)))
        .filter(|&(x, y)| x.is_finite() && y.is_finite() && y > 0.0);
    let (xmin, xmax, ymin, ymax) = all.fold(
        (f64::MAX, f64::MIN, f64::MAX, f64::MIN),
        |(a, b, c, d), (x, y)| (a.min(x), b.max(x), c.min(y), d.max(y)),
    );
    if xmin > xmax {
        return Err(named(&"nothing to plot").into());
    }
    let xpad = ((xmax - xmin) * 0.04).max(0.5);
    // A band below the lowest curve, about a quarter of the height, for
    // the legend: it then covers no curve, whatever their shapes.
    let yhi = (ymax * 2.0).min(2.0);
    let ymin = ymin.max(1e-300);
    let span = (yhi / ymin).log10();
    let ylo = (ymin / 10f64.powf((0.4 * span).max(0.6))).max(1e-307);
    let root = SVGBackend::new(path, (PLOT_W, PLOT_H)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| named(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&fig.title, ("sans-serif", 17))
        .margin(MARGIN)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d((xmin - xpad)..(xmax + xpad), (ylo..yhi).log_scale())
        .map_err(|e| named(&e))?;
    chart
        .configure_mesh()
        .x_desc(fig.x_desc)
        .y_desc(fig.y_desc)
        .y_label_formatter(&|y| format!("{y:.1e}"))
        .x_label_formatter(&|x| {
            if integer_x && (x - x.round()).abs() < 1e-9 {
                format!("{}", x.round())
            } else if integer_x {
                String::new()
            } else {
                format!("{x:.1}")
            }
        })
        // A log axis spanning under two decades otherwise gets a band of
        // light lines and repeated labels.
        .max_light_lines(4)
        .y_labels(8)
        .draw()
        .map_err(|e| named(&e))?;
    for (label, colour, pts) in &fig.curves {
        let colour = *colour;
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), colour))
            .map_err(|e| named(&e))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
    }
    if let Some(y) = fig.hline {
        // Not the grid's grey: a colour of its own, drawn thicker.
        let target = RGBColor(0, 150, 0).stroke_width(2);
        chart
            .draw_series(LineSeries::new(
                [(xmin - xpad, y), (xmax + xpad, y)],
                target,
            ))
            .map_err(|e| named(&e))?
            .label(format!("target f = {}", fmt_fpr(y)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], target));
    }
    chart
        .draw_series(std::iter::once(Circle::new(fig.point, 5, BLACK.filled())))
        .map_err(|e| named(&e))?
        .label(fig.point_label.as_str())
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLACK.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| named(&e))?;
    root.present().map_err(|e| named(&e))?;
    Ok(())
}
