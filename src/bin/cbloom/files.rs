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
        buf = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(buf)
}

/// Writes bytes to a file, or standard output for `-`.
pub(crate) fn write_all(path: &Path, bytes: &[u8]) -> CliResult {
    if is_std(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()?;
    } else {
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Splits input into keys: one per line, the terminator (`\n` or `\r\n`) not
/// part of the key. A final line without terminator is a key; the empty
/// string after a final terminator is not.
pub(crate) fn split_keys(data: &[u8]) -> Vec<&[u8]> {
    let mut keys: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if keys.last().is_some_and(|k| k.is_empty()) {
        keys.pop();
    }
    for k in &mut keys {
        if let Some(stripped) = k.strip_suffix(b"\r") {
            *k = stripped;
        }
    }
    keys
}

/// A progress bar on standard error that draws only on a terminal
/// (indicatif hides itself when stderr is piped).
pub(crate) fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}
