//! `cbloom encode` and `cbloom decode`: a filter to a frame of a chosen
//! coding, and a frame back to the filter, checked under the limits.

use super::*;

pub(crate) fn frame_type(frame: &[u8]) -> &'static str {
    compressed_bloom::inspect(frame, &compressed_bloom::DecodeLimits::unlimited())
        .map_or("?", |h| h.filter_type.name())
}

#[derive(Args)]
pub(crate) struct EncodeArgs {
    /// Input frame, or with --import-bits a bare packed bit array (`-` for stdin).
    input: PathBuf,
    /// Output frame (`-` for stdout).
    #[arg(short, long)]
    output: PathBuf,
    /// Treat the input as a bare bit array (bit i in byte i/8, LSB first) of ⌈m/8⌉ bytes.
    #[arg(long, requires_all = ["m", "k"])]
    import_bits: bool,
    /// m of the imported bit array (only with --import-bits).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_count, allow_negative_numbers = true)]
    m: Option<u64>,
    /// k of the imported bit array (only with --import-bits).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_small_count, allow_negative_numbers = true)]
    k: Option<u32>,
    /// Seed of the imported bit array's hash (only with --import-bits; default 0).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_count, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Key count to declare for the imported bit array (only with --import-bits; default 0).
    #[arg(long, requires = "import_bits", value_parser = crate::parse_count, allow_negative_numbers = true)]
    n: Option<u64>,
    /// How the frame's payload is coded (as `build --coding`; `auto` by
    /// default).
    #[arg(long, value_enum, conflicts_with = "static_coded")]
    coding: Option<CodingArg>,
    /// The same as `--coding static`.
    #[arg(long = "static")]
    static_coded: bool,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    pub(crate) sign: crate::sign_cmd::SignArgs,
}

pub(crate) fn encode(a: &EncodeArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("INPUT", &a.input, e);
    let data = read_all(&a.input).map_err(named)?;
    a.limits.verified(&data).map_err(named)?;
    let f = if a.import_bits {
        let (m, k) = (a.m.unwrap_or(0), a.k.unwrap_or(0));
        AnyFilter::Standard(BloomFilter::from_bytes(
            FilterParams::new(m, k, a.seed.unwrap_or(0)),
            a.n.unwrap_or(0),
            &data,
        )?)
    } else {
        compressed_bloom::decode_any(&data, &a.limits.limits_for(data.len() as u64))
            .map_err(|e| named(e.into()))?
    };
    let coding = CodingArg::resolve(a.coding, a.static_coded, false);
    kinds::check_coding(coding, f.kind(), matches!(f, AnyFilter::Squid(_)))?;
    let frame = f.encode_frame(coding, None);
    let frame = a.sign.apply(frame)?;
    write_all(&a.output, &frame)?;
    let (pm, pk) = kinds::shape(&f);
    note!(
        "encoded {} m={} k={}: {} -> {} bytes ({})",
        f.kind().name(),
        pm,
        pk,
        data.len(),
        frame.len(),
        frame_type(&frame)
    );
    Ok(())
}

#[derive(Args)]
pub(crate) struct DecodeArgs {
    /// Input frame (`-` for stdin).
    input: PathBuf,
    /// Output (`-` for stdout). Standard and partitioned arrays are decoded
    /// and written block by block after the frame's CRC is checked; a
    /// regular file is replaced only if every block decodes, while standard
    /// output, a pipe or a device keeps the blocks written before a failing
    /// one (the exit status says so).
    #[arg(short, long)]
    output: PathBuf,
    /// Write the bare packed array instead of a raw frame (the bits; for the
    /// counting kind the 4-bit counters, two per byte, low nibble first).
    #[arg(long, conflicts_with = "positions")]
    bits_only: bool,
    /// For a sparse filter: write its positions as text, one per line,
    /// instead of a frame.
    #[arg(long)]
    positions: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(crate) fn decode(a: &DecodeArgs) -> CliResult {
    crate::files::check_output(&a.output)?;
    let named = |e: Box<dyn std::error::Error>| kinds::input_error("INPUT", &a.input, e);
    let data = read_all(&a.input).map_err(named)?;
    a.limits.verified(&data).map_err(named)?;
    let limits = a.limits.limits_for(data.len() as u64);
    // The header's errors are decode_any's first ones.
    let header =
        compressed_bloom::format::header::parse(&data, &limits).map_err(|e| named(e.into()))?;
    if header.filter_type.is_delta() {
        return Err(compressed_bloom::DecodeError::WrongFrameType {
            found: header.filter_type,
            expected: "a full (raw or coded)",
        })
        .map_err(|e| named(e.into()));
    }
    if a.positions && header.kind != compressed_bloom::FilterKind::Sparse {
        return Err(format!(
            "--positions is for sparse filters; this is a {} filter",
            header.kind.name()
        )
        .into());
    }
    if stream::streams_bits(&header) {
        // Block by block, never the whole array in memory. The header, the
        // limits and the CRC are checked before the output is opened, and a
        // file is replaced only if every block decodes (write_with).
        let checked = stream::CheckedFrame::new(&data, &limits)?;
        let mut written = 0u64;
        let mut invalid = None;
        let wrote = write_with(&a.output, |w| {
            let streamed = if a.bits_only {
                checked.write_bits(w)
            } else {
                checked.write_raw(w)
            };
            match streamed {
                Ok(n) => written = n,
                Err(stream::StreamError::Io(e)) => return Err(e),
                Err(stream::StreamError::Decode(e)) => {
                    // Reported as the frame's error, below; failing the
                    // write discards a file's partial output.
                    invalid = Some(e);
                    return Err(std::io::Error::other("the frame is invalid"));
                }
                Err(e) => return Err(std::io::Error::other(e)),
            }
            Ok(())
        });
        if let Some(e) = invalid {
            return Err(e.into());
        }
        wrote?;
        let h = checked.header();
        note!(
            "decoded {} m={} k={}: {} -> {} bytes",
            h.kind.name(),
            h.params.m,
            h.params.k,
            data.len(),
            written
        );
        return Ok(());
    }
    // Standard and partitioned arrays were streamed above: what is left
    // are the kinds without a single bit array, Squid digests, BIP37
    // filters, and frames that are not full filters (decode_any's error).
    match compressed_bloom::decode_any(&data, &limits).map_err(|e| named(e.into()))? {
        AnyFilter::Sparse(s) => {
            if a.bits_only {
                return Err("a sparse filter has no bit array to write (m bits); \
                            --positions writes its positions, one per line"
                    .into());
            }
            if a.positions {
                let mut out = String::new();
                for pos in s.positions() {
                    out.push_str(&pos.to_string());
                    out.push('\n');
                }
                write_all(&a.output, out.as_bytes())?;
                note!(
                    "decoded sparse m={} k={}: {} positions",
                    s.params().m,
                    s.params().k,
                    s.count_ones()
                );
                return Ok(());
            }
            // A list of positions has no raw type: its frame is its only
            // form that inspect and query read.
            let out = compressed_bloom::kinds::sparse::encode_sparse(&s);
            write_all(&a.output, &out)?;
            note!(
                "decoded sparse m={} k={}: a sparse frame has no raw type; wrote its frame, {} bytes \
                 (--positions writes the positions as text)",
                s.params().m,
                s.params().k,
                out.len()
            );
            Ok(())
        }
        AnyFilter::Scalable(f) => {
            if a.bits_only {
                return Err(
                    "a scalable filter has no single bit array; decode writes its \
                            frame with every layer raw"
                        .into(),
                );
            }
            let out = compressed_bloom::kinds::scalable::encode_scalable_raw(&f);
            write_all(&a.output, &out)?;
            note!(
                "decoded scalable: {} layers, m={} in all: {} -> {} bytes",
                f.layers().len(),
                f.total_bits(),
                data.len(),
                out.len()
            );
            Ok(())
        }
        AnyFilter::Counting(c) => {
            // Written from the counters, never copied whole; the frame is
            // no longer needed.
            let frame_len = data.len();
            drop(data);
            let mut written = 0;
            write_with(&a.output, |w| {
                written = if a.bits_only {
                    // The bare counters: two per byte, low nibble first.
                    stream::write_counters(&c, w)?
                } else {
                    stream::write_counting_raw_frame(&c, w)?
                };
                Ok(())
            })?;
            note!(
                "decoded counting m={} k={}: {} -> {} bytes",
                c.params().m,
                c.params().k,
                frame_len,
                written
            );
            Ok(())
        }
        AnyFilter::Squid(d) => {
            let out = if a.bits_only {
                d.filter().to_bytes()
            } else {
                // Uncoded, Squid's header kept.
                compressed_bloom::kinds::squid::encode_squid_raw(&d)
            };
            write_all(&a.output, &out)?;
            note!(
                "decoded Squid digest m={} k=4: {} -> {} bytes",
                d.filter().m(),
                data.len(),
                out.len()
            );
            Ok(())
        }
        AnyFilter::Bip37(f) => {
            let out = if a.bits_only {
                f.filter().to_bytes()
            } else {
                // Uncoded, nFlags kept.
                compressed_bloom::kinds::bip37::encode_bip37_raw(&f)
            };
            write_all(&a.output, &out)?;
            note!(
                "decoded BIP37 filter m={} k={}: {} -> {} bytes",
                f.filter().m(),
                f.hash_funcs(),
                data.len(),
                out.len()
            );
            Ok(())
        }
        AnyFilter::Ribbon(_) => Err(crate::ribbon_cmd::no_decode(&a.input)),
        other => Err(format!("cannot decode a {} filter here", other.kind().name()).into()),
    }
}
