//! The planner's flags on the command line: `build` plans for the coding
//! it is asked for, `plan` and `build` agree on the same flags, the
//! ribbon and scalable kinds say what they cannot do, and planning errors
//! name the flag at fault.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::process::{keys, run, s, stderr, stdout};

/// `n` distinct keys in `dir/name`.
fn key_file(dir: &Path, name: &str, n: u64) -> PathBuf {
    keys(dir, name, (0..n).map(|i| format!("key-{i}")))
}

/// `cbloom build --keys FILE FLAGS… -o OUT`.
fn build(file: &Path, out: &Path, flags: &[&str]) -> Output {
    let mut args = vec!["build", "--keys", s(file)];
    args.extend_from_slice(flags);
    args.extend(["-o", s(out)]);
    run(&args)
}

fn inspect_json(frame: &Path) -> serde_json::Value {
    let o = run(&["inspect", s(frame), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A usage or input error: status 2, nothing written, no panic.
fn refused(o: &Output, out: &Path) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(!out.exists(), "{e}");
    e
}

/// `--raw` is planned as a raw frame: a budget is met exactly by the
/// array (no luck involved), the size a `--fpr` note promises is the size
/// written, and without `--type` the plan takes a kind that has a raw
/// frame. `--static` without `--type` takes the standard kind, not the
/// sparse one the default plan would pick at these sizes.
#[test]
fn raw_and_static_builds_are_planned_for_their_coding() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 20_000);
    let out = dir.path().join("f.cbf");
    // 1.2 bytes per key: a coded plan is far sparser than a raw array of
    // the same size could be.
    for kind in [
        None,
        Some("standard"),
        Some("partitioned"),
        Some("counting"),
    ] {
        let mut args = vec!["build", "--keys", s(&file), "--bytes", "24000", "--raw"];
        args.extend(kind.map(|k| ["--type", k]).into_iter().flatten());
        args.extend(["-o", s(&out)]);
        let o = run(&args);
        assert!(o.status.success(), "{kind:?}: {}", stderr(&o));
        let v = inspect_json(&out);
        assert_eq!(v["type"], "raw", "{kind:?}");
        assert_eq!(v["kind"], kind.unwrap_or("standard"));
        let len = std::fs::metadata(&out).unwrap().len();
        assert!(len <= 24_000, "{kind:?}: {len}");
        // The largest array that fits: within a few bytes of the budget
        // (a partitioned m is a multiple of k).
        assert!(len >= 23_990, "{kind:?}: {len}");
        std::fs::remove_file(&out).unwrap();
    }
    // The note's bytes are the frame's.
    let o = build(
        &file,
        &out,
        &["--fpr", "0.001", "--raw", "--type", "standard"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let len = std::fs::metadata(&out).unwrap().len();
    let e = stderr(&o);
    assert!(
        e.contains("planned for a raw frame") && e.contains(&format!(", {len} bytes")),
        "{len}: {e}"
    );
    // A raw standard filter at f = 0.001 needs about 14.4 bits per key
    // (k = 10): 36 kB for 20,000 keys, not the 2.5 MB array of the coded
    // plan sent raw.
    assert!((35_000..37_000).contains(&len), "{len}");
    let v = inspect_json(&out);
    let m = v["m"].as_u64().unwrap();
    let k = v["k"].as_u64().unwrap() as u32;
    let f = compressed_bloom::plan::fpr_finite(m, 20_000, k);
    assert!(f <= 0.001, "m {m} k {k}: {f}");
    std::fs::remove_file(&out).unwrap();
    for coding in ["--raw", "--static"] {
        let o = build(&file, &out, &["--fpr", "0.001", coding]);
        assert!(o.status.success(), "{coding}: {}", stderr(&o));
        assert_eq!(inspect_json(&out)["kind"], "standard", "{coding}");
        std::fs::remove_file(&out).unwrap();
    }
}

/// A kind without the coding asked for is refused before any key is
/// read: here the key file does not even exist, and the error is the
/// coding's.
#[test]
fn a_kind_without_the_coding_is_refused_before_the_keys_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-keys.txt");
    let out = dir.path().join("f.cbf");
    for (kind, coding, says) in [
        ("sparse", "--raw", "the sparse kind has no raw coding"),
        ("sparse", "--static", "the sparse kind has no static coding"),
        ("ribbon", "--static", "the ribbon kind has no static coding"),
        (
            "scalable",
            "--static",
            "the scalable kind has no static coding",
        ),
    ] {
        let o = build(&missing, &out, &["--fpr", "0.01", "--type", kind, coding]);
        let e = refused(&o, &out);
        assert!(e.contains(says), "{e}");
    }
}

/// `build --type standard --bytes` that holds the receiver's memory to a
/// multiple of the frame says what rate that costs, and `plan --type
/// standard` with the same flags marks that plan as the one build takes.
#[test]
fn plan_and_build_agree_on_a_capped_standard_budget() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 2000);
    let out = dir.path().join("f.cbf");
    let o = build(&file, &out, &["--type", "standard", "--bytes", "4000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("planned for the receiver's memory")
            && e.contains("the lowest rate within the budget (f = ")
            && e.contains("memory is capped at 32 times the smallest frame"),
        "{e}"
    );
    let built = inspect_json(&out);
    let v = json(&run(&[
        "plan", "--n", "2000", "--bytes", "4000", "--type", "standard", "--json",
    ]));
    let row = &v["tradeoff"][v["default"].as_u64().unwrap() as usize];
    assert_eq!(row["kind"], "standard");
    assert_eq!((&row["m"], &row["k"]), (&built["m"], &built["k"]), "{v}");
    // The note build printed is plan's too.
    let note = v["default_note"].as_str().unwrap();
    assert!(e.contains(note), "{note}\n{e}");
    // The table shows it.
    let text = stdout(&run(&[
        "plan", "--n", "2000", "--bytes", "4000", "--type", "standard",
    ]));
    let m = built["m"].as_u64().unwrap() as f64 / 2000.0;
    assert!(
        text.lines()
            .any(|l| l.starts_with("* standard") && l.contains(&format!("{m:.2}"))),
        "{text}"
    );
}

/// `plan --needs growth` plans the scalable filter `build --type scalable`
/// makes with its defaults (the hint's command): its frame and rate at n
/// keys are the built filter's. The frame's size varies with the fill by
/// well under 1% (the coder's bound tracks the count of ones, whose
/// deviation is √(m·p(1−p)) ≈ 0.3% of the ones here), so 3% is slack for
/// the model; the rate from the fills varies as the ones do, so 10%.
#[test]
fn the_scalable_row_is_the_filter_build_makes() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000u64;
    let file = key_file(dir.path(), "k.txt", n);
    let out = dir.path().join("s.cbf");
    let v = json(&run(&[
        "plan", "--n", "20000", "--fpr", "0.01", "--needs", "growth", "--json",
    ]));
    assert_eq!(v["recommended"]["kind"], "scalable");
    let hint = v["build"].as_str().unwrap();
    assert_eq!(
        hint,
        "cbloom build --type scalable --fpr 0.01 --initial-capacity 1000"
    );
    let o = run(&[
        "build",
        "--type",
        "scalable",
        "--fpr",
        "0.01",
        "--keys",
        s(&file),
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let built = inspect_json(&out);
    let bytes = built["frame_bytes"].as_f64().unwrap();
    let planned = v["recommended"]["expected_bytes"].as_f64().unwrap();
    assert!((bytes / planned - 1.0).abs() < 0.03, "{bytes} vs {planned}");
    let f = built["scalable"]["formula_fpr"].as_f64().unwrap();
    let planned_f = v["recommended"]["fpr"].as_f64().unwrap();
    assert!((f / planned_f - 1.0).abs() < 0.10, "{f} vs {planned_f}");
    assert!(planned_f < 0.01);
}

/// A budget under the smallest scalable frame says so, with that frame's
/// size, not that it cannot hold a 1-bit filter.
#[test]
fn a_scalable_budget_too_small_names_the_smallest_frame() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 2000);
    let out = dir.path().join("s.cbf");
    let o = run(&[
        "build",
        "--type",
        "scalable",
        "--keys",
        s(&file),
        "--bytes",
        "800",
        "-o",
        s(&out),
    ]);
    let e = refused(&o, &out);
    assert!(!e.contains("1-bit"), "{e}");
    assert!(
        e.contains("under the smallest scalable frame for 2000 keys")
            && e.contains("initial capacity of 1000"),
        "{e}"
    );
    // The size it names is enough.
    let least: String = e
        .split(": ")
        .last()
        .unwrap()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let o = run(&[
        "build",
        "--type",
        "scalable",
        "--keys",
        s(&file),
        "--bytes",
        &least,
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{least}: {}", stderr(&o));
}

fn ribbon(dir: &Path, file: &Path, name: &str, fpr: &str) -> PathBuf {
    let out = dir.join(name);
    let o = run(&[
        "build",
        "--type",
        "ribbon",
        "--keys",
        s(file),
        "--fpr",
        fpr,
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// A delta with a ribbon filter says that the kind has none and what to
/// send instead, never a `--m`/`--k` that `build --type ribbon` refuses or
/// a word about scalable filters; `decode` says why it has nothing to
/// write and what to do.
#[test]
fn ribbon_frames_say_what_they_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 500);
    let r1 = ribbon(dir.path(), &file, "r1.cbf", "0.01");
    let r2 = ribbon(dir.path(), &file, "r2.cbf", "0.001");
    let out = dir.path().join("d.cbf");
    for (old, new) in [(&r1, &r2), (&r1, &r1)] {
        let o = run(&["delta", s(old), s(new), "-o", s(&out)]);
        let e = refused(&o, &out);
        assert!(e.contains("a ribbon filter has no delta"), "{e}");
        assert!(e.contains("send NEW whole"), "{e}");
        assert!(!e.contains("--m ") && !e.contains("scalable NEW"), "{e}");
    }
    let o = run(&["decode", s(&r1), "-o", s(&out)]);
    let e = refused(&o, &out);
    assert!(
        e.contains("no uncoded form") && e.contains("query") && e.contains("--type"),
        "{e}"
    );
}

/// A ribbon budget larger than the lowest rate needs builds at that rate
/// (2^-64) and says so; no rate was given, so none is blamed.
#[test]
fn a_large_ribbon_budget_builds_at_the_lowest_rate() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 2000);
    let out = dir.path().join("r.cbf");
    let o = run(&[
        "build",
        "--type",
        "ribbon",
        "--keys",
        s(&file),
        "--bytes",
        "1000000",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("lowest rate, 2^-64"), "{}", stderr(&o));
    // 64 bits per key and a little: about 16 kB.
    let len = std::fs::metadata(&out).unwrap().len();
    assert!((16_000..17_000).contains(&len), "{len}");
    assert_eq!(inspect_json(&out)["ribbon"]["columns"], 63);
}

/// A cap on bits per key that leaves no useful filter is blamed, not the
/// frame budget; a rate it cannot reach names the flag and what it needs.
#[test]
fn a_cap_on_bits_per_key_is_blamed_as_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 2000);
    let out = dir.path().join("f.cbf");
    let o = build(
        &file,
        &out,
        &["--bytes", "5000", "--max-bits-per-key", "0.5"],
    );
    let e = refused(&o, &out);
    assert!(
        e.starts_with("cbloom: error: --max-bits-per-key 0.5 caps m at 1000 bits for 2000 keys"),
        "{e}"
    );
    for cmd in [
        vec!["build", "--keys", s(&file), "-o", s(&out)],
        vec!["plan", "--n", "2000"],
    ] {
        let mut args = cmd.clone();
        args.extend(["--fpr", "0.01", "--max-bits-per-key", "0.5"]);
        let o = run(&args);
        let e = refused(&o, &out);
        assert!(
            e.contains("--fpr 0.01 cannot be reached within --max-bits-per-key 0.5")
                && e.contains("at least 9.5"),
            "{e}"
        );
        assert!(!e.contains("max_m"), "{e}");
        let o = run(&{
            let mut a = cmd;
            a.extend(["--bytes", "5000", "--max-bits-per-key", "0.5"]);
            a
        });
        let e = refused(&o, &out);
        assert!(e.contains("--max-bits-per-key 0.5 caps m"), "{e}");
    }
}

/// A budget that holds no useful filter is refused without a plan note
/// first (the note of a 1-bit "plan" would be noise).
#[test]
fn a_useless_budget_prints_no_plan_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 2000);
    let out = dir.path().join("f.cbf");
    let o = build(&file, &out, &["--bytes", "25"]);
    let e = refused(&o, &out);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("cbloom: error: a 25-byte frame cannot hold a useful filter"),
        "{e}"
    );
}

/// Numbers past 2^64 − 1 are too large, not fractional; fractions are not
/// whole numbers.
#[test]
fn a_count_out_of_range_is_too_large() {
    let o = run(&["plan", "--n", "1e20", "--fpr", "0.01"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("`1e20` is too large (at most 18446744073709551615)"),
        "{e}"
    );
    assert!(!e.contains("whole"), "{e}");
    let o = run(&["plan", "--n", "2.5", "--fpr", "0.01"]);
    assert!(
        stderr(&o).contains("`2.5` is not a whole number"),
        "{}",
        stderr(&o)
    );
}

/// Planning errors name the flags as typed (`--max-k`), not the library's
/// argument names (`max_k`).
#[test]
fn planning_errors_name_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = key_file(dir.path(), "k.txt", 10);
    let out = dir.path().join("f.cbf");
    for (args, flag) in [
        (
            vec!["plan", "--n", "1000", "--fpr", "0.01", "--max-k", "0"],
            "--max-k",
        ),
        (
            vec![
                "build",
                "--keys",
                s(&file),
                "--fpr",
                "0.01",
                "--max-k",
                "0",
                "-o",
                s(&out),
            ],
            "--max-k",
        ),
        (
            vec![
                "plan",
                "--n",
                "1000",
                "--fpr",
                "0.01",
                "--delta-fraction",
                "5",
            ],
            "--delta-fraction",
        ),
        (
            vec![
                "plan",
                "--n",
                "1000",
                "--fpr",
                "0.01",
                "--confidence",
                "0.2",
            ],
            "--confidence",
        ),
        (
            vec!["plan", "--n", "1000", "--bytes", "0", "--needs", "static"],
            "--bytes",
        ),
        (
            vec!["plan", "--n", "1000", "--bits-per-key", "10", "--k", "0"],
            "--k",
        ),
    ] {
        let o = run(&args);
        let e = refused(&o, &out);
        assert!(e.contains(flag), "{args:?}: {e}");
        for name in ["max_k", "delta_fraction", "invalid argument `"] {
            assert!(!e.contains(name), "{args:?}: {e}");
        }
    }
    // A rate past every m says so in words, with no cap that was not set.
    let o = run(&["plan", "--n", "1e19", "--fpr", "1e-300"]);
    let e = refused(&o, &out);
    assert!(
        e.contains("needs more than the cap of 72057594037927936 bits on m"),
        "{e}"
    );
    assert!(
        !e.contains("max_m") && !e.contains("within the caps"),
        "{e}"
    );
}

/// `--needs` prints a table of kinds, not a figure: `--plot` with it is a
/// usage error, and no file is left claiming otherwise.
#[test]
fn plot_with_needs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("n.svg");
    let o = run(&[
        "plan",
        "--n",
        "1000",
        "--fpr",
        "0.01",
        "--needs",
        "static",
        "--plot",
        s(&svg),
    ]);
    let e = refused(&o, &svg);
    assert!(e.contains("--needs") && e.contains("--plot"), "{e}");
}
