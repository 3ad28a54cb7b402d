//! `cbloom` with its default options: what the writers produce, the
//! readers take; numbers are read as typed on every numeric flag; plans
//! fit the receiver's memory; failures are clean and say why.

use std::path::Path;
use std::process::{Command, Output};

use crate::process::{keys, run, s, stderr, stdout, BIN};

fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "cbloom {args:?}: {}", stderr(&o));
    o
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

/// Bytes a receiver holds for a frame, from `inspect --json`: the
/// positions list of a sparse filter, m/8 for a bit array, m/2 for
/// 4-bit counters.
fn held_bytes(v: &serde_json::Value) -> f64 {
    let m = v["m"].as_f64().unwrap();
    match v["kind"].as_str().unwrap() {
        "sparse" => v["sparse"]["held_bytes"].as_f64().unwrap(),
        "counting" => m / 2.0,
        _ => m / 8.0,
    }
}

#[test]
fn default_plans_fit_the_receiver_within_three_percent_of_the_frame() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..200_000).map(|i| format!("key-{i}")));
    let (f, wire) = (dir.path().join("f.cbf"), dir.path().join("wire.cbf"));
    ok(&["build", "--keys", s(&k), "--fpr", "0.001", "-o", s(&f)]);
    // The smallest frame: k = 1, m/n about 1000 (25 MB of bits).
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--fpr",
        "0.001",
        "--max-bits-per-key",
        "1e4",
        "-o",
        s(&wire),
    ]);
    let (v, w) = (inspect_json(&f), inspect_json(&wire));
    let (frame, best) = (
        v["frame_bytes"].as_f64().unwrap(),
        w["frame_bytes"].as_f64().unwrap(),
    );
    assert!(frame <= best * 1.03, "{frame} against {best}");
    assert!(held_bytes(&w) > 50.0 * best, "{w}");
    assert!(held_bytes(&v) <= 32.0 * frame, "{v}");
    assert!(v["expected_fpr"].as_f64().unwrap() <= 0.00105, "{v}");
    let o = ok(&["query", s(&f), "key-123", "key-199999"]);
    assert_eq!(stdout(&o).matches("present").count(), 2);
}

#[test]
fn counting_and_budget_plans_hold_memory_to_a_multiple_of_the_frame() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..100_000).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    // The smallest counting frame has m/n = 1000: 50 MB of counters.
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--type",
        "counting",
        "--fpr",
        "0.001",
        "-o",
        s(&f),
    ]);
    let v = inspect_json(&f);
    assert!(
        held_bytes(&v) <= 32.0 * v["frame_bytes"].as_f64().unwrap(),
        "{v}"
    );
    // 100 keys in 10 kB: the smallest-rate plan has m = 4·10^7, k = 55.
    let k = keys(dir.path(), "k100", (0..100).map(|i| format!("key-{i}")));
    let o = ok(&["build", "--keys", s(&k), "--bytes", "10000", "-o", s(&f)]);
    let v = inspect_json(&f);
    assert!(held_bytes(&v) <= 32.0 * 10_000.0, "{v}");
    assert!(stderr(&o).contains("--max-bits-per-key"), "{}", stderr(&o));
}

#[test]
fn plan_shows_the_frame_against_the_receiver_memory() {
    let o = ok(&["plan", "--n", "1e7", "--fpr", "0.001", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["tradeoff"].as_array().expect("a trade-off table");
    assert!(rows.len() >= 3, "{v}");
    let best = rows
        .iter()
        .map(|r| r["expected_bytes"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    let d = &rows[v["default"].as_u64().unwrap() as usize];
    assert!(d["expected_bytes"].as_f64().unwrap() <= 1.03 * best, "{d}");
    assert!(d["receiver_bytes"].as_f64().unwrap() < 400e6, "{d}");
    // Less memory costs frame: the standard rows trade one for the other.
    let std: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r["kind"] == "standard")
        .map(|r| {
            (
                r["receiver_bytes"].as_f64().unwrap(),
                r["expected_bytes"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(
        std.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1),
        "{std:?}"
    );
    let text = stdout(&ok(&["plan", "--n", "1e7", "--fpr", "0.001"]));
    assert!(text.contains("frame against receiver memory"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("* sparse")), "{text}");
}

#[test]
fn budget_plans_hold_for_fewer_keys_than_planned() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..200_000).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    // Planned for 10^6 keys, 2·10^5 read: the dense plan for 10^6 (k = 64)
    // coded to 2 MB with the keys that came.
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--n",
        "1e6",
        "--bytes",
        "300000",
        "-o",
        s(&f),
    ]);
    assert!(std::fs::metadata(&f).unwrap().len() <= 300_000);
    // Every key three times: 3·10^5 lines, 10^5 distinct keys.
    let k3 = keys(
        dir.path(),
        "k3",
        (0..3).flat_map(|_| (0..100_000).map(|i| format!("key-{i}"))),
    );
    let o = ok(&["build", "--keys", s(&k3), "--bytes", "100000", "-o", s(&f)]);
    assert!(std::fs::metadata(&f).unwrap().len() <= 100_000);
    assert!(
        stderr(&o).contains("duplicate lines count toward n"),
        "{}",
        stderr(&o)
    );
    let o = ok(&["plan", "--n", "1e6", "--bytes", "300000", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The row build takes: a raw array of m bits fits the budget, so
    // fewer keys never need more.
    let d = &v["tradeoff"][v["default"].as_u64().unwrap() as usize];
    assert!(d["m"].as_u64().unwrap() <= 300_000 * 8, "{v}");
}

/// Hidden temporary files left in `dir`.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".cbloom-"))
        .collect()
}

#[cfg(unix)]
#[test]
fn signals_remove_the_temporary_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..1000).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    // A small frame that decodes to 125 MB.
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
    for sig in ["INT", "TERM", "HUP"] {
        let out = dir.path().join("out.cbf");
        let mut child = Command::new(BIN)
            .args(["decode", s(&f), "-o", s(&out)])
            .spawn()
            .unwrap();
        // Signal once the temporary file is there.
        let start = std::time::Instant::now();
        while temp_files(dir.path()).is_empty() && start.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(!temp_files(dir.path()).is_empty(), "no temporary file seen");
        let killed = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        assert!(!status.success(), "{sig}: {status:?}");
        assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "{sig}");
        assert!(!out.exists(), "{sig}");
    }
}

#[cfg(unix)]
#[test]
fn a_file_size_limit_is_an_error_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..1000).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--m",
        "1e7",
        "--k",
        "1",
        "-o",
        s(&f),
    ]);
    // 500 blocks of 512 bytes: the 1.25 MB raw frame does not fit.
    let script = format!(
        "ulimit -f 500; exec {BIN} decode {} -o {}/out.cbf",
        s(&f),
        s(dir.path())
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{:?} {}", o.status, stderr(&o));
    assert!(stderr(&o).contains("file-size limit"), "{}", stderr(&o));
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
}

#[test]
fn query_needs_keys_and_squid_digests_need_urls() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..100).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    ok(&["build", "--keys", s(&k), "--fpr", "0.01", "-o", s(&f)]);
    let o = run(&["query", s(&f)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("give keys to look up"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    let digest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/squid_500x5.digest");
    let sq = dir.path().join("sq.cbf");
    ok(&["import", "--squid", s(&digest), "-o", s(&sq)]);
    let urls = keys(dir.path(), "urls", ["http://example.com/".to_string()]);
    let o = run(&["query", s(&sq), "--keys", s(&urls)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--urls"), "{}", stderr(&o));
}

#[cfg(target_os = "linux")]
#[test]
fn output_in_a_directory_without_room_for_a_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..100).map(|i| format!("key-{i}")));
    let sub = dir.path().join("locked");
    std::fs::create_dir(&sub).unwrap();
    let out = sub.join("out.cbf");
    std::fs::write(&out, b"old").unwrap();
    // No new file in the directory, even for root; its files stay writable.
    let locked = Command::new("chattr").args(["+i", s(&sub)]).status();
    if !locked.is_ok_and(|st| st.success()) || std::fs::write(sub.join("probe"), b"").is_ok() {
        let _ = Command::new("chattr").args(["-i", s(&sub)]).status();
        panic!(
            "this test locks a directory with `chattr +i`, which needs root, the chattr \
             command (apt-get install e2fsprogs; tools/test-deps.sh installs it) and a \
             temporary directory on a filesystem that supports it (ext4, xfs, btrfs)"
        );
    }
    let o = run(&["build", "--keys", s(&k), "--fpr", "0.01", "-o", s(&out)]);
    let _ = Command::new("chattr").args(["-i", s(&sub)]).status();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("in place"), "{}", stderr(&o));
    assert_eq!(inspect_json(&out)["n"], 100);
}

#[test]
fn messages_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.bin");
    let bytes: Vec<u8> = (0..300u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, bytes).unwrap();
    let o = run(&[
        "import",
        "--squid",
        s(&garbage),
        "-o",
        s(&dir.path().join("g.cbf")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a Squid digest"), "{}", stderr(&o));
    let empty = dir.path().join("empty.cbf");
    std::fs::write(&empty, b"").unwrap();
    for args in [&["inspect", s(&empty)][..], &["query", s(&empty), "x"]] {
        let o = run(args);
        assert!(stderr(&o).contains("the file is empty"), "{}", stderr(&o));
    }
    // A rate too small for fixed point is written in scientific notation.
    let o = run(&["plan", "--n", "1e19", "--fpr", "1e-300"]);
    assert!(stderr(&o).contains("1e-300"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("0.00000000"), "{}", stderr(&o));
    let one = keys(dir.path(), "one", ["a".to_string()]);
    let o = run(&[
        "build",
        "--keys",
        s(&one),
        "--n",
        "1e19",
        "--type",
        "sparse",
        "--fpr",
        "1e-300",
        "-o",
        s(&dir.path().join("x.cbf")),
    ]);
    assert!(stderr(&o).contains("rate 1e-300 needs"), "{}", stderr(&o));
    let text = stdout(&ok(&["plan", "--n", "10000", "--fpr", "1e-12"]));
    assert!(text.contains("1.0000e-12"), "{text}");
    // Wide numbers keep their columns apart.
    let text = stdout(&ok(&["plan", "--n", "10000", "--bytes", "1e15"]));
    for label in [
        "m (bits)",
        "array bits per key m/n",
        "expected frame (bytes)",
    ] {
        let line = text.lines().find(|l| l.starts_with(label)).unwrap();
        let values: Vec<&str> = line[label.len()..].split_whitespace().collect();
        assert_eq!(values.len(), 2, "{line}");
    }
}

#[test]
fn query_json_gives_one_object_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..100).map(|i| format!("key-{i}")));
    let f = dir.path().join("f.cbf");
    ok(&["build", "--keys", s(&k), "--fpr", "0.0001", "-o", s(&f)]);
    let o = run(&["query", s(&f), "key-1", "stranger", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"key": "key-1", "present": true})
    );
    assert_eq!(
        lines[1],
        serde_json::json!({"key": "stranger", "present": false})
    );
}

#[cfg(target_os = "linux")]
#[test]
fn binary_output_is_refused_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..100).map(|i| format!("key-{i}")));
    // `script` gives the command a terminal for its standard output.
    let cmd = format!("{BIN} build --keys {} --fpr 0.01 -o -", s(&k));
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect(
            "this test needs `script` to give cbloom a terminal \
             (apt-get install bsdutils; tools/test-deps.sh installs it)",
        );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("terminal"), "{text}");
    assert!(
        !text.contains("CBF") && !text.contains('\u{fffd}'),
        "{text}"
    );
}

#[test]
fn the_readme_delta_plan_example_matches_the_output() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let cmd = "$ cbloom plan --n 10000 --bytes 2150 --delta-fraction 0.05 --max-bits-per-key 64 --max-k 8\n";
    let start = readme.find(cmd).expect("the example") + cmd.len();
    let shown = &readme[start..start + readme[start..].find("```").unwrap()];
    let args: Vec<&str> = cmd.trim()[2..].split_whitespace().skip(1).collect();
    let out = stdout(&ok(&args));
    assert_eq!(shown.trim_end(), out.trim_end());
}

/// The points of the polyline drawn in `stroke` (the curve, not its
/// legend sample: the one with the most points).
fn polyline(svg: &str, stroke: &str) -> Vec<(f32, f32)> {
    svg.split("<polyline")
        .filter(|p| p.contains(&format!("stroke=\"{stroke}\"")))
        .map(|p| {
            let at = p.find("points=\"").unwrap() + 8;
            p[at..]
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect::<Vec<(f32, f32)>>()
        })
        .max_by_key(Vec::len)
        .unwrap_or_default()
}

/// The numbers `name="..."` of the first element `tag` with `marker`.
fn attrs(svg: &str, tag: &str, marker: &str, names: &[&str]) -> Vec<f32> {
    let el = svg
        .split(&format!("<{tag} "))
        .find(|e| e.split('>').next().unwrap().contains(marker))
        .unwrap_or_else(|| panic!("no <{tag}> with {marker}"));
    names
        .iter()
        .map(|n| {
            let el = format!(" {el}");
            let at = el.find(&format!(" {n}=\"")).unwrap() + n.len() + 3;
            el[at..].split('"').next().unwrap().parse().unwrap()
        })
        .collect()
}

/// Renders the SVG to a PNG beside the test's other output, to look at.
fn render(svg: &str, name: &str) {
    use resvg::{tiny_skia, usvg};
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .save_png(Path::new(env!("CARGO_TARGET_TMPDIR")).join(name))
        .unwrap();
}

#[test]
fn plots_show_the_plan_on_its_curve_and_the_legend_off_the_curves() {
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("f.svg");
    ok(&[
        "plan",
        "--n",
        "10000",
        "--bytes",
        "10000",
        "--max-bits-per-key",
        "32",
        "--plot",
        s(&svg_path),
    ]);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    render(&svg, "plot-budget-capped.png");
    // The plan (k = 64 under the cap) lies on or below the compressed
    // curve, which is drawn within the same cap.
    let (cx, cy) = {
        let v = attrs(&svg, "circle", "r=\"5\"", &["cx", "cy"]);
        (v[0], v[1])
    };
    let blue = polyline(&svg, "#0000FF");
    let at = blue
        .iter()
        .min_by(|a, b| (a.0 - cx).abs().total_cmp(&(b.0 - cx).abs()))
        .unwrap();
    assert!(
        (at.0 - cx).abs() <= 1.0,
        "no curve point at the plan's k: {at:?} {cx}"
    );
    // SVG y grows downwards: below the curve is a larger y.
    assert!(
        cy >= at.1 - 1.0,
        "plan ({cx}, {cy}) above the curve at {at:?}"
    );
    let lowest = blue.iter().map(|p| p.1).fold(f32::MIN, f32::max);
    assert!(
        cy >= lowest - 1.0,
        "the curve dips below the plan: {lowest} against {cy}"
    );
    // The legend box covers no point of either curve.
    let b = attrs(
        &svg,
        "rect",
        "opacity=\"0.8\"",
        &["x", "y", "width", "height"],
    );
    for colour in ["#FF0000", "#0000FF"] {
        for &(x, y) in &polyline(&svg, colour) {
            let inside = x >= b[0] && x <= b[0] + b[2] && y >= b[1] && y <= b[1] + b[3];
            assert!(!inside, "{colour} point ({x}, {y}) under the legend {b:?}");
        }
    }
    // k is a count: no "1.0, 2.0" tick labels.
    let labels: Vec<&str> = svg
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(str::trim)
        .collect();
    assert!(
        labels.contains(&"10") || labels.contains(&"20"),
        "{labels:?}"
    );
    assert!(
        !labels.iter().any(|l| l.ends_with(".0") && l.len() <= 4),
        "{labels:?}"
    );
    // The target line of a --fpr plot is not drawn in the grid's black.
    ok(&[
        "plan",
        "--n",
        "10000",
        "--fpr",
        "0.001",
        "--plot",
        s(&svg_path),
    ]);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    render(&svg, "plot-fpr.png");
    // The y axis is the first polyline, "94,TOP 94,BOTTOM"; the x axis
    // runs along BOTTOM.
    let first_axis = svg.split("<polyline").nth(1).unwrap();
    let axis_bottom = {
        let at = first_axis.find("points=\"").unwrap() + 8;
        let pts = first_axis[at..].split('"').next().unwrap();
        pts.split_whitespace()
            .nth(1)
            .unwrap()
            .split_once(',')
            .unwrap()
            .1
            .parse::<f32>()
            .unwrap()
    };
    // Lines across the plot area at one height, other than the x axis: the
    // target line.
    let targets: Vec<&str> = svg
        .split("<polyline")
        .skip(1)
        .filter(|p| {
            let at = p.find("points=\"").unwrap() + 8;
            let line: Vec<(f32, f32)> = p[at..]
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .filter_map(|xy| xy.split_once(','))
                .map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))
                .collect();
            line.len() == 2
                && line[0].1 == line[1].1
                && line[0].1 < axis_bottom - 1.0
                && (line[1].0 - line[0].0) > 500.0
        })
        .collect();
    assert_eq!(targets.len(), 1, "{targets:?}");
    let element = targets[0].split('>').next().unwrap();
    assert!(
        !element.contains("stroke=\"#000000\""),
        "the target line is drawn in the grid's colour: {element}"
    );
    assert!(svg.contains("target f = "), "no target line");
}

#[test]
fn the_readme_installs_cbloom_before_using_it_and_marks_std() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let install = readme
        .find("cargo install --path .")
        .expect("an install step");
    let first_use = readme.find("\ncbloom ").expect("a cbloom command");
    assert!(install < first_use);
    // The library snippets use the planner, Publisher and Subscriber: the
    // text before them says they need `std`, and the suggestion to turn
    // the default features off keeps it.
    let lib = readme.find("## Library").unwrap();
    let first_snippet = lib + readme[lib..].find("```rust").unwrap();
    assert!(
        readme[lib..first_snippet].contains("`std`"),
        "{}",
        &readme[lib..first_snippet]
    );
    assert!(readme.contains("default-features = false, features = [\"std\"]"));
}

#[test]
fn the_cli_treats_kinds_alike() {
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), "k", (0..1000).map(|i| format!("key-{i}")));
    let (sp, out) = (dir.path().join("sp.cbf"), dir.path().join("out.cbf"));
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--type",
        "sparse",
        "--fpr",
        "0.01",
        "-o",
        s(&sp),
    ]);
    // decode writes a frame the readers take; the positions on request.
    ok(&["decode", s(&sp), "-o", s(&out)]);
    assert_eq!(inspect_json(&out)["kind"], "sparse");
    assert!(stdout(&ok(&["query", s(&out), "key-5"])).contains("present"));
    ok(&["decode", s(&sp), "--positions", "-o", s(&out)]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.lines().all(|l| l.parse::<u64>().is_ok()), "{text}");
    // A Squid digest is named as one.
    let digest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/squid_500x5.digest");
    let sq = dir.path().join("sq.cbf");
    ok(&["import", "--squid", s(&digest), "-o", s(&sq)]);
    let o = run(&["encode", s(&sq), "--static", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a Squid digest has no static coding"),
        "{}",
        stderr(&o)
    );
    // A counting delta is labelled as one.
    let (a, b, d) = (
        dir.path().join("a.cbf"),
        dir.path().join("b.cbf"),
        dir.path().join("d.cbf"),
    );
    let k2 = keys(dir.path(), "k2", (500..1500).map(|i| format!("key-{i}")));
    ok(&[
        "build",
        "--keys",
        s(&k),
        "--type",
        "counting",
        "--m",
        "20000",
        "--k",
        "3",
        "-o",
        s(&a),
    ]);
    ok(&[
        "build",
        "--keys",
        s(&k2),
        "--type",
        "counting",
        "--m",
        "20000",
        "--k",
        "3",
        "-o",
        s(&b),
    ]);
    ok(&["delta", s(&a), s(&b), "-o", s(&d)]);
    let text = stdout(&ok(&["inspect", s(&d)]));
    assert!(text.starts_with("counting delta"), "{text}");
}
