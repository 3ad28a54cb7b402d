//! build, encode, decode, inspect, query.

use crate::files::{for_each_key, progress, read_all, write_all, write_with};
use crate::kinds::{self, CodingArg, KindArg};
use crate::{CliResult, LimitArgs, UsageError};
use clap::Args;
use compressed_bloom::delta;
use compressed_bloom::format::{stream, AnyFilter};
use compressed_bloom::math::log2_binomial;
use compressed_bloom::plan::kinds as plan_kinds;
use compressed_bloom::plan::receiver::{self, PlanKind, Target};
use compressed_bloom::plan::Constraints;
use compressed_bloom::{BloomFilter, Coding, FilterParams, FilterType, KeyHash, Kind};
use serde_json::json;
use std::path::PathBuf;

/// Planner options shared by `build` and `demo`.
#[derive(Args, Clone)]
pub(crate) struct SizeArgs {
    /// Number of bits m (with --k; `1e9` is accepted).
    #[arg(long, requires = "k", conflicts_with_all = ["bytes", "fpr"], value_parser = crate::parse_count, allow_negative_numbers = true)]
    pub m: Option<u64>,
    /// Hash positions per key k (with --m).
    #[arg(long, requires = "m", value_parser = crate::parse_small_count, allow_negative_numbers = true)]
    pub k: Option<u32>,
    /// Plan for a frame of at most this many bytes.
    #[arg(long, conflicts_with = "fpr", value_parser = crate::parse_count, allow_negative_numbers = true)]
    pub bytes: Option<u64>,
    /// Plan for this false-positive rate, in (0, 1), with the smallest frame.
    #[arg(long, value_parser = crate::parse_probability, allow_negative_numbers = true)]
    pub fpr: Option<f64>,
    /// Cap on m / n for the planner.
    #[arg(long, value_parser = crate::parse_positive, allow_negative_numbers = true)]
    pub max_bits_per_key: Option<f64>,
    /// Cap on k for the planner.
    #[arg(long, default_value_t = compressed_bloom::MAX_K, value_parser = crate::plan_cmd::parse_max_k, allow_negative_numbers = true)]
    pub max_k: u32,
    /// Probability that the frame fits the --bytes budget.
    #[arg(long, default_value_t = 0.9999, value_parser = crate::plan_cmd::parse_confidence, allow_negative_numbers = true)]
    pub confidence: f64,
}

impl SizeArgs {
    /// The planner's caps for n keys.
    pub(crate) fn constraints(&self, n: u64, seed: u64) -> Constraints {
        let mut cons = Constraints {
            max_k: self.max_k,
            confidence: self.confidence,
            seed,
            ..Constraints::default()
        };
        if let Some(r) = self.max_bits_per_key {
            cons = cons.with_max_bits_per_key(r, n);
        }
        cons
    }

    /// The kind and (m, k) for n keys: given directly, or planned for the
    /// frame `coding` writes. A raw frame is planned as raw
    /// ([`receiver::plan_kind_raw`]: its size is the array's), of the kind
    /// asked for or the standard one; static coding plans the kind asked
    /// for or the standard one, never the sparse kind (which has no static
    /// coding). Otherwise, without --max-bits-per-key the plan is the one
    /// with the least receiver memory whose frame is within 3% of the
    /// smallest (under --bytes: whose rate is what 3% fewer bytes would
    /// give); with no --type that may be the sparse kind, which holds
    /// positions instead of m bits. The plan's note, if any, is printed
    /// only once the plan is known to be useful.
    pub(crate) fn resolve_kind(
        &self,
        kind: Option<KindArg>,
        coding: Coding,
        n: u64,
        seed: u64,
    ) -> CliResult<(KindArg, u64, u32)> {
        if let (Some(m), Some(k)) = (self.m, self.k) {
            return Ok((kind.unwrap_or(KindArg::Standard), m, k));
        }
        let cons = self.constraints(n, seed);
        let target = match (self.bytes, self.fpr) {
            (Some(z), _) => Target::Bytes(z),
            (None, Some(f)) => Target::Fpr(f),
            (None, None) => return Err("give --m and --k, --bytes, or --fpr".into()),
        };
        if kind == Some(KindArg::Scalable) {
            return Err(kinds::scalable_is_built_apart());
        }
        if let Some(k) = kind {
            kinds::check_coding(coding, k.filter_kind(), false)?;
        }
        let planned = match (coding, self.max_bits_per_key) {
            (Coding::Raw, _) => {
                let kind = kind.unwrap_or(KindArg::Standard);
                let p = receiver::plan_kind_raw(kind.plan_kind(), n, target, &cons)
                    .map_err(|e| self.plan_error(e, n))?;
                let note = self.raw_note(kind, &p, n, target, &cons);
                (kind, p, note)
            }
            (_, Some(_)) => {
                let kind = kind.unwrap_or(KindArg::Standard);
                let p = receiver::plan_kind(kind.plan_kind(), n, target, &cons)
                    .map_err(|e| self.plan_error(e, n))?;
                (kind, p, None)
            }
            (coding, None) => {
                let asked = asked_kinds(kind, coding);
                let d = receiver::default_plan(&asked, n, target, &cons)
                    .map_err(|e| self.plan_error(e, n))?;
                let note = memory_note(&asked, &d, target);
                (KindArg::from_plan_kind(d.kind), d.plan, note)
            }
        };
        let (kind, p, note) = planned;
        if let Some(budget) = self.bytes {
            crate::plan_cmd::check_useful(budget, n, p.fpr, &cons, self.max_bits_per_key)?;
        }
        if let Some(note) = note {
            note!("{note}");
        }
        Ok((kind, p.m, p.k))
    }

    /// A planner's error in the flags' words: a cap on m that comes from
    /// --max-bits-per-key is named as that flag.
    fn plan_error(
        &self,
        e: compressed_bloom::plan::PlanError,
        n: u64,
    ) -> Box<dyn std::error::Error> {
        match (self.max_bits_per_key, self.fpr, &e) {
            (Some(r), Some(f), compressed_bloom::plan::PlanError::Infeasible { .. }) => {
                crate::plan_cmd::cap_error(r, n, f).into()
            }
            _ => crate::plan_cmd::plan_error(e),
        }
    }

    /// The note on a raw plan: what coding would give instead.
    fn raw_note(
        &self,
        kind: KindArg,
        p: &compressed_bloom::plan::Plan,
        n: u64,
        target: Target,
        cons: &Constraints,
    ) -> Option<String> {
        let coded = receiver::plan_kind(kind.plan_kind(), n, target, cons).ok()?;
        let instead = match target {
            Target::Bytes(_) => format!(
                "coded, the same budget reaches f = {}",
                crate::plan_cmd::fmt_fpr(coded.fpr)
            ),
            Target::Fpr(_) => format!(
                "coded, the same rate takes about {:.0} bytes",
                coded.expected_bytes
            ),
        };
        Some(format!(
            "planned for a raw frame: {} m={} k={} f = {}, {} bytes ({instead})",
            kind.name(),
            p.m,
            p.k,
            crate::plan_cmd::fmt_fpr(p.fpr),
            p.bound_bytes
        ))
    }
}

/// The kinds the default plan weighs for `--type` and the coding: the kind
/// asked for, or the standard kind and, where its coding exists, the
/// sparse one.
pub(crate) fn asked_kinds(kind: Option<KindArg>, coding: Coding) -> Vec<PlanKind> {
    match kind {
        Some(k) => vec![k.plan_kind()],
        None if coding.applies_to(compressed_bloom::FilterKind::Sparse, false) => {
            vec![PlanKind::Standard, PlanKind::Sparse]
        }
        None => vec![PlanKind::Standard],
    }
}

/// The note on a default plan that is not the smallest frame (or, under a
/// budget, not the lowest rate) because of the receiver's memory: what it
/// holds and gives up, and the flag that takes the other plan. Printed
/// whenever the memory cap cost more than the slack, or saves more than
/// half the memory.
pub(crate) fn memory_note(
    asked: &[PlanKind],
    d: &receiver::DefaultPlan,
    target: Target,
) -> Option<String> {
    let held = receiver::receiver_bytes(d.kind, &d.plan);
    let wire_held = receiver::receiver_bytes(asked[0], &d.wire);
    let differs = d.wire.m != d.plan.m || d.wire.k != d.plan.k || d.kind != asked[0];
    if !differs || !(d.over_slack || wire_held > 2.0 * held) {
        return None;
    }
    let kind = KindArg::from_plan_kind(d.kind);
    let human = crate::plan_cmd::human_bytes;
    let fmt_fpr = crate::plan_cmd::fmt_fpr;
    let flag = format!("--max-bits-per-key {:.0}", d.wire.bits_per_key.ceil());
    let capped = if d.over_slack {
        format!(
            "; memory is capped at {} times the smallest frame",
            receiver::DEFAULT_MEMORY_RATIO
        )
    } else {
        String::new()
    };
    Some(match target {
        Target::Fpr(_) => format!(
            "planned for the receiver's memory: {} m={} k={} holds {} for a frame of about {:.0} \
             bytes; the smallest frame ({:.0} bytes, m={} k={}) would hold {} ({flag} gives it){capped}",
            kind.name(),
            d.plan.m,
            d.plan.k,
            human(held),
            d.plan.expected_bytes,
            d.wire.expected_bytes,
            d.wire.m,
            d.wire.k,
            human(wire_held),
        ),
        Target::Bytes(_) => format!(
            "planned for the receiver's memory: {} m={} k={} holds {} at f = {}; the lowest rate \
             within the budget (f = {}, m={} k={}) would hold {} ({flag} gives it){capped}",
            kind.name(),
            d.plan.m,
            d.plan.k,
            human(held),
            fmt_fpr(d.plan.fpr),
            fmt_fpr(d.wire.fpr),
            d.wire.m,
            d.wire.k,
            human(wire_held),
        ),
    })
}

#[derive(Args)]
pub(crate) struct BuildArgs {
    /// File of keys, one per line (`-` for standard input).
    #[arg(long)]
    keys: PathBuf,
    #[command(flatten)]
    size: SizeArgs,
    /// Number of keys to plan for (default: the keys read). If more keys
    /// are read, the plan is made for those instead.
    #[arg(long, value_parser = crate::parse_count, allow_negative_numbers = true)]
    n: Option<u64>,
    /// Count each distinct key once (16 bytes of memory per key); by
    /// default every line is a key, duplicates included.
    #[arg(long)]
    distinct: bool,
    /// Skip empty lines (by default an empty line is the empty key).
    #[arg(long)]
    skip_blank: bool,
    /// Hash seed.
    #[arg(long, default_value_t = 0, value_parser = crate::parse_count, allow_negative_numbers = true)]
    seed: u64,
    /// How the frame's payload is coded: `auto` (default) takes static
    /// coding (type 4, fastest to decode) where the kind has it and it
    /// stays within the planner's size bound, else adaptive (type 1).
    #[arg(long, value_enum, conflicts_with_all = ["raw", "static_coded"])]
    coding: Option<CodingArg>,
    /// The same as `--coding raw`: the uncompressed frame type.
    #[arg(long)]
    raw: bool,
    /// The same as `--coding static`: type 4 (format version 3; standard
    /// and partitioned kinds).
    #[arg(long = "static", conflicts_with = "raw")]
    static_coded: bool,
    /// The filter kind (`growing` is another name for `scalable`). Default:
    /// standard, or sparse where a standard filter would hold far more
    /// memory than its frame for the same frame size.
    #[arg(long = "type", value_enum)]
    kind: Option<KindArg>,
    /// Scalable kind: keys the first layer is planned for; each new layer
    /// holds twice as many at 0.9 times the rate (--fpr is the overall bound).
    #[arg(long, default_value_t = compressed_bloom::plan::SCALABLE_INITIAL_CAPACITY, value_parser = crate::parse_count, allow_negative_numbers = true)]
    initial_capacity: u64,
    /// Ribbon kind: build in about two thirds of the time, for frames about 1%
    /// larger (2.0% over log2(1/f) bits per key rather than 1.05%).
    #[arg(long)]
    fast: bool,
    /// Output frame (`-` for standard output).
    #[arg(short, long)]
    output: PathBuf,
}

pub(crate) fn build(a: &BuildArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    // The coding decides the plan: a kind without it is refused before
    // any key is read.
    let coding = CodingArg::resolve(a.coding, a.static_coded, a.raw);
    if let Some(kind) = a.kind {
        kinds::check_coding(coding, kind.filter_kind(), false)?;
    }
    if a.kind == Some(KindArg::Scalable) {
        return build_scalable(a);
    }
    if a.kind == Some(KindArg::Ribbon) {
        return crate::ribbon_cmd::build(&crate::ribbon_cmd::RibbonBuild {
            keys: &a.keys,
            skip_blank: a.skip_blank,
            distinct: a.distinct,
            seed: a.seed,
            fpr: a.size.fpr,
            bytes: a.size.bytes,
            shape_given: a.size.m.is_some(),
            fast: a.fast,
            output: &a.output,
        });
    }
    if a.fast {
        return Err("--fast applies to the ribbon kind (--type ribbon)".into());
    }
    let seed = a.seed;
    let bar = progress("hashing");
    // One streaming pass: hash every key once. With m and k given, insert
    // right away; otherwise spool the 16-byte hashes to a temporary file,
    // because planning needs the key count first (memory stays bounded
    // whatever the input's size; --distinct adds 16 bytes per key).
    let direct = a.size.m.is_some();
    let mut spool = if direct {
        None
    } else {
        Some(std::io::BufWriter::new(tempfile::tempfile()?))
    };
    let mut seen = a
        .distinct
        .then(std::collections::HashSet::<(u64, u64)>::new);
    let mut direct_filter = match (a.size.m, a.size.k) {
        (Some(m), Some(k)) => Some(kinds::Builder::new(
            a.kind.unwrap_or(KindArg::Standard),
            FilterParams::new(m, k, seed),
        )?),
        _ => None,
    };
    let mut kept = 0u64;
    let read = for_each_key(&a.keys, a.skip_blank, |key| {
        let h = KeyHash::new(key, seed);
        if let Some(set) = seen.as_mut() {
            if !set.insert((h.h1, h.h2)) {
                return Ok(());
            }
        }
        kept += 1;
        if kept.is_multiple_of(65_536) {
            bar.set_position(kept);
        }
        if let Some(f) = direct_filter.as_mut() {
            f.insert(h);
        } else if let Some(w) = spool.as_mut() {
            use std::io::Write as _;
            w.write_all(&h.h1.to_le_bytes())?;
            w.write_all(&h.h2.to_le_bytes())?;
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    if a.distinct {
        note!("{read} keys read, {kept} distinct");
    }
    let n = match a.n {
        Some(n) if n < kept => {
            note!(
                "note: --n {n} but {kept} keys were read: planning for {kept} (a filter sized for fewer keys would miss its target)"
            );
            kept
        }
        Some(n) => {
            if n > kept {
                note!("note: planning for --n {n}; {kept} keys were read");
            }
            n
        }
        None => kept,
    };
    let (kind, m, k) = a.size.resolve_kind(a.kind, coding, n, seed)?;
    let mut f = match direct_filter {
        Some(f) => f,
        None => {
            let mut f = kinds::Builder::new(kind, FilterParams::new(m, k, seed))?;
            let spool = spool
                .take()
                .ok_or("no spool")?
                .into_inner()
                .map_err(|e| e.into_error())?;
            let mut r = std::io::BufReader::new(spool);
            use std::io::{Read as _, Seek as _};
            r.seek(std::io::SeekFrom::Start(0))?;
            let mut rec = [0u8; 16];
            for _ in 0..kept {
                r.read_exact(&mut rec)?;
                let (a, b) = rec.split_at(8);
                f.insert(KeyHash {
                    h1: u64::from_le_bytes(a.try_into()?),
                    h2: u64::from_le_bytes(b.try_into()?),
                });
            }
            f
        }
    };
    f.set_len(kept);
    let fill = f.fill();
    let frame = f.frame(coding)?;
    // Duplicate lines count toward n: said on success and on failure.
    let duplicates = match fill {
        Some((m, k, ones)) if !a.distinct => duplicates_seen(m, k, ones, kept).map(|est| {
            format!(
                "{kept} keys read, but the filter's fill suggests about {est:.0} distinct: \
                 duplicate lines count toward n (--distinct counts each key once)"
            )
        }),
        _ => None,
    };
    if let Some(budget) = a.size.bytes {
        if frame.len() as u64 > budget {
            let why = if a.size.m.is_none() && coding == Coding::Static {
                // The bound is the adaptive coder's; type 4 is sent
                // whenever it is smaller than the raw array.
                "; static coding is not held to the plan's bound (--coding auto is)".to_string()
            } else if a.size.m.is_none() && a.size.confidence < 0.9999 {
                format!(
                    "; the plan's bound holds with probability {} (--confidence)",
                    a.size.confidence
                )
            } else {
                format!(
                    "; the plan's bound holds with probability {} for up to {n} keys",
                    a.size.confidence
                )
            };
            let dup = duplicates
                .map(|d| format!("; note: {d}"))
                .unwrap_or_default();
            return Err(format!(
                "the frame is {} bytes, over the --bytes budget of {budget} (nothing written){why}{dup}",
                frame.len(),
            )
            .into());
        }
    }
    if let Some(d) = duplicates {
        note!("note: {d}");
    }
    write_all(&a.output, &frame)?;
    note!(
        "built {} m={m} k={k} n={kept} from {read} keys: {} bytes ({})",
        kind.name(),
        frame.len(),
        frame_type(&frame)
    );
    Ok(())
}

/// `build --type scalable`: layers open as keys are read, so with --fpr
/// (the overall bound) keys go straight in; with --bytes the keys are
/// spooled to a temporary file until their count gives the bound that fits.
fn build_scalable(a: &BuildArgs) -> CliResult {
    use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
    use std::io::{Read as _, Seek as _, Write as _};
    if a.size.m.is_some() {
        return Err(
            "a scalable filter's layers are planned from its bound: give --fpr (the \
                    overall bound) or --bytes, and --initial-capacity"
                .into(),
        );
    }
    let coding = CodingArg::resolve(a.coding, a.static_coded, a.raw);
    if matches!(coding, Coding::Raw | Coding::Static) {
        return Err(format!(
            "the scalable kind has no {coding} frame (each layer is coded or raw inside it)"
        )
        .into());
    }
    let cons = Constraints {
        max_k: a.size.max_k,
        confidence: a.size.confidence,
        seed: a.seed,
        ..Constraints::default()
    };
    let mut policy = ScalablePolicy::new(a.initial_capacity, a.size.fpr.unwrap_or(0.5));
    if let Some(b) = a.size.max_bits_per_key {
        policy.max_bits_per_key = b;
    }
    let bar = progress("hashing");
    let (f, read) = if a.size.fpr.is_some() {
        let mut f = ScalableBloomFilter::new(policy, a.seed)?;
        let read = for_each_key(&a.keys, a.skip_blank, |key| {
            f.try_insert(key)?;
            Ok(())
        })?;
        (f, read)
    } else {
        let budget = a
            .size
            .bytes
            .ok_or("give --fpr (the overall bound) or --bytes")?;
        // Spool the keys (length-prefixed) until their count is known.
        let mut spool = std::io::BufWriter::new(tempfile::tempfile()?);
        let read = for_each_key(&a.keys, a.skip_blank, |key| {
            spool.write_all(&(key.len() as u64).to_le_bytes())?;
            spool.write_all(key)?;
            Ok(())
        })?;
        let n = a.n.unwrap_or(read).max(read);
        let (plan, bound) = plan_kinds::plan_scalable_for_size(n, budget, &policy, &cons)?;
        crate::plan_cmd::check_useful(budget, n, plan.fpr, &cons, None)?;
        let mut f = ScalableBloomFilter::new(
            ScalablePolicy {
                fpr: bound,
                ..policy
            },
            a.seed,
        )?;
        let mut r = std::io::BufReader::new(spool.into_inner().map_err(|e| e.into_error())?);
        r.seek(std::io::SeekFrom::Start(0))?;
        let mut key = Vec::new();
        for _ in 0..read {
            let mut len = [0u8; 8];
            r.read_exact(&mut len)?;
            key.resize(usize::try_from(u64::from_le_bytes(len))?, 0);
            r.read_exact(&mut key)?;
            f.try_insert(&key)?;
        }
        (f, read)
    };
    bar.finish_and_clear();
    let frame = compressed_bloom::format::encode_scalable(&f);
    if let Some(budget) = a.size.bytes {
        if frame.len() as u64 > budget {
            return Err(format!(
                "the frame is {} bytes, over the --bytes budget of {budget} (nothing written)",
                frame.len()
            )
            .into());
        }
    }
    write_all(&a.output, &frame)?;
    note!(
        "built scalable: {} layers, m={} in all, k up to {}, n={} from {read} keys \
         (a key already present is not added again), bound f < {}, formula f = {:.6}: {} bytes",
        f.layers().len(),
        f.total_bits(),
        f.max_k(),
        f.len(),
        crate::plan_cmd::fmt_rate(f.policy().fpr),
        f.formula_fpr(),
        frame.len()
    );
    Ok(())
}

/// The distinct keys that the `ones` of a bit array (m bits, k positions
/// per key) suggest, if `kept` key lines were many duplicates: the
/// estimate (Swamidass & Baldi) is under 90% of the lines, and the zero
/// bits exceed what `kept` distinct keys leave by more than chance
/// allows.
///
/// The second test matters where the array is nearly full: at f = 0.9999
/// (k = 1, m = 11329 for 104,334 keys) distinct keys leave m·e^{-n/m} ≈
/// 1.1 zeros, and 3 zeros, which happens about once in ten, already put
/// the estimate m·ln(m/3) under 90%. The zero count Z is a sum of m
/// negatively associated indicators (Dubhashi & Ranjan), so Bernstein's
/// bound holds for it as for independent ones with mean μ = m·a and
/// variance at most v = m·a(1 − a), a = (1 − 1/m)^{kn}:
/// P(Z ≥ μ + t) ≤ exp(−t² / (2(v + t/3))). The margin t makes that 10^-6.
/// For the partitioned kind the zero fraction is (1 − k/m)^n, at most a,
/// so the margin is larger than needed there.
fn duplicates_seen(m: u64, k: u32, ones: u64, kept: u64) -> Option<f64> {
    if kept < 1000 || ones >= m {
        return None;
    }
    let mf = m as f64;
    let zeros = (m - ones) as f64;
    let estimate = -mf / f64::from(k) * (zeros / mf).ln();
    if estimate >= 0.9 * kept as f64 {
        return None;
    }
    let a = compressed_bloom::plan::zero_fraction(m, kept, k);
    let (mean, var) = (mf * a, mf * a * (1.0 - a));
    // ln(10^6): a false note at most once in a million builds.
    let l = 6.0 * std::f64::consts::LN_10;
    let margin = l / 3.0 + ((l / 3.0).powi(2) + 2.0 * l * var).sqrt();
    (zeros > mean + margin).then_some(estimate)
}

fn frame_type(frame: &[u8]) -> &'static str {
    compressed_bloom::inspect(frame, &compressed_bloom::DecodeLimits::unlimited())
        .map_or("?", |h| h.filter_type.name())
}

#[derive(Args)]
pub(crate) struct EncodeArgs {
    /// Input frame, or with --import-bits a bare packed bit array (`-` for stdin).
    input: PathBuf,
    /// Output frame (`-` for stdout).
    #[arg(short, long)]
    output: PathBuf,
    /// Treat the input as a bare bit array (bit i in byte i/8, LSB first) of ⌈m/8⌉ bytes.
    #[arg(long, requires_all = ["m", "k"])]
    import_bits: bool,
    /// m of the imported bit array (only with --import-bits).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_count, allow_negative_numbers = true)]
    m: Option<u64>,
    /// k of the imported bit array (only with --import-bits).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_small_count, allow_negative_numbers = true)]
    k: Option<u32>,
    /// Seed of the imported bit array's hash (only with --import-bits; default 0).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_count, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Key count to declare for the imported bit array (only with --import-bits; default 0).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_count, allow_negative_numbers = true)]
    n: Option<u64>,
    /// How the frame's payload is coded (as `build --coding`; `auto` by
    /// default).
    #[arg(long, value_enum, conflicts_with = "static_coded")]
    coding: Option<CodingArg>,
    /// The same as `--coding static`.
    #[arg(long = "static")]
    static_coded: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn encode(a: &EncodeArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("INPUT", &a.input, e);
    let data = read_all(&a.input).map_err(named)?;
    let f = if a.import_bits {
        let (m, k) = (a.m.unwrap_or(0), a.k.unwrap_or(0));
        AnyFilter::Standard(BloomFilter::from_bytes(
            FilterParams::new(m, k, a.seed.unwrap_or(0)),
            a.n.unwrap_or(0),
            &data,
        )?)
    } else {
        compressed_bloom::decode_any(&data, &a.limits.limits_for(data.len() as u64))
            .map_err(|e| named(e.into()))?
    };
    let coding = CodingArg::resolve(a.coding, a.static_coded, false);
    kinds::check_coding(coding, f.kind(), matches!(f, AnyFilter::Squid(_)))?;
    let frame = f.encode_frame(coding, None);
    write_all(&a.output, &frame)?;
    let (pm, pk) = kinds::shape(&f);
    note!(
        "encoded {} m={} k={}: {} -> {} bytes ({})",
        f.kind().name(),
        pm,
        pk,
        data.len(),
        frame.len(),
        frame_type(&frame)
    );
    Ok(())
}

#[derive(Args)]
pub(crate) struct DecodeArgs {
    /// Input frame (`-` for stdin).
    input: PathBuf,
    /// Output (`-` for stdout). Standard and partitioned arrays are decoded
    /// and written block by block after the frame's CRC is checked; a
    /// regular file is replaced only if every block decodes, while standard
    /// output, a pipe or a device keeps the blocks written before a failing
    /// one (the exit status says so).
    #[arg(short, long)]
    output: PathBuf,
    /// Write the bare packed array instead of a raw frame (the bits; for the
    /// counting kind the 4-bit counters, two per byte, low nibble first).
    #[arg(long, conflicts_with = "positions")]
    bits_only: bool,
    /// For a sparse filter: write its positions as text, one per line,
    /// instead of a frame.
    #[arg(long)]
    positions: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn decode(a: &DecodeArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("INPUT", &a.input, e);
    let data = read_all(&a.input).map_err(named)?;
    let limits = a.limits.limits_for(data.len() as u64);
    // The header's errors are decode_any's first ones.
    let header =
        compressed_bloom::format::header::parse(&data, &limits).map_err(|e| named(e.into()))?;
    if header.filter_type.is_delta() {
        return Err(compressed_bloom::DecodeError::WrongFrameType {
            found: header.filter_type,
            expected: "a full (raw or coded)",
        })
        .map_err(|e| named(e.into()));
    }
    if a.positions && header.kind != compressed_bloom::FilterKind::Sparse {
        return Err(format!(
            "--positions is for sparse filters; this is a {} filter",
            header.kind.name()
        )
        .into());
    }
    if stream::streams_bits(&header) {
        // Block by block, never the whole array in memory. The header, the
        // limits and the CRC are checked before the output is opened, and a
        // file is replaced only if every block decodes (write_with).
        let checked = stream::CheckedFrame::new(&data, &limits)?;
        let mut written = 0u64;
        let mut invalid = None;
        let wrote = write_with(&a.output, |w| {
            let streamed = if a.bits_only {
                checked.write_bits(w)
            } else {
                checked.write_raw(w)
            };
            match streamed {
                Ok(n) => written = n,
                Err(stream::StreamError::Io(e)) => return Err(e),
                Err(stream::StreamError::Decode(e)) => {
                    // Reported as the frame's error, below; failing the
                    // write discards a file's partial output.
                    invalid = Some(e);
                    return Err(std::io::Error::other("the frame is invalid"));
                }
                Err(e) => return Err(std::io::Error::other(e)),
            }
            Ok(())
        });
        if let Some(e) = invalid {
            return Err(e.into());
        }
        wrote?;
        let h = checked.header();
        note!(
            "decoded {} m={} k={}: {} -> {} bytes",
            h.kind.name(),
            h.params.m,
            h.params.k,
            data.len(),
            written
        );
        return Ok(());
    }
    // Standard and partitioned arrays were streamed above: what is left
    // are the kinds without a single bit array, Squid digests, and frames
    // that are not full filters (decode_any's error).
    match compressed_bloom::decode_any(&data, &limits).map_err(|e| named(e.into()))? {
        AnyFilter::Sparse(s) => {
            if a.bits_only {
                return Err("a sparse filter has no bit array to write (m bits); \
                            --positions writes its positions, one per line"
                    .into());
            }
            if a.positions {
                let mut out = String::new();
                for pos in s.positions() {
                    out.push_str(&pos.to_string());
                    out.push('\n');
                }
                write_all(&a.output, out.as_bytes())?;
                note!(
                    "decoded sparse m={} k={}: {} positions",
                    s.params().m,
                    s.params().k,
                    s.count_ones()
                );
                return Ok(());
            }
            // A list of positions has no raw type: its frame is its only
            // form that inspect and query read.
            let out = compressed_bloom::format::encode_sparse(&s);
            write_all(&a.output, &out)?;
            note!(
                "decoded sparse m={} k={}: a sparse frame has no raw type; wrote its frame, {} bytes \
                 (--positions writes the positions as text)",
                s.params().m,
                s.params().k,
                out.len()
            );
            Ok(())
        }
        AnyFilter::Scalable(f) => {
            if a.bits_only {
                return Err(
                    "a scalable filter has no single bit array; decode writes its \
                            frame with every layer raw"
                        .into(),
                );
            }
            let out = compressed_bloom::format::encode_scalable_raw(&f);
            write_all(&a.output, &out)?;
            note!(
                "decoded scalable: {} layers, m={} in all: {} -> {} bytes",
                f.layers().len(),
                f.total_bits(),
                data.len(),
                out.len()
            );
            Ok(())
        }
        AnyFilter::Counting(c) => {
            // Written from the counters, never copied whole; the frame is
            // no longer needed.
            let frame_len = data.len();
            drop(data);
            let mut written = 0;
            write_with(&a.output, |w| {
                written = if a.bits_only {
                    // The bare counters: two per byte, low nibble first.
                    stream::write_counters(&c, w)?
                } else {
                    stream::write_counting_raw_frame(&c, w)?
                };
                Ok(())
            })?;
            note!(
                "decoded counting m={} k={}: {} -> {} bytes",
                c.params().m,
                c.params().k,
                frame_len,
                written
            );
            Ok(())
        }
        AnyFilter::Squid(d) => {
            let out = if a.bits_only {
                d.filter().to_bytes()
            } else {
                // Uncoded, Squid's header kept.
                compressed_bloom::format::encode_squid_raw(&d)
            };
            write_all(&a.output, &out)?;
            note!(
                "decoded Squid digest m={} k=4: {} -> {} bytes",
                d.filter().m(),
                data.len(),
                out.len()
            );
            Ok(())
        }
        AnyFilter::Ribbon(_) => Err(crate::ribbon_cmd::no_decode(&a.input)),
        other => Err(format!("cannot decode a {} filter here", other.kind().name()).into()),
    }
}

#[derive(Args)]
pub(crate) struct InspectArgs {
    /// Frame file (`-` for stdin).
    input: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn inspect(a: &InspectArgs) -> CliResult {
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("INPUT", &a.input, e);
    let data = read_all(&a.input).map_err(named)?;
    let limits = a.limits.limits_for(data.len() as u64);
    // Header only: decode / summarize below check the CRC once.
    let h = compressed_bloom::format::header::parse(&data, &limits).map_err(|e| named(e.into()))?;
    if h.filter_type.is_delta() {
        return inspect_delta(a, &data).map_err(named);
    }
    let any = compressed_bloom::decode_any(&data, &limits).map_err(|e| named(e.into()))?;
    let ones = any.count_ones();
    let bound = match &any {
        // Each layer is an array of its own, coded with its own count of
        // ones: the bound is the sum of the layers' bounds, below that of
        // one array of all the bits (C(Σm, Σw) ≥ Π C(m_i, w_i)).
        AnyFilter::Scalable(f) => f
            .layers()
            .iter()
            .map(|l| log2_binomial(l.filter.m(), l.filter.count_ones()))
            .sum::<f64>(),
        _ => log2_binomial(h.params.m, ones),
    } / 8.0;
    let mut v = header_json(&h, ones, data.len(), bound);
    let fill = ones as f64 / h.params.m as f64;
    // A kind-independent estimate from the fill (Swamidass & Baldi), and
    // the rate a random key sees: fill^k (for the partitioned kind, the
    // product of the partitions' fills, close to it).
    let (estimated_n, expected_fpr) = match &any {
        // Layers of their own m and k: the sum of the layers' estimates,
        // and 1 − Π(1 − fill_i^k_i).
        AnyFilter::Scalable(f) => (
            f.layers().iter().map(|l| l.filter.estimated_len()).sum(),
            f.formula_fpr(),
        ),
        // A solved system: n is declared, the rate follows from the
        // columns where keys land.
        AnyFilter::Ribbon(f) => (f.len() as f64, f.expected_fpr()),
        _ => (
            -(h.params.m as f64) / f64::from(h.params.k) * (-fill).ln_1p(),
            fill.powi(h.params.k as i32),
        ),
    };
    v["estimated_n"] = finite_or_null(estimated_n);
    v["expected_fpr"] = json!(expected_fpr);
    v[any.kind().name()] = kinds::kind_json(&any, h.payload_len);
    if let AnyFilter::Squid(_) = &any {
        v["squid"] = kinds::kind_json(&any, h.payload_len);
        v[any.kind().name()] = json!({});
    }
    if a.json {
        outln!("{v}");
        return Ok(());
    }
    outln!("kind             {}", any.kind().name());
    outln!("type             {}", h.filter_type.name());
    outln!("format version   {}", h.version);
    outln!(
        "hash scheme      {} ({})",
        h.params.scheme.id(),
        match h.params.scheme {
            compressed_bloom::HashScheme::SquidMd5 => "Squid: MD5, four 32-bit words mod m",
            _ => "xxh3-128, enhanced double hashing",
        }
    );
    outln!("seed             {}", h.params.seed);
    outln!("m (bits)         {}", h.params.m);
    outln!("k                {}", h.params.k);
    outln!("n (declared)     {}", h.n);
    if let AnyFilter::Ribbon(r) = &any {
        // A solved system: m counts rows, and its bits have no fill.
        crate::ribbon_cmd::inspect_lines(r, data.len())?;
    } else {
        outln!("ones             {ones} (fill {fill:.4})");
    }
    outln!("frame bytes      {}", data.len());
    outln!("payload bytes    {}", h.payload_len);
    if !matches!(any, AnyFilter::Ribbon(_)) {
        outln!(
            "entropy bound    {bound:.1} bytes (payload is {})",
            over_bound(h.payload_len, bound)
        );
    }
    outln!("estimated n      {estimated_n:.1}");
    outln!("expected fpr     {expected_fpr:.6}");
    if let AnyFilter::Sparse(sp) = &any {
        outln!("held in memory   {} bytes (positions)", sp.heap_bytes());
    }
    if let AnyFilter::Scalable(f) = &any {
        outln!(
            "layers           {} (bound f < {}, formula f = {:.6})",
            f.layers().len(),
            crate::plan_cmd::fmt_rate(f.policy().fpr),
            f.formula_fpr()
        );
        for (i, l) in f.layers().iter().enumerate() {
            outln!(
                "  layer {i:<2}       m = {}, k = {}, n = {} of {}, fill {:.4}",
                l.filter.m(),
                l.filter.k(),
                l.filter.len(),
                l.capacity,
                l.filter.fill_ratio()
            );
        }
    }
    if let AnyFilter::Squid(d) = &any {
        let cb = d.cblock();
        outln!(
            "squid header     version {} (requires {}), capacity {}, count {}, del_count {}",
            cb.version_current(),
            cb.version_required(),
            cb.capacity(),
            cb.count(),
            cb.del_count()
        );
        outln!(
            "squid mask       {} bytes, {} bits per entry, {} hash functions, {:.1}% set{}",
            cb.mask_size(),
            cb.bits_per_entry(),
            cb.hash_func_count(),
            d.utilisation() * 100.0,
            if d.utilisation() > compressed_bloom::squid::SquidDigest::MAX_USEFUL_UTILISATION {
                " (over 65%: Squid would not use it)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// How far `bytes` is over the entropy bound `bound` (bytes): a
/// percentage, or for a bound of 0 bytes (no keys) the bytes.
fn over_bound(bytes: u64, bound: f64) -> String {
    if bound > 0.0 {
        format!("{:+.3}%", (bytes as f64 / bound - 1.0) * 100.0)
    } else {
        format!("{bytes} byte{} over it", if bytes == 1 { "" } else { "s" })
    }
}

/// The fields `inspect --json` prints for every frame type.
fn header_json(
    h: &compressed_bloom::FrameHeader,
    ones: u64,
    frame_bytes: usize,
    entropy_bound_bytes: f64,
) -> serde_json::Value {
    json!({
        "kind": h.kind.name(),
        "type": h.filter_type.name(),
        "version": h.version,
        "hash_scheme": h.params.scheme.id(),
        "seed": h.params.seed,
        "m": h.params.m,
        "k": h.params.k,
        "n": h.n,
        "ones": ones,
        "frame_bytes": frame_bytes,
        "payload_bytes": h.payload_len,
        "entropy_bound_bytes": entropy_bound_bytes,
    })
}

fn finite_or_null(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

#[derive(Args)]
pub(crate) struct QueryArgs {
    /// Frame file (`-` for stdin).
    filter: PathBuf,
    /// Keys to look up.
    #[arg(conflicts_with_all = ["keys", "url", "urls"])]
    key: Vec<String>,
    /// File of keys, one per line (`-` for stdin).
    #[arg(long, conflicts_with_all = ["url", "urls"])]
    keys: Option<PathBuf>,
    /// A URL to look up in a Squid digest, hashed as Squid does (method byte
    /// and URL); may be repeated.
    #[arg(long, conflicts_with = "urls")]
    url: Vec<String>,
    /// File of URLs for a Squid digest, one per line (`-` for stdin).
    #[arg(long)]
    urls: Option<PathBuf>,
    /// The request method of --url/--urls: GET, POST, PUT, HEAD, CONNECT,
    /// TRACE, OPTIONS, DELETE, or Squid's method number.
    #[arg(long, default_value = "GET", value_parser = parse_method)]
    method: compressed_bloom::squid::Method,
    /// Print a summary instead of one line per key.
    #[arg(long)]
    count: bool,
    /// Print JSON: one object per key (`{"key": ..., "present": ...}`), or
    /// with --count the summary. A key that is not UTF-8 is given as
    /// `"key_hex"`, its bytes in lowercase hex, instead of `"key"`, so that
    /// every key reads back exactly.
    #[arg(long)]
    json: bool,
    /// Print nothing; the exit status says it all (0: every key present,
    /// 1: some key absent, 2: error).
    #[arg(long)]
    quiet: bool,
    /// Skip empty lines of --keys (by default an empty line is the empty key).
    #[arg(long)]
    skip_blank: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// A method name or Squid method number for `--method`.
fn parse_method(s: &str) -> Result<compressed_bloom::squid::Method, String> {
    compressed_bloom::squid::Method::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a method: GET, POST, PUT, HEAD, CONNECT, TRACE, OPTIONS, DELETE,              or Squid's method number (0-255)"
        )
    })
}

/// Bytes as lowercase hex, two digits each.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

pub(crate) fn query(a: &QueryArgs) -> CliResult {
    let key_file = a.keys.as_deref().or(a.urls.as_deref());
    if let Some(path) = key_file {
        let flag = if a.keys.is_some() { "--keys" } else { "--urls" };
        crate::one_stdin(("FILTER", &a.filter), (flag, path))?;
    }
    if a.key.is_empty() && key_file.is_none() && a.url.is_empty() {
        return Err(Box::new(UsageError(
            "give keys to look up: KEY..., --keys FILE, or --url/--urls for a Squid digest".into(),
        )));
    }
    let f = kinds::read_any("FILTER", &a.filter, &a.limits)?;
    let by_url = !a.url.is_empty() || a.urls.is_some();
    if !by_url && f.params().scheme == compressed_bloom::HashScheme::SquidMd5 {
        return Err(format!(
            "{} is a Squid digest: its keys are hashed as Squid hashes URLs (method and URL); \
             look them up with --url URL or --urls FILE (and --method)",
            a.filter.display()
        )
        .into());
    }
    if by_url && f.params().scheme != compressed_bloom::HashScheme::SquidMd5 {
        return Err(format!(
            "--url and --urls look URLs up as Squid does, but {} uses hash scheme {} ({});              use --keys or plain keys",
            a.filter.display(),
            f.params().scheme.id(),
            f.params().scheme.name()
        )
        .into());
    }
    let method = a.method;
    let mut key_buf = Vec::new();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (mut present, mut total) = (0u64, 0u64);
    let per_line = !a.count && !a.quiet;
    let per_key_json = per_line && a.json;
    let mut ask = |key: &[u8]| -> CliResult {
        use std::io::Write as _;
        let hit = if by_url {
            // Squid's store key: the method byte, then the URL.
            key_buf.clear();
            key_buf.push(method.0);
            key_buf.extend_from_slice(key);
            f.contains(&key_buf)
        } else {
            f.contains(key)
        };
        present += u64::from(hit);
        total += 1;
        if per_key_json {
            let v = match std::str::from_utf8(key) {
                Ok(text) => json!({"key": text, "present": hit}),
                Err(_) => json!({"key_hex": hex(key), "present": hit}),
            };
            writeln!(out, "{v}")?;
        } else if per_line {
            out.write_all(key)?;
            out.write_all(if hit { b"\tpresent\n" } else { b"\tabsent\n" })?;
        }
        Ok(())
    };
    match key_file {
        Some(path) => {
            for_each_key(path, a.skip_blank, &mut ask)?;
        }
        None => {
            for key in a.key.iter().chain(&a.url) {
                ask(key.as_bytes())?;
            }
        }
    }
    {
        use std::io::Write as _;
        if a.count && a.json && !a.quiet {
            writeln!(
                out,
                "{}",
                json!({"present": present, "absent": total - present, "total": total})
            )?;
        } else if a.count && !a.quiet {
            writeln!(
                out,
                "present {present}\nabsent {}\ntotal {total}",
                total - present
            )?;
        }
        out.flush()?;
    }
    if present < total {
        return Err(Box::new(crate::SomeAbsent));
    }
    Ok(())
}

fn inspect_delta(a: &InspectArgs, data: &[u8]) -> CliResult {
    let limits = a.limits.limits_for(data.len() as u64);
    let d = delta::inspect_delta(data, &limits)?;
    if matches!(
        d.frame.kind,
        compressed_bloom::FilterKind::Scalable | compressed_bloom::FilterKind::Counting
    ) {
        // A scalable delta's old layers are sized by the base, a counting
        // delta carries counter values: only the header and the digests
        // are shown without the base.
        let h = d.frame;
        let v = json!({
            "kind": h.kind.name(),
            "type": h.filter_type.name(),
            "version": h.version,
            "seed": h.params.seed,
            "m": h.params.m,
            "k": h.params.k,
            "n": h.n,
            "frame_bytes": data.len(),
            "payload_bytes": h.payload_len,
            "base_digest": format!("{:016x}", d.base_digest),
            "result_digest": format!("{:016x}", d.result_digest),
        });
        if a.json {
            outln!("{v}");
        } else {
            if h.kind == compressed_bloom::FilterKind::Counting {
                outln!(
                    "counting delta   to m = {}, k = {}, n = {}",
                    h.params.m,
                    h.params.k,
                    h.n
                );
            } else {
                outln!(
                    "scalable delta   to m = {} bits in all, k up to {}, n = {}",
                    h.params.m,
                    h.params.k,
                    h.n
                );
            }
            outln!("frame bytes      {}", data.len());
            outln!(
                "digests          base {:016x}, result {:016x}",
                d.base_digest,
                d.result_digest
            );
        }
        return Ok(());
    }
    let sum = delta::summarize(data, &limits)?;
    let d = &sum.header;
    let h = d.frame;
    let m = h.params.m;
    let ones = sum.changed_bits();
    let coded = sum.coded_bytes();
    let bound = sum.entropy_bits() / 8.0;
    // What the same XOR costs coded without the base (the paper's bound).
    let plain_bound = sum.unconditional_entropy_bits() / 8.0;
    let mut v = header_json(&h, ones, data.len(), bound);
    v["density"] = json!(ones as f64 / m as f64);
    v["coded_bytes"] = json!(coded);
    v["plain_entropy_bound_bytes"] = json!(plain_bound);
    v["base_digest"] = json!(format!("{:016x}", d.base_digest));
    v["result_digest"] = json!(format!("{:016x}", d.result_digest));
    v["parts"] = json!(sum
        .parts
        .iter()
        .map(
            |p| json!({"bits": p.bits, "ones": p.ones, "coded_bytes": p.coded_bytes,
                        "entropy_bound_bytes": p.entropy_bits() / 8.0})
        )
        .collect::<Vec<_>>());
    if a.json {
        outln!("{v}");
        return Ok(());
    }
    outln!("type             {}", h.filter_type.name());
    outln!("format version   {}", h.version);
    outln!("seed             {}", h.params.seed);
    outln!("m (bits)         {m}");
    outln!("k                {}", h.params.k);
    outln!("n (new filter)   {}", h.n);
    outln!(
        "changed bits     {ones} (density {:.5})",
        ones as f64 / m as f64
    );
    if let [zeros, ones_part] = sum.parts.as_slice() {
        for (what, p) in [("base 0s", zeros), ("base 1s", ones_part)] {
            outln!(
                "  at {what}     {} of {} bits (density {:.5}), {} coded bytes",
                p.ones,
                p.bits,
                if p.bits == 0 {
                    0.0
                } else {
                    p.ones as f64 / p.bits as f64
                },
                p.coded_bytes
            );
        }
    }
    outln!("frame bytes      {}", data.len());
    outln!("coded bytes      {coded}");
    outln!(
        "entropy bound    {bound:.1} bytes (coded is {})",
        over_bound(coded as u64, bound)
    );
    if d.parts.is_some() {
        outln!("without the base {plain_bound:.1} bytes (log2 C(m, changed bits) / 8)");
    }
    outln!("base digest      {:016x}", d.base_digest);
    outln!("result digest    {:016x}", d.result_digest);
    Ok(())
}

/// The delta frame types `cbloom delta` can write.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum DeltaKind {
    /// The smaller of the two.
    Auto,
    /// Type 3: the XOR coded given the base.
    Conditional,
    /// Type 2: the XOR coded alone.
    Plain,
}

/// A standard filter's delta (or a Squid mask's) of the type asked for.
fn bits_delta(o: &BloomFilter, n: &BloomFilter, kind: DeltaKind) -> CliResult<Vec<u8>> {
    Ok(match kind {
        DeltaKind::Auto => delta::encode_delta(o, n)?,
        DeltaKind::Conditional => delta::encode_delta_conditional(o, n)?,
        DeltaKind::Plain => delta::encode_delta_plain(o, n)?,
    })
}

#[derive(Args)]
pub(crate) struct DeltaArgs {
    /// The filter the receiver has (frame).
    old: PathBuf,
    /// The filter to send (frame).
    new: PathBuf,
    /// Output delta frame (`-` for stdout).
    #[arg(short, long)]
    output: PathBuf,
    /// Which delta to write: the smaller of the two types (`auto`), the
    /// conditional delta (type 3, format version 2), or the plain delta
    /// (type 2, format version 1) for receivers that only read version 1.
    #[arg(long = "type", value_enum, default_value_t = DeltaKind::Auto)]
    kind: DeltaKind,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn delta(a: &DeltaArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    crate::one_stdin(("OLD", &a.old), ("NEW", &a.new))?;
    let old = kinds::read_any("OLD", &a.old, &a.limits)?;
    let new = kinds::read_any("NEW", &a.new, &a.limits)?;
    if let Some(e) = crate::ribbon_cmd::no_delta(&old, &new) {
        return Err(e);
    }
    if old.kind() == new.kind() && old.params() != new.params() {
        // NEW rebuilt as suggested must be of OLD's kind too (the default
        // build may plan a sparse filter, `--m` alone a standard one).
        let kind = match old.kind() {
            compressed_bloom::FilterKind::Counting => " --type counting",
            compressed_bloom::FilterKind::Partitioned => " --type partitioned",
            compressed_bloom::FilterKind::Sparse => " --type sparse",
            _ => "",
        };
        return Err(format!(
            "OLD has {} and NEW has {}: a delta needs both filters built with the same m, k and seed \
             (build NEW with --m {} --k {} --seed {}{kind})",
            old.params(),
            new.params(),
            old.params().m,
            old.params().k,
            old.params().seed
        )
        .into());
    }
    let bits_type = match a.kind {
        DeltaKind::Auto => FilterType::Coded,
        DeltaKind::Conditional => FilterType::ConditionalDelta,
        DeltaKind::Plain => FilterType::Delta,
    };
    let frame = match (&old, &new, a.kind) {
        (o, n, _) if o.kind() != n.kind() => {
            return Err(format!(
                "OLD is a {} filter and NEW a {} filter; a delta needs two filters of one kind",
                o.kind().name(),
                n.kind().name()
            )
            .into())
        }
        (AnyFilter::Squid(o), AnyFilter::Squid(n), kind) => {
            bits_delta(o.filter(), n.filter(), kind)?
        }
        (AnyFilter::Standard(o), AnyFilter::Standard(n), kind) => bits_delta(o, n, kind)?,
        (AnyFilter::Partitioned(o), AnyFilter::Partitioned(n), _) => {
            delta::encode_delta_partitioned_as(o, n, bits_type)?
        }
        (o, n, DeltaKind::Auto) => Kind::encode_delta(o, n, None).ok_or_else(|| {
            format!(
                "no {} delta turns OLD into NEW (a scalable NEW must be OLD grown)",
                o.kind().name()
            )
        })?,
        (o, _, DeltaKind::Plain) => {
            return Err(format!(
                "--type plain writes a type-2 delta for receivers of format version 1, \
                 which hold standard filters; a {} filter's delta has one type: \
                 leave out --type (or build both with --type standard)",
                o.kind().name()
            )
            .into())
        }
        (o, _, _) => {
            return Err(format!(
                "--type conditional writes a type-3 delta of a bit array (standard, \
                 partitioned, Squid); a {} filter's delta has one type: leave out --type",
                o.kind().name()
            )
            .into())
        }
    };
    write_all(&a.output, &frame)?;
    let full = compressed_bloom::encode_any(&new).len();
    let (pm, pk) = kinds::shape(&new);
    note!(
        "{} m={} k={}: {} bytes (the full frame is {full} bytes{})",
        frame_type(&frame),
        pm,
        pk,
        frame.len(),
        if frame.len() >= full {
            "; send that instead"
        } else {
            ""
        }
    );
    Ok(())
}

#[derive(Args)]
pub(crate) struct ApplyArgs {
    /// The base filter (frame).
    base: PathBuf,
    /// The delta frame.
    delta: PathBuf,
    /// Output: the resulting filter as a frame (`-` for stdout).
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn apply(a: &ApplyArgs) -> CliResult {
    use compressed_bloom::DecodeError;
    crate::files::check_output(&a.output)?;
    crate::one_stdin(("BASE", &a.base), ("DELTA", &a.delta))?;
    // --max-expansion bounds what the delta may add; the base is read
    // under the readers' default expansion limit (and --max-m).
    let base_limits = LimitArgs {
        max_expansion: None,
        ..a.limits
    };
    let mut f = kinds::read_any("BASE", &a.base, &base_limits)?;
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("DELTA", &a.delta, e);
    let d = read_all(&a.delta).map_err(named)?;
    let limits = a.limits.limits_for(d.len() as u64);
    let (base, delta) = (a.base.display(), a.delta.display());
    let header = match delta::inspect_delta(&d, &limits) {
        Ok(h) => h,
        Err(DecodeError::WrongFrameType { found, .. }) if !found.is_delta() => {
            return Err(format!(
                "DELTA ({delta}) is a full frame ({}), not a delta: it replaces BASE as it is \
                 (cbloom delta OLD NEW -o D makes a delta)",
                found.name()
            )
            .into())
        }
        Err(e) => return Err(named(e.into())),
    };
    // The kind first: a delta of another kind names another digest too,
    // which would hide the reason.
    if header.frame.kind != f.kind() {
        return Err(format!(
            "BASE ({base}) is a {} filter and DELTA ({delta}) a delta of a {} filter: \
             a delta applies to the kind it was made from",
            f.kind().name(),
            header.frame.kind.name()
        )
        .into());
    }
    compressed_bloom::apply_delta(&mut f, &d, &limits).map_err(|e| match e {
        DecodeError::WrongBase { expected, actual } => format!(
            "DELTA ({delta}) was made from another filter than BASE ({base}): it names the base \
             {expected:016x}, BASE is {actual:016x} (apply deltas in order, to the filter each \
             was made from)"
        )
        .into(),
        e => named(e.into()),
    })?;
    let frame = compressed_bloom::encode_any(&f);
    write_all(&a.output, &frame)?;
    let (pm, pk) = kinds::shape(&f);
    note!(
        "applied: {} m={} k={} n={}, {} bytes written",
        f.kind().name(),
        pm,
        pk,
        f.len(),
        frame.len()
    );
    Ok(())
}
