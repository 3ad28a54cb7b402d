//! What `cbloom` says when something is wrong, and how it prints figures
//! at the edges: each error names the input or flag at fault and what to
//! do; nothing is computed before an output that cannot be written is
//! refused; figures stay readable at n = 0, at extreme rates and for every
//! kind; JSON output keeps every key's bytes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::process::{keys, run, s, stderr, stdout, BIN};

/// Runs `cbloom` with `input` on its standard input.
fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command may exit before reading: a closed pipe is not an error here.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// Fails with `status` 2 and returns the one-line message.
fn fails(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let e = stderr(o);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    e
}

fn build(dir: &Path, name: &str, keys_file: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args = vec!["build", "--keys", s(keys_file)];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", s(&out)]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn words(dir: &Path, name: &str, n: u64) -> PathBuf {
    keys(dir, name, (0..n).map(|i| format!("word{i}")))
}

/// A text file given where a frame belongs is named by its role and path,
/// with the command that makes a frame from keys.
#[test]
fn a_file_that_is_not_a_frame_is_named_by_its_role() {
    let dir = tempfile::tempdir().unwrap();
    let w = words(dir.path(), "words.txt", 2000);
    let v1 = build(dir.path(), "v1.cbf", &w, &["--fpr", "0.01"]);
    let d = dir.path().join("d.cbf");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["delta", s(&v1), s(&w), "-o", s(&d)], "NEW"),
        (vec!["delta", s(&w), s(&v1), "-o", s(&d)], "OLD"),
        (vec!["apply", s(&w), s(&v1), "-o", s(&d)], "BASE"),
        (vec!["apply", s(&v1), s(&w), "-o", s(&d)], "DELTA"),
        (vec!["query", s(&w), "apple"], "FILTER"),
    ];
    for (args, role) in cases {
        let e = fails(&run(&args));
        assert!(
            e.contains(&format!(
                "{role} ({}) is not a compressed-bloom frame",
                s(&w)
            )),
            "{args:?}: {e}"
        );
        assert!(e.contains("cbloom build --keys"), "{args:?}: {e}");
        assert!(!d.exists());
    }
}

/// `query`, `decode` and `encode` of a delta frame say that a delta is
/// applied to its base, and how.
#[test]
fn a_delta_where_a_filter_belongs_points_to_apply() {
    let dir = tempfile::tempdir().unwrap();
    let w1 = words(dir.path(), "w1.txt", 2000);
    let w2 = words(dir.path(), "w2.txt", 3000);
    let shape = ["--m", "20000", "--k", "3", "--type", "standard"];
    let v1 = build(dir.path(), "v1.cbf", &w1, &shape);
    let v2 = build(dir.path(), "v2.cbf", &w2, &shape);
    let d = dir.path().join("d.cbf");
    let o = run(&["delta", s(&v1), s(&v2), "-o", s(&d)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let x = dir.path().join("x.cbf");
    for args in [
        vec!["query", s(&d), "apple"],
        vec!["decode", s(&d), "-o", s(&x)],
        vec!["encode", s(&d), "-o", s(&x)],
    ] {
        let e = fails(&run(&args));
        assert!(
            e.contains(&format!("({}) is a delta frame", s(&d)))
                && e.contains(&format!("cbloom apply BASE {} -o", s(&d))),
            "{args:?}: {e}"
        );
    }
}

/// Two inputs on one standard input are refused before anything is read,
/// with the same message shape for `apply`, `delta` and `query`.
#[test]
fn two_inputs_on_standard_input_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let w = words(dir.path(), "w.txt", 100);
    let v = build(dir.path(), "v.cbf", &w, &["--fpr", "0.01"]);
    let frame = std::fs::read(&v).unwrap();
    let x = dir.path().join("x.cbf");
    for (args, what) in [
        (vec!["apply", "-", "-", "-o", s(&x)], "BASE and DELTA"),
        (vec!["delta", "-", "-", "-o", s(&x)], "OLD and NEW"),
        (vec!["query", "-", "--keys", "-"], "FILTER and --keys"),
    ] {
        let e = fails(&run_with_stdin(&args, &frame));
        assert_eq!(
            e,
            format!(
                "cbloom: error: {what} cannot both be standard input (give one of them as a file)\n"
            ),
            "{args:?}"
        );
    }
}

/// A delta of another kind than the base is refused for its kind, naming
/// both, not as a digest mismatch.
#[test]
fn apply_names_a_kind_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let w1 = words(dir.path(), "w1.txt", 2000);
    let w2 = words(dir.path(), "w2.txt", 3000);
    let s1 = build(
        dir.path(),
        "s1.cbf",
        &w1,
        &["--m", "20000", "--k", "3", "--type", "standard"],
    );
    let sparse = ["--m", "20000", "--k", "3", "--type", "sparse"];
    let p1 = build(dir.path(), "p1.cbf", &w1, &sparse);
    let p2 = build(dir.path(), "p2.cbf", &w2, &sparse);
    let d = dir.path().join("d.cbf");
    let o = run(&["delta", s(&p1), s(&p2), "-o", s(&d)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let x = dir.path().join("x.cbf");
    let e = fails(&run(&["apply", s(&s1), s(&d), "-o", s(&x)]));
    assert_eq!(
        e,
        format!(
            "cbloom: error: BASE ({}) is a standard filter and DELTA ({}) a delta of a sparse filter: \
             a delta applies to the kind it was made from\n",
            s(&s1),
            s(&d)
        )
    );
    assert!(!x.exists());
}

/// An output that cannot be written is refused before the input is read
/// (here a key file that does not exist, so the order of the two checks
/// shows), without a temporary file's name.
#[test]
fn an_unwritable_output_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let out = dir.path().join("no-such-dir").join("x.cbf");
    let cases: [Vec<&str>; 6] = [
        vec!["build", "--keys", s(&missing), "--fpr", "0.01"],
        vec![
            "build",
            "--keys",
            s(&missing),
            "--fpr",
            "0.01",
            "--type",
            "scalable",
        ],
        vec![
            "build",
            "--keys",
            s(&missing),
            "--fpr",
            "0.01",
            "--type",
            "ribbon",
        ],
        vec!["encode", s(&missing)],
        vec!["delta", s(&missing), s(&missing)],
        vec!["apply", s(&missing), s(&missing)],
    ];
    for mut args in cases {
        args.extend_from_slice(&["-o", s(&out)]);
        let e = fails(&run(&args));
        assert!(
            e.starts_with(&format!("cbloom: error: -o {}: ", s(&out))),
            "{args:?}: {e}"
        );
        assert!(!e.contains(".cbloom-"), "{args:?}: {e}");
    }
    // A directory is no output either.
    let e = fails(&run(&[
        "build",
        "--keys",
        s(&missing),
        "--fpr",
        "0.01",
        "-o",
        s(dir.path()),
    ]));
    assert!(e.contains("is a directory"), "{e}");
}

/// `-o -` on a terminal is refused before the keys are read. The terminal
/// is a pseudo-terminal from util-linux's `script`.
#[test]
fn binary_output_to_a_terminal_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let cmd = format!("'{BIN}' build --keys '{}' --fpr 0.01 -o -", s(&missing));
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("this test needs `script` (util-linux, Debian package bsdutils)");
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("standard output is a terminal"), "{text}");
    assert!(!text.contains("missing.txt"), "{text}");
}

/// A mistyped flag keeps clap's suggestion.
#[test]
fn a_mistyped_flag_keeps_the_suggestion() {
    let e = fails(&run(&["query", "x.cbf", "--jso"]));
    assert_eq!(
        e,
        "cbloom: error: unexpected argument '--jso' found; tip: a similar argument exists: '--json' \
         (see --help)\n"
    );
}

/// The duplicates note is a test of the zero count against what distinct
/// keys give, not a ratio of a saturated estimate: a filter at f = 0.9999
/// has an expected one or two zero bits, so the fill says nothing about
/// duplicates. Seeds 4, 20 and 35 (of the first 41) leave 3 zeros or more
/// of m = 11329 (an estimate m·ln(m/3) = 93,311 keys or fewer of 104,334
/// read, under the 0.9 threshold of a ratio test).
#[test]
fn no_duplicates_note_for_distinct_keys_at_a_saturated_fill() {
    let dir = tempfile::tempdir().unwrap();
    let w = words(dir.path(), "words.txt", 104_334);
    let out = dir.path().join("f.cbf");
    for seed in ["4", "20", "35"] {
        let o = run(&[
            "build",
            "--keys",
            s(&w),
            "--fpr",
            "0.9999",
            "--seed",
            seed,
            "-o",
            s(&out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            !stderr(&o).contains("duplicate"),
            "seed {seed}: {}",
            stderr(&o)
        );
    }
    // Real duplicates are still reported: every key twice, f = 0.01 (the
    // standard kind, whose fill the note reads). Zeros are m·e^{-kn/m}
    // for n distinct keys; with half as many distinct, far more, many
    // standard deviations (sqrt of about m·p) beyond the margin.
    let twice = keys(
        dir.path(),
        "twice.txt",
        (0..20_000u64).map(|i| format!("word{}", i / 2)),
    );
    let o = run(&[
        "build",
        "--keys",
        s(&twice),
        "--fpr",
        "0.01",
        "--type",
        "standard",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("duplicate lines count toward n"),
        "{}",
        stderr(&o)
    );
}

/// `delta --type plain` of two sparse filters (what default builds make)
/// says what to do; a parameter mismatch between two sparse filters
/// suggests a build of NEW of the same kind.
#[test]
fn delta_of_default_builds_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let w1 = words(dir.path(), "w1.txt", 20_000);
    let w2 = words(dir.path(), "w2.txt", 21_000);
    let old = build(dir.path(), "old.cbf", &w1, &["--fpr", "0.001"]);
    let new = build(dir.path(), "new.cbf", &w2, &["--fpr", "0.001"]);
    let x = dir.path().join("x.cbf");
    let e = fails(&run(&["delta", s(&old), s(&new), "-o", s(&x)]));
    // The default plan for these keys is sparse.
    assert!(e.contains("--type sparse"), "{e}");
    // Rebuilt as suggested, the delta is written.
    let at = e.find("(build NEW with ").unwrap() + "(build NEW with ".len();
    let flags: Vec<&str> = e[at..]
        .trim_end()
        .trim_end_matches(')')
        .split(' ')
        .collect();
    let mut args = vec!["build", "--keys", s(&w2)];
    args.extend_from_slice(&flags);
    let new = dir.path().join("new2.cbf");
    args.extend_from_slice(&["-o", s(&new)]);
    let o = run(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let o = run(&["delta", s(&old), s(&new), "-o", s(&x)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = fails(&run(&[
        "delta",
        "--type",
        "plain",
        s(&old),
        s(&new),
        "-o",
        s(&x),
    ]));
    assert_eq!(
        e,
        "cbloom: error: --type plain writes a type-2 delta for receivers of format version 1, \
         which hold standard filters; a sparse filter's delta has one type: \
         leave out --type (or build both with --type standard)\n"
    );
}

/// A rate far below 10^-4 is printed in scientific notation, not as 300
/// decimals.
#[test]
fn tiny_rates_are_printed_in_scientific_notation() {
    let o = run(&["plan", "--n", "1000", "--fpr", "1e-300"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert_eq!(first, "n = 1000 keys, target false-positive rate 1e-300");
    let o = run(&["plan", "--n", "1000", "--fpr", "0.01"]);
    assert!(
        stdout(&o).starts_with("n = 1000 keys, target false-positive rate 0.01\n"),
        "{}",
        stdout(&o)
    );
}

/// No keys: no NaN or infinite percentages in `plan`, `inspect` of the
/// filter or of a delta between two empty filters.
#[test]
fn no_keys_prints_no_nan_or_infinite_percentages() {
    let dir = tempfile::tempdir().unwrap();
    let empty = keys(dir.path(), "empty.txt", []);
    let e = build(dir.path(), "e.cbf", &empty, &["--fpr", "0.01"]);
    let d = dir.path().join("d.cbf");
    let o = run(&["delta", s(&e), s(&e), "-o", s(&d)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [
        vec!["plan", "--n", "0", "--bytes", "100"],
        vec!["plan", "--n", "0", "--fpr", "0.01"],
        vec!["inspect", s(&e)],
        vec!["inspect", s(&d)],
    ] {
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o).to_lowercase();
        assert!(
            !out.contains("nan") && !out.contains("inf%"),
            "{args:?}: {out}"
        );
    }
    let out = stdout(&run(&["inspect", s(&e)]));
    assert!(
        out.contains("entropy bound    0.0 bytes (payload is 1 byte over it)"),
        "{out}"
    );
}

/// `demo --queries 0` measures nothing and says so.
#[test]
fn demo_without_queries_measures_nothing() {
    let o = run(&["demo", "--n", "1000", "--queries", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("query sd"), "{out}");
    assert!(out.contains("not measured (--queries 0)"), "{out}");
}

/// A scalable frame's entropy bound is the sum of its layers' bounds (each
/// layer is an array of its own, coded with its own count of ones), which
/// the payload never beats; the bound of one array of all the bits is
/// higher than that sum, and was beaten.
#[test]
fn scalable_inspect_is_never_below_its_entropy_bound() {
    let dir = tempfile::tempdir().unwrap();
    let w = words(dir.path(), "w.txt", 20_000);
    let g = build(
        dir.path(),
        "g.cbf",
        &w,
        &[
            "--type",
            "scalable",
            "--fpr",
            "0.01",
            "--initial-capacity",
            "1000",
        ],
    );
    let o = run(&["inspect", s(&g), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let bound = v["entropy_bound_bytes"].as_f64().unwrap();
    let payload = v["payload_bytes"].as_f64().unwrap();
    assert!(
        v["scalable"]["layers"].as_array().unwrap().len() >= 3,
        "{v}"
    );
    assert!(bound <= payload, "bound {bound} above payload {payload}");
    let out = stdout(&run(&["inspect", s(&g)]));
    let line = out
        .lines()
        .find(|l| l.starts_with("entropy bound"))
        .unwrap();
    assert!(line.contains("(payload is +"), "{line}");
}

/// `query --json` gives a key that is not UTF-8 as `key_hex`, its bytes in
/// hex, so that every key reads back exactly; UTF-8 keys stay `key`.
#[test]
fn query_json_keeps_the_bytes_of_keys_that_are_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let keys_bytes: Vec<&[u8]> = vec![b"plain", b"caf\xc3\xa9", b"bad\xff\xfe", b"\x80"];
    let mut text = Vec::new();
    for k in &keys_bytes {
        text.extend_from_slice(k);
        text.push(b'\n');
    }
    let kf = dir.path().join("k.txt");
    std::fs::write(&kf, &text).unwrap();
    let f = build(dir.path(), "f.cbf", &kf, &["--fpr", "0.01"]);
    let o = run(&["query", s(&f), "--keys", s(&kf), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back: Vec<Vec<u8>> = stdout(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["present"], true);
            match (v.get("key"), v.get("key_hex")) {
                (Some(k), None) => k.as_str().unwrap().as_bytes().to_vec(),
                (None, Some(h)) => {
                    let h = h.as_str().unwrap();
                    (0..h.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                        .collect()
                }
                _ => panic!("one of key and key_hex: {v}"),
            }
        })
        .collect();
    let want: Vec<Vec<u8>> = keys_bytes.iter().map(|k| k.to_vec()).collect();
    assert_eq!(back, want);
    let help = stdout(&run(&["query", "--help"]));
    assert!(help.contains("key_hex"), "{help}");
}
