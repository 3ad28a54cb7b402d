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

/// `cbloom build --type ribbon` at f = 2^-8 and 2^-20 on 2·10^5 keys, by
/// default and with `--fast`: at most 3% over log2(1/f) bits per key on
/// the wire, every member present, and the false positives of 10^6
/// non-members within 5 standard deviations of the rate `inspect` reports
/// (each non-member matches independently with that probability; 2^-20
/// expects about one). The default frame is the smaller one.
#[test]
fn frames_cost_log2_one_over_f_and_keep_their_rate() {
    let dir = tempfile::tempdir().unwrap();
    let n = 200_000u64;
    let keys: String = (0..n).map(|i| format!("member-{i}\n")).collect();
    let strangers: String = (0..1_000_000).map(|i| format!("stranger-{i}\n")).collect();
    let present = |o: &Output| -> f64 {
        let s = String::from_utf8_lossy(&o.stdout);
        let at = s.find("present ").expect("a count") + "present ".len();
        s[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    for (arg, f) in [("2^-8", 0.5f64.powi(8)), ("2^-20", 0.5f64.powi(20))] {
        let mut sizes = Vec::new();
        for how in ["", "--fast"] {
            let out = dir.path().join(format!("r{arg}{how}.cbf"));
            let out = out.to_str().unwrap();
            let mut args = vec![
                "build", "--type", "ribbon", "--keys", "-", "--fpr", arg, "-o", out,
            ];
            args.extend(Some(how).filter(|h| !h.is_empty()));
            let o = cbloom(&args, keys.as_bytes());
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let bytes = std::fs::metadata(out).unwrap().len();
            sizes.push(bytes);
            let bits = bytes as f64 * 8.0 / n as f64;
            assert!(
                bits <= 1.03 * (1.0 / f).log2(),
                "{arg} {how}: {bits:.3} bits per key"
            );
            let o = cbloom(&["query", out, "--keys", "-", "--count"], keys.as_bytes());
            assert_eq!(present(&o), n as f64, "{arg}");
            let o = cbloom(&["inspect", out, "--json"], b"");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let expected = v["expected_fpr"].as_f64().unwrap();
            assert!((expected / f - 1.0).abs() < 0.01, "{arg}: {expected}");
            let o = cbloom(
                &["query", out, "--keys", "-", "--count"],
                strangers.as_bytes(),
            );
            let mean = 1e6 * expected;
            let hits = present(&o);
            assert!(
                (hits - mean).abs() <= 5.0 * mean.sqrt().max(1.0),
                "{arg} {how}: {hits} false positives, {mean:.1} expected"
            );
        }
        assert!(sizes[0] < sizes[1], "{arg}: {sizes:?}");
    }
    // --fast is the ribbon kind's alone.
    let file = dir.path().join("keys.txt");
    std::fs::write(&file, &keys).unwrap();
    let o = cbloom(
        &[
            "build",
            "--keys",
            file.to_str().unwrap(),
            "--fpr",
            "0.01",
            "--fast",
            "-o",
            "-",
        ],
        b"",
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--fast applies to the ribbon kind"));
}

/// `cbloom plan --needs`: a static set goes as a ribbon filter; a receiver
/// that takes deltas gets a Bloom kind, with the ribbon kind among the
/// alternatives as the one without deltas; the default output is unchanged.
#[test]
fn plan_chooses_the_kind_for_the_receiver() {
    let plan = |needs: &str| -> serde_json::Value {
        let o = cbloom(
            &[
                "plan", "--n", "1e5", "--fpr", "0.001", "--needs", needs, "--json",
            ],
            b"",
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = plan("static");
    assert_eq!(v["recommended"]["kind"], "ribbon");
    assert!(v["build"].as_str().unwrap().contains("--type ribbon"));
    let best = v["recommended"]["expected_bytes"].as_f64().unwrap();
    for alt in v["alternatives"].as_array().unwrap() {
        assert!(best <= alt["expected_bytes"].as_f64().unwrap(), "{alt}");
    }
    let v = plan("delta");
    let kind = v["recommended"]["kind"].as_str().unwrap();
    assert!(
        ["standard", "partitioned", "sparse"].contains(&kind),
        "{kind}"
    );
    let ribbon = v["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "ribbon")
        .unwrap();
    assert_eq!(ribbon["lacks"], "deltas");
    assert_eq!(plan("counting")["recommended"]["kind"], "counting");
    assert_eq!(plan("growth")["recommended"]["kind"], "scalable");
    // No kind removes keys and grows.
    let o = cbloom(
        &[
            "plan",
            "--n",
            "1e5",
            "--fpr",
            "0.001",
            "--needs",
            "counting,growth",
        ],
        b"",
    );
    assert!(!o.status.success());
    // The table names the choice and how to build it.
    let o = cbloom(
        &["plan", "--n", "1e5", "--bytes", "2e5", "--needs", "static"],
        b"",
    );
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("recommended: ribbon")
            && s.contains("cbloom build --type ribbon --bytes 200000"),
        "{s}"
    );
}
