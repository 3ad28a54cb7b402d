//! Ribbon-kind golden vectors (docs/FORMAT.md section 8.5): frames whose
//! answers to member and non-member queries `tools/ref_ribbon.py`, a
//! decoder written from the document alone, computed
//! (`tools/make_golden_ribbon.sh`). The crate must decode each frame to
//! the same answers, rebuild it byte for byte from the keys, and reject
//! every truncation and every single-bit flip.

use crate::common;

use compressed_bloom::format::{decode_ribbon, encode_ribbon};
use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
use compressed_bloom::KeyHash;
use compressed_bloom::{format, DecodeLimits, FilterKind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

#[test]
fn ribbon_goldens() {
    let list = std::fs::read_to_string(format!("{DIR}/golden_ribbon.txt")).unwrap();
    let lim = DecodeLimits::default();
    let mut seen = 0;
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (name, fpr, seed, n) = (
            f[0],
            f[1].parse::<f64>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<u64>().unwrap(),
        );
        let how = match f[4] {
            "compact" => Build::Compact,
            "fast" => Build::Fast,
            other => panic!("{name}: unknown build {other}"),
        };
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        let h = format::inspect(&frame, &lim).unwrap();
        assert_eq!(
            (h.version, h.kind, h.params.seed, h.n),
            (3, FilterKind::Ribbon, seed, n)
        );
        let got = decode_ribbon(&frame, &lim).unwrap();
        let queries = std::fs::read_to_string(format!("{DIR}/{name}.queries")).unwrap();
        let answers = std::fs::read_to_string(format!("{DIR}/{name}.answers")).unwrap();
        let mut count = 0;
        for (q, a) in queries.lines().zip(answers.lines()) {
            assert_eq!(got.contains(q.as_bytes()), a == "1", "{name}: {q}");
            count += 1;
        }
        assert_eq!(count, queries.lines().count(), "{name}");
        let hashes: Vec<KeyHash> = (1..=n)
            .map(|i| KeyHash::new(format!("key-{i}").as_bytes(), seed))
            .collect();
        let built = RibbonFilter::from_hashes_with(&hashes, fpr, seed, how).unwrap();
        assert_eq!(
            encode_ribbon(&built),
            frame,
            "{name} re-encodes byte for byte"
        );
        if frame.len() < 4096 {
            common::assert_corruptions_refused(&frame, &lim, name);
        }
        seen += 1;
    }
    assert_eq!(seen, 6);
}
