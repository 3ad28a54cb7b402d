//! Golden frames (bytes in, filter out). The expected bit arrays were decoded
//! by tools/ref_decoder.py, written from docs/FORMAT.md alone.

use crate::common::caught_before_the_payload;
use compressed_bloom::delta;
use compressed_bloom::{
    decode, encode_as, BloomFilter, DecodeError, DecodeLimits, FilterParams, FilterType,
};

struct Golden {
    name: String,
    ty: u8,
    seed: u64,
    m: u64,
    k: u32,
    n: u64,
    frame: Vec<u8>,
    bits: Vec<u8>,
}

fn goldens() -> Vec<Golden> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");
    let list = std::fs::read_to_string(format!("{dir}/golden.txt")).unwrap();
    let v: Vec<Golden> = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            Golden {
                name: f[0].to_string(),
                ty: f[1].parse().unwrap(),
                seed: f[2].parse().unwrap(),
                m: f[3].parse().unwrap(),
                k: f[4].parse().unwrap(),
                n: f[5].parse().unwrap(),
                frame: std::fs::read(format!("{dir}/{}.cbf", f[0])).unwrap(),
                bits: std::fs::read(format!("{dir}/{}.bits", f[0])).unwrap(),
            }
        })
        .collect();
    assert_eq!(v.len(), 9, "all golden vectors present");
    v
}

fn keys(n: u64) -> impl Iterator<Item = String> {
    (1..=n).map(|i| format!("key-{i}"))
}

#[test]
fn golden_frames_decode_to_the_reference_bits() {
    for g in goldens() {
        // The format's own rules only: two goldens are empty multi-block
        // filters, far past the expansion ratio (the default limits take
        // them under the floor).
        let f = decode(&g.frame, &DecodeLimits::unlimited())
            .unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_eq!(
            f.params(),
            &FilterParams::new(g.m, g.k, g.seed),
            "{}",
            g.name
        );
        assert_eq!(f.len(), g.n, "{}", g.name);
        assert_eq!(g.frame[3], g.ty, "{}", g.name);
        assert_eq!(
            f.to_bytes(),
            g.bits,
            "{}: bits differ from the reference decoder",
            g.name
        );
    }
}

#[test]
fn golden_filters_rebuild_from_their_keys_and_reencode_identically() {
    for g in goldens() {
        let mut f = BloomFilter::new(FilterParams::new(g.m, g.k, g.seed)).unwrap();
        for key in keys(g.n) {
            f.insert(key.as_bytes());
        }
        assert_eq!(f.to_bytes(), g.bits, "{}: hashing disagrees", g.name);
        let ty = if g.ty == 0 {
            FilterType::Raw
        } else {
            FilterType::Coded
        };
        let frame = encode_as(&f, ty);
        assert_eq!(
            frame, g.frame,
            "{}: encoder output changed (format bump?)",
            g.name
        );
    }
}

#[test]
fn every_truncation_is_rejected() {
    for g in goldens() {
        for cut in 0..g.frame.len() {
            // Unlimited: the format's own rules only (two goldens are past
            // the expansion ratio, so a receiver holding frames to the ratio
            // alone would refuse them before their length is checked).
            let r = decode(&g.frame[..cut], &DecodeLimits::unlimited());
            assert!(
                matches!(r, Err(DecodeError::Truncated { .. })),
                "{}: truncation to {cut} bytes: {:?}",
                g.name,
                r.err()
            );
        }
    }
}

#[test]
fn every_single_bit_flip_is_rejected() {
    let limits = DecodeLimits::unlimited();
    for g in goldens() {
        let mut frame = g.frame.clone();
        for i in 0..frame.len() * 8 {
            frame[i / 8] ^= 1 << (i % 8);
            let r = decode(&frame, &limits);
            assert!(
                matches!(&r, Err(e) if caught_before_the_payload(e)),
                "{}: flip of bit {i}: {:?}",
                g.name,
                r.err()
            );
            frame[i / 8] ^= 1 << (i % 8);
        }
    }
}

/// The same for the golden deltas (both types): every flip is refused by
/// `apply` against the right base, which stays untouched.
#[test]
fn every_single_bit_flip_of_a_golden_delta_is_rejected() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");
    let list = std::fs::read_to_string(format!("{dir}/golden_delta.txt")).unwrap();
    let bases = goldens();
    let limits = DecodeLimits::unlimited();
    for line in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split(' ').collect();
        let mut frame = std::fs::read(format!("{dir}/{}.cbf", f[0])).unwrap();
        let base = decode(
            &bases.iter().find(|g| g.name == f[2]).unwrap().frame,
            &DecodeLimits::default(),
        )
        .unwrap();
        for i in 0..frame.len() * 8 {
            frame[i / 8] ^= 1 << (i % 8);
            let mut b = base.clone();
            let r = delta::apply(&mut b, &frame, &limits);
            assert!(
                matches!(&r, Err(e) if caught_before_the_payload(e)),
                "{}: flip of bit {i}: {r:?}",
                f[0]
            );
            assert_eq!(b, base);
            frame[i / 8] ^= 1 << (i % 8);
        }
    }
}

#[test]
fn trailing_bytes_are_rejected() {
    let g = &goldens()[1];
    let mut frame = g.frame.clone();
    frame.push(0);
    assert!(matches!(
        decode(&frame, &DecodeLimits::default()),
        Err(DecodeError::TrailingBytes { count: 1, .. })
    ));
}

#[test]
fn golden_deltas_apply_to_the_reference_result() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");
    let list = std::fs::read_to_string(format!("{dir}/golden_delta.txt")).unwrap();
    let bases = goldens();
    let mut count = 0;
    for line in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split(' ').collect();
        let (name, kind, base_name) = (f[0], f[1], f[2]);
        let (from, to): (u64, u64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
        let frame = std::fs::read(format!("{dir}/{name}.cbf")).unwrap();
        let expected = std::fs::read(format!("{dir}/{name}.bits")).unwrap();
        let base = bases.iter().find(|g| g.name == base_name).unwrap();
        let mut f = decode(&base.frame, &DecodeLimits::default()).unwrap();
        delta::apply(&mut f, &frame, &DecodeLimits::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            f.to_bytes(),
            expected,
            "{name}: differs from the reference decoder"
        );
        // The encoder reproduces the golden delta from the keys.
        let mut new = BloomFilter::new(FilterParams::new(base.m, base.k, base.seed)).unwrap();
        for i in from..=to {
            new.insert(format!("key-{i}").as_bytes());
        }
        assert_eq!(new.to_bytes(), expected, "{name}: hashing");
        let old = decode(&base.frame, &DecodeLimits::default()).unwrap();
        let (encoded, version) = match kind {
            "plain" => (delta::encode_delta_plain(&old, &new).unwrap(), 1),
            "conditional" => (delta::encode_delta_conditional(&old, &new).unwrap(), 2),
            other => panic!("{name}: unknown delta type {other}"),
        };
        assert_eq!(encoded, frame, "{name}: delta encoder output changed");
        assert_eq!(frame[2], version, "{name}: version byte");
        count += 1;
    }
    assert_eq!(count, 7);
}

/// CRC-32C detects every error burst of length <= 32 bits. Random bursts
/// (first and last bit flipped, the bits between random) at random offsets
/// of every golden frame, fixed seed.
#[test]
fn random_bursts_up_to_32_bits_are_rejected() {
    let limits = DecodeLimits::unlimited();
    let mut s = 0x00C0_FFEE_u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut tried = 0;
    for g in goldens() {
        let bits = g.frame.len() * 8;
        for _ in 0..2000 {
            let len = 2 + (next() % 31) as usize; // 2..=32
            if len > bits {
                continue;
            }
            let start = (next() % (bits - len + 1) as u64) as usize;
            let pattern = next() | 1 | (1 << (len - 1));
            let mut f = g.frame.clone();
            for i in 0..len {
                if pattern >> i & 1 == 1 {
                    let b = start + i;
                    f[b / 8] ^= 1 << (b % 8);
                }
            }
            let r = decode(&f, &limits);
            assert!(
                matches!(&r, Err(e) if caught_before_the_payload(e)),
                "{}: burst of {len} bits at bit {start}: {:?}",
                g.name,
                r.err()
            );
            tried += 1;
        }
    }
    assert!(tried > 15_000);
}
