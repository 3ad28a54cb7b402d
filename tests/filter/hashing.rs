//! The hash and position scheme against vectors computed independently from
//! docs/FORMAT.md with the reference XXH3 C library (tools/gen_hash_vectors.py).

use compressed_bloom::{BloomFilter, FilterParams, KeyHash};

/// (key, seed, m, k, h1, h2, positions)
type Vector = (Vec<u8>, u64, u64, u32, u64, u64, Vec<u64>);

fn vectors() -> Vec<Vector> {
    include_str!("../vectors/hash_positions.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let key = if f[0] == "-" {
                Vec::new()
            } else {
                (0..f[0].len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&f[0][i..i + 2], 16).unwrap())
                    .collect()
            };
            let pos = f[6].split(',').map(|p| p.parse().unwrap()).collect();
            (
                key,
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
                pos,
            )
        })
        .collect()
}

#[test]
fn positions_match_reference_vectors() {
    let v = vectors();
    assert_eq!(v.len(), 168, "vector file is complete");
    for (key, seed, m, k, h1, h2, pos) in v {
        let h = KeyHash::new(&key, seed);
        assert_eq!((h.h1, h.h2), (h1, h2), "key {key:02x?} seed {seed}");
        let got: Vec<u64> = h.positions(m, k).collect();
        assert_eq!(got, pos, "key {key:02x?} seed {seed} m {m} k {k}");
    }
}

#[test]
fn filter_sets_exactly_the_vector_positions() {
    for (key, seed, m, k, _, _, pos) in vectors().into_iter().filter(|v| v.2 <= 1 << 20) {
        let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
        f.insert(&key);
        for i in 0..m {
            assert_eq!(f.bit(i), pos.contains(&i), "bit {i}");
        }
    }
}
