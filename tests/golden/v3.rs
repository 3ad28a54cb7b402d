//! Version-3 golden vectors (docs/FORMAT.md sections 2.2, 5, 8.2, 8.4):
//! frames whose content `tools/ref_kinds.py`, a decoder written from the
//! document alone, decoded and cross-checked against the filter computed
//! from the keys in Python (`tools/make_golden_v3.sh`). The crate must
//! decode every frame to the same content, re-encode it byte for byte from
//! the keys, and reject every truncation and every single-bit flip.

use crate::common::caught_before_the_payload;
use compressed_bloom::decode_any;
use compressed_bloom::format::encode_with_identity;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::sparse::encode_sparse;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::AnyFilter;
use compressed_bloom::{
    delta, format, BloomFilter, Coding, DecodeError, DecodeLimits, FilterKind, FilterParams,
    Kind as _, UpdateId,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

struct Golden {
    name: String,
    kind: u8,
    m: u64,
    k: u32,
    seed: u64,
    n: u64,
    frame: Vec<u8>,
}

fn goldens() -> Vec<Golden> {
    let list = std::fs::read_to_string(format!("{DIR}/golden_v3.txt")).unwrap();
    list.lines()
        .filter(|l| !l.starts_with('#') && !l.ends_with("delta"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Golden {
                name: f[0].into(),
                kind: f[1].parse().unwrap(),
                m: f[2].parse().unwrap(),
                k: f[3].parse().unwrap(),
                seed: f[4].parse().unwrap(),
                n: f[5].parse().unwrap(),
                frame: std::fs::read(format!("{DIR}/{}.cbf", f[0])).unwrap(),
            }
        })
        .collect()
}

fn keys(from: u64, to: u64) -> impl Iterator<Item = String> {
    (from..=to).map(|i| format!("key-{i}"))
}

fn reference_bits(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}.bits")).unwrap()
}

fn reference_positions(name: &str) -> Vec<u64> {
    std::fs::read_to_string(format!("{DIR}/{name}.pos"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn v3_goldens_decode_to_the_reference_and_reencode_from_their_keys() {
    let lim = DecodeLimits::unlimited();
    let gs = goldens();
    assert_eq!(gs.len(), 8);
    // The v3_ident_* frames, of three kinds, carry this identity.
    let id = UpdateId {
        stream: 7,
        epoch: 3,
        seq: 0,
    };
    for g in &gs {
        let p = FilterParams::new(g.m, g.k, g.seed);
        let h = format::inspect(&g.frame, &lim).unwrap();
        assert_eq!(
            (h.version, h.kind.id(), h.params, h.n),
            (3, g.kind, p, g.n),
            "{}",
            g.name
        );
        let want_id = g.name.starts_with("v3_ident").then_some(id);
        assert_eq!(h.identity, want_id, "{}", g.name);
        match decode_any(&g.frame, &lim).unwrap() {
            AnyFilter::Partitioned(f) => {
                assert_eq!(f.bits().to_bytes(), reference_bits(&g.name), "{}", g.name);
                let mut rebuilt = PartitionedBloomFilter::new(p).unwrap();
                for key in keys(1, g.n) {
                    rebuilt.insert(key.as_bytes());
                }
                let coding = if g.frame[3] == 0 {
                    Coding::Raw
                } else {
                    Coding::Adaptive
                };
                assert_eq!(rebuilt.encode_frame(coding, want_id), g.frame, "{}", g.name);
            }
            AnyFilter::Sparse(f) => {
                assert_eq!(
                    f.positions().collect::<Vec<_>>(),
                    reference_positions(&g.name),
                    "{}",
                    g.name
                );
                let rebuilt = SparseFilter::from_keys(p, keys(1, g.n)).unwrap();
                assert_eq!(
                    rebuilt.encode_frame(Coding::Auto, want_id),
                    g.frame,
                    "{}",
                    g.name
                );
            }
            AnyFilter::Standard(f) => {
                assert_eq!(f.to_bytes(), reference_bits(&g.name), "{}", g.name);
                assert_eq!(encode_with_identity(&f, id), g.frame, "{}", g.name);
            }
            other => panic!("{}: unexpected {:?}", g.name, other.kind()),
        }
    }
}

#[test]
fn v3_identified_delta_applies_to_the_reference_result() {
    let lim = DecodeLimits::unlimited();
    let base_frame = std::fs::read(format!("{DIR}/v3_ident_full.cbf")).unwrap();
    let frame = std::fs::read(format!("{DIR}/v3_ident_delta.cbf")).unwrap();
    let mut base = format::decode(&base_frame, &lim).unwrap();
    let h = format::inspect(&frame, &lim).unwrap();
    assert_eq!(h.identity.map(|i| i.seq), Some(1));
    assert_eq!(h.kind, FilterKind::Standard);
    delta::apply(&mut base, &frame, &lim).unwrap();
    assert_eq!(base.to_bytes(), reference_bits("v3_ident_delta"));
    let mut expected = BloomFilter::new(*base.params()).unwrap();
    for key in keys(51, 1050) {
        expected.insert(key.as_bytes());
    }
    assert_eq!(base, expected);
}

#[test]
fn v3_sparse_delta_applies_to_the_reference_result() {
    let lim = DecodeLimits::unlimited();
    let base_frame = std::fs::read(format!("{DIR}/v3_sparse_dense.cbf")).unwrap();
    let frame = std::fs::read(format!("{DIR}/v3_sparse_delta.cbf")).unwrap();
    let mut base = compressed_bloom::kinds::sparse::decode_sparse(&base_frame, &lim).unwrap();
    compressed_bloom::kinds::sparse::apply_sparse(&mut base, &frame, &lim).unwrap();
    assert_eq!(
        base.positions().collect::<Vec<_>>(),
        reference_positions("v3_sparse_delta")
    );
    let p = FilterParams::new(5000, 2, 3);
    let old = SparseFilter::from_keys(p, keys(1, 300)).unwrap();
    let new = SparseFilter::from_keys(p, keys(51, 350)).unwrap();
    assert_eq!(base, new);
    assert_eq!(
        compressed_bloom::kinds::sparse::encode_delta_sparse(&old, &new).unwrap(),
        frame
    );
}

#[test]
fn every_truncation_and_bit_flip_of_a_v3_golden_is_rejected() {
    let lim = DecodeLimits::unlimited();
    let mut frames: Vec<(String, Vec<u8>)> =
        goldens().into_iter().map(|g| (g.name, g.frame)).collect();
    for name in ["v3_ident_delta", "v3_sparse_delta"] {
        frames.push((
            name.into(),
            std::fs::read(format!("{DIR}/{name}.cbf")).unwrap(),
        ));
    }
    for (name, frame) in &frames {
        let is_delta = name.ends_with("delta");
        let read = |bytes: &[u8]| {
            if is_delta {
                delta::inspect_delta(bytes, &lim).map(|_| ())
            } else {
                decode_any(bytes, &lim).map(|_| ())
            }
        };
        assert_eq!(read(frame), Ok(()), "{name}");
        for cut in 0..frame.len() {
            let r = read(&frame[..cut]);
            assert!(
                matches!(r, Err(DecodeError::Truncated { .. })),
                "{name}: cut at {cut}: {r:?}"
            );
        }
        for bit in 0..frame.len() * 8 {
            let mut f = frame.clone();
            f[bit / 8] ^= 1 << (bit % 8);
            let r = read(&f);
            assert!(
                matches!(&r, Err(e) if caught_before_the_payload(e)),
                "{name}: bit {bit} flipped: {r:?}"
            );
        }
    }
}

/// Version-1 frames of explicit bit sets that reach the coder's edges
/// (docs/FORMAT.md section 3.3): an escape ending exactly at the block end,
/// a minority bit at B − 1 (each followed by one zero-length bucket
/// symbol), and t = 17 runs whose low bits take two uniform chunks. The
/// reference decoder was checked against the listed positions when they
/// were generated (`tools/make_golden_v3.sh`).
#[test]
fn coder_edge_goldens_decode_to_their_listed_bits() {
    let list = std::fs::read_to_string(format!("{DIR}/golden_edges.txt")).unwrap();
    let mut seen = 0;
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (name, m) = (f[0], f[1].parse::<u64>().unwrap());
        let ones: Vec<u64> = f[2..].iter().map(|v| v.parse().unwrap()).collect();
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        let got = format::decode(&frame, &DecodeLimits::unlimited()).unwrap();
        assert_eq!(got.m(), m, "{name}");
        let got_ones: Vec<u64> = (0..m).filter(|&i| got.bit(i)).collect();
        assert_eq!(got_ones, ones, "{name}");
        assert_eq!(format::encode_with(&got, Coding::Adaptive), frame, "{name}");
        assert_eq!(frame[3], 1, "{name}: coded");
        for cut in 0..frame.len() {
            let r = format::decode(&frame[..cut], &DecodeLimits::unlimited());
            assert!(
                matches!(r, Err(DecodeError::Truncated { .. })),
                "{name}: cut {cut}: {:?}",
                r.err()
            );
        }
        seen += 1;
    }
    assert_eq!(seen, 3);
}

/// The frames printed in docs/FORMAT.md section 7 (so a reader without the
/// repository can check a decoder) decode to what the text says, and the
/// crate encodes the same bytes from the same content.
#[test]
fn frames_in_the_format_document_are_what_it_says() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let frames: Vec<Vec<u8>> = doc
        .split('`')
        .filter(|t| t.starts_with("cbf1") && t.len() > 30)
        .map(hex)
        .collect();
    // The fourth, of type 4, is tests/golden/static_coded.rs's.
    assert_eq!(frames.len(), 4, "four frames in section 7");
    let lim = DecodeLimits::unlimited();
    // 1. Version 1, coded, bits 3, 500, 999 of 1000.
    let f = format::decode(&frames[0], &lim).unwrap();
    assert_eq!((frames[0][2], frames[0][3]), (1, 1));
    assert_eq!(
        (0..1000).filter(|&i| f.bit(i)).collect::<Vec<u64>>(),
        [3, 500, 999]
    );
    assert_eq!(format::encode_with(&f, Coding::Adaptive), frames[0]);
    // 2. Partitioned, raw, key-1..key-30.
    let AnyFilter::Partitioned(p) = decode_any(&frames[1], &lim).unwrap() else {
        panic!("kind")
    };
    let mut rebuilt = PartitionedBloomFilter::new(FilterParams::new(96, 4, 1)).unwrap();
    for key in keys(1, 30) {
        rebuilt.insert(key.as_bytes());
    }
    assert_eq!(p, rebuilt);
    assert_eq!(p.bits().to_bytes(), hex("7bfd77f3b76bde8775dff46f"));
    // 3. Sparse, positions 3, 500, 999.
    let AnyFilter::Sparse(s) = decode_any(&frames[2], &lim).unwrap() else {
        panic!("kind")
    };
    assert_eq!(s.positions().collect::<Vec<_>>(), [3, 500, 999]);
    let same =
        SparseFilter::from_positions(FilterParams::new(1000, 1, 0), 3, vec![999, 3, 500]).unwrap();
    assert_eq!(encode_sparse(&same), frames[2]);
}
