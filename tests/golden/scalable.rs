//! Scalable-kind golden vectors (docs/FORMAT.md section 8.3): frames whose
//! layers `tools/ref_kinds.py`, a decoder written from the document alone,
//! decoded, rebuilt from the keys, and (for the delta) applied
//! (`tools/make_golden_scalable.sh`). The crate must agree layer for layer,
//! rebuild each frame byte for byte from the keys, apply the delta, and
//! reject every truncation and single-bit flip.

use crate::common;

use compressed_bloom::kinds::scalable::apply_scalable;
use compressed_bloom::kinds::scalable::decode_scalable;
use compressed_bloom::kinds::scalable::encode_scalable;
use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
use compressed_bloom::DecodeLimits;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

fn layers_text(f: &ScalableBloomFilter) -> String {
    f.layers()
        .iter()
        .map(|l| {
            let hex: String = l
                .filter
                .to_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!(
                "{} {} {} {} {hex}\n",
                l.filter.m(),
                l.filter.k(),
                l.filter.len(),
                l.capacity
            )
        })
        .collect()
}

fn built(n: u32) -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::new(ScalablePolicy::new(50, 0.01), 3).unwrap();
    for i in 1..=n {
        f.insert(format!("key-{i}").as_bytes());
    }
    f
}

#[test]
fn scalable_goldens() {
    let lim = DecodeLimits::default();
    let read = |name: &str| std::fs::read(format!("{DIR}/{name}")).unwrap();
    for (name, n) in [("v3_scalable_base", 120u32), ("v3_scalable", 300)] {
        let frame = read(&format!("{name}.cbf"));
        let f = decode_scalable(&frame, &lim).unwrap();
        let reference = String::from_utf8(read(&format!("{name}.layers"))).unwrap();
        assert_eq!(layers_text(&f), reference, "{name}");
        assert_eq!(f, built(n), "{name}: rebuilt from the keys");
        assert_eq!(encode_scalable(&f), frame, "{name}: byte for byte");
        common::assert_corruptions_refused(&frame, &lim, name);
    }
    let mut base = decode_scalable(&read("v3_scalable_base.cbf"), &lim).unwrap();
    let delta = read("v3_scalable_delta.cbf");
    apply_scalable(&mut base, &delta, &lim).unwrap();
    assert_eq!(base, built(300));
    assert!(base.layers().len() > 2, "the delta adds a layer");
}
