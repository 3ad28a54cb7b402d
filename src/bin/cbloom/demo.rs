//! `cbloom demo`: the whole pipeline on generated keys, with what it did.

use crate::CliResult;
use clap::Args;
use compressed_bloom::math::log2_binomial;
use compressed_bloom::plan::{self, Constraints};
use compressed_bloom::DecodeLimits;
use compressed_bloom::{decode, encode, BloomFilter, FilterParams};
use std::time::Instant;

#[derive(Args)]
pub(crate) struct DemoArgs {
    /// Number of keys.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::parse_count, allow_negative_numbers = true)]
    n: u64,
    /// Frame budget in bytes (default: one byte per key).
    #[arg(long, value_parser = crate::parse_count, allow_negative_numbers = true)]
    bytes: Option<u64>,
    /// Non-member queries used to measure the false-positive rate.
    #[arg(long, default_value_t = 2_000_000, value_parser = crate::parse_count, allow_negative_numbers = true)]
    queries: u64,
    /// Hash seed.
    #[arg(long, default_value_t = 42, value_parser = crate::parse_count, allow_negative_numbers = true)]
    seed: u64,
}

pub(crate) fn run(a: &DemoArgs) -> CliResult {
    let n = a.n;
    let budget = a.bytes.unwrap_or(n);
    let cons = Constraints {
        seed: a.seed,
        ..Constraints::default()
    };
    let p = plan::plan_for_size(n, budget, &cons)?;
    let s = plan::standard_for_size(n, budget, a.seed)?;
    outln!(
        "1. plan: {n} keys, frame budget {budget} bytes ({:.2} bits per key)",
        budget as f64 * 8.0 / n.max(1) as f64
    );
    outln!(
        "   standard filter : m = {:>11} bits, k = {:>2}, f = {:.6}  (sent raw)",
        s.m,
        s.k,
        s.fpr
    );
    outln!(
        "   compressed plan : m = {:>11} bits, k = {:>2}, f = {:.6}  (frame <= {} bytes with p >= {})",
        p.m, p.k, p.fpr, p.bound_bytes, p.confidence
    );

    let t = Instant::now();
    let mut f = BloomFilter::new(FilterParams::new(p.m, p.k, a.seed))?;
    for i in 0..n {
        f.insert(format!("user-{i}@example.org").as_bytes());
    }
    let build_s = t.elapsed().as_secs_f64();
    let ones = f.count_ones();
    outln!(
        "2. built from generated keys in {:.3} s: {ones} of {} bits set (fill {:.4})",
        build_s,
        f.m(),
        f.fill_ratio()
    );

    let raw_mb = f.m() as f64 / 8e6;
    let t = Instant::now();
    let frame = encode(&f);
    let enc_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back = decode(&frame, &DecodeLimits::default())?;
    let dec_s = t.elapsed().as_secs_f64();
    let bound = log2_binomial(f.m(), ones) / 8.0;
    outln!(
        "3. encoded to {} bytes ({}): entropy bound {:.1} bytes, frame is {:+.3}% over it; \
         within budget: {}",
        frame.len(),
        compressed_bloom::inspect(&frame, &Default::default())
            .map_or("?", |h| h.filter_type.name()),
        bound,
        (frame.len() as f64 / bound - 1.0) * 100.0,
        if frame.len() as u64 <= budget {
            "yes"
        } else {
            "NO"
        }
    );
    outln!(
        "   the standard filter for the same budget sends {} bytes and has {:.2}x the false-positive rate",
        s.bound_bytes,
        s.fpr / p.fpr
    );
    outln!(
        "   encode {:.1} MB/s, decode {:.1} MB/s (of uncompressed filter, {:.2} MB)",
        raw_mb / enc_s,
        raw_mb / dec_s,
        raw_mb
    );
    if back != f {
        return Err("decoded filter differs from the original".into());
    }
    let missing = (0..n)
        .filter(|i| !back.contains(format!("user-{i}@example.org").as_bytes()))
        .count();
    outln!("4. decoded and verified: bit-identical, {missing} false negatives among {n} members");
    if missing != 0 {
        return Err("false negatives after the round trip".into());
    }

    let hits = (0..a.queries)
        .filter(|i| back.contains(format!("stranger-{i}@example.net").as_bytes()))
        .count();
    if a.queries == 0 {
        outln!(
            "5. false-positive rate: not measured (--queries 0), predicted {:.6}",
            p.fpr
        );
        return Ok(());
    }
    let measured = hits as f64 / a.queries as f64;
    let sd = (p.fpr * (1.0 - p.fpr) / a.queries as f64).sqrt();
    // A predicted rate of 0 (no keys) has no spread to measure against.
    let off = if sd > 0.0 {
        format!(" ({:+.1} query sd)", (measured - p.fpr) / sd)
    } else {
        String::new()
    };
    outln!(
        "5. false-positive rate over {} non-members: measured {:.6}, predicted {:.6}{off}",
        a.queries,
        measured,
        p.fpr
    );
    Ok(())
}
