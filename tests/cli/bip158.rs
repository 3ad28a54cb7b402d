//! `cbloom import/export --bip158` and `inspect` on Bitcoin Core's
//! vectors (tests/data/blockfilters.json): the filter header checked on
//! import, the bytes given back on export.

use crate::{cbloom, s};
use std::path::Path;

/// Each row's block hash, previous header, filter and header, as the JSON
/// prints them.
fn rows() -> Vec<[String; 4]> {
    let path = format!(
        "{}/tests/data/blockfilters.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json.as_array().unwrap()[1..]
        .iter()
        .map(|r| [1, 4, 5, 6].map(|i| r[i].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn import_checks_the_header_and_export_gives_the_bytes_back() {
    let dir = tempfile::tempdir().unwrap();
    let (filter, frame, back) = (
        dir.path().join("f.hex"),
        dir.path().join("f.cbf"),
        dir.path().join("back.hex"),
    );
    for [hash, prev, hex, header] in rows() {
        std::fs::write(&filter, format!("{hex}\n")).unwrap();
        let out = cbloom(&[
            "import",
            "--bip158",
            s(&filter),
            "--hex",
            "--block-hash",
            &hash,
            "--prev-header",
            &prev,
            "--expect-header",
            &header,
            "-o",
            s(&frame),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains(&format!("filter header    {header} (as expected)")),
            "{err}"
        );
        let out = cbloom(&["export", "--bip158", s(&frame), "--hex", "-o", s(&back)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(std::fs::read_to_string(&back).unwrap(), format!("{hex}\n"));
        let out = cbloom(&["inspect", "--json", s(&frame)]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["bip158"]["block_hash"], hash.as_str());
        assert_eq!(v["bip158"]["bip158_bytes"], hex.len() / 2);
    }
}

#[test]
fn a_wrong_header_or_block_hash_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let [hash, prev, hex, header] = rows().swap_remove(4);
    let (filter, frame) = (dir.path().join("f.bin"), dir.path().join("f.cbf"));
    std::fs::write(
        &filter,
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    // The header of another block's filter: the chain does not hold.
    let mut wrong = header.clone();
    wrong.replace_range(0..2, if &header[0..2] == "00" { "01" } else { "00" });
    let out = cbloom(&[
        "import",
        "--bip158",
        s(&filter),
        "--block-hash",
        &hash,
        "--prev-header",
        &prev,
        "--expect-header",
        &wrong,
        "-o",
        s(&frame),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the filter header is {header}, not the expected {wrong}"
        )),
        "{err}"
    );
    assert!(!frame.exists());
    let out = cbloom(&[
        "import",
        "--bip158",
        s(&filter),
        "--block-hash",
        "abcd",
        "-o",
        s(&frame),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--block-hash: expected 64 hex digits"));
    // A frame that is not a BIP158 filter cannot be exported as one.
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "a\nb\n").unwrap();
    assert!(cbloom(&[
        "build",
        "--keys",
        s(&keys),
        "--fpr",
        "0.01",
        "-o",
        s(&frame)
    ])
    .status
    .success());
    let out = cbloom(&[
        "export",
        "--bip158",
        s(&frame),
        "-o",
        s(&dir.path().join("x")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("only filters imported with `cbloom import --bip158`"));
}

/// `query --key-hex` asks a BIP158 frame about raw scripts, as a light
/// client does: the genesis block's one script is there, another is not.
#[test]
fn query_key_hex_answers_as_a_bip158_client() {
    let frame = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/bip158_h0.cbf");
    let genesis = "4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac";
    let out = cbloom(&["query", s(&frame), "--key-hex", genesis]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cbloom(&["query", s(&frame), "--key-hex", "51"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bip158_flags_without_bip158_input_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (digest, frame) = (dir.path().join("d.bin"), dir.path().join("f.cbf"));
    std::fs::write(&digest, [0u8; 64]).unwrap();
    let hash = "00".repeat(32);
    // --expect-header alone is clap's refusal (it requires --prev-header).
    for flags in [
        &["--block-hash"][..],
        &["--prev-header"],
        &["--prev-header", "--expect-header"],
    ] {
        let mut args = vec!["import", "--squid", s(&digest), "-o", s(&frame)];
        for f in flags {
            args.extend([*f, hash.as_str()]);
        }
        let out = cbloom(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        let flag = flags[0];
        assert!(
            err.contains(&format!("{flag} is for --bip158 input")),
            "{err}"
        );
        assert!(!frame.exists(), "{flags:?}: no frame is written");
    }
}
