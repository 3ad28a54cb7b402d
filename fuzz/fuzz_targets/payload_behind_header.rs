//! Arbitrary payloads behind a valid header and a valid CRC-32C, so the
//! fuzzer reaches the payload decoders the checksum guards: the block table
//! and multi-block streams (m past 2^23 bits), the 4-lane rANS path, the
//! static-coded type 4 (its block table, constant blocks, both modes, every
//! lane count, standard and partitioned), the
//! counting kind's map and range-coded values, the scalable kind's policy
//! and layers, the sparse kind's Rice gaps, and both delta types against a
//! base. The block-by-block decoder behind `cbloom decode`
//! (`format::stream::write_frame_bits` and `write_frame_raw`) must agree
//! with the in-memory one, bytes for bytes or error for error; raw payloads
//! (type 0) are among the configurations for that. Whatever it decodes must
//! re-encode to a frame that decodes to the same filter, and memory stays
//! within the limits plus a constant. The type-1 and type-4 payload
//! decoders give the same words, or the same error, whatever their output
//! held before.
#![no_main]

use compressed_bloom::format::{encode_as, stream, varint, FilterType, KindSet};
use compressed_bloom::kinds::partitioned::encode_partitioned_raw;
use compressed_bloom::AnyFilter;
use compressed_bloom::{
    decode_any, delta, encode_any, BloomFilter, CountingBloomFilter, DecodeLimits, FilterParams,
};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/counting_alloc.rs"]
mod counting_alloc;

const CONSTANT: usize = 128 * 1024;

/// (version, filter type, kind, m, k): full frames of every kind, m from a
/// single small block to three blocks (the coder's blocks are 2^23 bits),
/// and the delta types (applied to an empty base).
const CONFIGS: [(u8, u8, u8, u64, u32); 22] = [
    (1, 1, 0, 1_000, 2),
    (1, 1, 0, 70_000, 3),
    (1, 1, 0, 1 << 20, 4),
    (1, 1, 0, (1 << 23) + 4_096, 2),
    (1, 1, 0, 3 << 23, 1),
    (3, 1, 2, 1 << 20, 4),
    (3, 1, 1, 100_000, 3),
    (3, 1, 1, (1 << 23) + 64, 2),
    (3, 1, 4, 1 << 40, 1),
    (3, 2, 4, 1 << 30, 2),
    (1, 2, 0, 1 << 20, 3),
    (2, 3, 0, 1 << 20, 3),
    (3, 1, 3, 200_000, 7),
    (3, 1, 3, (1 << 23) + 100_000, 4),
    (3, 2, 1, 100_000, 3),
    (3, 4, 0, 5_000, 2),
    (3, 4, 0, 100_000, 3),
    (3, 4, 0, 1 << 20, 4),
    (3, 4, 0, (3 << 20) + 4_104, 2),
    (3, 4, 2, 1 << 20, 4),
    (1, 0, 0, 1_001, 2),
    (3, 0, 2, 3_000, 3),
];

fn frame(version: u8, ty: u8, kind: u8, m: u64, k: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xCB, 0xF1, version, ty, 1, 0];
    if version >= 3 {
        f.push(kind);
    }
    for v in [0, m, u64::from(k), 0, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let (version, ty, kind, m, k) = CONFIGS[usize::from(pick) % CONFIGS.len()];
    let f = frame(version, ty, kind, m, k, payload);
    let limits = DecodeLimits {
        max_m: 1 << 26,
        max_k: 64,
        max_frame_len: 1 << 20,
        max_expansion: None,
        max_decisions_per_byte: None,
        expansion_floor: u64::MAX,
        kinds: KindSet::ALL,
    };
    let allowed = (limits.max_m / 2 + limits.max_m / 8) as usize + 64 * f.len() + CONSTANT;
    if ty == 2 && kind == 1 {
        // A counting delta against an empty counting base.
        let mut base = CountingBloomFilter::new(FilterParams::new(m, k, 0)).unwrap();
        let before = base.clone();
        if compressed_bloom::kinds::counting::apply_counting(&mut base, &f, &limits).is_err() {
            assert_eq!(base, before, "a refused delta changed the base");
        }
        return;
    }
    if (ty == 2 || ty == 3) && kind == 0 {
        // A delta against an empty base of the same parameters.
        let mut base = BloomFilter::new(FilterParams::new(m, k, 0)).unwrap();
        let before = base.clone();
        let mut result = None;
        let peak = counting_alloc::peak_of(|| result = Some(delta::apply(&mut base, &f, &limits)));
        assert!(
            peak <= (m / 8) as usize * 2 + CONSTANT,
            "apply held {peak} bytes"
        );
        if let Some(Err(_)) = result {
            assert_eq!(base, before, "a refused delta changed the base");
        }
        return;
    }
    let mut decoded = None;
    let peak = counting_alloc::peak_of(|| decoded = Some(decode_any(&f, &limits)));
    assert!(
        peak <= allowed,
        "decoding held {peak} bytes, allowed {allowed}"
    );
    if kind == 0 && (ty == 1 || ty == 4) && m <= 1 << 21 {
        // The payload decoders overwrite their output: into cleared words
        // or words holding garbage, the same words or the same error (up
        // to 2^21 bits, where type 4 already has many blocks, so that each
        // input stays fast).
        let decode = |words: &mut [u64]| {
            if ty == 1 {
                compressed_bloom::coder::decode(payload, m, words)
            } else {
                compressed_bloom::coder::static_coded::decode(payload, m, words)
            }
        };
        let len = m.div_ceil(64) as usize;
        let (mut clear, mut dirty) = (vec![0u64; len], vec![!0u64; len]);
        let (a, b) = (decode(&mut clear), decode(&mut dirty));
        assert_eq!(a, b, "the output's old content changed the outcome");
        if a.is_ok() {
            assert!(clear == dirty, "the output's old content leaked through");
        }
    }
    let header = compressed_bloom::format::header::parse(&f, &limits);
    if header.is_ok_and(|h| stream::streams_bits(&h)) {
        // The block-by-block decoder (cbloom decode) agrees with the
        // in-memory one: the same bytes, or the same error.
        let (mut out, mut raw) = (Vec::new(), Vec::new());
        let streamed = stream::write_frame_bits(&f, &limits, &mut out);
        let streamed_raw = stream::write_frame_raw(&f, &limits, &mut raw);
        match (decoded.as_ref(), streamed, streamed_raw) {
            (Some(Ok(AnyFilter::Standard(g))), Ok(_), Ok(_)) => {
                assert_eq!(out, g.to_bytes());
                assert_eq!(raw, encode_as(g, FilterType::Raw));
            }
            (Some(Ok(AnyFilter::Partitioned(p))), Ok(_), Ok(_)) => {
                assert_eq!(out, p.bits().to_bytes());
                assert_eq!(raw, encode_partitioned_raw(p));
            }
            (
                Some(Err(e)),
                Err(stream::StreamError::Decode(s)),
                Err(stream::StreamError::Decode(r)),
            ) => {
                assert_eq!(&s, e);
                assert_eq!(&r, e);
            }
            (d, s, r) => panic!("in memory {d:?}, streamed {s:?}, raw {r:?}"),
        }
    }
    if let Some(Ok(filter)) = decoded {
        let again = encode_any(&filter);
        assert_eq!(decode_any(&again, &limits).as_ref(), Ok(&filter));
    }
});
