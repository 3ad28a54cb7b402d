//! `import` and `export`: filters in deployed formats in and out of
//! frames: Squid cache digests here (`--squid`), BIP158 block filters in
//! `bip158_cmd` (`--bip158`) and BIP37 `filterload` payloads in
//! `bitcoin_cmd` (`--bip37`).

use crate::files::{read_all, write_all};
use crate::{CliResult, LimitArgs};
use clap::{ArgGroup, Args};
use compressed_bloom::kinds::squid::{SquidDigest, SquidError};
use compressed_bloom::AnyFilter;
use std::path::PathBuf;

#[derive(Args)]
#[command(group(ArgGroup::new("source").required(true).args(["squid", "bip37", "bip158"])))]
pub(crate) struct ImportArgs {
    /// A Squid cache digest (the 128-byte header and the mask), `-` for stdin.
    #[arg(long, value_name = "FILE")]
    squid: Option<PathBuf>,
    /// A BIP37 `filterload` payload (CompactSize length, filter bytes,
    /// nHashFuncs, nTweak, nFlags), `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub(crate) bip37: Option<PathBuf>,
    #[command(flatten)]
    bip158: crate::bip158_cmd::Bip158ImportArgs,
    /// The input file holds hex (whitespace ignored) rather than bytes
    /// (`--bip158`, `--bip37`).
    #[arg(long)]
    pub(crate) hex: bool,
    /// Output frame (`-` for stdout).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Keep the bits uncoded (a raw frame) instead of the smallest coding.
    #[arg(long)]
    pub(crate) raw: bool,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    #[command(flatten)]
    pub(crate) sign: crate::sign_cmd::SignArgs,
}

pub(crate) fn import(a: &ImportArgs) -> CliResult {
    if let Some(file) = &a.bip158.bip158 {
        return crate::bip158_cmd::import(&a.bip158, file, a.hex, &a.output, &a.limits, &a.sign);
    }
    if let Some(flag) = a.bip158.stray_flag() {
        return Err(format!("{flag} is for --bip158 input").into());
    }
    let squid = match (&a.squid, &a.bip37) {
        (Some(path), _) => path,
        (None, Some(path)) => return crate::bitcoin_cmd::import_bip37(a, path),
        (None, None) => {
            return Err("give the input: --squid FILE, --bip158 FILE or --bip37 FILE".into())
        }
    };
    if a.hex {
        return Err(
            "--hex is for --bip158 and --bip37 input; a Squid digest is read as bytes".into(),
        );
    }
    crate::files::check_output(&a.output)?;
    let data = read_all(squid)?;
    let d = SquidDigest::from_squid_bytes(&data, &a.limits.limits_for(data.len() as u64))
        .map_err(|e| format!("{}: {}", squid.display(), explain(&e)))?;
    // The digest holds the mask now: the bytes read are not kept beside
    // it while the frame is built (a copy of the mask less at the peak).
    let read = data.len();
    drop(data);
    let frame = if a.raw {
        compressed_bloom::kinds::squid::encode_squid_raw(&d)
    } else {
        compressed_bloom::kinds::squid::encode_squid(&d)
    };
    let frame = a.sign.apply(frame)?;
    write_all(&a.output, &frame)?;
    let cb = d.cblock();
    note!(
        "imported Squid digest v{} (capacity {}, count {}, {} bits per entry, {} mask bytes, \
         {:.1}% of bits set): {} -> {} bytes",
        cb.version_current(),
        cb.capacity(),
        cb.count(),
        cb.bits_per_entry(),
        cb.mask_size(),
        d.utilisation() * 100.0,
        read,
        frame.len()
    );
    Ok(())
}

/// Squid's words for a header that is a digest's, and "not a Squid
/// digest" for one that cannot be: a version Squid never had (it is at 5;
/// anything past 100 or below 1 is not a version), or too few bytes.
fn explain(e: &SquidError) -> String {
    match e {
        SquidError::TooNew { required } if !(1..=100).contains(required) => format!(
            "not a Squid digest (its header's required version would be {required}; Squid's is 5)"
        ),
        SquidError::TooOld { current } if *current < 1 => {
            format!("not a Squid digest (its header's version would be {current}; Squid's is 5)")
        }
        SquidError::TooShort { len } => {
            format!("not a Squid digest: a digest starts with a 128-byte header; got {len} bytes")
        }
        other => other.to_string(),
    }
}

#[derive(Args)]
#[command(group(ArgGroup::new("format").required(true).args(["input", "bip37", "bip158"])))]
pub(crate) struct ExportArgs {
    /// A frame holding a Squid digest (from `import --squid`), `-` for stdin.
    #[arg(long = "squid", value_name = "IN")]
    input: Option<PathBuf>,
    /// A frame holding a BIP37 filter (from `import --bip37`), `-` for
    /// stdin: writes its `filterload` payload.
    #[arg(long, value_name = "IN")]
    pub(crate) bip37: Option<PathBuf>,
    #[command(flatten)]
    bip158: crate::bip158_cmd::Bip158ExportArgs,
    /// Write the digest as Squid sends it (header and mask), the filter as
    /// BIP158 serialises it, or the `filterload` payload, to this file.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: PathBuf,
    /// Write hex (one line) rather than bytes (`--bip158`, `--bip37`).
    #[arg(long)]
    pub(crate) hex: bool,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

pub(crate) fn export(a: &ExportArgs) -> CliResult {
    if let Some(input) = &a.bip158.bip158 {
        return crate::bip158_cmd::export(input, &a.output, a.hex, &a.limits);
    }
    let input = match (&a.input, &a.bip37) {
        (Some(path), _) => path,
        (None, Some(path)) => return crate::bitcoin_cmd::export_bip37(a, path),
        (None, None) => return Err("give the input: --squid IN, --bip158 IN or --bip37 IN".into()),
    };
    if a.hex {
        return Err(
            "--hex is for --bip158 and --bip37 output; a Squid digest is written as bytes".into(),
        );
    }
    crate::files::check_output(&a.output)?;
    let (d, read) = crate::kinds::read_foreign(
        "--squid",
        input,
        &a.limits,
        ("Squid header", "to Squid"),
        |any| match any {
            AnyFilter::Squid(d) => Some(d),
            _ => None,
        },
    )?;
    let out = d.to_squid_bytes();
    write_all(&a.output, &out)?;
    note!(
        "exported Squid digest: {} -> {} bytes ({} header + {} mask)",
        read,
        out.len(),
        compressed_bloom::kinds::squid::CBLOCK_LEN,
        d.cblock().mask_size()
    );
    Ok(())
}
