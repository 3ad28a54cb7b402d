//! What importing a Squid cache digest holds (docs/HARDENING.md, "Squid
//! digests"): Squid's own form (`SquidDigest::from_squid_bytes`) and a
//! frame holding one (`compressed_bloom::kinds::squid::decode_squid`), at the largest mask the
//! format allows. One test in this binary, so the counting allocator sees
//! only its allocations.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

use compressed_bloom::kinds::squid::decode_squid;
use compressed_bloom::kinds::squid::encode_squid;
use compressed_bloom::kinds::squid::encode_squid_raw;
use compressed_bloom::kinds::squid::{SquidDigest, SquidError, MAX_MASK_SIZE};
use compressed_bloom::{coder, DecodeError, DecodeLimits};

/// The largest digest: Squid caps the mask at 268,435,454 bytes
/// (`MAX_MASK_SIZE`, so that its bit count stays below 2^31), whatever the
/// capacity, and a header must declare exactly that size
/// (`CBlock::validate`), so no digest holds more, under any limits.
///
/// * `from_squid_bytes` checks the header and the mask's length, then
///   holds the mask once, as the filter's words (rounded up to 8 bytes):
///   at most ⌈mask_size/8⌉ · 8 bytes, 1 byte per input byte. A header that
///   declares more bits than `max_m` is refused with next to nothing
///   allocated.
/// * `decode_squid` holds what `decode` holds for the frame's mask: the
///   array and the decoder's tables (32 KiB per thread, 128 bytes per
///   coder block, 16 KiB), for the raw frame (the longest) and the coded
///   frame of an empty digest (the most output per frame byte, about
///   45,000: under the expansion floor's 2^16).
#[test]
fn a_squid_digest_holds_its_mask_once() {
    let limits = DecodeLimits::default();
    let empty = SquidDigest::new(u64::from(MAX_MASK_SIZE), 8).unwrap();
    assert_eq!(empty.cblock().mask_size() as u32, MAX_MASK_SIZE);
    let mask = MAX_MASK_SIZE as usize;
    let words = mask.div_ceil(8) * 8;

    // Squid's form: the 128-byte header and the mask.
    let squid = empty.to_squid_bytes();
    assert_eq!(squid.len(), 128 + mask);
    let mut got = None;
    let peak = peak_of(|| got = Some(SquidDigest::from_squid_bytes(&squid, &limits)));
    assert_eq!(got.unwrap().unwrap(), empty);
    println!(
        "from_squid_bytes: {} input bytes, peak {peak} bytes",
        squid.len()
    );
    assert!(
        (words..=words + 1024).contains(&peak),
        "from_squid_bytes: peak {peak}, the mask's words {words}"
    );
    drop(squid);
    // Past max_m: refused at the header.
    let small = DecodeLimits {
        max_m: 8 * u64::from(MAX_MASK_SIZE) - 1,
        ..limits
    };
    let head = &empty.to_squid_bytes()[..128];
    let mut got = None;
    let peak = peak_of(|| got = Some(SquidDigest::from_squid_bytes(head, &small)));
    assert_eq!(
        got.unwrap(),
        Err(SquidError::TooLarge {
            bits: 8 * u64::from(MAX_MASK_SIZE),
            limit: small.max_m
        })
    );
    assert!(peak < 1024, "a refused header allocated {peak} bytes");

    // Frames holding it.
    let m = 8 * u64::from(MAX_MASK_SIZE);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let blocks = coder::block_count(m) as usize;
    let tables = threads.min(blocks) * 32 * 1024 + blocks * 128 + 16 * 1024;
    for (name, frame) in [
        ("raw", encode_squid_raw(&empty)),
        ("coded", encode_squid(&empty)),
    ] {
        let mut got: Option<Result<SquidDigest, DecodeError>> = None;
        let peak = peak_of(|| got = Some(decode_squid(&frame, &limits)));
        assert_eq!(got.unwrap().unwrap(), empty);
        println!(
            "decode_squid, {name}: {} frame bytes, peak {peak} bytes",
            frame.len()
        );
        assert!(
            (words..=words + tables).contains(&peak),
            "decode_squid, {name}: peak {peak}, words {words} + tables {tables}"
        );
    }
    drop(empty);

    // What `cbloom import --squid` adds to the digest it read and the
    // mask's words: the frame, which for an incompressible mask is raw,
    // after a coded attempt (each block's stream, then the payload they
    // are gathered into, both about the mask's size) that it does not
    // keep. tests/cli/bounds.rs holds the command to the sum.
    let mut squid = empty_head();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    while squid.len() < 128 + mask {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        squid.extend_from_slice(&x.to_le_bytes());
    }
    squid.truncate(128 + mask);
    let random = SquidDigest::from_squid_bytes(&squid, &limits).unwrap();
    drop(squid);
    let mut len = 0;
    let peak = peak_of(|| len = encode_squid(&random).len());
    println!("encode_squid of a random mask: a {len}-byte frame, peak {peak} bytes");
    assert!(len > mask, "a raw frame");
    // The blocks' streams (a mask), and the payload they are gathered
    // into, which grows by doubling: at its last step it holds half a
    // mask and the new mask-sized buffer (this allocator copies on
    // realloc), 2.5 masks; then the raw frame beside the payload, 2.
    // Besides: 16 KiB per block for a stream's spare capacity and 1 MiB
    // for the encoder's scratch.
    let allowance = 5 * words / 2 + blocks * 16 * 1024 + (1 << 20);
    assert!(
        peak <= allowance,
        "encode_squid: peak {peak}, allowance {allowance}"
    );
}

/// The 128-byte header of the largest digest.
fn empty_head() -> Vec<u8> {
    SquidDigest::new(u64::from(MAX_MASK_SIZE), 8)
        .unwrap()
        .cblock()
        .as_bytes()
        .to_vec()
}
