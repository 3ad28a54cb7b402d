//! What a subscriber of a large sparse filter spends per update: decoding
//! the full frame (a late joiner) and applying a delta of 0.1% churn, at
//! 10^7 keys with k = 1 and m = 10^11 (f ≈ 10^-4, the fleet benchmark's
//! filter; an 18.5 MB frame).
//!
//! Run: `cargo bench --bench sparse -- --warm-up-time 1 --measurement-time 5 --noplot`

use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::{AnyFilter, Coding, DecodeLimits, FilterParams, Kind, Subscriber};
use criterion::{criterion_group, criterion_main, Criterion};

const KEYS: u64 = 10_000_000;
const CHURN: u64 = KEYS / 1000;

fn filter(params: FilterParams, from: u64) -> SparseFilter {
    let keys = (from..from + KEYS).map(|i| i.to_le_bytes());
    SparseFilter::from_keys(params, keys).unwrap()
}

fn bench(c: &mut Criterion) {
    let params = FilterParams::new(100_000_000_000, 1, 7);
    let old = filter(params, 0);
    let new = filter(params, CHURN);
    let frame = old.encode_frame(Coding::Auto, None);
    let delta = SparseFilter::encode_delta(&old, &new, None).unwrap();
    let limits = DecodeLimits::default();
    let mut group = c.benchmark_group("sparse_1e7");
    group.sample_size(10);
    group.bench_function(format!("decode_full/{}B", frame.len()), |b| {
        b.iter(|| {
            let mut sub = Subscriber::<AnyFilter>::new(limits);
            sub.receive(std::hint::black_box(&frame)).unwrap();
            sub
        })
    });
    group.bench_function(format!("apply_delta/{}B", delta.len()), |b| {
        b.iter_batched_ref(
            || {
                let mut sub = Subscriber::<AnyFilter>::new(limits);
                sub.receive(&frame).unwrap();
                sub
            },
            |sub| sub.receive(std::hint::black_box(&delta)).unwrap(),
            criterion::BatchSize::LargeInput,
        )
    });
    group.bench_function("iterate", |b| {
        b.iter(|| old.positions().fold(0u64, |a, p| a ^ p))
    });
    group.bench_function("digest", |b| b.iter(|| old.digest()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
