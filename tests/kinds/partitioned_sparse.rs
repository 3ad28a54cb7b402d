//! The partitioned (kind 2) and sparse (kind 4) filters: round trips
//! through frames, no false negatives, false-positive rates against their
//! formulas, hostile frames, and the generic entry point.

use crate::common;

use compressed_bloom::decode_any;
use compressed_bloom::encode_any;
use compressed_bloom::format::{self, KindSet};
use compressed_bloom::kinds::partitioned::decode_partitioned;
use compressed_bloom::kinds::partitioned::encode_partitioned;
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::sparse::decode_sparse;
use compressed_bloom::kinds::sparse::encode_sparse;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::plan::{fpr_finite, zero_count_variance, zero_fraction};
use compressed_bloom::AnyFilter;
use compressed_bloom::PublisherOptions;
use compressed_bloom::{
    decode, encode, BloomFilter, DecodeError, DecodeLimits, FilterKind, FilterParams,
};

fn partitioned(m: u64, k: u32, seed: u64, keys: &[Vec<u8>]) -> PartitionedBloomFilter {
    let mut f = PartitionedBloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
    for key in keys {
        f.insert(key);
    }
    f
}

#[test]
fn partitioned_round_trips_without_false_negatives() {
    fn prop(s: u16, k: u8, seed: u64, keys: Vec<Vec<u8>>) -> bool {
        let k = u32::from(k % 8) + 1;
        let m = (u64::from(s) + 1) * u64::from(k);
        let f = partitioned(m, k, seed, &keys);
        let frame = encode_partitioned(&f);
        let back = decode_partitioned(&frame, &DecodeLimits::unlimited()).unwrap();
        let any = decode_any(&frame, &DecodeLimits::unlimited()).unwrap();
        back == f
            && any == AnyFilter::Partitioned(f.clone())
            && encode_any(&any) == frame
            && keys.iter().all(|key| back.contains(key))
            // one bit per partition per key
            && keys.iter().all(|key| {
                let sb = f.partition_bits();
                f.positions(key)
                    .enumerate()
                    .all(|(i, p)| p / sb == i as u64)
            })
    }
    common::qc(300, 0x5EED_0A01).quickcheck(prop as fn(_, _, _, _) -> bool);
}

#[test]
fn sparse_round_trips_and_matches_the_standard_filter() {
    fn prop(m: u64, k: u8, seed: u64, keys: Vec<Vec<u8>>, probes: Vec<Vec<u8>>) -> bool {
        let m = m % (1 << 50) + 1;
        let k = u32::from(k % 4) + 1;
        let p = FilterParams::new(m, k, seed);
        let f = SparseFilter::from_keys(p, &keys).unwrap();
        let frame = encode_sparse(&f);
        let back = decode_sparse(&frame, &DecodeLimits::unlimited()).unwrap();
        let ok = back == f
            && decode_any(&frame, &DecodeLimits::unlimited()).unwrap()
                == AnyFilter::Sparse(f.clone())
            && keys.iter().all(|key| back.contains(key));
        if !ok {
            return false;
        }
        // For m small enough to hold as bits: the same bits and answers
        // as the standard filter of the same keys.
        if m <= 1 << 20 {
            let mut std_f = BloomFilter::new(p).unwrap();
            for key in &keys {
                std_f.insert(key);
            }
            return back.to_bloom().unwrap() == std_f
                && SparseFilter::from_bloom(&std_f).unwrap() == f
                && probes.iter().all(|q| back.contains(q) == std_f.contains(q));
        }
        true
    }
    common::qc(300, 0x5EED_0A02).quickcheck(prop as fn(_, _, _, _, _) -> bool);
}

const N: u64 = 10_000;
const QUERIES: u64 = 1_000_000;

/// The partitioned filter's false-positive rate against
/// (1 − (1 − 1/s)^n)^k, s = m/k. The partitions fill independently (each
/// key puts one position in each), so the sd of the filter's own rate is
/// √k · ρ^(k−1) · sd(ρ_1), ρ_1 the fill of one partition (the k = 1
/// zero-count variance of s bits), combined with the queries' binomial sd.
/// The standard filter at the same m, n, k is measured beside it.
#[test]
fn partitioned_fpr_within_4_sd_of_its_formula() {
    for (bpk, k) in [(8u64, 4u32), (12, 3), (16, 2), (32, 1)] {
        let m = bpk * N;
        let keys: Vec<Vec<u8>> = (0..N).map(|i| format!("member:{i}").into_bytes()).collect();
        let f = partitioned(m, k, 0x5EED, &keys);
        let mut std_f = BloomFilter::new(FilterParams::new(m, k, 0x5EED)).unwrap();
        for key in &keys {
            std_f.insert(key);
        }
        let (mut hits, mut std_hits) = (0u64, 0u64);
        for i in 0..QUERIES {
            let q = format!("stranger:{i}");
            hits += u64::from(f.contains(q.as_bytes()));
            std_hits += u64::from(std_f.contains(q.as_bytes()));
        }
        let measured = hits as f64 / QUERIES as f64;
        let std_measured = std_hits as f64 / QUERIES as f64;
        let expected = PartitionedBloomFilter::formula_fpr(f.params(), N);
        let s = m / u64::from(k);
        let rho = 1.0 - zero_fraction(s, N, 1);
        let sd_rho = zero_count_variance(s, N, 1).sqrt() / s as f64;
        let sd_filter = f64::from(k).sqrt() * rho.powi(k as i32 - 1) * sd_rho;
        let sd_query = (expected * (1.0 - expected) / QUERIES as f64).sqrt();
        let sd = sd_filter.hypot(sd_query);
        let z = (measured - expected) / sd;
        println!(
            "m/n={bpk} k={k}: partitioned {measured:.6} (formula {expected:.6}, z={z:+.2}), \
             standard {std_measured:.6} (formula {:.6})",
            fpr_finite(m, N, k)
        );
        assert!(z.abs() <= 4.0, "m/n={bpk} k={k}: {measured} vs {expected}");
    }
}

/// The sparse filter holds the standard filter's bits, so its rate is the
/// standard formula's (tests/filter/fpr.rs derives the sd); at m/n = 2^16, k = 1.
#[test]
fn sparse_fpr_within_4_sd_of_the_standard_formula() {
    let m = N << 16;
    let keys = (0..N).map(|i| format!("member:{i}"));
    let f = SparseFilter::from_keys(FilterParams::new(m, 1, 3), keys).unwrap();
    let queries = 4_000_000u64;
    let hits = (0..queries)
        .filter(|i| f.contains(format!("stranger:{i}").as_bytes()))
        .count();
    let measured = hits as f64 / queries as f64;
    let expected = fpr_finite(m, N, 1);
    let sd_filter = zero_count_variance(m, N, 1).sqrt() / m as f64;
    let sd = sd_filter.hypot((expected * (1.0 - expected) / queries as f64).sqrt());
    let z = (measured - expected) / sd;
    println!("sparse m/n=2^16: measured {measured:.3e}, formula {expected:.3e}, z={z:+.2}");
    assert!(z.abs() <= 4.0, "{measured} vs {expected}");
}

/// The paper's claim for k = 1 (§III.A): a compressed filter needs about
/// log2(1/f) + 1.44 bits per key; the Rice-coded sparse frame is within a
/// few hundredths of a bit of the gap entropy, so at f ≈ 2^-19 it stays
/// below BIP158's 21 bits per key (checked with margin: < 20.7).
#[test]
fn sparse_frame_size_near_the_entropy_at_f_2_pow_minus_19() {
    let n = 100_000u64;
    let m = n << 19;
    let keys = (0..n).map(|i| format!("k{i}"));
    let f = SparseFilter::from_keys(FilterParams::new(m, 1, 1), keys).unwrap();
    let frame = encode_sparse(&f);
    let bits_per_key = frame.len() as f64 * 8.0 / n as f64;
    let entropy = compressed_bloom::math::log2_binomial(m, f.count_ones()) / n as f64;
    println!("sparse at m/n = 2^19: {bits_per_key:.3} bits per key, entropy {entropy:.3}");
    assert!(bits_per_key < 20.7, "{bits_per_key}");
    assert!(
        bits_per_key > entropy,
        "below the entropy bound: {bits_per_key}"
    );
}

#[test]
fn kinds_are_refused_by_typed_decoders_and_by_receivers_that_do_not_accept_them() {
    let keys: Vec<Vec<u8>> = (0..50u32).map(|i| i.to_le_bytes().to_vec()).collect();
    let part = encode_partitioned(&partitioned(300, 3, 1, &keys));
    let sparse =
        encode_sparse(&SparseFilter::from_keys(FilterParams::new(1 << 30, 1, 1), &keys).unwrap());
    let std_frame = encode(&BloomFilter::new(FilterParams::new(300, 3, 1)).unwrap());
    let lim = DecodeLimits::unlimited();
    assert!(matches!(
        decode(&part, &DecodeLimits::default()),
        Err(DecodeError::WrongKind {
            found: FilterKind::Partitioned,
            expected: FilterKind::Standard
        })
    ));
    assert!(matches!(
        decode_sparse(&part, &lim),
        Err(DecodeError::WrongKind { .. })
    ));
    assert!(matches!(
        decode_partitioned(&std_frame, &lim),
        Err(DecodeError::WrongKind { .. })
    ));
    // A receiver that accepts only standard filters names the kind.
    let only_standard = DecodeLimits {
        kinds: KindSet::of(&[0]),
        ..lim
    };
    let err = decode_any(&sparse, &only_standard).unwrap_err();
    assert_eq!(
        err,
        DecodeError::UnsupportedKind {
            id: 4,
            name: Some("sparse")
        }
    );
    assert!(err.to_string().contains("sparse"), "{err}");
    assert_eq!(
        decode_any(&std_frame, &only_standard),
        Ok(AnyFilter::Standard(
            BloomFilter::new(FilterParams::new(300, 3, 1)).unwrap()
        ))
    );
    // A version-1 frame holds the standard kind: a receiver that does not
    // take it refuses the frame as it refuses kind byte 0.
    let only_sparse = DecodeLimits {
        kinds: KindSet::of(&[4]),
        ..lim
    };
    let v1 = compressed_bloom::encode(&BloomFilter::new(FilterParams::new(300, 3, 1)).unwrap());
    assert_eq!(v1[2], 1);
    assert_eq!(
        decode_any(&v1, &only_sparse),
        Err(DecodeError::UnsupportedKind {
            id: 0,
            name: Some("standard")
        })
    );
    // Frames are version 3 with the kind byte.
    for (frame, kind) in [(&part, 2u8), (&sparse, 4)] {
        assert_eq!((frame[2], frame[6]), (3, kind));
    }
}

/// A sparse frame relabelled as a delta (type 2, which kind 4 allows) is
/// not read as a position list: the typed and generic decoders refuse it
/// as the wrong frame type, never reading the delta's digests as
/// positions.
#[test]
fn a_sparse_delta_frame_is_not_decoded_as_a_filter() {
    let keys: Vec<Vec<u8>> = (0..50u32).map(|i| i.to_le_bytes().to_vec()).collect();
    let mut frame =
        encode_sparse(&SparseFilter::from_keys(FilterParams::new(1 << 30, 1, 1), &keys).unwrap());
    assert!(frame.len() > 40, "a payload longer than the digests");
    assert_eq!(frame[3], 1);
    frame[3] = 2;
    common::fix_crc(&mut frame);
    let lim = DecodeLimits::unlimited();
    for err in [
        decode_sparse(&frame, &lim).map(|_| ()).unwrap_err(),
        decode_any(&frame, &lim).map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(err, DecodeError::WrongFrameType { .. }), "{err:?}");
    }
}

/// Sparse frames are not held to max_m (nothing of size m is allocated),
/// but to the frame-length and expansion limits, and m ≤ 2^56.
#[test]
fn sparse_limits() {
    let keys = (0..100u32).map(|i| i.to_le_bytes());
    let f = SparseFilter::from_keys(FilterParams::new(1 << 56, 2, 0), keys).unwrap();
    let frame = encode_sparse(&f);
    assert_eq!(decode_sparse(&frame, &DecodeLimits::default()).unwrap(), f);
    let tight = DecodeLimits {
        max_frame_len: frame.len() as u64 - 1,
        ..DecodeLimits::default()
    };
    assert!(matches!(
        decode_sparse(&frame, &tight),
        Err(DecodeError::LimitExceeded { .. })
    ));
    let h = format::inspect(&frame, &DecodeLimits::default()).unwrap();
    assert_eq!(h.kind, FilterKind::Sparse);
}

/// A sparse frame's memory is the Elias–Fano list its position count
/// declares, checked against the memory limit (⌈max_m/8⌉ bytes) when the
/// count is read and before the list is allocated: exactly what the
/// decoded filter holds, not a worst case per payload byte (which was 64
/// bytes per payload byte, about 60 times the list). A delta's result is
/// held to the same limit before it is built.
#[test]
fn sparse_memory_is_the_list_its_count_declares() {
    use compressed_bloom::kinds::sparse::EliasFano;
    let p = FilterParams::new(1 << 40, 1, 5);
    let keys = |from: u32, to: u32| (from..to).map(|i| i.to_le_bytes());
    let f = SparseFilter::from_keys(p, keys(0, 100_000)).unwrap();
    let frame = encode_sparse(&f);
    let list = EliasFano::bytes_for(f.count_ones(), p.m);
    assert_eq!(list, f.heap_bytes() as u64);
    let h = format::inspect(&frame, &DecodeLimits::default()).unwrap();
    // The list is about as large as the payload (both about 2 + log2(m/w)
    // bits per position), far below 64 bytes per payload byte.
    assert!(
        list < 2 * h.payload_len,
        "{list} bytes for {}",
        h.payload_len
    );
    let with_memory = |bytes: u64| DecodeLimits {
        max_m: bytes * 8,
        ..DecodeLimits::default()
    };
    let back = decode_sparse(&frame, &with_memory(list)).unwrap();
    assert_eq!(back, f);
    assert_eq!(back.heap_bytes() as u64, list);
    for refused in [
        decode_sparse(&frame, &with_memory(list - 1)).map(|_| ()),
        decode_any(&frame, &with_memory(list - 1)).map(|_| ()),
    ] {
        assert_eq!(
            refused,
            Err(DecodeError::LimitExceeded {
                what: "decoded memory (bytes; max_m / 8)",
                requested: list,
                limit: list - 1,
            })
        );
    }
    // As a full frame's output, the list is held to the expansion ratio
    // (above the floor) like any kind's.
    let ratio_one = DecodeLimits {
        max_expansion: Some(1),
        expansion_floor: 0,
        ..DecodeLimits::default()
    };
    let len = frame.len() as u64;
    match decode_sparse(&frame, &ratio_one) {
        Ok(g) => assert!(list <= len && g == f, "{list} > {len}"),
        Err(e) => assert_eq!(
            (list > len, e),
            (
                true,
                DecodeError::LimitExceeded {
                    what: "expansion (output bytes per frame byte)",
                    requested: list.div_ceil(len),
                    limit: 1,
                }
            )
        ),
    }
    // A delta that grows the list past the limit is refused before the
    // result is built, and the base is unchanged.
    let grown = SparseFilter::from_keys(p, keys(0, 101_000)).unwrap();
    let d = compressed_bloom::kinds::sparse::encode_delta_sparse(&f, &grown).unwrap();
    let result = EliasFano::bytes_for(grown.count_ones(), p.m);
    let mut base = f.clone();
    assert_eq!(
        compressed_bloom::kinds::sparse::apply_sparse(&mut base, &d, &with_memory(result - 1)),
        Err(DecodeError::LimitExceeded {
            what: "decoded memory (bytes; max_m / 8)",
            requested: result,
            limit: result - 1,
        })
    );
    assert_eq!(base, f);
    compressed_bloom::kinds::sparse::apply_sparse(&mut base, &d, &with_memory(result)).unwrap();
    assert_eq!(base, grown);
}

/// Planned frames stay within their budgets when built, and the plans
/// beat (or match) what they replace: a partitioned plan's f is within 5%
/// of the standard plan's for the same budget; the sparse plan at 2.6
/// bytes per key reaches f ≈ 2^-19.
#[test]
fn kind_plans_keep_their_budgets() {
    use compressed_bloom::plan::kinds::{plan_partitioned_for_size, plan_sparse_for_size};
    use compressed_bloom::plan::{plan_for_size, Constraints};
    let cons = Constraints::default();
    for (n, budget) in [(1_000u64, 1_000u64), (10_000, 12_000), (100_000, 260_000)] {
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("plan:{i}").into_bytes()).collect();
        let sp = plan_sparse_for_size(n, budget, &cons).unwrap();
        let f = SparseFilter::from_keys(FilterParams::new(sp.m, sp.k, 0), &keys).unwrap();
        let frame = encode_sparse(&f);
        assert!(
            frame.len() as u64 <= sp.bound_bytes && sp.bound_bytes <= budget,
            "{sp:?}: {}",
            frame.len()
        );
        let pp = plan_partitioned_for_size(n, budget, &cons).unwrap();
        assert_eq!(pp.m % u64::from(pp.k), 0);
        let frame = encode_partitioned(&partitioned(pp.m, pp.k, 0, &keys));
        assert!(
            frame.len() as u64 <= pp.bound_bytes && pp.bound_bytes <= budget,
            "{pp:?}: {}",
            frame.len()
        );
        let std_plan = plan_for_size(n, budget, &cons).unwrap();
        println!(
            "n={n} budget={budget}: standard f={:.3e} (k={}), partitioned f={:.3e} (k={}), sparse f={:.3e} (k={})",
            std_plan.fpr, std_plan.k, pp.fpr, pp.k, sp.fpr, sp.k
        );
        assert!(pp.fpr <= std_plan.fpr * 1.05, "{pp:?} vs {std_plan:?}");
    }
    let sp = plan_sparse_for_size(100_000, 260_000, &cons).unwrap();
    assert!(sp.fpr < 2.5e-6 && sp.fpr > 1.0e-6, "{sp:?}");
}

#[test]
fn partitioned_deltas_apply_to_partitioned_bases_only() {
    use compressed_bloom::delta;
    let keys: Vec<Vec<u8>> = (0..2_000u32).map(|i| i.to_le_bytes().to_vec()).collect();
    let old = partitioned(60_000, 3, 4, &keys[..1_500]);
    let new = partitioned(60_000, 3, 4, &keys[100..]);
    let frame = compressed_bloom::kinds::partitioned::encode_delta_partitioned(&old, &new).unwrap();
    assert_eq!((frame[2], frame[6]), (3, 2), "version 3, kind 2");
    let lim = DecodeLimits::default();
    let mut held = old.clone();
    compressed_bloom::kinds::partitioned::apply_partitioned(&mut held, &frame, &lim).unwrap();
    assert_eq!(held, new);
    // Replayed: the base no longer matches; unchanged.
    assert!(matches!(
        compressed_bloom::kinds::partitioned::apply_partitioned(&mut held, &frame, &lim),
        Err(DecodeError::WrongBase { .. })
    ));
    assert_eq!(held, new);
    // Not to a standard filter with the same bits, and a standard delta not
    // to a partitioned filter.
    let mut std_base = old.bits().clone();
    assert!(matches!(
        delta::apply(&mut std_base, &frame, &lim),
        Err(DecodeError::WrongKind { .. })
    ));
    let std_delta = delta::encode_delta(old.bits(), new.bits()).unwrap();
    let mut p = old.clone();
    assert!(matches!(
        compressed_bloom::kinds::partitioned::apply_partitioned(&mut p, &std_delta, &lim),
        Err(DecodeError::WrongKind { .. })
    ));
    assert_eq!(p, old);
}

#[test]
fn sparse_deltas_flip_the_changed_positions_without_m_bits() {
    use compressed_bloom::delta;
    let p = FilterParams::new(1 << 44, 1, 8);
    let keys = |from: u32, to: u32| (from..to).map(|i| i.to_le_bytes());
    let old = SparseFilter::from_keys(p, keys(0, 10_000)).unwrap();
    let new = SparseFilter::from_keys(p, keys(500, 10_500)).unwrap();
    let frame = compressed_bloom::kinds::sparse::encode_delta_sparse(&old, &new).unwrap();
    assert_eq!((frame[2], frame[3], frame[6]), (3, 2, 4));
    // About 1,000 changed positions at ~2^34 spacing: ~36 bits each.
    assert!(frame.len() < 1_000 * 37 / 8 + 64, "{} bytes", frame.len());
    let lim = DecodeLimits::default();
    let summary = delta::summarize(&frame, &lim).unwrap();
    assert_eq!(summary.changed_bits(), 1_000);
    let mut held = old.clone();
    compressed_bloom::kinds::sparse::apply_sparse(&mut held, &frame, &lim).unwrap();
    assert_eq!(held, new);
    // Replayed: refused by the base digest, unchanged.
    assert!(matches!(
        compressed_bloom::kinds::sparse::apply_sparse(&mut held, &frame, &lim),
        Err(DecodeError::WrongBase { .. })
    ));
    assert_eq!(held, new);
    // A wrong result digest (re-CRC'd) is refused.
    let at = format::inspect(&frame, &lim).unwrap().header_len + 8;
    let mut bad = frame.clone();
    bad[at] ^= 1;
    let body = bad.len() - 4;
    let crc = crc32c::crc32c(&bad[..body]);
    bad[body..].copy_from_slice(&crc.to_le_bytes());
    let mut base = old.clone();
    assert!(matches!(
        compressed_bloom::kinds::sparse::apply_sparse(&mut base, &bad, &lim),
        Err(DecodeError::ResultMismatch { .. })
    ));
    assert_eq!(base, old);
    // Other kinds' deltas are refused, and this one by other kinds.
    let mut std_base = BloomFilter::new(FilterParams::new(1000, 1, 8)).unwrap();
    assert!(matches!(
        delta::apply(&mut std_base, &frame, &lim),
        Err(DecodeError::WrongKind {
            found: FilterKind::Sparse,
            expected: FilterKind::Standard
        })
    ));
}

/// Squid's hashing is for standard filters only (docs/FORMAT.md): the
/// counting and sparse kinds refuse it when they are made, as the
/// partitioned kind did, instead of writing frames no decoder takes. The
/// publisher's counts, sent as standard filters, still take it.
#[test]
fn kinds_that_cannot_travel_with_squid_hashing_refuse_it() {
    use compressed_bloom::{CountingBloomFilter, FilterError, Publisher};
    let squid = FilterParams::squid(8_000);
    let scheme = |e: FilterError| matches!(e, FilterError::SchemeNotForKind { .. });
    assert!(scheme(CountingBloomFilter::new(squid).unwrap_err()));
    assert!(scheme(SparseFilter::from_keys(squid, [b"a"]).unwrap_err()));
    assert!(scheme(
        SparseFilter::from_positions(squid, 0, vec![1u64]).unwrap_err()
    ));
    let mut std_squid = BloomFilter::new(squid).unwrap();
    std_squid.insert(b"a");
    assert!(scheme(SparseFilter::from_bloom(&std_squid).unwrap_err()));
    assert!(scheme(PartitionedBloomFilter::new(squid).unwrap_err()));
    // A standard filter with Squid's hashing travels, and so does a
    // publisher's.
    assert!(decode(&encode(&std_squid), &DecodeLimits::default()).unwrap() == std_squid);
    let mut p = Publisher::counting(
        squid,
        PublisherOptions {
            full_every: 4,
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    p.insert(b"a");
    let u = p.publish();
    assert!(decode(&u.frame, &DecodeLimits::default()).unwrap() == p.current());
}
