//! BIP37 `filterload` payloads from arbitrary bytes: the importer either
//! refuses them with a typed `Bip37Error` or takes them, and then exporting
//! gives back exactly the input, and coded and raw frames of the filter
//! decode to it. It never panics, and never holds more than a
//! 36,000-byte filter whatever the input claims.
#![no_main]

use compressed_bloom::bitcoin::{Bip37Error, Bip37Filter};
use compressed_bloom::kinds::bip37::{decode_bip37, encode_bip37, encode_bip37_raw};
use compressed_bloom::DecodeLimits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = DecodeLimits::default();
    match Bip37Filter::from_filterload(data, &limits) {
        Ok(f) => {
            assert!(f.len_bytes() >= 1 && f.len_bytes() <= Bip37Filter::MAX_FILTER_BYTES);
            assert!(f.hash_funcs() >= 1 && f.hash_funcs() <= Bip37Filter::MAX_HASH_FUNCS);
            assert_eq!(f.to_filterload(), data, "export is not the input");
            for frame in [encode_bip37(&f), encode_bip37_raw(&f)] {
                let back = decode_bip37(&frame, &limits).expect("our own frame decodes");
                assert_eq!(back, f);
            }
            // A query answers without panicking, whatever the key.
            let _ = f.contains(data);
        }
        Err(
            Bip37Error::BadCompactSize { .. }
            | Bip37Error::TooLarge { .. }
            | Bip37Error::TooManyHashFuncs { .. }
            | Bip37Error::Empty
            | Bip37Error::NoHashFuncs
            | Bip37Error::Truncated { .. }
            | Bip37Error::TrailingData { .. },
        ) => {}
        Err(e) => panic!("unexpected refusal of a payload: {e:?}"),
    }
});
