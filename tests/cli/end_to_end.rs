//! `cbloom` end to end: build -> encode -> decode -> query answers identically
//! at every stage, and errors are one line with a non-zero exit.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::late_block;

fn cbloom(args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cbloom"));
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or(&[])).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = cbloom(args, None);
    assert!(
        out.status.success(),
        "cbloom {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A `query`'s answers: exit status 0 (all present) or 1 (some absent).
fn query_out(args: &[&str]) -> Vec<u8> {
    let out = cbloom(args, None);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "cbloom {args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

#[test]
fn build_encode_decode_query_agree() {
    let dir = std::env::temp_dir().join(format!("cbloom-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let members: String = (0..5000).map(|i| format!("member-{i}\n")).collect();
    let probes: String = (0..2000)
        .map(|i| format!("member-{}\nstranger-{i}\n", i * 2))
        .collect();
    std::fs::write(p(&dir, "keys.txt"), &members).unwrap();
    std::fs::write(p(&dir, "probes.txt"), &probes).unwrap();

    ok(&[
        "build",
        "--keys",
        &p(&dir, "keys.txt"),
        "--bytes",
        "5000",
        "--seed",
        "9",
        "-o",
        &p(&dir, "a.cbf"),
    ]);
    let built = std::fs::read(p(&dir, "a.cbf")).unwrap();
    assert!(
        built.len() <= 5000,
        "planned frame fits its budget: {}",
        built.len()
    );
    // 8 bits per key on the wire plans a sparse array (one hash), below
    // the density where type 4 decodes faster: auto takes type 1.
    assert_eq!(built[3], 1, "auto coding takes adaptive coding (type 1)");
    ok(&["decode", &p(&dir, "a.cbf"), "-o", &p(&dir, "raw.cbf")]);
    ok(&["encode", &p(&dir, "raw.cbf"), "-o", &p(&dir, "b.cbf")]);
    assert_eq!(
        std::fs::read(p(&dir, "b.cbf")).unwrap(),
        built,
        "re-encoding is deterministic"
    );
    ok(&[
        "decode",
        &p(&dir, "b.cbf"),
        "--bits-only",
        "-o",
        &p(&dir, "bits.bin"),
    ]);
    let inspect = String::from_utf8(ok(&["inspect", &p(&dir, "a.cbf"), "--json"])).unwrap();
    let m: u64 = json_field(&inspect, "m").parse().unwrap();
    let k = json_field(&inspect, "k");
    ok(&[
        "encode",
        &p(&dir, "bits.bin"),
        "--import-bits",
        "--m",
        &m.to_string(),
        "--k",
        &k,
        "--seed",
        "9",
        "--n",
        "5000",
        "-o",
        &p(&dir, "c.cbf"),
    ]);
    assert_eq!(
        std::fs::read(p(&dir, "c.cbf")).unwrap(),
        built,
        "import of bare bits"
    );

    let answers: Vec<Vec<u8>> = ["a.cbf", "raw.cbf", "b.cbf", "c.cbf"]
        .iter()
        .map(|f| query_out(&["query", &p(&dir, f), "--keys", &p(&dir, "probes.txt")]))
        .collect();
    for a in &answers[1..] {
        assert_eq!(a, &answers[0]);
    }
    let text = String::from_utf8(answers[0].clone()).unwrap();
    for line in text.lines() {
        if line.starts_with("member-") {
            assert!(line.ends_with("\tpresent"), "false negative: {line}");
        }
    }
    let count = String::from_utf8(query_out(&[
        "query",
        &p(&dir, "a.cbf"),
        "--keys",
        &p(&dir, "probes.txt"),
        "--count",
        "--json",
    ]))
    .unwrap();
    assert_eq!(json_field(&count, "total"), "4000");
    let present: u64 = json_field(&count, "present").parse().unwrap();
    assert!(
        (2000..2200).contains(&present),
        "2000 members plus a few false positives: {present}"
    );
    let one = String::from_utf8(query_out(&[
        "query",
        &p(&dir, "a.cbf"),
        "member-1",
        "nobody-at-all-xyz",
    ]))
    .unwrap();
    assert!(one.starts_with("member-1\tpresent\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn delta_and_apply_round_trip() {
    let dir = std::env::temp_dir().join(format!("cbloom-delta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let old: String = (0..10_000).map(|i| format!("k{i}\n")).collect();
    let new: String = (500..10_500).map(|i| format!("k{i}\n")).collect();
    std::fs::write(p(&dir, "old.txt"), old).unwrap();
    std::fs::write(p(&dir, "new.txt"), new).unwrap();
    for (keys, out) in [("old.txt", "old.cbf"), ("new.txt", "new.cbf")] {
        ok(&[
            "build",
            "--keys",
            &p(&dir, keys),
            "--m",
            "320000",
            "--k",
            "2",
            "-o",
            &p(&dir, out),
        ]);
    }
    ok(&[
        "delta",
        &p(&dir, "old.cbf"),
        &p(&dir, "new.cbf"),
        "-o",
        &p(&dir, "d.cbf"),
    ]);
    let d = std::fs::read(p(&dir, "d.cbf")).unwrap();
    // Conditional delta: about 1,860 bytes at this size (the paper's plain
    // delta is about 2,100); 1,950 leaves room for the key set's luck.
    assert!(d.len() < 1_950, "5% change at m/n = 32: {} bytes", d.len());
    ok(&[
        "delta",
        "--type",
        "plain",
        &p(&dir, "old.cbf"),
        &p(&dir, "new.cbf"),
        "-o",
        &p(&dir, "plain.cbf"),
    ]);
    let plain = std::fs::read(p(&dir, "plain.cbf")).unwrap();
    assert!(plain.len() > d.len() + 150, "plain {} bytes", plain.len());
    let info = String::from_utf8(ok(&["inspect", &p(&dir, "plain.cbf"), "--json"])).unwrap();
    assert_eq!(json_field(&info, "type"), "delta");
    assert_eq!(json_field(&info, "version"), "1");
    ok(&[
        "apply",
        &p(&dir, "old.cbf"),
        &p(&dir, "d.cbf"),
        "-o",
        &p(&dir, "new2.cbf"),
    ]);
    assert_eq!(
        std::fs::read(p(&dir, "new2.cbf")).unwrap(),
        std::fs::read(p(&dir, "new.cbf")).unwrap()
    );
    let info = String::from_utf8(ok(&["inspect", &p(&dir, "d.cbf"), "--json"])).unwrap();
    assert_eq!(json_field(&info, "type"), "conditional-delta");
    assert_eq!(json_field(&info, "version"), "2");
    assert!(json_field(&info, "base_digest").len() == 16);
    let text = String::from_utf8(ok(&["inspect", &p(&dir, "d.cbf")])).unwrap();
    assert!(text.contains("at base 0s"), "{text}");
    assert!(text.contains("without the base"), "{text}");
    // Applying to the wrong base fails with one line.
    let out = cbloom(
        &[
            "apply",
            &p(&dir, "new.cbf"),
            &p(&dir, "d.cbf"),
            "-o",
            &p(&dir, "x.cbf"),
        ],
        None,
    );
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("cbloom: error: DELTA (")
            && err.contains("was made from another filter than BASE"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stdin_and_stdout_with_dash() {
    let out = cbloom(
        &["build", "--keys", "-", "--m", "1000", "--k", "3", "-o", "-"],
        Some(b"a\nb\nc\n"),
    );
    assert!(out.status.success());
    let q = cbloom(&["query", "-", "a", "b", "c"], Some(&out.stdout));
    assert_eq!(
        String::from_utf8(q.stdout).unwrap(),
        "a\tpresent\nb\tpresent\nc\tpresent\n"
    );
}

#[test]
fn plan_json_has_the_documented_keys() {
    let s = String::from_utf8(ok(&["plan", "--n", "10000", "--bytes", "10000", "--json"])).unwrap();
    for key in [
        "m",
        "k",
        "n",
        "bits_per_key",
        "compressed_bits_per_key",
        "fpr",
        "expected_bytes",
    ] {
        assert!(s.contains(&format!("\"{key}\":")), "{key} missing in {s}");
    }
    let e = String::from_utf8(ok(&[
        "plan",
        "--n",
        "10000",
        "--bits-per-key",
        "32",
        "--k",
        "2",
        "--delta-fraction",
        "0.05",
    ]))
    .unwrap();
    assert!(e.contains("33.21"), "Table VI's z/(cn) for m/n = 32: {e}");
}

#[test]
fn errors_are_one_line_and_nonzero() {
    let out = cbloom(&["inspect", "-"], Some(b"\xCB\xF1\x01\x07"));
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cbloom: error: INPUT (standard input): unknown filter type 7"),
        "{err}"
    );
    let out = cbloom(&["query", "/nonexistent/file", "x"], None);
    assert!(!out.status.success());
    assert!(!String::from_utf8(out.stderr).unwrap().contains("panicked"));
}

fn json_field(json: &str, key: &str) -> String {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("{key} in {json}"));
    json[at + key.len() + 3..]
        .chars()
        .take_while(|c| !matches!(c, ',' | '}'))
        .collect::<String>()
        .trim_matches('"')
        .to_string()
}

/// Every kind this build supports round-trips through build, encode,
/// decode, query, inspect, delta and apply.
#[test]
fn every_kind_round_trips_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("cbloom-kinds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let old: String = (0..3000).map(|i| format!("k{i}\n")).collect();
    let new: String = (100..3100).map(|i| format!("k{i}\n")).collect();
    let probes: String = (0..3100).map(|i| format!("k{i}\n")).collect();
    std::fs::write(p(&dir, "old.txt"), &old).unwrap();
    std::fs::write(p(&dir, "new.txt"), &new).unwrap();
    std::fs::write(p(&dir, "probes.txt"), &probes).unwrap();
    for (kind, size) in [
        ("standard", ["--bytes", "4000"]),
        ("counting", ["--bytes", "6000"]),
        ("partitioned", ["--bytes", "4000"]),
        ("scalable", ["--fpr", "0.01"]),
        ("sparse", ["--fpr", "0.0001"]),
    ] {
        for (keys, out) in [("old.txt", "old.cbf"), ("new.txt", "new.cbf")] {
            ok(&[
                "build",
                "--type",
                kind,
                "--keys",
                &p(&dir, keys),
                size[0],
                size[1],
                "--seed",
                "3",
                "-o",
                &p(&dir, out),
            ]);
        }
        let frame = std::fs::read(p(&dir, "old.cbf")).unwrap();
        if size[0] == "--bytes" {
            let budget: usize = size[1].parse().unwrap();
            assert!(frame.len() <= budget, "{kind}: {} bytes", frame.len());
        }
        let v = String::from_utf8(ok(&["inspect", &p(&dir, "old.cbf"), "--json"])).unwrap();
        assert_eq!(json_field(&v, "kind"), kind, "{v}");
        // Queries: every member present, and the same answers after encode.
        let q1 = query_out(&[
            "query",
            &p(&dir, "old.cbf"),
            "--keys",
            &p(&dir, "probes.txt"),
        ]);
        let text = String::from_utf8(q1.clone()).unwrap();
        for i in 0..3000 {
            assert!(text.contains(&format!("k{i}\tpresent")), "{kind}: k{i}");
        }
        ok(&["encode", &p(&dir, "old.cbf"), "-o", &p(&dir, "re.cbf")]);
        let q2 = query_out(&[
            "query",
            &p(&dir, "re.cbf"),
            "--keys",
            &p(&dir, "probes.txt"),
        ]);
        assert_eq!(q1, q2, "{kind}");
        // Decode: a frame the readers take, for every kind (the sparse
        // kind's own; its positions with --positions).
        ok(&["decode", &p(&dir, "old.cbf"), "-o", &p(&dir, "dec.out")]);
        let q3 = query_out(&[
            "query",
            &p(&dir, "dec.out"),
            "--keys",
            &p(&dir, "probes.txt"),
        ]);
        assert_eq!(q1, q3, "{kind}");
        if kind == "sparse" {
            ok(&[
                "decode",
                &p(&dir, "old.cbf"),
                "--positions",
                "-o",
                &p(&dir, "dec.out"),
            ]);
            let lines = std::fs::read_to_string(p(&dir, "dec.out")).unwrap();
            assert!(lines.lines().count() > 2_900, "{kind}");
        }
        // Delta and apply reproduce the new filter's answers.
        ok(&[
            "delta",
            &p(&dir, "old.cbf"),
            &p(&dir, "new.cbf"),
            "-o",
            &p(&dir, "d.cbf"),
        ]);
        let dv = String::from_utf8(ok(&["inspect", &p(&dir, "d.cbf"), "--json"])).unwrap();
        assert_eq!(json_field(&dv, "kind"), kind, "{dv}");
        ok(&[
            "apply",
            &p(&dir, "old.cbf"),
            &p(&dir, "d.cbf"),
            "-o",
            &p(&dir, "applied.cbf"),
        ]);
        let qa = query_out(&[
            "query",
            &p(&dir, "applied.cbf"),
            "--keys",
            &p(&dir, "probes.txt"),
        ]);
        let qn = query_out(&[
            "query",
            &p(&dir, "new.cbf"),
            "--keys",
            &p(&dir, "probes.txt"),
        ]);
        assert_eq!(qa, qn, "{kind}");
    }
    // `growing` is another name for `scalable`, whose --bytes picks the
    // lowest overall bound that fits.
    let out = cbloom(
        &[
            "build",
            "--type",
            "growing",
            "--keys",
            &p(&dir, "old.txt"),
            "--bytes",
            "4000",
            "-o",
            &p(&dir, "x.cbf"),
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(p(&dir, "x.cbf")).unwrap().len() <= 4000);
    let v = String::from_utf8(ok(&["inspect", &p(&dir, "x.cbf"), "--json"])).unwrap();
    assert_eq!(json_field(&v, "kind"), "scalable", "{v}");
    assert!(v.contains("\"layers\""), "{v}");
    // A delta between two kinds is refused with both named.
    ok(&[
        "build",
        "--type",
        "sparse",
        "--keys",
        &p(&dir, "old.txt"),
        "--m",
        "100000",
        "--k",
        "1",
        "-o",
        &p(&dir, "s.cbf"),
    ]);
    ok(&[
        "build",
        "--keys",
        &p(&dir, "old.txt"),
        "--m",
        "100000",
        "--k",
        "1",
        "-o",
        &p(&dir, "t.cbf"),
    ]);
    let out = cbloom(
        &[
            "delta",
            &p(&dir, "s.cbf"),
            &p(&dir, "t.cbf"),
            "-o",
            &p(&dir, "x.cbf"),
        ],
        None,
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success() && err.contains("sparse") && err.contains("standard"),
        "{err}"
    );
}

/// An expansion limit refuses a nearly empty large filter; the default
/// takes it (any frame may decode to 1 GiB); `--max-expansion` sets the
/// ratio (0 removes it).
#[test]
fn max_expansion_option() {
    let dir = std::env::temp_dir().join(format!("cbloom-exp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(p(&dir, "one.txt"), "only\n").unwrap();
    ok(&[
        "build",
        "--keys",
        &p(&dir, "one.txt"),
        "--m",
        "100000000",
        "--k",
        "1",
        "-o",
        &p(&dir, "e.cbf"),
    ]);
    ok(&["inspect", &p(&dir, "e.cbf")]);
    let out = cbloom(
        &["inspect", &p(&dir, "e.cbf"), "--max-expansion", "4096"],
        None,
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success() && err.contains("expansion"), "{err}");
    ok(&["inspect", &p(&dir, "e.cbf"), "--max-expansion", "0"]);
    query_out(&[
        "query",
        &p(&dir, "e.cbf"),
        "only",
        "--max-expansion",
        "1000000",
    ]);
}

#[test]
fn static_coded_frames_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("cbloom-cli-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys: String = (0..20_000).map(|i| format!("k{i}\n")).collect();
    std::fs::write(p(&dir, "keys.txt"), &keys).unwrap();
    for (kind, extra) in [("standard", "--static"), ("partitioned", "--static")] {
        let (one, four) = (p(&dir, "one.cbf"), p(&dir, "four.cbf"));
        let args = [
            "build",
            "--type",
            kind,
            "--keys",
            &p(&dir, "keys.txt"),
            "--m",
            "300000",
            "--k",
            "3",
        ];
        ok(&[&args[..], &["-o", &one]].concat());
        ok(&[&args[..], &[extra, "-o", &four]].concat());
        let frame = std::fs::read(&four).unwrap();
        assert_eq!((frame[2], frame[3]), (3, 4), "{kind}: version 3, type 4");
        let json = String::from_utf8(ok(&["inspect", "--json", &four])).unwrap();
        assert_eq!(json_field(&json, "type"), "static", "{kind}");
        // Both frames decode to the same raw frame.
        let (r1, r4) = (p(&dir, "r1.cbf"), p(&dir, "r4.cbf"));
        ok(&["decode", &one, "-o", &r1]);
        ok(&["decode", &four, "-o", &r4]);
        assert_eq!(
            std::fs::read(&r1).unwrap(),
            std::fs::read(&r4).unwrap(),
            "{kind}"
        );
        // encode --static of the raw frame writes the same bytes as build.
        let again = p(&dir, "again.cbf");
        ok(&["encode", &r1, "--static", "-o", &again]);
        assert_eq!(std::fs::read(&again).unwrap(), frame, "{kind}");
    }
    // Kinds without the type say so, and write nothing.
    let out = cbloom(
        &[
            "build",
            "--type",
            "counting",
            "--keys",
            &p(&dir, "keys.txt"),
            "--m",
            "300000",
            "--k",
            "3",
            "--static",
            "-o",
            &p(&dir, "c.cbf"),
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("counting kind has no static coding"));
    assert!(!dir.join("c.cbf").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `decode` streams standard and partitioned arrays block by block: a frame
/// with a valid CRC whose last block is corrupt (only a faulty or hostile
/// encoder sends one) fails with the decoder's error, and neither creates
/// the output file nor touches one that exists, although the blocks before
/// it were already written to the temporary file.
#[test]
fn decode_of_a_bad_late_block_leaves_no_output() {
    use compressed_bloom::{format, BloomFilter, FilterParams};
    let dir = std::env::temp_dir().join(format!("cbloom-cli-late-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = BloomFilter::new(FilterParams::new(1 << 20, 2, 1)).unwrap();
    for i in 0..100_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let (good, bad) = late_block::good_and_bad_last_block(&f);
    std::fs::write(p(&dir, "good.cbf"), &good).unwrap();
    std::fs::write(p(&dir, "bad.cbf"), &bad).unwrap();
    // The good frame streams to the array's bytes and to a raw frame.
    ok(&[
        "decode",
        &p(&dir, "good.cbf"),
        "--bits-only",
        "-o",
        &p(&dir, "bits"),
    ]);
    assert_eq!(std::fs::read(p(&dir, "bits")).unwrap(), f.to_bytes());
    ok(&["decode", &p(&dir, "good.cbf"), "-o", &p(&dir, "raw.cbf")]);
    assert_eq!(
        std::fs::read(p(&dir, "raw.cbf")).unwrap(),
        format::encode_as(&f, compressed_bloom::FilterType::Raw)
    );
    for extra in [&["--bits-only"][..], &[]] {
        // A new file is not created; an existing one keeps its bytes.
        for existing in [false, true] {
            let out = p(&dir, "out");
            let _ = std::fs::remove_file(&out);
            if existing {
                std::fs::write(&out, b"before").unwrap();
            }
            let r = cbloom(
                &[&["decode", &p(&dir, "bad.cbf"), "-o", &out][..], extra].concat(),
                None,
            );
            assert!(!r.status.success(), "{extra:?}");
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(err.contains("payload"), "{extra:?}: {err}");
            if existing {
                assert_eq!(std::fs::read(&out).unwrap(), b"before", "{extra:?}");
            } else {
                assert!(!dir.join("out").exists(), "{extra:?}");
            }
        }
    }
    // An output that cannot be written is refused before the input is
    // read: the missing directory is the error, not the damaged frame.
    let mut damaged = good.clone();
    damaged[good.len() / 2] ^= 1;
    std::fs::write(p(&dir, "damaged.cbf"), &damaged).unwrap();
    let r = cbloom(
        &[
            "decode",
            &p(&dir, "damaged.cbf"),
            "--bits-only",
            "-o",
            &p(&dir, "missing/out"),
        ],
        None,
    );
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("missing") && err.contains("does not exist"),
        "{err}"
    );
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".cbloom-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Inputs of 4 MiB and more are read in one piece per core: the bytes are
/// the file's, at every piece boundary.
#[test]
fn large_inputs_read_whole() {
    use compressed_bloom::{format, BloomFilter, FilterParams, FilterType};
    let dir = std::env::temp_dir().join(format!("cbloom-cli-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A raw frame of 5 MB + 3 bytes (m not a multiple of 8), every byte
    // position distinct enough that a misplaced piece changes the bits.
    let m = 40_000_021u64;
    let mut f = BloomFilter::new(FilterParams::new(m, 3, 2)).unwrap();
    for i in 0..2_000_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let raw = format::encode_as(&f, FilterType::Raw);
    assert!(raw.len() > 4 << 20);
    std::fs::write(p(&dir, "raw.cbf"), &raw).unwrap();
    ok(&[
        "decode",
        &p(&dir, "raw.cbf"),
        "--bits-only",
        "-o",
        &p(&dir, "bits"),
    ]);
    assert_eq!(std::fs::read(p(&dir, "bits")).unwrap(), f.to_bytes());
    // And the other way: the coded frame of those bits, then back.
    ok(&["encode", &p(&dir, "raw.cbf"), "-o", &p(&dir, "coded.cbf")]);
    ok(&["decode", &p(&dir, "coded.cbf"), "-o", &p(&dir, "again.cbf")]);
    assert_eq!(std::fs::read(p(&dir, "again.cbf")).unwrap(), raw);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--coding` on build and encode: auto (the default) writes type 4 for
/// the standard and partitioned kinds' dense arrays of 2^20 bits or more
/// (here 2^21 + 1, a multiple of k),
/// each named coding writes its type,
/// `--static` spells `--coding static`, and a coding a kind has no frame
/// for is refused with a message naming the kinds that have it.
#[test]
fn coding_is_chosen_by_flag_and_auto_by_default() {
    let dir = std::env::temp_dir().join(format!("cbloom-coding-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys: String = (0..105_000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(dir.join("keys.txt"), keys).unwrap();
    let keys = p(&dir, "keys.txt");
    let build = |extra: &[&str], out: &str| {
        let mut args = vec![
            "build", "--keys", &keys, "--m", "2097153", "--k", "3", "-o", out,
        ];
        args.extend_from_slice(extra);
        cbloom(&args, None)
    };
    let out = p(&dir, "f.cbf");
    for (extra, ty) in [
        (&[][..], 4u8),
        (&["--coding", "auto"][..], 4),
        (&["--coding", "adaptive"][..], 1),
        (&["--coding", "static"][..], 4),
        (&["--static"][..], 4),
        (&["--coding", "raw"][..], 0),
        (&["--raw"][..], 0),
        (&["--type", "partitioned"][..], 4),
        (&["--type", "counting"][..], 1),
    ] {
        let r = build(extra, &out);
        assert!(
            r.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(std::fs::read(&out).unwrap()[3], ty, "{extra:?}");
    }
    let r = build(&["--type", "counting", "--coding", "static"], &out);
    assert_eq!(r.status.code(), Some(2), "a usage error");
    let msg = String::from_utf8_lossy(&r.stderr);
    assert!(
        msg.contains("counting kind has no static coding") && msg.contains("standard, partitioned"),
        "{msg}"
    );
    // encode re-codes a frame: adaptive back to auto (type 4) and back.
    assert!(build(&["--coding", "adaptive"], &out).status.success());
    let recoded = p(&dir, "g.cbf");
    ok(&["encode", &out, "-o", &recoded]);
    assert_eq!(std::fs::read(&recoded).unwrap()[3], 4);
    ok(&["encode", &recoded, "--coding", "adaptive", "-o", &recoded]);
    assert_eq!(
        std::fs::read(&recoded).unwrap(),
        std::fs::read(&out).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `delta --type plain|conditional` works on partitioned filters (FORMAT
/// section 8.2 allows both types): each writes its type, and `apply` turns
/// OLD into NEW with either; a kind with one delta type refuses `--type`.
#[test]
fn partitioned_deltas_take_either_type() {
    let dir = std::env::temp_dir().join(format!("cbloom-pdelta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write_keys = |name: &str, from: u32| {
        let keys: String = (from..from + 2000).map(|i| format!("k{i}\n")).collect();
        std::fs::write(dir.join(name), keys).unwrap();
    };
    write_keys("a.txt", 0);
    write_keys("b.txt", 100);
    for (keys, out) in [("a.txt", "old.cbf"), ("b.txt", "new.cbf")] {
        ok(&[
            "build",
            "--type",
            "partitioned",
            "--keys",
            &p(&dir, keys),
            "--m",
            "60000",
            "--k",
            "3",
            "-o",
            &p(&dir, out),
        ]);
    }
    let (old, new) = (p(&dir, "old.cbf"), p(&dir, "new.cbf"));
    for (ty, byte) in [("plain", 2u8), ("conditional", 3)] {
        let d = p(&dir, &format!("{ty}.cbf"));
        ok(&["delta", "--type", ty, &old, &new, "-o", &d]);
        assert_eq!(std::fs::read(&d).unwrap()[3], byte, "{ty}");
        let out = p(&dir, &format!("{ty}-applied.cbf"));
        ok(&["apply", &old, &d, "-o", &out]);
        // The same bits as NEW: both decoded to their packed arrays.
        let bits = |f: &str| ok(&["decode", f, "--bits-only", "-o", "-"]);
        assert_eq!(bits(&out), bits(&new), "{ty}");
    }
    // The counting kind's delta has one type.
    for (keys, out) in [("a.txt", "c-old.cbf"), ("b.txt", "c-new.cbf")] {
        ok(&[
            "build",
            "--type",
            "counting",
            "--keys",
            &p(&dir, keys),
            "--m",
            "60000",
            "--k",
            "3",
            "-o",
            &p(&dir, out),
        ]);
    }
    let r = cbloom(
        &[
            "delta",
            "--type",
            "plain",
            &p(&dir, "c-old.cbf"),
            &p(&dir, "c-new.cbf"),
            "-o",
            &p(&dir, "x"),
        ],
        None,
    );
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("counting filter's delta has one type"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `apply --max-expansion` bounds what the delta may add, not the base:
/// a sparse base of 10^7 bits (a frame some ten thousand times smaller)
/// takes a delta under `--max-expansion 100`.
#[test]
fn apply_max_expansion_bounds_the_delta_not_the_base() {
    let dir = std::env::temp_dir().join(format!("cbloom-applyexp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "a\nb\nc\n").unwrap();
    std::fs::write(dir.join("b.txt"), "a\nb\nd\n").unwrap();
    for (keys, out) in [("a.txt", "old.cbf"), ("b.txt", "new.cbf")] {
        ok(&[
            "build",
            "--type",
            "standard",
            "--keys",
            &p(&dir, keys),
            "--m",
            "1e7",
            "--k",
            "1",
            "-o",
            &p(&dir, out),
        ]);
    }
    let (old, new, d) = (p(&dir, "old.cbf"), p(&dir, "new.cbf"), p(&dir, "d.cbf"));
    assert!(std::fs::metadata(&old).unwrap().len() * 100 < 10_000_000 / 8);
    ok(&["delta", &old, &new, "-o", &d]);
    let out = p(&dir, "out.cbf");
    ok(&["apply", &old, &d, "--max-expansion", "100", "-o", &out]);
    let bits = |f: &str| ok(&["decode", f, "--bits-only", "-o", "-"]);
    assert_eq!(bits(&out), bits(&new));
    std::fs::remove_dir_all(&dir).unwrap();
}
