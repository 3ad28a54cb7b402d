//! Running the `cbloom` binary and reading what it printed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test, built by cargo for the integration tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_cbloom");

/// Runs `cbloom` with `args`, no standard input.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// A path as the `&str` an argument list takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes `lines` to `dir/name`, one per line, and returns the path.
pub fn keys(dir: &Path, name: &str, lines: impl IntoIterator<Item = String>) -> PathBuf {
    let p = dir.join(name);
    let text: String = lines.into_iter().map(|l| l + "\n").collect();
    std::fs::write(&p, text).unwrap();
    p
}
