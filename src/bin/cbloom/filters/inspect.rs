//! `cbloom inspect`: what a frame or a delta declares and holds, without
//! building the filter.

use super::*;

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
    if let Some(id) = a.limits.verified(&data).map_err(named)? {
        note!("signature: verified, key {}", crate::sign_cmd::hex(&id));
    }
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
    if let AnyFilter::Bip158(f) = &any {
        v["bip158"] = crate::bip158_cmd::inspect_json(f);
    }
    if let AnyFilter::Bip37(f) = &any {
        v["bip37"] = crate::bitcoin_cmd::kind_json(f);
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
            compressed_bloom::HashScheme::Bip158SipHash =>
                "BIP158: SipHash-2-4 keyed by the block hash, one value in [0, N·784931)",
            compressed_bloom::HashScheme::Bip37Murmur =>
                "BIP37: MurmurHash3 x86_32, seed i*0xFBA4C795 + nTweak, mod m",
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
    if let Some(id) = h.signer {
        outln!(
            "signed by key    {} (64-byte signature after the CRC)",
            crate::sign_cmd::hex(&id)
        );
    }
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
    if let AnyFilter::Bip158(f) = &any {
        crate::bip158_cmd::inspect_lines(f)?;
    }
    if let AnyFilter::Bip37(f) = &any {
        crate::bitcoin_cmd::inspect_lines(f)?;
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
            if d.utilisation() > compressed_bloom::kinds::squid::SquidDigest::MAX_USEFUL_UTILISATION
            {
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
pub(crate) fn over_bound(bytes: u64, bound: f64) -> String {
    if bound > 0.0 {
        format!("{:+.3}%", (bytes as f64 / bound - 1.0) * 100.0)
    } else {
        format!("{bytes} byte{} over it", if bytes == 1 { "" } else { "s" })
    }
}

/// The fields `inspect --json` prints for every frame type.
pub(crate) fn header_json(
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
        "signer": h.signer.map(|id| crate::sign_cmd::hex(&id)),
    })
}

pub(crate) fn finite_or_null(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

pub(crate) fn inspect_delta(a: &InspectArgs, data: &[u8]) -> CliResult {
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
            if let Some(id) = h.signer {
                outln!("signed by key    {}", crate::sign_cmd::hex(&id));
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
    if let Some(id) = h.signer {
        outln!("signed by key    {}", crate::sign_cmd::hex(&id));
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
