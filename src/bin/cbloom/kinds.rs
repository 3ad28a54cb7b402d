//! The filter kinds on the command line: `build --type`, and reading any
//! kind's frame for encode, decode, query, delta, apply and inspect.

use crate::files::read_all;
use crate::{CliResult, LimitArgs};
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::plan::receiver::PlanKind;
use compressed_bloom::AnyFilter;
use compressed_bloom::{
    BloomFilter, Coding, CountingBloomFilter, FilterKind, FilterParams, KeyHash, Kind,
};
use serde_json::json;
use std::path::Path;

/// `--type` of `build`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KindArg {
    /// k positions in one m-bit array.
    Standard,
    /// 4-bit saturating counters (keys can be removed by the receiver).
    Counting,
    /// k sub-arrays of m/k bits, one position in each (m a multiple of k).
    Partitioned,
    /// Layers that open as keys arrive; --fpr is the overall bound.
    #[value(alias = "growing")]
    Scalable,
    /// The sorted positions of the one bits, held without the m-bit array.
    Sparse,
    /// A solved linear system: the smallest frame for a static set
    /// (--fpr or --bytes).
    Ribbon,
}

/// The scalable kind plans its layers itself (`build_scalable`).
pub(crate) fn scalable_is_built_apart() -> Box<dyn std::error::Error> {
    "a scalable filter is planned layer by layer from its bound: \
     cbloom build --type scalable --fpr F [--initial-capacity C]"
        .into()
}

/// A filter of some kind being built from key hashes.
pub(crate) enum Builder {
    Standard(BloomFilter),
    Counting(CountingBloomFilter),
    Partitioned(PartitionedBloomFilter),
    /// The sparse kind collects positions (8 bytes each), then sorts them.
    Sparse(FilterParams, Vec<u64>, u64),
}

impl Builder {
    pub(crate) fn new(kind: KindArg, params: FilterParams) -> CliResult<Self> {
        Ok(match kind {
            KindArg::Standard => Builder::Standard(BloomFilter::new(params)?),
            KindArg::Counting => Builder::Counting(CountingBloomFilter::new(params)?),
            KindArg::Partitioned => Builder::Partitioned(PartitionedBloomFilter::new(params)?),
            KindArg::Sparse => {
                params.validate()?;
                Builder::Sparse(params, Vec::new(), 0)
            }
            KindArg::Scalable => return Err(scalable_is_built_apart()),
            KindArg::Ribbon => {
                return Err("a ribbon filter is built apart (build --type ribbon)".into())
            }
        })
    }

    pub(crate) fn insert(&mut self, h: KeyHash) {
        match self {
            Builder::Standard(f) => f.insert_hash(h),
            Builder::Counting(f) => f.insert_hash(h),
            Builder::Partitioned(f) => f.insert_hash(h),
            Builder::Sparse(p, positions, _) => positions.extend(h.positions(p.m, p.k)),
        }
    }

    /// Sets the declared key count.
    pub(crate) fn set_len(&mut self, n: u64) {
        match self {
            Builder::Standard(f) => f.set_len(n),
            Builder::Counting(f) => f.set_len(n),
            Builder::Partitioned(f) => {
                let mut bits = f.bits().clone();
                bits.set_len(n);
                if let Ok(p) = PartitionedBloomFilter::from_bits(bits) {
                    *f = p;
                }
            }
            Builder::Sparse(_, _, len) => *len = n,
        }
    }

    /// m, k and the ones of a bit-array kind (a counting filter's nonzero
    /// counters), from which the distinct keys are estimated.
    pub(crate) fn fill(&self) -> Option<(u64, u32, u64)> {
        match self {
            Builder::Standard(f) => Some((f.m(), f.k(), f.count_ones())),
            Builder::Counting(f) => {
                let b = f.to_bloom();
                Some((b.m(), b.k(), b.count_ones()))
            }
            Builder::Partitioned(f) => Some((f.bits().m(), f.bits().k(), f.bits().count_ones())),
            Builder::Sparse(..) => None,
        }
    }

    /// The filter's frame with `coding` ([`check_coding`] first).
    pub(crate) fn frame(self, coding: Coding) -> CliResult<Vec<u8>> {
        let kind = match &self {
            Builder::Standard(_) => FilterKind::Standard,
            Builder::Counting(_) => FilterKind::Counting,
            Builder::Partitioned(_) => FilterKind::Partitioned,
            Builder::Sparse(..) => FilterKind::Sparse,
        };
        check_coding(coding, kind, false)?;
        Ok(match self {
            Builder::Standard(f) => f.encode_frame(coding, None),
            Builder::Counting(f) => f.encode_frame(coding, None),
            Builder::Partitioned(f) => f.encode_frame(coding, None),
            Builder::Sparse(p, positions, n) => {
                SparseFilter::from_positions(p, n, positions)?.encode_frame(coding, None)
            }
        })
    }
}

/// `--coding` (and its spellings `--static`, `--raw`) of `build` and
/// `encode`: how a full frame's payload is coded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CodingArg {
    /// The fastest-decoding coding within the planner's size bound (type 4
    /// where the kind has it, else type 1).
    Auto,
    /// Type 1, the adaptive coder (readable by format version 1).
    Adaptive,
    /// Type 4, static coding (format version 3; standard and partitioned).
    Static,
    /// Type 0, uncoded.
    Raw,
}

impl CodingArg {
    /// The library's coding; `--static` and `--raw` override `--coding`.
    pub(crate) fn resolve(coding: Option<Self>, static_coded: bool, raw: bool) -> Coding {
        match (coding, static_coded, raw) {
            (_, true, _) => Coding::Static,
            (_, _, true) => Coding::Raw,
            (Some(CodingArg::Adaptive), ..) => Coding::Adaptive,
            (Some(CodingArg::Static), ..) => Coding::Static,
            (Some(CodingArg::Raw), ..) => Coding::Raw,
            (Some(CodingArg::Auto) | None, ..) => Coding::Auto,
        }
    }
}

/// Refuses a coding the kind (or a Squid digest) has no frame for, naming
/// the kinds that have it ([`Coding::applies_to`] decides).
pub(crate) fn check_coding(coding: Coding, kind: FilterKind, squid: bool) -> CliResult {
    if coding.applies_to(kind, squid) {
        return Ok(());
    }
    let with: Vec<&str> = FilterKind::ALL
        .iter()
        .filter(|k| coding.applies_to(**k, false))
        .map(|k| k.name())
        .collect();
    let what = if squid {
        "a Squid digest".to_string()
    } else {
        format!("the {} kind", kind.name())
    };
    Err(format!(
        "{what} has no {coding} coding (the kinds with one: {})",
        with.join(", ")
    )
    .into())
}

impl KindArg {
    /// The planner's name for the kind (not for scalable, planned apart).
    pub(crate) fn plan_kind(self) -> PlanKind {
        match self {
            KindArg::Standard | KindArg::Scalable | KindArg::Ribbon => PlanKind::Standard,
            KindArg::Counting => PlanKind::Counting,
            KindArg::Partitioned => PlanKind::Partitioned,
            KindArg::Sparse => PlanKind::Sparse,
        }
    }

    /// The kind of the frames it builds.
    pub(crate) fn filter_kind(self) -> FilterKind {
        match self {
            KindArg::Standard => FilterKind::Standard,
            KindArg::Counting => FilterKind::Counting,
            KindArg::Partitioned => FilterKind::Partitioned,
            KindArg::Scalable => FilterKind::Scalable,
            KindArg::Sparse => FilterKind::Sparse,
            KindArg::Ribbon => FilterKind::Ribbon,
        }
    }

    /// The kind the planner chose.
    pub(crate) fn from_plan_kind(k: PlanKind) -> Self {
        match k {
            PlanKind::Counting => KindArg::Counting,
            PlanKind::Partitioned => KindArg::Partitioned,
            PlanKind::Sparse => KindArg::Sparse,
            _ => KindArg::Standard,
        }
    }

    /// The kind's name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            KindArg::Standard => "standard",
            KindArg::Counting => "counting",
            KindArg::Partitioned => "partitioned",
            KindArg::Scalable => "scalable",
            KindArg::Sparse => "sparse",
            KindArg::Ribbon => "ribbon",
        }
    }
}

/// Reads a full frame of any kind: the input `role` on the command line
/// (`OLD`, `BASE`, `FILTER`) at `path`, named in its errors.
pub(crate) fn read_any(role: &str, path: &Path, limits: &LimitArgs) -> CliResult<AnyFilter> {
    let data = read_all(path).map_err(|e| input_error(role, path, e))?;
    limits
        .verified(&data)
        .map_err(|e| input_error(role, path, e))?;
    compressed_bloom::decode_any(&data, &limits.limits_for(data.len() as u64))
        .map_err(|e| input_error(role, path, e.into()))
}

/// `e`, an error of the input `role` at `path`, said with both; where the
/// input is not what the command reads (a key file, a delta), what to do.
pub(crate) fn input_error(
    role: &str,
    path: &Path,
    e: Box<dyn std::error::Error>,
) -> Box<dyn std::error::Error> {
    use compressed_bloom::DecodeError;
    // Output errors (a closed pipe: exit status 141) pass as they are.
    if e.is::<std::io::Error>() {
        return e;
    }
    let name = if crate::is_std(path) {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let what = format!("{role} ({name})");
    let message = match e.downcast_ref::<DecodeError>() {
        Some(DecodeError::BadMagic { found }) => format!(
            "{what} is not a compressed-bloom frame (it begins {found:02x?}, a frame [cb, f1]); \
             a frame is made from keys, one per line, with cbloom build --keys FILE -o OUT"
        ),
        Some(DecodeError::WrongFrameType { found, .. }) if found.is_delta() => {
            delta_where_a_filter_belongs(&what, &name, found.name())
        }
        Some(_) => format!("{what}: {e}"),
        // Reading errors name the file already.
        None => format!("{role}: {e}"),
    };
    Box::new(crate::InputError { message, source: e })
}

/// A delta frame given where a filter belongs: what it is and how it is
/// used.
pub(crate) fn delta_where_a_filter_belongs(what: &str, name: &str, type_name: &str) -> String {
    format!(
        "{what} is a delta frame ({type_name}): it changes a filter and holds none; \
         apply it to the filter it was made from: cbloom apply BASE {name} -o OUT"
    )
}

/// m and k for messages: a scalable filter's total bits and largest k.
pub(crate) fn shape(f: &AnyFilter) -> (u64, u32) {
    match f {
        AnyFilter::Scalable(s) => (s.total_bits(), s.max_k()),
        other => (other.params().m, other.params().k),
    }
}

/// The kind's own figures for `inspect`.
pub(crate) fn kind_json(f: &AnyFilter, payload_bytes: u64) -> serde_json::Value {
    match f {
        AnyFilter::Partitioned(p) => json!({
            "partitions": p.params().k,
            "partition_bits": p.partition_bits(),
        }),
        AnyFilter::Sparse(s) => json!({
            "positions": s.count_ones(),
            "bits_per_position": if s.count_ones() == 0 {
                serde_json::Value::Null
            } else {
                json!(payload_bytes as f64 * 8.0 / s.count_ones() as f64)
            },
            "held_bytes": s.heap_bytes(),
        }),
        AnyFilter::Counting(c) => {
            let hist = c.histogram();
            let total = c.params().m as f64;
            let entropy: f64 = hist
                .iter()
                .filter(|&&h| h > 0)
                .map(|&h| {
                    let p = h as f64 / total;
                    -p * p.log2()
                })
                .sum();
            json!({
                "counter_histogram": hist,
                "saturated": hist[15],
                "bits_per_counter": payload_bytes as f64 * 8.0 / total,
                "entropy_bits_per_counter": entropy,
            })
        }
        AnyFilter::Scalable(f) => {
            let layers: Vec<serde_json::Value> = f
                .layers()
                .iter()
                .map(|l| {
                    json!({
                        "m": l.filter.m(),
                        "k": l.filter.k(),
                        "n": l.filter.len(),
                        "capacity": l.capacity,
                        "fill": l.filter.fill_ratio(),
                    })
                })
                .collect();
            json!({
                "layers": layers,
                "bound": f.policy().fpr,
                "formula_fpr": f.formula_fpr(),
                "initial_capacity": f.policy().initial_capacity,
                "growth": f.policy().growth,
                "tightening": f.policy().tightening,
            })
        }
        AnyFilter::Ribbon(r) => json!({
            "rows": r.rows(),
            "columns": r.columns(),
            "upper_blocks": r.upper_blocks(),
            "blocks": r.blocks(),
            "shards": r.shards().count(),
            "bits_per_key": if r.is_empty() {
                serde_json::Value::Null
            } else {
                json!(payload_bytes as f64 * 8.0 / r.len() as f64)
            },
            "expected_fpr": r.expected_fpr(),
            "held_bytes": r.heap_bytes(),
        }),
        AnyFilter::Squid(d) => {
            let cb = d.cblock();
            json!({
                "version_current": cb.version_current(),
                "version_required": cb.version_required(),
                "capacity": cb.capacity(),
                "count": cb.count(),
                "del_count": cb.del_count(),
                "mask_size": cb.mask_size(),
                "bits_per_entry": cb.bits_per_entry(),
                "hash_func_count": cb.hash_func_count(),
                "utilisation": d.utilisation(),
                "usable_by_squid": d.utilisation() <= compressed_bloom::kinds::squid::SquidDigest::MAX_USEFUL_UTILISATION,
            })
        }
        _ => json!({}),
    }
}

/// The filter of a foreign format that the frame file `input` (given as
/// `flag`) holds, taken out of the decoded frame by `pick`, and the
/// frame's length; a frame of anything else is refused with what it holds
/// and the command that makes the right one. `lacks` names what such a
/// frame would carry ("Squid header"), `target` the format exported
/// ("to Squid").
pub(crate) fn read_foreign<T>(
    flag: &str,
    input: &Path,
    limits: &crate::LimitArgs,
    (lacks, target): (&str, &str),
    pick: impl FnOnce(AnyFilter) -> Option<T>,
) -> CliResult<(T, usize)> {
    let named = |e: Box<dyn std::error::Error>| input_error(flag, input, e);
    let data = crate::files::read_all(input).map_err(named)?;
    let any = compressed_bloom::decode_any(&data, &limits.limits_for(data.len() as u64))
        .map_err(|e| named(e.into()))?;
    let (kind, scheme) = (any.kind().name(), any.params().scheme.name());
    let f = pick(any).ok_or_else(|| {
        format!(
            "{} holds a {kind} filter with hash scheme {scheme} and no {lacks}; \
             only filters imported with `cbloom import {flag}` can be exported {target}",
            input.display(),
        )
    })?;
    Ok((f, data.len()))
}
