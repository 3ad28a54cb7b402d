//! Round trips of whole frames over parameters and densities.

mod common;

use compressed_bloom::{
    decode, decode_from_buf, encode, encode_as, encode_into, max_encoded_len, BloomFilter,
    DecodeLimits, FilterParams, FilterType, MAX_K,
};
use quickcheck::{Arbitrary, Gen};

/// A filter with an arbitrary bit pattern (not necessarily from keys), so
/// every density from all-zero to all-one is covered.
#[derive(Clone, Debug)]
struct AnyFilter(BloomFilter);

impl Arbitrary for AnyFilter {
    fn arbitrary(g: &mut Gen) -> Self {
        let m = match u8::arbitrary(g) % 4 {
            0 => u64::from(u8::arbitrary(g)) + 1,
            1 => u64::from(u16::arbitrary(g)) + 1,
            _ => u64::from(u32::arbitrary(g)) % 1_000_000 + 1,
        };
        let k = u32::arbitrary(g) % MAX_K + 1;
        let seed = u64::arbitrary(g);
        // Density in 1/1024 steps, with the extremes weighted up.
        let d = match u8::arbitrary(g) % 8 {
            0 => 0,
            1 => 1024,
            2 => u32::arbitrary(g) % 8,
            _ => u32::arbitrary(g) % 1025,
        };
        let mut state = u64::arbitrary(g) | 1;
        let mut bytes = vec![0u8; m.div_ceil(8) as usize];
        for i in 0..m {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if (state >> 54) < u64::from(d) {
                bytes[(i / 8) as usize] |= 1 << (i % 8);
            }
        }
        let n = u64::arbitrary(g);
        AnyFilter(BloomFilter::from_bytes(FilterParams::new(m, k, seed), n, &bytes).unwrap())
    }
}

#[test]
fn decode_encode_is_identity_and_never_larger_than_raw() {
    fn prop(f: AnyFilter) -> bool {
        let f = f.0;
        let frame = encode(&f);
        let raw = encode_as(&f, FilterType::Raw);
        frame.len() <= raw.len()
            && frame.len() <= max_encoded_len(&f)
            && decode(&frame).as_ref() == Ok(&f)
            && decode(&raw).as_ref() == Ok(&f)
    }
    common::qc(200, 0x5EED_0001).quickcheck(prop as fn(AnyFilter) -> bool);
}

#[test]
fn slice_and_buf_apis_agree() {
    let mut f = BloomFilter::new(FilterParams::new(50_000, 3, 1)).unwrap();
    for i in 0..3000u32 {
        f.insert(&i.to_be_bytes());
    }
    let frame = encode(&f);
    let mut small = vec![0u8; frame.len() - 1];
    assert!(encode_into(&f, &mut small).is_err());
    let mut exact = vec![0u8; frame.len()];
    assert_eq!(encode_into(&f, &mut exact), Ok(frame.len()));
    assert_eq!(exact, frame);
    // Two frames back to back in one buffer, and a chained buffer.
    let mut two = bytes::BytesMut::new();
    compressed_bloom::encode_to_buf(&f, &mut two).unwrap();
    compressed_bloom::encode_to_buf(&f, &mut two).unwrap();
    let mut b = two.freeze();
    let limits = DecodeLimits::default();
    assert_eq!(decode_from_buf(&mut b, &limits).unwrap(), f);
    assert_eq!(decode_from_buf(&mut b, &limits).unwrap(), f);
    assert!(b.is_empty());
    use bytes::Buf;
    let (a, c) = frame.split_at(frame.len() / 3);
    let mut chain = a.chain(c);
    assert_eq!(decode_from_buf(&mut chain, &limits).unwrap(), f);
    assert_eq!(chain.remaining(), 0);
    // A partial frame consumes nothing.
    let mut part = &frame[..frame.len() - 1];
    assert!(decode_from_buf(&mut part, &limits).is_err());
    assert_eq!(part.len(), frame.len() - 1);
}
