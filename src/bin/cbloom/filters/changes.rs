//! `cbloom delta` and `cbloom apply`: the change between two filters as a
//! delta frame, and a delta applied to a base.

use super::*;

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
pub(crate) fn bits_delta(o: &BloomFilter, n: &BloomFilter, kind: DeltaKind) -> CliResult<Vec<u8>> {
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
    #[command(flatten)]
    pub(crate) sign: crate::sign_cmd::SignArgs,
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
        (AnyFilter::Bip37(o), AnyFilter::Bip37(n), kind) => {
            bits_delta(o.filter(), n.filter(), kind)?
        }
        (AnyFilter::Standard(o), AnyFilter::Standard(n), kind) => bits_delta(o, n, kind)?,
        (AnyFilter::Partitioned(o), AnyFilter::Partitioned(n), _) => {
            compressed_bloom::kinds::partitioned::encode_delta_partitioned_as(o, n, bits_type)?
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
                 partitioned, Squid, BIP37); a {} filter's delta has one type: leave out --type",
                o.kind().name()
            )
            .into())
        }
    };
    let frame = a.sign.apply(frame)?;
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
    #[command(flatten)]
    pub(crate) sign: crate::sign_cmd::SignArgs,
}

pub(crate) fn apply(a: &ApplyArgs) -> CliResult {
    use compressed_bloom::DecodeError;
    crate::files::check_output(&a.output)?;
    crate::one_stdin(("BASE", &a.base), ("DELTA", &a.delta))?;
    // --max-expansion bounds what the delta may add; the base is read
    // under the readers' default expansion limit (and --max-m).
    let base_limits = LimitArgs {
        max_expansion: None,
        ..a.limits.clone()
    };
    let mut f = kinds::read_any("BASE", &a.base, &base_limits)?;
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("DELTA", &a.delta, e);
    let d = read_all(&a.delta).map_err(named)?;
    a.limits.verified(&d).map_err(named)?;
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
    let frame = a.sign.apply(frame)?;
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
