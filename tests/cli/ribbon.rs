//! `cbloom build --type ribbon`, `query` and `inspect` on a ribbon frame.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cbloom(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cbloom"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn build_query_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.cbf");
    let out = out.to_str().unwrap();
    let keys: String = (0..2000).map(|i| format!("key-{i}\n")).collect();
    let o = cbloom(
        &[
            "build", "--type", "ribbon", "--keys", "-", "--fpr", "0.01", "-o", out,
        ],
        keys.as_bytes(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cbloom(&["query", out, "--keys", "-", "--count"], keys.as_bytes());
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("present 2000"));
    let o = cbloom(&["inspect", out, "--json"], b"");
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ribbon"]["columns"], 6);
    assert!((v["expected_fpr"].as_f64().unwrap() - 0.01).abs() < 0.001);
    // Rows and columns follow from the rate: --m/--k are refused.
    let o = cbloom(
        &[
            "build", "--type", "ribbon", "--keys", "-", "--m", "1000", "--k", "3", "-o", out,
        ],
        keys.as_bytes(),
    );
    assert!(!o.status.success());
}
