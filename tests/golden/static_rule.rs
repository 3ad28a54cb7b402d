//! Type-4 golden vectors that the encoder's own rule produces
//! (docs/FORMAT.md section 3, "Type 4", "Encoding"): the arrays of
//! `v3_static_tiny_runs` and `v3_static_tiny_bytes`, written by
//! `encode_static` with no choice made by the caller, so block_log is the
//! rule's (23 for m = 1000 and m = 1024) and the mode the density's.
//! `tests/vectors/golden_static_rule.txt` lists them; `tools/ref_kinds.py
//! decode` gives `NAME.bits`, and section 7 prints both frames in hex.

use compressed_bloom::format::encode_static;
use compressed_bloom::{decode_any, AnyFilter, BloomFilter, DecodeLimits, FilterParams};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

/// The synthetic array of golden_static.txt (one threshold).
fn synth(m: u64, t: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; m.div_ceil(8) as usize];
    for i in 0..m {
        if i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32 < t {
            bytes[(i / 8) as usize] |= 1 << (i % 8);
        }
    }
    bytes
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn the_encoders_own_type_4_frames_are_golden() {
    let list = std::fs::read_to_string(format!("{DIR}/golden_static_rule.txt")).unwrap();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md"))
        .unwrap()
        .replace(['\n', ' ', '`'], "");
    let mut seen = 0;
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (name, m, t, block_log, mode) = (
            f[0],
            f[1].parse::<u64>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<u8>().unwrap(),
            f[4].parse::<u8>().unwrap(),
        );
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        let bits = std::fs::read(format!("{DIR}/{name}.bits")).unwrap();
        let array = synth(m, t);
        assert_eq!(bits, array, "{name}: the reference decoder's bits");
        let filter = BloomFilter::from_bytes(FilterParams::new(m, 1, 0), 0, &array).unwrap();
        assert_eq!(encode_static(&filter), frame, "{name}: the encoder's bytes");
        let h = compressed_bloom::inspect(&frame, &DecodeLimits::default()).unwrap();
        assert_eq!(frame[h.header_len], block_log, "{name}: block_log");
        assert_eq!(frame[h.header_len + 1], mode, "{name}: the block's mode");
        match decode_any(&frame, &DecodeLimits::default()).unwrap() {
            AnyFilter::Standard(got) => assert_eq!(got, filter, "{name}"),
            other => panic!("{name}: {:?}", other.kind()),
        }
        assert!(
            doc.contains(&hex(&frame)),
            "{name}: FORMAT.md section 7 prints it"
        );
        seen += 1;
    }
    assert_eq!(seen, 2);
    // The mode-1 vector and the Squid frame of section 7 are printed too.
    for name in ["v3_static_tiny_bytes", "v3_squid"] {
        let frame = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
        assert!(
            doc.contains(&hex(&frame)),
            "{name}: FORMAT.md section 7 prints it"
        );
    }
}
