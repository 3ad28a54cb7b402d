//! From a plan to a filter in one call: `plan::for_kind` plans every kind,
//! and the `Choice` builds it with the plan's parameters, so the filter
//! made is the one the plan priced.

use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
use compressed_bloom::plan::{for_kind, recommend, Constraints, Needs, PlanError, Target};
use compressed_bloom::{decode_as, encode_any, AnyFilter, BloomFilter, DecodeLimits, FilterKind};

const KINDS: [FilterKind; 6] = [
    FilterKind::Standard,
    FilterKind::Partitioned,
    FilterKind::Counting,
    FilterKind::Sparse,
    FilterKind::Scalable,
    FilterKind::Ribbon,
];

fn member(i: u32) -> [u8; 4] {
    i.to_le_bytes()
}

fn outsider(i: u32) -> [u8; 5] {
    let b = i.to_le_bytes();
    [0xff, b[0], b[1], b[2], b[3]]
}

/// Every kind is planned and built from keys: the filter is of the kind
/// planned, holds every key, travels through a frame unchanged, and its
/// measured false-positive rate agrees with the plan's.
#[test]
fn every_kind_builds_from_its_plan() {
    let n = 20_000u32;
    let queries = 200_000u32;
    let cons = Constraints {
        seed: 5,
        ..Constraints::default()
    };
    for kind in KINDS {
        let choice = for_kind(kind, u64::from(n), Target::Fpr(0.01), &cons).unwrap();
        assert_eq!(choice.kind, kind);
        assert!(
            choice.plan.fpr <= 0.01 * 1.0001,
            "{kind:?}: {}",
            choice.plan.fpr
        );
        let filter = choice.build((0..n).map(member)).unwrap();
        assert_eq!(filter.kind(), kind);
        assert!((0..n).all(|i| filter.contains(&member(i))), "{kind:?}");

        let frame = encode_any(&filter);
        let back: AnyFilter = decode_as(&frame, &DecodeLimits::default()).unwrap();
        assert_eq!(back, filter, "{kind:?}");

        // The plan's rate is the expected rate of the filter built (for
        // the scalable kind, its layers' rate at n keys). Over q queries
        // the measured rate has standard deviation sqrt(f(1-f)/q): at
        // f = 0.01 and q = 200,000 that is 0.00022, so 6 sd is 0.0013.
        // The filter's own rate varies around the plan by the variance of
        // its fill, which at 20,000 keys is under 3% of f; 10% of f
        // (0.001) covers it with room.
        let fp = (0..queries)
            .filter(|&i| filter.contains(&outsider(i)))
            .count();
        let measured = fp as f64 / f64::from(queries);
        let f = choice.plan.fpr;
        let sd = (f * (1.0 - f) / f64::from(queries)).sqrt();
        assert!(
            (measured - f).abs() <= 6.0 * sd + 0.1 * f,
            "{kind:?}: measured {measured}, planned {f}"
        );
    }
}

/// A budget plan builds a filter whose frame fits the budget.
#[test]
fn a_budget_plan_builds_a_frame_within_it() {
    let n = 20_000u32;
    let budget = 25_000u64;
    for kind in KINDS {
        let choice = for_kind(
            kind,
            u64::from(n),
            Target::Bytes(budget),
            &Constraints::default(),
        )
        .unwrap();
        let filter = choice.build((0..n).map(member)).unwrap();
        let frame = encode_any(&filter);
        assert!(
            frame.len() as u64 <= budget,
            "{kind:?}: {} bytes over {budget}",
            frame.len()
        );
    }
}

/// The kinds that take keys one at a time have an empty form; the sparse
/// and ribbon kinds, built from their whole set, say so.
#[test]
fn empty_filters_for_the_kinds_that_take_keys_later() {
    let cons = Constraints::default();
    for kind in KINDS {
        let choice = for_kind(kind, 1_000, Target::Fpr(0.01), &cons).unwrap();
        match (kind, choice.empty()) {
            (FilterKind::Sparse | FilterKind::Ribbon, Err(PlanError::Build { kind: k, .. })) => {
                assert_eq!(k, kind)
            }
            (_, Ok(f)) => {
                assert_eq!(f.kind(), kind);
                assert!(f.is_empty());
            }
            (_, other) => panic!("{kind:?}: {other:?}"),
        }
    }
}

/// The recommended kind builds as its own type, and asking for another
/// type names the kind planned.
#[test]
fn build_as_gives_the_typed_filter_or_names_the_kind() {
    let cons = Constraints::default();
    let (choice, _) = recommend(5_000, Target::Fpr(0.001), Needs::STATIC, &cons).unwrap();
    assert_eq!(choice.kind, FilterKind::Ribbon);
    let ribbon: RibbonFilter = choice.build_as((0..5_000u32).map(member)).unwrap();
    assert!(ribbon.contains(&member(9)));
    let wrong = choice.build_as::<BloomFilter, _>((0..5_000u32).map(member));
    assert!(matches!(
        wrong,
        Err(PlanError::Build {
            kind: FilterKind::Ribbon,
            ..
        })
    ));
}

/// The ribbon build the constraints name is the one the plan assumes and
/// the one the filter is built with: the fast build's larger shards take
/// more spare rows, so both its plan and its filter have more rows.
#[test]
fn the_ribbon_plan_and_build_follow_the_constraints() {
    let n = 50_000u32;
    let compact = for_kind(
        FilterKind::Ribbon,
        u64::from(n),
        Target::Fpr(0.01),
        &Constraints::default(),
    )
    .unwrap();
    let fast_cons = Constraints {
        ribbon_build: Build::Fast,
        ..Constraints::default()
    };
    let fast = for_kind(
        FilterKind::Ribbon,
        u64::from(n),
        Target::Fpr(0.01),
        &fast_cons,
    )
    .unwrap();
    assert!(fast.plan.m > compact.plan.m);
    let built = |c: &compressed_bloom::plan::Choice| match c.build((0..n).map(member)).unwrap() {
        AnyFilter::Ribbon(r) => r,
        other => panic!("{:?}", other.kind()),
    };
    let (rc, rf) = (built(&compact), built(&fast));
    assert!(rf.rows() > rc.rows());
    // Each filter has the rows its plan expected, within the retries' few
    // rows per shard (at most 2% here).
    for (plan_rows, rows) in [(compact.plan.m, rc.rows()), (fast.plan.m, rf.rows())] {
        let ratio = rows as f64 / plan_rows as f64;
        assert!(
            (0.98..1.02).contains(&ratio),
            "{rows} rows against {plan_rows}"
        );
    }
    // The same keys and seed through from_keys_with give the same filter.
    let direct = RibbonFilter::from_keys_with((0..n).map(member), compact.plan.fpr, 0, Build::Fast);
    assert_eq!(direct.unwrap(), rf);
}

/// A typed filter converts to AnyFilter and back, and the wrong type hands
/// the filter back unchanged.
#[test]
fn conversions_between_any_filter_and_each_kind() {
    let choice = for_kind(
        FilterKind::Standard,
        100,
        Target::Fpr(0.01),
        &Constraints::default(),
    )
    .unwrap();
    let any = choice.build((0..100u32).map(member)).unwrap();
    let bloom = BloomFilter::try_from(any.clone()).unwrap();
    assert_eq!(AnyFilter::from(bloom), any);
    let back = RibbonFilter::try_from(any.clone()).unwrap_err();
    assert_eq!(back, any);
}

/// A coding a kind lacks is written as the kind's `Auto` frame, and
/// `Coding::applies_to` says which those are: static coding for the
/// standard and partitioned kinds only, raw for all but the sparse kind,
/// adaptive for all but the ribbon kind, whose solution has no coded form.
#[test]
fn a_coding_a_kind_lacks_writes_its_auto_frame() {
    use compressed_bloom::format::Coding;
    use compressed_bloom::Kind;
    let cons = Constraints::default();
    for kind in KINDS {
        let choice = for_kind(kind, 2_000, Target::Fpr(0.01), &cons).unwrap();
        let filter = choice.build((0..2_000u32).map(member)).unwrap();
        let auto = filter.encode_frame(Coding::Auto, None);
        for coding in Coding::ALL {
            let has = coding.applies_to(kind, false);
            let expected = match coding {
                Coding::Auto => true,
                Coding::Adaptive => kind != FilterKind::Ribbon,
                Coding::Static => matches!(kind, FilterKind::Standard | FilterKind::Partitioned),
                _ => kind != FilterKind::Sparse,
            };
            assert_eq!(has, expected, "{kind:?} {coding:?}");
            let frame = filter.encode_frame(coding, None);
            if !has {
                assert_eq!(frame, auto, "{kind:?} {coding:?}");
            }
            let back: AnyFilter = decode_as(&frame, &DecodeLimits::default()).unwrap();
            assert_eq!(back, filter, "{kind:?} {coding:?}");
        }
    }
}
