//! Writes the golden frames of format type 4, static coded
//! (tests/vectors/v3_static_*.cbf) and their list, golden_static.txt: frames
//! of filters built from keys, and of synthetic bit arrays that reach every
//! branch of the format (constant blocks of 0s and 1s, runs with either
//! minority, bytes with 1, 2, 4 and 8 lanes and with a top nibble of 0 or
//! 15, a last block whose length is not a multiple of 8, block_log 16, 20,
//! 22 and 40). Run by `tools/make_golden_static.sh`, which decodes each frame
//! with tools/ref_kinds.py (written from docs/FORMAT.md alone) and checks
//! the bits against the same array computed in Python. Golden vectors are
//! a contract: rerun only with a format change.
//!
//! A synthetic array: bit i is 1 iff ((i · 0x9E3779B97F4A7C15) mod 2^64)
//! >> 32 is below T[i >> SEGLOG], the thresholds T in units of 2^-32.

use compressed_bloom::coder::static_coded::{Choice, Mode};
use compressed_bloom::format::{encode_static, encode_static_with};
use compressed_bloom::kinds::partitioned::encode_partitioned_static;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::{BloomFilter, FilterParams};

/// Threshold of density d, in units of 2^-32 (d = 1 gives 2^32: every bit).
fn t(d: f64) -> u64 {
    (d * 4_294_967_296.0).round() as u64
}

/// The synthetic array of m bits with per-segment thresholds.
pub fn synth(m: u64, seglog: u32, thresholds: &[u64]) -> Vec<u8> {
    let mut bytes = vec![0u8; m.div_ceil(8) as usize];
    for i in 0..m {
        let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        if h < thresholds[(i >> seglog) as usize] {
            bytes[(i / 8) as usize] |= 1 << (i % 8);
        }
    }
    bytes
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/vectors".into());
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(format!("{dir}/{name}.cbf"), bytes).unwrap();
        println!("{name} {} bytes", bytes.len());
        assert_eq!(bytes[3], 4, "{name} is not type 4");
    };
    let mut list = String::from(
        "# name kind m k seed n source: `keys` (key-1..key-N) or `synth SEGLOG T0,T1,..` \
         (bit i is 1 iff ((i*0x9E3779B97F4A7C15) mod 2^64) >> 32 < T[i >> SEGLOG]), then `bytes` if the encoder was told mode 1\n",
    );
    let keys = |n: u64| (1..=n).map(|i| format!("key-{i}"));
    for (name, m, k, seed, n) in [
        ("v3_static_keys_dense", 80_000u64, 6u32, 0u64, 10_000u64),
        ("v3_static_keys_sparse", 140_000, 2, 1, 1000),
    ] {
        let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
        for key in keys(n) {
            f.insert(key.as_bytes());
        }
        write(name, &encode_static(&f));
        list.push_str(&format!("{name} 0 {m} {k} {seed} {n} keys\n"));
    }
    let mut p = PartitionedBloomFilter::new(FilterParams::new(3000, 3, 5)).unwrap();
    for key in keys(200) {
        p.insert(key.as_bytes());
    }
    write("v3_static_part", &encode_partitioned_static(&p));
    list.push_str("v3_static_part 2 3000 3 5 200 keys\n");
    // Synthetic arrays, with the encoder's choices fixed where the default
    // would not reach a branch.
    let cases: [(&str, u64, u32, Vec<u64>, u8); 6] = [
        // Small enough to print in docs/FORMAT.md section 7: one block in
        // mode 0 and one in mode 1 (one lane).
        ("v3_static_tiny_runs", 1000, 16, vec![t(0.004)], 16),
        ("v3_static_tiny_bytes", 1024, 16, vec![t(0.25)], 16),
        (
            // Blocks of 2^16: 0s, 1s, runs of 0s, bytes, bytes with top
            // nibble 15, runs of 1s, and a last block of 1001 bits.
            "v3_static_synth",
            6 * 65_536 + 1001,
            16,
            vec![0, t(1.0), t(0.002), t(0.3), t(0.8), t(0.995), t(0.5)],
            16,
        ),
        (
            // Two blocks of 2^20: bytes and runs, four lanes each.
            "v3_static_lanes4",
            2 << 20,
            20,
            vec![t(0.07), t(0.0005)],
            20,
        ),
        ("v3_static_log40", 100_000, 20, vec![t(0.01)], 40),
        // One block of 2^22 bits in mode 1 (forced: the encoder would take
        // runs at this density), eight lanes.
        ("v3_static_lanes8", 1 << 22, 22, vec![t(0.002)], 22),
    ];
    for (name, m, seglog, ts, log) in cases {
        let bytes = synth(m, seglog, &ts);
        let f = BloomFilter::from_bytes(FilterParams::new(m, 1, 0), 0, &bytes).unwrap();
        let choice = Choice {
            block_log: Some(log),
            mode: (name == "v3_static_lanes8").then_some(Mode::Bytes),
        };
        let frame = encode_static_with(&f, choice);
        write(name, &frame);
        let tlist: Vec<String> = ts.iter().map(u64::to_string).collect();
        let forced = if choice.mode.is_some() { " bytes" } else { "" };
        list.push_str(&format!(
            "{name} 0 {m} 1 0 0 synth {seglog} {}{forced}\n",
            tlist.join(",")
        ));
    }
    std::fs::write(format!("{dir}/golden_static.txt"), list).unwrap();
}
