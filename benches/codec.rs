//! Criterion benches of the coders, by m and density: type 1 (`encode`,
//! `decode`) and type 4, static coded (`static-encode`, `static-decode`);
//! throughput is in bytes of uncompressed filter. `cargo bench --bench
//! codec`.

use compressed_bloom::coder::static_coded;
use compressed_bloom::{coder, BloomFilter, FilterParams};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

fn filter(n: u64, m: u64, k: u32) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(m, k, 1)).unwrap();
    for i in 0..n {
        f.insert(&i.to_le_bytes());
    }
    f
}

fn bench(c: &mut Criterion) {
    // (m, n, k): densities 0.133 (m/n = 14, k = 2), 0.011 (m/n = 92, k = 1)
    // and 0.53 (m/n = 8, k = 6).
    let cases: &[(u64, u64, u32)] = &[
        (140_000, 10_000, 2),
        (920_000, 10_000, 1),
        (80_000, 10_000, 6),
        (28_000_000, 2_000_000, 2),
        (140_000_000, 10_000_000, 2),
    ];
    for &(m, n, k) in cases {
        let f = filter(n, m, k);
        let density = f.fill_ratio();
        let mut payload = Vec::new();
        coder::encode(f.as_words(), m, &mut payload);
        let mut fixed = Vec::new();
        static_coded::encode(f.as_words(), m, &mut fixed);
        let mut g = c.benchmark_group(format!("m={m} density={density:.3}"));
        g.throughput(Throughput::Bytes(m.div_ceil(8)));
        if m > 10_000_000 {
            g.sample_size(10);
        }
        for threads in [1usize, 2] {
            g.bench_function(BenchmarkId::new("encode", threads), |b| {
                b.iter(|| {
                    let mut out = Vec::with_capacity(payload.len());
                    coder::encode_with_threads(black_box(f.as_words()), m, &mut out, threads);
                    out
                })
            });
            g.bench_function(BenchmarkId::new("decode", threads), |b| {
                // One output buffer for every iteration: the decoder
                // overwrites it, as a receiver reusing its filter would.
                let mut words = vec![0u64; f.as_words().len()];
                b.iter(|| {
                    coder::decode_with_threads(black_box(&payload), m, &mut words, threads)
                        .unwrap();
                })
            });
            let choice = static_coded::Choice::default();
            g.bench_function(BenchmarkId::new("static-encode", threads), |b| {
                b.iter(|| {
                    let mut out = Vec::with_capacity(fixed.len());
                    static_coded::encode_with(
                        black_box(f.as_words()),
                        m,
                        &mut out,
                        threads,
                        choice,
                    );
                    out
                })
            });
            g.bench_function(BenchmarkId::new("static-decode", threads), |b| {
                // One output buffer for every iteration: the decoder
                // overwrites it, as a receiver reusing its filter would.
                let mut words = vec![0u64; f.as_words().len()];
                b.iter(|| {
                    static_coded::decode_with_threads(black_box(&fixed), m, &mut words, threads)
                        .unwrap();
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
