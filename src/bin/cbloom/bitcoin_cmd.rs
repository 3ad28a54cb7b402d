//! `import --bip37` and `export --bip37`: BIP37 `filterload` payloads in
//! and out of frames.

use crate::files::write_all;
use crate::squid_cmd::{ExportArgs, ImportArgs};
use crate::CliResult;
use compressed_bloom::bitcoin::Bip37Filter;
use compressed_bloom::AnyFilter;
use std::path::Path;

pub(crate) fn import_bip37(a: &ImportArgs, path: &Path) -> CliResult {
    crate::files::check_output(&a.output)?;
    let payload = crate::files::read_input(path, a.hex)?;
    let f = Bip37Filter::from_filterload(&payload, &a.limits.limits_for(payload.len() as u64))
        .map_err(|e| format!("{}: not a BIP37 filterload payload: {e}", path.display()))?;
    let frame = if a.raw {
        compressed_bloom::kinds::bip37::encode_bip37_raw(&f)
    } else {
        compressed_bloom::kinds::bip37::encode_bip37(&f)
    };
    let frame = a.sign.apply(frame)?;
    write_all(&a.output, &frame)?;
    note!(
        "imported BIP37 filter ({} bytes, nHashFuncs {}, nTweak {}, nFlags {} ({}), {:.1}% of bits set): \
         {} -> {} bytes",
        f.len_bytes(),
        f.hash_funcs(),
        f.tweak(),
        f.flags(),
        f.flags_name(),
        f.filter().fill_ratio() * 100.0,
        payload.len(),
        frame.len()
    );
    Ok(())
}

pub(crate) fn export_bip37(a: &ExportArgs, input: &Path) -> CliResult {
    crate::files::check_output(&a.output)?;
    let (f, read) = crate::kinds::read_foreign(
        "--bip37",
        input,
        &a.limits,
        ("BIP37 record", "as filterload"),
        |any| match any {
            AnyFilter::Bip37(f) => Some(f),
            _ => None,
        },
    )?;
    let payload = f.to_filterload();
    let out = if a.hex {
        let mut line = crate::filters::hex(&payload);
        line.push('\n');
        line.into_bytes()
    } else {
        payload.clone()
    };
    write_all(&a.output, &out)?;
    note!(
        "exported BIP37 filterload: {} -> {} bytes ({} filter bytes, nHashFuncs {}, nTweak {}, nFlags {})",
        read,
        payload.len(),
        f.len_bytes(),
        f.hash_funcs(),
        f.tweak(),
        f.flags()
    );
    Ok(())
}

/// `inspect`'s lines for a BIP37 filter: the `filterload` fields and what
/// Core's query would make of its fill.
pub(crate) fn inspect_lines(f: &Bip37Filter) -> CliResult {
    outln!(
        "bip37 filterload {} filter bytes, nHashFuncs {}, nTweak {} ({:#010x}), nFlags {} ({})",
        f.len_bytes(),
        f.hash_funcs(),
        f.tweak(),
        f.tweak(),
        f.flags(),
        f.flags_name()
    );
    outln!(
        "bip37 payload    {} bytes (export --bip37 writes them)",
        f.to_filterload().len()
    );
    Ok(())
}

/// `inspect --json`'s object for a BIP37 filter.
pub(crate) fn kind_json(f: &Bip37Filter) -> serde_json::Value {
    serde_json::json!({
        "filter_bytes": f.len_bytes(),
        "n_hash_funcs": f.hash_funcs(),
        "n_tweak": f.tweak(),
        "n_flags": f.flags(),
        "flags_name": f.flags_name(),
        "filterload_bytes": f.to_filterload().len(),
        "fill": f.filter().fill_ratio(),
    })
}
