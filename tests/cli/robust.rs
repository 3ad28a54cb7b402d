//! `cbloom` in scripts: budgets are never exceeded silently,
//! numbers are read as people type them, closed pipes and full disks do
//! not panic, an interrupted write leaves the old file intact, exit codes
//! are as documented, messages are readable, and every plot mode draws its
//! curves and point inside the plotting area (rendered with resvg).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::process::{keys, run, s, stderr, BIN};

fn no_panic(o: &Output) {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{e}"
    );
}

fn inspect_json(frame: &Path) -> serde_json::Value {
    let o = run(&["inspect", s(frame), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn byte_budgets_are_never_exceeded_silently() {
    let dir = tempfile::tempdir().unwrap();
    let pkgs = keys(dir.path(), "pkgs.txt", (0..707).map(|i| format!("pkg-{i}")));
    let empty = keys(dir.path(), "empty.txt", []);
    let out = dir.path().join("f.cbf");
    // A declared n below the keys read: re-planned for what was read, said
    // on stderr, and the frame within the budget.
    for n in ["10", "0"] {
        let o = run(&[
            "build",
            "--keys",
            s(&pkgs),
            "--n",
            n,
            "--bytes",
            "1000",
            "-o",
            s(&out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("707 keys were read"), "{}", stderr(&o));
        assert!(std::fs::metadata(&out).unwrap().len() <= 1000);
        assert_eq!(inspect_json(&out)["n"], 707);
    }
    // No keys: a tiny plan, not a 31 MB filter.
    let o = run(&[
        "build",
        "--keys",
        s(&empty),
        "--bytes",
        "1000",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata(&out).unwrap().len() <= 1000);
    assert_eq!(inspect_json(&out)["m"], 1);
    // A budget too small for the keys: an error, and nothing written.
    let small = dir.path().join("small.cbf");
    let o = run(&[
        "build",
        "--keys",
        s(&pkgs),
        "--bytes",
        "20",
        "-o",
        s(&small),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot hold a useful filter"),
        "{}",
        stderr(&o)
    );
    assert!(!small.exists());
    no_panic(&o);
    // Every kind keeps the budget too.
    for kind in ["partitioned", "counting", "sparse"] {
        let o = run(&[
            "build",
            "--type",
            kind,
            "--keys",
            s(&pkgs),
            "--bytes",
            "1500",
            "-o",
            s(&out),
        ]);
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        assert!(std::fs::metadata(&out).unwrap().len() <= 1500, "{kind}");
    }
}

#[test]
fn duplicates_and_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.cbf");
    // 2,000 lines, 1,000 distinct keys.
    let dup = keys(
        dir.path(),
        "dup.txt",
        (0..2000).map(|i| format!("key-{}", i % 1000)),
    );
    let o = run(&["build", "--keys", s(&dup), "--fpr", "0.01", "-o", s(&out)]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("duplicate lines count toward n"),
        "{}",
        stderr(&o)
    );
    assert_eq!(inspect_json(&out)["n"], 2000);
    let o = run(&[
        "build",
        "--keys",
        s(&dup),
        "--fpr",
        "0.01",
        "--distinct",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("2000 keys read, 1000 distinct"),
        "{}",
        stderr(&o)
    );
    assert_eq!(inspect_json(&out)["n"], 1000);
    // A blank line is the empty key, unless --skip-blank.
    let blanks = keys(
        dir.path(),
        "blanks.txt",
        ["a", "", "b", "", "c"].map(String::from),
    );
    let args = |extra: &[&str]| {
        let mut v = vec![
            "build",
            "--keys",
            s(&blanks),
            "--m",
            "1000",
            "--k",
            "2",
            "-o",
            s(&out),
        ];
        v.extend_from_slice(extra);
        run(&v)
    };
    assert!(args(&[]).status.success());
    assert_eq!(inspect_json(&out)["n"], 5);
    let o = run(&["query", s(&out), ""]);
    assert_eq!(o.status.code(), Some(0), "the empty key is present");
    assert!(args(&["--skip-blank"]).status.success());
    assert_eq!(inspect_json(&out)["n"], 3);
}

#[test]
fn numbers_as_people_type_them() {
    let o = run(&["plan", "--n", "1e12", "--bytes", "1000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot hold a useful filter"),
        "{}",
        stderr(&o)
    );
    for args in [
        &["plan", "--n", "1e6", "--fpr", "1e-6"][..],
        &["plan", "--n", "1e6", "--bytes", "2.5e6"],
        &["plan", "--n", "1e6", "--bits-per-key", "9.6", "--k", "2"],
    ] {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = run(&["plan", "--n", "1e6", "--fpr", "-0.1"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("-0.1") && e.contains("probability"), "{e}");
    assert!(!e.contains("unexpected argument"), "{e}");
    let o = run(&["plan", "--n", "1.5", "--bytes", "100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("whole number"), "{}", stderr(&o));
}

#[test]
fn comparisons_are_worded_for_every_case() {
    let o = run(&[
        "plan",
        "--n",
        "10000",
        "--bytes",
        "10000",
        "--max-bits-per-key",
        "32",
    ]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("more hash functions (k = 64 against 6)"),
        "{text}"
    );
    assert!(!text.contains(" 0 fewer"), "{text}");
    // No negative percentage anywhere.
    let negative = text
        .split_whitespace()
        .any(|w| w.starts_with('-') && w.ends_with('%'));
    assert!(!negative, "{text}");
    let o = run(&[
        "plan",
        "--n",
        "10000",
        "--bytes",
        "10000",
        "--max-bits-per-key",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("-4220"), "{}", stderr(&o));
    let o = run(&["plan", "--n", "10000", "--bytes", "10000"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("lower") && text.contains("fewer hash functions"),
        "{text}"
    );
}

fn built(dir: &Path, name: &str, m: &str, k: &str, n: usize) -> PathBuf {
    let kf = keys(dir, &format!("{name}.txt"), (0..n).map(|i| format!("k{i}")));
    let out = dir.join(format!("{name}.cbf"));
    let o = run(&["build", "--keys", s(&kf), "--m", m, "--k", k, "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn closed_pipes_and_full_disks_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let f = built(dir.path(), "f", "100000", "3", 5000);
    let many = keys(
        dir.path(),
        "many.txt",
        (0..200_000).map(|i| format!("k{i}")),
    );
    // `cbloom query F --keys K | head -c 100`: the reader goes away.
    let mut child = Command::new(BIN)
        .args(["query", s(&f), "--keys", s(&many)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 100];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(141), "{:?} {}", o.status, stderr(&o));
    assert!(
        o.stderr.is_empty(),
        "quiet on a broken pipe: {}",
        stderr(&o)
    );
    // Writing to /dev/full: one line, status 2.
    if Path::new("/dev/full").exists() {
        for args in [
            &["inspect", s(&f)][..],
            &["query", s(&f), "--keys", s(&many)],
        ] {
            let o = Command::new(BIN)
                .args(args)
                .stdout(std::fs::File::create("/dev/full").unwrap())
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
            no_panic(&o);
        }
    }
}

#[test]
fn an_interrupted_write_leaves_the_old_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.cbf");
    let kf = keys(dir.path(), "k.txt", (0..20_000).map(|i| format!("k{i}")));
    let o = run(&[
        "build",
        "--keys",
        s(&kf),
        "--m",
        "100",
        "--k",
        "1",
        "-o",
        s(&target),
    ]);
    assert!(o.status.success());
    let old = std::fs::read(&target).unwrap();
    // A raw frame of 8 Mbit (1 MB) under a file-size limit of 64 blocks:
    // the write fails part-way (SIGXFSZ ignored, so write returns EFBIG).
    let script = format!(
        "trap '' XFSZ; ulimit -f 64; exec {BIN} build --keys {} --m 8000000 --k 1 --raw -o {}",
        s(&kf),
        s(&target)
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    no_panic(&o);
    assert_eq!(
        std::fs::read(&target).unwrap(),
        old,
        "the old frame is intact"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".cbloom-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    // A replaced file keeps its permissions (the temporary file is not
    // 0600 by accident).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let o = run(&[
            "build",
            "--keys",
            s(&kf),
            "--m",
            "200",
            "--k",
            "1",
            "-o",
            s(&target),
        ]);
        assert!(o.status.success());
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
}

#[test]
fn exit_codes_are_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let f = built(dir.path(), "f", "100000", "3", 100);
    let o = run(&["query", s(&f), "k1", "k2"]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&["query", s(&f), "k1", "surely-not-a-member-xyz"]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["query", s(&f), "--quiet", "k1", "surely-not-a-member-xyz"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let o = run(&["query", s(&dir.path().join("missing.cbf")), "k1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.cbf"), "{}", stderr(&o));
    let o = run(&["query", "-", "--keys", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("both be standard input"),
        "{}",
        stderr(&o)
    );
    // Usage errors are short.
    let o = run(&[
        "encode",
        s(&f),
        "-o",
        s(&dir.path().join("x")),
        "--m",
        "1000",
        "--k",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--import-bits"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    // Any usage error: one line, status 2; help still prints in full.
    let o = run(&["plan", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = run(&["plan", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--max-bits-per-key"));
}

#[test]
fn mismatched_filters_and_bad_plot_paths_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let a = built(dir.path(), "a", "16964", "2", 100);
    let b = built(dir.path(), "b", "20000", "2", 100);
    let o = run(&["delta", s(&a), s(&b), "-o", s(&dir.path().join("d.cbf"))]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("m = 16964 bits") && e.contains("--m 16964"),
        "{e}"
    );
    assert!(!e.contains("FilterParams {"), "{e}");
    let bad = dir.path().join("nodir").join("x.svg");
    let o = run(&["plan", "--n", "1000", "--bytes", "1000", "--plot", s(&bad)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(s(&bad)), "{}", stderr(&o));
}

/// The plotting area in pixels, from plan_cmd.rs's layout: margin 15 on
/// every side, 80 px of y labels on the left, 45 px of x labels at the
/// bottom, the caption on top (the y axis line gives its height).
fn plot_area(svg: &str) -> (f32, f32, f32, f32) {
    // The y axis: the first polyline, "94,TOP 94,500".
    let at = svg.find("points=\"").unwrap() + 8;
    let pts: Vec<f32> = svg[at..]
        .split('"')
        .next()
        .unwrap()
        .split([' ', ','])
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(pts[0], 94.0, "{pts:?}");
    (95.0, pts[1], 785.0, 500.0)
}

#[test]
fn every_plot_mode_draws_inside_the_plot_area() {
    use resvg::{tiny_skia, usvg};
    let dir = tempfile::tempdir().unwrap();
    let modes: [&[&str]; 5] = [
        &["--n", "10000", "--bytes", "10000"],
        &["--n", "10000", "--fpr", "0.001"],
        &[
            "--n",
            "10000",
            "--bytes",
            "10000",
            "--delta-fraction",
            "0.1",
        ],
        &["--n", "10000", "--bits-per-key", "12", "--k", "3"],
        &[
            "--n",
            "10000",
            "--bytes",
            "10000",
            "--max-bits-per-key",
            "32",
        ],
    ];
    for mode in modes {
        let svg_path = dir.path().join("p.svg");
        let mut args = vec!["plan"];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["--plot", s(&svg_path)]);
        let o = run(&args);
        assert!(o.status.success(), "{mode:?}: {}", stderr(&o));
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        let (left, top, right, bottom) = plot_area(&svg);
        let tree = usvg::Tree::from_str(&svg, &usvg::Options::default()).unwrap();
        let size = tree.size().to_int_size();
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
        resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
        // Curve pixels: strongly blue or red. All inside the area (the
        // legend's samples are inside it too), and there are many.
        let (w, h) = (size.width(), size.height());
        let mut coloured = 0;
        for y in 0..h {
            for x in 0..w {
                let p = pixmap.pixel(x, y).unwrap();
                let (r, g, b) = (p.red(), p.green(), p.blue());
                let curve = (b > 180 && r < 90 && g < 90) || (r > 180 && g < 90 && b < 90);
                if curve {
                    coloured += 1;
                    let (xf, yf) = (x as f32, y as f32);
                    assert!(
                        xf >= left - 1.0
                            && xf <= right + 1.0
                            && yf >= top - 1.0
                            && yf <= bottom + 1.0,
                        "{mode:?}: curve pixel at ({x}, {y}) outside {left},{top}-{right},{bottom}"
                    );
                }
            }
        }
        assert!(coloured > 300, "{mode:?}: only {coloured} curve pixels");
        // The plan's point: the radius-5 circle, well inside the area and
        // rendered black at its centre.
        let c = svg
            .find("r=\"5\"")
            .map(|i| &svg[svg[..i].rfind("<circle").unwrap()..i]);
        let c = c.unwrap_or_else(|| panic!("{mode:?}: no plan point"));
        let num = |name: &str| -> f32 {
            let at = c.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            c[at..].split('"').next().unwrap().parse().unwrap()
        };
        let (cx, cy) = (num("cx"), num("cy"));
        assert!(
            cx >= left + 5.0 && cx <= right - 5.0 && cy >= top + 5.0 && cy <= bottom - 5.0,
            "{mode:?}: plan point ({cx}, {cy}) on or outside the area's edge"
        );
        let p = pixmap.pixel(cx as u32, cy as u32).unwrap();
        assert!(
            p.red() < 60 && p.green() < 60 && p.blue() < 60,
            "{mode:?}: point not drawn"
        );
    }
}

/// `-o` naming something that is not a regular file (a FIFO here; a device
/// such as /dev/null or /dev/stdout is the same case) is written in place.
/// Writing through a temporary file and renaming it over the target, as a
/// regular file is written, replaced such a target with a regular file:
/// `cbloom decode F -o /dev/null` run as root destroyed /dev/null.
#[cfg(unix)]
#[test]
fn outputs_that_are_not_regular_files_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let f = built(dir.path(), "f", "100000", "3", 5000);
    let want = run(&["decode", s(&f), "-o", "-"]);
    assert!(want.status.success(), "{}", stderr(&want));
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(
        made.is_ok_and(|st| st.success()),
        "this test needs `mkfifo` (apt-get install coreutils)"
    );
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for target in [&fifo, &link] {
        let path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(path).unwrap());
        let o = run(&["decode", s(&f), "-o", s(target)]);
        assert!(o.status.success(), "{}", stderr(&o));
        // Checked before joining: a FIFO renamed away never gets a writer,
        // and the reader would wait forever.
        assert!(
            std::fs::metadata(&fifo).unwrap().file_type().is_fifo(),
            "{} was replaced",
            target.display()
        );
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(reader.join().unwrap(), want.stdout, "{}", target.display());
    }
}

/// A status line that cannot be written (stderr on `/dev/full`) does not
/// turn a command that did its work into a panic (exit 101): the output is
/// written and the status is 0.
#[test]
fn an_unwritable_stderr_does_not_fail_a_command() {
    assert!(
        Path::new("/dev/full").exists(),
        "this test needs /dev/full, which Linux provides"
    );
    let dir = tempfile::tempdir().unwrap();
    let f = built(dir.path(), "f", "100000", "3", 5000);
    let out = dir.path().join("out.cbf");
    let o = Command::new(BIN)
        .args(["encode", s(&f), "-o", s(&out)])
        .stderr(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
}

/// `-o LINK`, a link to a regular file, writes the file it names and keeps
/// the link; `-o /dev/stdout` writes standard output, here a regular file,
/// and leaves `/dev/stdout` itself in place (the atomic path must not
/// rename over a link).
#[test]
fn links_to_regular_files_are_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let f = built(dir.path(), "f", "100000", "3", 5000);
    let want = run(&["decode", s(&f), "-o", "-"]);
    assert!(want.status.success(), "{}", stderr(&want));
    let real = dir.path().join("real.cbf");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.path().join("link.cbf");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run(&["decode", s(&f), "-o", s(&link)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), want.stdout);
    // Standard output on a regular file, through /dev/stdout.
    let dev_stdout = Path::new("/dev/stdout");
    let was_link = std::fs::symlink_metadata(dev_stdout).map(|m| m.file_type().is_symlink());
    let out = dir.path().join("out.bin");
    let o = Command::new(BIN)
        .args(["decode", s(&f), "-o", "/dev/stdout"])
        .stdout(std::fs::File::create(&out).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), want.stdout);
    assert_eq!(
        std::fs::symlink_metadata(dev_stdout)
            .map(|m| m.file_type().is_symlink())
            .ok(),
        was_link.ok()
    );
}
