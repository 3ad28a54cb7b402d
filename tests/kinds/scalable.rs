//! The scalable kind (kind 3, docs/FORMAT.md section 8.3): layers open as
//! keys arrive, the overall false-positive rate stays under the bound,
//! frames and layer-by-layer deltas round-trip, and hostile payloads are
//! typed errors.

use crate::common;

use compressed_bloom::decode_any;
use compressed_bloom::encode_any;
use compressed_bloom::kinds::scalable::apply_scalable;
use compressed_bloom::kinds::scalable::decode_scalable;
use compressed_bloom::kinds::scalable::encode_delta_scalable;
use compressed_bloom::kinds::scalable::encode_scalable;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalableError, ScalablePolicy};
use compressed_bloom::AnyFilter;
use compressed_bloom::{DecodeError, DecodeLimits, FilterKind};

fn grown(
    policy: ScalablePolicy,
    seed: u64,
    keys: impl IntoIterator<Item = Vec<u8>>,
) -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::new(policy, seed).unwrap();
    for k in keys {
        f.insert(&k);
    }
    f
}

#[test]
fn scalable_round_trips_without_false_negatives() {
    fn prop(cap: u8, seed: u64, keys: Vec<Vec<u8>>) -> bool {
        let policy = ScalablePolicy::new(u64::from(cap % 20) + 1, 0.05);
        let f = grown(policy, seed, keys.iter().cloned());
        let frame = encode_scalable(&f);
        let lim = DecodeLimits::unlimited();
        let back = decode_scalable(&frame, &lim).unwrap();
        back == f
            && decode_any(&frame, &lim).unwrap() == AnyFilter::Scalable(f.clone())
            && encode_any(&AnyFilter::Scalable(back.clone())) == frame
            && keys.iter().all(|k| back.contains(k))
    }
    common::qc(200, 0x5EED_0C03).quickcheck(prop as fn(_, _, _) -> bool);
}

/// 40,000 keys into a filter planned for 1,000 at first: six layers open,
/// and the measured rate on 200,000 fixed probes is within 4 standard
/// deviations of the layers' formula, which is below the bound.
#[test]
fn the_bound_holds_as_layers_open() {
    let bound = 0.01;
    let f = grown(
        ScalablePolicy::new(1_000, bound),
        3,
        (0..40_000u32).map(|i| format!("member{i}").into_bytes()),
    );
    // A key that is already (falsely) present is not inserted again, so
    // the count is a little below the keys offered: at most the bound's
    // share of them is missing.
    assert!(
        f.len() <= 40_000 && f.len() as f64 >= 40_000.0 * (1.0 - bound),
        "{}",
        f.len()
    );
    assert!(f.layers().len() >= 6, "{} layers", f.layers().len());
    for (i, l) in f.layers().iter().enumerate() {
        assert!(l.filter.len() <= l.capacity, "layer {i} over capacity");
    }
    let p = f.formula_fpr();
    assert!(p < bound, "formula {p}");
    let probes = 200_000u32;
    let hits = (0..probes)
        .filter(|i| f.contains(format!("probe{i}").as_bytes()))
        .count() as f64;
    let sd = (f64::from(probes) * p * (1.0 - p)).sqrt();
    assert!(
        (hits - f64::from(probes) * p).abs() < 4.0 * sd,
        "{hits} hits, expected {:.0} ± {sd:.0}",
        f64::from(probes) * p
    );
}

#[test]
fn deltas_work_layer_by_layer() {
    let policy = ScalablePolicy::new(500, 0.01);
    let old = grown(policy, 9, (0..1_200u32).map(|i| i.to_le_bytes().to_vec()));
    let new = grown(policy, 9, (0..5_000u32).map(|i| i.to_le_bytes().to_vec()));
    assert!(new.layers().len() > old.layers().len());
    let frame = encode_delta_scalable(&old, &new).unwrap();
    assert!(
        frame.len() < encode_scalable(&new).len(),
        "a delta is smaller than the new frame"
    );
    let lim = DecodeLimits::default();
    let mut got = old.clone();
    apply_scalable(&mut got, &frame, &lim).unwrap();
    assert_eq!(got, new);
    // Applied again, to the result: the wrong base, and nothing changes.
    let err = apply_scalable(&mut got, &frame, &lim).unwrap_err();
    assert!(matches!(err, DecodeError::WrongBase { .. }), "{err:?}");
    assert_eq!(got, new);
    // A flipped bit inside the payload behind a fixed CRC: refused, base
    // unchanged.
    let h = compressed_bloom::format::inspect(&frame, &lim).unwrap();
    for at in [h.header_len + 20, h.header_len + 40, frame.len() - 10] {
        let mut bad = frame.clone();
        bad[at] ^= 0x04;
        common::fix_crc(&mut bad);
        let mut base = old.clone();
        let r = apply_scalable(&mut base, &bad, &lim);
        assert!(
            matches!(r, Err(DecodeError::Scalable { .. })),
            "byte {at}: {r:?}"
        );
        assert_eq!(base, old);
    }
    // The delta adds layers, so a receiver's expansion limit holds what it
    // may add (the header's m less the base's bits, in bytes) against the
    // frame's length; it is checked before the base digest.
    let h = compressed_bloom::format::inspect(&frame, &lim).unwrap();
    let added = (h.params.m - old.total_bits()).div_ceil(8);
    let ratio = added.div_ceil(h.frame_len());
    assert!(ratio > 1, "the delta may add {added} bytes");
    for (limit, ok) in [(ratio - 1, false), (ratio, true)] {
        let tight = DecodeLimits {
            max_expansion: Some(limit),
            expansion_floor: 0,
            ..lim
        };
        let mut base = old.clone();
        match apply_scalable(&mut base, &frame, &tight) {
            Ok(()) => assert!(ok && base == new, "limit {limit}"),
            Err(e) => {
                assert!(!ok, "limit {limit}: {e:?}");
                assert!(matches!(e, DecodeError::LimitExceeded { .. }), "{e:?}");
                assert_eq!(base, old);
            }
        }
    }
    // A filter that is not the old one grown cannot make a delta.
    let other = grown(ScalablePolicy::new(400, 0.01), 9, std::iter::empty());
    assert!(matches!(
        encode_delta_scalable(&old, &other),
        Err(ScalableError::Layer { .. })
    ));
}

#[test]
fn hostile_scalable_frames_are_refused() {
    let f = grown(
        ScalablePolicy::new(100, 0.02),
        1,
        (0..500u32).map(|i| i.to_le_bytes().to_vec()),
    );
    let frame = encode_scalable(&f);
    assert_eq!(
        (frame[2], frame[3], frame[6]),
        (3, 1, FilterKind::Scalable.id())
    );
    let lim = DecodeLimits::default();
    common::assert_corruptions_refused(&frame, &lim, "scalable");
    // Behind a valid CRC, any single byte changed in the payload is either
    // refused or decodes to a filter that re-encodes to itself; never a
    // panic.
    let h = compressed_bloom::format::inspect(&frame, &lim).unwrap();
    for at in h.header_len..frame.len() - 4 {
        let mut bad = frame.clone();
        bad[at] = bad[at].wrapping_add(0x41);
        common::fix_crc(&mut bad);
        if let Ok(g) = decode_any(&bad, &lim) {
            assert_eq!(decode_any(&encode_any(&g), &lim).unwrap(), g);
        }
    }
    // The header's m (all layers) is held to the limits before decoding.
    let tight = DecodeLimits {
        max_m: f.total_bits() - 1,
        ..lim
    };
    assert!(matches!(
        decode_any(&frame, &tight),
        Err(DecodeError::LimitExceeded { .. })
    ));
}

/// The planner's sum of layers matches what is built: total m, largest k,
/// the frame within its bound and near its expected size; and a byte
/// budget gives the lowest bound that fits.
#[test]
fn plans_match_what_is_built() {
    use compressed_bloom::plan::kinds::{plan_scalable, plan_scalable_for_size};
    use compressed_bloom::plan::Constraints;
    let cons = Constraints::default();
    for (n, cap) in [(5_000u64, 1_000u64), (20_000, 700), (300, 1_000)] {
        let policy = ScalablePolicy::new(cap, 0.01);
        let p = plan_scalable(n, &policy, &cons).unwrap();
        let f = grown(policy, 0, (0..n).map(|i| format!("plan{i}").into_bytes()));
        let frame = encode_scalable(&f);
        assert_eq!(p.m, f.total_bits(), "n={n}");
        assert_eq!(p.k, f.max_k());
        assert!(
            frame.len() as u64 <= p.bound_bytes,
            "{p:?}: {}",
            frame.len()
        );
        let rel = (frame.len() as f64 - p.expected_bytes).abs() / p.expected_bytes;
        assert!(rel < 0.03, "{p:?}: {} bytes", frame.len());
        assert!(p.fpr < 0.01);
    }
    let (p, bound) =
        plan_scalable_for_size(20_000, 30_000, &ScalablePolicy::new(1_000, 0.5), &cons).unwrap();
    assert!(p.bound_bytes <= 30_000 && bound < 0.5, "{p:?} {bound}");
    let f = grown(
        ScalablePolicy::new(1_000, bound),
        0,
        (0..20_000u32).map(|i| i.to_le_bytes().to_vec()),
    );
    assert!(encode_scalable(&f).len() <= 30_000);
}
