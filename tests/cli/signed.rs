//! Signed frames on the command line: `cbloom keygen` writes a key pair
//! (the secret readable by its owner alone), `--sign` signs what build,
//! encode, delta, apply and import write, and `--verify` makes every
//! reading command refuse frames the given keys did not sign, naming why;
//! `inspect` shows the signer.

use compressed_bloom::ed25519_dalek::VerifyingKey;
use compressed_bloom::format::verify_frame;
use compressed_bloom::DecodeLimits;
use std::path::Path;
use std::process::{Command, Output};

fn cbloom(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cbloom"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &Output, why: &str) {
    assert!(
        !out.status.success(),
        "accepted: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(why), "expected '{why}' in: {err}");
}

fn public_key(path: &Path) -> VerifyingKey {
    let hex = std::fs::read_to_string(path).unwrap();
    let hex = hex.trim();
    let bytes: Vec<u8> = (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    VerifyingKey::from_bytes(&bytes.try_into().unwrap()).unwrap()
}

#[test]
fn keygen_sign_verify_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys: String = (0..2_000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(d.join("keys"), &keys).unwrap();
    std::fs::write(d.join("more"), format!("{keys}extra-1\nextra-2\n")).unwrap();
    ok(&cbloom(d, &["keygen", "-o", "k"]));
    ok(&cbloom(d, &["keygen", "-o", "other"]));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join("k")).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "the secret is readable by its owner alone"
        );
    }
    // keygen never overwrites a key.
    refused(&cbloom(d, &["keygen", "-o", "k"]), "does not overwrite");

    ok(&cbloom(
        d,
        &[
            "build", "--keys", "keys", "--m", "200000", "--k", "3", "-o", "old.cbf", "--sign", "k",
        ],
    ));
    ok(&cbloom(
        d,
        &[
            "build", "--keys", "more", "--m", "200000", "--k", "3", "-o", "new.cbf", "--sign", "k",
        ],
    ));
    ok(&cbloom(
        d,
        &[
            "build",
            "--keys",
            "keys",
            "--fpr",
            "0.01",
            "-o",
            "plain.cbf",
        ],
    ));
    ok(&cbloom(
        d,
        &[
            "delta", "old.cbf", "new.cbf", "-o", "d.cbf", "--sign", "k", "--verify", "k.pub",
        ],
    ));
    ok(&cbloom(
        d,
        &[
            "encode", "old.cbf", "-o", "raw.cbf", "--coding", "raw", "--sign", "k",
        ],
    ));
    // What was written verifies with the public key, checked by the library.
    let pk = public_key(&d.join("k.pub"));
    for f in ["old.cbf", "new.cbf", "d.cbf", "raw.cbf"] {
        let bytes = std::fs::read(d.join(f)).unwrap();
        verify_frame(&bytes, &[pk], &DecodeLimits::default())
            .unwrap_or_else(|e| panic!("{f}: {e}"));
    }

    // Reading with --verify: the signed frames are taken...
    let q = ok(&cbloom(
        d,
        &["query", "old.cbf", "key-7", "--verify", "k.pub"],
    ));
    assert!(q.contains("present"), "{q}");
    ok(&cbloom(
        d,
        &[
            "apply",
            "old.cbf",
            "d.cbf",
            "-o",
            "applied.cbf",
            "--verify",
            "k.pub",
            "--sign",
            "k",
        ],
    ));
    let q = ok(&cbloom(
        d,
        &["query", "applied.cbf", "extra-2", "--verify", "k.pub"],
    ));
    assert!(q.contains("present"), "{q}");
    ok(&cbloom(
        d,
        &["decode", "old.cbf", "-o", "bits", "--verify", "k.pub"],
    ));
    // ... and each other frame is refused, saying why.
    refused(
        &cbloom(d, &["query", "plain.cbf", "key-7", "--verify", "k.pub"]),
        "not signed",
    );
    refused(
        &cbloom(
            d,
            &["decode", "old.cbf", "-o", "x", "--verify", "other.pub"],
        ),
        "not among",
    );
    let mut bad = std::fs::read(d.join("old.cbf")).unwrap();
    *bad.last_mut().unwrap() ^= 1;
    std::fs::write(d.join("bad.cbf"), &bad).unwrap();
    refused(
        &cbloom(d, &["inspect", "bad.cbf", "--verify", "k.pub"]),
        "does not verify",
    );
    // Several keys: a frame signed by any of them is taken.
    ok(&cbloom(
        d,
        &[
            "query",
            "old.cbf",
            "key-7",
            "--verify",
            "other.pub",
            "--verify",
            "k.pub",
        ],
    ));
    // Without --verify a signed frame reads as any other.
    ok(&cbloom(d, &["query", "bad.cbf", "key-7"]));

    // inspect names the signer, in text and JSON, and the check's result.
    let id = &std::fs::read_to_string(d.join("k.pub")).unwrap()[..16];
    let text = ok(&cbloom(d, &["inspect", "old.cbf"]));
    assert!(text.contains(&format!("signed by key    {id}")), "{text}");
    let json = ok(&cbloom(d, &["inspect", "d.cbf", "--json"]));
    assert!(json.contains(&format!("\"signer\":\"{id}\"")), "{json}");
    let out = cbloom(d, &["inspect", "old.cbf", "--verify", "k.pub"]);
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("signature: verified, key {id}"))
    );
}
