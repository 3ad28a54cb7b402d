//! `cbloom import/export --squid` and URL queries on the reference digest
//! written by `tools/squid_digest.py` (see tests/kinds/squid.rs).

use crate::{cbloom, s};
use std::path::{Path, PathBuf};

fn vector(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name)
}

#[test]
fn import_export_query_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let frame = dir.path().join("d.cbf");
    let back = dir.path().join("back.digest");
    let digest = vector("squid_500x5.digest");
    let out = cbloom(&["import", "--squid", s(&digest), "-o", s(&frame)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cbloom(&["export", "--squid", s(&frame), "-o", s(&back)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(&digest).unwrap()
    );

    // encode and decode keep the header: export still gives the same bytes.
    let raw = dir.path().join("raw.cbf");
    let coded = dir.path().join("coded.cbf");
    assert!(cbloom(&["decode", s(&frame), "-o", s(&raw)])
        .status
        .success());
    assert!(cbloom(&["encode", s(&raw), "-o", s(&coded)])
        .status
        .success());
    for f in [&raw, &coded] {
        assert!(cbloom(&["export", "--squid", s(f), "-o", s(&back)])
            .status
            .success());
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&digest).unwrap()
        );
    }

    // --urls --count --json counts what the reference tool answers.
    let expected = std::fs::read_to_string(vector("squid_queries.expected")).unwrap();
    let present = expected.lines().filter(|l| *l == "1").count();
    let total = expected.lines().count();
    let out = cbloom(&[
        "query",
        s(&frame),
        "--urls",
        s(&vector("squid_queries.txt")),
        "--count",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "some URLs are absent");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["present"], present);
    assert_eq!(v["total"], total);

    // One URL by --url, with and without the right method.
    let cached = "http://www.example.com/page/7.html";
    let out = cbloom(&["query", s(&frame), "--url", cached]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{cached}\tpresent\n")
    );
    let out = cbloom(&["query", s(&frame), "--url", cached, "--method", "GET"]);
    assert_eq!(out.status.code(), Some(0));
    let out = cbloom(&["query", s(&frame), "--url", cached, "--method", "FETCH"]);
    assert_eq!(out.status.code(), Some(2));

    let out = cbloom(&["inspect", s(&frame), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hash_scheme"], 2);
    assert_eq!(v["squid"]["count"], 400);
    assert_eq!(v["squid"]["capacity"], 500);
    assert_eq!(v["squid"]["bits_per_entry"], 5);
    assert_eq!(v["m"], 313 * 8);
}

#[test]
fn refusals_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = std::fs::read(vector("squid_500x5.digest")).unwrap();
    bad[21] = 3; // hash_func_count
    let bad_path = dir.path().join("bad.digest");
    std::fs::write(&bad_path, &bad).unwrap();
    let out = cbloom(&[
        "import",
        "--squid",
        s(&bad_path),
        "-o",
        s(&dir.path().join("x")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("hash functions"), "{err}");

    // A plain filter has no Squid header to export, and --url needs Squid's
    // hashing.
    let keys = dir.path().join("k.txt");
    std::fs::write(&keys, "a\nb\n").unwrap();
    let plain = dir.path().join("plain.cbf");
    let out = cbloom(&[
        "build",
        "--keys",
        s(&keys),
        "--m",
        "1000",
        "--k",
        "3",
        "-o",
        s(&plain),
    ]);
    assert!(out.status.success());
    let out = cbloom(&[
        "export",
        "--squid",
        s(&plain),
        "-o",
        s(&dir.path().join("y")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Squid header"));
    let out = cbloom(&["query", s(&plain), "--url", "http://a/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hash scheme 1"));
}
