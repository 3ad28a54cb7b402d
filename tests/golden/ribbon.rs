//! Ribbon-kind golden vectors (docs/FORMAT.md section 8.5): frames whose
//! answers to member and non-member queries `tools/ref_ribbon.py`, a
//! decoder written from the document alone, computed
//! (`tools/make_golden_ribbon.sh`). The crate must decode each frame to
//! the same answers, rebuild it byte for byte from the keys, and reject
//! every truncation and every single-bit flip.

use crate::common;

use compressed_bloom::kinds::ribbon::decode_ribbon;
use compressed_bloom::kinds::ribbon::encode_ribbon;
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
    assert_eq!(seen, 8);
}

/// The construction rules of FORMAT.md section 8.5 that decide bytes, as
/// the two vectors made for them show: a tie between two counts of upper
/// blocks goes to the larger; a retry adds a thousandth of the current
/// rows (compounding), and U is chosen from the rows after retries.
#[test]
fn ribbon_goldens_pin_the_tie_and_retry_rules() {
    let lim = DecodeLimits::default();
    let read = |name: &str| {
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        decode_ribbon(&frame, &lim).unwrap()
    };
    // One 128-row shard at f = 3/8: rates 1/2 (U = 0) and 1/4 (U = 1) are
    // equally far from f.
    let tie = read("ribbon_tie");
    assert_eq!((tie.rows(), tie.columns(), tie.blocks()), (128, 1, 1));
    assert_eq!(tie.upper_blocks(), 1);
    // 992 keys plan 992 + 8 = 1000 rows; two failures make 1001, then
    // 1001 + ⌈1001/1000⌉ = 1003 (1002 from the first count).
    let retry = read("ribbon_retry");
    let shards: Vec<_> = retry.shards().map(|s| (s.rows, s.cseed)).collect();
    assert_eq!(shards, [(1003, 2)]);
    // At 1003 rows (876 start rows) f = 0.01515 is closest to U = 1; at
    // the planned 1000 rows (873) it would be U = 2.
    assert_eq!(retry.upper_blocks(), 1);
}
