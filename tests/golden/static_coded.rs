//! Golden vectors of format type 4, static coded (docs/FORMAT.md, "Type 4";
//! `tools/make_golden_static.sh`): frames whose bits `tools/ref_kinds.py`, a
//! decoder written from the document alone, decoded and checked against the
//! same array computed in Python from the keys or from a synthetic
//! formula. The crate must decode every frame to those bits (in memory and
//! streamed), rebuild the same array from the keys or the formula, and
//! write the same bytes again from it.

use crate::common;

use compressed_bloom::coder::static_coded::{Choice, Mode};
use compressed_bloom::decode_any;
use compressed_bloom::format::{encode_static, encode_static_with, stream};
use compressed_bloom::kinds::partitioned::encode_partitioned_static;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::AnyFilter;
use compressed_bloom::{BloomFilter, DecodeLimits, FilterParams, FilterType};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

/// The synthetic array of golden_static.txt: bit i is 1 iff
/// ((i · 0x9E3779B97F4A7C15) mod 2^64) >> 32 < T[i >> seglog].
fn synth(m: u64, seglog: u32, ts: &[u64]) -> Vec<u8> {
    let mut bytes = vec![0u8; m.div_ceil(8) as usize];
    for i in 0..m {
        if i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32 < ts[(i >> seglog) as usize] {
            bytes[(i / 8) as usize] |= 1 << (i % 8);
        }
    }
    bytes
}

#[test]
fn every_static_golden_decodes_to_the_reference_bits_and_re_encodes() {
    let list = std::fs::read_to_string(format!("{DIR}/golden_static.txt")).unwrap();
    let limits = DecodeLimits::unlimited();
    let mut seen = 0;
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let name = f[0];
        let (kind, m, k, seed, n): (u8, u64, u32, u64, u64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
            f[5].parse().unwrap(),
        );
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        let bits = std::fs::read(format!("{DIR}/{name}.bits")).unwrap();
        assert_eq!((frame[2], frame[3]), (3, 4), "{name}: version 3, type 4");
        let params = FilterParams::new(m, k, seed);
        match (decode_any(&frame, &limits).unwrap(), kind) {
            (AnyFilter::Standard(got), 0) => {
                assert_eq!(got.to_bytes(), bits, "{name}");
                assert_eq!(
                    stream::read_frame(&frame[..], &limits).unwrap(),
                    got,
                    "{name}"
                );
                let expected = if f[6] == "keys" {
                    let mut e = BloomFilter::new(params).unwrap();
                    for i in 1..=n {
                        e.insert(format!("key-{i}").as_bytes());
                    }
                    assert_eq!(encode_static(&e), frame, "{name}: re-encoded");
                    e
                } else {
                    let seglog: u32 = f[7].parse().unwrap();
                    let ts: Vec<u64> = f[8].split(',').map(|t| t.parse().unwrap()).collect();
                    let e = BloomFilter::from_bytes(params, n, &synth(m, seglog, &ts)).unwrap();
                    // The frame's block_log is the payload's first byte.
                    let at = compressed_bloom::inspect(&frame, &limits)
                        .unwrap()
                        .header_len;
                    let choice = Choice {
                        block_log: Some(frame[at]),
                        mode: (f.get(9) == Some(&"bytes")).then_some(Mode::Bytes),
                    };
                    assert_eq!(encode_static_with(&e, choice), frame, "{name}: re-encoded");
                    e
                };
                assert_eq!(got, expected, "{name}");
            }
            (AnyFilter::Partitioned(got), 2) => {
                assert_eq!(got.bits().to_bytes(), bits, "{name}");
                let mut e = PartitionedBloomFilter::new(params).unwrap();
                for i in 1..=n {
                    e.insert(format!("key-{i}").as_bytes());
                }
                assert_eq!(got, e, "{name}");
                assert_eq!(encode_partitioned_static(&e), frame, "{name}: re-encoded");
            }
            (other, _) => panic!("{name}: decoded as {:?}", other.kind()),
        }
        seen += 1;
    }
    assert_eq!(seen, 9);
}

#[test]
fn small_static_goldens_refuse_every_truncation_and_bit_flip() {
    for name in ["v3_static_part", "v3_static_keys_sparse"] {
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        common::assert_corruptions_refused(&frame, &DecodeLimits::default(), name);
    }
}

#[test]
fn type_4_is_unknown_in_versions_1_and_2() {
    let mut frame = std::fs::read(format!("{DIR}/v3_static_keys_sparse.cbf")).unwrap();
    // A version-3 header has a kind byte at offset 6 that version 1 and 2
    // lack; the type byte is checked first, right after the version.
    for version in [1u8, 2] {
        frame[2] = version;
        common::fix_crc(&mut frame);
        assert!(
            matches!(
                decode_any(&frame, &DecodeLimits::default()),
                Err(compressed_bloom::DecodeError::UnknownFilterType { .. })
            ),
            "version {version}"
        );
    }
    assert_eq!(FilterType::from_id(4, 2), None);
    assert_eq!(FilterType::from_id(4, 3), Some(FilterType::StaticCoded));
}

#[test]
fn the_frame_printed_in_format_md_is_the_golden_file() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
    let frame = std::fs::read(format!("{DIR}/v3_static_tiny_runs.cbf")).unwrap();
    let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        doc.contains(&format!("`{hex}`")),
        "FORMAT.md section 7 lacks {hex}"
    );
    let f = match decode_any(&frame, &DecodeLimits::default()).unwrap() {
        AnyFilter::Standard(f) => f,
        other => panic!("{:?}", other.kind()),
    };
    let ones: Vec<u64> = (0..f.m()).filter(|&i| f.bit(i)).collect();
    assert_eq!(ones, [0, 233, 466, 610, 843]);
}
