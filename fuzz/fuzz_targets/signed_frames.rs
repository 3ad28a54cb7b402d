//! Signed frames (docs/FORMAT.md section 6, tag 2). Arbitrary bytes are
//! taken as a frame and checked against a fixed key: `verify_frame` never
//! panics, and accepts only the frames that key signed here (the seeds),
//! byte for byte. Arbitrary bytes that decode as a frame are also signed,
//! behind the valid layout: the signed frame verifies and decodes to the
//! same filter, and with any one byte changed it no longer verifies.
#![no_main]

use compressed_bloom::ed25519_dalek::SigningKey;
use compressed_bloom::format::{sign_frame, verify_frame};
use compressed_bloom::{decode_any, encode_any, AnyFilter, BloomFilter, DecodeLimits, FilterParams};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn key() -> &'static SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(|| SigningKey::from_bytes(&[0x5a; 32]))
}

/// The frames the key signed: the only ones `verify_frame` may accept.
fn signed_here() -> &'static Vec<Vec<u8>> {
    static SIGNED: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SIGNED.get_or_init(|| {
        (0..4u64)
            .map(|n| {
                let mut f = BloomFilter::new(FilterParams::new(512, 3, n)).unwrap();
                for i in 0..n * 10 {
                    f.insert(&i.to_le_bytes());
                }
                sign_frame(&encode_any(&AnyFilter::Standard(f)), key()).unwrap()
            })
            .collect()
    })
}

fn limits() -> DecodeLimits {
    DecodeLimits {
        max_m: 1 << 20,
        ..DecodeLimits::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let keys = [key().verifying_key()];
    if verify_frame(data, &keys, &limits()).is_ok() {
        assert!(
            signed_here().iter().any(|s| s.as_slice() == data),
            "a frame the key did not sign verified"
        );
    }
    // Behind a valid signature layout: sign what decodes, then alter it.
    let Ok(filter) = decode_any(data, &limits()) else {
        return;
    };
    let Ok(signed) = sign_frame(data, key()) else {
        return;
    };
    verify_frame(&signed, &keys, &limits()).expect("a frame just signed verifies");
    assert_eq!(decode_any(&signed, &limits()).ok(), Some(filter));
    let at = data.first().map_or(0, |&b| usize::from(b)) % signed.len();
    let mut altered = signed.clone();
    altered[at] ^= 0x01;
    assert!(
        verify_frame(&altered, &keys, &limits()).is_err(),
        "byte {at} changed and the signature still verifies"
    );
});
