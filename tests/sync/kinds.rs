//! Every kind through `Publisher` → frames → `Subscriber`: the ordering
//! rules of docs/FORMAT.md section 5 (drop, duplicate, reorder, replay,
//! late full frame, publisher restart) and the refusal of a delta for
//! another base, run on each kind with the same scenario. A refused frame
//! leaves the subscriber's filter, digest and version unchanged.

use compressed_bloom::bitcoin::Bip37Filter;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::SquidDigest;
use compressed_bloom::PublisherOptions;
use compressed_bloom::{
    AnyFilter, BloomFilter, CountingBloomFilter, DecodeError, DecodeLimits, FilterKind,
    FilterParams, Kind, Publisher, Subscriber, SyncError, Update, UpdateKind,
};

const P: FilterParams = FilterParams::new(120_000, 3, 11);
/// Keys in each version; each round replaces `CHURN` of them.
const KEYS: u64 = 4_000;
const CHURN: u64 = 40;
const STREAM: u64 = 5;

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// The keys of version `r` of a sliding window: [r·CHURN, r·CHURN + KEYS).
fn window(r: u64) -> impl Iterator<Item = [u8; 8]> {
    (r * CHURN..r * CHURN + KEYS).map(key)
}

/// Version `r` of the filter of each kind. Scalable filters only grow, so
/// their versions hold every key up to the window's end.
fn standard(r: u64) -> BloomFilter {
    let mut f = BloomFilter::new(P).unwrap();
    window(r).for_each(|k| f.insert(&k));
    f
}
fn partitioned(r: u64) -> PartitionedBloomFilter {
    let mut f = PartitionedBloomFilter::new(P).unwrap();
    window(r).for_each(|k| f.insert(&k));
    f
}
fn counting(r: u64) -> CountingBloomFilter {
    let mut f = CountingBloomFilter::new(P).unwrap();
    window(r).for_each(|k| f.insert(&k));
    f
}
fn scalable(r: u64) -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::new(ScalablePolicy::new(1_000, 0.01), 11).unwrap();
    (0..r * CHURN + KEYS).for_each(|i| f.insert(&key(i)));
    f
}
fn sparse(r: u64) -> SparseFilter {
    SparseFilter::from_keys(FilterParams::new(1 << 40, 1, 11), window(r)).unwrap()
}
fn squid(r: u64) -> SquidDigest {
    let mut d = SquidDigest::new(KEYS, 5).unwrap();
    window(r).for_each(|k| d.add_key(&k));
    d
}

/// A wallet's BIP37 filter: 36,000 bytes (the most BIP37 allows), 3 hash
/// functions, a tweak and nFlags 1, which deltas leave as they are.
fn bip37(r: u64) -> Bip37Filter {
    let mut f = Bip37Filter::new(36_000, 3, 0x5eed_1e55, 1).unwrap();
    window(r).for_each(|k| f.insert(&k));
    f
}

/// Publishes versions 0..rounds of `make` as stream STREAM, epoch `epoch`,
/// with a full frame forced every 1,000 updates (so deltas are used).
fn publish<F: Kind>(make: &dyn Fn(u64) -> F, epoch: u64, rounds: u64) -> (Vec<Update>, Vec<F>) {
    let mut p = Publisher::new(
        make(0),
        PublisherOptions {
            full_every: 1_000,
            stream: STREAM,
            epoch: Some(epoch),
            ..PublisherOptions::default()
        },
    );
    let (mut updates, mut states) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        *p.filter_mut().unwrap() = make(r);
        states.push(p.current());
        updates.push(p.publish());
    }
    (updates, states)
}

/// Asserts `got` is refused as `what` and `sub` still holds `state`.
#[track_caller]
fn refused<F: Kind>(
    sub: &Subscriber<F>,
    got: Result<UpdateKind, SyncError>,
    what: fn(&SyncError) -> bool,
    state: &F,
    seq: u64,
) {
    let e = got.expect_err("the frame must be refused");
    assert!(what(&e), "refused for another reason: {e}");
    assert_eq!(sub.filter(), Some(state));
    assert_eq!(sub.digest(), Some(state.digest()));
    assert_eq!(sub.version().map(|v| v.seq), Some(seq));
}

fn need_full(e: &SyncError) -> bool {
    matches!(e, SyncError::NeedFull { .. })
}
fn stale(e: &SyncError) -> bool {
    matches!(e, SyncError::Stale { .. })
}

/// The whole scenario for one kind, for a typed subscriber.
fn scenario<F: Kind>(make: &dyn Fn(u64) -> F) {
    let (u, s) = publish(make, 100, 6);
    assert_eq!(u[0].kind, UpdateKind::Full);
    assert!(
        u[1..].iter().all(|u| u.kind == UpdateKind::Delta),
        "a {CHURN}-key change is sent as a delta"
    );
    let limits = DecodeLimits::default();

    // In order: every version, and the filter equals the publisher's.
    let mut sub = Subscriber::<F>::new(limits);
    for (u, s) in u.iter().zip(&s) {
        assert_eq!(sub.receive(&u.frame).unwrap(), u.kind);
        assert_eq!(sub.filter(), Some(s));
    }

    // Duplicate and replay: stale, nothing changes.
    refused(&sub, sub.clone().receive(&u[5].frame), stale, &s[5], 5);
    refused(&sub, sub.clone().receive(&u[2].frame), stale, &s[5], 5);
    // Late full frame of an older version: stale.
    let mut p = Publisher::new(
        make(3),
        PublisherOptions {
            full_every: 1_000,
            stream: STREAM,
            epoch: Some(100),
            ..PublisherOptions::default()
        },
    );
    for _ in 0..=3 {
        p.publish();
    }
    let late = p.full_frame().unwrap();
    assert_eq!(late.id.seq, 3);
    refused(&sub, sub.clone().receive(&late.frame), stale, &s[5], 5);

    // Drop: a gap is refused; the full frame of the last version resyncs.
    let mut sub = Subscriber::<F>::new(limits);
    sub.receive(&u[0].frame).unwrap();
    sub.receive(&u[1].frame).unwrap();
    let mut tried = sub.clone();
    refused(&sub, tried.receive(&u[3].frame), need_full, &s[1], 1);
    let mut p = Publisher::new(
        make(0),
        PublisherOptions {
            full_every: 1_000,
            stream: STREAM,
            epoch: Some(100),
            ..PublisherOptions::default()
        },
    );
    for r in 0..=3 {
        *p.filter_mut().unwrap() = make(r);
        p.publish();
    }
    sub.receive(&p.full_frame().unwrap().frame).unwrap();
    assert_eq!(sub.filter(), Some(&s[3]));
    sub.receive(&u[4].frame).unwrap();
    sub.receive(&u[5].frame).unwrap();
    assert_eq!(sub.filter(), Some(&s[5]));

    // Reorder: 3 before 2 is a gap; then 2 and 3 apply.
    let mut sub = Subscriber::<F>::new(limits);
    sub.receive(&u[0].frame).unwrap();
    sub.receive(&u[1].frame).unwrap();
    refused(&sub, sub.clone().receive(&u[3].frame), need_full, &s[1], 1);
    sub.receive(&u[2].frame).unwrap();
    sub.receive(&u[3].frame).unwrap();
    assert_eq!(sub.filter(), Some(&s[3]));

    // Restart: a larger epoch's full frame supersedes; the old epoch's
    // frames are then stale.
    let (u2, s2) = publish(make, 200, 2);
    sub.receive(&u2[0].frame).unwrap();
    assert_eq!(sub.filter(), Some(&s2[0]));
    refused(&sub, sub.clone().receive(&u[4].frame), stale, &s2[0], 0);
    sub.receive(&u2[1].frame).unwrap();
    assert_eq!(sub.filter(), Some(&s2[1]));

    // Another stream is refused.
    let mut other = Publisher::new(
        make(0),
        PublisherOptions {
            full_every: 1_000,
            stream: STREAM + 1,
            epoch: Some(300),
            ..PublisherOptions::default()
        },
    );
    let foreign = other.publish();
    let e = sub.clone().receive(&foreign.frame).unwrap_err();
    assert!(matches!(e, SyncError::WrongStream { .. }), "{e}");

    // A delta for another base (unidentified frames, ordered by digests):
    // refused, the held filter unchanged.
    let base = F::encode_frame(&make(10), Default::default(), None);
    let mut sub = Subscriber::<F>::new(limits);
    sub.receive(&base).unwrap();
    let wrong = F::encode_delta(&make(20), &make(21), None).expect("a delta");
    refused_unidentified(&sub, sub.clone().receive(&wrong), &make(10));

    // The same scenario's frames read by a subscriber of every kind.
    let mut any = Subscriber::<AnyFilter>::new(limits);
    for u in &u {
        any.receive(&u.frame).unwrap();
    }
    assert_eq!(any.digest(), Some(s[5].digest()));
    assert!(window(5).all(|k| any.filter().unwrap().contains(&k)));
}

#[track_caller]
fn refused_unidentified<F: Kind>(
    sub: &Subscriber<F>,
    got: Result<UpdateKind, SyncError>,
    state: &F,
) {
    let e = got.expect_err("a delta for another base must be refused");
    assert!(need_full(&e), "{e}");
    assert_eq!(sub.filter(), Some(state));
    assert_eq!(sub.version(), None);
}

#[test]
fn standard_filters_sync() {
    scenario(&standard);
}

#[test]
fn partitioned_filters_sync() {
    scenario(&partitioned);
}

#[test]
fn counting_filters_sync() {
    scenario(&counting);
}

#[test]
fn scalable_filters_sync() {
    scenario(&scalable);
}

#[test]
fn sparse_filters_sync() {
    scenario(&sparse);
}

#[test]
fn squid_digests_sync() {
    scenario(&squid);
}

#[test]
fn bip37_filters_sync() {
    scenario(&bip37);
}

/// A typed subscriber refuses a full frame of another kind before
/// decoding it, and keeps what it holds.
#[test]
fn a_typed_subscriber_refuses_other_kinds() {
    let mut sub = Subscriber::<PartitionedBloomFilter>::new(DecodeLimits::default());
    let (u, s) = publish(&partitioned, 1, 1);
    sub.receive(&u[0].frame).unwrap();
    let (other, _) = publish(&counting, 2, 1);
    let e = sub.receive(&other[0].frame).unwrap_err();
    assert!(
        matches!(
            e,
            SyncError::Decode(DecodeError::WrongKind {
                found: FilterKind::Counting,
                expected: FilterKind::Partitioned
            })
        ),
        "{e}"
    );
    assert_eq!(sub.filter(), Some(&s[0]));
}

/// A counting publisher keeps counters from each key's hash, which under
/// BIP37's hashing holds four of up to 50 positions: it is refused rather
/// than publish filters that miss keys. BIP37 filters publish through
/// `Publisher::new`.
#[test]
fn a_counting_publisher_refuses_bip37_hashing() {
    use compressed_bloom::{FilterError, FilterParams, HashScheme, Publisher};
    let params = FilterParams {
        scheme: HashScheme::Bip37Murmur,
        ..FilterParams::new(8 * 100, 11, 7)
    };
    assert!(matches!(
        Publisher::counting(params, Default::default()),
        Err(FilterError::SchemeNotForKind {
            kind: "counting",
            scheme: "bip37-murmur3"
        })
    ));
}
