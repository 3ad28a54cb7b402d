//! Decoding never allocates more than the output the limits allow plus a
//! small constant, whatever the frame declares. One test in this binary, so
//! the counting allocator sees only its allocations (plus the harness's, which
//! the baseline absorbs).

use compressed_bloom::format::varint;
use compressed_bloom::{
    decode_with_limits, delta, encode, BloomFilter, DecodeLimits, FilterParams,
};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

fn craft(ty: u8, m: u64, payload: &[u8]) -> Vec<u8> {
    let version = if ty == 3 { 2 } else { 1 };
    let mut f = vec![0xCB, 0xF1, version, ty, 1, 0];
    for v in [0, m, 2, 10, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

#[test]
fn decoding_stays_within_the_limit_plus_a_constant() {
    let max_m = 1u64 << 24; // 2 MiB of output at most
    let limits = DecodeLimits {
        max_m,
        ..DecodeLimits::default()
    };
    // The constant: one 32 KiB decode table per thread in flight (2 here),
    // and small vectors (block table, jobs). 128 KiB covers it.
    let allowance = (max_m / 8) as usize + 128 * 1024;
    // Applying a conditional delta also holds one decoded coder block (2^23
    // bits, 1 MiB) while it scatters the block into the result.
    let apply_allowance = allowance + (compressed_bloom::coder::BLOCK_BITS / 8) as usize;
    let p = FilterParams::new(max_m, 2, 1);
    let filled = |keys: std::ops::Range<u32>| {
        let mut f = BloomFilter::new(p).unwrap();
        for i in keys {
            f.insert(&i.to_le_bytes());
        }
        f
    };
    let empty_base = BloomFilter::new(p).unwrap();
    let base_digest = delta::digest(&empty_base).to_le_bytes();

    let mut frames: Vec<Vec<u8>> = Vec::new();
    // Legitimate frames up to the limit, dense and empty.
    for (m, keys) in [
        (max_m, 1_000_000u32),
        (max_m, 0),
        (max_m / 2, 100_000),
        (1000, 50),
    ] {
        let mut f = BloomFilter::new(FilterParams::new(m, 2, 1)).unwrap();
        for i in 0..keys {
            f.insert(&i.to_le_bytes());
        }
        frames.push(encode(&f));
    }
    // Declared sizes past the limit, with tiny payloads and valid CRCs.
    for m in [max_m + 1, 1 << 40, 1 << 56, u64::MAX] {
        frames.push(craft(1, m, &[1, 0, 0, 0, 0, 0]));
        frames.push(craft(2, m, &[0; 24]));
        frames.push(craft(3, m, &[0; 24]));
    }
    // Garbage payloads at the limit.
    frames.push(craft(1, max_m, &[0xAB; 4096]));
    frames.push(craft(2, max_m, &[0x5A; 4096]));
    // Deltas of both types at the limit, real and garbage, made for the
    // empty base the apply below uses (so they get past the digest check).
    let dense = filled(0..1_000_000);
    let real = [
        delta::encode_delta_plain(&empty_base, &dense).unwrap(),
        delta::encode_delta_conditional(&empty_base, &dense).unwrap(),
    ];
    // They apply (so the measured peaks include a whole successful apply).
    for d in &real {
        let mut b = empty_base.clone();
        delta::apply(&mut b, d, &limits).unwrap();
        assert_eq!(b, dense);
    }
    frames.extend(real);
    for ty in [2u8, 3] {
        let mut garbage = base_digest.to_vec();
        garbage.extend_from_slice(&[0x5A; 8]);
        if ty == 3 {
            // base_ones = 0, first part 4000 bytes, second part empty.
            garbage.push(0);
            varint::put(&mut garbage, 4000);
        }
        garbage.extend_from_slice(&[0xA5; 4000]);
        frames.push(craft(ty, max_m, &garbage));
    }

    let mut worst = 0;
    let mut apply_worst = 0;
    for (i, frame) in frames.iter().enumerate() {
        let peak = peak_of(|| {
            let _ = decode_with_limits(frame, &limits);
        });
        assert!(
            peak <= allowance,
            "frame {i}: decode allocated {peak} bytes"
        );
        worst = worst.max(peak);
        let mut base = empty_base.clone();
        let peak = peak_of(|| {
            let _ = delta::apply(&mut base, frame, &limits);
        });
        assert!(
            peak <= apply_allowance,
            "frame {i}: apply allocated {peak} bytes"
        );
        apply_worst = apply_worst.max(peak);
    }
    println!("largest decode peak {worst} bytes, allowance {allowance}");
    println!("largest apply peak {apply_worst} bytes, allowance {apply_allowance}");
}
