//! `import --squid` and `export --squid`: Squid cache digests in and out.

use crate::files::{read_all, write_all};
use crate::{CliResult, LimitArgs};
use clap::Args;
use compressed_bloom::kinds::squid::{SquidDigest, SquidError};
use compressed_bloom::AnyFilter;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// A Squid cache digest (the 128-byte header and the mask), `-` for stdin.
    #[arg(long, value_name = "FILE")]
    squid: PathBuf,
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
    crate::files::check_output(&a.output)?;
    let data = read_all(&a.squid)?;
    let d = SquidDigest::from_squid_bytes(&data, &a.limits.limits_for(data.len() as u64))
        .map_err(|e| format!("{}: {}", a.squid.display(), explain(&e)))?;
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
    #[arg(long = "squid", value_name = "IN")]
    input: PathBuf,
    /// Write the digest as Squid sends it (header and mask) to this file.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn export(a: &ExportArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    let named = |e: Box<dyn std::error::Error>| crate::kinds::input_error("--squid", &a.input, e);
    let data = read_all(&a.input).map_err(named)?;
    let d = match compressed_bloom::decode_any(&data, &a.limits.limits_for(data.len() as u64))
        .map_err(|e| named(e.into()))?
    {
        AnyFilter::Squid(d) => d,
        other => {
            return Err(format!(
                "{} holds a {} filter with hash scheme {} and no Squid header; \
                 only digests imported with `cbloom import --squid` can be exported to Squid",
                a.input.display(),
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
