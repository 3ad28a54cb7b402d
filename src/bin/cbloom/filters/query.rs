//! `cbloom query`: keys looked up in a filter file or frame.

use super::*;

#[derive(Args)]
pub(crate) struct QueryArgs {
    /// Frame file (`-` for stdin).
    filter: PathBuf,
    /// Keys to look up.
    #[arg(conflicts_with_all = ["keys", "url", "urls"])]
    key: Vec<String>,
    /// File of keys, one per line (`-` for stdin).
    #[arg(long, conflicts_with_all = ["url", "urls"])]
    keys: Option<PathBuf>,
    /// A key given as its bytes in hex (a BIP37 data element, a script, any
    /// key that is not text); may be repeated. Printed back in hex.
    #[arg(long = "key-hex", value_name = "HEX", value_parser = crate::files::unhex,
          conflicts_with_all = ["url", "urls"])]
    key_hex: Vec<Vec<u8>>,
    /// A URL to look up in a Squid digest, hashed as Squid does (method byte
    /// and URL); may be repeated.
    #[arg(long, conflicts_with = "urls")]
    url: Vec<String>,
    /// File of URLs for a Squid digest, one per line (`-` for stdin).
    #[arg(long)]
    urls: Option<PathBuf>,
    /// The request method of --url/--urls: GET, POST, PUT, HEAD, CONNECT,
    /// TRACE, OPTIONS, DELETE, or Squid's method number.
    #[arg(long, default_value = "GET", value_parser = parse_method)]
    method: compressed_bloom::kinds::squid::Method,
    /// Print a summary instead of one line per key.
    #[arg(long)]
    count: bool,
    /// Print JSON: one object per key (`{"key": ..., "present": ...}`), or
    /// with --count the summary. A key that is not UTF-8 is given as
    /// `"key_hex"`, its bytes in lowercase hex, instead of `"key"`, so that
    /// every key reads back exactly.
    #[arg(long)]
    json: bool,
    /// Print nothing; the exit status says it all (0: every key present,
    /// 1: some key absent, 2: error).
    #[arg(long)]
    quiet: bool,
    /// Skip empty lines of --keys (by default an empty line is the empty key).
    #[arg(long)]
    skip_blank: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// A method name or Squid method number for `--method`.
pub(crate) fn parse_method(s: &str) -> Result<compressed_bloom::kinds::squid::Method, String> {
    compressed_bloom::kinds::squid::Method::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a method: GET, POST, PUT, HEAD, CONNECT, TRACE, OPTIONS, DELETE,              or Squid's method number (0-255)"
        )
    })
}

/// Bytes as lowercase hex, two digits each.
pub(crate) use crate::sign_cmd::hex;

pub(crate) fn query(a: &QueryArgs) -> CliResult {
    let key_file = a.keys.as_deref().or(a.urls.as_deref());
    if let Some(path) = key_file {
        let flag = if a.keys.is_some() { "--keys" } else { "--urls" };
        crate::one_stdin(("FILTER", &a.filter), (flag, path))?;
    }
    if a.key.is_empty() && key_file.is_none() && a.url.is_empty() && a.key_hex.is_empty() {
        return Err(Box::new(UsageError(
            "give keys to look up: KEY..., --keys FILE, --key-hex HEX, or --url/--urls for a \
             Squid digest"
                .into(),
        )));
    }
    let f = kinds::read_any("FILTER", &a.filter, &a.limits)?;
    let by_url = !a.url.is_empty() || a.urls.is_some();
    if !by_url && f.params().scheme == compressed_bloom::HashScheme::SquidMd5 {
        return Err(format!(
            "{} is a Squid digest: its keys are hashed as Squid hashes URLs (method and URL); \
             look them up with --url URL or --urls FILE (and --method)",
            a.filter.display()
        )
        .into());
    }
    if by_url && f.params().scheme != compressed_bloom::HashScheme::SquidMd5 {
        return Err(format!(
            "--url and --urls look URLs up as Squid does, but {} uses hash scheme {} ({});              use --keys or plain keys",
            a.filter.display(),
            f.params().scheme.id(),
            f.params().scheme.name()
        )
        .into());
    }
    let method = a.method;
    let mut key_buf = Vec::new();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (mut present, mut total) = (0u64, 0u64);
    let per_line = !a.count && !a.quiet;
    let per_key_json = per_line && a.json;
    // `as_hex`: the key came as hex and is printed back so.
    let mut ask = |key: &[u8], as_hex: bool| -> CliResult {
        use std::io::Write as _;
        let hit = if by_url {
            // Squid's store key: the method byte, then the URL.
            key_buf.clear();
            key_buf.push(method.0);
            key_buf.extend_from_slice(key);
            f.contains(&key_buf)
        } else {
            f.contains(key)
        };
        present += u64::from(hit);
        total += 1;
        if per_key_json {
            let v = match std::str::from_utf8(key) {
                Ok(text) if !as_hex => json!({"key": text, "present": hit}),
                _ => json!({"key_hex": hex(key), "present": hit}),
            };
            writeln!(out, "{v}")?;
        } else if per_line && as_hex {
            out.write_all(hex(key).as_bytes())?;
            out.write_all(if hit { b"\tpresent\n" } else { b"\tabsent\n" })?;
        } else if per_line {
            out.write_all(key)?;
            out.write_all(if hit { b"\tpresent\n" } else { b"\tabsent\n" })?;
        }
        Ok(())
    };
    for key in &a.key_hex {
        ask(key, true)?;
    }
    match key_file {
        Some(path) => {
            for_each_key(path, a.skip_blank, |k| ask(k, false))?;
        }
        None => {
            for key in a.key.iter().chain(&a.url) {
                ask(key.as_bytes(), false)?;
            }
        }
    }
    {
        use std::io::Write as _;
        if a.count && a.json && !a.quiet {
            writeln!(
                out,
                "{}",
                json!({"present": present, "absent": total - present, "total": total})
            )?;
        } else if a.count && !a.quiet {
            writeln!(
                out,
                "present {present}\nabsent {}\ntotal {total}",
                total - present
            )?;
        }
        out.flush()?;
    }
    if present < total {
        return Err(Box::new(crate::SomeAbsent));
    }
    Ok(())
}
