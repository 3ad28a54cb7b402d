//! `format::stream::write_frame_bits` and `write_frame_raw`, the block-by-block
//! decoders behind `cbloom decode`: they write exactly what the in-memory
//! decoder's filter gives, refuse what it refuses with the same error, and
//! write nothing for a frame whose header, length or CRC is wrong.

use crate::common::{self, late_block};
use compressed_bloom::coder::static_coded::{Choice, Mode};
use compressed_bloom::format::{self, stream, FilterType};
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::AnyFilter;
use compressed_bloom::{decode_any, BloomFilter, DecodeLimits, FilterParams};

fn filled(m: u64, k: u32, keys: u64, seed: u64) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
    for i in 0..keys {
        f.insert(&(i ^ seed.rotate_left(17)).to_le_bytes());
    }
    f
}

/// Every full frame of a standard filter the encoders make: raw, coded,
/// static with the default choice, and static with small blocks in each mode
/// (several blocks, so several threads and a last block of another size).
fn standard_frames(f: &BloomFilter) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![
        ("raw".to_string(), format::encode_as(f, FilterType::Raw)),
        ("coded".to_string(), format::encode_as(f, FilterType::Coded)),
        ("static".to_string(), format::encode_static(f)),
    ];
    for mode in [None, Some(Mode::Runs), Some(Mode::Bytes)] {
        let choice = Choice {
            block_log: Some(16),
            mode,
        };
        out.push((
            format!("static 2^16 {mode:?}"),
            format::encode_static_with(f, choice),
        ));
    }
    out
}

fn bits_of(frame: &[u8]) -> Result<Vec<u8>, stream::StreamError> {
    let mut out = Vec::new();
    stream::write_frame_bits(frame, &DecodeLimits::unlimited(), &mut out).map(|_| out)
}

fn raw_of(frame: &[u8]) -> Result<Vec<u8>, stream::StreamError> {
    let mut out = Vec::new();
    stream::write_frame_raw(frame, &DecodeLimits::unlimited(), &mut out).map(|_| out)
}

#[test]
fn streamed_bits_and_raw_frames_equal_the_decoded_filter() {
    // m: one word or less, a partial last byte, one coder block, and three
    // type-1 blocks plus a partial one (2^23 bits each); densities from
    // sparse to 1/2.
    let cases = [
        (1u64, 1u32, 1u64),
        (7, 1, 3),
        (1000, 3, 100),
        (70_001, 2, 5_000),
        (70_001, 2, 25_000),
        (3 * (1 << 23) + 4_099, 2, 1_500_000),
    ];
    for (i, &(m, k, keys)) in cases.iter().enumerate() {
        let f = filled(m, k, keys, i as u64);
        let bytes = f.to_bytes();
        let raw = format::encode_as(&f, FilterType::Raw);
        for (name, frame) in standard_frames(&f) {
            assert_eq!(bits_of(&frame).unwrap(), bytes, "m={m} {name}: bits");
            assert_eq!(raw_of(&frame).unwrap(), raw, "m={m} {name}: raw frame");
        }
        // The partitioned kind: the same array, its own raw frame.
        let pm = m - m % u64::from(k.max(1));
        if pm == 0 {
            continue;
        }
        let mut p = PartitionedBloomFilter::new(FilterParams::new(pm, k, 9)).unwrap();
        for j in 0..keys {
            p.insert(&j.to_le_bytes());
        }
        let praw = compressed_bloom::kinds::partitioned::encode_partitioned_raw(&p);
        for frame in [
            compressed_bloom::kinds::partitioned::encode_partitioned(&p),
            compressed_bloom::kinds::partitioned::encode_partitioned_static(&p),
            praw.clone(),
        ] {
            assert_eq!(
                bits_of(&frame).unwrap(),
                p.bits().to_bytes(),
                "partitioned m={pm}"
            );
            assert_eq!(
                raw_of(&frame).unwrap(),
                praw,
                "partitioned m={pm}: raw frame"
            );
        }
    }
}

/// A frame whose header, length or checksum is wrong writes nothing, and
/// gets the in-memory decoder's error.
#[test]
fn damaged_frames_write_nothing() {
    let f = filled(300_000, 2, 30_000, 3);
    for (name, frame) in standard_frames(&f) {
        let mut damaged: Vec<Vec<u8>> = Vec::new();
        // A flipped bit anywhere (the CRC no longer matches, or the header
        // does not parse).
        for at in (0..frame.len()).step_by(frame.len() / 97 + 1) {
            let mut d = frame.clone();
            d[at] ^= 0x10;
            damaged.push(d);
        }
        damaged.push(frame[..frame.len() - 1].to_vec());
        damaged.push(frame[..frame.len() / 2].to_vec());
        let mut trailing = frame.clone();
        trailing.push(0);
        damaged.push(trailing);
        for d in &damaged {
            let expected = decode_any(d, &DecodeLimits::unlimited()).unwrap_err();
            for how in ["bits", "raw"] {
                let mut out = Vec::new();
                let limits = DecodeLimits::unlimited();
                let err = if how == "bits" {
                    stream::write_frame_bits(d, &limits, &mut out)
                } else {
                    stream::write_frame_raw(d, &limits, &mut out)
                }
                .unwrap_err();
                assert!(out.is_empty(), "{name} {how}: wrote {} bytes", out.len());
                match err {
                    stream::StreamError::Decode(e) => assert_eq!(e, expected, "{name} {how}"),
                    other => panic!("{name} {how}: {other}"),
                }
            }
        }
    }
}

/// Frames with a valid CRC whose payload was changed (what only a faulty or
/// hostile encoder sends): the streamed decoders accept exactly the frames
/// the in-memory decoder accepts, write the same bytes when they do, and
/// report the same error (the first failing block's) when they do not.
#[test]
fn payload_changes_behind_a_valid_crc_agree_with_the_decoder() {
    let f = filled(1 << 19, 2, 60_000, 4);
    let limits = DecodeLimits::unlimited();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut refused, mut accepted) = (0, 0);
    let mut frames = standard_frames(&f);
    // Partitioned frames, and a type-1 frame of two coder blocks.
    let mut p = PartitionedBloomFilter::new(FilterParams::new(999 * 3, 3, 2)).unwrap();
    for j in 0..400u32 {
        p.insert(&j.to_le_bytes());
    }
    frames.push((
        "partitioned coded".into(),
        compressed_bloom::kinds::partitioned::encode_partitioned(&p),
    ));
    frames.push((
        "partitioned static".into(),
        compressed_bloom::kinds::partitioned::encode_partitioned_static(&p),
    ));
    frames.push((
        "partitioned raw".into(),
        compressed_bloom::kinds::partitioned::encode_partitioned_raw(&p),
    ));
    let two = filled((1 << 23) + 70_001, 2, 300_000, 6);
    frames.push((
        "coded, two blocks".into(),
        format::encode_as(&two, FilterType::Coded),
    ));
    for (name, frame) in frames {
        let header_len = format::inspect(&frame, &limits).unwrap().header_len;
        let body = frame.len() - 4;
        for _ in 0..150 {
            let mut d = frame.clone();
            // One to three bytes of the payload changed, the CRC made valid.
            for _ in 0..1 + next() % 3 {
                let at = header_len + (next() as usize) % (body - header_len);
                d[at] ^= (next() % 255 + 1) as u8;
            }
            common::fix_crc(&mut d);
            let decoded = decode_any(&d, &limits);
            let streamed = bits_of(&d);
            match (decoded, streamed) {
                (Ok(AnyFilter::Standard(g)), Ok(bits)) => {
                    assert_eq!(bits, g.to_bytes(), "{name}");
                    assert_eq!(raw_of(&d).unwrap(), format::encode_as(&g, FilterType::Raw));
                    accepted += 1;
                }
                (Ok(AnyFilter::Partitioned(g)), Ok(bits)) => {
                    assert_eq!(bits, g.bits().to_bytes(), "{name}");
                    assert_eq!(
                        raw_of(&d).unwrap(),
                        compressed_bloom::kinds::partitioned::encode_partitioned_raw(&g)
                    );
                    accepted += 1;
                }
                (Err(e), Err(stream::StreamError::Decode(s))) => {
                    assert_eq!(s, e, "{name}");
                    refused += 1;
                }
                (d, s) => panic!("{name}: in memory {d:?}, streamed {s:?}"),
            }
        }
    }
    // Both outcomes were reached (raw payloads accept most changes).
    assert!(
        refused > 100 && accepted > 10,
        "{refused} refused, {accepted} accepted"
    );
}

/// On a payload error found in a later block, what was written is the
/// blocks before it, never more than the array, and never a whole array.
#[test]
fn a_bad_late_block_stops_the_output_after_the_blocks_before_it() {
    let f = filled(1 << 20, 2, 100_000, 5);
    let (_, d) = late_block::good_and_bad_last_block(&f);
    let mut out = Vec::new();
    let err = stream::write_frame_bits(&d, &DecodeLimits::unlimited(), &mut out).unwrap_err();
    assert!(matches!(err, stream::StreamError::Decode(_)), "{err}");
    let block_bytes = (1 << 16) / 8;
    let array = f.to_bytes();
    assert!(out.len() < array.len(), "{} bytes written", out.len());
    assert_eq!(out.len() % block_bytes, 0);
    assert_eq!(out, array[..out.len()], "the blocks before the bad one");
}

#[test]
fn frames_it_does_not_stream_are_refused_before_the_crc() {
    let limits = DecodeLimits::unlimited();
    let mut c = compressed_bloom::CountingBloomFilter::new(FilterParams::new(1000, 3, 0)).unwrap();
    c.insert(b"a");
    let mut frame = compressed_bloom::kinds::counting::encode_counting(&c);
    // A wrong CRC: the kind is refused first.
    let last = frame.len() - 1;
    frame[last] ^= 1;
    let h = format::header::parse(&frame, &limits).unwrap();
    assert!(!stream::streams_bits(&h));
    let mut out = Vec::new();
    let err = stream::write_frame_bits(&frame, &limits, &mut out).unwrap_err();
    assert!(
        matches!(
            err,
            stream::StreamError::Decode(compressed_bloom::DecodeError::WrongKind { .. })
        ),
        "{err}"
    );
    assert!(out.is_empty());
}

/// A Squid digest (a standard array behind Squid's header) is not streamed:
/// it is refused as a frame type, with a pointer to decode_any, before the
/// CRC is computed.
#[test]
fn squid_frames_are_refused_with_a_pointer_to_decode_any() {
    let d = compressed_bloom::kinds::squid::SquidDigest::new(1000, 5).unwrap();
    let frame = compressed_bloom::kinds::squid::encode_squid(&d);
    let limits = DecodeLimits::unlimited();
    let h = format::header::parse(&frame, &limits).unwrap();
    assert!(!stream::streams_bits(&h));
    let err = stream::CheckedFrame::new(&frame, &limits).unwrap_err();
    assert!(
        matches!(err, compressed_bloom::DecodeError::WrongFrameType { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("decode_any"), "{err}");
}

/// A type-1 frame whose first block codes to more than a raw block plus
/// 64 KiB (a contrived array: 7/8 of the block zeros, then alternating
/// bits, which the adaptive model, settled on long runs, codes at ~23 bits
/// a pair) is one the encoder writes and the in-memory decoder takes; the
/// streamed reader takes it too.
#[test]
fn a_block_that_codes_larger_than_raw_streams() {
    let m = 1u64 << 24;
    let mut bytes = vec![0u8; (m / 8) as usize];
    for b in &mut bytes[(7 << 20) / 8..(1 << 23) / 8] {
        *b = 0b1010_1010;
    }
    let f = BloomFilter::from_bytes(FilterParams::new(m, 1, 1), 1, &bytes).unwrap();
    let frame = format::encode_as(&f, FilterType::Coded);
    let h = format::inspect(&frame, &DecodeLimits::default()).unwrap();
    // The first block's stream: the payload less the second block's (all
    // zeros: a few bytes) and the one-entry table.
    assert!(
        h.payload_len > (1 << 20) + 64 * 1024,
        "payload {} bytes: the array no longer codes larger than raw",
        h.payload_len
    );
    assert!(format::decode(&frame, &DecodeLimits::default()).unwrap() == f);
    let got = stream::read_frame(&frame[..], &DecodeLimits::default()).unwrap();
    assert!(got == f);
}

/// The streamed reader checks a type-1 block table as `decode` does: it
/// never reads a table past the payload, and a damaged table gives the
/// same error (`Payload` with `BlockTable`, at the same offsets) whichever
/// decoder reads it (a non-canonical length included, which is not
/// `BadVarint`).
#[test]
fn streamed_type_1_tables_fail_as_in_memory() {
    use compressed_bloom::{decode, DecodeError};
    let m = 1u64 << 25; // four 2^23-bit blocks: three table lengths
    let mut f = BloomFilter::new(FilterParams::new(m, 2, 3)).unwrap();
    for i in 0..300_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let frame = format::encode_as(&f, FilterType::Coded);
    let lim = DecodeLimits::default();
    let at = format::inspect(&frame, &lim).unwrap().header_len;
    let mut compared = 0;
    // Each table byte set to values that make lengths too long, not
    // canonical, or unterminated; behind a fixed CRC.
    for i in 0..9 {
        for v in [0x00u8, 0x80, 0xff, 0x7f, 0x01] {
            let mut bad = frame.clone();
            bad[at + i] = v;
            common::fix_crc(&mut bad);
            let want = decode(&bad, &DecodeLimits::default());
            let got = stream::read_frame(&bad[..], &lim);
            match (want, got) {
                (Ok(a), Ok(b)) => assert!(a == b),
                (Err(e @ DecodeError::Payload { .. }), Err(stream::StreamError::Decode(g))) => {
                    assert_eq!(e, g, "byte {i} = {v:#x}");
                    compared += 1;
                }
                (w, g) => panic!("byte {i} = {v:#x}: {w:?} against {g:?}"),
            }
        }
    }
    assert!(compared >= 10, "{compared} errors compared");
}
