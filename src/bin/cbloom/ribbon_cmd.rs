//! `cbloom build --type ribbon`: a Ribbon filter (kind 5) from a key file,
//! sized from a target rate (`--fpr`) or a frame budget (`--bytes`).

use crate::files::{for_each_key, progress, write_all};
use crate::CliResult;
use compressed_bloom::kinds::ribbon::encode_ribbon;
use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
use compressed_bloom::plan::ribbon_within;
use compressed_bloom::KeyHash;
use std::path::Path;

/// What `build` passes on for the ribbon kind.
pub(crate) struct RibbonBuild<'a> {
    pub(crate) keys: &'a Path,
    pub(crate) skip_blank: bool,
    pub(crate) distinct: bool,
    pub(crate) seed: u64,
    pub(crate) fpr: Option<f64>,
    pub(crate) bytes: Option<u64>,
    /// --m/--k were given (they do not apply: rows and columns follow
    /// from the rate).
    pub(crate) shape_given: bool,
    /// `--fast`: [`Build::Fast`] rather than the default.
    pub(crate) fast: bool,
    pub(crate) output: &'a Path,
    /// `--sign`.
    pub(crate) sign: &'a crate::sign_cmd::SignArgs,
}

/// Reads and hashes the keys, solves, writes the frame.
pub(crate) fn build(a: &RibbonBuild<'_>) -> CliResult {
    if a.shape_given {
        return Err("a ribbon filter's rows and columns follow from its rate: \
                    give --fpr or --bytes, not --m and --k"
            .into());
    }
    let bar = progress("hashing");
    let mut hashes = Vec::new();
    let mut seen = a
        .distinct
        .then(std::collections::HashSet::<(u64, u64)>::new);
    let read = for_each_key(a.keys, a.skip_blank, |key| {
        let h = KeyHash::new(key, a.seed);
        if seen.as_mut().is_some_and(|s| !s.insert((h.h1, h.h2))) {
            return Ok(());
        }
        hashes.push(h);
        if hashes.len().is_multiple_of(65_536) {
            bar.set_position(hashes.len() as u64);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    let n = hashes.len() as u64;
    let how = if a.fast { Build::Fast } else { Build::Compact };
    let (f, frame) = match (a.fpr, a.bytes) {
        (Some(fpr), _) => {
            let f = RibbonFilter::from_hashes_with(&hashes, fpr, a.seed, how)?;
            let frame = encode_ribbon(&f);
            (f, frame)
        }
        (None, Some(budget)) => fit_budget(&hashes, a.seed, budget, how)?,
        (None, None) => return Err("give --fpr or --bytes for a ribbon filter".into()),
    };
    let frame = a.sign.apply(frame)?;
    write_all(a.output, &frame)?;
    let log2 = (1.0 / f.expected_fpr()).log2();
    note!(
        "built ribbon ({}) rows={} r={} (+1 in {} of {} blocks) n={n} from {read} keys: {} bytes, \
         {:.4} bits per key, expected f {:.3e} (log2(1/f) = {log2:.4}, {:+.2}%)",
        if a.fast { "fast" } else { "compact" },
        f.rows(),
        f.columns(),
        f.upper_blocks(),
        f.blocks(),
        frame.len(),
        frame.len() as f64 * 8.0 / n.max(1) as f64,
        f.expected_fpr(),
        (frame.len() as f64 * 8.0 / n.max(1) as f64 / log2 - 1.0) * 100.0,
    );
    Ok(())
}

/// The lowest rate whose frame fits `budget` bytes (the library's search,
/// [`ribbon_within`]), saying so when the budget holds more than the
/// lowest rate, 2^-64, needs.
fn fit_budget(
    hashes: &[KeyHash],
    seed: u64,
    budget: u64,
    how: Build,
) -> CliResult<(RibbonFilter, Vec<u8>)> {
    let (f, frame) = ribbon_within(hashes, seed, budget, how)?;
    if f.expected_fpr() <= (-64f64).exp2() * (1.0 + 1e-9) {
        note!(
            "note: {budget} bytes hold more than a ribbon filter of {} keys at its lowest \
             rate, 2^-64, needs: built at that rate in {} bytes",
            hashes.len(),
            frame.len()
        );
    }
    Ok((f, frame))
}

/// Why `decode` has nothing to write for a ribbon frame, and what to do.
pub(crate) fn no_decode(path: &Path) -> Box<dyn std::error::Error> {
    format!(
        "{} is a ribbon filter, which has no uncoded form to decode to: its frame is the \
         solved system itself, held in memory as sent (`inspect` shows it and `query` reads \
         it as it is). For a bit array, build the keys again with another --type \
         (standard, sparse, ...)",
        path.display()
    )
    .into()
}

/// Refuses a delta with a ribbon filter on either side: a solved system
/// has no delta (one key changed changes the solution throughout), so NEW
/// goes whole. None if neither is a ribbon filter.
pub(crate) fn no_delta(
    old: &compressed_bloom::AnyFilter,
    new: &compressed_bloom::AnyFilter,
) -> Option<Box<dyn std::error::Error>> {
    use compressed_bloom::FilterKind;
    let which = match (old.kind(), new.kind()) {
        (FilterKind::Ribbon, FilterKind::Ribbon) => "OLD and NEW are ribbon filters",
        (FilterKind::Ribbon, _) => "OLD is a ribbon filter",
        (_, FilterKind::Ribbon) => "NEW is a ribbon filter",
        _ => return None,
    };
    Some(
        format!(
            "{which}: a ribbon filter has no delta (one changed key changes its solution \
             throughout), so send NEW whole; for deltas, build both with a kind that has them \
             (--type standard, sparse, partitioned, counting or scalable)"
        )
        .into(),
    )
}

/// `inspect`'s lines for a ribbon filter, in place of the bit array's
/// ones and fill.
pub(crate) fn inspect_lines(r: &RibbonFilter, frame_len: usize) -> CliResult {
    let per_key = frame_len as f64 * 8.0 / r.len().max(1) as f64;
    outln!(
        "columns          r = {} (r + 1 in the last {} of {} blocks of 128 rows)",
        r.columns(),
        r.upper_blocks(),
        r.blocks()
    );
    outln!("shards           {}", r.shards().count());
    outln!(
        "bits per key     {per_key:.4} (log2(1/f) = {:.4})",
        (1.0 / r.expected_fpr()).log2()
    );
    outln!("held in memory   {} bytes", r.heap_bytes());
    Ok(())
}
