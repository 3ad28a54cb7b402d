//! `cbloom import/export --bip37`, `query --key-hex` and `inspect` on
//! Bitcoin Core's `filterload` vectors (tests/data/bip37-filterload.txt).

use crate::{cbloom, s};

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Core's `bloom_create_insert_serialize_with_tweak` payload, as bytes.
const TWEAKED: [u8; 13] = [
    0x03, 0xce, 0x42, 0x99, 5, 0, 0, 0, 0x01, 0x00, 0x00, 0x80, 1,
];

#[test]
fn bip37_import_export_query_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let payload = dir.path().join("f.bin");
    std::fs::write(&payload, TWEAKED).unwrap();
    let frame = dir.path().join("f.cbf");
    ok(&cbloom(&[
        "import",
        "--bip37",
        s(&payload),
        "-o",
        s(&frame),
    ]));
    let back = dir.path().join("back.bin");
    ok(&cbloom(&["export", "--bip37", s(&frame), "-o", s(&back)]));
    assert_eq!(std::fs::read(&back).unwrap(), TWEAKED);

    // Hex in and out, and a raw frame, give the same payload.
    let hex_in = dir.path().join("f.hex");
    std::fs::write(&hex_in, "03ce4299 0500000001000080 01\n").unwrap();
    let raw = dir.path().join("raw.cbf");
    ok(&cbloom(&[
        "import",
        "--bip37",
        s(&hex_in),
        "--hex",
        "--raw",
        "-o",
        s(&raw),
    ]));
    let hex_out = dir.path().join("out.hex");
    ok(&cbloom(&[
        "export",
        "--bip37",
        s(&raw),
        "--hex",
        "-o",
        s(&hex_out),
    ]));
    assert_eq!(
        std::fs::read_to_string(&hex_out).unwrap(),
        "03ce4299050000000100008001\n"
    );

    // decode and encode keep the record: export still gives the payload.
    let decoded = dir.path().join("decoded.cbf");
    let encoded = dir.path().join("encoded.cbf");
    ok(&cbloom(&["decode", s(&frame), "-o", s(&decoded)]));
    ok(&cbloom(&["encode", s(&decoded), "-o", s(&encoded)]));
    for f in [&decoded, &encoded] {
        ok(&cbloom(&["export", "--bip37", s(f), "-o", s(&back)]));
        assert_eq!(std::fs::read(&back).unwrap(), TWEAKED);
    }

    // Core's answers: the three inserted elements are present, the element
    // one bit away from the first is absent (exit status 1).
    let out = cbloom(&[
        "query",
        s(&frame),
        "--key-hex",
        "99108ad8ed9bb6274d3980bab5a85c048f0950c8",
        "--key-hex",
        "b5a2c786d9ef4658287ced5914b37a1b4aa32eee",
        "--key-hex",
        "b9300670b4c5366e95b2699e8b18bc75e5f729c5",
    ]);
    ok(&out);
    let out = cbloom(&[
        "query",
        s(&frame),
        "--key-hex",
        "19108ad8ed9bb6274d3980bab5a85c048f0950c8",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "19108ad8ed9bb6274d3980bab5a85c048f0950c8\tabsent\n"
    );
    let out = cbloom(&["query", s(&frame), "--key-hex", "zz"]);
    assert_eq!(out.status.code(), Some(2));

    let out = cbloom(&["inspect", s(&frame), "--json"]);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hash_scheme"], 4);
    assert_eq!(v["m"], 24);
    assert_eq!(v["k"], 5);
    assert_eq!(v["seed"], 0x8000_0001u32);
    assert_eq!(v["bip37"]["n_hash_funcs"], 5);
    assert_eq!(v["bip37"]["n_tweak"], 0x8000_0001u32);
    assert_eq!(v["bip37"]["n_flags"], 1);
    assert_eq!(v["bip37"]["flags_name"], "all");
    assert_eq!(v["bip37"]["filterload_bytes"], 13);
    let out = cbloom(&["inspect", s(&frame)]);
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("nHashFuncs 5, nTweak 2147483649 (0x80000001), nFlags 1 (all)"),
        "{text}"
    );
}

#[test]
fn bip37_refusals_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = TWEAKED.to_vec();
    bad[4] = 51; // nHashFuncs
    let bad_path = dir.path().join("bad.bin");
    std::fs::write(&bad_path, &bad).unwrap();
    let out = cbloom(&[
        "import",
        "--bip37",
        s(&bad_path),
        "-o",
        s(&dir.path().join("x")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nHashFuncs = 51"), "{err}");

    // A plain filter has no BIP37 record to export.
    let keys = dir.path().join("k.txt");
    std::fs::write(&keys, "a\nb\n").unwrap();
    let plain = dir.path().join("plain.cbf");
    ok(&cbloom(&[
        "build",
        "--keys",
        s(&keys),
        "--m",
        "1000",
        "--k",
        "3",
        "-o",
        s(&plain),
    ]));
    let out = cbloom(&[
        "export",
        "--bip37",
        s(&plain),
        "-o",
        s(&dir.path().join("y")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no BIP37 record"));
    // --key-hex works on any frame.
    ok(&cbloom(&["query", s(&plain), "--key-hex", "61"]));
    // import needs one source; --squid and --bip37 exclude each other.
    let out = cbloom(&["import", "-o", s(&dir.path().join("z"))]);
    assert_eq!(out.status.code(), Some(2));
    let out = cbloom(&[
        "import",
        "--squid",
        s(&bad_path),
        "--bip37",
        s(&bad_path),
        "-o",
        s(&dir.path().join("z")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let help = String::from_utf8_lossy(&cbloom(&["query", "--help"]).stdout).to_string();
    assert!(help.contains("--key-hex"), "{help}");
    let help = String::from_utf8_lossy(&cbloom(&["import", "--help"]).stdout).to_string();
    assert!(help.contains("--bip37"), "{help}");
}
