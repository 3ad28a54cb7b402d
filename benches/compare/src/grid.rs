//! The coder by density and size, single thread: decode speed (MB/s of
//! uncompressed filter, median of up to 9 runs) of random bits of each
//! density (splitmix64, fixed seeds), and any cell whose payload is outside
//! the size allowance (0.05% of log2 C(m, x) plus 16 bytes).
//!
//! Arguments: MAX_M (default 10^9) caps the sizes; `coded` (format type 1,
//! the default) or `static` (type 4) picks the payload.

use compressed_bloom::coder;
use std::time::Instant;

fn bits_of(m: u64, density: f64, seed: u64) -> Vec<u64> {
    let mut s = seed;
    let threshold = (density * 2f64.powi(64)) as u64;
    let mut w = vec![0u64; m.div_ceil(64) as usize];
    for (i, word) in w.iter_mut().enumerate() {
        let mut v = 0u64;
        for b in 0..64 {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            if z < threshold && (i as u64) * 64 + b < m {
                v |= 1 << b;
            }
        }
        *word = v;
    }
    w
}

fn log2_binomial(m: u64, x: u64) -> f64 {
    compressed_bloom::math::log2_binomial(m, x)
}

/// Median seconds of `f` over up to 9 runs (fewer when one run is long).
fn median(mut f: impl FnMut()) -> f64 {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 9 && (times.len() < 3 || start.elapsed().as_secs_f64() < 2.0) {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

pub fn run(args: &[String]) {
    let max_m: u64 = args
        .first()
        .and_then(|a| a.parse::<f64>().ok())
        .map_or(1_000_000_000, |v| v as u64);
    let fixed = match args.get(1).map(String::as_str) {
        None | Some("coded") => false,
        Some("static") => true,
        Some(other) => panic!("unknown payload type {other}: coded or static"),
    };
    let encode = |w: &[u64], m: u64, out: &mut Vec<u8>| {
        if fixed {
            let choice = coder::static_coded::Choice::default();
            coder::static_coded::encode_with(w, m, out, 1, choice);
        } else {
            coder::encode_with_threads(w, m, out, 1);
        }
    };
    let decode = |p: &[u8], m: u64, w: &mut [u64]| {
        if fixed {
            coder::static_coded::decode_with_threads(p, m, w, 1)
        } else {
            coder::decode_with_threads(p, m, w, 1)
        }
    };
    let densities = [0.001, 0.01, 0.05, 0.133, 0.3, 0.5, 0.6];
    let sizes = [
        10_000u64,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
        1_000_000_000,
    ];
    print!("| m |");
    for d in densities {
        print!(" density {d} |");
    }
    println!();
    println!("|---|{}", "---|".repeat(densities.len()));
    let mut outside = Vec::new();
    for &m in sizes.iter().filter(|&&m| m <= max_m) {
        print!("| {m} |");
        for &d in &densities {
            let w = bits_of(m, d, m ^ (d * 1e6) as u64);
            let x: u64 = w.iter().map(|v| u64::from(v.count_ones())).sum();
            let mut payload = Vec::new();
            encode(&w, m, &mut payload);
            let mut back = vec![0u64; w.len()];
            // The decoders overwrite `back`: no clearing between runs.
            let dec = median(|| {
                decode(&payload, m, &mut back).unwrap();
            });
            assert!(back == w, "round trip failed at m={m} density={d}");
            let bytes = m.div_ceil(8) as f64;
            let bound = log2_binomial(m, x) / 8.0;
            let excess = payload.len() as f64 - bound;
            let allowance = bound * 0.0005 + 16.0;
            if excess > allowance {
                outside.push(format!("m = {m} at density {d}: {excess:.1} bytes over the bound, {allowance:.1} allowed"));
            }
            print!(" {:.0} |", bytes / dec / 1e6);
        }
        println!();
    }
    println!();
    if outside.is_empty() {
        println!("Every cell is within 0.05% + 16 bytes of log2 C(m, x).");
    } else {
        println!(
            "Outside 0.05% + 16 bytes of log2 C(m, x): {}.",
            outside.join("; ")
        );
    }
}
