//! A delta for another base is refused without reading or copying the
//! filter a subscriber holds, for every kind: the refusal allocates a few
//! bytes for the frame's header, never a copy of a 2^27-bit filter (or of
//! 10^6 sparse positions). One test in this binary, so the counting
//! allocator sees only its allocations.

use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::SquidDigest;
use compressed_bloom::{
    AnyFilter, BloomFilter, Coding, CountingBloomFilter, DecodeLimits, FilterParams, Kind,
    Subscriber, SyncError,
};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

const M: u64 = 1 << 27;
/// What a refusal may allocate: the error's text and the frame's parsed
/// header, nothing in proportion to the filter (16 MiB of bits here).
const REFUSAL_ALLOWANCE: usize = 4 * 1024;

fn keys(from: u64, count: u64) -> impl Iterator<Item = [u8; 8]> {
    (from..from + count).map(|i| i.to_le_bytes())
}

/// Holds `held` in a subscriber of kind `F` and of every kind, then
/// offers a delta from `a` to `b` (neither is `held`): it must be refused
/// as needing a full frame, allocating at most REFUSAL_ALLOWANCE bytes.
fn refuses_cheaply<F: Kind>(name: &str, held: &F, a: &F, b: &F) {
    let limits = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let full = held.encode_frame(Coding::Auto, None);
    let delta = F::encode_delta(a, b, None).expect("a delta between a and b");
    let mut typed = Subscriber::<F>::new(limits);
    typed.receive(&full).unwrap();
    let mut any = Subscriber::<AnyFilter>::new(limits);
    any.receive(&full).unwrap();
    for (who, peak, got, digest) in [
        {
            let mut got = None;
            let peak = peak_of(|| got = Some(typed.receive(&delta)));
            ("typed", peak, got.unwrap(), typed.digest())
        },
        {
            let mut got = None;
            let peak = peak_of(|| got = Some(any.receive(&delta)));
            ("any", peak, got.unwrap(), any.digest())
        },
    ] {
        assert!(
            matches!(got, Err(SyncError::NeedFull { .. })),
            "{name} ({who}): {got:?}"
        );
        assert_eq!(digest, Some(held.digest()), "{name} ({who}): state kept");
        println!(
            "{name} ({who}): refusal allocated {peak} bytes (delta frame {} bytes)",
            delta.len()
        );
        assert!(
            peak <= REFUSAL_ALLOWANCE,
            "{name} ({who}): the refusal allocated {peak} bytes"
        );
    }
}

#[test]
fn a_delta_for_another_base_is_refused_without_copying_the_filter() {
    let p = FilterParams::new(M, 2, 7);
    let standard = |from| {
        let mut f = BloomFilter::new(p).unwrap();
        keys(from, 1_000).for_each(|k| f.insert(&k));
        f
    };
    refuses_cheaply(
        "standard",
        &standard(0),
        &standard(10_000),
        &standard(20_000),
    );

    let partitioned = |from| {
        let mut f = PartitionedBloomFilter::new(p).unwrap();
        keys(from, 1_000).for_each(|k| f.insert(&k));
        f
    };
    refuses_cheaply(
        "partitioned",
        &partitioned(0),
        &partitioned(10_000),
        &partitioned(20_000),
    );

    let counting = |from| {
        let mut f = CountingBloomFilter::new(p).unwrap();
        keys(from, 1_000).for_each(|k| f.insert(&k));
        f
    };
    refuses_cheaply(
        "counting",
        &counting(0),
        &counting(10_000),
        &counting(20_000),
    );

    // One layer of about 2^27 bits (10^7 keys at 1%), as in a filter
    // planned for that many keys that holds few yet.
    let scalable = |from, count| {
        let mut f = ScalableBloomFilter::new(ScalablePolicy::new(10_000_000, 0.01), 7).unwrap();
        keys(from, count).for_each(|k| f.insert(&k));
        f
    };
    let held = scalable(0, 1_000);
    assert!(held.total_bits() >= 1 << 26, "{} bits", held.total_bits());
    refuses_cheaply(
        "scalable",
        &held,
        &scalable(10_000, 1_000),
        &scalable(10_000, 2_000),
    );

    let sparse_p = FilterParams::new(1 << 40, 1, 7);
    let sparse = |from, count| SparseFilter::from_keys(sparse_p, keys(from, count)).unwrap();
    refuses_cheaply(
        "sparse",
        &sparse(0, 1_000_000),
        &sparse(2_000_000, 1_000),
        &sparse(3_000_000, 1_000),
    );

    let squid = |from| {
        let mut d = SquidDigest::new(4_000_000, 32).unwrap();
        keys(from, 1_000).for_each(|k| d.add_key(&k));
        d
    };
    refuses_cheaply("squid", &squid(0), &squid(10_000), &squid(20_000));
}
