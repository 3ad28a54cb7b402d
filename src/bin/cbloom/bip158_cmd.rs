//! `import --bip158` and `export --bip158`: BIP158 basic block filters in
//! and out, with their filter headers.

use crate::files::write_all;
use crate::sign_cmd::hex;
use crate::{CliResult, LimitArgs};
use clap::Args;
use compressed_bloom::bitcoin::Bip158Filter;
use compressed_bloom::AnyFilter;
use std::path::{Path, PathBuf};

/// The BIP158 half of `cbloom import`.
#[derive(Args)]
pub(crate) struct Bip158ImportArgs {
    /// A BIP158 basic filter (CompactSize N, then the Golomb-Rice codes),
    /// `-` for stdin.
    #[arg(long, value_name = "FILE", requires = "block_hash")]
    pub(crate) bip158: Option<PathBuf>,
    /// The filter's block hash, in hex as explorers and `getblockhash`
    /// print it (reversed from the internal byte order).
    #[arg(long, value_name = "HEX")]
    block_hash: Option<String>,
    /// The previous block's filter header (hex, printed order): with it
    /// the import prints this block's header.
    #[arg(long, value_name = "HEX")]
    prev_header: Option<String>,
    /// Refuse the filter unless its header (computed with --prev-header)
    /// is this one (hex, printed order).
    #[arg(long, value_name = "HEX", requires = "prev_header")]
    expect_header: Option<String>,
}

impl Bip158ImportArgs {
    /// A BIP158 flag given without `--bip158` (clap's `requires` does not
    /// reach across the flattened argument groups), to refuse by name.
    pub(crate) fn stray_flag(&self) -> Option<&'static str> {
        [
            (self.block_hash.is_some(), "--block-hash"),
            (self.prev_header.is_some(), "--prev-header"),
            (self.expect_header.is_some(), "--expect-header"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// The BIP158 half of `cbloom export`.
#[derive(Args)]
pub(crate) struct Bip158ExportArgs {
    /// A frame holding a BIP158 filter (from `import --bip158`), `-` for stdin.
    #[arg(long = "bip158", value_name = "IN")]
    pub(crate) bip158: Option<PathBuf>,
}

/// A 32-byte hash given in printed (reversed) hex, in internal order.
fn hash_arg(flag: &str, text: &str) -> CliResult<[u8; 32]> {
    let bytes = crate::files::unhex(text)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| format!("{flag}: expected 64 hex digits, got {:?}", text.trim()))?;
    let mut h = bytes;
    h.reverse();
    Ok(h)
}

/// A hash in internal order, printed as Bitcoin prints it (reversed).
pub(crate) fn display(h: &[u8; 32]) -> String {
    let mut r = *h;
    r.reverse();
    hex(&r)
}

/// `import --bip158 FILE --block-hash HEX`: the frame of a block's filter.
pub(crate) fn import(
    a: &Bip158ImportArgs,
    file: &Path,
    is_hex: bool,
    output: &Path,
    limits: &LimitArgs,
    sign: &crate::sign_cmd::SignArgs,
) -> CliResult {
    crate::files::check_output(output)?;
    let block_hash = hash_arg("--block-hash", a.block_hash.as_deref().unwrap_or_default())?;
    let data = crate::files::read_input(file, is_hex)?;
    let f =
        Bip158Filter::from_bip158_bytes(block_hash, &data, &limits.limits_for(data.len() as u64))
            .map_err(|e| format!("{}: not a BIP158 filter: {e}", file.display()))?;
    let header = match &a.prev_header {
        Some(prev) => Some(f.filter_header(&hash_arg("--prev-header", prev)?)),
        None => None,
    };
    if let (Some(want), Some(got)) = (&a.expect_header, header) {
        if hash_arg("--expect-header", want)? != got {
            return Err(format!(
                "{}: the filter header is {}, not the expected {}",
                file.display(),
                display(&got),
                want.trim()
            )
            .into());
        }
    }
    let frame = sign.apply(compressed_bloom::kinds::bip158::encode_bip158(&f))?;
    write_all(output, &frame)?;
    note!(
        "imported BIP158 filter of block {}: N = {} ({} repeated values), {} -> {} bytes",
        display(f.block_hash()),
        f.len(),
        f.repeats().len(),
        data.len(),
        frame.len()
    );
    note!("filter hash      {}", display(&f.filter_hash()));
    if let Some(h) = header {
        note!(
            "filter header    {}{}",
            display(&h),
            if a.expect_header.is_some() {
                " (as expected)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// `export --bip158 IN -o FILE`: the BIP158 bytes of a frame's filter.
pub(crate) fn export(input: &Path, output: &Path, as_hex: bool, limits: &LimitArgs) -> CliResult {
    crate::files::check_output(output)?;
    let (f, read) = crate::kinds::read_foreign(
        "--bip158",
        input,
        limits,
        ("block hash", "to BIP158"),
        |any| match any {
            AnyFilter::Bip158(f) => Some(f),
            _ => None,
        },
    )?;
    let bytes = f.to_bip158_bytes();
    if as_hex {
        write_all(output, format!("{}\n", hex(&bytes)).as_bytes())?;
    } else {
        write_all(output, &bytes)?;
    }
    note!(
        "exported BIP158 filter of block {}: {} -> {} bytes (N = {})",
        display(f.block_hash()),
        read,
        bytes.len(),
        f.len()
    );
    Ok(())
}

/// `inspect`'s lines for a BIP158 filter.
pub(crate) fn inspect_lines(f: &Bip158Filter) -> CliResult {
    outln!("block hash       {}", display(f.block_hash()));
    outln!(
        "bip158           N = {}, M = {}, P = {}, {} repeated values, {} bytes as BIP158",
        f.len(),
        Bip158Filter::M,
        Bip158Filter::P,
        f.repeats().len(),
        f.to_bip158_bytes().len()
    );
    outln!("filter hash      {}", display(&f.filter_hash()));
    Ok(())
}

/// `inspect --json`'s object for a BIP158 filter.
pub(crate) fn inspect_json(f: &Bip158Filter) -> serde_json::Value {
    serde_json::json!({
        "block_hash": display(f.block_hash()),
        "n": f.len(),
        "m_multiplier": Bip158Filter::M,
        "rice_parameter": Bip158Filter::P,
        "repeats": f.repeats().len(),
        "bip158_bytes": f.to_bip158_bytes().len(),
        "filter_hash": display(&f.filter_hash()),
    })
}
