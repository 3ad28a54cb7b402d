//! BIP37 `filterload` filters against Bitcoin Core's own vectors
//! (tests/data/bip37-*.txt, vendored from Core's unit tests with its MIT
//! notice): MurmurHash3, the `filterload` serialisations and the answers
//! of `CBloomFilter::contains`; then frames, deltas, and the importer's
//! refusals.

use crate::common;

use compressed_bloom::bitcoin::{Bip37Error, Bip37Filter};
use compressed_bloom::format;
use compressed_bloom::hash::murmur3_x86_32;
use compressed_bloom::kinds::bip37::{decode_bip37, encode_bip37, encode_bip37_raw};
use compressed_bloom::{
    decode_any, encode, AnyFilter, BloomFilter, DecodeError, DecodeLimits, FilterError, FilterKind,
    FilterParams, FilterType, HashScheme, Kind,
};

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex {s}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn parse_u32(s: &str) -> u32 {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

/// The lines of a data file that are not comments or blank.
fn records(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
}

/// Core's `hash_tests.cpp`: all 14 MurmurHash3 vectors.
#[test]
fn murmur3_matches_bitcoin_cores_vectors() {
    let text = data("bip37-murmur3.txt");
    let mut checked = 0;
    for r in records(&text) {
        let (expected, seed) = (parse_u32(r[0]), parse_u32(r[1]));
        let key = if r[2] == "-" { Vec::new() } else { unhex(r[2]) };
        assert_eq!(
            murmur3_x86_32(seed, &key),
            expected,
            "seed {seed:#x}, data {}",
            r[2]
        );
        checked += 1;
    }
    println!("bip37: {checked} MurmurHash3 vectors checked");
    assert_eq!(checked, 14);
}

/// The state of one `bloom_tests.cpp` case as its steps run: the filter
/// built from the elements, and the one imported from its serialisation
/// once the case has given it.
struct Case {
    name: String,
    built: Bip37Filter,
    imported: Option<Bip37Filter>,
}

/// Core's `bloom_tests.cpp` filterload cases, step by step: the filter
/// built here from Core's parameters and elements serialises to Core's
/// bytes; those bytes imported export to themselves, go through coded and
/// raw frames unchanged, and every `contains` check answers as Core's on
/// the built, imported and decoded filters.
#[test]
fn filterload_cases_match_bitcoin_cores_vectors() {
    let text = data("bip37-filterload.txt");
    let limits = DecodeLimits::default();
    let (mut cases, mut serialised, mut contains) = (0, 0, 0);
    let mut case: Option<Case> = None;
    for r in records(&text) {
        match r[0] {
            "case" => {
                case = Some(Case {
                    name: r[1].to_string(),
                    built: Bip37Filter::new(1, 1, 0, 0).unwrap(),
                    imported: None,
                });
                cases += 1;
            }
            "filter" => {
                let c = case.as_mut().unwrap();
                let n: u32 = r[1].parse().unwrap();
                let fp: f64 = r[2].parse().unwrap();
                c.built = Bip37Filter::with_capacity(n, fp, parse_u32(r[3]), r[4].parse().unwrap())
                    .unwrap();
            }
            "insert" => case.as_mut().unwrap().built.insert(&unhex(r[1])),
            "clear" => {
                // Core's clear() zeroes vData and keeps the shape.
                let c = case.as_mut().unwrap();
                let b = &c.built;
                c.built =
                    Bip37Filter::new(b.len_bytes(), b.hash_funcs(), b.tweak(), b.flags()).unwrap();
                c.imported = Some(c.built.clone());
            }
            "serialized" => {
                let c = case.as_mut().unwrap();
                let bytes = unhex(r[1]);
                assert_eq!(c.built.to_filterload(), bytes, "{}: built", c.name);
                let imported = Bip37Filter::from_filterload(&bytes, &limits).unwrap();
                assert_eq!(
                    imported.to_filterload(),
                    bytes,
                    "{}: import, export",
                    c.name
                );
                assert_eq!(imported.filter().to_bytes(), c.built.filter().to_bytes());
                for frame in [encode_bip37(&imported), encode_bip37_raw(&imported)] {
                    let back = match decode_any(&frame, &limits).unwrap() {
                        AnyFilter::Bip37(f) => f,
                        other => panic!("{}: decoded as {:?}", c.name, other.kind()),
                    };
                    assert_eq!(back.to_filterload(), bytes, "{}: frame", c.name);
                    assert_eq!(decode_bip37(&frame, &limits).unwrap(), back);
                }
                c.imported = Some(imported);
                serialised += 1;
            }
            "contains" => {
                let c = case.as_ref().unwrap();
                let (key, want) = (unhex(r[1]), r[2] == "1");
                assert_eq!(c.built.contains(&key), want, "{}: {}", c.name, r[1]);
                if let Some(imported) = &c.imported {
                    assert_eq!(imported.contains(&key), want, "{}: imported", c.name);
                    let frame = encode_bip37(imported);
                    let any = decode_any(&frame, &limits).unwrap();
                    assert_eq!(any.contains(&key), want, "{}: from a frame", c.name);
                }
                contains += 1;
            }
            other => panic!("unknown step {other}"),
        }
    }
    println!(
        "bip37: {cases} filterload cases checked ({serialised} serialisations, {contains} contains answers)"
    );
    assert_eq!((cases, serialised, contains), (3, 3, 12));
}

/// Shapes Core's vectors do not reach: a CompactSize of 3 bytes, the
/// largest filter (36,000 bytes) with the most hash functions (50), a
/// tweak that wraps the seeds, and flags outside BIP37's three.
#[test]
fn bip37_edge_shapes_round_trip() {
    let limits = DecodeLimits::default();
    for (len, k, tweak, flags) in [
        (253u32, 7u32, 0xffff_ffffu32, 2u8),
        (36_000, 50, 0x8000_0001, 255),
        (1, 1, 0, 0),
    ] {
        let mut f = Bip37Filter::new(len, k, tweak, flags).unwrap();
        for i in 0..200u32 {
            f.insert(&i.to_le_bytes());
        }
        let bytes = f.to_filterload();
        let cs = if len < 0xfd { 1 } else { 3 };
        assert_eq!(bytes.len(), cs + len as usize + 9);
        if len >= 0xfd {
            assert_eq!(&bytes[..3], &[0xfd, len as u8, (len >> 8) as u8]);
        }
        let back = Bip37Filter::from_filterload(&bytes, &limits).unwrap();
        assert_eq!(back.to_filterload(), bytes);
        assert_eq!(
            (
                back.len_bytes(),
                back.hash_funcs(),
                back.tweak(),
                back.flags()
            ),
            (len, k, tweak, flags)
        );
        for i in 0..200u32 {
            assert!(back.contains(&i.to_le_bytes()));
        }
        let frame = encode_bip37(&f);
        let h = format::inspect(&frame, &limits).unwrap();
        assert_eq!((h.version, h.kind), (3, FilterKind::Standard));
        assert_eq!(h.params.scheme, HashScheme::Bip37Murmur);
        assert_eq!(h.bip37_flags, Some(flags));
        assert_eq!(
            decode_bip37(&frame, &limits).unwrap().to_filterload(),
            bytes
        );
    }
}

/// One refusal per `Bip37Error` variant of the importer, each matched on
/// its variant and fields.
#[test]
fn bip37_importer_refuses_hostile_payloads() {
    let limits = DecodeLimits::default();
    let good = unhex("03614e9b050000000000000001");
    let refuse = |bytes: &[u8]| Bip37Filter::from_filterload(bytes, &limits).unwrap_err();
    // CompactSize: a 3-byte form for 3, truncated forms.
    let mut long = vec![0xfd, 0x03, 0x00];
    long.extend_from_slice(&good[1..]);
    assert_eq!(
        refuse(&long),
        Bip37Error::BadCompactSize { value: 3, bytes: 3 }
    );
    assert_eq!(
        refuse(&[]),
        Bip37Error::Truncated {
            needed: 1,
            available: 0
        }
    );
    assert_eq!(
        refuse(&[0xfe, 1]),
        Bip37Error::Truncated {
            needed: 5,
            available: 2
        }
    );
    // 36,001 bytes (a 0xfd form), and a length near 2^64: refused on the
    // length alone, before the bytes are looked for.
    let mut big = vec![0xfd];
    big.extend_from_slice(&36_001u16.to_le_bytes());
    assert_eq!(
        refuse(&big),
        Bip37Error::TooLarge {
            len: 36_001,
            max: 36_000
        }
    );
    let mut huge = vec![0xff];
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        refuse(&huge),
        Bip37Error::TooLarge {
            len: u64::MAX,
            max: 36_000
        }
    );
    // The receiver's max_m is a tighter bound.
    let small = DecodeLimits {
        max_m: 16,
        ..DecodeLimits::default()
    };
    assert_eq!(
        Bip37Filter::from_filterload(&good, &small).unwrap_err(),
        Bip37Error::TooLarge { len: 3, max: 2 }
    );
    // Empty filter, no hash functions, too many.
    assert_eq!(refuse(&unhex("00050000000000000001")), Bip37Error::Empty);
    let mut k = good.clone();
    k[4] = 0;
    assert_eq!(refuse(&k), Bip37Error::NoHashFuncs);
    k[4] = 51;
    assert_eq!(refuse(&k), Bip37Error::TooManyHashFuncs { found: 51 });
    k[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(refuse(&k), Bip37Error::TooManyHashFuncs { found: u32::MAX });
    // Truncated anywhere, and one byte too many.
    for cut in 1..good.len() {
        assert_eq!(
            refuse(&good[..cut]),
            Bip37Error::Truncated {
                needed: 13,
                available: cut as u64
            },
            "cut at {cut}"
        );
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(
        refuse(&trailing),
        Bip37Error::TrailingData { end: 13, extra: 1 }
    );
    // The library's constructor refuses the same shapes.
    assert_eq!(Bip37Filter::new(0, 5, 0, 0).unwrap_err(), Bip37Error::Empty);
    assert_eq!(
        Bip37Filter::new(3, 0, 0, 0).unwrap_err(),
        Bip37Error::NoHashFuncs
    );
    assert_eq!(
        Bip37Filter::new(3, 51, 0, 0).unwrap_err(),
        Bip37Error::TooManyHashFuncs { found: 51 }
    );
    assert_eq!(
        Bip37Filter::new(36_001, 5, 0, 0).unwrap_err(),
        Bip37Error::TooLarge {
            len: 36_001,
            max: 36_000
        }
    );
}

/// Scheme 4's rules hold for plain filters too, and the header refuses
/// what the library does: the BIP37 record without scheme 4, a record
/// that is not 1 byte, scheme 4 on another kind or out of its ranges.
#[test]
fn bip37_scheme_rules_and_record_checks() {
    let limits = DecodeLimits::default();
    let p = |m, k, seed| FilterParams {
        m,
        k,
        seed,
        scheme: HashScheme::Bip37Murmur,
    };
    for bad in [
        p(24, 51, 0),
        p(24, 5, 1 << 32),
        p(20, 5, 0),
        p(288_008, 5, 0),
    ] {
        assert!(
            matches!(
                BloomFilter::new(bad),
                Err(FilterError::SchemeRule {
                    scheme: "bip37-murmur3",
                    ..
                })
            ),
            "{bad}"
        );
    }
    BloomFilter::new(p(288_000, 50, u64::from(u32::MAX))).unwrap();

    let f = Bip37Filter::from_filterload(&unhex("03614e9b050000000000000001"), &limits).unwrap();
    let frame = encode_bip37_raw(&f);
    let h = format::inspect(&frame, &limits).unwrap();
    let (meta_at, meta_len) = h.metadata.unwrap();
    assert_eq!(
        &frame[meta_at..meta_at + meta_len],
        &[4, 1, 1],
        "tag 4, length 1, nFlags"
    );
    // Record 4 with scheme 1.
    let mut bad = frame.clone();
    bad[4] = 1;
    common::fix_crc(&mut bad);
    assert!(matches!(
        decode_any(&bad, &limits),
        Err(DecodeError::InvalidField {
            field: "metadata tag",
            ..
        })
    ));
    // Record 4 of length 2 (meta_len grows with it).
    let mut bad = frame.clone();
    bad[meta_at - 1] = 4;
    bad[meta_at + 1] = 2;
    bad.insert(meta_at + 3, 0);
    common::fix_crc(&mut bad);
    assert!(matches!(
        decode_any(&bad, &limits),
        Err(DecodeError::InvalidField {
            field: "metadata length",
            reason: "a BIP37 record (tag 4) is 1 byte",
            ..
        })
    ));
    // Scheme 4 on the counting kind.
    let mut bad = frame.clone();
    bad[6] = FilterKind::Counting.id();
    common::fix_crc(&mut bad);
    assert!(matches!(
        decode_any(&bad, &limits),
        Err(DecodeError::InvalidField {
            field: "hash scheme",
            reason: "BIP37's hashing (scheme 4) is for the standard kind only",
            ..
        })
    ));
    // k = 51 in the header (k is the varint after seed and m).
    let mut bad = frame.clone();
    let k_at = 7 + 1 + 1; // seed 0 (1 byte), m = 24 (1 byte)
    assert_eq!(bad[k_at], 5);
    bad[k_at] = 51;
    common::fix_crc(&mut bad);
    assert!(matches!(
        decode_any(&bad, &limits),
        Err(DecodeError::InvalidField {
            field: "hash scheme",
            ..
        })
    ));
    // Scheme 4 in a version-1 or 2 frame is unknown there.
    let mut v1 = compressed_bloom::encode_as(
        &BloomFilter::new(FilterParams::new(24, 5, 0)).unwrap(),
        FilterType::Raw,
    );
    assert!(v1[2] < 3);
    v1[4] = 4;
    common::fix_crc(&mut v1);
    assert_eq!(
        decode_any(&v1, &limits),
        Err(DecodeError::UnknownHashScheme { id: 4 })
    );
}

/// Without the record, a filter with BIP37's hashing is a standard filter
/// that still answers as Core does but cannot be exported; a typed
/// receiver of BIP37 filters refuses it.
#[test]
fn bip37_bare_scheme_4_frames_are_standard_filters() {
    let limits = DecodeLimits::default();
    let f = Bip37Filter::from_filterload(&unhex("03614e9b050000000000000001"), &limits).unwrap();
    let bare = encode(f.filter());
    match decode_any(&bare, &limits).unwrap() {
        AnyFilter::Standard(g) => {
            assert_eq!(&g, f.filter());
            assert!(g.contains(&unhex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")));
        }
        other => panic!("decoded as {:?}", other.kind()),
    }
    assert_eq!(decode_bip37(&bare, &limits), Err(DecodeError::NotBip37));
    // decode_as refuses it as it refuses a bare frame for a Squid digest:
    // the header is not one the kind accepts.
    assert!(matches!(
        compressed_bloom::decode_as::<Bip37Filter>(&bare, &limits),
        Err(DecodeError::WrongKind { .. })
    ));
}

/// Deltas between two BIP37 filters carry the bits only; the receiver
/// keeps nFlags.
#[test]
fn bip37_deltas_keep_the_flags() {
    let limits = DecodeLimits::default();
    let mut old = Bip37Filter::new(1000, 10, 77, 2).unwrap();
    for i in 0..300u32 {
        old.insert(&i.to_le_bytes());
    }
    let mut new = old.clone();
    for i in 300..400u32 {
        new.insert(&i.to_le_bytes());
    }
    let frame = Kind::encode_delta(&old, &new, None).unwrap();
    let h = format::inspect(&frame, &limits).unwrap();
    assert!(h.filter_type.is_delta());
    assert_eq!(h.bip37_flags, None);
    let mut any = AnyFilter::Bip37(old.clone());
    compressed_bloom::apply_delta(&mut any, &frame, &limits).unwrap();
    match any {
        AnyFilter::Bip37(got) => {
            assert_eq!(got.filter().to_bytes(), new.filter().to_bytes());
            assert_eq!(got.flags(), 2);
            assert_eq!(got.to_filterload(), new.to_filterload());
        }
        other => panic!("{:?}", other.kind()),
    }
}

/// FORMAT.md's scheme 4 example: key "abc", m = 64, k = 3, nTweak 5. The
/// seeds are 5, 0xfba4c79a, 0xf7498f2f; MurmurHash3 gives 0xd0795c1d,
/// 0xd4ceb6a5, 0x2d7a5cff (Python, from Core's algorithm), so the
/// positions are 29, 37 and 63.
#[test]
fn bip37_format_example_positions() {
    let mut f = Bip37Filter::new(8, 3, 5, 0).unwrap();
    f.insert(b"abc");
    let ones: Vec<u64> = f.filter().ones().collect();
    assert_eq!(ones, [29, 37, 63]);
    // len 8 ‖ vData ‖ nHashFuncs 3 ‖ nTweak 5 ‖ nFlags 0.
    assert_eq!(
        f.to_filterload(),
        unhex("080000002020000080030000000500000000")
    );
}

/// Serde (feature `serde`) carries a BIP37 filter as its frame, nFlags
/// included, in postcard and JSON.
#[cfg(feature = "serde")]
#[test]
fn bip37_serde_round_trips_as_its_frame() {
    let mut f = Bip37Filter::new(100, 7, 9, 2).unwrap();
    for i in 0..40u32 {
        f.insert(&i.to_le_bytes());
    }
    let bytes = postcard::to_allocvec(&f).unwrap();
    let frame = encode_bip37(&f);
    assert!(bytes.ends_with(&frame));
    assert_eq!(postcard::from_bytes::<Bip37Filter>(&bytes).unwrap(), f);
    let json = serde_json::to_string(&AnyFilter::Bip37(f.clone())).unwrap();
    assert_eq!(
        serde_json::from_str::<AnyFilter>(&json).unwrap(),
        AnyFilter::Bip37(f)
    );
}

/// The bit-array stream reader does not take a BIP37 frame (it would drop
/// the record): it refuses it as a frame type, pointing at decode_any.
#[test]
fn bip37_frames_are_not_streamed_as_bare_bits() {
    let f = Bip37Filter::new(100, 7, 9, 2).unwrap();
    let limits = DecodeLimits::unlimited();
    for frame in [encode_bip37(&f), encode_bip37_raw(&f)] {
        let h = format::header::parse(&frame, &limits).unwrap();
        assert!(!format::stream::streams_bits(&h));
        let err = format::stream::CheckedFrame::new(&frame, &limits).unwrap_err();
        assert!(matches!(err, DecodeError::WrongFrameType { .. }), "{err}");
        assert!(err.to_string().contains("decode_any"), "{err}");
    }
}
