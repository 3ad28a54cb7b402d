//! Any numbers, including zero, NaN and infinities: the optimiser returns a
//! valid plan or an error, never panics or hangs.
#![no_main]

use arbitrary::Arbitrary;
use compressed_bloom::plan::{self, Constraints};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    n: u64,
    bytes: u64,
    fpr: f64,
    c: f64,
    max_m: u64,
    max_k: u32,
    confidence: f64,
    bits_per_key: f64,
    k: u32,
    which: u8,
}

fuzz_target!(|i: Input| {
    let cons = Constraints {
        max_m: i.max_m,
        max_k: i.max_k,
        confidence: i.confidence,
        seed: 0,
        ..Constraints::default()
    }
    .with_max_bits_per_key(i.bits_per_key, i.n);
    let r = match i.which % 6 {
        0 => plan::plan_for_size(i.n, i.bytes, &cons),
        1 => plan::plan_for_fpr(i.n, i.fpr, &cons),
        2 => plan::plan_delta_for_size(i.n, i.c, i.bytes, &cons),
        3 => plan::plan_delta_for_fpr(i.n, i.c, i.fpr, &cons),
        4 => plan::standard_for_size(i.n, i.bytes, 0),
        _ => plan::standard_for_fpr(i.n, i.fpr, 0),
    };
    if let Ok(p) = r {
        assert!(p.m >= 1 && p.k >= 1 && p.k <= 64);
        assert!(p.fpr >= 0.0 && p.fpr <= 1.0, "{p:?}");
    }
    let _ = plan::evaluate(i.n, i.max_m, i.k, Some(i.c));
});
