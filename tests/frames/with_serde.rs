//! Serde (feature `serde`): every filter type serialises as its wire frame
//! and deserialises through the frame decoder, in postcard and JSON.
#![cfg(feature = "serde")]

use compressed_bloom::format;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::{Method, SquidDigest};
use compressed_bloom::AnyFilter;
use compressed_bloom::{BloomFilter, CountingBloomFilter, FilterParams};
use serde::de::DeserializeOwned;
use serde::Serialize;

fn both<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(f: &T, frame: &[u8]) {
    let bytes = postcard::to_allocvec(f).unwrap();
    // A postcard byte string: the length as a varint, then the frame.
    let mut prefix = Vec::new();
    format::varint::put(&mut prefix, frame.len() as u64);
    assert_eq!(bytes, [&prefix[..], frame].concat());
    assert_eq!(&postcard::from_bytes::<T>(&bytes).unwrap(), f);
    let json = serde_json::to_string(f).unwrap();
    assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), f);
}

#[test]
fn every_type_round_trips_as_its_frame() {
    let keys: Vec<Vec<u8>> = (0..300u32).map(|i| format!("k{i}").into_bytes()).collect();
    let mut b = BloomFilter::new(FilterParams::new(5_000, 3, 1)).unwrap();
    let mut c = CountingBloomFilter::new(FilterParams::new(5_000, 3, 1)).unwrap();
    let mut p = PartitionedBloomFilter::new(FilterParams::new(6_000, 3, 1)).unwrap();
    let mut d = SquidDigest::new(400, 5).unwrap();
    for k in &keys {
        b.insert(k);
        c.insert(k);
        p.insert(k);
        d.add(Method::GET, k);
    }
    let s = SparseFilter::from_keys(FilterParams::new(1 << 40, 1, 1), &keys).unwrap();
    both(&b, &format::encode(&b));
    both(&c, &compressed_bloom::kinds::counting::encode_counting(&c));
    both(
        &p,
        &compressed_bloom::kinds::partitioned::encode_partitioned(&p),
    );
    both(&s, &compressed_bloom::kinds::sparse::encode_sparse(&s));
    both(&d, &compressed_bloom::kinds::squid::encode_squid(&d));
    let mut g = ScalableBloomFilter::new(ScalablePolicy::new(100, 0.01), 1).unwrap();
    keys.iter().for_each(|k| g.insert(k));
    assert!(g.layers().len() > 1, "the frame carries several layers");
    both(&g, &compressed_bloom::kinds::scalable::encode_scalable(&g));
    let any = AnyFilter::Sparse(s.clone());
    both(&any, &compressed_bloom::encode_any(&any));
}

#[test]
fn corrupt_input_is_a_deserialisation_error_with_the_decoders_message() {
    let mut f = BloomFilter::new(FilterParams::new(5_000, 3, 1)).unwrap();
    f.insert(b"x");
    let mut bytes = postcard::to_allocvec(&f).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1; // the CRC
    let err = postcard::from_bytes::<BloomFilter>(&bytes).unwrap_err();
    // postcard reports a custom error without its text; JSON keeps it.
    let _ = err;
    let mut json: Vec<u8> = format::encode(&f);
    let n = json.len();
    json[n - 1] ^= 1;
    let text = serde_json::to_string(&json).unwrap();
    let err = serde_json::from_str::<BloomFilter>(&text).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    // Not a frame at all.
    let err = serde_json::from_str::<BloomFilter>("[1, 2, 3]").unwrap_err();
    assert!(
        err.to_string().contains("magic") || err.to_string().contains("truncated"),
        "{err}"
    );
}
