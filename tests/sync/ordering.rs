//! The subscriber never diverges silently: every case of
//! docs/FORMAT.md section 5 run with the real `Publisher`/`Subscriber` API.
//! Each refused frame leaves the subscriber's filter and version unchanged.

use compressed_bloom::PublisherOptions;
use compressed_bloom::{
    decode, delta, encode, format, BloomFilter, DecodeLimits, FilterError, FilterParams, Publisher,
    Subscriber, SyncError, Update, UpdateId, UpdateKind,
};

const P: FilterParams = FilterParams::new(200_000, 2, 3);

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// A publisher of stream 7, epoch 100, with 5,000 keys.
fn publisher(full_every: u32) -> Publisher {
    let mut p = Publisher::counting(
        P,
        PublisherOptions {
            full_every,
            stream: 7,
            epoch: Some(100),
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    for i in 0..5_000 {
        p.insert(&key(i));
    }
    p
}

/// Replaces 100 keys (round r) and publishes.
fn step(p: &mut Publisher, r: u64) -> (Update, BloomFilter) {
    for i in 0..100 {
        p.remove(&key(r * 100 + i));
        p.insert(&key(900_000 + r * 100 + i));
    }
    let u = p.publish();
    (u, p.current())
}

/// Asserts `r` is the error `what` and the subscriber still holds `state`
/// at `version`.
#[track_caller]
fn refused(
    sub: &Subscriber,
    r: Result<UpdateKind, SyncError>,
    what: fn(&SyncError) -> bool,
    state: &BloomFilter,
    version: UpdateId,
) {
    match r {
        Err(e) => assert!(what(&e), "unexpected error {e}"),
        Ok(k) => panic!("accepted as {k:?}"),
    }
    assert_eq!(sub.filter(), Some(state));
    assert_eq!(sub.version(), Some(version));
}

/// A copy of `sub` refuses `frame`, of stream 8, as another stream than
/// its 7, and still holds `state` at `version`.
#[track_caller]
fn refused_as_other_stream(sub: &Subscriber, frame: &[u8], state: &BloomFilter, version: UpdateId) {
    let mut probe = sub.clone();
    let r = probe.receive(frame);
    let other = |e: &SyncError| {
        matches!(
            e,
            SyncError::WrongStream {
                expected: 7,
                found: 8
            }
        )
    };
    refused(&probe, r, other, state, version);
}

fn stale(e: &SyncError) -> bool {
    matches!(e, SyncError::Stale { .. })
}

fn gap(e: &SyncError) -> bool {
    matches!(e, SyncError::NeedFull { .. })
}

#[test]
fn updates_are_numbered_and_versions_follow_in_order() {
    let mut p = publisher(100);
    let first = p.publish();
    assert_eq!(first.kind, UpdateKind::Full);
    assert_eq!(
        first.id,
        UpdateId {
            stream: 7,
            epoch: 100,
            seq: 0
        }
    );
    let mut sub = Subscriber::default();
    sub.receive(&first.frame).unwrap();
    for r in 0..4 {
        let (u, state) = step(&mut p, r);
        assert_eq!(u.kind, UpdateKind::Delta);
        assert_eq!(u.id.seq, r + 1);
        assert_eq!(sub.receive(&u.frame).unwrap(), UpdateKind::Delta);
        assert_eq!(sub.filter(), Some(&state));
        assert_eq!(sub.version(), Some(u.id));
    }
    // Identified frames are version 3; the filter inside is unchanged.
    let h = format::inspect(&first.frame, &DecodeLimits::default()).unwrap();
    assert_eq!((h.version, h.identity), (3, Some(first.id)));
}

#[test]
fn a_dropped_delta_is_a_gap_until_the_next_full_frame() {
    let mut p = publisher(4);
    let u0 = p.publish();
    let (u1, s1) = step(&mut p, 0);
    let (_u2, _) = step(&mut p, 1); // dropped
    let (u3, _) = step(&mut p, 2);
    let (u4, s4) = step(&mut p, 3);
    assert_eq!(
        [u1.kind, u3.kind, u4.kind],
        [UpdateKind::Delta, UpdateKind::Delta, UpdateKind::Full]
    );
    let mut sub = Subscriber::default();
    sub.receive(&u0.frame).unwrap();
    sub.receive(&u1.frame).unwrap();
    let mut probe = sub.clone();
    let r = probe.receive(&u3.frame);
    refused(&probe, r, gap, &s1, u1.id);
    sub.receive(&u4.frame).unwrap();
    assert_eq!(sub.filter(), Some(&s4));
}

#[test]
fn duplicates_and_reordered_frames_are_refused() {
    let mut p = publisher(100);
    let u0 = p.publish();
    let (u1, s1) = step(&mut p, 0);
    let (u2, s2) = step(&mut p, 1);
    let mut sub = Subscriber::default();
    sub.receive(&u0.frame).unwrap();
    // 2 before 1: a gap.
    let mut probe = sub.clone();
    let r = probe.receive(&u2.frame);
    refused(&probe, r, gap, &u0_state(&u0), u0.id);
    sub.receive(&u1.frame).unwrap();
    // 1 again: a duplicate.
    let mut probe = sub.clone();
    let r = probe.receive(&u1.frame);
    refused(&probe, r, stale, &s1, u1.id);
    sub.receive(&u2.frame).unwrap();
    assert_eq!(sub.filter(), Some(&s2));
    // 1 arriving late, after 2: stale, not a rollback.
    let mut probe = sub.clone();
    let r = probe.receive(&u1.frame);
    refused(&probe, r, stale, &s2, u2.id);
}

fn u0_state(u0: &Update) -> BloomFilter {
    decode(&u0.frame, &DecodeLimits::default()).unwrap()
}

/// A replayed delta after the filter returned to an earlier content
/// (A → B → A, docs/FORMAT.md section 5, rule 3). The digests alone would
/// accept the A → B delta again (the subscriber holds A's content); its
/// sequence number refuses it.
#[test]
fn replay_after_a_to_b_to_a_is_refused() {
    let mut p = publisher(100);
    let a = p.publish();
    let state_a = p.current();
    p.insert(b"extra key");
    let ab = p.publish();
    assert_eq!(ab.kind, UpdateKind::Delta);
    p.remove(b"extra key");
    let ba = p.publish();
    assert_eq!(p.current(), state_a);
    let mut sub = Subscriber::default();
    for u in [&a, &ab, &ba] {
        sub.receive(&u.frame).unwrap();
    }
    assert_eq!(sub.filter(), Some(&state_a));
    // The content digests match: the delta's base is A, and A is held.
    let d = delta::inspect_delta(&ab.frame, &DecodeLimits::default()).unwrap();
    assert_eq!(d.base_digest, delta::digest(&state_a));
    let mut probe = sub.clone();
    let r = probe.receive(&ab.frame);
    refused(&probe, r, stale, &state_a, ba.id);
}

/// An old full frame that arrives late is stale (docs/FORMAT.md section 5,
/// rule 2): the held, newer version stays.
#[test]
fn a_late_full_frame_does_not_roll_back() {
    let mut p = publisher(1); // full frames only
    let u0 = p.publish();
    let (u1, s1) = step(&mut p, 0);
    assert_eq!(u1.kind, UpdateKind::Full);
    let mut sub = Subscriber::default();
    sub.receive(&u0.frame).unwrap();
    sub.receive(&u1.frame).unwrap();
    let mut probe = sub.clone();
    let r = probe.receive(&u0.frame);
    refused(&probe, r, stale, &s1, u1.id);
    // The same full frame twice is stale too.
    let mut probe = sub.clone();
    let r = probe.receive(&u1.frame);
    refused(&probe, r, stale, &s1, u1.id);
}

#[test]
fn a_restarted_publisher_supersedes_the_old_epoch() {
    let mut old = publisher(100);
    let o0 = old.publish();
    let (o1, _) = step(&mut old, 0);
    let (o2, _) = step(&mut old, 1);
    // The restart lost the state: a new publisher, a larger epoch, fewer keys.
    let mut new = Publisher::counting(
        P,
        PublisherOptions {
            full_every: 100,
            stream: 7,
            epoch: Some(101),
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    for i in 0..3_000 {
        new.insert(&key(i));
    }
    let n0 = new.publish();
    let sn0 = new.current();
    let (n1, sn1) = step(&mut new, 0);
    let mut sub = Subscriber::default();
    for u in [&o0, &o1] {
        sub.receive(&u.frame).unwrap();
    }
    // A delta of the new epoch before its full frame: a gap.
    let mut probe = sub.clone();
    assert!(matches!(
        probe.receive(&n1.frame),
        Err(SyncError::NeedFull { .. })
    ));
    sub.receive(&n0.frame).unwrap();
    assert_eq!(sub.filter(), Some(&sn0));
    // Late frames of the old epoch are stale, delta or full.
    for late in [&o2, &o1, &o0] {
        let mut probe = sub.clone();
        let r = probe.receive(&late.frame);
        refused(&probe, r, stale, &sn0, n0.id);
    }
    sub.receive(&n1.frame).unwrap();
    assert_eq!(sub.filter(), Some(&sn1));
}

#[test]
fn other_streams_and_unordered_frames_are_refused() {
    let mut p = publisher(100);
    let u0 = p.publish();
    let s0 = p.current();
    let mut other = Publisher::counting(
        P,
        PublisherOptions {
            full_every: 100,
            stream: 8,
            epoch: Some(1_000),
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    other.insert(b"x");
    let o0 = other.publish();
    let mut sub = Subscriber::default();
    sub.receive(&u0.frame).unwrap();
    refused_as_other_stream(&sub, &o0.frame, &s0, u0.id);
    // A version-1 frame (no identity) cannot be ordered against it.
    let plain = encode(&other.current());
    let mut probe = sub.clone();
    let r = probe.receive(&plain);
    refused(
        &probe,
        r,
        |e| matches!(e, SyncError::Unordered { .. }),
        &s0,
        u0.id,
    );
    // A subscriber told which stream to follow refuses others from the start.
    let mut fixed = <Subscriber>::following(8, DecodeLimits::default());
    assert!(matches!(
        fixed.receive(&u0.frame),
        Err(SyncError::WrongStream { .. })
    ));
    fixed.receive(&o0.frame).unwrap();
}

/// Frames without identities (versions 1 and 2) keep working between
/// peers that send no identity, ordered by digests alone.
#[test]
fn unidentified_frames_still_sync_by_digest() {
    let mut a = BloomFilter::new(P).unwrap();
    a.insert(b"a");
    let mut b = a.clone();
    b.insert(b"b");
    let mut sub = Subscriber::default();
    sub.receive(&encode(&a)).unwrap();
    assert_eq!(sub.version(), None);
    sub.receive(&delta::encode_delta(&a, &b).unwrap()).unwrap();
    assert_eq!(sub.filter(), Some(&b));
    // A delta for another base is refused by its digest.
    assert!(matches!(
        sub.receive(&delta::encode_delta(&a, &b).unwrap()),
        Err(SyncError::NeedFull { .. })
    ));
}

#[test]
fn a_delta_with_sequence_zero_is_invalid() {
    let a = BloomFilter::new(P).unwrap();
    let id = UpdateId {
        stream: 1,
        epoch: 1,
        seq: 0,
    };
    assert_eq!(
        delta::encode_delta_with_identity(&a, &a, id),
        Err(FilterError::InvalidSeq)
    );
    let ok = delta::encode_delta_with_identity(&a, &a, UpdateId { seq: 1, ..id }).unwrap();
    // Rewrite seq to 0 (the last varint before payload_len) and fix the CRC.
    let h = format::inspect(&ok, &DecodeLimits::default()).unwrap();
    assert_eq!(h.identity.map(|i| i.seq), Some(1));
    let mut bad = ok.clone();
    let seq_at = h.header_len - format::varint::len(h.payload_len) - 1;
    assert_eq!(bad[seq_at], 1);
    bad[seq_at] = 0;
    let body = bad.len() - 4;
    let crc = crc32c::crc32c(&bad[..body]);
    bad[body..].copy_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        format::inspect(&bad, &DecodeLimits::default()),
        Err(compressed_bloom::DecodeError::InvalidField { field: "seq", .. })
    ));
}

/// A subscriber that starts from an unidentified snapshot and takes an
/// identified delta on it follows that delta's stream from then on: a
/// later, newer full frame of another stream is refused, not installed
/// (deltas pin the stream as full frames do).
#[test]
fn an_identified_delta_on_an_unidentified_base_pins_the_stream() {
    let mut p = publisher(100);
    let u0 = p.publish();
    let s0 = p.current();
    let (u1, s1) = step(&mut p, 1);
    assert_eq!(u1.kind, UpdateKind::Delta);
    let mut sub = Subscriber::default();
    // The same filter as u0, sent without an identity.
    sub.receive(&encode(&s0)).unwrap();
    assert_eq!(sub.version(), None);
    sub.receive(&u1.frame).unwrap();
    assert_eq!(sub.filter(), Some(&s1));
    assert_eq!(sub.version(), Some(u1.id));
    // Stream 8, in a later epoch: newer by version, but another stream.
    let mut other = Publisher::counting(
        P,
        PublisherOptions {
            full_every: 100,
            stream: 8,
            epoch: Some(u0.id.epoch + 1),
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    other.insert(b"x");
    let o0 = other.publish();
    refused_as_other_stream(&sub, &o0.frame, &s1, u1.id);
}
