//! `cbloom` with its default options: what the writers produce, the
//! readers take; numbers are read as typed on every numeric flag; plans
//! fit the receiver's memory; failures are clean and say why.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_cbloom");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "cbloom {args:?}: {}", stderr(&o));
    o
}

fn keys(dir: &Path, name: &str, lines: impl IntoIterator<Item = String>) -> PathBuf {
    let p = dir.join(name);
    let text: String = lines.into_iter().map(|l| l + "\n").collect();
    std::fs::write(&p, text).unwrap();
    p
}

fn inspect_json(frame: &Path) -> serde_json::Value {
    let o = ok(&["inspect", s(frame), "--json"]);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_sparse_standard_filter_reads_back_with_default_limits() {
    // 100 keys in 10^9 bits: the frame is a few kB and decodes to 125 MB,
    // an expansion of about 42,000.
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..100).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--m",
        "1e9",
        "--k",
        "1",
        "-o",
        s(&f),
    ]);
    assert_eq!(inspect_json(&f)["m"], 1_000_000_000u64);
    let o = ok(&["query", s(&f), "key-7"]);
    assert!(stdout(&o).contains("key-7\tpresent"));
    ok(&["decode", s(&f), "-o", s(&dir.path().join("raw.cbf"))]);
    // The limits still apply when asked for, and name their flag.
    let o = run(&["inspect", s(&f), "--max-expansion", "4096"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("exceeds the limit 4096 (raise it with --max-expansion)"),
        "{}",
        stderr(&o)
    );
    let o = run(&["query", s(&f), "key-7", "--max-m", "1e8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("exceeds the limit 100000000 (raise it with --max-m)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn every_numeric_flag_reads_powers_of_ten() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..1000).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--fpr",
        "1e-2",
        "--max-k",
        "1e1",
        "--seed",
        "1e3",
        "--max-bits-per-key",
        "2e1",
        "--confidence",
        "9.9e-1",
        "--n",
        "2e3",
        "-o",
        s(&f),
    ]);
    let v = inspect_json(&f);
    assert_eq!(v["seed"], 1000);
    assert!(v["k"].as_u64().unwrap() <= 10);
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--m",
        "1e4",
        "--k",
        "3e0",
        "-o",
        s(&f),
    ]);
    ok(&[
        "inspect",
        s(&f),
        "--max-expansion",
        "1e4",
        "--max-m",
        "1e10",
    ]);
    ok(&[
        "plan",
        "--n",
        "1e4",
        "--bits-per-key",
        "1e1",
        "--k",
        "7e0",
        "--max-k",
        "6.4e1",
    ]);
    ok(&[
        "plan",
        "--n",
        "1e4",
        "--fpr",
        "2^-8",
        "--delta-fraction",
        "1e-2",
    ]);
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--type",
        "scalable",
        "--fpr",
        "1e-3",
        "--initial-capacity",
        "1e2",
        "-o",
        s(&f),
    ]);
}

#[test]
fn negative_numbers_are_refused_as_negative() {
    for args in [
        &["plan", "--n", "-5", "--fpr", "0.01"][..],
        &["plan", "--n", "100", "--bytes", "-1e3"],
        &["plan", "--n", "100", "--fpr", "0.01", "--max-k", "-3"],
        &[
            "plan",
            "--n",
            "100",
            "--fpr",
            "0.01",
            "--max-bits-per-key",
            "-3",
        ],
        &["inspect", "x.cbf", "--max-m", "-1"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains("must be positive"), "{args:?}: {e}");
        assert!(!e.contains("unexpected argument"), "{args:?}: {e}");
    }
}
