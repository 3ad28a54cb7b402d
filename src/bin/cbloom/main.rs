//! `cbloom`: build, plan, encode, decode, inspect and query compressed Bloom
//! filter frames. A thin shell over the `compressed_bloom` library.
#![forbid(unsafe_code)]

/// `println!` that returns write errors (a closed pipe, a full disk) to
/// the caller instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?;
    }};
}

/// `eprintln!` for status lines that ignores write errors: a status line
/// that cannot be written (stderr closed, or `2>/dev/full`) must not turn
/// a command that did its work into a panic with exit status 101.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod bip158_cmd;
mod bitcoin_cmd;
mod demo;
mod files;
mod filters;
mod kinds;
mod plan_cmd;
mod ribbon_cmd;
mod sign_cmd;
mod squid_cmd;

use clap::{Args, Parser, Subcommand};

use std::io::Write as _;
use std::process::ExitCode;

/// Errors reach the user as one line: "cbloom: error: ...".
pub(crate) type CliResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
#[command(name = "cbloom", version, about = "Compressed Bloom filters for the wire", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Choose m and k for a byte budget or a false-positive target, or evaluate a point.
    Plan(plan_cmd::PlanArgs),
    /// Build a filter frame from keys (one per line).
    Build(filters::BuildArgs),
    /// Re-encode a frame (or import a bare bit array) with --coding: `auto`
    /// takes the fastest-decoding coding whose frame stays within the
    /// planner's size bound; a coding the kind lacks is refused.
    Encode(filters::EncodeArgs),
    /// Decode a frame to the uncompressed (raw) type or a bare bit array.
    Decode(filters::DecodeArgs),
    /// Show a frame's header, fill, entropy bound and expected false-positive rate.
    Inspect(filters::InspectArgs),
    /// Ask a filter frame whether keys are present.
    Query(filters::QueryArgs),
    /// Write the XOR delta that turns OLD into NEW.
    Delta(filters::DeltaArgs),
    /// Apply a delta to a base filter, verifying both digests.
    Apply(filters::ApplyArgs),
    /// Plan, build, encode, decode and verify a filter from generated keys.
    Demo(demo::DemoArgs),
    /// Import a Squid cache digest (`--squid FILE -o OUT`), a BIP158 block
    /// filter (`--bip158 FILE --block-hash HEX [--hex] -o OUT`) or a BIP37
    /// `filterload` payload (`--bip37 FILE [--hex] -o OUT`) as a frame.
    Import(squid_cmd::ImportArgs),
    /// Export a frame holding a Squid digest as Squid sends it (`--squid IN
    /// -o FILE`), a BIP158 filter as BIP158 serialises it (`--bip158 IN -o
    /// FILE [--hex]`), or a BIP37 filter as its `filterload` payload
    /// (`--bip37 IN -o FILE [--hex]`).
    Export(squid_cmd::ExportArgs),
    /// Make an Ed25519 key pair for signed frames: OUTPUT (the secret, mode
    /// 0600) and OUTPUT.pub (the public key for --verify).
    Keygen(sign_cmd::KeygenArgs),
}

/// Limits applied when reading frames.
///
/// The defaults take every frame `cbloom` writes with its own defaults: m
/// up to the format's 2^56 bits, and a frame may decode to 4096 times its
/// own size, or to 1 GiB whatever its size. That keeps what a small
/// hostile frame can make `cbloom` allocate to 1 GiB, while a sparse
/// filter built with `--m 1e9 --k 1` (125 MB from a frame of a few
/// hundred bytes) still reads back without flags. The floor is for memory
/// only: a counting frame may still take 128 value decisions per frame
/// byte, as under the library's defaults (with `--max-expansion R`, R/32).
#[derive(Args, Clone)]
pub(crate) struct LimitArgs {
    /// Largest filter (bits) accepted from an input frame (default: the
    /// format's largest, 2^56; `1e10` is accepted).
    #[arg(long, value_name = "BITS", value_parser = crate::parse_count, allow_negative_numbers = true)]
    max_m: Option<u64>,
    /// Largest ratio of a full frame's decoded size to its own size, 0 for
    /// no limit (default: 4096, but any frame may decode to 1 GiB).
    #[arg(long, value_name = "RATIO", value_parser = crate::parse_count, allow_negative_numbers = true)]
    max_expansion: Option<u64>,
    /// Take only frames signed by this public key (a `.pub` file of
    /// `cbloom keygen`; repeat for several keys).
    #[arg(long, value_name = "PUBKEY")]
    verify: Vec<std::path::PathBuf>,
}

/// Bytes any frame may decode to under the default expansion limit.
pub(crate) const DEFAULT_DECODED_FLOOR: u64 = 1 << 30;

impl LimitArgs {
    /// The limits for a frame of `frame_len` bytes.
    /// With `--verify`, checks that `frame` is signed by one of its keys
    /// (after the frame's cheap checks, before anything is decoded) and
    /// returns the signer's id; without it, `None`.
    pub(crate) fn verified(&self, frame: &[u8]) -> CliResult<Option<[u8; 8]>> {
        if self.verify.is_empty() {
            return Ok(None);
        }
        let keys = sign_cmd::verifying_keys(&self.verify)?;
        let limits = self.limits_for(frame.len() as u64);
        let h = compressed_bloom::format::verify_frame(frame, &keys, &limits)?;
        Ok(h.signer)
    }

    pub(crate) fn limits_for(&self, frame_len: u64) -> compressed_bloom::DecodeLimits {
        let defaults = compressed_bloom::DecodeLimits::default();
        compressed_bloom::DecodeLimits {
            max_m: self.max_m.unwrap_or(compressed_bloom::MAX_M),
            max_frame_len: u64::MAX,
            max_expansion: match self.max_expansion {
                Some(0) => None,
                Some(r) => Some(r),
                None => Some(
                    compressed_bloom::DecodeLimits::DEFAULT_MAX_EXPANSION
                        .max(DEFAULT_DECODED_FLOOR.div_ceil(frame_len.max(1))),
                ),
            },
            // The floor is for memory: the work a counting frame may ask
            // for stays the library's default per frame byte (128), or
            // follows an expansion ratio given explicitly.
            max_decisions_per_byte: self.max_expansion.is_none().then_some(
                compressed_bloom::DecodeLimits::DEFAULT_MAX_EXPANSION
                    / compressed_bloom::kinds::counting::DECISION_WEIGHT,
            ),
            // The CLI's floor is in the ratio above (and --max-expansion
            // holds every frame to the ratio given).
            expansion_floor: 0,
            ..defaults
        }
    }
}

/// The flag that raises the decoding limit `e` hit, if it is one.
fn limit_flag(e: &compressed_bloom::DecodeError) -> Option<&'static str> {
    match e {
        compressed_bloom::DecodeError::LimitExceeded { what, .. } if what.starts_with("m ") => {
            Some("--max-m")
        }
        // An explicit --max-expansion R allows R/32 counting decisions per
        // frame byte.
        compressed_bloom::DecodeError::LimitExceeded { what, .. }
            if what.starts_with("expansion") || what.starts_with("counting value decisions") =>
        {
            Some("--max-expansion")
        }
        _ => None,
    }
}

/// A number as people type it: `1000`, `1e6`, `2.5e3`, or a power such as
/// `2^-8`. NaN is refused; the callers check ranges.
pub(crate) fn parse_real(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let num = |x: &str| -> Result<f64, String> {
        x.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{s}` is not a number (`1000`, `1e6` and `2^-8` are)"))
    };
    let x = match t.split_once('^') {
        Some((base, exp)) => num(base)?.powf(num(exp)?),
        None => num(t)?,
    };
    if x.is_nan() {
        return Err(format!("`{s}` is not a number"));
    }
    Ok(x)
}

/// A count as people type it: `1000`, `1e6`, `2.5e3`, `2^20` (whole
/// numbers only, 0 or more).
pub(crate) fn parse_count(s: &str) -> Result<u64, String> {
    if let Ok(v) = s.trim().parse::<u64>() {
        return Ok(v);
    }
    let x = parse_real(s)?;
    if x < 0.0 {
        return Err(format!("`{s}` is negative: the value must be positive"));
    }
    // 2^64, the first whole number past u64::MAX (x is not NaN; an
    // infinity is too large).
    if x >= 18_446_744_073_709_551_616.0 {
        return Err(format!("`{s}` is too large (at most {})", u64::MAX));
    }
    if x.fract() != 0.0 {
        return Err(format!("`{s}` is not a whole number"));
    }
    Ok(x as u64)
}

/// A whole number that fits 32 bits (k, caps on k), typed as for
/// [`parse_count`].
pub(crate) fn parse_small_count(s: &str) -> Result<u32, String> {
    let v = parse_count(s)?;
    u32::try_from(v).map_err(|_| format!("`{s}` is too large (at most {})", u32::MAX))
}

/// A positive real number (`32`, `1e3`, `2^5`): ratios and caps.
pub(crate) fn parse_positive(s: &str) -> Result<f64, String> {
    let x = parse_real(s)?;
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(format!("`{s}` must be positive"))
    }
}

/// A probability in (0, 1), given as people type it (`1e-6`, `0.01`,
/// `2^-8`).
pub(crate) fn parse_probability(s: &str) -> Result<f64, String> {
    let x = parse_real(s)?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else if x <= 0.0 {
        Err(format!(
            "`{s}` must be positive: a probability strictly between 0 and 1"
        ))
    } else {
        Err(format!("{s} is not a probability strictly between 0 and 1"))
    }
}

/// `-` means standard input or output.
pub(crate) fn is_std(p: &std::path::Path) -> bool {
    p.as_os_str() == "-"
}

/// Exit status when the reader of standard output went away (the status
/// of a process killed by SIGPIPE, 128 + 13), as `head` expects.
const EXIT_BROKEN_PIPE: u8 = 141;

/// `query` found at least one key absent (exit status 1, like grep).
#[derive(Debug)]
pub(crate) struct SomeAbsent;

impl std::fmt::Display for SomeAbsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("some keys are absent")
    }
}

impl std::error::Error for SomeAbsent {}

/// A usage error found after parsing: exit status 2 and a pointer to
/// `--help`, like clap's own.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (see --help)", self.0)
    }
}

impl std::error::Error for UsageError {}

/// An error of one input, said with the input's role on the command line
/// (`NEW`, `DELTA`) and its path; the library's error stays its source,
/// for the hint [`main`] adds to a decoding limit.
#[derive(Debug)]
pub(crate) struct InputError {
    pub(crate) message: String,
    pub(crate) source: Box<dyn std::error::Error>,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

/// Refuses two inputs that are both standard input, before either is
/// read (the first would take all of it).
pub(crate) fn one_stdin(a: (&str, &std::path::Path), b: (&str, &std::path::Path)) -> CliResult {
    if is_std(a.1) && is_std(b.1) {
        return Err(format!(
            "{} and {} cannot both be standard input (give one of them as a file)",
            a.0, b.0
        )
        .into());
    }
    Ok(())
}

/// Help and version go to stdout in full; a usage error is its first
/// paragraph (one or two lines: what is wrong), clap's tips (a similar
/// flag, `--` before a value) and a pointer to `--help`, with status 2.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // Help that cannot be printed (a closed pipe) has nowhere to go.
        let _ = e.print();
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    let text = e.render().to_string();
    let what: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let mut what = what.join(" ");
    // "tip: a similar argument exists: '--json'" is the fix for a typo.
    for tip in text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tip:"))
    {
        if !what.contains(tip) {
            what.push_str("; ");
            what.push_str(tip);
        }
    }
    let what = what.strip_prefix("error: ").unwrap_or(&what);
    let _ = writeln!(std::io::stderr(), "cbloom: error: {what} (see --help)");
    ExitCode::from(2)
}

/// Exit statuses: 0 success; 1 `query` found a key absent; 2 any error
/// (one line on standard error); 141 standard output was closed (quietly).
fn main() -> ExitCode {
    files::install_signal_handlers();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let result = match cli.command {
        Command::Plan(a) => plan_cmd::run(&a),
        Command::Build(a) => filters::build(&a),
        Command::Encode(a) => filters::encode(&a),
        Command::Decode(a) => filters::decode(&a),
        Command::Inspect(a) => filters::inspect(&a),
        Command::Query(a) => filters::query(&a),
        Command::Delta(a) => filters::delta(&a),
        Command::Apply(a) => filters::apply(&a),
        Command::Demo(a) => demo::run(&a),
        Command::Import(a) => squid_cmd::import(&a),
        Command::Export(a) => squid_cmd::export(&a),
        Command::Keygen(a) => sign_cmd::keygen(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<SomeAbsent>() => ExitCode::from(1),
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::from(EXIT_BROKEN_PIPE)
        }
        Err(e) => {
            // The planner names its arguments; the user typed flags.
            let e = match e.downcast::<compressed_bloom::plan::PlanError>() {
                Ok(p) => plan_cmd::plan_error(*p),
                Err(e) => e,
            };
            let hint = e
                .downcast_ref::<compressed_bloom::DecodeError>()
                .or_else(|| {
                    e.downcast_ref::<InputError>()
                        .and_then(|i| i.source.downcast_ref::<compressed_bloom::DecodeError>())
                })
                .and_then(limit_flag)
                .map(|flag| format!(" (raise it with {flag})"))
                .unwrap_or_default();
            // stderr itself may be gone; nothing more to do then.
            let _ = writeln!(std::io::stderr(), "cbloom: error: {e}{hint}");
            ExitCode::from(2)
        }
    }
}
