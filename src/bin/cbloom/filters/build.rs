//! `cbloom build`: keys in, a filter file out, sized by the planner or by
//! the given m and k.

use super::*;

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
                let (model, d) =
                    default_plan(&asked, n, target, &cons).map_err(|e| self.plan_error(e, n))?;
                let note = memory_note(&asked, model, &d, target);
                (KindArg::from_plan_kind(model), d.plan, note)
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

/// The library's default plan over the CLI's models, with the model of
/// the kind it chose.
pub(crate) fn default_plan(
    asked: &[PlanKind],
    n: u64,
    target: Target,
    cons: &Constraints,
) -> Result<(PlanKind, receiver::DefaultPlan), compressed_bloom::plan::PlanError> {
    let kinds: Vec<compressed_bloom::FilterKind> = asked.iter().map(|k| k.filter_kind()).collect();
    let d = receiver::default_plan(&kinds, n, target, cons)?;
    Ok((PlanKind::of(d.kind)?, d))
}

/// The note on a default plan that is not the smallest frame (or, under a
/// budget, not the lowest rate) because of the receiver's memory: what it
/// holds and gives up, and the flag that takes the other plan. Printed
/// whenever the memory cap cost more than the slack, or saves more than
/// half the memory.
pub(crate) fn memory_note(
    asked: &[PlanKind],
    model: PlanKind,
    d: &receiver::DefaultPlan,
    target: Target,
) -> Option<String> {
    let held = receiver::receiver_bytes(model, &d.plan);
    let wire_held = receiver::receiver_bytes(asked[0], &d.wire);
    let differs = d.wire.m != d.plan.m || d.wire.k != d.plan.k || model != asked[0];
    if !differs || !(d.over_slack || wire_held > 2.0 * held) {
        return None;
    }
    let kind = KindArg::from_plan_kind(model);
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
    #[command(flatten)]
    pub(crate) sign: crate::sign_cmd::SignArgs,
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
            sign: &a.sign,
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
    let frame = a.sign.apply(frame)?;
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
pub(crate) fn build_scalable(a: &BuildArgs) -> CliResult {
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
    let frame = compressed_bloom::kinds::scalable::encode_scalable(&f);
    if let Some(budget) = a.size.bytes {
        if frame.len() as u64 > budget {
            return Err(format!(
                "the frame is {} bytes, over the --bytes budget of {budget} (nothing written)",
                frame.len()
            )
            .into());
        }
    }
    let frame = a.sign.apply(frame)?;
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
pub(crate) fn duplicates_seen(m: u64, k: u32, ones: u64, kept: u64) -> Option<f64> {
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
