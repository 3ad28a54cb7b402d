//! Reading and writing files (`-` for stdin/stdout) and progress bars.

use crate::{is_std, CliResult};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{Read, Write};
use std::path::Path;

/// Reads a whole file, or standard input for `-`.
pub(crate) fn read_all(path: &Path) -> CliResult<Vec<u8>> {
    let mut buf = Vec::new();
    if is_std(path) {
        std::io::stdin().lock().read_to_end(&mut buf)?;
    } else {
        #[cfg(unix)]
        if let Some(buf) = read_in_parallel(path) {
            return Ok(buf);
        }
        buf = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if buf.is_empty() {
        return Err(if is_std(path) {
            "standard input is empty".to_string()
        } else {
            format!("{}: the file is empty", path.display())
        }
        .into());
    }
    Ok(buf)
}

/// Files from this size are read in pieces, one per core.
#[cfg(unix)]
const PARALLEL_READ_MIN: u64 = 4 << 20;

/// Reads a large regular file in one piece per core, each thread with its
/// own positioned reads into its part of the buffer, so the copies and the
/// buffer's page faults are shared out. `cbloom decode --bits-only` of the
/// 9.9 MB type-4 frame of the 17.5 MB filter (docs/BENCHMARKS.md) took
/// about 0.5 ms less with it than with `std::fs::read`, and 1.5 ms less
/// again once the buffer came zeroed from the allocator (22.2–23.2 ms,
/// against 20.9–21.4 for `zstd -d`). None for a small file, anything else
/// than a regular file, or a file whose length changed while it was read:
/// the caller then reads it the ordinary way (which also reports the
/// errors).
#[cfg(unix)]
fn read_in_parallel(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !meta.is_file() || meta.len() < PARALLEL_READ_MIN || parts < 2 {
        return None;
    }
    let len = usize::try_from(meta.len()).ok()?;
    // A fallible reservation first, released; then the buffer zeroed by the
    // allocator (calloc's zero pages, first touched by the reading threads)
    // instead of a memset on this thread, which took 3.8 ms of the 4.7.
    Vec::<u8>::new().try_reserve_exact(len).ok()?;
    let mut buf = vec![0u8; len];
    let chunk = len.div_ceil(parts);
    let all_read = std::thread::scope(|s| {
        let handles: Vec<_> = buf
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, piece)| {
                let file = &file;
                let at = (i as u64).saturating_mul(chunk as u64);
                s.spawn(move || file.read_exact_at(piece, at).is_ok())
            })
            .collect();
        handles.into_iter().all(|h| h.join().unwrap_or(false))
    });
    // A file that grew or shrank while it was read is read again whole.
    let mut probe = [0u8; 1];
    let at_end = file.read_at(&mut probe, meta.len()).is_ok_and(|n| n == 0);
    (all_read && at_end).then_some(buf)
}

/// Writes bytes to a file, or standard output for `-`.
///
/// A regular file (or a new one) is written atomically: to a temporary file
/// in the same directory, synced, then renamed over the target, so a write
/// cut short (a full disk, a file-size limit, a crash) leaves the old file
/// intact. Anything else that exists (a device such as `/dev/null`, a FIFO,
/// a socket, or a link to one) is written in place: renaming over it would
/// replace it with a regular file. `/dev/stdout` is standard output, and a
/// link to a regular file is written through (the file it names is
/// replaced; the link stays).
pub(crate) fn write_all(path: &Path, bytes: &[u8]) -> CliResult {
    write_with(path, |w| w.write_all(bytes))
}

/// [`write_all`] for output that `write` produces piece by piece (through
/// a buffer), so it never has to be whole in memory.
pub(crate) fn write_with(
    path: &Path,
    mut write: impl FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> CliResult {
    write_with_inner(path, &mut write).map_err(|e| too_large(e, path))
}

/// A write refused by the file-size limit (`ulimit -f`, SIGXFSZ ignored
/// by [`install_signal_handlers`]) says so.
fn too_large(e: Box<dyn std::error::Error>, path: &Path) -> Box<dyn std::error::Error> {
    #[cfg(unix)]
    {
        const EFBIG: i32 = 27;
        let io = e
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::raw_os_error);
        if io == Some(EFBIG) || e.to_string().contains("os error 27") {
            return format!(
                "{}: the file would exceed the file-size limit (ulimit -f); nothing written",
                path.display()
            )
            .into();
        }
    }
    let _ = path;
    e
}

/// The temporary output file being written, removed if a signal ends the
/// process before it is renamed into place.
static PENDING: std::sync::Mutex<Option<std::path::PathBuf>> = std::sync::Mutex::new(None);

fn set_pending(p: Option<std::path::PathBuf>) {
    if let Ok(mut g) = PENDING.lock() {
        *g = p;
    }
}

/// On SIGINT, SIGTERM and SIGHUP: remove the temporary output file, then
/// exit with 128 + the signal's number, as the signal would have. SIGXFSZ
/// is caught and ignored, so that a write past `ulimit -f` fails with
/// EFBIG (reported as an error) instead of killing the process silently.
pub(crate) fn install_signal_handlers() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
        let _ = signal_hook::flag::register(
            SIGXFSZ,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            std::thread::spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    if let Ok(g) = PENDING.lock() {
                        if let Some(p) = g.as_ref() {
                            let _ = std::fs::remove_file(p);
                        }
                    }
                    std::process::exit(128 + sig);
                }
            });
        }
    }
}

/// Refuses an output that cannot be written before any work is done (keys
/// hashed, frames decoded): standard output on a terminal, a directory, a
/// directory that does not exist or cannot be written. The file itself is
/// neither created nor changed; a probe file is made beside it and removed
/// (where none can be, an existing file that can be opened for writing is
/// written in place, as [`write_all`] does).
pub(crate) fn check_output(path: &Path) -> CliResult {
    if is_std(path) || path == Path::new("/dev/stdout") {
        return refuse_terminal();
    }
    let fail = |why: String| -> CliResult { Err(format!("-o {}: {why}", path.display()).into()) };
    let meta = std::fs::metadata(path);
    if meta.as_ref().is_ok_and(std::fs::Metadata::is_dir) {
        return fail("is a directory; give a file name".into());
    }
    let writable_in_place = || std::fs::OpenOptions::new().write(true).open(path);
    if meta.as_ref().is_ok_and(|m| !m.is_file()) {
        // A device, FIFO or socket is written in place, and not opened
        // here: opening and closing a FIFO would end its reader's stream.
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return fail(format!(
            "the directory {} does not exist (or is not a directory)",
            dir.display()
        ));
    }
    let probe = dir.join(format!(".cbloom-{}.probe", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(f) => {
            drop(f);
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if meta.is_ok() => writable_in_place().map(drop).or_else(|_| {
            fail(format!(
                "cannot write it or create a file in {}: {e}",
                dir.display()
            ))
        }),
        Err(e) => fail(format!("cannot create a file in {}: {e}", dir.display())),
    }
}

/// Binary output refused on a terminal, as zstd does.
fn refuse_terminal() -> CliResult {
    use std::io::IsTerminal as _;
    if std::io::stdout().is_terminal() {
        return Err(
            "standard output is a terminal: binary output is not written to it \
                    (redirect it to a file or a pipe, or give -o FILE)"
                .into(),
        );
    }
    Ok(())
}

fn write_with_inner(
    path: &Path,
    write: &mut impl FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> CliResult {
    // `/dev/stdout` is standard output, whatever it is open on: resolved,
    // it can be a regular file (`> out.bin`), which the atomic path below
    // would replace by name (and append-mode output would lose what it
    // held).
    if is_std(path) || path == Path::new("/dev/stdout") {
        refuse_terminal()?;
        buffered(std::io::stdout().lock(), write)?;
        return Ok(());
    }
    let named = |e: std::io::Error| format!("{}: {e}", path.display());
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(named)?;
        buffered(file, write).map_err(named)?;
        return Ok(());
    }
    // A symbolic link to a regular file is written through: the file it
    // names is replaced (atomically, beside it), and the link stays.
    let resolved;
    let path = if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        match std::fs::canonicalize(path) {
            Ok(p) if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) => {
                resolved = p;
                resolved.as_path()
            }
            _ => path,
        }
    } else {
        path
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".cbloom-");
    // A new file gets the usual 0666 less the umask (tempfile's default of
    // 0600 would surprise whoever reads the output); a replaced file keeps
    // its permissions.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path).map_or(0o666, |m| m.permissions().mode());
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut tmp = match builder.tempfile_in(dir) {
        Ok(t) => t,
        Err(e) => {
            // No temporary file beside it (a read-only directory): a file
            // that exists and can be written is written in place, as `>`
            // would; the old content is lost if the write fails.
            let Ok(file) = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)
            else {
                // The temporary file's own name means nothing to the user:
                // the cause alone (tempfile puts it in the error's source).
                let cause = e.get_ref().and_then(|inner| inner.source()).map_or_else(
                    || std::io::Error::from(e.kind()).to_string(),
                    ToString::to_string,
                );
                return Err(format!("{}: {cause}", path.display()).into());
            };
            note!(
                "note: cannot create a temporary file in {} ({e}): writing {} in place",
                dir.display(),
                path.display()
            );
            buffered(&file, write).map_err(named)?;
            file.sync_all().map_err(named)?;
            return Ok(());
        }
    };
    set_pending(Some(tmp.path().to_path_buf()));
    let written = buffered(tmp.as_file_mut(), write)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(named);
    let done = written.and_then(|()| tmp.persist(path).map(drop).map_err(|e| named(e.error)));
    set_pending(None);
    done?;
    Ok(())
}

/// Runs `write` into `inner` through a 64 KiB buffer, flushed at the end.
fn buffered(
    inner: impl Write,
    write: &mut impl FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, inner);
    write(&mut out)?;
    out.flush()
}

/// Calls `f` on each key of a file (`-` for standard input), one per line,
/// streaming: memory is one line, whatever the file's size. The terminator
/// (`\n` or `\r\n`) is not part of the key; a final line without one is a
/// key; an empty line is the empty key unless `skip_blank`. Returns the
/// number of keys passed to `f`.
pub(crate) fn for_each_key(
    path: &Path,
    skip_blank: bool,
    mut f: impl FnMut(&[u8]) -> CliResult,
) -> CliResult<u64> {
    use std::io::BufRead;
    let reader: Box<dyn BufRead> = if is_std(path) {
        Box::new(std::io::BufReader::with_capacity(
            1 << 16,
            std::io::stdin().lock(),
        ))
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Box::new(std::io::BufReader::with_capacity(1 << 16, file))
    };
    let mut reader = reader;
    let mut line = Vec::new();
    let mut count = 0u64;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if read == 0 {
            return Ok(count);
        }
        let mut key = line.strip_suffix(b"\n").unwrap_or(&line);
        key = key.strip_suffix(b"\r").unwrap_or(key);
        if skip_blank && key.is_empty() {
            continue;
        }
        f(key)?;
        count += 1;
    }
}

/// A progress counter on standard error for a stream of unknown length;
/// it draws only on a terminal (indicatif hides itself when stderr is
/// piped).
pub(crate) fn progress(what: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} {human_pos} keys ({keys_per_sec}, {elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner())
            .with_key(
                "keys_per_sec",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    // Whole keys per second: "12085098 keys/s", not "12,085,097.7899/s".
                    let _ = write!(w, "{:.0} keys/s", state.per_sec());
                },
            ),
    );
    bar.set_message(what.to_string());
    bar
}

/// The bytes that `text` spells in hex digits (either case; whitespace
/// between them is skipped).
pub(crate) fn unhex(text: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    let digit = |d: u8| char::from(d).to_digit(16);
    digits
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| match (digit(pair[0]), digit(pair[1])) {
            (Some(hi), Some(lo)) => Ok((hi * 16 + lo) as u8),
            _ => Err(format!("not hex at digit {}", 2 * i + 1)),
        })
        .collect()
}

/// A file's bytes, or with `hex` the bytes its hex text spells (`--hex`).
pub(crate) fn read_input(path: &Path, hex: bool) -> CliResult<Vec<u8>> {
    let data = read_all(path)?;
    if !hex {
        return Ok(data);
    }
    let text = std::str::from_utf8(&data)
        .map_err(|_| format!("{}: --hex, but the file is not text", path.display()))?;
    Ok(unhex(text).map_err(|e| format!("{}: --hex: {e}", path.display()))?)
}
