//! Writes the version-3 golden frames (tests/vectors/v3_*.cbf): the
//! partitioned and sparse kinds and frames with an update identity (the
//! standard, sparse and partitioned kinds); and
//! version-1 frames of explicit bit sets that reach the coder's edge cases
//! (tests/vectors/edge_*.cbf, listed in golden_edges.txt). Run by
//! `tools/make_golden_v3.sh`, which decodes each with tools/ref_kinds.py
//! (written from docs/FORMAT.md alone) and checks it against the filter
//! computed from the keys in Python. Golden vectors are a contract: rerun
//! only with a format change.

use compressed_bloom::format::encode_with_identity;
use compressed_bloom::kinds::partitioned::encode_partitioned;
use compressed_bloom::kinds::sparse::encode_sparse;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::{delta, encode, BloomFilter, Coding, FilterParams, Kind as _, UpdateId};

fn keys(from: u64, to: u64) -> impl Iterator<Item = String> {
    (from..=to).map(|i| format!("key-{i}"))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/vectors".into());
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(format!("{dir}/{name}.cbf"), bytes).unwrap();
        println!("{name} {}", bytes.len());
    };
    for (name, m, k, seed, n) in [
        ("v3_part_k3", 3000u64, 3u32, 5u64, 200u64),
        ("v3_part_raw", 96, 4, 1, 30),
    ] {
        let mut f = PartitionedBloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
        for key in keys(1, n) {
            f.insert(key.as_bytes());
        }
        write(name, &encode_partitioned(&f));
    }
    for (name, m, k, seed, n) in [
        ("v3_sparse_k1", 1u64 << 40, 1u32, 2u64, 500u64),
        ("v3_sparse_empty", 1000, 2, 0, 0),
        ("v3_sparse_dense", 5000, 2, 3, 300),
    ] {
        let f = SparseFilter::from_keys(FilterParams::new(m, k, seed), keys(1, n)).unwrap();
        write(name, &encode_sparse(&f));
    }
    // A sparse delta from v3_sparse_dense to the keys key-51..key-350.
    let sp = FilterParams::new(5000, 2, 3);
    let old = SparseFilter::from_keys(sp, keys(1, 300)).unwrap();
    let new = SparseFilter::from_keys(sp, keys(51, 350)).unwrap();
    write(
        "v3_sparse_delta",
        &compressed_bloom::kinds::sparse::encode_delta_sparse(&old, &new).unwrap(),
    );
    // Coder edge cases (docs/FORMAT.md section 3.3), as plain version-1
    // frames of explicit bit sets: an escape that ends exactly at the block
    // end (then one zero-length bucket symbol), a minority bit at B − 1
    // (likewise), and runs coded with t = 17 (low bits in two uniform
    // chunks, 12 and 5 bits) in a one-block, four-lane filter.
    let edges: [(&str, u64, &[u64]); 3] = [
        ("edge_escape_at_end", 726, &[]),
        ("edge_minority_at_end", 1000, &[3, 500, 999]),
        (
            "edge_t17_two_chunks",
            (1 << 23) - 1,
            &[1402531, 2519240, 3635949, 6155189, 7271898],
        ),
    ];
    let mut list = String::from(
        "# name m one-positions (k = 1, seed 0, n = 0; frames of explicit bit sets)\n",
    );
    for (name, m, ones) in edges {
        let p = FilterParams::new(m, 1, 0);
        let mut bytes = vec![0u8; m.div_ceil(8) as usize];
        for &i in ones {
            bytes[(i / 8) as usize] |= 1 << (i % 8);
        }
        let f = BloomFilter::from_bytes(p, 0, &bytes).unwrap();
        write(name, &encode(&f));
        let pos: Vec<String> = ones.iter().map(u64::to_string).collect();
        list.push_str(&format!("{name} {m} {}\n", pos.join(" ")));
    }
    std::fs::write(format!("{dir}/golden_edges.txt"), list).unwrap();
    // A standard filter with an identity, and a delta (identity seq 1) from
    // it to the keys key-51..key-1050.
    let p = FilterParams::new(14_000, 2, 0);
    let mut a = BloomFilter::new(p).unwrap();
    for key in keys(1, 1000) {
        a.insert(key.as_bytes());
    }
    let mut b = BloomFilter::new(p).unwrap();
    for key in keys(51, 1050) {
        b.insert(key.as_bytes());
    }
    let id = UpdateId {
        stream: 7,
        epoch: 3,
        seq: 0,
    };
    write("v3_ident_full", &encode_with_identity(&a, id));
    write(
        "v3_ident_delta",
        &delta::encode_delta_with_identity(&a, &b, UpdateId { seq: 1, ..id }).unwrap(),
    );
    // The same identity on the sparse and partitioned kinds (the filters
    // of v3_sparse_dense and v3_part_k3).
    let sparse = SparseFilter::from_keys(sp, keys(1, 300)).unwrap();
    write(
        "v3_ident_sparse",
        &sparse.encode_frame(Coding::Auto, Some(id)),
    );
    let mut part = PartitionedBloomFilter::new(FilterParams::new(3000, 3, 5)).unwrap();
    for key in keys(1, 200) {
        part.insert(key.as_bytes());
    }
    write(
        "v3_ident_part",
        &part.encode_frame(Coding::Adaptive, Some(id)),
    );
}
