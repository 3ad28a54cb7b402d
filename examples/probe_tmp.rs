use compressed_bloom::coder::static_coded as sc;
use std::time::Instant;
fn main() {
    let m: u64 = std::env::args()
        .nth(1)
        .map_or(140_000_000, |a| a.parse::<f64>().unwrap() as u64);
    let d: f64 = std::env::args()
        .nth(2)
        .map_or(0.133, |a| a.parse().unwrap());
    let mut s = 1u64;
    let thr = (d * 2f64.powi(64)) as u64;
    let mut w = vec![0u64; m.div_ceil(64) as usize];
    for (i, word) in w.iter_mut().enumerate() {
        for b in 0..64 {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            if z < thr && (i as u64) * 64 + b < m {
                *word |= 1 << b;
            }
        }
    }
    let mut p = Vec::new();
    sc::encode_with(&w, m, &mut p, 1, sc::Choice::default());
    let reps = (2e9 / m as f64).clamp(3.0, 20000.0) as usize;
    let mut back = vec![0u64; w.len()];
    let mut best = f64::MAX;
    for _ in 0..reps {
        back.iter_mut().for_each(|v| *v = 0);
        let t = Instant::now();
        sc::decode_with_threads(&p, m, &mut back, 1).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    assert!(back == w);
    let mut ebest = f64::MAX;
    for _ in 0..reps.min(50) {
        let t = Instant::now();
        let mut q = Vec::new();
        sc::encode_with(&w, m, &mut q, 1, sc::Choice::default());
        ebest = ebest.min(t.elapsed().as_secs_f64());
    }
    println!(
        "m={m} d={d} payload={} decode {:.0} MB/s encode {:.0} MB/s",
        p.len(),
        m as f64 / 8e6 / best,
        m as f64 / 8e6 / ebest
    );
}
