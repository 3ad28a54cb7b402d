//! BIP37 golden vectors (docs/FORMAT.md sections 1.3, 6 and 7,
//! `tools/make_golden_bip37.sh`): frames that `tools/ref_kinds.py`, a
//! decoder written from the document alone, turned back into their
//! `filterload` payloads byte for byte; one payload is Bitcoin Core's, the
//! other the reference tool's own (MurmurHash3 from FORMAT.md).

use crate::common;

use compressed_bloom::bitcoin::Bip37Filter;
use compressed_bloom::kinds::bip37::{decode_bip37, encode_bip37};
use compressed_bloom::{Coding, DecodeLimits, Kind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

fn file(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).unwrap()
}

#[test]
fn bip37_goldens_decode_to_their_payloads_and_are_reproduced() {
    let limits = DecodeLimits::default();
    for name in ["core_tweak", "wallet"] {
        let frame = file(&format!("v3_bip37_{name}.cbf"));
        let payload = file(&format!("bip37_{name}.filterload"));
        let f = decode_bip37(&frame, &limits).unwrap();
        assert_eq!(f.to_filterload(), payload, "{name}");
        let imported = Bip37Filter::from_filterload(&payload, &limits).unwrap();
        assert_eq!(encode_bip37(&imported), frame, "{name}: re-encoded");
        // The coding of the frame's own type gives it too (what the
        // bindings re-encode a decoded golden with).
        let coding = match frame[3] {
            0 => Coding::Raw,
            1 => Coding::Adaptive,
            other => panic!("{name}: type {other}"),
        };
        assert_eq!(
            Kind::encode_frame(&f, coding, None),
            frame,
            "{name}: {coding}"
        );
        common::assert_corruptions_refused(&frame, &limits, name);
    }
}

/// The reference tool inserted key-1 … key-100 into a 2,396-byte filter
/// with 13 hash functions and tweak 0x5eed1e55: the crate, inserting the
/// same keys, sets the same bits.
#[test]
fn bip37_wallet_golden_is_what_the_crate_builds_from_its_keys() {
    let mut f = Bip37Filter::new(2396, 13, 0x5eed_1e55, 1).unwrap();
    for j in 1..=100 {
        f.insert(format!("key-{j}").as_bytes());
    }
    assert_eq!(f.to_filterload(), file("bip37_wallet.filterload"));
}

/// FORMAT.md section 7 prints the Core frame in full.
#[test]
fn bip37_core_golden_is_printed_in_the_format_document() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
    let hex: String = file("v3_bip37_core_tweak.cbf")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(doc.contains(&hex), "FORMAT.md section 7 prints {hex}");
}
