//! Signed frames between a publisher and its subscribers
//! (docs/FORMAT.md section 6, tag 2): forged frames with valid CRCs and
//! digests (a pinning full frame, a no-op delta that claims the next
//! version, a frame of another kind) are taken by a subscriber without
//! keys and refused by one with keys, each refusal leaving its filter and
//! version unchanged; unknown keys and altered signatures are refused with
//! their own errors; keys rotate without a refused update.

use compressed_bloom::delta::encode_delta_with_identity;
use compressed_bloom::ed25519_dalek::SigningKey;
use compressed_bloom::format::{sign_frame, verify_frame};
use compressed_bloom::kinds::ribbon::RibbonFilter;
use compressed_bloom::{
    encode_with_identity, AnyFilter, BloomFilter, DecodeError, DecodeLimits, FilterParams, Kind,
    Publisher, PublisherOptions, Subscriber, SyncError, UpdateId,
};

const P: FilterParams = FilterParams::new(8_192, 3, 5);
const STREAM: u64 = 9;
const EPOCH: u64 = 1_000;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn filter(keys: std::ops::Range<u32>) -> BloomFilter {
    let mut f = BloomFilter::new(P).unwrap();
    keys.for_each(|i| f.insert(&i.to_le_bytes()));
    f
}

fn publisher(signing: Option<SigningKey>) -> Publisher<BloomFilter> {
    Publisher::new(
        filter(0..100),
        PublisherOptions {
            stream: STREAM,
            epoch: Some(EPOCH),
            signing_key: signing,
            ..Default::default()
        },
    )
}

/// What an attacker on the subject can make from FORMAT.md alone: frames
/// with valid CRCs and digests, unsigned.
struct Forged {
    /// A full frame at the last version there is: (2^64 − 1, 2^64 − 1).
    pin: Vec<u8>,
    /// A delta from the publisher's first version to itself, claiming the
    /// next sequence number.
    noop_delta: Vec<u8>,
    /// A ribbon filter's full frame at a later version.
    ribbon: Vec<u8>,
}

fn forge(first: &BloomFilter) -> Forged {
    let last = UpdateId {
        stream: STREAM,
        epoch: u64::MAX,
        seq: u64::MAX,
    };
    let next = UpdateId {
        stream: STREAM,
        epoch: EPOCH,
        seq: 1,
    };
    let ribbon = RibbonFilter::from_keys([b"forged".as_slice()], 0.01, 3).unwrap();
    Forged {
        pin: encode_with_identity(&filter(0..1), last),
        noop_delta: encode_delta_with_identity(first, first, next).unwrap(),
        ribbon: ribbon.encode_frame(
            compressed_bloom::Coding::Auto,
            Some(UpdateId { seq: 5, ..next }),
        ),
    }
}

/// The subscriber's filter and version, to show a refusal changed nothing.
fn state<F: Kind>(s: &Subscriber<F>) -> (Option<F>, Option<UpdateId>) {
    (s.filter().cloned(), s.version())
}

#[test]
fn without_keys_the_forgeries_are_taken() {
    // What the signatures are for: a subscriber that trusts the channel is
    // pinned by one frame, moved by a no-op delta and given another kind.
    let mut p = publisher(None);
    let first = p.publish();
    let forged = forge(p.filter().unwrap());

    let mut s = Subscriber::<BloomFilter>::default();
    s.receive(&first.frame).unwrap();
    s.receive(&forged.noop_delta).unwrap();
    assert_eq!(
        s.version().unwrap().seq,
        1,
        "the forged delta claimed version 1"
    );
    p.filter_mut().unwrap().insert(b"new key");
    let real = p.publish();
    assert!(matches!(
        s.receive(&real.frame),
        Err(SyncError::Stale { .. })
    ));

    let mut pinned = Subscriber::<BloomFilter>::default();
    pinned.receive(&forged.pin).unwrap();
    assert!(matches!(
        pinned.receive(&real.frame),
        Err(SyncError::Stale { .. })
    ));

    let mut any = Subscriber::<AnyFilter>::default();
    any.receive(&first.frame).unwrap();
    any.receive(&forged.ribbon).unwrap();
    assert!(matches!(any.filter(), Some(AnyFilter::Ribbon(_))));
}

#[test]
fn with_keys_each_forgery_is_refused_and_changes_nothing() {
    let k = key(1);
    let mut p = publisher(Some(k.clone()));
    let first = p.publish();
    let forged = forge(p.filter().unwrap());

    let mut s = Subscriber::<AnyFilter>::default().verifying_keys([k.verifying_key()]);
    s.receive(&first.frame).unwrap();
    let before = state(&s);
    for frame in [&forged.pin, &forged.noop_delta, &forged.ribbon] {
        assert!(matches!(s.receive(frame), Err(SyncError::Unsigned)));
        assert_eq!(state(&s), before);
    }
    // The publisher's next update is still the next one.
    p.filter_mut().unwrap().insert(b"new key");
    let second = p.publish();
    s.receive(&second.frame).unwrap();
    assert_eq!(s.version(), Some(second.id));
    assert!(s.filter().unwrap().contains(b"new key"));
}

#[test]
fn frames_signed_by_another_key_are_unknown_key() {
    let (ours, theirs) = (key(1), key(2));
    let mut s = Subscriber::<BloomFilter>::default().verifying_keys([ours.verifying_key()]);
    let mut p = publisher(Some(theirs.clone()));
    let u = p.publish();
    let theirs_id: [u8; 8] = theirs.verifying_key().as_bytes()[..8].try_into().unwrap();
    match s.receive(&u.frame) {
        Err(SyncError::UnknownKey { key_id }) => assert_eq!(key_id, theirs_id),
        other => panic!("expected UnknownKey, got {other:?}"),
    }
    assert_eq!(state(&s), (None, None));
}

#[test]
fn a_frame_altered_after_signing_is_bad_signature() {
    let k = key(1);
    let mut p = publisher(Some(k.clone()));
    let u = p.publish();
    let keys = [k.verifying_key()];
    let limits = DecodeLimits::default();
    assert!(verify_frame(&u.frame, &keys, &limits).is_ok());
    let h = compressed_bloom::inspect(&u.frame, &limits).unwrap();
    let signed_len = h.signed_len() as usize;

    // A flipped bit of the signature itself, and a flipped bit of the
    // payload with the CRC made valid again: both fail only at the
    // signature.
    let mut bad_sig = u.frame.clone();
    *bad_sig.last_mut().unwrap() ^= 1;
    let mut bad_payload = u.frame.clone();
    bad_payload[h.header_len] ^= 1;
    let crc_at = signed_len - 4;
    let crc = crc32c(&bad_payload[..crc_at]);
    bad_payload[crc_at..signed_len].copy_from_slice(&crc.to_le_bytes());
    for frame in [bad_sig, bad_payload] {
        assert!(matches!(
            verify_frame(&frame, &keys, &limits),
            Err(DecodeError::BadSignature { .. })
        ));
        let mut s = Subscriber::<BloomFilter>::default().verifying_keys(keys);
        assert!(matches!(
            s.receive(&frame),
            Err(SyncError::BadSignature { .. })
        ));
        assert_eq!(state(&s), (None, None));
    }
}

#[test]
fn a_signed_frame_decodes_as_the_unsigned_one() {
    // The signature adds a record and a trailer; the filter is the same,
    // and a subscriber without keys takes signed frames.
    let f = filter(0..500);
    let plain = compressed_bloom::encode(&f);
    let signed = sign_frame(&plain, &key(3)).unwrap();
    // Version 3's kind byte, meta_len, the record's tag and length, the
    // key id, and the signature.
    assert_eq!(plain[2], 1, "an unsigned standard frame is version 1");
    assert_eq!(signed[2], 3);
    assert_eq!(signed.len(), plain.len() + 1 + 1 + 2 + 8 + 64);
    let limits = DecodeLimits::default();
    assert_eq!(compressed_bloom::decode(&signed, &limits).unwrap(), f);
    assert!(matches!(
        compressed_bloom::decode(&signed[..signed.len() - 1], &limits),
        Err(DecodeError::Truncated { .. })
    ));
    let mut s = Subscriber::<BloomFilter>::default();
    s.receive(&signed).unwrap();
    assert_eq!(s.filter(), Some(&f));
    // Signing again replaces the signer.
    let again = sign_frame(&signed, &key(4)).unwrap();
    let h = compressed_bloom::inspect(&again, &limits).unwrap();
    assert_eq!(h.signer.unwrap(), key(4).verifying_key().as_bytes()[..8]);
}

#[test]
fn keys_rotate_without_a_refused_update() {
    let (old, new) = (key(1), key(2));
    let mut p = publisher(Some(old.clone()));
    let mut s = Subscriber::<BloomFilter>::default().verifying_keys([old.verifying_key()]);
    s.receive(&p.publish().frame).unwrap();

    // Subscribers learn the new key first, then the publisher moves to it.
    s.set_verifying_keys([old.verifying_key(), new.verifying_key()]);
    for i in 0..3u32 {
        p.filter_mut().unwrap().insert(&(1_000 + i).to_le_bytes());
        if i == 1 {
            p.set_signing_key(Some(new.clone()));
        }
        let u = p.publish();
        s.receive(&u.frame).unwrap();
        assert_eq!(s.version(), Some(u.id));
    }
    // Then they drop the old key: a frame it signed is now unknown.
    s.set_verifying_keys([new.verifying_key()]);
    let mut stale_signer = publisher(Some(old));
    let f = p.filter().unwrap().clone();
    let replay = {
        *stale_signer.filter_mut().unwrap() = f;
        let mut u = stale_signer.publish();
        u.frame = sign_frame(&u.frame, &key(1)).unwrap();
        u.frame
    };
    assert!(matches!(
        s.receive(&replay),
        Err(SyncError::UnknownKey { .. })
    ));
    p.filter_mut().unwrap().insert(b"after rotation");
    s.receive(&p.publish().frame).unwrap();
    assert!(s.filter().unwrap().contains(b"after rotation"));
}

/// CRC-32C (Castagnoli), bit by bit, as docs/FORMAT.md section 2 gives it.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn the_full_frame_a_gap_asks_for_is_signed_too() {
    // A subscriber that missed an update asks for the last version whole
    // (Publisher::full_frame): with keys, it must be able to take it.
    let k = key(1);
    let mut p = publisher(Some(k.clone()));
    let mut s = Subscriber::<BloomFilter>::default().verifying_keys([k.verifying_key()]);
    s.receive(&p.publish().frame).unwrap();
    p.filter_mut().unwrap().insert(b"missed");
    let _missed = p.publish();
    p.filter_mut().unwrap().insert(b"after the gap");
    let next = p.publish();
    assert!(matches!(
        s.receive(&next.frame),
        Err(SyncError::NeedFull { .. })
    ));
    let full = p.full_frame().unwrap();
    s.receive(&full.frame).unwrap();
    assert_eq!(s.version(), Some(next.id));
    assert!(s.filter().unwrap().contains(b"after the gap"));
}
