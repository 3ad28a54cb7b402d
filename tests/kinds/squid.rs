//! Squid cache digests against an independent implementation:
//! `tests/vectors/squid_500x5.digest` was written by `tools/squid_digest.py`
//! (Python's hashlib and struct, from Squid's source, no code shared with
//! the crate) for the 400 URLs of `squid_urls.txt`, capacity 500 at 5 bits
//! per entry, and `squid_queries.expected` holds that tool's answer (1 or 0)
//! for each URL of `squid_queries.txt`.

use crate::common;

use compressed_bloom::format;
use compressed_bloom::kinds::squid::{CBlock, Method, SquidDigest, SquidError};
use compressed_bloom::AnyFilter;
use compressed_bloom::{
    decode_any, encode, encode_as, BloomFilter, DecodeError, DecodeLimits, FilterError,
    FilterParams, FilterType, HashScheme,
};

fn vector(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/vectors/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn lines(name: &str) -> Vec<Vec<u8>> {
    vector(name)
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn digest() -> SquidDigest {
    SquidDigest::from_squid_bytes(&vector("squid_500x5.digest"), &DecodeLimits::default()).unwrap()
}

#[test]
fn imports_the_reference_digest_and_exports_it_byte_for_byte() {
    let d = digest();
    let cb = d.cblock();
    assert_eq!((cb.version_current(), cb.version_required()), (5, 3));
    assert_eq!((cb.capacity(), cb.count(), cb.del_count()), (500, 400, 0));
    assert_eq!(
        (cb.mask_size(), cb.bits_per_entry(), cb.hash_func_count()),
        (313, 5, 4)
    );
    assert_eq!(d.filter().m(), 313 * 8);
    assert_eq!(d.to_squid_bytes(), vector("squid_500x5.digest"));
}

#[test]
fn answers_exactly_as_the_reference_does() {
    let d = digest();
    let queries = lines("squid_queries.txt");
    let expected = lines("squid_queries.expected");
    assert_eq!(queries.len(), expected.len());
    for (url, want) in queries.iter().zip(&expected) {
        assert_eq!(
            d.contains(Method::GET, url),
            want == b"1",
            "{}",
            String::from_utf8_lossy(url)
        );
    }
    // Every cached URL is present (no false negatives), and the other
    // method byte hashes elsewhere: HEAD of a cached URL is mostly absent.
    for url in lines("squid_urls.txt") {
        assert!(d.contains(Method::GET, &url));
    }
    let head_hits = lines("squid_urls.txt")
        .iter()
        .filter(|u| d.contains(Method::HEAD, u))
        .count();
    // A random key is a false hit with probability fill^4 ≈ 0.47^4 ≈ 0.05:
    // of 400, about 20 (far below 400 if the method byte is hashed).
    assert!(head_hits < 60, "{head_hits} HEAD hits");
}

#[test]
fn a_digest_built_here_is_the_reference_digest() {
    let mut d = SquidDigest::new(500, 5).unwrap();
    for url in lines("squid_urls.txt") {
        d.add(Method::GET, &url);
    }
    assert_eq!(d.to_squid_bytes(), vector("squid_500x5.digest"));
}

#[test]
fn frames_keep_the_header_through_coded_and_raw() {
    let d = digest();
    let limits = DecodeLimits::default();
    for frame in [
        compressed_bloom::kinds::squid::encode_squid(&d),
        compressed_bloom::kinds::squid::encode_squid_raw(&d),
    ] {
        let h = format::inspect(&frame, &limits).unwrap();
        assert_eq!(h.version, 3);
        assert_eq!(h.params, FilterParams::squid(313 * 8));
        assert_eq!(h.n, 400);
        match decode_any(&frame, &limits).unwrap() {
            AnyFilter::Squid(back) => {
                assert_eq!(back, d);
                assert_eq!(back.to_squid_bytes(), vector("squid_500x5.digest"));
            }
            other => panic!("decoded as {:?}", other.kind()),
        }
        assert_eq!(
            compressed_bloom::kinds::squid::decode_squid(&frame, &limits).unwrap(),
            d
        );
    }
    // Without the header: a standard filter with Squid's hashing, which
    // still answers as Squid does but cannot be exported.
    let bare = encode(d.filter());
    match decode_any(&bare, &limits).unwrap() {
        AnyFilter::Standard(f) => assert_eq!(&f, d.filter()),
        other => panic!("decoded as {:?}", other.kind()),
    }
    assert_eq!(
        compressed_bloom::kinds::squid::decode_squid(&bare, &limits),
        Err(DecodeError::NotSquid)
    );
}

/// Squid's checks in `peerDigestSetCBlock`, one case each, in its order.
#[test]
fn refuses_the_headers_squid_refuses() {
    let good = vector("squid_500x5.digest");
    let limits = DecodeLimits::default();
    let with = |at: usize, bytes: &[u8]| {
        let mut d = good.clone();
        d[at..at + bytes.len()].copy_from_slice(bytes);
        SquidDigest::from_squid_bytes(&d, &limits).unwrap_err()
    };
    assert_eq!(
        with(2, &6i16.to_be_bytes()),
        SquidError::TooNew { required: 6 }
    );
    assert_eq!(
        with(0, &2i16.to_be_bytes()),
        SquidError::TooOld { current: 2 }
    );
    assert!(matches!(
        with(0, &[0, 4, 0, 5]),
        SquidError::Corrupted {
            field: "ver.required",
            ..
        }
    ));
    assert!(matches!(
        with(16, &(-1i32).to_be_bytes()),
        SquidError::Corrupted {
            field: "mask_size",
            ..
        }
    ));
    assert!(matches!(
        with(4, &0i32.to_be_bytes()),
        SquidError::Corrupted {
            field: "capacity",
            ..
        }
    ));
    assert!(matches!(
        with(20, &[0]),
        SquidError::Corrupted {
            field: "bits_per_entry",
            ..
        }
    ));
    assert!(matches!(
        with(21, &[0]),
        SquidError::Corrupted {
            field: "hash_func_count",
            ..
        }
    ));
    assert_eq!(
        with(4, &501i32.to_be_bytes()),
        SquidError::MaskSizeMismatch {
            mask_size: 313,
            expected: 314,
            capacity: 501,
            bits_per_entry: 5
        }
    );
    assert_eq!(with(21, &[3]), SquidError::HashFuncCount { found: 3 });
    // The mask must be exactly mask_size bytes.
    for len in [good.len() - 1, good.len() + 1] {
        let mut d = good.clone();
        d.resize(len, 0);
        assert_eq!(
            SquidDigest::from_squid_bytes(&d, &limits).unwrap_err(),
            SquidError::MaskLength {
                expected: 313,
                actual: (len - 128) as u64
            }
        );
    }
    assert_eq!(
        SquidDigest::from_squid_bytes(&good[..100], &limits).unwrap_err(),
        SquidError::TooShort { len: 100 }
    );
    let tight = DecodeLimits {
        max_m: 1000,
        ..limits
    };
    assert_eq!(
        SquidDigest::from_squid_bytes(&good, &tight).unwrap_err(),
        SquidError::TooLarge {
            bits: 2504,
            limit: 1000
        }
    );
    // Every message names the problem in Squid's words.
    assert!(with(21, &[3]).to_string().contains("hash functions"));
    assert!(with(4, &501i32.to_be_bytes())
        .to_string()
        .contains("mask size mismatch"));
}

/// A frame's Squid header must pass Squid's checks and describe the
/// frame's filter; scheme 2 needs version 3, k = 4, seed 0, m < 2^32.
#[test]
fn frames_with_inconsistent_squid_headers_are_refused() {
    let d = digest();
    let limits = DecodeLimits::default();
    let frame = compressed_bloom::kinds::squid::encode_squid_raw(&d);
    let h = format::inspect(&frame, &limits).unwrap();
    let (meta_at, _) = h.metadata.unwrap();
    let cb_at = meta_at + 3; // tag 1, length varint 0x80 0x01
    assert_eq!(
        &frame[cb_at..cb_at + 128],
        &vector("squid_500x5.digest")[..128]
    );
    let mut bad = frame.clone();
    bad[cb_at + 21] = 3; // hash_func_count
    common::fix_crc(&mut bad);
    assert!(matches!(
        decode_any(&bad, &limits),
        Err(DecodeError::Squid {
            source: SquidError::HashFuncCount { found: 3 },
            ..
        })
    ));
    // A header for another mask size (capacity and mask_size both changed,
    // consistently for Squid but not for this m).
    let mut bad = frame.clone();
    bad[cb_at + 4..cb_at + 8].copy_from_slice(&600i32.to_be_bytes());
    bad[cb_at + 16..cb_at + 20].copy_from_slice(&375i32.to_be_bytes());
    common::fix_crc(&mut bad);
    assert!(matches!(
        decode_any(&bad, &limits),
        Err(DecodeError::Squid {
            source: SquidError::FilterMismatch { .. },
            ..
        })
    ));

    // Scheme 2 in a version-1 frame is unknown there.
    let mut plain = BloomFilter::new(FilterParams::new(1000, 4, 0)).unwrap();
    plain.insert(b"x");
    let mut v1 = encode_as(&plain, FilterType::Coded);
    assert_eq!(v1[2], 1);
    v1[4] = HashScheme::SquidMd5.id();
    common::fix_crc(&mut v1);
    assert_eq!(
        decode_any(&v1, &limits),
        Err(DecodeError::UnknownHashScheme { id: 2 })
    );
    // The library refuses Squid's hashing with k other than 4 or a seed.
    for p in [
        FilterParams {
            k: 3,
            ..FilterParams::squid(1000)
        },
        FilterParams {
            seed: 1,
            ..FilterParams::squid(1000)
        },
        FilterParams::squid(1 << 32),
    ] {
        let r = BloomFilter::new(p);
        assert!(
            matches!(
                r,
                Err(FilterError::SchemeRule {
                    scheme: "squid-md5",
                    ..
                })
            ),
            "{p}: {r:?}"
        );
    }
}

#[test]
fn deltas_between_digests_update_the_count() {
    let mut old = SquidDigest::new(500, 5).unwrap();
    let urls = lines("squid_urls.txt");
    for u in &urls[..300] {
        old.add(Method::GET, u);
    }
    let mut new = old.clone();
    for u in &urls[300..] {
        new.add(Method::GET, u);
    }
    let frame = compressed_bloom::delta::encode_delta(old.filter(), new.filter()).unwrap();
    let mut got = old.clone();
    got.apply_delta(&frame, &DecodeLimits::default()).unwrap();
    assert_eq!(got, new);
    assert_eq!(got.cblock().count(), 400);
    // A delta against the wrong base changes nothing.
    let mut wrong = new.clone();
    assert!(matches!(
        wrong.apply_delta(&frame, &DecodeLimits::default()),
        Err(DecodeError::WrongBase { .. })
    ));
    assert_eq!(wrong, new);
}

#[test]
fn new_digests_are_sized_as_squid_sizes_them() {
    let d = SquidDigest::new(1000, SquidDigest::DEFAULT_BITS_PER_ENTRY).unwrap();
    assert_eq!(d.cblock().mask_size(), 625);
    assert!(matches!(
        SquidDigest::new(0, 5),
        Err(SquidError::BadShape { .. })
    ));
    assert!(matches!(
        SquidDigest::new(10, 0),
        Err(SquidError::BadShape { .. })
    ));
    assert!(matches!(
        SquidDigest::new(1 << 31, 5),
        Err(SquidError::BadShape { .. })
    ));
    assert_eq!(CBlock::new(1000, 5).unwrap(), *d.cblock());
}

/// The golden frame (docs/FORMAT.md section 7): `tools/ref_kinds.py`, a
/// decoder written from the document alone, turned it back into the
/// reference digest (`tools/make_golden_squid.sh`).
#[test]
fn golden_frame_decodes_to_the_reference_digest_and_is_reproduced() {
    let frame = vector("v3_squid.cbf");
    let d = compressed_bloom::kinds::squid::decode_squid(&frame, &DecodeLimits::default()).unwrap();
    assert_eq!(d.to_squid_bytes(), vector("squid_500x5.digest"));
    assert_eq!(
        compressed_bloom::kinds::squid::encode_squid(&digest()),
        frame
    );
    // Every truncation and every single-bit flip is refused.
    common::assert_corruptions_refused(&frame, &DecodeLimits::default(), "squid golden");
}

/// FORMAT.md section 1.1's test vector, computed with Python's hashlib:
/// MD5("abc") words mod 1000.
#[test]
fn format_test_vector_positions() {
    let mut f = BloomFilter::new(FilterParams::squid(1000)).unwrap();
    f.insert(b"abc");
    let ones: Vec<u64> = (0..1000).filter(|&i| f.bit(i)).collect();
    assert_eq!(ones, [272, 866, 877, 920]);
}
