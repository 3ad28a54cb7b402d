//! Decoding never allocates more than the output the limits allow plus a
//! small constant, whatever the frame declares. One test in this binary, so
//! the counting allocator sees only its allocations (plus the harness's, which
//! the baseline absorbs).

use compressed_bloom::format::varint;
use compressed_bloom::{
    decode, delta, encode, BloomFilter, DecodeError, DecodeLimits, FilterParams,
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
    // Applying a conditional delta also holds, on each of its threads (one
    // per core, at most one per coder block: 2 here), a decoded coder block
    // of each part (2^23 bits, 1 MiB each) and a decode table, while it
    // scatters them into the result (docs/HARDENING.md).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(compressed_bloom::coder::block_count(max_m) as usize);
    let block = (compressed_bloom::coder::BLOCK_BITS / 8) as usize;
    let apply_allowance = allowance + threads * (2 * block + 32 * 1024);
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
            let _ = decode(frame, &limits);
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

    // Every kind at its limits, through decode_any: partitioned frames are
    // bit arrays (the same allowance); sparse frames are not bounded by
    // max_m as an m, but their list (under 64 bytes per payload byte,
    // whatever m they declare) is held to ⌈max_m/8⌉ bytes at its count
    // (docs/FORMAT.md section 8.4, step 3).
    use compressed_bloom::decode_any;
    use compressed_bloom::kinds::partitioned::encode_partitioned;
    use compressed_bloom::kinds::sparse::encode_sparse;
    use compressed_bloom::kinds::{partitioned::PartitionedBloomFilter, sparse::SparseFilter};
    let mut kind_frames: Vec<Vec<u8>> = Vec::new();
    let mut part = PartitionedBloomFilter::new(FilterParams::new(max_m, 4, 1)).unwrap();
    for i in 0..500_000u32 {
        part.insert(&i.to_le_bytes());
    }
    kind_frames.push(encode_partitioned(&part));
    // A sparse frame of 5,000 positions in 2^50 bits.
    let sparse = SparseFilter::from_keys(
        FilterParams::new(1 << 50, 1, 1),
        (0..5_000u32).map(|i| i.to_le_bytes()),
    )
    .unwrap();
    kind_frames.push(encode_sparse(&sparse));
    // Hostile sparse payloads behind valid v3 headers: a count far beyond
    // the payload; and the densest list a payload can hold (r = 0, every
    // gap 0: 8 positions per byte) in m = 2^56, where each position costs
    // the most memory.
    let v3 = |m: u64, payload: &[u8]| {
        let mut f = vec![0xCB, 0xF1, 3, 1, 1, 0, 4];
        for v in [0, m, 1, 0, payload.len() as u64] {
            varint::put(&mut f, v);
        }
        f.extend_from_slice(payload);
        let crc = crc32c::crc32c(&f);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    };
    let mut huge_count = Vec::new();
    varint::put(&mut huge_count, 1 << 40);
    huge_count.extend_from_slice(&[0, 0, 0]);
    kind_frames.push(v3(1 << 56, &huge_count));
    let bytes = 30_000usize;
    let mut densest = Vec::new();
    varint::put(&mut densest, (bytes * 8) as u64);
    densest.push(0);
    densest.extend(std::iter::repeat_n(0u8, bytes));
    kind_frames.push(v3(1 << 56, &densest));
    let mut kind_worst = 0f64;
    for (i, frame) in kind_frames.iter().enumerate() {
        let mut ok = false;
        let peak = peak_of(|| ok = decode_any(frame, &limits).is_ok());
        let kind_allowance = allowance.max(64 * frame.len() + 128 * 1024);
        assert!(
            peak <= kind_allowance,
            "kind frame {i}: {peak} bytes, allowance {kind_allowance}"
        );
        assert_eq!(ok, i != 2, "kind frame {i}");
        kind_worst = kind_worst.max(peak as f64 / frame.len() as f64);
    }
    println!("kinds: largest peak per frame byte {kind_worst:.1}");
    // Past the memory limit: the densest list of 60,000 payload bytes
    // (480,000 positions in 2^56 bits, 2.2 MB) is refused at its count,
    // before it is allocated.
    let mut too_many = Vec::new();
    varint::put(&mut too_many, 8 * 60_000);
    too_many.push(0);
    too_many.extend(std::iter::repeat_n(0u8, 60_000));
    let frame = v3(1 << 56, &too_many);
    let list = compressed_bloom::kinds::sparse::EliasFano::bytes_for(8 * 60_000, 1 << 56);
    let mut res = None;
    let peak = peak_of(|| res = Some(decode_any(&frame, &limits)));
    assert_eq!(
        res.unwrap(),
        Err(DecodeError::LimitExceeded {
            what: "decoded memory (bytes; max_m / 8)",
            requested: list,
            limit: max_m / 8,
        })
    );
    assert!(peak < 64 * 1024, "{peak}");

    // The counting kind holds ⌈m/2⌉ bytes of counters and, while decoding,
    // the ⌈m/8⌉-byte map (docs/FORMAT.md section 8.1), counted against
    // the ⌈max_m/8⌉ bytes of memory the limits allow (section 2.3, step
    // 3): at the largest m that fits, a full coded frame, a hostile one (a
    // full map and a value stream that ends at once), and a raw one; at
    // m = max_m (2.5 times the memory, accepted before) a refusal before
    // anything is allocated.
    use compressed_bloom::kinds::counting::encode_counting;
    use compressed_bloom::kinds::counting::encode_counting_raw;
    let memory = (max_m / 8) as usize;
    let counting_m = (0..64)
        .map(|d| max_m / 5 + 1 - d)
        .find(|m| m.div_ceil(2) + m.div_ceil(8) <= max_m / 8)
        .unwrap();
    let counting_allowance = memory + 128 * 1024;
    let counting_frames = |cm: u64| {
        let mut c =
            compressed_bloom::CountingBloomFilter::new(FilterParams::new(cm, 3, 1)).unwrap();
        for i in 0..(cm / 16) as u32 {
            c.insert(&i.to_le_bytes());
        }
        let mut hostile = vec![0u8]; // raw map, all ones, then 5 value bytes
        varint::put(&mut hostile, cm.div_ceil(8));
        hostile.extend(std::iter::repeat_n(0xFFu8, cm.div_ceil(8) as usize));
        if !cm.is_multiple_of(8) {
            *hostile.last_mut().unwrap() = (1u8 << (cm % 8)) - 1;
        }
        hostile.extend_from_slice(&[0, 0, 0, 0, 0]);
        let mut counting_frame = vec![0xCB, 0xF1, 3, 1, 1, 0, 1];
        for v in [0, cm, 1, 0, hostile.len() as u64] {
            varint::put(&mut counting_frame, v);
        }
        counting_frame.extend_from_slice(&hostile);
        let crc = crc32c::crc32c(&counting_frame);
        counting_frame.extend_from_slice(&crc.to_le_bytes());
        [encode_counting(&c), encode_counting_raw(&c), counting_frame]
    };
    for (i, frame) in counting_frames(counting_m).iter().enumerate() {
        let mut res = None;
        let peak = peak_of(|| res = Some(decode_any(frame, &limits)));
        assert!(
            peak <= counting_allowance,
            "counting frame {i}: {peak} bytes, allowance {counting_allowance}"
        );
        let res = res.unwrap();
        assert_eq!(res.is_ok(), i < 2, "counting frame {i}: {res:?}");
        println!(
            "counting frame {i} (m = {counting_m}): peak {peak} bytes of {counting_allowance}"
        );
    }
    for (i, frame) in counting_frames(max_m).iter().enumerate() {
        let mut res = None;
        let peak = peak_of(|| res = Some(decode_any(frame, &limits)));
        assert!(
            matches!(res.unwrap(), Err(DecodeError::LimitExceeded { requested, limit, .. })
                if requested == max_m / 2 + max_m / 8 && limit == max_m / 8),
            "counting frame {i} at m = max_m"
        );
        assert!(
            peak < 64 * 1024,
            "counting frame {i} at m = max_m: {peak} bytes"
        );
    }

    // A counting delta holds the result's counters and the map of changes
    // (the digests hash the counters in place): ⌈m/2⌉ + ⌈m/8⌉ bytes
    // beyond the base, 0.625 · m (1.125 · m when each digest copied the
    // counters).
    let mut base =
        compressed_bloom::CountingBloomFilter::new(FilterParams::new(counting_m, 3, 1)).unwrap();
    for i in 0..100_000u32 {
        base.insert(&i.to_le_bytes());
    }
    let mut next = base.clone();
    for i in 100_000..110_000u32 {
        next.insert(&i.to_le_bytes());
    }
    let d = compressed_bloom::kinds::counting::encode_delta_counting(&base, &next).unwrap();
    let mut res = None;
    let peak = peak_of(|| {
        res = Some(compressed_bloom::kinds::counting::apply_counting(
            &mut base, &d, &limits,
        ))
    });
    res.unwrap().unwrap();
    assert_eq!(base, next);
    let held = (counting_m.div_ceil(16) * 8 + counting_m.div_ceil(64) * 8) as usize;
    assert!(
        peak <= held + 64 * 1024,
        "counting delta: {peak} bytes, counters and map {held}"
    );
    println!(
        "counting delta (m = {counting_m}): peak {peak} bytes, {:.3} per counter",
        peak as f64 / counting_m as f64
    );

    // The scalable kind: the header's m is the sum of the layers' m, so a
    // frame holds at most max_m bits in its layers (docs/FORMAT.md 8.3).
    use compressed_bloom::kinds::scalable::encode_scalable;
    use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
    let mut s = ScalableBloomFilter::new(ScalablePolicy::new(20_000, 0.01), 1).unwrap();
    for i in 0..200_000u32 {
        s.insert(&i.to_le_bytes());
    }
    let frame = encode_scalable(&s);
    assert!(s.total_bits() <= max_m, "{} bits", s.total_bits());
    let mut ok = false;
    let peak = peak_of(|| ok = decode_any(&frame, &limits).is_ok());
    assert!(ok);
    assert!(
        peak <= allowance,
        "scalable: {peak} bytes, allowance {allowance}"
    );
    println!(
        "scalable frame: {} layers, peak {peak} bytes of {allowance}",
        s.layers().len()
    );
    println!("largest apply peak {apply_worst} bytes, allowance {apply_allowance}");
}
