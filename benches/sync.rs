//! What a subscriber spends refusing a delta for another base, per kind,
//! while it holds a filter of 2^27 bits (10^6 positions for the sparse
//! kind): the frame's checks and a digest comparison, nothing in
//! proportion to the filter.
//!
//! Run: `cargo bench --bench sync -- --warm-up-time 1 --measurement-time 3 --noplot`

use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::SquidDigest;
use compressed_bloom::{
    AnyFilter, BloomFilter, Coding, CountingBloomFilter, DecodeLimits, FilterParams, Kind,
    Subscriber,
};
use criterion::{criterion_group, criterion_main, Criterion};

const M: u64 = 1 << 27;

fn keys(from: u64, count: u64) -> impl Iterator<Item = [u8; 8]> {
    (from..from + count).map(|i| i.to_le_bytes())
}

fn refusal<F: Kind>(c: &mut Criterion, name: &str, held: F, a: F, b: F) {
    let limits = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let mut sub = Subscriber::<AnyFilter>::new(limits);
    sub.receive(&held.encode_frame(Coding::Auto, None)).unwrap();
    let delta = F::encode_delta(&a, &b, None).unwrap();
    assert!(sub.receive(&delta).is_err());
    c.bench_function(
        &format!("wrong_base_refusal/{name}/{}B", delta.len()),
        |bench| bench.iter(|| sub.receive(std::hint::black_box(&delta)).is_err()),
    );
}

fn bench(c: &mut Criterion) {
    let p = FilterParams::new(M, 2, 7);
    let standard = |from| {
        let mut f = BloomFilter::new(p).unwrap();
        keys(from, 1_000).for_each(|k| f.insert(&k));
        f
    };
    refusal(
        c,
        "standard",
        standard(0),
        standard(10_000),
        standard(20_000),
    );
    let partitioned = |from| {
        let mut f = PartitionedBloomFilter::new(p).unwrap();
        keys(from, 1_000).for_each(|k| f.insert(&k));
        f
    };
    refusal(
        c,
        "partitioned",
        partitioned(0),
        partitioned(10_000),
        partitioned(20_000),
    );
    let counting = |from| {
        let mut f = CountingBloomFilter::new(p).unwrap();
        keys(from, 1_000).for_each(|k| f.insert(&k));
        f
    };
    refusal(
        c,
        "counting",
        counting(0),
        counting(10_000),
        counting(20_000),
    );
    let scalable = |from, count| {
        let mut f = ScalableBloomFilter::new(ScalablePolicy::new(10_000_000, 0.01), 7).unwrap();
        keys(from, count).for_each(|k| f.insert(&k));
        f
    };
    refusal(
        c,
        "scalable",
        scalable(0, 1_000),
        scalable(10_000, 1_000),
        scalable(10_000, 2_000),
    );
    let sp = FilterParams::new(1 << 40, 1, 7);
    let sparse = |from, count| SparseFilter::from_keys(sp, keys(from, count)).unwrap();
    refusal(
        c,
        "sparse",
        sparse(0, 1_000_000),
        sparse(2_000_000, 1_000),
        sparse(3_000_000, 1_000),
    );
    let squid = |from| {
        let mut d = SquidDigest::new(4_000_000, 32).unwrap();
        keys(from, 1_000).for_each(|k| d.add_key(&k));
        d
    };
    refusal(c, "squid", squid(0), squid(10_000), squid(20_000));
}

criterion_group!(benches, bench);
criterion_main!(benches);
