//! What importing a BIP37 `filterload` payload holds (docs/HARDENING.md,
//! "BIP37 `filterload` payloads"): the largest filter BIP37 allows once,
//! as the filter's words, and nothing for a refused payload, whatever
//! length it claims. One test in this binary, so the counting allocator
//! sees only its allocations.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

use compressed_bloom::bitcoin::{Bip37Error, Bip37Filter};
use compressed_bloom::DecodeLimits;

/// The largest payload: 36,000 bytes of filter (a `fd a0 8c` CompactSize)
/// and the 9 trailer bytes. `from_filterload` holds its bits once, as
/// 4,500 words (exactly 36,000 bytes); every refusal below comes from the
/// length, the size or the trailer before the words are allocated, so it
/// allocates nothing.
#[test]
fn a_bip37_import_holds_its_filter_once_and_a_refusal_nothing() {
    let limits = DecodeLimits::default();
    let mut largest = Bip37Filter::new(36_000, 50, u32::MAX, 255).unwrap();
    for i in 0..2_000u32 {
        largest.insert(&i.to_le_bytes());
    }
    let payload = largest.to_filterload();
    assert_eq!(payload.len(), 3 + 36_000 + 9);
    let mut got = None;
    let peak = peak_of(|| got = Some(Bip37Filter::from_filterload(&payload, &limits)));
    // The same filter (the payload carries no key count: n is 0).
    assert_eq!(got.unwrap().unwrap().to_filterload(), payload);
    println!(
        "from_filterload: {} input bytes, peak {peak} bytes",
        payload.len()
    );
    assert!(
        (36_000..=36_000 + 256).contains(&peak),
        "from_filterload: peak {peak}, the filter's words 36,000"
    );

    let mut claims_2_64 = vec![0xff];
    claims_2_64.extend_from_slice(&u64::MAX.to_le_bytes());
    let mut claims_36_001 = vec![0xfd];
    claims_36_001.extend_from_slice(&36_001u16.to_le_bytes());
    claims_36_001.resize(3 + 36_001 + 9, 0);
    let truncated = payload[..payload.len() - 1].to_vec();
    let mut trailing = payload.clone();
    trailing.push(0);
    let mut too_many = payload.clone();
    let k_at = 3 + 36_000;
    too_many[k_at..k_at + 4].copy_from_slice(&51u32.to_le_bytes());
    for (name, bytes) in [
        ("2^64 - 1 bytes claimed", claims_2_64),
        ("36,001 bytes", claims_36_001),
        ("truncated", truncated),
        ("trailing byte", trailing),
        ("51 hash functions", too_many),
    ] {
        let mut got = None;
        let peak = peak_of(|| got = Some(Bip37Filter::from_filterload(&bytes, &limits)));
        let err = got.unwrap().unwrap_err();
        assert!(
            matches!(
                err,
                Bip37Error::TooLarge { .. }
                    | Bip37Error::Truncated { .. }
                    | Bip37Error::TrailingData { .. }
                    | Bip37Error::TooManyHashFuncs { found: 51 }
            ),
            "{name}: {err:?}"
        );
        assert_eq!(peak, 0, "{name}: a refusal allocated {peak} bytes");
    }
}
