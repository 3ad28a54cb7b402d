//! `cbloom plan`: the optimiser's answers as a table, JSON, or an SVG plot.

use crate::CliResult;
use clap::Args;
use compressed_bloom::math::binary_entropy;
use compressed_bloom::plan::{self, Constraints, Plan};
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct PlanArgs {
    /// Number of keys.
    #[arg(long)]
    n: u64,
    /// Byte budget for the frame (header and checksum included).
    #[arg(long, group = "mode")]
    bytes: Option<u64>,
    /// Target false-positive rate.
    #[arg(long, group = "mode")]
    fpr: Option<f64>,
    /// Evaluate this m/n (with --k).
    #[arg(long, group = "mode", requires = "k")]
    bits_per_key: Option<f64>,
    /// k for --bits-per-key.
    #[arg(long, requires = "bits_per_key")]
    k: Option<u32>,
    /// Cap on m / n (memory).
    #[arg(long)]
    max_bits_per_key: Option<f64>,
    /// Cap on k (lookup cost).
    #[arg(long, default_value_t = compressed_bloom::MAX_K)]
    max_k: u32,
    /// Probability that the frame stays within --bytes.
    #[arg(long, default_value_t = 0.9999)]
    confidence: f64,
    /// Plan the delta sent after this fraction of keys changed.
    #[arg(long)]
    delta_fraction: Option<f64>,
    /// Hash seed (its varint is part of the frame).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Draw f against k for the standard and the compressed filter (with --bytes).
    #[arg(long, value_name = "FILE.svg", requires = "bytes")]
    plot: Option<PathBuf>,
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
    let (chosen, standard, title) = match (a.bytes, a.fpr) {
        (Some(z), _) => {
            let p = match a.delta_fraction {
                Some(c) => plan::plan_delta_for_size(a.n, c, z, &cons)?,
                None => plan::plan_for_size(a.n, z, &cons)?,
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
            let p = match a.delta_fraction {
                Some(c) => plan::plan_delta_for_fpr(a.n, c, f, &cons)?,
                None => plan::plan_for_fpr(a.n, f, &cons)?,
            };
            let s = match a.delta_fraction {
                Some(c) => plan::standard_delta_for_fpr(a.n, c, f, &cons)?,
                None => plan::standard_for_fpr(a.n, f, a.seed)?,
            };
            (
                p,
                s,
                format!("n = {} keys, target false-positive rate {f}", a.n),
            )
        }
        _ => return Err("give --bytes, --fpr, or --bits-per-key with --k".into()),
    };
    if let Some(path) = &a.plot {
        plot(path, a.n, a.bytes.unwrap_or(0), &chosen)?;
    }
    if a.json {
        let mut v = plan_json(&chosen);
        v["standard"] = plan_json(&standard);
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
    outln!("{:<30}{:>14}{:>14}", "", "standard", "compressed");
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
        ("false-positive rate f", &|p| format!("{:.6}", p.fpr)),
        ("m (bits)", &|p| p.m.to_string()),
        ("expected frame (bytes)", &|p| {
            format!("{:.0}", p.expected_bytes)
        }),
        ("frame bound (bytes)", &|p| p.bound_bytes.to_string()),
        ("frame type", &frame_type),
    ];
    for (name, cell) in rows {
        outln!("{name:<30}{:>14}{:>14}", cell(&standard), cell(&chosen));
    }
    if standard.fpr > 0.0 && a.bytes.is_some() {
        outln!(
            "\nthe compressed filter's f is {:.1}% lower with {} fewer hash functions",
            (1.0 - chosen.fpr / standard.fpr) * 100.0,
            standard.k.saturating_sub(chosen.k)
        );
    }
    if let Some(path) = &a.plot {
        outln!("plot written to {}", path.display());
    }
    Ok(())
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

/// The paper's Figures 1 and 2: f against (continuous) k at a fixed
/// transmitted size z, for the standard filter (m = z) and the compressed one
/// (m chosen so that m·H(p) = z).
fn plot(path: &std::path::Path, n: u64, budget: u64, chosen: &Plan) -> CliResult {
    use plotters::prelude::*;
    let n_f = n.max(1) as f64;
    let z_bits = budget as f64 * 8.0;
    let f_of = |m: f64, k: f64| (1.0 - (-k * n_f / m).exp()).powf(k);
    // m with m·H(e^{-kn/m}) = z, by bisection (the left side grows with m).
    let m_compressed = |k: f64| {
        let (mut lo, mut hi) = (1.0f64, z_bits * 1e4);
        for _ in 0..200 {
            let mid = (lo * hi).sqrt();
            if mid * binary_entropy((-k * n_f / mid).exp()) <= z_bits {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let k_max = (2.0 * std::f64::consts::LN_2 * z_bits / n_f).clamp(4.0, 40.0);
    // k >= 1: at least one hash function (the paper's figures start there too).
    let ks: Vec<f64> = (0..=400)
        .map(|i| 1.0 + (k_max - 1.0) * i as f64 / 400.0)
        .collect();
    let std_pts: Vec<(f64, f64)> = ks.iter().map(|&k| (k, f_of(z_bits, k))).collect();
    let cmp_pts: Vec<(f64, f64)> = ks.iter().map(|&k| (k, f_of(m_compressed(k), k))).collect();
    let (ymin, ymax) = std_pts
        .iter()
        .chain(&cmp_pts)
        .fold((f64::MAX, f64::MIN), |(lo, hi), &(_, y)| {
            (lo.min(y), hi.max(y))
        });
    let root = SVGBackend::new(path, (800, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "False-positive rate vs k at {:.2} transmitted bits per key (n = {n})",
                z_bits / n_f
            ),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(
            1.0..k_max,
            (ymin.max(1e-12) * 0.8..ymax.min(1.0) * 1.2).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("number of hash functions k")
        .y_desc("false-positive rate f")
        .y_label_formatter(&|y| format!("{y:.1e}"))
        .draw()?;
    chart
        .draw_series(LineSeries::new(std_pts, &RED))?
        .label("standard (m = z)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .draw_series(LineSeries::new(cmp_pts, &BLUE))?
        .label("compressed (m·H(p) = z)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(std::iter::once(Circle::new(
            (f64::from(chosen.k), chosen.fpr),
            5,
            BLACK.filled(),
        )))?
        .label(format!(
            "plan: k = {}, m/n = {:.1}",
            chosen.k, chosen.bits_per_key
        ))
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLACK.filled()));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
