//! Property tests (quickcheck) of the in-memory filter.

use crate::common;

use compressed_bloom::{BloomFilter, FilterParams, MAX_K};
use quickcheck::TestResult;

fn params(m: u32, k: u8, seed: u64) -> FilterParams {
    FilterParams::new(u64::from(m % 20_000) + 1, u32::from(k) % MAX_K + 1, seed)
}

fn build(p: FilterParams, keys: &[Vec<u8>]) -> BloomFilter {
    let mut f = BloomFilter::new(p).unwrap();
    for key in keys {
        f.insert(key);
    }
    f
}

#[test]
fn no_false_negatives() {
    fn prop(m: u32, k: u8, seed: u64, keys: Vec<Vec<u8>>) -> bool {
        let f = build(params(m, k, seed), &keys);
        keys.iter().all(|key| f.contains(key))
    }
    common::qc(500, 0x5EED_0001).quickcheck(prop as fn(_, _, _, _) -> bool);
}

#[test]
fn union_equals_filter_of_union() {
    fn prop(m: u32, k: u8, seed: u64, a: Vec<Vec<u8>>, b: Vec<Vec<u8>>) -> bool {
        let p = params(m, k, seed);
        let mut fa = build(p, &a);
        fa.union_with(&build(p, &b)).unwrap();
        let all: Vec<Vec<u8>> = a.iter().chain(&b).cloned().collect();
        fa.as_words() == build(p, &all).as_words()
    }
    common::qc(300, 0x5EED_0002).quickcheck(prop as fn(_, _, _, _, _) -> bool);
}

#[test]
fn same_keys_and_seed_give_identical_bytes_and_order_does_not_matter() {
    fn prop(m: u32, k: u8, seed: u64, keys: Vec<Vec<u8>>) -> TestResult {
        let p = params(m, k, seed);
        let f1 = build(p, &keys);
        let mut rev = keys.clone();
        rev.reverse();
        let f2 = build(p, &rev);
        TestResult::from_bool(f1.to_bytes() == f2.to_bytes() && f1 == build(p, &keys))
    }
    common::qc(300, 0x5EED_0003).quickcheck(prop as fn(_, _, _, _) -> TestResult);
}

#[test]
fn different_seeds_give_different_filters() {
    // Not a property of every input (tiny filters collide), so one fixed case.
    let keys: Vec<Vec<u8>> = (0..100u32).map(|i| i.to_le_bytes().to_vec()).collect();
    let a = build(FilterParams::new(10_000, 3, 1), &keys);
    let b = build(FilterParams::new(10_000, 3, 2), &keys);
    assert_ne!(a.as_words(), b.as_words());
}

#[test]
fn empty_filter_and_edge_parameters() {
    // n = 0: nothing is present, the estimate is 0, the fill is 0.
    let f = BloomFilter::new(FilterParams::new(1000, 5, 0)).unwrap();
    assert!(!f.contains(b"") && !f.contains(b"x"));
    assert_eq!(
        (f.count_ones(), f.estimated_len(), f.expected_fpr()),
        (0, 0.0, 0.0)
    );
    // m = 1 and k = MAX_K together, the empty key.
    let mut g = BloomFilter::new(FilterParams::new(1, MAX_K, u64::MAX)).unwrap();
    g.insert(b"");
    assert!(g.contains(b""));
    assert_eq!(g.fill_ratio(), 1.0);
}
