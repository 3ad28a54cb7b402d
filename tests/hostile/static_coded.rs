//! Hostile type-4 (static-coded) frames: the in-memory decoder and the
//! streamed reader (`format::stream::read_frame`) refuse them with the same
//! error, check the whole block table before any stream, and the streamed
//! reader never reads past the frame it was given.

use compressed_bloom::coder::static_coded::{encode_with, Choice};
use compressed_bloom::coder::CoderError;
use compressed_bloom::format::{stream, varint};
use compressed_bloom::{decode, DecodeError, DecodeLimits};
use std::io::Cursor;

/// A version-3 standard frame of type 4 around `payload` (seed 0, k 1, n 0).
fn frame(m: u64, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xCB, 0xF1, 3, 4, 1, 0, 0];
    for v in [0, m, 1, 0, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// Both decoders' errors (the streamed one's, if it is a decode error),
/// and how far the streamed reader read into `frame ‖ 16 more bytes`.
fn both(frame: &[u8]) -> (DecodeError, Option<DecodeError>, u64) {
    let limits = DecodeLimits::unlimited();
    let mem = decode(frame, &limits).unwrap_err();
    let mut input = frame.to_vec();
    input.extend_from_slice(&[0xAB; 16]);
    let mut cursor = Cursor::new(input);
    let streamed = match stream::read_frame(&mut cursor, &limits) {
        Ok(_) => panic!("the streamed reader accepted what decode refused: {mem:?}"),
        Err(stream::StreamError::Decode(e)) => Some(e),
        Err(_) => None,
    };
    (mem, streamed, cursor.position())
}

fn block_table(e: &DecodeError) -> bool {
    matches!(
        e,
        DecodeError::Payload {
            source: CoderError::BlockTable { .. },
            ..
        }
    )
}

/// Two blocks of 2^16 bits: density 0.3 (mode 1), then all zeros.
fn payload() -> (u64, Vec<u8>) {
    let m = 2 * 65_536u64;
    let mut words = vec![0u64; (m / 64) as usize];
    let mut s = 7u64;
    for w in words.iter_mut().take(1024) {
        for b in 0..64 {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            if (s >> 33) % 10 < 3 {
                *w |= 1 << b;
            }
        }
    }
    let mut p = Vec::new();
    let choice = Choice {
        block_log: Some(16),
        mode: None,
    };
    encode_with(&words, m, &mut p, 1, choice);
    (m, p)
}

#[test]
fn a_bad_table_entry_after_a_corrupt_stream_is_what_both_decoders_report() {
    // The constant last block must have an empty stream: one byte more in
    // the payload is a table error, found before block 0's corrupt stream
    // is decoded.
    let (m, mut p) = payload();
    let n = p.len();
    p[n - 20] ^= 0x55;
    p.push(0);
    let f = frame(m, &p);
    let (mem, streamed, read) = both(&f);
    assert!(block_table(&mem), "{mem:?}");
    assert!(streamed.as_ref().is_some_and(block_table), "{streamed:?}");
    assert!(
        read <= f.len() as u64,
        "read {read} of a {}-byte frame",
        f.len()
    );
}

#[test]
fn a_non_shortest_table_varint_is_a_block_table_error_in_both() {
    let (m, p) = payload();
    // Block 0's count of ones, re-encoded with a needless 0x80 0x00 tail.
    let (ones, used) = varint::get(&p[2..]).unwrap();
    let mut bad = p[..2].to_vec();
    let mut v = Vec::new();
    varint::put(&mut v, ones);
    let last = v.len() - 1;
    v[last] |= 0x80;
    v.push(0);
    bad.extend_from_slice(&v);
    bad.extend_from_slice(&p[2 + used..]);
    let f = frame(m, &bad);
    let (mem, streamed, read) = both(&f);
    assert!(block_table(&mem), "{mem:?}");
    assert!(streamed.as_ref().is_some_and(block_table), "{streamed:?}");
    assert!(read <= f.len() as u64);
}

#[test]
fn a_table_cut_by_the_payload_end_is_not_read_past_the_frame() {
    // m of 2^20 bits in 2^16-bit blocks: 16 table entries, but a payload of
    // six bytes (an entry, then a mode and a count cut mid-varint). The
    // streamed reader must stop at
    // the payload's end, not read the CRC and the bytes after the frame as
    // table bytes.
    let m = 1u64 << 20;
    let f = frame(m, &[16, 0, 0, 0, 0, 0x81]);
    let (mem, streamed, read) = both(&f);
    assert!(block_table(&mem), "{mem:?}");
    assert!(streamed.as_ref().is_some_and(block_table), "{streamed:?}");
    assert!(
        read <= f.len() as u64,
        "read {read} of a {}-byte frame",
        f.len()
    );
}

#[test]
fn a_short_stream_is_unexpected_end_before_its_states_are_judged() {
    // One block of 2^16 bits, mode 1 (two lanes: 16 bytes of states), with
    // a stream of 5 bytes whose first state would be out of range: the
    // length is checked first (docs/FORMAT.md), as the reference decoder
    // does.
    let m = 65_536u64;
    let mut p = vec![16u8, 1];
    varint::put(&mut p, 20_000);
    p.extend_from_slice(&[0xff; 5]);
    let f = frame(m, &p);
    let (mem, streamed, _) = both(&f);
    let end = |e: &DecodeError| {
        matches!(
            e,
            DecodeError::Payload {
                source: CoderError::UnexpectedEnd { .. },
                ..
            }
        )
    };
    assert!(end(&mem), "{mem:?}");
    assert!(streamed.as_ref().is_some_and(end), "{streamed:?}");
}
