//! Frames crafted by an adversary: each failure class has its typed error,
//! and huge declared sizes are refused before anything is allocated.

use compressed_bloom::format::varint;
use compressed_bloom::{
    decode, encode, inspect, BloomFilter, Coding, DecodeError, DecodeLimits, FilterError,
    FilterParams,
};

/// A frame with the given header fields and payload, and a correct CRC. The
/// version byte is the lowest version that defines the type, as the encoder
/// writes it (2 for type 3, 1 otherwise).
fn craft(ty: u8, seed: u64, m: u64, k: u64, n: u64, payload: &[u8]) -> Vec<u8> {
    let version = if ty == 3 { 2 } else { 1 };
    let mut f = vec![0xCB, 0xF1, version, ty, 1, 0];
    for v in [seed, m, k, n, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// CRC-32C, bitwise, from its definition (independent of the crate's dependency).
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn crc_definition_check_value() {
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn frame_declaring_m_2_pow_60_is_refused_before_allocation() {
    let frame = craft(1, 0, 1 << 60, 2, 10, &[0u8; 8]);
    for limits in [DecodeLimits::default(), DecodeLimits::unlimited()] {
        let e = decode(&frame, &limits).unwrap_err();
        assert!(
            matches!(
                e,
                DecodeError::LimitExceeded { requested, .. } if requested == 1 << 60
            ) || matches!(e, DecodeError::InvalidField { field: "m", .. }),
            "{e}"
        );
    }
}

#[test]
fn huge_but_legal_m_fails_cleanly_when_memory_cannot_be_had() {
    // 2^56 bits = 8 PiB: within the format, beyond any machine.
    let frame = craft(1, 0, 1 << 56, 2, 10, &[0u8; 8]);
    let e = decode(&frame, &DecodeLimits::unlimited()).unwrap_err();
    assert!(
        matches!(e, DecodeError::Filter(FilterError::OutOfMemory { .. })),
        "{e}"
    );
    let e = decode(&frame, &DecodeLimits::default()).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::LimitExceeded {
                what: "m (bits)",
                ..
            }
        ),
        "{e}"
    );
}

/// The expansion attack at 1/16 scale: many blocks of all zeros or all
/// ones static-code to a few bytes each (at m = 2^32 such a frame is 2,325
/// bytes for 512 MiB). Under the default limits it is refused before
/// anything is allocated: its array is past 2^16 bytes per frame byte,
/// the most a coded (type 1) array reaches, so the expansion floor does
/// not cover it. An empty filter of the same size, as a publisher sends
/// it (type 1), is within the floor (512 MiB, the default memory limit)
/// and taken; a receiver that holds every frame to the ratio alone
/// (`expansion_floor: 0`) refuses it, and with a larger `max_m` the ratio
/// applies again above the floor.
#[test]
fn the_expansion_ratio_applies_above_the_floor() {
    let m = 1u64 << 28;
    let mut f = BloomFilter::new(FilterParams::new(m, 1, 0)).unwrap();
    // Alternate blocks of 2^23 bits all ones: 2^23 / 64 words each.
    let mut words = f.as_words().to_vec();
    for (i, w) in words.iter_mut().enumerate() {
        if (i / (1 << 17)) % 2 == 1 {
            *w = u64::MAX;
        }
    }
    f = BloomFilter::from_bytes(
        *f.params(),
        0,
        &words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let frame = encode(&f);
    let len = frame.len() as u64;
    assert!((m / 8) > len << 16, "{len} bytes");
    assert_eq!(
        decode(&frame, &DecodeLimits::default()),
        Err(DecodeError::LimitExceeded {
            what: "expansion (output bytes per frame byte)",
            requested: (m / 8).div_ceil(len),
            limit: 4096,
        })
    );
    // The empty filter, coded: taken under the default limits.
    let empty = BloomFilter::new(FilterParams::new(m, 1, 0)).unwrap();
    let frame = encode(&empty);
    let len = frame.len() as u64;
    assert!((m / 8) > len * 4096 && (m / 8) <= len << 16, "{len} bytes");
    assert_eq!(decode(&frame, &DecodeLimits::default()).unwrap(), empty);
    let ratio_only = DecodeLimits {
        expansion_floor: 0,
        ..DecodeLimits::default()
    };
    assert_eq!(
        decode(&frame, &ratio_only),
        Err(DecodeError::LimitExceeded {
            what: "expansion (output bytes per frame byte)",
            requested: (m / 8).div_ceil(len),
            limit: 4096,
        })
    );
    // The floor is inclusive: output equal to it passes, one byte less
    // refuses.
    let floor = |b: u64| DecodeLimits {
        expansion_floor: b,
        ..DecodeLimits::default()
    };
    assert_eq!(decode(&frame, &floor(m / 8)).unwrap(), empty);
    assert!(matches!(
        decode(&frame, &floor(m / 8 - 1)),
        Err(DecodeError::LimitExceeded { what, limit: 4096, .. }) if what.starts_with("expansion")
    ));
    // The same empty filter static-coded in one block is a frame of a few
    // bytes: held to the ratio.
    let tiny = compressed_bloom::Kind::encode_frame(&empty, Coding::Static, None);
    let tiny_len = tiny.len() as u64;
    assert!((m / 8) > tiny_len << 16, "{tiny_len} bytes");
    assert_eq!(
        decode(&tiny, &DecodeLimits::default()),
        Err(DecodeError::LimitExceeded {
            what: "expansion (output bytes per frame byte)",
            requested: (m / 8).div_ceil(tiny_len),
            limit: 4096,
        })
    );
    // Past the default floor (a receiver that raised max_m to 2^33): a
    // header declaring a 1 GiB filter in a 40-byte payload is held to the
    // ratio again, before its payload is read.
    let big = craft(1, 0, 1 << 33, 1, 0, &[0u8; 40]);
    let wide = DecodeLimits {
        max_m: 1 << 33,
        ..DecodeLimits::default()
    };
    assert!(matches!(
        decode(&big, &wide),
        Err(DecodeError::LimitExceeded { what, limit: 4096, .. }) if what.starts_with("expansion")
    ));
}

#[test]
fn expansion_limit_refuses_tiny_frames_with_huge_filters() {
    let f = BloomFilter::new(FilterParams::new(1 << 24, 2, 0)).unwrap();
    let frame = encode(&f);
    assert!(
        frame.len() < 64,
        "an empty 2 MiB filter codes to a few bytes"
    );
    let limits = DecodeLimits {
        max_expansion: Some(1000),
        expansion_floor: 0,
        ..DecodeLimits::default()
    };
    assert!(matches!(
        decode(&frame, &limits),
        Err(DecodeError::LimitExceeded { what, .. }) if what.starts_with("expansion")
    ));
    // The default limits take it (2 MiB is within the floor), as a
    // receiver must take the empty filter its publisher declares.
    assert_eq!(decode(&frame, &DecodeLimits::default()).unwrap(), f);
    let unlimited = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    assert_eq!(decode(&frame, &unlimited).unwrap(), f);
    // At the boundary: an empty filter whose ⌈m/8⌉ is an exact multiple r of
    // its frame length is allowed with ratio r and refused with r − 1.
    let (frame, ratio) = (8_000u64..)
        .step_by(8)
        .find_map(|m| {
            let frame = encode(&BloomFilter::new(FilterParams::new(m, 2, 0)).unwrap());
            let raw = m / 8;
            let len = frame.len() as u64;
            (raw % len == 0).then_some((frame, raw / len))
        })
        .unwrap();
    let with = |r: u64| DecodeLimits {
        max_expansion: Some(r),
        expansion_floor: 0,
        ..DecodeLimits::default()
    };
    assert_eq!(
        decode(&frame, &with(ratio)).map(|f| f.m() / 8),
        Ok(ratio * frame.len() as u64)
    );
    assert!(matches!(
        decode(&frame, &with(ratio - 1)),
        Err(DecodeError::LimitExceeded { what, .. }) if what.starts_with("expansion")
    ));
}

#[test]
fn one_test_per_error_class() {
    let good = craft(0, 0, 16, 2, 1, &[0b1010_0101, 0]);
    assert_eq!(
        decode(&good, &DecodeLimits::default()).map(|f| f.to_bytes()),
        Ok(vec![0b1010_0101, 0])
    );
    let with = |i: usize, b: u8| {
        let mut f = good.clone();
        f[i] = b;
        let body = f.len() - 4;
        let crc = crc32c(&f[..body]);
        f[body..].copy_from_slice(&crc.to_le_bytes());
        f
    };
    assert!(matches!(
        decode(&good[..3], &DecodeLimits::default()),
        Err(DecodeError::Truncated { .. })
    ));
    assert!(matches!(
        decode(&with(0, 0xCA), &DecodeLimits::default()),
        Err(DecodeError::BadMagic {
            found: [0xCA, 0xF1]
        })
    ));
    assert!(matches!(
        decode(&with(2, 4), &DecodeLimits::default()),
        Err(DecodeError::UnsupportedVersion { version: 4 })
    ));
    assert!(matches!(
        decode(&with(2, 0), &DecodeLimits::default()),
        Err(DecodeError::UnsupportedVersion { version: 0 })
    ));
    // Type 3 (conditional delta) exists from version 2 on, not in version 1.
    assert!(matches!(
        decode(&with(3, 3), &DecodeLimits::default()),
        Err(DecodeError::UnknownFilterType { id: 3, version: 1 })
    ));
    assert!(matches!(
        decode(&with(3, 9), &DecodeLimits::default()),
        Err(DecodeError::UnknownFilterType { id: 9, version: 1 })
    ));
    assert!(matches!(
        decode(&with(4, 0), &DecodeLimits::default()),
        Err(DecodeError::UnknownHashScheme { id: 0 })
    ));
    assert!(matches!(
        decode(&with(5, 0x80), &DecodeLimits::default()),
        Err(DecodeError::ReservedBits {
            offset: 5,
            value: 0x80
        })
    ));
    // Over-long varint for the seed: 0x80 0x00.
    let mut bad = vec![0xCB, 0xF1, 1, 0, 1, 0, 0x80, 0x00];
    bad.extend_from_slice(&[16, 2, 1, 2, 0, 0, 0, 0, 0, 0]);
    assert!(matches!(
        decode(&bad, &DecodeLimits::default()),
        Err(DecodeError::BadVarint {
            offset: 6,
            field: "seed",
            ..
        })
    ));
    assert!(matches!(
        decode(&craft(0, 0, 16, 0, 1, &[0, 0]), &DecodeLimits::default()),
        Err(DecodeError::InvalidField { field: "k", .. })
    ));
    assert!(matches!(
        decode(&craft(0, 0, 0, 2, 1, &[]), &DecodeLimits::default()),
        Err(DecodeError::InvalidField { field: "m", .. })
    ));
    assert!(matches!(
        decode(&craft(0, 0, 16, 2, 1, &[0, 0, 0]), &DecodeLimits::default()),
        Err(DecodeError::InvalidField {
            field: "payload_len",
            ..
        })
    ));
    assert!(matches!(
        decode(&craft(1, 0, 16, 2, 1, &[0, 0]), &DecodeLimits::default()),
        Err(DecodeError::InvalidField {
            field: "payload_len",
            ..
        })
    ));
    let limits = DecodeLimits {
        max_k: 1,
        ..DecodeLimits::default()
    };
    assert!(matches!(
        decode(&good, &limits),
        Err(DecodeError::LimitExceeded { what: "k", .. })
    ));
    let limits = DecodeLimits {
        max_frame_len: 10,
        ..DecodeLimits::default()
    };
    assert!(matches!(
        decode(&good, &limits),
        Err(DecodeError::LimitExceeded { .. })
    ));
    let mut flipped = good.clone();
    flipped[11] ^= 1;
    assert!(matches!(
        decode(&flipped, &DecodeLimits::default()),
        Err(DecodeError::ChecksumMismatch { .. })
    ));
    let mut trailing = good.clone();
    trailing.push(7);
    assert!(matches!(
        decode(&trailing, &DecodeLimits::default()),
        Err(DecodeError::TrailingBytes { count: 1, .. })
    ));
    // m = 12: the second byte's top four bits are padding.
    assert!(matches!(
        decode(&craft(0, 0, 12, 2, 1, &[0, 0xF0]), &DecodeLimits::default()),
        Err(DecodeError::Filter(FilterError::PaddingBitsSet { m: 12 }))
    ));
    // A coded payload that is not a valid stream.
    assert!(matches!(
        decode(
            &craft(1, 0, 4096, 2, 1, &[1, 0, 0, 0, 9, 9]),
            &DecodeLimits::default()
        ),
        Err(DecodeError::Payload { .. })
    ));
}

/// k is checked against the format's range (1..=64) before the caller's
/// limit: a k the format allows but the limit does not is a limit error, a k
/// the format never allows is an invalid field, whatever the limit.
#[test]
fn k_at_the_format_and_limit_boundaries() {
    let frame = |k: u64| craft(0, 0, 16, k, 1, &[0, 0]);
    let tight = DecodeLimits {
        max_k: 8,
        ..DecodeLimits::default()
    };
    assert_eq!(
        decode(&frame(64), &DecodeLimits::default()).map(|f| f.params().k),
        Ok(64),
        "k = 64 is in the format's range"
    );
    assert!(matches!(
        decode(&frame(64), &tight),
        Err(DecodeError::LimitExceeded {
            what: "k",
            requested: 64,
            limit: 8
        })
    ));
    assert!(matches!(
        decode(&frame(9), &tight),
        Err(DecodeError::LimitExceeded { what: "k", .. })
    ));
    assert_eq!(decode(&frame(8), &tight).map(|f| f.params().k), Ok(8));
    for k in [65, 1000] {
        for limits in [tight, DecodeLimits::default()] {
            assert!(matches!(
                decode(&frame(k), &limits),
                Err(DecodeError::InvalidField { field: "k", .. })
            ));
        }
    }
}

/// A header that stops inside a varint is truncated (more bytes may come);
/// a varint that is malformed whatever follows is a bad varint.
#[test]
fn header_cut_inside_a_varint_is_truncated_not_malformed() {
    // m = 300 takes two bytes (0xAC 0x02); cut after the first.
    let full = craft(0, 0, 300, 2, 1, &[0; 38]);
    let m_at = 7; // magic 2, version, type, scheme, flags, seed (1 byte)
    assert_eq!(full[m_at], 0xAC);
    let cut = &full[..m_at + 1];
    assert_eq!(
        decode(cut, &DecodeLimits::default()),
        Err(DecodeError::Truncated {
            needed: cut.len() as u64 + 1,
            available: cut.len() as u64,
        })
    );
    // Nine continuation bytes and the end: still possibly a valid varint.
    let mut nine = full[..m_at].to_vec();
    nine.extend_from_slice(&[0x80; 9]);
    assert!(matches!(
        decode(&nine, &DecodeLimits::default()),
        Err(DecodeError::Truncated { .. })
    ));
    // Ten continuation bytes can never end a 64-bit varint.
    let mut ten = full[..m_at].to_vec();
    ten.extend_from_slice(&[0x80; 10]);
    assert!(matches!(
        decode(&ten, &DecodeLimits::default()),
        Err(DecodeError::BadVarint { field: "m", .. })
    ));
    // A complete but over-long varint (0x80 0x00) is malformed even though
    // the input ends right after it.
    let mut overlong = full[..m_at].to_vec();
    overlong.extend_from_slice(&[0x80, 0x00]);
    assert!(matches!(
        decode(&overlong, &DecodeLimits::default()),
        Err(DecodeError::BadVarint {
            offset: 7,
            field: "m",
            ..
        })
    ));
    // A cut after a complete varint is truncated at the next field.
    let after_m = &full[..m_at + 2];
    assert!(matches!(
        decode(after_m, &DecodeLimits::default()),
        Err(DecodeError::Truncated { .. })
    ));
}

/// The header's own payload-length floors for deltas (two 8-byte digests;
/// for a conditional delta also two varints of at least one byte) and the
/// frame-length limit, at their boundaries. `inspect` checks header and CRC
/// only, so the frames need no valid payload beyond the floor.
#[test]
fn payload_floors_and_frame_limit_at_their_boundaries() {
    let frame = |ty: u8, payload_len: usize| craft(ty, 0, 64, 2, 1, &vec![0; payload_len]);
    let limits = DecodeLimits::default();
    for (ty, floor) in [(2u8, 16usize), (3, 18)] {
        for len in 0..floor {
            assert!(
                matches!(
                    inspect(&frame(ty, len), &limits),
                    Err(DecodeError::InvalidField {
                        field: "payload_len",
                        ..
                    })
                ),
                "type {ty}, payload {len}"
            );
        }
        let at_floor = frame(ty, floor);
        assert_eq!(
            inspect(&at_floor, &limits).unwrap().payload_len,
            floor as u64
        );
    }
    // A frame exactly as long as max_frame_len is accepted; one byte over is not.
    let good = frame(0, 8);
    let exact = DecodeLimits {
        max_frame_len: good.len() as u64,
        ..DecodeLimits::default()
    };
    assert_eq!(decode(&good, &exact).map(|f| f.to_bytes()), Ok(vec![0; 8]));
    let under = DecodeLimits {
        max_frame_len: good.len() as u64 - 1,
        ..DecodeLimits::default()
    };
    assert_eq!(
        decode(&good, &under),
        Err(DecodeError::LimitExceeded {
            what: "frame length (bytes)",
            requested: good.len() as u64,
            limit: good.len() as u64 - 1,
        })
    );
}

/// A version-3 header by hand: `flags`, `kind`, then seed, m, k, n, the
/// `extra` varints (identity, meta_len), the raw `records` bytes, and the
/// payload length and payload.
fn craft_v3(
    ty: u8,
    flags: u8,
    kind: u8,
    m: u64,
    extra: &[u64],
    records: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let mut f = vec![0xCB, 0xF1, 3, ty, 1, flags, kind];
    for v in [0, m, 2, 1].iter().chain(extra) {
        varint::put(&mut f, *v);
    }
    f.extend_from_slice(records);
    varint::put(&mut f, payload.len() as u64);
    f.extend_from_slice(payload);
    let crc = crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// FORMAT.md caps m at 2^56 whatever the receiver's limits say: `decode`
/// and `inspect` refuse a larger m even under unlimited limits.
#[test]
fn m_beyond_the_format_range_is_refused_under_any_limits() {
    let unlimited = DecodeLimits {
        max_m: u64::MAX,
        max_frame_len: u64::MAX,
        max_expansion: None,
        ..DecodeLimits::default()
    };
    for m in [(1u64 << 56) + 1, u64::MAX] {
        for frame in [
            craft(1, 0, m, 2, 1, &[0; 20]),
            craft(2, 0, m, 2, 1, &[0; 20]),
            craft_v3(1, 0, 0, m, &[], &[], &[0; 20]),
        ] {
            assert!(
                matches!(
                    inspect(&frame, &unlimited),
                    Err(DecodeError::InvalidField { field: "m", .. })
                ),
                "m = {m}"
            );
            assert!(matches!(
                compressed_bloom::delta::inspect_delta(&frame, &unlimited),
                Err(DecodeError::InvalidField { field: "m", .. })
            ));
        }
    }
    // 2^56 itself is in range (and refused only by the default limit).
    let top = craft(1, 0, 1 << 56, 2, 1, &[0; 20]);
    assert!(matches!(
        inspect(&top, &DecodeLimits::default()),
        Err(DecodeError::LimitExceeded {
            what: "m (bits)",
            ..
        })
    ));
}

#[test]
fn version_3_header_fields_are_checked() {
    let raw = [0b1010_0101u8, 0];
    // Plain v3 frame of kind standard: valid, decodes like version 1.
    let v3 = craft_v3(0, 0, 0, 16, &[], &[], &raw);
    assert_eq!(
        decode(&v3, &DecodeLimits::default()).unwrap(),
        decode(&craft(0, 0, 16, 2, 1, &raw), &DecodeLimits::default()).unwrap()
    );
    // Kinds: unassigned ones are refused by id (every assigned kind is
    // supported; a receiver that refuses one names it, tests/kinds/partitioned_sparse.rs).
    for (kind, name) in [(6u8, None::<&str>), (255, None)] {
        let err = decode(
            &craft_v3(0, 0, kind, 16, &[], &[], &raw),
            &DecodeLimits::default(),
        )
        .unwrap_err();
        assert_eq!(err, DecodeError::UnsupportedKind { id: kind, name });
        if let Some(name) = name {
            assert!(err.to_string().contains(name), "{err}");
        }
    }
    // A supported kind through the standard-only decoder is the wrong kind;
    // the sparse kind has no raw type; a counting raw payload is ⌈m/2⌉
    // bytes, not ⌈m/8⌉.
    assert!(matches!(
        compressed_bloom::decode_any(
            &craft_v3(0, 0, 1, 16, &[], &[], &raw),
            &DecodeLimits::default()
        ),
        Err(DecodeError::InvalidField {
            field: "payload_len",
            ..
        })
    ));
    assert_eq!(
        decode(
            &craft_v3(0, 0, 2, 16, &[], &[], &raw),
            &DecodeLimits::default()
        )
        .unwrap_err(),
        DecodeError::WrongKind {
            found: compressed_bloom::FilterKind::Partitioned,
            expected: compressed_bloom::FilterKind::Standard
        }
    );
    assert!(matches!(
        decode(
            &craft_v3(0, 0, 4, 16, &[], &[], &raw),
            &DecodeLimits::default()
        ),
        Err(DecodeError::InvalidField {
            field: "filter type",
            offset: 3,
            ..
        })
    ));
    // Reserved flag bits.
    for flags in [0x04u8, 0x80] {
        assert!(matches!(
            decode(
                &craft_v3(0, flags, 0, 16, &[], &[], &raw),
                &DecodeLimits::default()
            ),
            Err(DecodeError::ReservedBits { offset: 5, .. })
        ));
    }
    // Version 1 and 2 frames have no flags at all.
    let mut v1 = craft(0, 0, 16, 2, 1, &raw);
    v1[5] = 1;
    assert!(matches!(
        decode(&v1, &DecodeLimits::default()),
        Err(DecodeError::ReservedBits { offset: 5, .. })
    ));
    // Identity: three varints; a cut inside them is truncation.
    let with_id = craft_v3(0, 1, 0, 16, &[9, 300, 4], &[], &raw);
    let h = inspect(&with_id, &DecodeLimits::default()).unwrap();
    assert_eq!(
        h.identity,
        Some(compressed_bloom::UpdateId {
            stream: 9,
            epoch: 300,
            seq: 4
        })
    );
    assert!(matches!(
        compressed_bloom::format::header::parse(&with_id[..12], &DecodeLimits::default()),
        Err(DecodeError::Truncated { .. })
    ));
    // Metadata: meta_len of 0 or above 4096 is invalid; a record running
    // past meta_len is invalid; a well-framed record has an unknown tag.
    assert!(matches!(
        decode(
            &craft_v3(0, 2, 0, 16, &[0], &[], &raw),
            &DecodeLimits::default()
        ),
        Err(DecodeError::InvalidField {
            field: "meta_len",
            ..
        })
    ));
    assert!(matches!(
        decode(
            &craft_v3(0, 2, 0, 16, &[4097], &[], &raw),
            &DecodeLimits::default()
        ),
        Err(DecodeError::InvalidField {
            field: "meta_len",
            ..
        })
    ));
    assert!(matches!(
        decode(
            &craft_v3(0, 2, 0, 16, &[3], &[1, 5, 0], &raw),
            &DecodeLimits::default()
        ),
        Err(DecodeError::InvalidField {
            field: "metadata length",
            ..
        })
    ));
    assert!(matches!(
        decode(
            &craft_v3(0, 2, 0, 16, &[3], &[7, 1, 0], &raw),
            &DecodeLimits::default()
        ),
        Err(DecodeError::UnknownMetadata { tag: 7, .. })
    ));
}

/// The decoder's work is proportional to what it is given and produces:
/// coding steps ≤ 5 · output bits + blocks (docs/HARDENING.md,
/// "Cost": every symbol advances at least one bit but the last of a block,
/// and a run has at most ⌈40/12⌉ = 4 uniform chunks). Over legitimate
/// filters of every density and frames an adversary would pick (all-zero
/// and all-one blocks, which code to a few bytes), the worst ratio of steps
/// to (8 · frame bytes + output bits) is printed and held below 1.
#[test]
fn decode_work_is_bounded_by_frame_and_output() {
    use compressed_bloom::{coder, format::header};
    let mut cases: Vec<(String, BloomFilter)> = Vec::new();
    let words_of = |m: u64, pattern: &dyn Fn(usize) -> u64| -> BloomFilter {
        let words: Vec<u64> = (0..m.div_ceil(64) as usize).map(pattern).collect();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        BloomFilter::from_bytes(
            FilterParams::new(m, 1, 0),
            0,
            &bytes[..m.div_ceil(8) as usize],
        )
        .unwrap()
    };
    let m = 3 << 23; // three blocks, four lanes each
    cases.push(("all zero".into(), words_of(m, &|_| 0)));
    cases.push(("all one".into(), words_of(m, &|_| u64::MAX)));
    cases.push((
        "alternating blocks".into(),
        words_of(m, &|i| if (i >> 17) % 2 == 1 { u64::MAX } else { 0 }),
    ));
    cases.push(("one bit per word".into(), words_of(m, &|i| 1 << (i % 64))));
    for (keys, k) in [(10_000u32, 1u32), (1_000_000, 2), (4_000_000, 3)] {
        let mut f = BloomFilter::new(FilterParams::new(m, k, 9)).unwrap();
        for i in 0..keys {
            f.insert(&i.to_le_bytes());
        }
        cases.push((format!("{keys} keys, k = {k}"), f));
    }
    let unlimited = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let mut worst = (0.0f64, String::new());
    for (name, f) in &cases {
        let frame = compressed_bloom::format::encode_with(f, Coding::Adaptive);
        let h = header::parse(&frame, &unlimited).unwrap();
        let payload = &frame[h.header_len..frame.len() - 4];
        let out_bits = f.m();
        let blocks = coder::block_count(out_bits);
        if h.filter_type == compressed_bloom::FilterType::Raw {
            continue; // no coding steps at all
        }
        let mut words = vec![0u64; out_bits.div_ceil(64) as usize];
        let steps = coder::decode_counting(payload, out_bits, &mut words).unwrap();
        assert_eq!(words, f.as_words(), "{name}");
        assert!(steps <= 5 * out_bits + blocks, "{name}: {steps} steps");
        let ratio = steps as f64 / (8.0 * frame.len() as f64 + out_bits as f64);
        println!(
            "{name}: {} bytes, {steps} steps, ratio {ratio:.4}",
            frame.len()
        );
        if ratio > worst.0 {
            worst = (ratio, name.clone());
        }
    }
    println!(
        "worst steps / (8 * frame bytes + output bits): {:.4} ({})",
        worst.0, worst.1
    );
    assert!(worst.0 < 1.0, "{worst:?}");
}

/// An input that must be exactly one frame and has bytes after it is
/// `TrailingBytes`, found before the CRC (docs/FORMAT.md section 2.3: step
/// 6 before step 7, and both before anything is decoded): with a damaged
/// CRC as well, every whole-input entry point names the trailing bytes,
/// not the checksum (they checked the CRC first, and `decode` decoded the
/// whole filter before it looked).
#[test]
fn trailing_bytes_are_found_before_the_crc() {
    use compressed_bloom::format::stream::CheckedFrame;
    use compressed_bloom::{decode_any, delta, Subscriber, SyncError};
    let mut f = BloomFilter::new(FilterParams::new(50_000, 3, 1)).unwrap();
    f.insert(b"a");
    let mut g = f.clone();
    g.insert(b"b");
    let lim = DecodeLimits::default();
    for frame in [encode(&f), delta::encode_delta(&f, &g).unwrap()] {
        let mut bad = frame.clone();
        let n = bad.len();
        bad[n - 1] ^= 0xff; // the CRC
        bad.push(0);
        let trailing = |e: &DecodeError| {
            *e == DecodeError::TrailingBytes {
                offset: n as u64,
                count: 1,
            }
        };
        if frame[3] == 1 {
            assert!(trailing(
                &decode(&bad, &DecodeLimits::default()).unwrap_err()
            ));
            assert!(trailing(&decode_any(&bad, &lim).unwrap_err()));
            assert!(trailing(&CheckedFrame::new(&bad, &lim).unwrap_err()));
        } else {
            assert!(trailing(&delta::inspect_delta(&bad, &lim).unwrap_err()));
            let mut base = f.clone();
            assert!(trailing(&delta::apply(&mut base, &bad, &lim).unwrap_err()));
        }
        let mut sub = <Subscriber>::new(lim);
        match sub.receive(&bad) {
            Err(SyncError::Decode(e)) => assert!(trailing(&e), "{e:?}"),
            other => panic!("{other:?}"),
        }
    }
}

/// A counting frame (kind 1, type 1) whose first `marked` of `m` counters
/// hold `value(i)` and the rest 0: the map coded (raw if coding does not
/// shrink it), the values through the range coder as section 8.1 says.
fn counting_frame(m: u64, marked: u64, value: impl Fn(u64) -> u64) -> Vec<u8> {
    use compressed_bloom::coder::{self, range};
    let mut words = vec![0u64; m.div_ceil(64) as usize];
    for i in 0..marked {
        words[(i / 64) as usize] |= 1 << (i % 64);
    }
    let mut map = Vec::new();
    coder::encode(&words, m, &mut map);
    let mut payload = vec![1u8];
    if map.len() as u64 >= m.div_ceil(8) {
        payload[0] = 0; // raw map
        map = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        map.truncate(m.div_ceil(8) as usize);
    }
    varint::put(&mut payload, map.len() as u64);
    payload.extend_from_slice(&map);
    let mut enc = range::Encoder::new(&mut payload);
    let mut models = [range::BitModel::default(); 14];
    for i in 0..marked {
        let value = value(i);
        for (j, model) in models.iter_mut().enumerate() {
            let more = value > j as u64 + 1;
            enc.encode(model, more);
            if !more {
                break;
            }
        }
    }
    enc.finish();
    let mut f = vec![0xCB, 0xF1, 3, 1, 1, 0, 1];
    for v in [0, m, 1, marked, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(&payload);
    let crc = crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// The counting kind's values cost at most 128 decisions per frame byte
/// under the default limits (docs/FORMAT.md section 8.1, "Work"): a
/// decision at the model's limit carries 0.00035 bits, so without the
/// budget a byte of values held ~22,700 decisions, and a 10,431-byte frame
/// of m = 2^24 counters at 15 took 1.4 s to decode (176 µs per byte,
/// 2.37 · 10^8 decisions). Frames whose map marks more counters than the
/// budget allows values for are refused before any value is decoded;
/// frames at the edge decode within it. The work counted is the value
/// decisions plus the map's coding steps, per frame byte.
#[test]
fn counting_values_cost_a_bounded_work_per_frame_byte() {
    use compressed_bloom::coder;
    use compressed_bloom::format::header;
    use compressed_bloom::kinds::counting;
    let lim = DecodeLimits::default();
    // Counters at 15 everywhere: refused before the values.
    for log_m in [16u32, 20, 24] {
        let m = 1u64 << log_m;
        let frame = counting_frame(m, m, |_| 15);
        let err = compressed_bloom::decode_any(&frame, &lim).unwrap_err();
        let budget = counting::decision_budget(&lim, frame.len() as u64).unwrap();
        assert_eq!(
            err,
            DecodeError::LimitExceeded {
                what: "counting value decisions (14 or 15 per marked counter)",
                requested: 14 * m,
                limit: budget,
            },
            "m = 2^{log_m}"
        );
        assert_eq!(budget, 128 * frame.len() as u64);
        println!(
            "m = 2^{log_m}, all 15: {} bytes, refused ({} decisions asked, budget {budget})",
            frame.len(),
            14 * m
        );
    }
    // At the edge: every counter marked, at 15 but one in `gap` at 1 (a
    // 12-bit surprise that pays for the frame's bytes), with the smallest
    // gap the budget accepts; and a run of counters at 15 or 1, as many
    // as the budget allows (the map then goes raw).
    let mut worst = 0.0f64;
    let mut frames = Vec::new();
    for m in [1u64 << 16, 1 << 20, 1 << 24] {
        let (mut lo, mut hi) = (1u64, 4096u64);
        while lo < hi {
            let gap = (lo + hi) / 2;
            let frame = counting_frame(m, m, |i| if i % gap == 0 { 1 } else { 15 });
            let budget = counting::decision_budget(&lim, frame.len() as u64).unwrap();
            if 14 * m <= budget {
                lo = gap + 1;
            } else {
                hi = gap;
            }
        }
        let gap = lo - 1;
        frames.push((
            format!("m = {m}, 15 with a 1 every {gap}"),
            counting_frame(m, m, |i| if i % gap == 0 { 1 } else { 15 }),
        ));
    }
    for (m, value) in [(1u64 << 20, 15u64), (1 << 20, 1)] {
        let mut marked = 1u64 << 10;
        let mut last = None;
        while marked <= m {
            let frame = counting_frame(m, marked, |_| value);
            let budget = counting::decision_budget(&lim, frame.len() as u64).unwrap();
            if 14 * marked > budget {
                break;
            }
            last = Some(frame);
            marked += marked / 8;
        }
        frames.push((
            format!("m = {m}, a run at {value}"),
            last.expect("a frame within the budget"),
        ));
    }
    for (name, frame) in frames {
        let h = header::parse(&frame, &lim).unwrap();
        let payload = &frame[h.header_len..frame.len() - 4];
        // The map: its type byte (0 raw: no steps), length, bytes.
        let (map_len, used) = varint::get(&payload[1..]).unwrap();
        let map = &payload[1 + used..1 + used + map_len as usize];
        let m = h.params.m;
        let mut words = vec![0u64; m.div_ceil(64) as usize];
        let steps = match payload[0] {
            1 => coder::decode_counting(map, m, &mut words).unwrap(),
            _ => 0,
        };
        let (f, decisions) = counting::decode_coded_work(
            payload,
            h.params,
            h.n,
            h.header_len,
            counting::decision_budget(&lim, frame.len() as u64),
        )
        .unwrap();
        assert!(f.count(1) > 0, "{name}");
        let per_byte = (steps + decisions) as f64 / frame.len() as f64;
        println!(
            "{name}: {} bytes, {steps} map steps, {decisions} decisions, {per_byte:.1} per byte",
            frame.len()
        );
        assert!(decisions <= 128 * frame.len() as u64);
        assert!(per_byte <= 130.0, "{per_byte}");
        worst = worst.max(per_byte);
    }
    println!("worst counting work per frame byte: {worst:.1} units");
}

/// A version-3 frame (scheme 1, no flags) of `kind` and type `ty` with the
/// given header fields and payload, and a correct CRC.
fn frame_v3(ty: u8, kind: u8, seed: u64, m: u64, k: u64, n: u64, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xCB, 0xF1, 3, ty, 1, 0, kind];
    for v in [seed, m, k, n, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// Rice-codes gaps with parameter `r` (docs/FORMAT.md section 8.4), least
/// significant bit first, written here from the section's text.
fn rice_gaps(gaps: &[u64], r: u32) -> Vec<u8> {
    let mut bits: Vec<bool> = Vec::new();
    for &d in gaps {
        bits.extend(std::iter::repeat_n(true, (d >> r) as usize));
        bits.push(false);
        bits.extend((0..r).map(|i| d >> i & 1 == 1));
    }
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, b) in bits.iter().enumerate() {
        out[i / 8] |= u8::from(*b) << (i % 8);
    }
    out
}

/// The sparse kind's decoder reads each gap bit a bounded number of times:
/// at most two 64-bit windows per position, and every other read advances
/// at least one bit, so its reads are at most 2·w + 8·B + 8 for B bytes of
/// gaps, and w ≤ 8·B (docs/FORMAT.md section 8.4, check 3): 24 reads per
/// gap byte, each O(1). Over frames an adversary would pick (a position
/// per bit, one position behind a unary run the length of the frame, r at
/// 56 so every window read ends at the stream's end) and real filters, the
/// reads per frame byte are printed and held to that bound, and the frames
/// decode under the default limits.
#[test]
fn sparse_decode_reads_each_gap_bit_a_bounded_number_of_times() {
    use compressed_bloom::kinds::sparse;
    use compressed_bloom::kinds::sparse::SparseFilter;
    use compressed_bloom::{AnyFilter, Kind};
    let lim = DecodeLimits::default();
    let mut cases: Vec<(String, u64, Vec<u8>)> = Vec::new();
    let payload = |w: u64, r: u8, gaps: &[u8]| {
        let mut p = Vec::new();
        varint::put(&mut p, w);
        p.push(r);
        p.extend_from_slice(gaps);
        p
    };
    for bytes in [1usize, 100, 100_000] {
        // A position at every bit: w = 8·B gaps of 0 with r = 0.
        let w = 8 * bytes as u64;
        cases.push((
            format!("{w} positions, a bit each"),
            w,
            payload(w, 0, &vec![0; bytes]),
        ));
        // One position behind a unary run of the whole stream.
        let q = 8 * bytes as u64 - 1;
        cases.push((
            format!("one gap of {q} in unary"),
            1 << 56,
            payload(1, 0, &rice_gaps(&[q], 0)),
        ));
        // r = 56: every gap is 57 bits, windows straddle the end.
        let gaps: Vec<u64> = (0..(8 * bytes as u64 / 57).max(1))
            .map(|i| i * 977)
            .collect();
        cases.push((
            format!("{} gaps at r = 56", gaps.len()),
            1 << 56,
            payload(gaps.len() as u64, 56, &rice_gaps(&gaps, 56)),
        ));
        // Unary runs broken every 63 bits (the fast path just misses).
        let gaps = vec![62u64; (8 * bytes / 63).max(1)];
        cases.push((
            format!("{} gaps of 62 in unary", gaps.len()),
            1 << 40,
            payload(gaps.len() as u64, 0, &rice_gaps(&gaps, 0)),
        ));
    }
    for (keys, k, m) in [(1_000u32, 1u32, 1u64 << 30), (100_000, 3, 1 << 22)] {
        let f = SparseFilter::from_keys(
            FilterParams::new(m, k, 7),
            (0..keys).map(|i| i.to_le_bytes()),
        )
        .unwrap();
        let frame = f.encode_frame(Coding::Auto, None);
        let h = compressed_bloom::format::header::parse(&frame, &lim).unwrap();
        cases.push((
            format!("{keys} keys, k = {k}"),
            m,
            frame[h.header_len..frame.len() - 4].to_vec(),
        ));
    }
    let mut worst = 0.0f64;
    for (name, m, payload) in cases {
        let (set, reads) = sparse::decode_payload_work(&payload, m).unwrap();
        let w = set.len();
        let (_, used) = varint::get(&payload).unwrap();
        let gap_bytes = (payload.len() - used - 1) as u64;
        assert!(w <= 8 * gap_bytes, "{name}");
        assert!(reads <= 2 * w + 8 * gap_bytes + 8, "{name}: {reads} reads");
        // The whole frame, through the entry point, under default limits.
        let frame = frame_v3(1, 4, 0, m, 1, w, &payload);
        assert!(
            matches!(compressed_bloom::decode_any(&frame, &lim), Ok(AnyFilter::Sparse(ref s)) if s.count_ones() == w),
            "{name}"
        );
        let per_byte = reads as f64 / frame.len() as f64;
        println!(
            "{name}: {} bytes, {w} positions, {reads} reads, {per_byte:.2} per byte",
            frame.len()
        );
        worst = worst.max(per_byte);
    }
    println!("worst sparse reads per frame byte: {worst:.2}");
    assert!(worst <= 24.0, "{worst}");
}

/// The scalable kind's decoder does each layer's coding steps (each bounded
/// as the standard kind's: 5 per output bit plus one per block) and one
/// step per layer, at most 64 layers; the header's m bounds the layers'
/// bits, and the expansion limit bounds m by the frame. Over frames an
/// adversary would pick (64 layers of one bit, a huge layer of zeros or of
/// ones that codes to a few bytes, layers of alternating all-zero and
/// all-one blocks) and a grown filter, the work is held within the
/// standard kind's bound, and the ratio of work to (8 · frame bytes +
/// output bits) is printed and held below 1, as for the standard kind.
#[test]
fn scalable_decode_work_is_bounded_by_frame_and_output() {
    use compressed_bloom::kinds::scalable::{self, Declared};
    use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
    use compressed_bloom::{coder, Kind};
    let policy = |out: &mut Vec<u8>| {
        varint::put(out, 1000); // initial capacity
        varint::put(out, 2); // growth
        for x in [0.01f64, 0.9, 64.0] {
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
    };
    // A layer of m bits whose words follow `pattern`, coded when that is
    // shorter than ⌈m/8⌉ bytes (section 8.3), else raw.
    let layer = |out: &mut Vec<u8>, m: u64, k: u64, n: u64, pattern: &dyn Fn(usize) -> u64| {
        for v in [m, k, n, 1000] {
            varint::put(out, v);
        }
        let mut words: Vec<u64> = (0..m.div_ceil(64) as usize).map(pattern).collect();
        if !m.is_multiple_of(64) {
            let last = words.len() - 1;
            words[last] &= (1 << (m % 64)) - 1;
        }
        let mut coded = Vec::new();
        coder::encode(&words, m, &mut coded);
        if (coded.len() as u64) < m.div_ceil(8) {
            out.push(1);
            varint::put(out, coded.len() as u64);
            out.extend_from_slice(&coded);
        } else {
            out.push(0);
            varint::put(out, m.div_ceil(8));
            let raw: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            out.extend_from_slice(&raw[..m.div_ceil(8) as usize]);
        }
    };
    type Pattern = fn(usize) -> u64;
    let zeros: Pattern = |_| 0;
    let ones: Pattern = |_| u64::MAX;
    let blocks: Pattern = |i| if (i >> 17) % 2 == 1 { u64::MAX } else { 0 };
    let sparse: Pattern = |i| 1 << (i % 64);
    let declared = |m, n| Declared {
        m,
        k: 2,
        n,
        seed: 0,
    };
    let mut cases: Vec<(String, Declared, Vec<u8>)> = Vec::new();
    // 64 layers of one bit each.
    let mut p = Vec::new();
    policy(&mut p);
    varint::put(&mut p, 64);
    for i in 0..64 {
        layer(&mut p, 1, 2, u64::from(i == 0), &zeros);
    }
    cases.push(("64 layers of one bit".into(), declared(64, 1), p));
    // One small layer, then a large one of a hostile pattern.
    for (name, pattern) in [
        ("zeros", zeros),
        ("ones", ones),
        ("alternating blocks", blocks),
        ("a bit per word", sparse),
    ] {
        let big = 3u64 << 23;
        let mut p = Vec::new();
        policy(&mut p);
        varint::put(&mut p, 2);
        layer(&mut p, 1000, 2, 1, &zeros);
        layer(&mut p, big, 1, 0, &pattern);
        cases.push((
            format!("a layer of {big} bits: {name}"),
            declared(1000 + big, 1),
            p,
        ));
    }
    // A filter grown to many layers by its own inserts.
    let mut f = ScalableBloomFilter::new(ScalablePolicy::new(100, 0.01), 5).unwrap();
    for i in 0..200_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let frame = f.encode_frame(Coding::Auto, None);
    let h = compressed_bloom::format::header::parse(&frame, &DecodeLimits::default()).unwrap();
    cases.push((
        format!("{} keys in {} layers", f.len(), f.layers().len()),
        Declared {
            m: f.total_bits(),
            k: f.max_k(),
            n: f.len(),
            seed: f.seed(),
        },
        frame[h.header_len..frame.len() - 4].to_vec(),
    ));
    let unlimited = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let mut worst = 0.0f64;
    for (name, d, payload) in cases {
        let (f, work) = scalable::decode_payload_work(&payload, &d).unwrap();
        let frame = frame_v3(1, 3, d.seed, d.m, d.k.into(), d.n, &payload);
        let m = d.m;
        // Through the entry point: the same filter, or refused by the
        // expansion limit when its bits outgrow the frame.
        match compressed_bloom::decode_any(&frame, &DecodeLimits::default()) {
            Ok(g) => assert_eq!(g.encode_frame(Coding::Auto, None), frame, "{name}"),
            Err(e) => assert!(
                matches!(e, DecodeError::LimitExceeded { .. }) && m > 4096 * 8 * frame.len() as u64,
                "{name}: {e:?}"
            ),
        }
        let g = compressed_bloom::decode_any(&frame, &unlimited).unwrap();
        assert_eq!(
            g.encode_frame(Coding::Auto, None),
            f.encode_frame(Coding::Auto, None),
            "{name}"
        );
        let layers = f.layers().len() as u64;
        let blocks: u64 = f
            .layers()
            .iter()
            .map(|l| coder::block_count(l.filter.m()))
            .sum();
        assert!(work <= 5 * m + blocks + layers, "{name}: {work}");
        let ratio = work as f64 / (8.0 * frame.len() as f64 + m as f64);
        println!(
            "{name}: {} bytes, {m} bits, {work} steps, ratio {ratio:.4}",
            frame.len()
        );
        worst = worst.max(ratio);
    }
    println!("worst scalable steps / (8 * frame bytes + output bits): {worst:.4}");
    assert!(worst < 1.0, "{worst}");
}
