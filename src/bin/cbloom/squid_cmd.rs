//! `import` and `export`: Squid cache digests in and out, and the
//! dispatch to the other foreign formats (`--bip158`).

use crate::files::{read_all, write_all};
use crate::{CliResult, LimitArgs};
use clap::Args;
use compressed_bloom::kinds::squid::{SquidDigest, SquidError};
use compressed_bloom::AnyFilter;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// A Squid cache digest (the 128-byte header and the mask), `-` for stdin.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["bip158"], conflicts_with_all = ["bip158"])]
    squid: Option<PathBuf>,
    #[command(flatten)]
    bip158: crate::bip158_cmd::Bip158ImportArgs,
    /// The input file holds hex digits (whitespace around them allowed),
    /// not bytes (`--bip158`).
    #[arg(long)]
    hex: bool,
    /// Output frame (`-` for stdout).
    #[arg(short, long)]
    output: PathBuf,
    /// Keep the mask uncoded (a raw frame) instead of the smaller of coded and raw.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    pub(crate) sign: crate::sign_cmd::SignArgs,
}

pub(crate) fn import(a: &ImportArgs) -> CliResult {
    if let Some(file) = &a.bip158.bip158 {
        return crate::bip158_cmd::import(&a.bip158, file, a.hex, &a.output, &a.limits, &a.sign);
    }
    let Some(squid) = &a.squid else {
        return Err("import needs --squid FILE or --bip158 FILE".into());
    };
    if a.hex {
        return Err("--hex is for --bip158 input; a Squid digest is read as bytes".into());
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
pub(crate) struct ExportArgs {
    /// A frame holding a Squid digest (from `import --squid`), `-` for stdin.
    #[arg(long = "squid", value_name = "IN", required_unless_present_any = ["bip158"], conflicts_with_all = ["bip158"])]
    input: Option<PathBuf>,
    #[command(flatten)]
    bip158: crate::bip158_cmd::Bip158ExportArgs,
    /// Write the digest as Squid sends it (header and mask), or the filter
    /// as BIP158 serialises it, to this file.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Write hex digits and a newline instead of bytes (`--bip158`).
    #[arg(long)]
    hex: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn export(a: &ExportArgs) -> CliResult {
    if let Some(input) = &a.bip158.bip158 {
        return crate::bip158_cmd::export(input, &a.output, a.hex, &a.limits);
    }
    let Some(input) = &a.input else {
        return Err("export needs --squid IN or --bip158 IN".into());
    };
    if a.hex {
        return Err("--hex is for --bip158 output; a Squid digest is written as bytes".into());
    }
    crate::files::check_output(&a.output)?;
    let named = |e: Box<dyn std::error::Error>| crate::kinds::input_error("--squid", input, e);
    let data = read_all(input).map_err(named)?;
    let d = match compressed_bloom::decode_any(&data, &a.limits.limits_for(data.len() as u64))
        .map_err(|e| named(e.into()))?
    {
        AnyFilter::Squid(d) => d,
        other => {
            return Err(format!(
                "{} holds a {} filter with hash scheme {} and no Squid header; \
                 only digests imported with `cbloom import --squid` can be exported to Squid",
                input.display(),
                other.kind().name(),
                other.params().scheme.name()
            )
            .into())
        }
    };
    let out = d.to_squid_bytes();
    write_all(&a.output, &out)?;
    note!(
        "exported Squid digest: {} -> {} bytes ({} header + {} mask)",
        data.len(),
        out.len(),
        compressed_bloom::kinds::squid::CBLOCK_LEN,
        d.cblock().mask_size()
    );
    Ok(())
}
